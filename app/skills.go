package app

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/incident"
	"github.com/cortexhq/cortex/lifecycle"
	"github.com/cortexhq/cortex/store"
)

// Bounds of the skill lifecycle actions.
const (
	// maxSkillLoads bounds the loads read for one skill's versions.
	maxSkillLoads = 10_000
	// maxSkillBundles bounds the incidents investigated for one skill's
	// findings (health, propose, evals).
	maxSkillBundles = 10
	// maxListBundles bounds them per skill when health lists every skill.
	maxListBundles = 3
	// DefaultHealthLimit and MaxHealthLimit bound the skills listed.
	DefaultHealthLimit = 20
	MaxHealthLimit     = 200
)

// GradeFormula documents the health grade (also in docs/skills.md).
const GradeFormula = "score = 100 − 50 × incident rate − 30 × severe (high/critical) rate − 20 × min(1, friction per run); " +
	"grade A ≥ 90, B ≥ 75, C ≥ 60, D ≥ 40, else F; provisional below 5 runs"

// skillRuns is what the lifecycle actions know of skills: their runs (one
// skill-lens group each, incident or not), with versions and friction.
type skillRuns struct {
	runs     []lifecycle.Run
	events   [][]int64
	list     cortex.IncidentList
	bodies   map[string]lifecycle.Body
	loads    map[string][]lifecycle.Load // by skill name
	names    []string                    // the stored names the skill stands for
	byName   map[string][]int            // run indexes by skill name
	friction int                         // friction incidents not matched to a run
}

func (s *Service) lifecycleParams(scope ScopeParams, skill string) (cortex.IncidentParams, error) {
	tool, since, until, err := s.scope(scope)
	return cortex.IncidentParams{Tool: tool, Project: scope.Project, Session: scope.Session, Host: scope.Host, Since: since,
		Until: until, Skill: skill}, err
}

// readSkillRuns reads the runs of a skill (every skill when skill is
// ""), their body versions and the friction charged to them.
func (s *Service) readSkillRuns(ctx context.Context, scope ScopeParams, skill string) (*skillRuns, error) {
	ip, err := s.lifecycleParams(scope, skill)
	if err != nil {
		return nil, err
	}
	e := incident.New(s.DB)
	sl, _ := incident.LensByName(cortex.LensSkill)
	ip.IncludeUsage = true
	list, err := e.All(ctx, sl, ip)
	if err != nil {
		return nil, err
	}
	sr := &skillRuns{list: list, byName: map[string][]int{}, loads: map[string][]lifecycle.Load{}}
	var ids []int64
	for _, inc := range list.Incidents {
		r := lifecycle.Run{IncidentID: inc.ID, Tool: inc.Tool, Project: inc.Project, Session: inc.SessionID, Host: inc.Hostname,
			Start: stamp(inc.FirstSeen), End: stamp(inc.LastSeen), Incident: len(inc.SignalsPresent) > 0,
			Score: inc.Score, Label: inc.Label, Signals: inc.SignalsPresent}
		sr.byName[inc.SkillName] = append(sr.byName[inc.SkillName], len(sr.runs))
		sr.runs = append(sr.runs, r)
		sr.events = append(sr.events, inc.EventIDs)
		ids = append(ids, inc.EventIDs...)
	}
	for n := range sr.byName {
		sr.names = append(sr.names, n)
	}
	if skill != "" {
		more, err := s.DB.SkillNamesMatching(ctx, skill)
		if err != nil {
			return nil, err
		}
		for _, n := range more {
			if !slices.Contains(sr.names, n) {
				sr.names = append(sr.names, n)
			}
		}
	}
	sort.Strings(sr.names)
	evBodies, err := s.DB.SkillEventBodies(ctx, ids)
	if err != nil {
		return nil, err
	}
	shas := map[string]bool{}
	for _, v := range evBodies {
		shas[v] = true
	}
	var loads []store.SkillLoad
	if skill != "" || len(sr.names) > 0 {
		if loads, err = s.DB.SkillLoads(ctx, sr.names, maxSkillLoads); err != nil {
			return nil, err
		}
	}
	for _, l := range loads {
		shas[l.SHA256] = true
		sr.loads[l.Skill] = append(sr.loads[l.Skill], lifecycle.Load{Version: l.SHA256, At: l.Timestamp, Tool: l.Tool,
			Session: l.Session, Kind: l.Kind, Path: l.Path})
	}
	if sr.bodies, err = s.skillBodies(ctx, shas); err != nil {
		return nil, err
	}
	lifecycle.RunVersions(sr.runs, sr.events, evBodies, sr.bodies)
	return sr, s.chargeFriction(ctx, ip, sr)
}

