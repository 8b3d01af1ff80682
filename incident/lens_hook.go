package incident

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/findings"
	"github.com/cortexhq/cortex/phrase"
	"github.com/cortexhq/cortex/store"
)

// hookLens finds hooks that went wrong: hook runs that failed, timed out,
// printed output the agent could not parse, fired far more often than
// their trigger, blocked the agent repeatedly or were followed by a user
// correction; and configured hooks that did not run where they were
// expected.
//
// Evidence basis. A hook run written into a transcript (evidence kind
// runtime_transcript, Claude Code only) proves the hook executed. A hook
// found in a configuration file (config_inventory) or a Codex trust hash
// (trusted_hash_state) only says it was configured: the lens never treats
// it as a run. Configuration rows have no session; they are never members
// of runtime groups. They appear (a) as the expectation behind a
// hook_not_invoked incident and (b) as their own configuration-only groups
// when the selection has no runtime evidence at all (listed as usage only).
// Every incident states its basis in Incident.EvidenceBasis.
//
// Groups. The key is (hook event, hook name, hook source, agent, project,
// session, host) plus the engine's gap window. Runtime rows carry no
// source, so a runtime group's source is empty; configuration-based groups
// carry the configuration source ("claude:user:settings.json"), which is
// how the basis is told apart (see hookBasis).
type hookLens struct{}

// The hook lens says what a typed hook resolved to (Investigation.Matched).
var _ matcher = hookLens{}

// Member kinds of the hook lens (besides the runtime record kinds, see
// hookKind).
const (
	kindNotInvoked = "not_invoked"
	// hookKindProgress is a hook_progress start record (Claude Code
	// 2.1.7–2.1.50): the run started, its outcome is not recorded.
	hookKindProgress = "hook_progress"
	// hookKindStopSummary is one hook of a stop_hook_summary record.
	hookKindStopSummary = "stop_hook_summary"
	hookKindRuntime     = "runtime"
)

// hookOutputKinds are runtime records that carry a run's output (context
// or a message the hook injected, an async hook's late response), not a
// run of their own.
var hookOutputKinds = map[string]bool{
	"hook_additional_context": true, "hook_system_message": true, "async_hook_response": true,
}

// eventTrustState is the hook event of Codex [hooks.state] trust rows
// (hookconfig.EventTrustState).
const eventTrustState = "hook_trust_state"

// Bounds of the hook lens.
const (
	// maxHookConfigRows bounds the configuration rows read per listing.
	maxHookConfigRows = 1_000
	// maxHookRunSpans bounds the (session, name) spans read per
	// configured hook for hook_not_invoked.
	maxHookRunSpans = 10_000
	// maxExpectedSessions bounds the sessions checked per configured hook
	// for hook_not_invoked, and maxNotInvokedChecks the sessions checked
	// per listing (over all configured hooks); hitting it sets
	// candidate_window_truncated.
	maxExpectedSessions = 500
	maxNotInvokedChecks = 2_000
	// maxNotInvokedAnchors bounds the triggering rows anchored per
	// hook_not_invoked group.
	maxNotInvokedAnchors = 5
	// maxHookNameLen bounds a typed hook name, event or source.
	maxHookNameLen = 512
	// capHookEvents, capHookNearbyCalls and capHookNearbyMCP bound the
	// lens's bundle collections.
	capHookEvents      = 25
	capHookNearbyCalls = 25
	capHookNearbyMCP   = 25
)

// Detector thresholds of the hook lens.
const (
	// tooOftenMinRuns: fewer runs in a group are never "too often".
	tooOftenMinRuns = 10
	// tooOftenPerTrigger: runs per trigger (per configured command) above
	// which a hook fires too often. A PostToolUse hook runs once per
	// matching tool call, a Stop or UserPromptSubmit hook once per prompt
	// (give or take resumed turns), a SessionStart hook once per start.
	tooOftenPerTrigger = 3
	// tooOftenUnknownTrigger: runs per command in one group that are too
	// often when the trigger cannot be counted (other events).
	tooOftenUnknownTrigger = 30
	// repeatedBlocks: blocks in one group that hold up the agent's flow.
	repeatedBlocks = 2
	// tooOftenCallSlack: tool calls up to this long after the group's last
	// run still count as its triggers (the run is written after the call).
	tooOftenCallSlack = time.Minute
)

// Phrase lists of the hook detectors. They read hook output (stderr, and
// stdout of runs that did not succeed); corrections read what users typed.
var (
	// hookMentions: a correction naming a hook is about the hook even when
	// the hook injected nothing.
	hookMentions = phrase.NewSet("hook", "hooks", "the hook", "that hook", "this hook")
)

func (hookLens) Name() string   { return cortex.LensHook }
func (hookLens) prefix() string { return "hook-inc-" }

func (hookLens) signals() []string {
	return []string{cortex.SignalHookFailed, cortex.SignalHookTimedOut, cortex.SignalHookOutputParse,
		cortex.SignalHookTooOften, cortex.SignalCorrectionAfterHook, cortex.SignalHookBlockedFlow, cortex.SignalHookNotInvoked}
}

