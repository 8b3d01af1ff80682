package app

import (
	"encoding/json"
	"fmt"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/assess"
)

// MaxResultBytes bounds the JSON of one action result on the remote
// surfaces. Listings are bounded by their limits; investigations and
// assessments, whose bundles can add up, drop their last bundles (listed
// as other matching incidents instead) until they fit.
const MaxResultBytes = 1 << 20

// bound shrinks an oversized result and says so in it.
func bound(result any) any {
	switch r := result.(type) {
	case cortex.Investigation:
		for len(r.Bundles) > 1 && jsonSize(r) > MaxResultBytes {
			last := r.Bundles[len(r.Bundles)-1]
			r.Bundles = r.Bundles[:len(r.Bundles)-1]
			r.OtherMatching = append([]cortex.IncidentSummary{summary(last.Incident)}, r.OtherMatching...)
			r.Truncated = true
			r.Message = fmt.Sprintf("evidence cut to %d bundle(s) to stay under %d bytes; investigate the others by incident_id",
				len(r.Bundles), MaxResultBytes)
		}
		return r
	case cortex.SessionTranscript:
		for len(r.Rows) > 1 && jsonSize(r) > MaxResultBytes {
			r.Rows = r.Rows[:len(r.Rows)/2]
			r.HasAfter, r.NextAfterID, r.Truncated = true, r.Rows[len(r.Rows)-1].ID, true
		}
		return r
	case assess.Result:
		for len(r.Assessments) > 1 && jsonSize(r) > MaxResultBytes {
			last := r.Assessments[len(r.Assessments)-1]
			r.Assessments = r.Assessments[:len(r.Assessments)-1]
			r.OtherMatching = append([]cortex.IncidentSummary{summary(last.Incident)}, r.OtherMatching...)
			r.Message = fmt.Sprintf("assessments cut to %d to stay under %d bytes", len(r.Assessments), MaxResultBytes)
		}
		return r
	}
	return result
}

func summary(inc cortex.Incident) cortex.IncidentSummary {
	return cortex.IncidentSummary{ID: inc.ID, FirstSeen: inc.FirstSeen, LastSeen: inc.LastSeen, Score: inc.Score,
		Label: inc.Label, SessionID: inc.SessionID}
}

func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}