func (s *Service) skillBodies(ctx context.Context, shas map[string]bool) (map[string]lifecycle.Body, error) {
	keys := make([]string, 0, len(shas))
	for k := range shas {
		keys = append(keys, k)
	}
	stored, err := s.DB.SkillBodies(ctx, keys, true)
	out := make(map[string]lifecycle.Body, len(stored))
	for k, b := range stored {
		out[k] = lifecycle.Body{Version: k, Text: b.Body, Lines: b.Lines, Bytes: b.Bytes, Complete: b.Complete}
	}
	return out, err
}

// chargeFriction counts the friction incidents charged to each skill
// against the run of that skill in the same session that started last
// before the friction.
func (s *Service) chargeFriction(ctx context.Context, ip cortex.IncidentParams, sr *skillRuns) error {
	fl, _ := incident.LensByName(cortex.LensFriction)
	ip.IncludeUsage = false
	list, err := incident.New(s.DB).All(ctx, fl, ip)
	if err != nil {
		return err
	}
	for _, f := range list.Incidents {
		at := stamp(f.FirstSeen)
		for _, a := range f.AttributedTo {
			if a.Kind != incident.SubjectSkill && a.Kind != incident.SubjectCommand {
				continue
			}
			best := -1
			for _, i := range sr.byName[a.Name] {
				r := sr.runs[i]
				if r.Tool == f.Tool && r.Host == f.Hostname && r.Session == f.SessionID && !r.Start.After(at) &&
					(best < 0 || r.Start.After(sr.runs[best].Start)) {
					best = i
				}
			}
			if best >= 0 {
				sr.runs[best].Friction++
			} else if _, ok := sr.byName[a.Name]; ok {
				sr.friction++
			}
		}
	}
	return nil
}

// runsOf returns the runs of one stored skill name.
func (sr *skillRuns) runsOf(name string) []lifecycle.Run {
	out := make([]lifecycle.Run, 0, len(sr.byName[name]))
	for _, i := range sr.byName[name] {
		out = append(out, sr.runs[i])
	}
	return out
}

// versionsOf lists a skill's versions (its runs and loads; the loads of
// every stored name it stands for).
func (sr *skillRuns) versionsOf(names ...string) []lifecycle.Version {
	var runs []lifecycle.Run
	var loads []lifecycle.Load
	for _, n := range names {
		runs = append(runs, sr.runsOf(n)...)
		loads = append(loads, sr.loads[n]...)
	}
	return lifecycle.Versions(loads, runs, sr.bodies)
}

// newestBody is the text of the skill's newest complete stored body (""
// when none is stored).
func (sr *skillRuns) newestBody() string {
	var best lifecycle.Load
	for _, n := range sr.names {
		for _, l := range sr.loads[n] {
			if b := sr.bodies[l.Version]; b.Complete && b.Text != "" && !l.At.Before(best.At) {
				best = l
			}
		}
	}
	return sr.bodies[best.Version].Text
}

// skillRunsOf reads the runs of the skill an action names, which must be
// given and known.
func (s *Service) skillRunsOf(ctx context.Context, action string, scope ScopeParams, skill string) (*skillRuns, error) {
	sr, err := s.readSkillRuns(ctx, scope, skill)
	if err != nil {
		return nil, err
	}
	return sr, requireSkill(action, skill, sr)
}

