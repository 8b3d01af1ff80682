package incident

import (
	"context"
	"slices"
	"time"

	"github.com/cortexhq/cortex"
)

// Bounds of the engine.
const (
	// SessionCap is how many sessions one listing of a lens that reads
	// sessions whole (skill, friction) reads: those of its newest
	// candidates. Beyond it the scan is reported truncated.
	SessionCap = 1_000
	// CandidateCap is how many candidate events or anchors one listing
	// scans (the newest ones); more sets candidate_window_truncated.
	CandidateCap = 10_000
	// DefaultWindowMinutes is the gap that ends a group.
	DefaultWindowMinutes = 10
	// MaxWindowMinutes bounds window_minutes and the correlation window.
	MaxWindowMinutes = 120
	// DefaultLimit and MaxLimit bound incident listings.
	DefaultLimit = 20
	MaxLimit     = 100
)

// Lens is what differs between incident kinds: which events are
// candidates, the grouping key's subject, the signal detectors, the score
// and labels, and the lens's own evidence. The engine does the rest. Its
// methods are unexported: the lenses live in this package.
type Lens interface {
	// Name is the lens name (cortex.LensSkill, …).
	Name() string
	// prefix starts every incident id of the lens.
	prefix() string
	// signals lists the signal names the lens can report.
	signals() []string
	// prepare validates and normalizes the lens's own parameters.
	prepare(p *cortex.IncidentParams) error
	// candidates returns the members found in the newest capRows
	// candidate rows, how many rows it scanned (at most capRows) and
	// whether more were left.
	candidates(ctx context.Context, db Store, p *cortex.IncidentParams, capRows int) ([]member, int, bool, error)
	// detect sets the signals, anchors and event counts of groups.
	detect(ctx context.Context, db Store, p *cortex.IncidentParams, groups []*group, window time.Duration) error
	// isIncident says whether a detected group is listed.
	isIncident(g *group, p *cortex.IncidentParams) bool
	// score and label rate a detected group.
	score(g *group) float64
	label(score float64) string
	// subject copies the key's subject into the incident.
	subject(k groupKey, inc *cortex.Incident)
	// extras adds the lens's own evidence to a bundle.
	extras(ctx context.Context, db Store, g *group, b *cortex.Bundle) error
	// subjectFirst says whether p names the lens's subject (a skill, an
	// MCP server or tool, a hook): investigations then show the top
	// incident only, and usage when there is no incident.
	subjectFirst(p *cortex.IncidentParams) bool
	// describe names the selected subject for messages ("skill \"x\"").
	describe(p *cortex.IncidentParams) string
	// usage reports how much the named subject was used in the range
	// (events, sessions) and any usage rows to show; zero events means
	// no usage (an investigation then answers no data).
	usage(ctx context.Context, db Store, p *cortex.IncidentParams) (usageReport, error)
	// suggest explains an empty answer with lens-specific hints.
	suggest(ctx context.Context, db Store, p *cortex.IncidentParams) (string, []string)
}

// grouper is implemented by lenses that form their own groups from the
// sessions their candidates touch (skill runs, friction per session): it
// reads those sessions whole and returns, detected, every group that
// overlaps the range — so a --since that cuts into a group changes
// neither its id nor its score.
type grouper interface {
	group(ctx context.Context, db Store, p *cortex.IncidentParams, ms []member, window time.Duration) ([]*group, error)
}

// matcher is implemented by lenses whose subject is resolved against the
// store (MCP targets, hook names): matched says what p resolved to ("MCP
// server labby"), "" when nothing matched.
type matcher interface {
	matched(ctx context.Context, db Store, p *cortex.IncidentParams) string
}

// usageReport is a subject's use without a negative signal.
type usageReport struct {
	Events, Sessions int64
	// Noun names the events ("skill events", "MCP calls", "hook runs").
	Noun string
	// Skills is the usage table of the skill lens.
	Skills []cortex.SkillSummary
}

// Engine finds incidents in the store through a lens.
type Engine struct {
	db Store
	// CandidateCap bounds candidate scans (CandidateCap by default).
	CandidateCap int
}

// New returns an engine over db.
func New(db Store) *Engine { return &Engine{db: db, CandidateCap: CandidateCap} }

// Lenses returns the lenses by name.
func Lenses() map[string]Lens {
	return map[string]Lens{cortex.LensAbuse: abuseLens{}, cortex.LensSkill: skillLens{}, cortex.LensMCP: mcpLens{},
		cortex.LensHook: hookLens{}, cortex.LensFriction: frictionLens{}}
}

