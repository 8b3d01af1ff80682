package incident

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/voice"
)

// frictionLens finds where the agent failed its user, in the user's own
// verdicts — interrupts, refused tool calls, "stop", corrections, undo
// requests, swearing, asking the same thing again — grouped per session
// and charged to whatever was active: a skill run, an MCP tool, a hook, or
// nothing. The subject lenses ask "what went wrong with X"; this one asks
// "where did the user push back", and then says what X was.
type frictionLens struct{}

func (frictionLens) Name() string   { return cortex.LensFriction }
func (frictionLens) prefix() string { return "friction-inc-" }

func (frictionLens) signals() []string {
	return []string{cortex.SignalInterrupt, cortex.SignalRejection, cortex.SignalStop, cortex.SignalCorrection,
		cortex.SignalRevert, cortex.SignalAbuseTerm, cortex.SignalRepeatedRequest, cortex.SignalDissatisfied,
		cortex.SignalRetryLoop}
}

// weakSignals are friction that is no verdict alone (none today: a
// complaint about the result and asking again for what was not done are
// verdicts). Two of them, or one beside a strong signal, make an incident.
var weakSignals = []string{cortex.SignalRepeatedRequest}

func (frictionLens) prepare(p *cortex.IncidentParams) error {
	if len(p.Terms) > 0 {
		return cortex.Errorf(cortex.CodeInvalid, "terms apply to the abuse lens only")
	}
	if p.IncludeUsage {
		return cortex.Errorf(cortex.CodeInvalid, "include_usage applies to the subject lenses (skill, mcp, hook) only")
	}
	return nil
}

func (frictionLens) candidates(ctx context.Context, db Store, p *cortex.IncidentParams, capRows int) ([]member, int, bool, error) {
	// Only acts that can be friction are candidates when the stored
	// readings are this binary's (else every act is: a store not yet
	// refreshed after an upgrade). A session's other acts are read with it.
	current, err := db.VoicesCurrent(ctx, voice.Version)
	if err != nil {
		return nil, 0, false, err
	}
	// Candidates from a while before the range: a session whose friction
	// in the range rests on acts that are no candidates themselves (words
	// only the agent's concession makes a correction) is read through the
	// candidates before them, so a range that cuts into a group keeps it.
	since := p.Since
	if !since.IsZero() {
		since = since.Add(-runLookback)
	}
	rows, err := db.UserActKeys(ctx, store.CandidateFilter{Tool: p.Tool, Project: p.Project, Session: p.Session,
		Host: p.Host, Since: since, Until: p.Until, Limit: capRows + 1}, current)
	if err != nil {
		return nil, 0, false, err
	}
	ms, n, truncated := toMembers(rows, capRows, func(a store.UserAct) member {
		return member{ID: a.ID, LogID: a.LogID, At: a.Timestamp, Kind: a.Kind,
			Key: groupKey{Tool: a.Tool, Host: a.Host, Project: a.Project, Session: a.Session}}
	})
	// A truncated scan reaches back to its oldest act: sessions found
	// below are taken from that far back too, so that the answer covers
	// one stretch of time (and a truncated scan costs what the cap allows).
	if truncated {
		cut := ms[0].At
		for _, m := range ms {
			if m.At.Before(cut) {
				cut = m.At
			}
		}
		if cut.After(since) {
			since = cut
		}
	}
	// Sessions where the agent may have looped on a failure, whatever the
	// user said: each a marker member (no event of its own).
	until := p.Until
	if !until.IsZero() {
		until = until.Add(runLookback) // a loop the range cuts still counts its failures after it
	}
	loops, err := db.FailedCallSessions(ctx, store.CandidateFilter{Tool: p.Tool, Project: p.Project, Session: p.Session,
		Host: p.Host, Since: since, Until: until, Limit: SessionCap + 1}, loopSame)
	if err != nil {
		return nil, 0, false, err
	}
	if len(loops) > SessionCap {
		loops, truncated = loops[:SessionCap], true
	}
	for _, s := range loops {
		ms = append(ms, member{Kind: loopCandidate, At: s.First, until: s.Last,
			Key: groupKey{Tool: s.Tool, Host: s.Host, Session: s.Session}})
	}
	// Sessions where the agent conceded: what the user said there is read
	// in its dialogue even when its words alone say nothing. With readings
	// of other rules every act is a candidate already.
	if current {
		claimed, err := db.ClaimsCurrent(ctx, claim.Version)
		if err != nil {
			return nil, 0, false, err
		}
		if claimed {
			conceded, err := db.ConcessionSessions(ctx, store.CandidateFilter{Tool: p.Tool, Project: p.Project, Session: p.Session,
				Host: p.Host, Since: since, Until: until, Limit: SessionCap + 1})
			if err != nil {
				return nil, 0, false, err
			}
			if len(conceded) > SessionCap {
				conceded, truncated = conceded[:SessionCap], true
			}
			for _, s := range conceded {
				ms = append(ms, member{Kind: sessionCandidate, Key: groupKey{Tool: s.Tool, Host: s.Host, Session: s.Session}})
			}
		}
	}
	return ms, n, truncated, nil
}