// loadPaths lists the SKILL.md paths the skill's loads showed, oldest
// first.
func (sr *skillRuns) loadPaths() []string {
	var paths []string
	for _, n := range sr.names {
		for _, l := range sr.loads[n] {
			paths = append(paths, l.Path)
		}
	}
	return paths
}

// requireSkill checks a lifecycle action got a skill and that the store
// knows it.
func requireSkill(action, skill string, sr *skillRuns) error {
	if strings.TrimSpace(skill) == "" {
		return cortex.Errorf(cortex.CodeInvalid, "%s: a skill is required (see cortex ai skills --summary)", action)
	}
	if len(sr.runs) == 0 && len(sr.loads) == 0 {
		return cortex.Errorf(cortex.CodeNotFound, "no runs or loads of skill %q match these filters (see cortex ai skills --summary)", skill)
	}
	return nil
}

// primaryName is the stored name a skill as typed stands for: the one
// with the most runs.
func (sr *skillRuns) primaryName() string {
	best := ""
	for _, n := range sr.names {
		if best == "" || len(sr.byName[n]) > len(sr.byName[best]) {
			best = n
		}
	}
	return best
}

// SkillVersionList is the answer of skill_versions.
type SkillVersionList struct {
	Skill    string              `json:"skill"`
	Versions []lifecycle.Version `json:"versions"`
	// UnknownVersionRuns counts runs whose body no load showed (a resumed
	// session, an announcement only).
	UnknownVersionRuns int `json:"unknown_version_runs"`
	// Diff is the unified diff between two versions (from → to).
	Diff *VersionDiff `json:"diff,omitempty"`
	// Message says why a diff asked for is absent.
	Message string `json:"message,omitempty"`
}

// VersionDiff is the diff between two stored versions.
type VersionDiff struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Partial is set when either body is not known whole.
	Partial bool   `json:"partial,omitempty"`
	Diff    string `json:"diff"`
}

// SkillVersions lists a skill's versions, with the diff between two of
// them (from and to: a hash prefix or vN; diff alone: the last two).
func (s *Service) SkillVersions(ctx context.Context, p SkillVersionsParams) (SkillVersionList, error) {
	sr, err := s.skillRunsOf(ctx, "skill_versions", p.ScopeParams, p.Skill)
	if err != nil {
		return SkillVersionList{}, err
	}
	out := SkillVersionList{Skill: sr.primaryName(), Versions: sr.versionsOf(sr.names...)}
	for _, r := range sr.runs {
		if r.Version == "" {
			out.UnknownVersionRuns++
		}
	}
	if !p.Diff && p.From == "" && p.To == "" {
		return out, nil
	}
	vs := out.Versions
	if len(vs) < 2 && p.From == "" && p.To == "" {
		out.Message = fmt.Sprintf("%d version(s) of the skill seen: nothing to diff yet", len(vs))
		return out, nil
	}
	from, to, err := pickPair(vs, p.From, p.To)
	if err != nil {
		return out, err
	}
	a, b := sr.bodies[from.Version], sr.bodies[to.Version]
	out.Diff = &VersionDiff{From: from.Short, To: to.Short, Partial: !a.Complete || !b.Complete, Diff: lifecycle.Diff(a, b)}
	return out, nil
}

// pickPair resolves the two versions of a diff or comparison: the named
// ones, else the last two.
func pickPair(vs []lifecycle.Version, from, to string) (lifecycle.Version, lifecycle.Version, error) {
	resolve := func(name string, dflt int) (lifecycle.Version, error) {
		if name == "" {
			if dflt < 0 || dflt >= len(vs) {
				return lifecycle.Version{}, cortex.Errorf(cortex.CodeInvalid,
					"the skill has %d stored version(s); name two with from/to (a hash prefix or v1, v2 …)", len(vs))
			}
			return vs[dflt], nil
		}
		v, ok := lifecycle.Resolve(vs, name)
		if !ok {
			var names []string
			for _, x := range vs {
				names = append(names, "v"+itoa(x.Ordinal)+" "+x.Short)
			}
			return v, cortex.Errorf(cortex.CodeNotFound, "no single version matches %q (versions: %s)", name, strings.Join(names, ", "))
		}
		return v, nil
	}
	a, err := resolve(from, len(vs)-2)
	if err != nil {
		return a, a, err
	}
	b, err := resolve(to, len(vs)-1)
	return a, b, err
}