// prepare validates the hook subject: other lenses' filters are rejected,
// names are trimmed and bounded, the evidence kind must be known. Names are
// resolved against the store later (see hookLens.filter).
func (hookLens) prepare(p *cortex.IncidentParams) error {
	switch {
	case len(p.Terms) > 0:
		return cortex.Errorf(cortex.CodeInvalid, "terms apply to the abuse lens only")
	case p.Skill != "" || p.Plugin != "":
		return cortex.Errorf(cortex.CodeInvalid, "skill and plugin apply to the skill lens only")
	case p.MCPServer != "" || p.MCPTool != "" || p.ToolName != "" || p.Target != "":
		return cortex.Errorf(cortex.CodeInvalid, "mcp_server, mcp_tool, tool_name and target apply to the mcp lens only (use hook)")
	}
	switch p.EvidenceKind {
	case "", cortex.EvidenceRuntime, cortex.EvidenceConfig, cortex.EvidenceTrust:
	default:
		return cortex.Errorf(cortex.CodeInvalid, "unknown evidence kind %q (use runtime_transcript, config_inventory or trusted_hash_state)", p.EvidenceKind)
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"hook", &p.Hook}, {"hook_event", &p.HookEvent}, {"hook_source", &p.HookSource}} {
		*f.v = strings.TrimSpace(*f.v)
		if len(*f.v) > maxHookNameLen {
			return cortex.Errorf(cortex.CodeInvalid, "%s is longer than %d bytes", f.name, maxHookNameLen)
		}
		if strings.IndexFunc(*f.v, unicode.IsControl) >= 0 {
			return cortex.Errorf(cortex.CodeInvalid, "%s %q holds control characters", f.name, *f.v)
		}
	}
	if p.Hook != "" && strings.Trim(p.Hook, ":/ ") == "" {
		return cortex.Errorf(cortex.CodeInvalid, "hook %q names no hook (use PostToolUse, post_tool_use or PostToolUse:Bash)", p.Hook)
	}
	return nil
}