// loopCandidate marks a member that names a session with failed calls
// enough for a retry loop, sessionCandidate one that names a session where
// the agent conceded; loopMember is the kind of a loop's failed call as a
// member of a friction group.
const (
	loopCandidate    = "loop_candidate"
	sessionCandidate = "session_candidate"
	loopMember       = "retry_loop"
)

func (frictionLens) detect(context.Context, Store, *cortex.IncidentParams, []*group, time.Duration) error {
	return nil
}

// Friction thresholds.
const (
	// earlyInterrupt: an interrupt this soon after the user's own prompt,
	// with no tool call between, is the user changing their mind.
	earlyInterrupt = 10 * time.Second
	// reasonAfter: an instruction typed this soon after an interrupt or a
	// refusal is its reason ("do not commit anything").
	reasonAfter = 2 * time.Minute
)

// frictionAct is an act with the friction signals it carries.
type frictionAct struct {
	index   int
	signals []string
}

// frictionSignals reads every act of a session for friction, in context
// (see frictionSignalsOf), without the agent's words.
func frictionSignals(acts []act, calls []tcall) []frictionAct {
	return frictionSignalsOf(acts, calls, markReasks(acts), &dialogue{calls: calls})
}

// longMessage is how many words make a typed message more likely a new
// task than a reply: its conditional forms (a negation, a report) need
// the agent's concession to count. A shortReply is a message short enough
// to be only a reply to the agent's last turn.
const (
	longMessage = 80
	shortReply  = 20
)

// frictionSignalsOf reads every act of a session for friction, in its
// dialogue: the session's first prompt answers nothing (only swearing
// counts there); an interrupt right after the user's own prompt before any
// tool call is a change of mind, and a wordless one counts only when what
// it stopped was visibly failing or repeating or the user then says why;
// words after a stop are its reason; a negation answers the agent's work
// unless the agent had asked a question; a report that the result is
// broken counts after the agent said it was done; anything the agent then
// concedes was a correction. calls (nil: not read yet) are the session's
// tool calls in the turns read, d (nil: not read) the agent's words
// there. Without them the answer is a superset: every act that can be
// friction in some context (the candidates whose turns are then read).
func frictionSignalsOf(acts []act, calls []tcall, reasks map[int]bool, d *dialogue) []frictionAct {
	var out []frictionAct
	seenTyped := false
	known := calls != nil
	for i, a := range acts {
		var sig []string
		add := func(s string) {
			if !slices.Contains(sig, s) {
				sig = append(sig, s)
			}
		}
		r := a.Reading
		switch a.Kind {
		case cortex.UserInterrupt:
			if !known || !earlyStop(acts, i, calls) && stopCounts(acts, i, calls, d) {
				add(cortex.SignalInterrupt)
			}
		case cortex.UserRejection:
			add(cortex.SignalRejection)
			if r.Has(voice.Stop) {
				add(cortex.SignalStop)
			}
			if r.Has(voice.Correction) || r.Has(voice.Scope) || r.Has(voice.Reminder) || r.Has(voice.Instruction) {
				add(cortex.SignalCorrection)
			}
			if r.Has(voice.Revert) {
				add(cortex.SignalRevert)
			}
			if r.Has(voice.Abuse) {
				add(cortex.SignalAbuseTerm)
			}
		case cortex.UserPrompt, cortex.UserCommand:
			if !seenTyped && a.Thread == "" {
				// The session's first prompt answers nothing the agent did.
				seenTyped = true
				if r.Has(voice.Abuse) {
					add(cortex.SignalAbuseTerm)
				}
				break
			}
			if !seenTyped {
				break
			}
			for _, s := range typedSignals(acts, i, reasks[i], known, d) {
				add(s)
			}
		}
		if len(sig) > 0 {
			out = append(out, frictionAct{index: i, signals: sig})
		}
	}
	return out
}