func itoa(n int) string { return strconv.Itoa(n) }

// SkillHealthReport is the answer of skill_health.
type SkillHealthReport struct {
	Skills []lifecycle.Health `json:"skills"`
	// Total counts the skills before the limit.
	Total          int    `json:"total_skills"`
	Truncated      bool   `json:"truncated"`
	LimitClampedTo int    `json:"limit_clamped_to,omitempty"`
	GradeFormula   string `json:"grade_formula"`
	// CandidateWindowTruncated says older skill events were not scanned
	// (narrow with since).
	CandidateWindowTruncated bool `json:"candidate_window_truncated"`
}

// SkillHealth reports the health of one skill, or of every skill worst
// first.
func (s *Service) SkillHealth(ctx context.Context, p SkillHealthParams) (SkillHealthReport, error) {
	limit, clamped, err := cortex.ClampLimit(p.Limit, DefaultHealthLimit, MaxHealthLimit)
	if err != nil {
		return SkillHealthReport{}, err
	}
	sr, err := s.readSkillRuns(ctx, p.ScopeParams, p.Skill)
	if err != nil {
		return SkillHealthReport{}, err
	}
	rep := SkillHealthReport{Skills: []lifecycle.Health{}, GradeFormula: GradeFormula, LimitClampedTo: clamped,
		CandidateWindowTruncated: sr.list.CandidateWindowTruncated}
	if p.Skill != "" {
		if err := requireSkill("skill_health", p.Skill, sr); err != nil {
			return rep, err
		}
	}
	names := sr.names
	if p.Skill == "" {
		names = nil
		for n := range sr.byName {
			names = append(names, n)
		}
	}
	var hs []lifecycle.Health
	for _, n := range names {
		if len(sr.byName[n]) == 0 {
			continue
		}
		hs = append(hs, lifecycle.SkillHealth(n, sr.runsOf(n), sr.versionsOf(n), nil, 0))
	}
	lifecycle.WorstFirst(hs)
	rep.Total = len(hs)
	if len(hs) > limit {
		hs, rep.Truncated = hs[:limit], true
	}
	// Finding categories of the listed skills' worst incidents.
	per := maxSkillBundles
	if p.Skill == "" {
		per = maxListBundles
	}
	for i := range hs {
		if hs[i].Incidents == 0 {
			continue
		}
		fs, n, err := s.skillFindings(ctx, p.ScopeParams, hs[i].Skill, per)
		if err != nil {
			return rep, err
		}
		hs[i] = lifecycle.SkillHealth(hs[i].Skill, sr.runsOf(hs[i].Skill), sr.versionsOf(hs[i].Skill), fs, n)
	}
	rep.Skills = hs
	return rep, nil
}

// skillBundles investigates a skill's worst incidents (at most limit).
func (s *Service) skillBundles(ctx context.Context, scope ScopeParams, skill string, limit int) ([]cortex.Bundle, error) {
	ip, err := s.lifecycleParams(scope, skill)
	if err != nil {
		return nil, err
	}
	sl, _ := incident.LensByName(cortex.LensSkill)
	inv, err := incident.New(s.DB).Investigate(ctx, sl, cortex.InvestigateParams{IncidentParams: ip, All: true})
	if err != nil || inv.NoIncident {
		return nil, err
	}
	if len(inv.Bundles) > limit {
		inv.Bundles = inv.Bundles[:limit]
	}
	return inv.Bundles, nil
}

