package incident

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/voice"
)

// skillLens finds skill runs that went wrong: the user stopped, interrupted
// or corrected the agent while a skill ran or right after it, or the tools
// it drove failed and stayed failed, in the skill's own scope (its agent
// thread, from its activation to the user's next task).
type skillLens struct{}

func (skillLens) Name() string   { return cortex.LensSkill }
func (skillLens) prefix() string { return "skill-inc-" }

func (skillLens) signals() []string {
	return []string{cortex.SignalUserStopped, cortex.SignalUserCorrection, cortex.SignalToolFailure,
		cortex.SignalScopeConfusion, cortex.SignalIgnoredPolicy, cortex.SignalOverlongLoop, cortex.SignalSkillRetryLoop}
}

func (skillLens) prepare(p *cortex.IncidentParams) error {
	if len(p.Terms) > 0 {
		return cortex.Errorf(cortex.CodeInvalid, "terms apply to the abuse lens only")
	}
	return nil
}

// skillNames resolves a skill as typed ("search") to the stored names it
// stands for (see Store.SkillNamesMatching).
func skillNames(ctx context.Context, db Store, skill string) ([]string, error) {
	return db.SkillNamesMatching(ctx, skill)
}

// runLookback is how long before --since a run may have started and still
// be found: a run's scope reaches past its last event (to the user's next
// prompt), so the candidate scan starts this much earlier and keeps the
// runs that overlap the range.
const runLookback = 2 * time.Hour

func (skillLens) candidates(ctx context.Context, db Store, p *cortex.IncidentParams, capRows int) ([]member, int, bool, error) {
	f := store.CandidateFilter{Tool: p.Tool, Project: p.Project, Session: p.Session, Host: p.Host, Since: p.Since,
		Until: p.Until, Skill: p.Skill, Plugin: p.Plugin, Limit: capRows + 1}
	if !f.Since.IsZero() {
		f.Since = f.Since.Add(-runLookback)
	}
	if p.Skill != "" {
		names, err := skillNames(ctx, db, p.Skill)
		if err != nil {
			return nil, 0, false, err
		}
		if len(names) == 0 {
			return nil, 0, false, nil
		}
		f.Skills = names
	}
	cs, err := db.SkillCandidates(ctx, f)
	if err != nil {
		return nil, 0, false, err
	}
	ms, n, truncated := toMembers(cs, capRows, func(c store.SkillCandidate) member {
		return member{ID: c.ID, LogID: c.LogID, At: c.Timestamp, Kind: c.Kind, Key: groupKey{
			Tool: c.Tool, Host: c.Host, Project: c.Project, Session: c.Session, Subject: [3]string{c.Skill, c.Plugin}}}
	})
	return ms, n, truncated, nil
}

// detect is done by group: a run is detected as it is scoped.
func (skillLens) detect(context.Context, Store, *cortex.IncidentParams, []*group, time.Duration) error {
	return nil
}

// skillGroup is what the skill lens keeps of a run for scoring and
// evidence.
type skillGroup struct {
	run   *skillRun
	calls []tcall
}