// typedSignals reads a typed act (not the session's first) in its
// dialogue. Without the dialogue (known false) it returns every signal
// the act could carry in some context.
func typedSignals(acts []act, i int, reask, known bool, d *dialogue) []string {
	a := acts[i]
	r := a.Reading.Leading() // what a long message says past its lead is read only when the agent concedes
	var sig []string
	add := func(s string) {
		if !slices.Contains(sig, s) {
			sig = append(sig, s)
		}
	}
	if r.Has(voice.Abuse) {
		add(cortex.SignalAbuseTerm)
	}
	v := d.around(acts, i)
	if !known {
		// A candidate: words that say something, a re-ask, or words the
		// agent may concede (its calls, not read yet, can only narrow it).
		if r.Says() || reask || v.Admitted {
			add(cortex.SignalCorrection)
		}
		return sig
	}
	reason := followsStop(acts, i) && !afterChangeOfMind(acts, i, d)
	conceded := v.Admitted || v.Agreed
	// Words that answer the agent's question are an answer, unless they
	// say the agent got something wrong or the agent concedes it did.
	answer := v.Asked && !reason && !conceded
	conditional := r.Words <= longMessage || conceded
	if r.Has(voice.Correction) || r.Has(voice.Scope) || r.Has(voice.Reminder) {
		add(cortex.SignalCorrection)
	}
	// A complaint or an undo request is one whatever the agent asked.
	if r.Has(voice.Revert) {
		add(cortex.SignalRevert)
	}
	if r.Has(voice.Dissatisfied) {
		add(cortex.SignalDissatisfied)
	}
	if !answer {
		if r.Has(voice.Stop) {
			add(cortex.SignalStop)
		}
		switch {
		case conditional && r.Has(voice.Negation):
			add(cortex.SignalCorrection)
		case conditional && r.Has(voice.Report) && (v.Done || v.Worked || reason || v.Reverted || conceded):
			add(cortex.SignalCorrection)
		case conditional && r.Has(voice.Challenge) && (conceded || v.Reverted):
			add(cortex.SignalCorrection)
		case r.Has(voice.Instruction) && (reason || conceded):
			add(cortex.SignalCorrection)
		}
		if reask {
			add(cortex.SignalRepeatedRequest)
		}
	}
	if conditional && r.Has(voice.Contrast) {
		add(cortex.SignalCorrection) // "…, not the file": whatever the agent asked
	}
	if r.Has(voice.Removal) && r.Words <= shortReply && (v.Worked || v.Done) && !v.Asked {
		add(cortex.SignalCorrection) // "drop the em dashes" right after the agent wrote them
	}
	if answer && conditional && r.Has(voice.Report) && (v.Done || v.Worked) {
		// "Can you try it now?" — "it still shows the old page": a report
		// of the result answers the question with a failure.
		add(cortex.SignalCorrection)
	}
	if v.Admitted && (r.Says() || !voice.Asks(a.Text)) || v.Reverted && (r.Says() || reason) {
		// The agent concedes: the user corrected it, whatever the words —
		// but not a question the agent agrees with ("bump the versions
		// too?" — "You're right, …": a new step).
		if !r.Has(voice.Acceptance) || r.Says() {
			add(cortex.SignalCorrection)
		}
	}
	if reason && !onlyAcceptance(r) && !resentAfterStop(acts, i) {
		add(cortex.SignalCorrection) // the reason for a stop: "do a normal push"
	}
	return sig
}