// skillFindings returns the findings of a skill's worst incidents and how
// many incidents they come from.
func (s *Service) skillFindings(ctx context.Context, scope ScopeParams, skill string, limit int) ([]lifecycle.Finding, int, error) {
	bs, err := s.skillBundles(ctx, scope, skill, limit)
	if err != nil {
		return nil, 0, err
	}
	var out []lifecycle.Finding
	for _, b := range bs {
		for _, f := range b.Findings.FailureModes {
			out = append(out, lifecycle.Finding{IncidentID: b.Incident.ID, Finding: f})
		}
	}
	return out, len(bs), nil
}

// SkillCompare compares a skill's incident rate before and after a change:
// two versions (a hash prefix or vN; default the last two) or a date
// (runs before it against runs from it on).
func (s *Service) SkillCompare(ctx context.Context, p SkillCompareParams) (lifecycle.Comparison, error) {
	sr, err := s.skillRunsOf(ctx, "skill_compare", p.ScopeParams, p.Skill)
	if err != nil {
		return lifecycle.Comparison{}, err
	}
	name := sr.primaryName()
	var runs []lifecycle.Run
	for _, n := range sr.names {
		runs = append(runs, sr.runsOf(n)...)
	}
	vs := sr.versionsOf(sr.names...)
	isDate := func(v string) (time.Time, bool) {
		if v == "" {
			return time.Time{}, false
		}
		if _, ok := lifecycle.Resolve(vs, v); ok {
			return time.Time{}, false
		}
		t, err := cortex.ParseTimeArg(v, s.Now())
		return t, err == nil
	}
	bt, bDate := isDate(p.Before)
	at, aDate := isDate(p.After)
	var before, after lifecycle.Side
	var diff string
	switch {
	case bDate || aDate:
		if p.Before != "" && !bDate || p.After != "" && !aDate {
			return lifecycle.Comparison{}, cortex.Errorf(cortex.CodeInvalid, "before and after must both be versions or both be dates")
		}
		if !bDate {
			bt = at
		}
		if !aDate {
			at = bt
		}
		var b, a []lifecycle.Run
		for _, r := range runs {
			switch {
			case r.Start.Before(bt):
				b = append(b, r)
			case !r.Start.Before(at):
				a = append(a, r)
			}
		}
		before = lifecycle.NewSide("runs before "+cortex.FormatTime(bt), b)
		before.To = cortex.FormatTime(bt)
		after = lifecycle.NewSide("runs from "+cortex.FormatTime(at), a)
		after.From = cortex.FormatTime(at)
	case len(vs) < 2 && p.Before == "" && p.After == "":
		// One version so far: nothing to compare it with.
		var only []lifecycle.Run
		label := "no stored version"
		if len(vs) == 1 {
			for _, r := range runs {
				if r.Version == vs[0].Version {
					only = append(only, r)
				}
			}
			label = "v1 " + vs[0].Short
		}
		c := lifecycle.Compare(name, lifecycle.NewSide(label, only), lifecycle.NewSide("no later version", nil))
		c.Message = fmt.Sprintf("only %d version of the skill has been seen: change its SKILL.md and compare the next runs "+
			"(or compare by date with before)", len(vs))
		return c, nil
	default:
		from, to, err := pickPair(vs, p.Before, p.After)
		if err != nil {
			return lifecycle.Comparison{}, err
		}
		side := func(v lifecycle.Version) lifecycle.Side {
			var rs []lifecycle.Run
			for _, r := range runs {
				if r.Version == v.Version {
					rs = append(rs, r)
				}
			}
			sd := lifecycle.NewSide("v"+itoa(v.Ordinal)+" "+v.Short, rs)
			sd.Version, sd.From, sd.To = v.Version, v.FirstSeen, v.LastSeen
			return sd
		}
		before, after = side(from), side(to)
		if a, b := sr.bodies[from.Version], sr.bodies[to.Version]; a.Text != "" && b.Text != "" {
			diff = lifecycle.Diff(a, b)
		}
	}
	c := lifecycle.Compare(name, before, after)
	c.Diff = diff
	return c, nil
}

// stamp parses a timestamp the store wrote (zero when malformed).
func stamp(s string) time.Time {
	t, _ := cortex.ParseTimestamp(s)
	return t
}
