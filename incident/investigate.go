package incident

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
)

// Bounds of investigations.
const (
	// MaxBundles is the most evidence bundles one investigation builds.
	MaxBundles = 10
	// DefaultBundles is the default for a listing-style investigation;
	// a subject-first one (a skill given) or one by id builds one.
	DefaultBundles = 3
	// maxOtherMatching bounds other_matching_incidents.
	maxOtherMatching = 50
)

// Investigate builds evidence bundles for the best matching incidents of a
// lens. Given a subject (a skill or plugin) and no incident id, it picks
// the top incident and summarizes the others; when the subject has events
// but no incident it shows its most recent usage as a low-severity
// summary; when nothing matches it says so and suggests other filters.
func (e *Engine) Investigate(ctx context.Context, l Lens, p cortex.InvestigateParams) (cortex.Investigation, error) {
	subjectFirst := p.IncidentID == "" && l.subjectFirst(&p.IncidentParams)
	want, clamped, err := bundleCount(p, subjectFirst)
	if err != nil {
		return cortex.Investigation{}, err
	}
	o, err := options(p)
	if err != nil {
		return cortex.Investigation{}, err
	}
	ip := p.IncidentParams
	r, err := e.run(ctx, l, &ip)
	if err != nil {
		return cortex.Investigation{}, err
	}
	out := cortex.Investigation{
		Bundles: []cortex.Bundle{}, Total: len(r.incidents), CandidateRows: r.candidateRows,
		CandidateWindowTruncated: r.truncated, LimitClampedTo: clamped, OtherMatching: []cortex.IncidentSummary{},
		SuggestedFilters: []string{}, WindowMinutes: r.window, CorrelationWindowMinutes: int(o.corr / time.Minute),
	}
	if m, ok := l.(matcher); ok {
		out.Matched = m.matched(ctx, e.db, &ip)
	}
	if len(r.incidents) == 0 {
		return e.nothingFound(ctx, l, ip, o, out)
	}
	for i, inc := range r.incidents {
		if i < want {
			b, err := e.bundle(ctx, l, inc, r.groups[inc.ID], o)
			if err != nil {
				return out, err
			}
			out.Bundles = append(out.Bundles, b)
			continue
		}
		if len(out.OtherMatching) == maxOtherMatching {
			break
		}
		out.OtherMatching = append(out.OtherMatching, cortex.IncidentSummary{ID: inc.ID, FirstSeen: inc.FirstSeen,
			LastSeen: inc.LastSeen, Score: inc.Score, Label: inc.Label, SessionID: inc.SessionID})
	}
	out.Truncated = len(r.incidents) > len(out.Bundles)+len(out.OtherMatching) || r.truncated
	return out, nil
}

func bundleCount(p cortex.InvestigateParams, subjectFirst bool) (int, int, error) {
	def := DefaultBundles
	if subjectFirst || p.IncidentID != "" {
		def = 1
	}
	if p.All {
		if p.Limit > 0 {
			return cortex.ClampLimit(p.Limit, def, MaxBundles)
		}
		return MaxBundles, 0, nil
	}
	return cortex.ClampLimit(p.Limit, def, MaxBundles)
}

func options(p cortex.InvestigateParams) (bundleOptions, error) {
	corr := p.CorrelationWindowMinutes
	switch {
	case corr < 0:
		return bundleOptions{}, cortex.Errorf(cortex.CodeInvalid, "correlation_window_minutes must be positive, got %d", corr)
	case corr == 0:
		corr = DefaultCorrelationMinutes
	case corr > MaxWindowMinutes:
		corr = MaxWindowMinutes
	}
	maxBytes, err := clampMaxBytes(p.MaxBytes)
	return bundleOptions{corr: time.Duration(corr) * time.Minute, maxBytes: maxBytes}, err
}

// nothingFound explains an empty investigation: usage without a negative
// signal (skill lens), or no data with suggestions.
func (e *Engine) nothingFound(ctx context.Context, l Lens, p cortex.IncidentParams, o bundleOptions, out cortex.Investigation) (cortex.Investigation, error) {
	if p.IncidentID != "" {
		return out, cortex.Errorf(cortex.CodeNotFound, "no %s incident %q in the scanned window (check the filters the id was listed with)", l.Name(), p.IncidentID)
	}
	if l.subjectFirst(&p) {
		u, err := l.usage(ctx, e.db, &p)
		if err != nil {
			return out, err
		}
		if u.Events > 0 {
			return e.usageOnly(ctx, l, p, o, out, u)
		}
	}
	out.NoData = true
	out.Message, out.SuggestedFilters = e.suggest(ctx, l, p)
	return out, nil
}

// usageOnly shows the most recent usage of a subject that has events but
// no incident.
func (e *Engine) usageOnly(ctx context.Context, l Lens, p cortex.IncidentParams, o bundleOptions, out cortex.Investigation, u usageReport) (cortex.Investigation, error) {
	out.NoIncident, out.Usage = true, u.Skills
	out.Message = fmt.Sprintf("no negative signal found: %s has %d %s in %d sessions in this range; "+
		"showing its most recent use", l.describe(&p), u.Events, u.Noun, u.Sessions)
	p.IncludeUsage, p.Signals, p.MinScore = true, nil, 0
	r, err := e.run(ctx, l, &p)
	if err != nil || len(r.incidents) == 0 {
		return out, err
	}
	slices.SortStableFunc(r.incidents, func(a, b cortex.Incident) int { return strings.Compare(b.LastSeen, a.LastSeen) })
	b, err := e.bundle(ctx, l, r.incidents[0], r.groups[r.incidents[0].ID], o)
	if err != nil {
		return out, err
	}
	out.Bundles = append(out.Bundles, b)
	return out, nil
}

// suggest explains an empty answer: the generic hints (wider range, fewer
// filters), then the lens's own.
func (e *Engine) suggest(ctx context.Context, l Lens, p cortex.IncidentParams) (string, []string) {
	var out []string
	if !p.Since.IsZero() {
		out = append(out, "widen the time range (since 30d, or no since)")
	}
	if p.Tool != "" || p.Project != "" || p.Session != "" || p.Host != "" {
		out = append(out, "drop the tool, project, session or host filter")
	}
	if len(p.Signals) > 0 || p.MinScore > 0 {
		out = append(out, "drop the signals or min_score filter")
	}
	msg, more := l.suggest(ctx, e.db, &p)
	return msg, append(out, more...)
}

// nearestNames returns up to n names close to want: containing it or
// contained in it (ignoring case), then by edit distance to the name or to
// its part after "plugin:", at most a third of want's length (and at
// least 2).
func nearestNames(want string, names []string, n int) []string {
	w := strings.ToLower(want)
	type cand struct {
		name string
		dist int
	}
	var cs []cand
	for _, name := range names {
		l := strings.ToLower(name)
		if l == w {
			continue
		}
		d := editDistance(w, l)
		if _, short, ok := strings.Cut(l, ":"); ok {
			d = min(d, editDistance(w, short)) // the name without its plugin
		}
		if strings.Contains(l, w) || strings.Contains(w, l) {
			d = 0
		}
		if d <= max(2, len(w)/3) {
			cs = append(cs, cand{name, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance of two strings, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