// afterChangeOfMind reports whether the stop before acts[i] was an
// interrupt right after the user's own prompt (see earlyStop): the words
// after it are the prompt sent again, not a reason.
func afterChangeOfMind(acts []act, i int, d *dialogue) bool {
	if d == nil {
		return false
	}
	for j := i - 1; j >= 0; j-- {
		if acts[j].Kind == cortex.UserInterrupt {
			return earlyStop(acts, j, d.calls)
		}
		if acts[j].typed() || acts[j].Kind == cortex.UserRejection {
			return false
		}
	}
	return false
}

// onlyAcceptance reports whether a reading says nothing but go on ("ok",
// "continue"): words after a stop that do not redirect the agent.
func onlyAcceptance(r voice.Reading) bool { return r.Has(voice.Acceptance) && !r.Says() }

// resentAfterStop reports whether the typed act acts[i] sends again the
// prompt that the interrupt before it cut short (see resent).
func resentAfterStop(acts []act, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if acts[j].Kind == cortex.UserInterrupt {
			return resent(acts, j, i)
		}
		if acts[j].typed() {
			return false
		}
	}
	return false
}

// resent reports whether the typed act acts[j], after the interrupt
// acts[i], sends again the prompt the interrupt cut short (its words are
// mostly that prompt's): the user adding a detail, not correcting.
func resent(acts []act, i, j int) bool {
	for k := i - 1; k >= 0; k-- {
		p := acts[k]
		if p.Thread != acts[i].Thread || !p.typed() {
			continue
		}
		pw := words(normalized(p.Text))
		if len(pw) < 3 {
			return false
		}
		jw := words(normalized(acts[j].Text))
		shared := 0
		for _, w := range pw {
			if _, ok := slices.BinarySearch(jw, w); ok {
				shared++
			}
		}
		return 5*shared >= 4*len(pw)
	}
	return false
}

// stopCounts reports whether the interrupt acts[i] is friction: the user
// then said why (the words before the agent's next call say something, or
// the agent concedes), or what it stopped was visibly going wrong — the
// turn's last call failed, or one operation failed repeatedly in it. A
// wordless stop after work that went well, followed by a new task, is
// not.
func stopCounts(acts []act, i int, calls []tcall, d *dialogue) bool {
	for _, j := range reasonsAfter(acts, i, calls) {
		r := acts[j].Reading
		if resent(acts, i, j) {
			continue // the prompt sent again, with more in it: a detail added
		}
		if !onlyAcceptance(r) {
			return true // words after the stop: its reason, a redirection
		}
		if v := d.around(acts, j); v.Admitted || v.Agreed {
			return true
		}
	}
	a := acts[i]
	start := turnStart(acts, i)
	var turn []tcall
	for _, c := range calls {
		if c.Thread == a.Thread && c.Timestamp.After(start) && !c.Timestamp.After(a.At) {
			turn = append(turn, c)
		}
	}
	if len(turn) == 0 {
		return false
	}
	if last := turn[len(turn)-1]; last.failure() {
		return true
	}
	return len(retryLoops(turn)) > 0
}

// earlyStop reports whether the interrupt acts[i] came right after the
// user's own prompt, before the agent made any tool call.
func earlyStop(acts []act, i int, calls []tcall) bool {
	if calls == nil {
		return false // not known yet: a candidate
	}
	a := acts[i]
	for j := i - 1; j >= 0; j-- {
		p := acts[j]
		if p.Thread != a.Thread {
			continue
		}
		if !p.typed() {
			return false
		}
		if a.At.Sub(p.At) > earlyInterrupt {
			return false
		}
		for _, c := range calls {
			if c.Thread == a.Thread && c.Timestamp.After(p.At) && c.Timestamp.Before(a.At) && !loadsSkill(c) {
				return false
			}
		}
		return true
	}
	return false
}