// group reads every session the candidates touch, whole, scopes its skill
// runs and returns the runs that overlap the range and match the filters.
// A run is one group whatever the range cuts: its id and score do not
// depend on --since.
func (l skillLens) group(ctx context.Context, db Store, p *cortex.IncidentParams, ms []member, window time.Duration) ([]*group, error) {
	vr := newVoiceReader(db)
	want := map[string]bool{}
	if p.Skill != "" {
		names, err := skillNames(ctx, db, p.Skill)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			want[n] = true
		}
	}
	svs, err := vr.sessions(ctx, sessionScopes(ms))
	if err != nil {
		return nil, err
	}
	// The runs that overlap the range and match the filters, per session,
	// and the spans of calls to read for them: the runs' scopes, and a
	// while after each (a failure recovered later), of the runs' own
	// threads (a run is charged only with its thread's calls, and a
	// failure is recovered only in its thread).
	type session struct {
		sv           *sessionView
		runs         []*skillRun
		reads, nread int
	}
	var sessions []session
	var reads []callRead
	for _, sv := range svs {
		var runs []*skillRun
		for _, r := range sv.runs {
			if !p.Until.IsZero() && !r.Start.Before(p.Until) || !r.End.IsZero() && !p.Since.IsZero() && r.End.Before(p.Since) {
				continue
			}
			if len(want) > 0 && !want[r.Name] && !slices.ContainsFunc(r.Events, func(e store.SessionSkill) bool { return want[e.Skill] }) {
				continue
			}
			if p.Plugin != "" && !strings.EqualFold(r.Plugin, p.Plugin) {
				continue
			}
			if p.Project != "" && runProject(r, sv) != p.Project {
				continue
			}
			runs = append(runs, r)
		}
		if len(runs) == 0 {
			continue
		}
		var threads []string
		for _, r := range runs {
			if !slices.Contains(threads, r.Thread) {
				threads = append(threads, r.Thread)
			}
		}
		ss := session{sv: sv, runs: runs, reads: len(reads)}
		for _, w := range scopeWindows(runs, recoveryAfter) {
			reads = append(reads, callRead{sv: sv, from: w[0], to: w[1], threads: threads})
		}
		ss.nread = len(reads) - ss.reads
		sessions = append(sessions, ss)
	}
	got, err := vr.callsMany(ctx, reads)
	if err != nil {
		return nil, err
	}
	// The agent's words about the dialogue, to read the user's acts as the
	// friction lens does.
	whole := make([]store.CallWindow, len(sessions))
	for i, ss := range sessions {
		whole[i] = store.CallWindow{Scope: ss.sv.scope}
	}
	said, err := vr.claimsMany(ctx, whole)
	if err != nil {
		return nil, err
	}
	var out []*group
	for k, ss := range sessions {
		sv := ss.sv
		var calls []tcall
		for _, cs := range got[ss.reads : ss.reads+ss.nread] {
			calls = append(calls, cs...)
		}
		if err := loopTexts(ctx, db, calls); err != nil {
			return nil, err
		}
		hits := map[int][]string{}
		for _, h := range frictionSignalsOf(sv.acts, calls, markReasks(sv.acts), &dialogue{claims: said[k], calls: calls}) {
			hits[h.index] = h.signals
		}
		own := &owners{ctx: ctx, db: db, scope: sv.scope, acts: sv.acts, calls: calls, docs: map[*skillRun]*string{}}
		rv := runVoice{hits: hits, own: own.owns}
		for _, r := range ss.runs {
			k := groupKey{Tool: sv.scope.Tool, Host: sv.scope.Host, Project: runProject(r, sv), Session: sv.scope.Session,
				Subject: [3]string{r.Name, r.Plugin, subjectKind(r.Kind)}}
			g := &group{Key: k, Members: r.members(k), First: r.Start, Last: r.LastLive}
			g.lens = &skillGroup{run: r, calls: calls}
			detectRun(g, r, sv.runs, sv.acts, calls, window, rv)
			if own.err != nil {
				return nil, own.err
			}
			if _, last := g.span(); !overlaps(r.Start, maxTime(last, g.SignalEnd), p.Since, p.Until) {
				continue
			}
			out = append(out, g)
		}
	}
	return out, nil
}

// recoveryAfter is how long after a run's scope a skill session's calls
// are read: a failure recovered later than that is not counted as
// recovered.
const recoveryAfter = 10 * time.Minute