// LensByName returns the named lens or an invalid-argument error.
func LensByName(name string) (Lens, error) {
	if l, ok := Lenses()[name]; ok {
		return l, nil
	}
	return nil, cortex.Errorf(cortex.CodeInvalid, "unknown incident lens %q (use friction, skill, mcp, hook or abuse)", name)
}

// run is the result of one pass of the engine: every listed incident
// (sorted, filtered, not limited) with its group.
type run struct {
	incidents     []cortex.Incident
	groups        map[string]*group
	candidateRows int
	truncated     bool
	window        int
}

// normalize validates the common parameters and applies defaults.
func normalize(l Lens, p *cortex.IncidentParams) error {
	if p.Tool != "" && !p.Tool.Valid() {
		return cortex.Errorf(cortex.CodeInvalid, "unknown tool %q (use claude, codex or gemini)", p.Tool)
	}
	if !p.Since.IsZero() && !p.Until.IsZero() && !p.Since.Before(p.Until) {
		return cortex.Errorf(cortex.CodeInvalid, "since (%s) must be before until (%s)",
			cortex.FormatTime(p.Since), cortex.FormatTime(p.Until))
	}
	switch {
	case p.WindowMinutes < 0:
		return cortex.Errorf(cortex.CodeInvalid, "window_minutes must be positive, got %d", p.WindowMinutes)
	case p.WindowMinutes == 0:
		p.WindowMinutes = DefaultWindowMinutes
	case p.WindowMinutes > MaxWindowMinutes:
		p.WindowMinutes = MaxWindowMinutes
	}
	if p.MinScore < 0 {
		return cortex.Errorf(cortex.CodeInvalid, "min_score must not be negative, got %g", p.MinScore)
	}
	known := l.signals()
	for _, s := range p.Signals {
		if !slices.Contains(known, s) {
			return cortex.Errorf(cortex.CodeInvalid, "unknown %s signal %q (known: %v)", l.Name(), s, known)
		}
	}
	return l.prepare(p)
}