// followsStop reports whether acts[i] comes right after an interrupt or a
// refusal that gave no reason of its own (no other typed act between):
// its words are the reason.
func followsStop(acts []act, i int) bool {
	for j := i - 1; j >= 0; j-- {
		p := acts[j]
		if acts[i].At.Sub(p.At) > reasonAfter {
			return false
		}
		if p.Kind == cortex.UserInterrupt || p.Kind == cortex.UserRejection && strings.TrimSpace(p.Text) == "" {
			return true
		}
		if p.Kind == cortex.UserRejection {
			return false
		}
		if p.typed() {
			return false
		}
	}
	return false
}

// frictionGroup is what the friction lens keeps of a group.
type frictionGroup struct {
	acts []act // the session's acts
	hits map[int64][]string
	// loops maps a loop's failed calls (event ids) to the loop they are
	// part of.
	loops map[int64]int
}

// unownedLoops are the retry loops of a session's calls that no skill run
// owns (a loop in a run's scope and thread is the skill's).
func unownedLoops(sv *sessionView, calls []tcall) []retryLoop {
	var out []retryLoop
	for _, l := range retryLoops(calls) {
		c := l.Calls[0]
		if !slices.ContainsFunc(sv.runs, func(r *skillRun) bool { return r.Thread == c.Thread && r.covers(c.Timestamp) }) {
			out = append(out, l)
		}
	}
	return out
}