// scopeWindows are the runs' scopes, each extended by after (open when a
// scope is), merged where they overlap, in time order.
func scopeWindows(runs []*skillRun, after time.Duration) [][2]time.Time {
	ws := make([][2]time.Time, 0, len(runs))
	for _, r := range runs {
		end := r.End
		if !end.IsZero() {
			end = end.Add(after)
		}
		ws = append(ws, [2]time.Time{r.Start, end})
	}
	slices.SortFunc(ws, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	var out [][2]time.Time
	for _, w := range ws {
		if n := len(out); n > 0 && (out[n-1][1].IsZero() || !w[0].After(out[n-1][1])) {
			if out[n-1][1].IsZero() || w[1].IsZero() {
				out[n-1][1] = time.Time{}
			} else {
				out[n-1][1] = maxTime(out[n-1][1], w[1])
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// runProject is the project a run's key carries: its first event's, else
// the session's.
func runProject(r *skillRun, sv *sessionView) string {
	for _, e := range r.Events {
		if e.Project != "" {
			return e.Project
		}
	}
	return sessionProject(sv)
}

// sessionProject is a session's project: its first act's or skill event's
// that names one.
func sessionProject(sv *sessionView) string {
	for _, a := range sv.acts {
		if a.Project != "" {
			return a.Project
		}
	}
	for _, e := range sv.skills {
		if e.Project != "" {
			return e.Project
		}
	}
	return ""
}

// subjectKind is the third subject field of a run's key: empty for a
// skill (so the ids of skill incidents keep their form), "command" for a
// custom command.
func subjectKind(kind string) string {
	if kind == SubjectCommand {
		return SubjectCommand
	}
	return ""
}

// overlaps reports whether [from, to] meets [since, until) (zero bounds
// are open).
func overlaps(from, to, since, until time.Time) bool {
	return (since.IsZero() || !to.Before(since)) && (until.IsZero() || from.Before(until))
}

// sessionScopes returns the distinct sessions of members (those with a
// session id), in a stable order.
func sessionScopes(ms []member) []store.SessionScope {
	var out []store.SessionScope
	for _, k := range sessionKeys(ms) {
		if k.Session != "" { // events without a session cannot be scoped
			out = append(out, store.SessionScope{Tool: k.Tool, Session: k.Session, Host: k.Host})
		}
	}
	return out
}

// sessionKeys returns the distinct (agent, host, session) keys of
// members, in a stable order. A session's project is not part of it: the
// working directory can change within a session.
func sessionKeys(ms []member) []groupKey {
	seen := map[groupKey]bool{}
	var out []groupKey
	for _, m := range ms {
		k := groupKey{Tool: m.Key.Tool, Host: m.Key.Host, Session: m.Key.Session}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b groupKey) int { return a.compare(b) })
	return out
}

// Detector thresholds of the skill lens.
const (
	// overlongToolCalls is how many tool calls in a run make it overlong
	// (with a verdict of the user).
	overlongToolCalls = 15
	// settleTime is how long after a run starts an interrupt is a verdict
	// on it even when the agent has made no tool call yet.
	settleTime = 15 * time.Second
	// minReactionHorizon is the least time after a run's last activity
	// within which the user's next prompt is its reaction (window_minutes
	// widens it).
	minReactionHorizon = 30 * time.Minute
)

// runVoice is what detectRun needs of a session's user acts: what each
// says in its dialogue (the friction lens's reading: act index → its
// friction signals) and who owns an act when several skills are active.
type runVoice struct {
	hits map[int][]string
	own  func(r *skillRun, runs []*skillRun, i int) bool
}

// detectRun sets the signals, anchors, voice and reaction of a run's group
// from the acts in its scope (its own thread; for a main-thread run the
// user's prompts, interrupts and refusals), the user's reaction after it,
// and the tool calls of its thread in its scope. What an act says is the
// friction reading of it in its dialogue (a "no" that answers the agent's
// question is no correction); an act is the run's only when no other
// skill was active at it, or the user named this one, or the step they
// stopped is this skill's (see owners).
func detectRun(g *group, r *skillRun, runs []*skillRun, acts []act, calls []tcall, window time.Duration, rv runVoice) {
	g.Signals = map[string]int{}
	g.EventCount = activations(r.Events)
	g.SignalEnd = r.End
	if r.End.IsZero() {
		g.SignalEnd = lastActivity(r, acts, calls) // no later prompt: the run's last activity
	}
	var scope []tcall
	for _, c := range calls {
		if c.Thread == r.Thread && r.covers(c.Timestamp) {
			scope = append(scope, c)
		}
	}
	var heard []int
	for i, a := range acts {
		if a.Thread != r.Thread || !r.covers(a.At) {
			continue
		}
		if a.Kind == cortex.UserCommand && !a.At.After(r.Start) {
			continue // the command that started the run
		}
		heard = append(heard, i)
		g.Voice = append(g.Voice, a.LogID)
	}
	if r.Reaction >= 0 {
		re := acts[r.Reaction]
		if re.At.Sub(lastActivity(r, acts, calls)) <= max(window, minReactionHorizon) {
			heard = append(heard, r.Reaction)
			g.Reaction = re.LogID
			g.SignalEnd = maxTime(g.SignalEnd, re.At)
		}
	}
	frustrated := false
	var corrected []time.Time
	for _, i := range heard {
		a := acts[i]
		sig := rv.hits[i]
		if len(sig) == 0 || rv.own != nil && !rv.own(r, runs, i) {
			continue
		}
		if a.Kind == cortex.UserInterrupt && a.At.Sub(r.Start) < settleTime && !slices.ContainsFunc(scope, func(c tcall) bool {
			return c.Timestamp.Before(a.At) && !loadsSkill(c)
		}) {
			continue // stopped before the skill did anything: the user changed their mind
		}
		rd := a.Reading
		frustrated = true
		for _, s := range sig {
			switch s {
			case cortex.SignalInterrupt, cortex.SignalRejection, cortex.SignalStop:
				g.addAnchor(a.LogID, a.At, cortex.SignalUserStopped, "")
			case cortex.SignalCorrection, cortex.SignalRevert, cortex.SignalDissatisfied, cortex.SignalRepeatedRequest:
				// Wrong target and ignored instructions are signals of
				// their own; anything else the words say is a correction.
				if rd.Has(voice.Scope) {
					g.addAnchor(a.LogID, a.At, cortex.SignalScopeConfusion, "")
				}
				if rd.Has(voice.Reminder) {
					g.addAnchor(a.LogID, a.At, cortex.SignalIgnoredPolicy, "")
				}
				if s != cortex.SignalCorrection || !onlyScopeOrReminder(rd) {
					g.addAnchor(a.LogID, a.At, cortex.SignalUserCorrection, "")
				}
				corrected = append(corrected, a.At)
			}
		}
	}
	// The same failing operation again and again in the run's scope: the
	// skill's loop, whether or not the user said anything.
	for _, l := range retryLoops(scope) {
		if !innermost(r, runs, l.Calls[0].Timestamp) {
			continue
		}
		g.addAnchor(callLog(l.Calls[0]), l.Calls[0].Timestamp, cortex.SignalSkillRetryLoop, "")
		for _, c := range l.Calls[1:] {
			g.addAnchorRow(callLog(c), c.Timestamp, cortex.SignalSkillRetryLoop)
		}
	}
	for _, c := range scope {
		if c.failure() && !loadsSkill(c) && innermost(r, runs, c.Timestamp) && failureCounts(c, scope, corrected) {
			g.addAnchor(callLog(c), c.Timestamp, cortex.SignalToolFailure, "")
		}
	}
	if frustrated && len(scope) >= overlongToolCalls {
		g.Signals[cortex.SignalOverlongLoop] = 1
	}
	g.Calls = scope
	end := g.SignalEnd
	for _, o := range runs {
		if o != r && o.Thread == r.Thread && o.Start.Before(end) && (o.End.IsZero() || o.End.After(r.Start)) &&
			!slices.Contains(g.CoActive, o.Name) {
			g.CoActive = append(g.CoActive, o.Name)
		}
	}
	slices.Sort(g.CoActive)
}

// onlyScopeOrReminder reports whether a reading's verdict is only a wrong
// target or a repeated instruction (no other category but an acceptance).
func onlyScopeOrReminder(rd voice.Reading) bool {
	if !rd.Has(voice.Scope) && !rd.Has(voice.Reminder) {
		return false
	}
	for _, c := range rd.Categories {
		if c != voice.Scope && c != voice.Reminder && c != voice.Acceptance && c != voice.Abuse {
			return false
		}
	}
	return true
}

// callLog is the row that proves a call's outcome (its result, else the
// call).
func callLog(c tcall) int64 {
	switch {
	case c.ResultLogID != nil:
		return *c.ResultLogID
	case c.CallLogID != nil:
		return *c.CallLogID
	}
	return 0
}

// failureCounts decides whether a failed call of a run's scope is the
// run's failure: one the agent got past — the same operation succeeding
// later, or the work going on with calls that succeed (a slip it fixed at
// once: a call missing an argument, an edit before a read, a wrong path)
// — is not, unless the user corrected the agent after it. A failure that
// ended the run's work (nothing succeeded after it) is. Loops are counted
// apart (retryLoops).
func failureCounts(f tcall, scope []tcall, corrections []time.Time) bool {
	for _, t := range corrections {
		if t.After(f.Timestamp) {
			return true
		}
	}
	if f.Recovered {
		return false
	}
	after := 0
	for _, c := range scope {
		if c.Thread == f.Thread && c.Timestamp.After(f.Timestamp) && c.Class == classOK && !loadsSkill(c) {
			after++
		}
	}
	return after < workedOn
}

// workedOn is how many successful calls after a failure show the run's
// work went on past it.
const workedOn = 2

// activations counts a run's explicit loads (a Skill call, a typed
// command, an injected body, a Codex block, read or announcement; one body
// and the call that loaded it are one load), at least one.
func activations(evs []store.SessionSkill) int {
	explicit, bodies := 0, 0
	for _, e := range evs {
		switch e.Kind {
		case cortex.SkillClaudeTool, cortex.SkillClaudeCommand, cortex.SkillCodexBlock:
			explicit++
		case cortex.SkillClaudeBody, cortex.SkillClaudeSlash:
			bodies++
		}
	}
	switch {
	case explicit > 0:
		return explicit
	case bodies > 0:
		return bodies
	}
	return 1
}

// isIncident: a run without a negative signal is usage, listed only on
// request (or when asked for by id).
func (skillLens) isIncident(g *group, p *cortex.IncidentParams) bool {
	return len(g.present()) > 0 || p.IncludeUsage || p.IncidentID != ""
}

func (skillLens) score(g *group) float64 {
	failed := 0
	unrecovered := 0
	seen := map[int64]bool{}
	for _, c := range g.Calls {
		if !c.failure() || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		if g.Signals[cortex.SignalToolFailure] == 0 {
			continue
		}
		if c.Recovered {
			failed++
		} else {
			unrecovered++
		}
	}
	return skillScore(g.Signals, unrecovered, failed)
}

func (skillLens) label(score float64) string { return skillLabel(score) }

func (skillLens) subject(k groupKey, inc *cortex.Incident) {
	inc.SkillName, inc.SkillPlugin = k.Subject[0], k.Subject[1]
	inc.SubjectKind = SubjectSkill
	if k.Subject[2] == SubjectCommand {
		inc.SubjectKind = SubjectCommand
	}
}

// Bundle caps of the skill lens.
const (
	capSkillEvents  = 25
	maxSkillOutputs = 3
)

// extras adds the run's skill events (the first 25, chronological), the
// failed calls of its scope and the skill document it loaded.
func (skillLens) extras(ctx context.Context, db Store, g *group, b *cortex.Bundle) error {
	_, part, _ := strings.Cut(g.Key.Subject[0], ":")
	if part == "" {
		part = g.Key.Subject[0]
	}
	// Texts are read for the calls the bundle shows: the failures, and
	// the shell calls that may be the skill's own command.
	if err := withTexts(ctx, db, g.Calls, func(c tcall) bool {
		return c.failure() || c.Class == classOK && shellTool(c.ToolName) && c.ResultLogID != nil
	}); err != nil {
		return err
	}
	var failures []cortex.ToolFailure
	for _, c := range g.Calls {
		if c.failure() {
			failures = append(failures, toolFailure(c, DefaultMaxBytes))
		}
		if !loadsSkill(c) {
			b.RunCalls++
		}
	}
	b.Failures, b.FailuresTruncated = capRows(failures, capToolFailures, false)
	if sg, ok := g.lens.(*skillGroup); ok {
		doc, err := skillDoc(ctx, db, store.SessionScope{Tool: g.Key.Tool, Session: g.Key.Session, Host: g.Key.Host}, sg.run)
		if err != nil {
			return err
		}
		b.Skill = doc
		// The skill's own command (the marvin skill running `marvin work`)
		// prints instructions the agent follows: they are the skill's too.
		var ids []int64
		for _, c := range g.Calls {
			if c.Class != classOK || !shellTool(c.ToolName) || c.ResultLogID == nil || len(ids) == maxSkillOutputs {
				continue
			}
			if progs := programs(command(c.Arguments)); len(progs) > 0 && progs[0] == part {
				ids = append(ids, *c.ResultLogID)
			}
		}
		if b.SkillOutputs, err = db.RowsByID(ctx, ids); err != nil {
			return err
		}
	}
	ids := make([]int64, 0, min(len(g.Members), capSkillEvents))
	for _, m := range g.Members {
		if len(ids) == capSkillEvents {
			b.SkillEventsTruncated = true
			break
		}
		ids = append(ids, m.ID)
	}
	evs, err := db.SkillEventsByID(ctx, ids)
	if err != nil {
		return err
	}
	b.SkillEvents = evs
	if b.SkillEvents == nil {
		b.SkillEvents = []cortex.SkillEventRow{}
	}
	return nil
}

func (skillLens) subjectFirst(p *cortex.IncidentParams) bool { return p.Skill != "" || p.Plugin != "" }

func (skillLens) describe(p *cortex.IncidentParams) string {
	switch {
	case p.Skill != "":
		return fmt.Sprintf("skill %q", p.Skill)
	case p.Plugin != "":
		return fmt.Sprintf("plugin %q", p.Plugin)
	}
	return "the selection"
}

// usage summarizes the selected skills' events in the range.
func (skillLens) usage(ctx context.Context, db Store, p *cortex.IncidentParams) (usageReport, error) {
	usage, err := db.SkillSummaries(ctx, cortex.SkillEventParams{EventFilter: cortex.EventFilter{Tool: p.Tool,
		Project: p.Project, Session: p.Session, Host: p.Host, Since: p.Since, Until: p.Until, Limit: 20},
		Skill: p.Skill, Plugin: p.Plugin})
	if err != nil {
		return usageReport{}, err
	}
	u := usageReport{Noun: "skill events", Skills: usage.Events}
	for _, s := range usage.Events {
		u.Events, u.Sessions = u.Events+s.Events, u.Sessions+s.Sessions
	}
	return u, nil
}

func (l skillLens) suggest(ctx context.Context, db Store, p *cortex.IncidentParams) (string, []string) {
	var out []string
	if p.Skill != "" && p.Plugin != "" {
		out = append(out, "drop the plugin and filter by skill only")
	}
	if p.Skill != "" {
		if names, err := db.SkillNames(ctx); err == nil {
			for _, n := range nearestNames(p.Skill, names, 5) {
				out = append(out, fmt.Sprintf("did you mean skill %q?", n))
			}
		}
	}
	out = append(out, "list the skills that were used: cortex ai skills --summary")
	return fmt.Sprintf("no skill events match %s with these filters", l.describe(p)), out
}
