package incident

import (
	"context"

	"github.com/cortexhq/cortex"
)

// All lists every incident of a lens matching p, best first, without the
// listing limit (the candidate scan keeps its cap and says when it hit
// it): for views that count or chart incidents rather than read them.
func (e *Engine) All(ctx context.Context, l Lens, p cortex.IncidentParams) (cortex.IncidentList, error) {
	r, err := e.run(ctx, l, &p)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	out := cortex.IncidentList{Incidents: r.incidents, Total: len(r.incidents), CandidateRows: r.candidateRows,
		CandidateCap: e.candidateCap(), CandidateWindowTruncated: r.truncated, Truncated: r.truncated, WindowMinutes: r.window}
	if out.Incidents == nil {
		out.Incidents = []cortex.Incident{}
	}
	return out, nil
}