// group reads every session the candidates touch, whole, finds its
// friction acts, groups them by gap, charges each group to what was active,
// and returns the groups that overlap the range.
func (l frictionLens) group(ctx context.Context, db Store, p *cortex.IncidentParams, ms []member, window time.Duration) ([]*group, error) {
	vr := newVoiceReader(db)
	var wantSkills map[string]bool
	if p.Skill != "" {
		names, err := skillNames(ctx, db, p.Skill)
		if err != nil {
			return nil, err
		}
		wantSkills = map[string]bool{}
		for _, n := range names {
			wantSkills[n] = true
		}
	}
	svs, err := vr.sessions(ctx, sessionScopes(ms))
	if err != nil {
		return nil, err
	}
	// A loop is made of failed calls and what ran between them: in a
	// session with failures enough for one, the calls from its first
	// failure in the range to its last are read.
	looping := map[store.SessionScope][2]time.Time{}
	for _, m := range ms {
		if m.Kind == loopCandidate {
			looping[store.SessionScope{Tool: m.Key.Tool, Session: m.Key.Session, Host: m.Key.Host}] = [2]time.Time{m.At, m.until}
		}
	}
	// Tool calls matter in the turns of possible friction acts (when and in
	// which thread they ran, which one the user refused) and in a loop's
	// span.
	type session struct {
		sv           *sessionView
		reasks       map[int]bool
		reads, nread int
		claims       []store.ClaimRow
	}
	// The agent's words about the dialogue (questions, concessions,
	// "done"), of every session with acts: small rows from an index.
	var withActs []*sessionView
	var whole []store.CallWindow
	for _, sv := range svs {
		if _, loop := looping[sv.scope]; len(sv.acts) > 0 || loop {
			withActs = append(withActs, sv)
			whole = append(whole, store.CallWindow{Scope: sv.scope})
		}
	}
	said, err := vr.claimsMany(ctx, whole)
	if err != nil {
		return nil, err
	}
	var sessions []session
	var reads []callRead
	for k, sv := range withActs {
		ss := session{sv: sv, reasks: markReasks(sv.acts), reads: len(reads), claims: said[k]}
		pre := frictionSignalsOf(sv.acts, nil, ss.reasks, &dialogue{claims: ss.claims})
		span, loop := looping[sv.scope]
		if len(pre) == 0 && !loop {
			continue
		}
		ws := turnWindows(sv.acts, pre, windowGap)
		if loop {
			ws = mergeWindows(append(ws, span))
		}
		for _, w := range ws {
			reads = append(reads, callRead{sv: sv, from: w[0], to: w[1]})
		}
		ss.nread = len(reads) - ss.reads
		sessions = append(sessions, ss)
	}
	got, err := vr.callsMany(ctx, reads)
	if err != nil {
		return nil, err
	}
	type charge struct {
		g     *group
		sv    *sessionView
		calls []tcall
	}
	var charges []charge
	var hookReads []store.CallWindow
	var out []*group
	for _, ss := range sessions {
		sv := ss.sv
		calls := []tcall{}
		for _, cs := range got[ss.reads : ss.reads+ss.nread] {
			calls = append(calls, cs...)
		}
		hits := frictionSignalsOf(sv.acts, calls, ss.reasks, &dialogue{claims: ss.claims, calls: calls})
		var loops []retryLoop
		if _, loop := looping[sv.scope]; loop {
			if err := loopTexts(ctx, db, calls); err != nil {
				return nil, err
			}
			loops = unownedLoops(sv, calls)
		}
		if len(hits) == 0 && len(loops) == 0 {
			continue
		}
		fg := &frictionGroup{acts: sv.acts, hits: map[int64][]string{}, loops: map[int64]int{}}
		var fm []member
		key := groupKey{Tool: sv.scope.Tool, Host: sv.scope.Host, Session: sv.scope.Session, Project: sessionProject(sv)}
		for _, h := range hits {
			a := sv.acts[h.index]
			fg.hits[a.ID] = h.signals
			fm = append(fm, member{ID: a.ID, LogID: a.LogID, At: a.At, Kind: a.Kind, Key: key})
		}
		for k, l := range loops {
			for _, c := range l.Calls {
				fg.loops[c.ID] = k
				fm = append(fm, member{ID: c.ID, LogID: callLog(c), At: c.Timestamp, Kind: loopMember, Key: key})
			}
		}
		slices.SortFunc(fm, func(a, b member) int { return a.At.Compare(b.At) })
		for _, g := range groupMembers(fm, window) {
			if !overlaps(g.First, g.Last, p.Since, p.Until) {
				continue
			}
			if p.Project != "" && g.Key.Project != p.Project {
				continue
			}
			g.lens = fg
			detectFriction(g, fg)
			charges = append(charges, charge{g: g, sv: sv, calls: calls})
			hookReads = append(hookReads, store.CallWindow{Scope: sv.scope, From: g.First.Add(-window), To: g.Last})
		}
	}
	// Each group is charged to what was active, hooks included (the
	// failed hook runs around every group read at once).
	hooks, err := db.SessionHookRunsMany(ctx, hookReads, 100)
	if err != nil {
		return nil, err
	}
	for i, c := range charges {
		g := c.g
		g.Attributed = attribute(g, c.sv, c.calls, hooks[i])
		if wantSkills != nil && !slices.ContainsFunc(g.Attributed, func(a cortex.Attribution) bool {
			return (a.Kind == SubjectSkill || a.Kind == SubjectCommand) && wantSkills[a.Name]
		}) {
			continue
		}
		out = append(out, g)
	}
	return out, nil
}

// detectFriction sets a group's signals, anchors and voice.
func detectFriction(g *group, fg *frictionGroup) {
	g.Signals = map[string]int{}
	g.EventCount = len(g.Members)
	g.SignalEnd = g.Last
	seenLoop := map[int]bool{}
	for _, m := range g.Members {
		if m.Kind == loopMember {
			k := fg.loops[m.ID]
			if !seenLoop[k] {
				seenLoop[k] = true
				g.addAnchor(m.LogID, m.At, cortex.SignalRetryLoop, "")
			} else {
				g.addAnchorRow(m.LogID, m.At, cortex.SignalRetryLoop)
			}
			continue
		}
		for _, s := range fg.hits[m.ID] {
			g.addAnchor(m.LogID, m.At, s, "")
		}
	}
	for _, a := range fg.acts {
		if within(a.At, g.First, g.Last) {
			g.Voice = append(g.Voice, a.LogID)
		}
	}
	for _, a := range fg.acts {
		if a.At.After(g.Last) && a.typed() && a.At.Sub(g.Last) <= reactionAfter {
			g.Reaction = a.LogID
			break
		}
	}
}