// Incidents lists the incidents of a lens, best first.
func (e *Engine) Incidents(ctx context.Context, l Lens, p cortex.IncidentParams) (cortex.IncidentList, error) {
	limit, clamped, err := cortex.ClampLimit(p.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	r, err := e.run(ctx, l, &p)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	out := cortex.IncidentList{
		Incidents: r.incidents, Total: len(r.incidents), CandidateRows: r.candidateRows, CandidateCap: e.candidateCap(),
		CandidateWindowTruncated: r.truncated, LimitClampedTo: clamped, WindowMinutes: r.window,
	}
	if len(out.Incidents) > limit {
		out.Incidents, out.Truncated = out.Incidents[:limit], true
	}
	out.Truncated = out.Truncated || r.truncated
	if out.Incidents == nil {
		out.Incidents = []cortex.Incident{}
	}
	return out, nil
}

func (e *Engine) candidateCap() int {
	if e.CandidateCap > 0 {
		return e.CandidateCap
	}
	return CandidateCap
}

// run scans candidates, groups them, detects signals, scores, identifies,
// filters and sorts.
func (e *Engine) run(ctx context.Context, l Lens, p *cortex.IncidentParams) (run, error) {
	if err := normalize(l, p); err != nil {
		return run{}, err
	}
	ms, scanned, truncated, err := l.candidates(ctx, e.db, p, e.candidateCap())
	if err != nil {
		return run{}, err
	}
	r := run{window: p.WindowMinutes, groups: map[string]*group{}, candidateRows: scanned, truncated: truncated}
	window := time.Duration(p.WindowMinutes) * time.Minute
	var groups []*group
	if gr, ok := l.(grouper); ok {
		var cut bool
		if ms, cut = sessionBudget(ms, SessionCap); cut {
			r.truncated = true
		}
		if groups, err = gr.group(ctx, e.db, p, ms, window); err != nil {
			return run{}, err
		}
	} else {
		if groups, err = e.completeGroups(ctx, l, p, ms, window); err != nil {
			return run{}, err
		}
		if err := l.detect(ctx, e.db, p, groups, window); err != nil {
			return run{}, err
		}
	}
	for _, g := range groups {
		if !l.isIncident(g, p) {
			continue
		}
		inc := e.incident(l, g, p.WindowMinutes)
		if !keep(inc, p) {
			continue
		}
		r.incidents = append(r.incidents, inc)
		r.groups[inc.ID] = g
	}
	sortIncidents(r.incidents)
	return r, nil
}

// sessionBudget keeps the candidates of the first n sessions they touch
// (candidates come newest first) and reports whether it dropped any.
func sessionBudget(ms []member, n int) ([]member, bool) {
	seen := map[groupKey]bool{}
	out := ms[:0:0]
	cut := false
	for _, m := range ms {
		k := groupKey{Tool: m.Key.Tool, Host: m.Key.Host, Session: m.Key.Session}
		if !seen[k] {
			if len(seen) == n {
				cut = true
				continue
			}
			seen[k] = true
		}
		out = append(out, m)
	}
	return out, cut
}

// completeGroups groups the candidates by gap, then completes the groups
// a time range cut: a session with a group within window of --since or
// --until is read again without the range (through the lens's own
// candidate scan), regrouped, and its groups that overlap the range are
// kept. An incident's members, id and score so do not depend on where the
// range starts or ends.
func (e *Engine) completeGroups(ctx context.Context, l Lens, p *cortex.IncidentParams, ms []member, window time.Duration) ([]*group, error) {
	groups := groupMembers(ms, window)
	if p.Since.IsZero() && p.Until.IsZero() {
		return groups, nil
	}
	edge := map[groupKey]bool{}
	var edges []groupKey
	for _, g := range groups {
		if g.Key.Session == "" {
			continue
		}
		if !p.Since.IsZero() && g.First.Sub(p.Since) <= window || !p.Until.IsZero() && p.Until.Sub(g.Last) <= window {
			sk := groupKey{Tool: g.Key.Tool, Host: g.Key.Host, Session: g.Key.Session}
			if !edge[sk] {
				edge[sk] = true
				edges = append(edges, sk)
			}
		}
	}
	if len(edges) == 0 {
		return groups, nil
	}
	var out []*group
	for _, g := range groups {
		if !edge[groupKey{Tool: g.Key.Tool, Host: g.Key.Host, Session: g.Key.Session}] {
			out = append(out, g)
		}
	}
	for _, sk := range edges {
		q := *p
		q.Tool, q.Host, q.Session, q.Since, q.Until = sk.Tool, sk.Host, sk.Session, time.Time{}, time.Time{}
		more, _, _, err := l.candidates(ctx, e.db, &q, e.candidateCap())
		if err != nil {
			return nil, err
		}
		for _, g := range groupMembers(more, window) {
			if overlaps(g.First, g.Last, p.Since, p.Until) {
				out = append(out, g)
			}
		}
	}
	slices.SortFunc(out, func(a, b *group) int {
		if c := a.Key.compare(b.Key); c != 0 {
			return c
		}
		return a.First.Compare(b.First)
	})
	return out, nil
}

// keep applies the incident filters: id, signals, minimum score.
func keep(inc cortex.Incident, p *cortex.IncidentParams) bool {
	if p.IncidentID != "" && inc.ID != p.IncidentID {
		return false
	}
	if inc.Score < p.MinScore {
		return false
	}
	if len(p.Signals) == 0 {
		return true
	}
	for _, s := range p.Signals {
		if inc.SignalCounts[s] > 0 {
			return true
		}
	}
	return false
}

// incident builds the incident of a detected group.
func (e *Engine) incident(l Lens, g *group, window int) cortex.Incident {
	ids := make([]int64, len(g.Members))
	identities := make([]string, len(g.Members))
	for i, m := range g.Members {
		ids[i], identities[i] = m.ID, m.identity()
	}
	anchors := make([]int64, len(g.Anchors))
	for i, a := range g.Anchors {
		anchors[i] = a.LogID
	}
	slices.Sort(anchors)
	first, last := g.span()
	counts := map[string]int{}
	for _, s := range l.signals() {
		counts[s] = g.Signals[s]
	}
	score := l.score(g)
	inc := cortex.Incident{
		ID: stableID(l.prefix(), l.Name(), g.Key, identities), Lens: l.Name(),
		Tool: g.Key.Tool, Project: g.Key.Project, SessionID: g.Key.Session, Hostname: g.Key.Host,
		FirstSeen: cortex.FormatTime(first), LastSeen: cortex.FormatTime(last), DurationSecs: last.Sub(first).Seconds(),
		EventCount: g.EventCount, EventIDs: ids, AnchorLogIDs: anchors, SignalCounts: counts,
		SignalsPresent: g.present(), Terms: g.Terms, Score: score, Label: l.label(score), WindowMinutes: window,
		AttributedTo: g.Attributed, CoActive: g.CoActive,
	}
	l.subject(g.Key, &inc)
	return inc
}
