package app

import (
	"context"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/incident"
)

// Incidents lists the incidents of a lens, best first, one page at a time
// (p.After continues where the previous page's Next left off).
func (s *Service) Incidents(ctx context.Context, lens string, p cortex.IncidentParams) (cortex.IncidentList, error) {
	l, err := incident.LensByName(lens)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	limit, clamped, err := cortex.ClampLimit(p.Limit, incident.DefaultLimit, incident.MaxLimit)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	out, err := incident.New(s.DB).All(ctx, l, p)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	out.LimitClampedTo = clamped
	page(&out, p.After, limit)
	return out, s.incidentUsage(ctx, out.Incidents)
}

// page cuts one page out of a whole ranking and says whether more follow.
func page(l *cortex.IncidentList, after *cortex.Cursor, limit int) {
	l.Incidents, l.Next = cortex.Page(l.Incidents, after, limit)
	l.Truncated = l.Truncated || l.Next != ""
}

// IncidentsOfLenses lists the incidents of several lenses (nil: every
// lens of the engine) in one list: the most severe label first, then by the
// lens's score, then the most recent. Signals narrow the lenses to those
// that report one of them. p.Limit bounds the merged list.
func (s *Service) IncidentsOfLenses(ctx context.Context, lenses []string, p cortex.IncidentParams) (cortex.IncidentList, error) {
	limit, clamped, err := cortex.ClampLimit(p.Limit, incident.DefaultLimit, incident.MaxLimit)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	lenses, err = subjectLenses(lenses, subjectsOf(p))
	if err != nil {
		return cortex.IncidentList{}, err
	}
	if len(lenses) == 0 && p.IncidentID != "" {
		if l, err := incident.ForID(p.IncidentID); err == nil {
			lenses = []string{l.Name()}
		}
	}
	ls, err := selectLenses(lenses, p.Signals)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	lists := make([]cortex.IncidentList, len(ls))
	g, gctx := errgroup.WithContext(ctx)
	for i, l := range ls {
		g.Go(func() error {
			lp := p
			lp.Signals = onlyKnown(p.Signals, incident.Signals(l))
			var err error
			lists[i], err = incident.New(s.DB).All(gctx, l, lp)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return cortex.IncidentList{}, err
	}
	out := cortex.IncidentList{Incidents: []cortex.Incident{}, LimitClampedTo: clamped, WindowMinutes: p.WindowMinutes}
	for _, l := range lists {
		out.Incidents = append(out.Incidents, l.Incidents...)
		out.Total += l.Total
		out.CandidateRows += l.CandidateRows
		out.CandidateCap += l.CandidateCap
		out.CandidateWindowTruncated = out.CandidateWindowTruncated || l.CandidateWindowTruncated
		out.Truncated = out.Truncated || l.Truncated
		out.WindowMinutes = l.WindowMinutes
	}
	slices.SortStableFunc(out.Incidents, incident.BySeverity)
	page(&out, p.After, limit)
	return out, s.incidentUsage(ctx, out.Incidents)
}

// selectLenses resolves lens names (nil: all) and keeps those that can
// report one of signals (when given).
func selectLenses(names, signals []string) ([]incident.Lens, error) {
	if len(names) == 0 {
		names = incident.Names()
	}
	var out []incident.Lens
	var known []string
	for _, n := range names {
		l, err := incident.LensByName(n)
		if err != nil {
			return nil, err
		}
		sig := incident.Signals(l)
		known = append(known, sig...)
		if len(signals) == 0 || len(onlyKnown(signals, sig)) > 0 {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		slices.Sort(known)
		return nil, cortex.Errorf(cortex.CodeInvalid, "no lens reports the signals %v (known: %v)", signals, slices.Compact(known))
	}
	return out, nil
}

func onlyKnown(signals, known []string) []string {
	var out []string
	for _, s := range signals {
		if slices.Contains(known, s) {
			out = append(out, s)
		}
	}
	return out
}

// Investigate builds evidence bundles with deterministic findings for the
// best matching incidents of a lens. Given a skill or plugin it works
// skill-first: the top incident, the others summarized, a usage summary
// when the skill was used without a negative signal, suggestions when
// nothing matched.
func (s *Service) Investigate(ctx context.Context, lens string, p cortex.InvestigateParams) (cortex.Investigation, error) {
	l, err := incident.LensByName(lens)
	if err != nil {
		return cortex.Investigation{}, err
	}
	inv, err := incident.New(s.DB).Investigate(ctx, l, p)
	if err != nil {
		return inv, err
	}
	for i := range inv.Bundles {
		if err := s.setIncidentUsage(ctx, &inv.Bundles[i].Incident); err != nil {
			return inv, err
		}
	}
	return inv, nil
}

// lensSubjects are the subject filters each lens takes, in the order an
// investigation picks a lens when a subject fits several (a skill alone is
// the skill lens's; lens=friction asks for the friction charged to it).
// A lens missing here (a new one) takes none.
var lensSubjects = []struct {
	lens   string
	fields []string
}{
	{cortex.LensSkill, []string{"skill", "plugin"}},
	{cortex.LensMCP, []string{"target", "mcp_server", "mcp_tool", "tool_name"}},
	{cortex.LensHook, []string{"hook", "hook_event", "hook_source", "evidence_kind"}},
	{cortex.LensAbuse, []string{"terms"}},
	{cortex.LensFriction, []string{"skill"}},
}

// subjectsOf names the subject filters p sets.
func subjectsOf(p cortex.IncidentParams) []string {
	var out []string
	for name, set := range map[string]bool{"skill": p.Skill != "", "plugin": p.Plugin != "", "target": p.Target != "",
		"mcp_server": p.MCPServer != "", "mcp_tool": p.MCPTool != "", "tool_name": p.ToolName != "", "hook": p.Hook != "",
		"hook_event": p.HookEvent != "", "hook_source": p.HookSource != "", "evidence_kind": p.EvidenceKind != "",
		"terms": len(p.Terms) > 0} {
		if set {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// InvestigateAny investigates an incident of any lens: the lens its id
// names (p.IncidentID), else lens, else the lens of the subject filters
// given.
func (s *Service) InvestigateAny(ctx context.Context, lens string, p cortex.InvestigateParams) (cortex.Investigation, string, error) {
	var asked []string
	if lens != "" {
		asked = []string{lens}
	}
	ls, err := subjectLenses(asked, subjectsOf(p.IncidentParams))
	if err != nil {
		return cortex.Investigation{}, "", err
	}
	if len(ls) > 0 && len(subjectsOf(p.IncidentParams)) > 0 {
		lens = ls[0] // the first lens the subject fits (see lensSubjects)
	}
	lens, err = LensFor(lens, p.IncidentID)
	if err != nil {
		return cortex.Investigation{}, "", err
	}
	inv, err := s.Investigate(ctx, lens, p)
	return inv, lens, err
}

// subjectLenses narrows the lenses of an all-lens action (asked, or
// every lens) to those that take every subject filter given, in
// lensSubjects order; none is an error.
func subjectLenses(asked []string, fields []string) ([]string, error) {
	if len(fields) == 0 {
		return asked, nil
	}
	var out []string
	for _, ls := range lensSubjects {
		if (len(asked) > 0 && !slices.Contains(asked, ls.lens)) || !slices.Contains(incident.Names(), ls.lens) {
			continue
		}
		fits := true
		for _, f := range fields {
			fits = fits && slices.Contains(ls.fields, f)
		}
		if fits {
			out = append(out, ls.lens)
		}
	}
	if len(out) == 0 {
		what := "every lens"
		if len(asked) > 0 {
			what = strings.Join(asked, ", ")
		}
		return nil, cortex.Errorf(cortex.CodeInvalid, "no lens of %s takes the subject filters %s together (subject filters of several lenses?)",
			what, strings.Join(fields, ", "))
	}
	return out, nil
}

// LensFor picks the lens of an investigation: the one an incident id
// belongs to, which must agree with lens when both are given.
func LensFor(lens, incidentID string) (string, error) {
	if incidentID == "" {
		if lens == "" {
			return "", cortex.Errorf(cortex.CodeInvalid,
				"investigate needs an incident_id (from incidents), a lens (%s) or a subject (a skill, an MCP target, a hook)",
				strings.Join(incident.Names(), ", "))
		}
		return lens, nil
	}
	l, err := incident.ForID(incidentID)
	if err != nil {
		return "", err
	}
	if lens != "" && lens != l.Name() {
		return "", cortex.Errorf(cortex.CodeInvalid, "incident %s is a %s incident, not %s", incidentID, l.Name(), lens)
	}
	return l.Name(), nil
}

// AbuseMatches lists user messages carrying abuse terms, with context.
func (s *Service) AbuseMatches(ctx context.Context, p cortex.AbuseParams) (cortex.AbuseMatches, error) {
	return incident.New(s.DB).AbuseMatches(ctx, p)
}

// AllIncidents lists every incident of a lens matching p, best first,
// without the listing limit: for views that count or chart incidents (the
// dashboard's overview and skill health). Its answer can be large; it is
// not an action of the remote surfaces.
func (s *Service) AllIncidents(ctx context.Context, lens string, p cortex.IncidentParams) (cortex.IncidentList, error) {
	l, err := incident.LensByName(lens)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	return incident.New(s.DB).All(ctx, l, p)
}