// attribute charges a friction group to what was active at each of its
// acts: the skill runs whose scope covers it (or whose reaction it is),
// the MCP tool the user refused or that ran last before the act in its
// turn, and a hook that failed or blocked in the turn before it.
func attribute(g *group, sv *sessionView, calls []tcall, hooks []store.HookRun) []cortex.Attribution {
	byKey := map[[2]string]*cortex.Attribution{}
	var order [][2]string
	charge := func(kind, name, why string) {
		k := [2]string{kind, name}
		a := byKey[k]
		if a == nil {
			a = &cortex.Attribution{Kind: kind, Name: name, Why: why}
			byKey[k] = a
			order = append(order, k)
		}
		a.Acts++
	}
	idx := map[int64]int{}
	for i, a := range sv.acts {
		idx[a.ID] = i
	}
	for _, m := range g.Members {
		if m.Kind == loopMember {
			for _, c := range calls {
				if c.ID == m.ID && c.MCPServer != "" {
					charge("mcp", c.MCPServer+"/"+c.MCPTool, "the tool the agent called again and again")
				}
			}
			continue
		}
		i, ok := idx[m.ID]
		if !ok {
			continue
		}
		a := sv.acts[i]
		turn := turnStart(sv.acts, i)
		for _, r := range sv.runs {
			switch {
			case r.Reaction == i:
				charge(r.Kind, r.Name, "the user's reaction right after the "+r.Kind+" ran")
			case r.covers(a.At) && (r.Thread == a.Thread || a.Thread == "" && !a.typed()):
				charge(r.Kind, r.Name, r.Kind+" active (in its scope)")
			}
		}
		var last *tcall
		for j := range calls {
			c := &calls[j]
			if a.CallID != "" && c.CallID == a.CallID {
				last = c
				break
			}
			if c.Thread == a.Thread && c.Timestamp.After(turn) && !c.Timestamp.After(a.At) {
				last = c
			}
		}
		if last != nil && last.MCPServer != "" {
			why := "the last tool call before the user's act"
			if a.CallID != "" && last.CallID == a.CallID {
				why = "the call the user refused"
			}
			charge("mcp", last.MCPServer+"/"+last.MCPTool, why)
		}
		for _, h := range hooks {
			failed := h.Status == cortex.HookFailed || h.Status == cortex.HookBlocked || h.Status == cortex.HookError ||
				h.Status == cortex.HookSuccess && h.ExitCode != nil && *h.ExitCode != 0
			if failed && h.Timestamp.After(turn) && !h.Timestamp.After(a.At) {
				name := h.Name
				if name == "" {
					name = h.Event
				}
				charge("hook", name, fmt.Sprintf("hook %s just before", h.Status))
			}
		}
	}
	out := make([]cortex.Attribution, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}

// windowGap joins the turns of friction acts less than this apart into
// one read of the session's calls.
const windowGap = 30 * time.Minute

// turnWindows are the turns of the friction acts — from the user's
// previous typed act to the act, and the agent's reply after it (to the
// user's next typed act, at most replyWindow) — merged where they overlap
// or are less than gap apart, in time order.
func turnWindows(acts []act, fa []frictionAct, gap time.Duration) [][2]time.Time {
	var out [][2]time.Time
	for _, f := range fa { // in act order
		end := acts[f.index].At.Add(replyWindow)
		for j := f.index + 1; j < len(acts); j++ {
			if acts[j].typed() {
				end = minTime(end, acts[j].At)
				break
			}
		}
		w := [2]time.Time{turnStart(acts, f.index), end}
		if n := len(out); n > 0 && w[0].Sub(out[n-1][1]) < gap {
			out[n-1][1] = maxTime(out[n-1][1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

// mergeWindows sorts time windows and merges those that overlap or touch
// (a zero start is open: before everything), so that no call is read
// twice.
func mergeWindows(ws [][2]time.Time) [][2]time.Time {
	slices.SortFunc(ws, func(a, b [2]time.Time) int { return a[0].Compare(b[0]) })
	var out [][2]time.Time
	for _, w := range ws {
		if n := len(out); n > 0 && !w[0].After(out[n-1][1]) {
			out[n-1][1] = maxTime(out[n-1][1], w[1])
			continue
		}
		out = append(out, w)
	}
	return out
}

// turnStart is when the turn of acts[i] began: the user's previous typed
// act (or the zero time).
func turnStart(acts []act, i int) time.Time {
	for j := i - 1; j >= 0; j-- {
		if acts[j].typed() {
			return acts[j].At
		}
	}
	return time.Time{}
}

// isIncident: a verdict (anything but a weak signal), or two weak acts.
func (frictionLens) isIncident(g *group, p *cortex.IncidentParams) bool {
	weak := 0
	for s, n := range g.Signals {
		if n == 0 {
			continue
		}
		if !slices.Contains(weakSignals, s) {
			return true
		}
		weak += n
	}
	return weak >= 2 || p.IncidentID != "" && weak > 0
}

// Score weights of the friction lens: the cost to the user.
const (
	weightFrictionStop       = 20 // interrupt, refusal, "stop", per act, at most 3 each
	weightFrictionRevert     = 20
	weightFrictionCorrection = 15
	weightFrictionReason     = 5 // a refusal that says why
	weightFrictionReask      = 10
	weightFrictionWeak       = 5
	weightFrictionAbuse      = 5 // × the strongest intensity
	weightFrictionLoop       = 15
)

func (frictionLens) score(g *group) float64 {
	s := g.Signals
	fg, _ := g.lens.(*frictionGroup)
	intensity, reasons := 0, 0
	if fg != nil {
		for _, a := range fg.acts {
			if _, hit := fg.hits[a.ID]; !hit || !within(a.At, g.First, g.Last) {
				continue
			}
			intensity = max(intensity, a.Reading.Intensity)
			if a.Kind == cortex.UserRejection && a.Text != "" {
				reasons++
			}
		}
	}
	variety := len(g.present())
	return float64(min(s[cortex.SignalRetryLoop], capVoice)*weightFrictionLoop +
		(min(s[cortex.SignalInterrupt], capVoice)+min(s[cortex.SignalRejection], capVoice)+
			min(s[cortex.SignalStop], capVoice))*weightFrictionStop + min(s[cortex.SignalRevert], capVoice)*weightFrictionRevert +
		min(s[cortex.SignalCorrection], capVoice)*weightFrictionCorrection + min(reasons, capVoice)*weightFrictionReason +
		min(s[cortex.SignalRepeatedRequest], capVoice)*weightFrictionReask +
		min(s[cortex.SignalDissatisfied], capVoice)*weightFrictionWeak + intensity*weightFrictionAbuse + variety*weightVariety)
}

func (frictionLens) label(score float64) string { return skillLabel(score) }

func (frictionLens) subject(groupKey, *cortex.Incident) {}

func (frictionLens) extras(context.Context, Store, *group, *cortex.Bundle) error { return nil }

func (frictionLens) subjectFirst(*cortex.IncidentParams) bool { return false }

func (frictionLens) describe(p *cortex.IncidentParams) string {
	if p.Skill != "" {
		return fmt.Sprintf("friction charged to skill %q", p.Skill)
	}
	return "the selection"
}

func (frictionLens) usage(context.Context, Store, *cortex.IncidentParams) (usageReport, error) {
	return usageReport{}, nil
}

func (frictionLens) suggest(_ context.Context, _ Store, p *cortex.IncidentParams) (string, []string) {
	var out []string
	if p.Skill != "" {
		out = append(out, "drop the skill filter: friction charged to nothing else is listed without it")
	}
	return "no interrupts, refusals, corrections or undo requests from the user with these filters",
		append(out, "check that user events exist: cortex ai backfill --kinds users")
}

// attributionText renders attributions for a one-line listing.
func attributionText(as []cortex.Attribution) string {
	if len(as) == 0 {
		return "—"
	}
	parts := make([]string, 0, len(as))
	for _, a := range as {
		parts = append(parts, a.Kind+" "+a.Name)
	}
	return strings.Join(parts, ", ")
}