// canonHook folds a hook name as users type it: lower case, without '_',
// '-', '.' and spaces (post_tool_use, PostToolUse and posttooluse agree).
func canonHook(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// splitHookName splits "Event:matcher" (or "Event/matcher") at its first
// separator.
func splitHookName(s string) (event, rest string, ok bool) {
	i := strings.IndexAny(s, ":/")
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

// hookMatch is a typed hook resolved against the stored names: the stored
// events and names it selects (nil: no filter; empty: nothing).
type hookMatch struct {
	events []string
	names  []string
}

// resolveHook resolves a hook as typed against the stored (event, name)
// pairs, case- and separator-insensitively: "Event:matcher" selects the
// stored names with that event and matcher; a plain word selects the
// stored events it names (every name of the event), else the stored names
// it equals, else the names whose matcher it equals ("bash" selects
// PreToolUse:Bash and PostToolUse:Bash). Nothing matching yields an empty
// (non-nil) selection.
func resolveHook(typed string, stored []store.HookName) hookMatch {
	ev, rest, hasRest := splitHookName(typed)
	cev, crest, ctyped := canonHook(ev), canonHook(rest), canonHook(typed)
	var events, names []string
	add := func(list []string, s string) []string {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
		return list
	}
	if hasRest {
		for _, n := range stored {
			e, m, ok := splitHookName(n.Name)
			if ok && canonHook(e) == cev && canonHook(m) == crest {
				names = add(names, n.Name)
			}
		}
		return hookMatch{names: nonNil(names)}
	}
	for _, n := range stored {
		if canonHook(n.Event) == ctyped {
			events = add(events, n.Event)
		}
	}
	if len(events) > 0 {
		slices.Sort(events)
		return hookMatch{events: events}
	}
	for _, n := range stored {
		if n.Name != "" && canonHook(n.Name) == ctyped {
			names = add(names, n.Name)
		}
	}
	if len(names) == 0 {
		for _, n := range stored {
			if _, m, ok := splitHookName(n.Name); ok && m != "" && canonHook(m) == ctyped {
				names = add(names, n.Name)
			}
		}
	}
	slices.Sort(names)
	return hookMatch{names: nonNil(names)}
}

// resolveEvent resolves a typed hook event (case- and
// separator-insensitively) to the stored events it names.
func resolveEvent(typed string, stored []store.HookName) []string {
	out := []string{}
	for _, n := range stored {
		if canonHook(n.Event) == canonHook(typed) && !slices.Contains(out, n.Event) {
			out = append(out, n.Event)
		}
	}
	slices.Sort(out)
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// intersect keeps the values of a also in b; a nil side does not filter.
func intersect(a, b []string) []string {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := []string{}
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// filter resolves the hook subject of p against the stored names and
// returns the store filter. When a typed name resolves to exactly one
// stored event or name, p.Hook (and p.HookEvent) are rewritten to it: the
// answer then says what matched (describe), and resolving again is a
// no-op.
func (hookLens) filter(ctx context.Context, db Store, p *cortex.IncidentParams) (store.HookFilter, error) {
	f := store.HookFilter{CandidateFilter: store.CandidateFilter{Tool: p.Tool, Project: p.Project, Session: p.Session,
		Host: p.Host, Since: p.Since, Until: p.Until}, Source: p.HookSource, EvidenceKind: p.EvidenceKind}
	if p.Hook == "" && p.HookEvent == "" {
		return f, nil
	}
	stored, err := db.HookNames(ctx)
	if err != nil {
		return f, err
	}
	if p.Hook != "" {
		m := resolveHook(p.Hook, stored)
		f.Events, f.Names = m.events, m.names
		switch {
		case len(m.events) == 1:
			p.Hook = m.events[0]
		case len(m.names) == 1:
			p.Hook = m.names[0]
		}
	}
	if p.HookEvent != "" {
		evs := resolveEvent(p.HookEvent, stored)
		f.Events = intersect(f.Events, evs)
		if len(evs) == 1 {
			p.HookEvent = evs[0]
		}
	}
	return f, nil
}

// hookKind classifies a runtime record: its attachment type
// (hook_success, hook_non_blocking_error, …), a hook_progress start, one
// hook of a stop_hook_summary, or plain runtime.
func hookKind(meta map[string]string) string {
	switch {
	case meta["attachment_type"] != "":
		return meta["attachment_type"]
	case meta["phase"] == "started":
		return hookKindProgress
	case meta["hook_count"] != "":
		return hookKindStopSummary
	}
	return hookKindRuntime
}

func (l hookLens) candidates(ctx context.Context, db Store, p *cortex.IncidentParams, capRows int) ([]member, int, bool, error) {
	f, err := l.filter(ctx, db, p)
	if err != nil {
		return nil, 0, false, err
	}
	var ms []member
	scanned, truncated := 0, false
	if p.EvidenceKind == "" || p.EvidenceKind == cortex.EvidenceRuntime {
		f.Limit = capRows + 1
		cs, err := db.HookCandidates(ctx, f)
		if err != nil {
			return nil, 0, false, err
		}
		ms, scanned, truncated = toMembers(cs, capRows, func(c store.HookCandidate) member {
			m := member{ID: c.ID, LogID: c.LogID, At: c.Timestamp, Kind: hookKind(c.Meta), Key: groupKey{
				Tool: c.Tool, Host: c.Host, Project: c.Project, Session: c.Session, Subject: [3]string{c.Event, c.Name, c.Source}}}
			if !c.HasOutput { // the candidate is all the detectors read of it
				m.hook = &cortex.HookEventRow{ID: c.ID, HookEvent: c.Event, HookName: c.Name, HookSource: c.Source,
					HookCommand: c.Command, Status: c.Status, ExitCode: c.ExitCode, DurationMS: c.DurationMS,
					EvidenceKind: c.EvidenceKind, Metadata: c.Meta}
			}
			return m
		})
	}
	if p.EvidenceKind == cortex.EvidenceRuntime {
		return ms, scanned, truncated, nil
	}
	f.Limit = maxHookConfigRows + 1
	cfg, err := db.HookConfigRows(ctx, f)
	if err != nil {
		return nil, 0, false, err
	}
	if len(cfg) > maxHookConfigRows {
		cfg, truncated = cfg[:maxHookConfigRows], true
	}
	scanned += len(cfg)
	// Configuration-only groups: only when the selection has no runtime
	// evidence at all (they would otherwise pose as the latest use), and
	// never within one session (configuration has none).
	if len(ms) == 0 && p.Session == "" {
		for _, c := range cfg {
			ms = append(ms, member{ID: c.ID, At: c.Timestamp, Kind: c.EvidenceKind, Key: groupKey{
				Tool: c.Tool, Host: c.Host, Project: c.Project, Subject: [3]string{c.Event, c.Name, c.Source}}})
		}
	}
	if p.EvidenceKind == "" || p.EvidenceKind == cortex.EvidenceConfig {
		ni, cut, err := notInvokedMembers(ctx, db, p, cfg, capRows)
		if err != nil {
			return nil, 0, false, err
		}
		ms, truncated = append(ms, ni...), truncated || cut
	}
	return ms, scanned, truncated, nil
}

// notInvokedEvents are the hook events whose trigger a transcript shows
// (tool calls, prompts, the session's start): hook_not_invoked is only
// checked for them.
var notInvokedEvents = map[string]bool{
	"PreToolUse": true, "PostToolUse": true, "UserPromptSubmit": true, "Stop": true, "SessionStart": true,
}

// matcherEvents are the hook events whose matcher selects the trigger (a
// tool name, a session-start source); other events ignore matchers.
var matcherEvents = map[string]bool{
	"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true, "PermissionRequest": true,
	"SessionStart": true, "SessionEnd": true, "PreCompact": true, "Notification": true, "SubagentStart": true,
}

// hookMatcher compiles a configured matcher as the agents read it: empty
// or "*" matches everything, anything else is a regular expression over
// the whole tool name (or source). ok is false for an invalid expression.
func hookMatcher(m string) (*regexp.Regexp, bool) {
	if m == "" || m == "*" {
		return nil, true
	}
	re, err := regexp.Compile("^(?:" + m + ")$")
	return re, err == nil
}

// configMatcher is the matcher of a configuration row: its metadata, else
// the part of its name after "<Event>:".
func configMatcher(c store.HookCandidate) string {
	if m, ok := c.Meta["matcher"]; ok {
		return m
	}
	return strings.TrimPrefix(strings.TrimPrefix(c.Name, c.Event), ":")
}

// nameMatches reports whether a runtime hook name ("PostToolUse:Bash",
// "Stop") is a run of event under matcher re.
func nameMatches(name, event string, re *regexp.Regexp) bool {
	suffix := ""
	switch {
	case name == event:
	case strings.HasPrefix(name, event+":"):
		suffix = name[len(event)+1:]
	default:
		return false
	}
	if re == nil || !matcherEvents[event] {
		return true
	}
	return re.MatchString(suffix)
}

// notInvokedMembers finds configured hooks that were expected to run in a
// session and did not. Conservative on purpose: a configured hook (Claude
// config_inventory, enabled, with a command, for an event whose trigger the
// transcript shows) is expected in session S only when the same command
// ran (runtime_transcript) for the same agent and host — in the same
// project for a project-level configuration — in other sessions both
// before S started and after S ended, S's transcript records such hook
// runs at all (recordsHookRuns), S saw the trigger (a matching tool call,
// a prompt, its start), and S has no run of that event matching the
// matcher at all. Agents whose transcripts record no hook runs (Codex,
// Gemini) never meet the first condition, so their configuration is never
// turned into a claim either way. Each result is one member per
// (configured hook, session), anchored on the first trigger. cut is set
// when a bound stopped the search (capRows members, maxNotInvokedChecks
// sessions checked).
func notInvokedMembers(ctx context.Context, db Store, p *cortex.IncidentParams, cfg []store.HookCandidate, capRows int) (out []member, cut bool, err error) {
	checks := 0
	for _, c := range cfg {
		if c.EvidenceKind != cortex.EvidenceConfig || !notInvokedEvents[c.Event] || c.Command == "" ||
			c.Meta["enabled"] == "false" || (p.Project != "" && c.Project != "" && c.Project != p.Project) {
			continue
		}
		re, ok := hookMatcher(configMatcher(c))
		if !ok {
			continue
		}
		spans, err := db.HookCommandRuns(ctx, c.Tool, c.Host, c.Event, c.Command, maxHookRunSpans)
		if err != nil {
			return nil, false, err
		}
		ran := map[string]bool{}
		var first, last time.Time
		for _, sp := range spans {
			if sp.Session == "" || !nameMatches(sp.Name, c.Event, re) || (c.Project != "" && sp.Project != c.Project) {
				continue
			}
			ran[sp.Session] = true
			if first.IsZero() || sp.First.Before(first) {
				first = sp.First
			}
			if sp.Last.After(last) {
				last = sp.Last
			}
		}
		if len(ran) < 2 {
			continue
		}
		project := c.Project
		if project == "" {
			project = p.Project
		}
		sessions, err := db.SessionsBetween(ctx, store.SessionFilter{Tool: c.Tool, Host: c.Host, Project: project,
			Session: p.Session, After: first, Before: last, Since: p.Since, Until: p.Until, Limit: maxExpectedSessions})
		if err != nil {
			return nil, false, err
		}
		for _, sess := range sessions {
			if ran[sess.Session] {
				continue
			}
			if checks++; checks > maxNotInvokedChecks {
				return out, true, nil
			}
			s := store.SessionScope{Tool: c.Tool, Session: sess.Session, Host: c.Host}
			recs, err := db.SessionHookRecords(ctx, s)
			if err != nil {
				return nil, false, err
			}
			if !recordsHookRuns(recs, c.Event) || slices.ContainsFunc(recs, func(r store.HookRecord) bool {
				return r.Event == c.Event && nameMatches(r.Name, c.Event, re)
			}) {
				continue
			}
			trig, err := hookTriggers(ctx, db, s, c.Event, re, sess.First, sess.Last, 1)
			if err != nil {
				return nil, false, err
			}
			if len(trig) == 0 {
				continue
			}
			out = append(out, member{ID: c.ID, LogID: trig[0].ID, At: trig[0].At, Kind: kindNotInvoked, Key: groupKey{
				Tool: c.Tool, Host: c.Host, Project: sess.Project, Session: sess.Session, Subject: [3]string{c.Event, c.Name, c.Source}}})
			if len(out) >= capRows {
				return out, true, nil
			}
		}
	}
	return out, false, nil
}

// recordsHookRuns reports whether a session's transcript records runs of
// event at all, judged by the hook records it holds: Claude Code wrote Stop
// hooks in stop_hook_summary records (2.0.76 on), other hooks only in
// hook_progress records (2.1.7–2.1.50) and hook_* attachments (2.1.101 on).
// A session of a version that records none tells nothing about a missing
// run.
func recordsHookRuns(recs []store.HookRecord, event string) bool {
	for _, r := range recs {
		if event == "Stop" || r.Kind != hookKindStopSummary {
			return true
		}
	}
	return false
}

// hookTriggers returns up to limit rows of a session in [from, to] that
// trigger a hook event under matcher re: matching tool calls (PreToolUse,
// PostToolUse), user prompts (UserPromptSubmit, Stop), the session's first
// row (SessionStart, when the matcher admits "startup").
func hookTriggers(ctx context.Context, db Store, s store.SessionScope, event string, re *regexp.Regexp, from, to time.Time, limit int) ([]textRow, error) {
	var out []textRow
	switch event {
	case "PreToolUse", "PostToolUse":
		calls, err := db.SessionCallNames(ctx, s, from, to, sessionToolCallsCap)
		if err != nil {
			return nil, err
		}
		for _, c := range calls {
			if re != nil && !re.MatchString(c.ToolName) {
				continue
			}
			if tc := toCall(c); tc.LogID != 0 {
				out = append(out, textRow{ID: tc.LogID, At: tc.At, Text: c.ToolName})
			}
			if len(out) == limit {
				break
			}
		}
	case "UserPromptSubmit", "Stop":
		rows, err := db.SessionUserRows(ctx, s, from, to, limit)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			at, _ := cortex.ParseTimestamp(r.Timestamp)
			out = append(out, textRow{ID: r.ID, At: at, Text: r.Message})
		}
	case "SessionStart":
		if re != nil && !re.MatchString("startup") {
			return nil, nil
		}
		rows, err := db.SessionRowsAfter(ctx, s, from, 0, 1)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			at, _ := cortex.ParseTimestamp(r.Timestamp)
			out = append(out, textRow{ID: r.ID, At: at, Text: r.Message})
		}
	}
	return out, nil
}

// hookInput is what the hook detectors read for one group: its runtime
// rows by member id, the session's user rows and (when the trigger is a
// tool call) its tool calls, chronological, over a span covering the
// group's window.
type hookInput struct {
	rows       map[int64]cortex.HookEventRow
	users      []textRow
	interrupts []time.Time
	calls      []call
	callsKnown bool
}

// isNotInvoked reports whether g is a hook_not_invoked group.
func isNotInvoked(g *group) bool {
	return len(g.Members) > 0 && g.Members[0].Kind == kindNotInvoked
}

// toolHookEvents are the hook events triggered by tool calls.
var toolHookEvents = map[string]bool{
	"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true, "PermissionRequest": true,
}

// detect reads each session once — the runtime rows of its groups, its
// user rows, and its tool calls when a group needs them (a tool hook that
// ran often enough to be "too often", a hook_not_invoked group) — then
// runs the detectors per group. Configuration-only groups carry no signal.
func (hookLens) detect(ctx context.Context, db Store, _ *cortex.IncidentParams, groups []*group, window time.Duration) error {
	return eachSession(ctx, groups, func(ctx context.Context, sg []*group) error {
		k := sg[0].Key
		if k.Session == "" {
			for _, g := range sg {
				g.EventCount, g.SignalEnd, g.Signals = len(g.Members), g.Last, map[string]int{}
			}
			return nil
		}
		s := store.SessionScope{Tool: k.Tool, Session: k.Session, Host: k.Host}
		from, to := sg[0].First.Add(-window), sg[0].Last.Add(window)
		// Runs that printed nothing are known from their candidates; the
		// others are read whole (their output is what the detectors read).
		var ids []int64
		byID := map[int64]cortex.HookEventRow{}
		for _, g := range sg {
			from, to = minTime(from, g.First.Add(-window)), maxTime(to, g.Last.Add(window))
			if !isNotInvoked(g) {
				for _, m := range g.Members {
					if m.hook != nil {
						byID[m.ID] = *m.hook
					} else {
						ids = append(ids, m.ID)
					}
				}
			}
		}
		rows, err := db.HookEventsByID(ctx, ids)
		if err != nil {
			return err
		}
		for _, r := range rows {
			byID[r.ID] = r
		}
		users, interrupts, err := userTexts(ctx, db, s, from, to)
		if err != nil {
			return err
		}
		var calls []call
		callsKnown := false
		loadCalls := func() error {
			if callsKnown {
				return nil
			}
			cs, err := db.SessionCallNames(ctx, s, from, to, sessionToolCallsCap)
			if err != nil {
				return err
			}
			for _, c := range cs {
				calls = append(calls, toCall(c))
			}
			callsKnown = true
			return nil
		}
		for _, g := range sg {
			if isNotInvoked(g) {
				if err := loadCalls(); err != nil {
					return err
				}
				detectNotInvoked(g, calls, users, window)
				continue
			}
			in := hookInput{rows: byID, users: users, interrupts: interrupts}
			if toolHookEvents[g.Key.Subject[0]] && len(g.Members) >= tooOftenMinRuns {
				if err := loadCalls(); err != nil {
					return err
				}
				in.calls, in.callsKnown = calls, true
			}
			detectHook(g, in, window)
		}
		return nil
	})
}

// detectNotInvoked anchors a hook_not_invoked group on its triggers in the
// window after the first one (at most maxNotInvokedAnchors): matching tool
// calls, or prompts, or the member's own trigger row. The signal counts
// once per group: it rests on configuration, never on a run.
func detectNotInvoked(g *group, calls []call, users []textRow, window time.Duration) {
	from, to := signalWindow(g, window)
	g.SignalEnd, g.Signals = to, map[string]int{}
	event := g.Key.Subject[0]
	re, _ := hookMatcher(strings.TrimPrefix(strings.TrimPrefix(g.Key.Subject[1], event), ":"))
	var trig []textRow
	switch event {
	case "PreToolUse", "PostToolUse":
		for _, c := range calls {
			if within(c.At, from, to) && c.LogID != 0 && (re == nil || re.MatchString(c.Name)) {
				trig = append(trig, textRow{ID: c.LogID, At: c.At})
			}
		}
	case "UserPromptSubmit", "Stop":
		for _, u := range users {
			if within(u.At, from, to) {
				trig = append(trig, u)
			}
		}
	}
	if len(trig) == 0 {
		trig = []textRow{{ID: g.Members[0].LogID, At: g.Members[0].At}}
	}
	g.EventCount = len(trig)
	for _, t := range trig[:min(len(trig), maxNotInvokedAnchors)] {
		g.addAnchor(t.ID, t.At, cortex.SignalHookNotInvoked, "")
	}
	g.Signals[cortex.SignalHookNotInvoked] = 1
}

// hookJSON is the part of a hook's JSON output that steers the agent.
type hookJSON struct {
	Decision           string `json:"decision"`
	Continue           *bool  `json:"continue"`
	Reason             string `json:"reason"`
	SystemMessage      string `json:"systemMessage"`
	HookSpecificOutput struct {
		PermissionDecision string `json:"permissionDecision"`
		AdditionalContext  string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func parseHookJSON(stdout string) (hookJSON, bool) {
	var h hookJSON
	out := strings.TrimSpace(stdout)
	if !strings.HasPrefix(out, "{") || json.Unmarshal([]byte(out), &h) != nil {
		return h, false
	}
	return h, true
}

// hookBlocked: a blocked run, or JSON output that blocks (decision
// "block", continue false, permissionDecision "deny").
func hookBlocked(r cortex.HookEventRow) bool {
	if r.Status == cortex.HookBlocked {
		return true
	}
	h, ok := parseHookJSON(r.StdoutPreview)
	return ok && (strings.EqualFold(h.Decision, "block") || (h.Continue != nil && !*h.Continue) ||
		strings.EqualFold(h.HookSpecificOutput.PermissionDecision, "deny"))
}

// hookInjects: the run put text in front of the agent — injected context
// or a system message, a block (its reason goes to the agent), JSON
// output with context, a reason or a message, or plain stdout of a
// SessionStart or UserPromptSubmit hook (added to the context).
func hookInjects(kind string, r cortex.HookEventRow) bool {
	if kind == "hook_additional_context" || kind == "hook_system_message" || hookBlocked(r) {
		return true
	}
	if h, ok := parseHookJSON(r.StdoutPreview); ok {
		return h.Reason != "" || h.SystemMessage != "" || h.HookSpecificOutput.AdditionalContext != ""
	}
	return (r.HookEvent == "SessionStart" || r.HookEvent == "UserPromptSubmit") && strings.TrimSpace(r.StdoutPreview) != ""
}

// hookRuns counts a group's runs: output-only records are not runs, and a
// start record and an outcome record of one command describe the same
// runs (per command, the larger count wins). It also returns the number of
// distinct commands (at least 1). A group of output records only counts
// its members.
func hookRuns(ms []member, rows map[int64]cortex.HookEventRow) (runs, commands int) {
	starts, outcomes := map[string]int{}, map[string]int{}
	for _, m := range ms {
		if hookOutputKinds[m.Kind] {
			continue
		}
		cmd := rows[m.ID].HookCommand
		if m.Kind == hookKindProgress {
			starts[cmd]++
		} else {
			outcomes[cmd]++
		}
	}
	seen := map[string]bool{}
	for _, set := range []map[string]int{starts, outcomes} {
		for cmd := range set {
			if !seen[cmd] {
				seen[cmd] = true
				runs += max(starts[cmd], outcomes[cmd])
			}
		}
	}
	if runs == 0 {
		return len(ms), 1
	}
	return runs, len(seen)
}

// hookTriggerCount counts the triggers of a group's hook in its window
// (from window before its first run to tooOftenCallSlack after its last):
// matching tool calls for tool hooks (when the calls were read), user
// prompts for Stop and UserPromptSubmit, one start for SessionStart.
// known is false when the trigger cannot be counted.
func hookTriggerCount(g *group, in hookInput, window time.Duration) (n int, known bool) {
	event := g.Key.Subject[0]
	suffix := strings.TrimPrefix(strings.TrimPrefix(g.Key.Subject[1], event), ":")
	from, to := g.First.Add(-window), g.Last.Add(tooOftenCallSlack)
	switch {
	case toolHookEvents[event]:
		if !in.callsKnown {
			return 0, false
		}
		for _, c := range in.calls {
			if within(c.At, from, to) && (suffix == "" || c.Name == suffix) {
				n++
			}
		}
		return n, true
	case event == "Stop" || event == "UserPromptSubmit":
		for _, u := range in.users {
			if within(u.At, from, to) {
				n++
			}
		}
		return n, true
	case event == "SessionStart":
		return 1, true
	}
	return 0, false
}

// tooOften: at least tooOftenMinRuns runs, and more than
// tooOftenPerTrigger runs per trigger and command (or, when the trigger
// cannot be counted, at least tooOftenUnknownTrigger runs per command).
func tooOften(runs, commands, triggers int, known bool) bool {
	commands = max(commands, 1)
	switch {
	case runs < tooOftenMinRuns:
		return false
	case !known:
		return runs >= tooOftenUnknownTrigger*commands
	}
	return runs > tooOftenPerTrigger*commands*max(triggers, 1)
}

// detectHook runs the hook detectors on a runtime group: it sets the
// group's signals, anchors (the hook records, or the user rows of a
// correction) and run count.
func detectHook(g *group, in hookInput, window time.Duration) {
	from, to := signalWindow(g, window)
	g.SignalEnd, g.Signals = to, map[string]int{}
	runs, commands := hookRuns(g.Members, in.rows)
	g.EventCount = runs

	injected := false
	var blocked []member
	for _, m := range g.Members {
		r, ok := in.rows[m.ID]
		if !ok {
			continue
		}
		if findings.HookRunFailed(&r) && !cancelledByUser(r, m.At, in.interrupts) {
			g.addAnchor(m.LogID, m.At, cortex.SignalHookFailed, "")
		}
		if findings.HookRunTimedOut(&r) {
			g.addAnchor(m.LogID, m.At, cortex.SignalHookTimedOut, "")
		}
		if len(findings.HookRunParseErrors(&r)) > 0 {
			g.addAnchor(m.LogID, m.At, cortex.SignalHookOutputParse, "")
		}
		if hookBlocked(r) {
			blocked = append(blocked, m)
		}
		if hookInjects(m.Kind, r) {
			injected = true
		}
	}
	if len(blocked) >= repeatedBlocks {
		for _, m := range blocked {
			g.addAnchor(m.LogID, m.At, cortex.SignalHookBlockedFlow, "")
		}
	}
	if n, known := hookTriggerCount(g, in, window); tooOften(runs, commands, n, known) {
		last := g.Members[len(g.Members)-1]
		g.addAnchor(last.LogID, last.At, cortex.SignalHookTooOften, "")
		g.Signals[cortex.SignalHookTooOften] = 1
	}
	// A correction is about the hook when it names this hook's event (the
	// "stop hook", PostToolUse), or — when a run of the group went wrong
	// (failed, timed out, garbled, blocked) — when it says "hook" or is
	// the user's first prompt after a run that put text in front of the
	// agent (never the session's first prompt, which answers nothing the
	// agent did; SessionStart context only when named). A hook that ran
	// fine is not charged with what the user says about other work.
	trouble := g.Signals[cortex.SignalHookFailed] > 0 || g.Signals[cortex.SignalHookTimedOut] > 0 ||
		g.Signals[cortex.SignalHookOutputParse] > 0 || g.Signals[cortex.SignalHookBlockedFlow] > 0
	event := canonHook(g.Key.Subject[0])
	for _, u := range in.users {
		if !within(u.At, from, to) || !u.corrects() {
			continue
		}
		norm := u.norm()
		namesEvent := event != "" && strings.Contains(canonHook(norm), event+"hook")
		named := namesEvent || trouble && len(hookMentions.FindNormalized(norm)) > 0
		reacts := trouble && injected && !u.First && g.Key.Subject[0] != "SessionStart" && firstAfter(in.users, u, g.Members)
		if named || reacts {
			g.addAnchor(u.ID, u.At, cortex.SignalCorrectionAfterHook, "")
		}
	}
}

// firstAfter reports whether u is the user's first prompt after the
// group's last run before it.
func firstAfter(users []textRow, u textRow, ms []member) bool {
	var last time.Time
	for _, m := range ms {
		if !m.At.After(u.At) {
			last = m.At
		}
	}
	if last.IsZero() {
		return false
	}
	for _, o := range users {
		if o.At.After(last) && o.At.Before(u.At) {
			return false
		}
	}
	return true
}

// userCancelGrace is how close a user interrupt and a cancelled hook run
// are when the interrupt cancelled it (Claude writes both at once).
const userCancelGrace = 5 * time.Second

// cancelledByUser reports whether a hook run was cancelled by the user's
// own interrupt (Esc while the hook ran): that is the user stopping the
// agent, not the hook failing.
func cancelledByUser(r cortex.HookEventRow, at time.Time, interrupts []time.Time) bool {
	if r.Status != cortex.HookCancelled {
		return false
	}
	for _, t := range interrupts {
		if d := t.Sub(at); d >= -userCancelGrace && d <= userCancelGrace {
			return true
		}
	}
	return false
}

// isIncident: a hook group without a negative signal is usage, listed only
// on request (or when asked for by id).
func (hookLens) isIncident(g *group, p *cortex.IncidentParams) bool {
	return len(g.present()) > 0 || p.IncludeUsage || p.IncidentID != ""
}

// Score weights of the hook lens.
const (
	weightHookRun        = 1
	maxScoredHookRuns    = 20
	weightHookFailed     = 15
	weightHookTimedOut   = 10
	weightHookParse      = 10
	weightHookTooOften   = 8
	weightHookCorrection = 15
	weightHookBlocked    = 10
	weightHookNotInvoked = 8
	weightHookVariety    = 5
)

// hookScore is min(runs, 20)*1 + failed*15 + timed out*10 + parse
// errors*10 + too often*8 + corrections*15 + blocks*10 + not invoked*8 +
// distinct signals*5. Runs count little and are capped: a busy hook is not
// a broken one. too often and not invoked count once per group; a
// not-invoked group's runs are its triggers.
func hookScore(runs int, s map[string]int) float64 {
	variety := 0
	for _, n := range s {
		if n > 0 {
			variety++
		}
	}
	return float64(min(runs, maxScoredHookRuns)*weightHookRun + s[cortex.SignalHookFailed]*weightHookFailed +
		s[cortex.SignalHookTimedOut]*weightHookTimedOut + s[cortex.SignalHookOutputParse]*weightHookParse +
		s[cortex.SignalHookTooOften]*weightHookTooOften + s[cortex.SignalCorrectionAfterHook]*weightHookCorrection +
		s[cortex.SignalHookBlockedFlow]*weightHookBlocked + s[cortex.SignalHookNotInvoked]*weightHookNotInvoked +
		variety*weightHookVariety)
}

// hookLabel: < 15 low, < 35 medium, < 60 high, else critical (as the
// skill lens).
func hookLabel(score float64) string { return label(score, 15, 35, 60) }

func (hookLens) score(g *group) float64     { return hookScore(g.EventCount, g.Signals) }
func (hookLens) label(score float64) string { return hookLabel(score) }

// hookBasis is the evidence basis of a group key: runtime groups carry no
// source (transcripts do not name one); configuration-based groups carry
// the configuration source, a trust-state source ending in
// "[hooks.state]" (event hook_trust_state) meaning trusted_hash_state.
func hookBasis(k groupKey) string {
	switch {
	case k.Subject[2] == "":
		return cortex.EvidenceRuntime
	case k.Subject[0] == eventTrustState || strings.HasSuffix(k.Subject[2], "[hooks.state]"):
		return cortex.EvidenceTrust
	}
	return cortex.EvidenceConfig
}

func (hookLens) subject(k groupKey, inc *cortex.Incident) {
	inc.HookEvent, inc.HookName, inc.HookSource = k.Subject[0], k.Subject[1], k.Subject[2]
	inc.EvidenceBasis = hookBasis(k)
}

// extras adds the group's hook events (the first 25: runtime runs, or the
// configured entry behind a configuration-based group), and the session's
// tool calls and MCP calls in the correlation window (the first 25 each).
func (hookLens) extras(ctx context.Context, db Store, g *group, b *cortex.Bundle) error {
	var ids []int64
	for _, m := range g.Members {
		if slices.Contains(ids, m.ID) {
			continue
		}
		if len(ids) == capHookEvents {
			b.HookEventsTruncated = true
			break
		}
		ids = append(ids, m.ID)
	}
	evs, err := db.HookEventsByID(ctx, ids)
	if err != nil {
		return err
	}
	b.HookEvents = evs
	if b.HookEvents == nil {
		b.HookEvents = []cortex.HookEventRow{}
	}
	b.NearbyToolCalls, b.NearbyMCPEvents = []cortex.ToolEventRow{}, []cortex.ToolEventRow{}
	if g.Key.Session == "" {
		return nil
	}
	s := store.SessionScope{Tool: g.Key.Tool, Session: g.Key.Session, Host: g.Key.Host}
	corr := time.Duration(b.CorrelationWindowMinutes) * time.Minute
	first, last := g.span()
	from, to := first.Add(-corr), maxTime(last, g.SignalEnd).Add(corr)
	calls, err := db.SessionToolEvents(ctx, s, from, to, false, capHookNearbyCalls+1)
	if err != nil {
		return err
	}
	b.NearbyToolCalls, b.NearbyToolCallsTruncated = capRows(calls, capHookNearbyCalls, false)
	mcp, err := db.SessionToolEvents(ctx, s, from, to, true, capHookNearbyMCP+1)
	if err != nil {
		return err
	}
	b.NearbyMCPEvents, b.NearbyMCPEventsTruncated = capRows(mcp, capHookNearbyMCP, false)
	return nil
}

func (hookLens) subjectFirst(p *cortex.IncidentParams) bool { return p.Hook != "" || p.HookEvent != "" }

// describe names the selected hook; after a run it is the stored name the
// typed one resolved to.
func (hookLens) describe(p *cortex.IncidentParams) string {
	switch {
	case p.Hook != "" && p.HookEvent != "" && p.Hook != p.HookEvent:
		return fmt.Sprintf("hook %q (event %q)", p.Hook, p.HookEvent)
	case p.Hook != "":
		return fmt.Sprintf("hook %q", p.Hook)
	case p.HookEvent != "":
		return fmt.Sprintf("hook event %q", p.HookEvent)
	case p.HookSource != "":
		return fmt.Sprintf("hooks from %q", p.HookSource)
	}
	return "the selection"
}

// maxMatchedNames bounds the names listed in matched.
const maxMatchedNames = 5

// matched says what the typed hook resolved to among the stored hook
// events ("hook PostToolUse:Bash", "hook event PostToolUse (PostToolUse:Bash,
// PostToolUse:Read)", "hooks PreToolUse:Bash, PostToolUse:Bash"), or ""
// when it names none (for Investigation.Matched).
func (l hookLens) matched(ctx context.Context, db Store, p *cortex.IncidentParams) string {
	if !l.subjectFirst(p) {
		return ""
	}
	q := *p
	f, err := l.filter(ctx, db, &q)
	if err != nil {
		return ""
	}
	list := func(names []string) string {
		if len(names) > maxMatchedNames {
			return strings.Join(names[:maxMatchedNames], ", ") + fmt.Sprintf(", +%d more", len(names)-maxMatchedNames)
		}
		return strings.Join(names, ", ")
	}
	switch {
	case f.Events != nil && len(f.Events) == 0, f.Names != nil && len(f.Names) == 0:
		return ""
	case len(f.Names) == 1:
		return "hook " + f.Names[0]
	case len(f.Names) > 1:
		return "hooks " + list(f.Names)
	case len(f.Events) > 0:
		stored, err := db.HookNames(ctx)
		if err != nil {
			return ""
		}
		var names []string
		for _, n := range stored {
			if slices.Contains(f.Events, n.Event) && n.Name != "" && !slices.Contains(names, n.Name) {
				names = append(names, n.Name)
			}
		}
		out := "hook event " + strings.Join(f.Events, ", ")
		if len(names) > 0 {
			out += " (" + list(names) + ")"
		}
		return out
	}
	return ""
}

// configOnlyNoun names configuration rows counted as usage: configured,
// never run as far as the transcripts show.
const configOnlyNoun = "configured entries and no runtime hook runs (config_inventory only: configured is not proof that it ran)"

// usage counts the selected hook's runtime runs and sessions in the range.
// When it has no run but is configured, the configuration rows are the
// usage, and the noun says they are configuration only.
func (l hookLens) usage(ctx context.Context, db Store, p *cortex.IncidentParams) (usageReport, error) {
	f, err := l.filter(ctx, db, p)
	if err != nil {
		return usageReport{}, err
	}
	u, err := db.HookUsage(ctx, f)
	if err != nil {
		return usageReport{}, err
	}
	if u.Runs == 0 && u.ConfigRows > 0 {
		return usageReport{Events: u.ConfigRows, Noun: configOnlyNoun}, nil
	}
	return usageReport{Events: u.Runs, Sessions: u.Sessions, Noun: "hook runs"}, nil
}

// suggest explains an empty answer: the nearest stored hook names, whether
// the hook is configured without any recorded run (configuration is not
// proof it ran; Codex and Gemini record no hook runs), and how to list
// hooks.
func (l hookLens) suggest(ctx context.Context, db Store, p *cortex.IncidentParams) (string, []string) {
	var out []string
	msg := fmt.Sprintf("no hook runs match %s with these filters", l.describe(p))
	if f, err := l.filter(ctx, db, p); err == nil {
		f.EvidenceKind = "" // name the configuration even when the answer was runtime only
		if u, err := db.HookUsage(ctx, f); err == nil && u.Runs == 0 && u.ConfigRows > 0 {
			msg = fmt.Sprintf("no runtime hook runs match %s with these filters; it is configured (%d config_inventory/trusted_hash_state rows: %s), which is not proof that it ran",
				l.describe(p), u.ConfigRows, strings.Join(u.Sources, ", "))
			out = append(out, "only Claude Code writes hook runs into its transcripts: Codex and Gemini hooks show as configuration only")
		}
	}
	if p.EvidenceKind != "" {
		out = append(out, "drop the evidence_kind filter")
	}
	if typed := firstNonEmpty(p.Hook, p.HookEvent); typed != "" {
		if stored, err := db.HookNames(ctx); err == nil {
			var names []string
			for _, n := range stored {
				for _, s := range []string{n.Event, n.Name} {
					if s != "" && !slices.Contains(names, s) {
						names = append(names, s)
					}
				}
			}
			for _, n := range nearestNames(typed, names, 5) {
				out = append(out, fmt.Sprintf("did you mean hook %q?", n))
			}
		}
	}
	out = append(out, "list hooks: cortex ai hook-events")
	return msg, out
}

// firstNonEmpty returns the first non-empty string.
func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
