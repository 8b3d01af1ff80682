package incident

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/sqlite"
)

// --- name resolution ---

func TestResolveHookForms(t *testing.T) {
	n := func(event, name string) sqlite.HookName { return sqlite.HookName{Event: event, Name: name} }
	stored := []sqlite.HookName{n("PostToolUse", "PostToolUse:Bash"), n("PostToolUse", "PostToolUse:Read"),
		n("PreToolUse", "PreToolUse:Bash"), n("SessionStart", "SessionStart:startup"), n("SessionStart", "SessionStart"),
		n("Stop", "Stop"), n("PostToolUse", "PostToolUse:mcp__labby__search")}
	for _, tc := range []struct {
		typed         string
		events, names []string
	}{
		{"PostToolUse", []string{"PostToolUse"}, nil},
		{"post_tool_use", []string{"PostToolUse"}, nil},
		{"posttooluse", []string{"PostToolUse"}, nil},
		{"POST-TOOL-USE", []string{"PostToolUse"}, nil},
		{"PostToolUse:Bash", nil, []string{"PostToolUse:Bash"}},
		{"post_tool_use:bash", nil, []string{"PostToolUse:Bash"}},
		{"posttooluse/BASH", nil, []string{"PostToolUse:Bash"}},
		{"PostToolUse:mcp__labby__search", nil, []string{"PostToolUse:mcp__labby__search"}},
		{"session_start:startup", nil, []string{"SessionStart:startup"}},
		{"stop", []string{"Stop"}, nil},
		// A matcher alone: every event's hook on that tool.
		{"bash", nil, []string{"PostToolUse:Bash", "PreToolUse:Bash"}},
		{"PostToolUse:Grep", nil, []string{}},
		{"nosuchhook", nil, []string{}},
	} {
		m := resolveHook(tc.typed, stored)
		if !slices.Equal(m.events, tc.events) || !slices.Equal(m.names, tc.names) || (tc.names != nil && m.names == nil) {
			t.Errorf("%q: events %v names %v, want %v %v", tc.typed, m.events, m.names, tc.events, tc.names)
		}
	}
	if got := resolveEvent("pre_tool_use", stored); !slices.Equal(got, []string{"PreToolUse"}) {
		t.Errorf("event: %v", got)
	}
}

func TestHookPrepare(t *testing.T) {
	for _, p := range []cortex.IncidentParams{
		{Terms: []string{"x"}}, {Skill: "s"}, {MCPServer: "labby"}, {Target: "labby"},
		{EvidenceKind: "guess"}, {Hook: ":"}, {Hook: "Post\x00Tool"}, {Hook: strings.Repeat("x", maxHookNameLen+1)},
	} {
		if err := (hookLens{}).prepare(&p); err == nil {
			t.Errorf("%+v: want an error", p)
		}
	}
	p := cortex.IncidentParams{Hook: "  post_tool_use  ", EvidenceKind: cortex.EvidenceConfig}
	if err := (hookLens{}).prepare(&p); err != nil || p.Hook != "post_tool_use" {
		t.Errorf("%+v %v", p, err)
	}
}

// --- detectors ---

var hookT0 = time.Date(2026, 10, 14, 21, 0, 0, 0, time.UTC)

// hookEv describes a runtime member of a test group.
type hookEv struct {
	kind, status string
	exit, dur    int64 // -1: absent
	stdout       string
	stderr       string
	command      string
	meta         map[string]string
}

func ran(status string) hookEv {
	return hookEv{kind: "hook_success", status: status, exit: -1, dur: -1, command: "lint"}
}

// hookGroup builds a group of event:name with one member per ev, a minute
// apart from hookT0, and the rows the detectors read.
func hookGroup(event, name string, evs ...hookEv) (*group, map[int64]cortex.HookEventRow) {
	g := &group{Key: groupKey{Tool: cortex.ToolClaude, Session: "s", Host: "h", Subject: [3]string{event, name}}}
	rows := map[int64]cortex.HookEventRow{}
	for i, e := range evs {
		at := hookT0.Add(time.Duration(i) * time.Minute)
		id := int64(i + 1)
		g.Members = append(g.Members, member{ID: id, LogID: 100 + id, At: at, Kind: e.kind, Key: g.Key})
		r := cortex.HookEventRow{ID: id, HookEvent: event, HookName: name, HookCommand: e.command, Status: e.status,
			StdoutPreview: e.stdout, StderrPreview: e.stderr, EvidenceKind: cortex.EvidenceRuntime,
			Metadata: map[string]string{"attachment_type": e.kind}}
		for k, v := range e.meta {
			r.Metadata[k] = v
		}
		if e.exit >= 0 {
			r.ExitCode = &e.exit
		}
		if e.dur >= 0 {
			r.DurationMS = &e.dur
		}
		rows[id] = r
	}
	g.First, g.Last = g.Members[0].At, g.Members[len(g.Members)-1].At
	return g, rows
}

func with(e hookEv, f func(*hookEv)) hookEv { f(&e); return e }

func TestHookDetectors(t *testing.T) {
	failed := with(ran(cortex.HookFailed), func(e *hookEv) {
		e.kind, e.exit, e.stderr = "hook_non_blocking_error", 127, "Failed with non-blocking status code: /bin/sh: marvin: command not found"
	})
	for _, tc := range []struct {
		name  string
		evs   []hookEv
		users []textRow
		want  map[string]int
	}{
		{"success is usage", []hookEv{ran(cortex.HookSuccess)}, nil, map[string]int{}},
		{"start record is no failure", []hookEv{with(ran(cortex.HookUnknown), func(e *hookEv) { e.kind = hookKindProgress })}, nil, map[string]int{}},
		{"exit 127", []hookEv{failed}, nil, map[string]int{cortex.SignalHookFailed: 1}},
		{"success with a non-zero exit", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) { e.exit = 2 })}, nil,
			map[string]int{cortex.SignalHookFailed: 1}},
		{"success with exit 0", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) { e.exit = 0 })}, nil, map[string]int{}},
		{"cancelled", []hookEv{with(ran(cortex.HookCancelled), func(e *hookEv) { e.kind = "hook_cancelled"; e.dur = 3188 })}, nil,
			map[string]int{cortex.SignalHookFailed: 1}},
		{"error", []hookEv{ran(cortex.HookError)}, nil, map[string]int{cortex.SignalHookFailed: 1}},
		{"one block: failed, not yet blocked flow", []hookEv{ran(cortex.HookBlocked)}, nil, map[string]int{cortex.SignalHookFailed: 1}},
		{"repeated blocks", []hookEv{ran(cortex.HookBlocked), ran(cortex.HookBlocked)}, nil,
			map[string]int{cortex.SignalHookFailed: 2, cortex.SignalHookBlockedFlow: 2}},
		{"JSON blocks count as blocks", []hookEv{
			with(ran(cortex.HookSuccess), func(e *hookEv) { e.stdout = `{"decision": "block", "reason": "tests fail"}` }),
			with(ran(cortex.HookSuccess), func(e *hookEv) { e.stdout = `{"continue": false}` })}, nil,
			map[string]int{cortex.SignalHookBlockedFlow: 2}},
		{"slow run", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) { e.dur = 45_000 })}, nil,
			map[string]int{cortex.SignalHookTimedOut: 1}},
		{"29 s is not slow", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) { e.dur = 29_999 })}, nil, map[string]int{}},
		{"failed with timeout text", []hookEv{with(ran(cortex.HookError), func(e *hookEv) { e.stderr = "hook timed out after 60s" })}, nil,
			map[string]int{cortex.SignalHookFailed: 1, cortex.SignalHookTimedOut: 1}},
		{"timeout text in a success is not a timeout", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) {
			e.stdout = `{"async": true, "asyncTimeout": 180000} timeout`
			e.kind = "async_hook_response"
		})}, nil, map[string]int{}},
		{"parse phrase in stderr", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) { e.stderr = "SyntaxError: Unexpected token } in JSON" })}, nil,
			map[string]int{cortex.SignalHookOutputParse: 1}},
		{"invalid JSON on stdout", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) { e.stdout = `{"hookSpecificOutput": {"additionalContext": "x"}` })}, nil,
			map[string]int{cortex.SignalHookOutputParse: 1}},
		{"valid JSON", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) { e.stdout = `{"systemMessage": "hi"}` })}, nil, map[string]int{}},
		{"truncated JSON is not judged", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) {
			e.stdout, e.meta = "{\n  \"a\": \"x\n[… 9000 bytes omitted …]\n\"}", map[string]string{"stdout_truncated": "true"}
		})}, nil, map[string]int{}},
		{"two JSON lines of an async response are not judged", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) {
			e.kind, e.stdout = "async_hook_response", "{\"async\": true}\n{\"metrics\": {}}"
		})}, nil, map[string]int{}},
		// Corrections count when the user names this hook's event, or —
		// after a run that went wrong — names a hook or is the first
		// prompt after a run that put text in front of the agent. A hook
		// that ran fine is not charged with what the user says of other
		// work.
		{"correction after injected context of a failed run", []hookEv{with(ran(cortex.HookError), func(e *hookEv) { e.kind = "hook_additional_context" })},
			[]textRow{{ID: 900, At: hookT0.Add(2 * time.Minute), Text: "No, that's not what I asked."}},
			map[string]int{cortex.SignalHookFailed: 1, cortex.SignalCorrectionAfterHook: 1}},
		{"correction after injected context of a run that went well", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) { e.kind = "hook_additional_context" })},
			[]textRow{{ID: 900, At: hookT0.Add(2 * time.Minute), Text: "No, that's not what I asked."}}, map[string]int{}},
		{"correction after a silent hook", []hookEv{ran(cortex.HookSuccess)},
			[]textRow{{ID: 900, At: hookT0.Add(2 * time.Minute), Text: "No, that's not what I asked."}}, map[string]int{}},
		{"correction naming the hook's event", []hookEv{ran(cortex.HookSuccess)},
			[]textRow{{ID: 900, At: hookT0.Add(2 * time.Minute), Text: "That's wrong, the stop hook should not do that."}},
			map[string]int{cortex.SignalCorrectionAfterHook: 1}},
		{"correction saying hook of a run that went well", []hookEv{ran(cortex.HookSuccess)},
			[]textRow{{ID: 900, At: hookT0.Add(2 * time.Minute), Text: "That's wrong, the hook should not do that."}}, map[string]int{}},
		{"quoted correction", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) { e.kind = "hook_system_message" })},
			[]textRow{{ID: 900, At: hookT0.Add(2 * time.Minute), Text: "log `that's wrong` on bad input"}}, map[string]int{}},
		{"correction before the hook", []hookEv{with(ran(cortex.HookSuccess), func(e *hookEv) { e.kind = "hook_additional_context" })},
			[]textRow{{ID: 900, At: hookT0.Add(-time.Minute), Text: "that's wrong"}}, map[string]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, rows := hookGroup("Stop", "Stop", tc.evs...)
			detectHook(g, hookInput{rows: rows, users: tc.users}, 10*time.Minute)
			got := map[string]int{}
			for s, n := range g.Signals {
				if n > 0 {
					got[s] = n
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("signals %v, want %v", got, tc.want)
			}
			for _, a := range g.Anchors {
				if a.LogID == 0 {
					t.Errorf("anchor without a row: %+v", a)
				}
			}
		})
	}
}

// Too often is a rate: runs per trigger, so that a busy session whose
// PostToolUse hook runs once per tool call is never flagged.
func TestHookTooOften(t *testing.T) {
	many := func(n int, kind string) []hookEv {
		out := make([]hookEv, n)
		for i := range out {
			out[i] = with(ran(cortex.HookSuccess), func(e *hookEv) { e.kind = kind })
		}
		return out
	}
	calls := func(n int, name string) []call {
		var out []call
		for i := range n {
			out = append(out, call{ID: int64(i), LogID: int64(500 + i), At: hookT0.Add(time.Duration(i) * time.Minute), Name: name})
		}
		return out
	}
	users := func(n int) []textRow {
		var out []textRow
		for i := range n {
			out = append(out, textRow{ID: int64(700 + i), At: hookT0.Add(time.Duration(i) * time.Minute), Text: "go on"})
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		event, hk  string
		evs        []hookEv
		in         hookInput
		tooOften   bool
		runs, cmds int
	}{
		{"one run per Bash call", "PostToolUse", "PostToolUse:Bash", many(40, "hook_success"),
			hookInput{calls: calls(40, "Bash"), callsKnown: true}, false, 40, 1},
		{"forty runs for two Bash calls", "PostToolUse", "PostToolUse:Bash", many(40, "hook_success"),
			hookInput{calls: append(calls(2, "Bash"), calls(38, "Read")...), callsKnown: true}, true, 40, 1},
		{"nine runs for no call: too few to judge", "PostToolUse", "PostToolUse:Bash", many(9, "hook_success"),
			hookInput{callsKnown: true}, false, 9, 1},
		{"calls not read: unknown trigger, below 30", "PostToolUse", "PostToolUse:Bash", many(20, "hook_success"),
			hookInput{}, false, 20, 1},
		{"Stop once per prompt", "Stop", "Stop", many(12, hookKindStopSummary), hookInput{users: users(12)}, false, 12, 1},
		{"Stop keeps firing in one turn", "Stop", "Stop", many(12, hookKindStopSummary), hookInput{users: users(1)}, true, 12, 1},
		// A start record and an outcome record describe the same run.
		{"start and summary of the same runs", "Stop", "Stop", append(many(12, hookKindProgress), many(12, hookKindStopSummary)...),
			hookInput{users: users(12)}, false, 12, 1},
		{"output records are not runs", "SessionStart", "SessionStart", append(many(2, "hook_success"), many(20, "hook_additional_context")...),
			hookInput{}, false, 2, 1},
		{"unknown trigger, 30 runs", "Notification", "Notification", many(30, "hook_success"), hookInput{}, true, 30, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, rows := hookGroup(tc.event, tc.hk, tc.evs...)
			tc.in.rows = rows
			detectHook(g, tc.in, 10*time.Minute)
			runs, cmds := hookRuns(g.Members, rows)
			if runs != tc.runs || cmds != tc.cmds || g.EventCount != tc.runs {
				t.Errorf("runs %d (event count %d), commands %d; want %d, %d", runs, g.EventCount, cmds, tc.runs, tc.cmds)
			}
			if got := g.Signals[cortex.SignalHookTooOften] == 1; got != tc.tooOften {
				t.Errorf("too often %v, want %v", got, tc.tooOften)
			}
		})
	}
	// Two commands under one hook name double the expected runs.
	g, rows := hookGroup("PostToolUse", "PostToolUse:Bash", many(12, "hook_success")...)
	for id, r := range rows {
		if id%2 == 0 {
			r.HookCommand = "other"
			rows[id] = r
		}
	}
	if runs, cmds := hookRuns(g.Members, rows); runs != 12 || cmds != 2 || tooOften(runs, cmds, 2, true) || !tooOften(runs, cmds, 1, true) {
		t.Errorf("two commands: %d runs, %d commands", runs, cmds)
	}
}

func TestHookScoreAndLabel(t *testing.T) {
	for _, tc := range []struct {
		runs   int
		sig    map[string]int
		score  float64
		labels string
	}{
		{1, map[string]int{}, 1, "low"},
		{1, map[string]int{cortex.SignalHookFailed: 1}, 21, "medium"},
		{4, map[string]int{cortex.SignalHookFailed: 4}, 69, "critical"},
		{100, map[string]int{cortex.SignalHookTooOften: 1}, 33, "medium"},
		{1, map[string]int{cortex.SignalHookNotInvoked: 1}, 14, "low"},
		{2, map[string]int{cortex.SignalHookFailed: 2, cortex.SignalHookBlockedFlow: 2}, 62, "critical"},
		{3, map[string]int{cortex.SignalHookTimedOut: 1, cortex.SignalHookOutputParse: 1, cortex.SignalCorrectionAfterHook: 1}, 53, "high"},
	} {
		if s := hookScore(tc.runs, tc.sig); s != tc.score || hookLabel(s) != tc.labels {
			t.Errorf("%d runs %v: score %g %s, want %g %s", tc.runs, tc.sig, s, hookLabel(s), tc.score, tc.labels)
		}
	}
}

func TestHookBasis(t *testing.T) {
	for _, tc := range []struct {
		subject [3]string
		want    string
	}{
		{[3]string{"PostToolUse", "PostToolUse:Bash", ""}, cortex.EvidenceRuntime},
		{[3]string{"PostToolUse", "PostToolUse:Bash", "claude:user:settings.json"}, cortex.EvidenceConfig},
		{[3]string{"Stop", "Stop", "codex:project:hooks.json"}, cortex.EvidenceConfig},
		{[3]string{"hook_trust_state", "k", "codex:user:config.toml[hooks.state]"}, cortex.EvidenceTrust},
	} {
		var inc cortex.Incident
		hookLens{}.subject(groupKey{Subject: tc.subject}, &inc)
		if inc.EvidenceBasis != tc.want || inc.HookName != tc.subject[1] || inc.HookSource != tc.subject[2] {
			t.Errorf("%v: %+v, want basis %s", tc.subject, inc, tc.want)
		}
	}
}

// --- stores ---

// hookRec builds a Claude record of session in project /p on host-a.
func hookRec(session, key string, role cortex.Role, text string, at time.Time, ev cortex.Events) cortex.ImportRecord {
	return cortex.ImportRecord{Entry: cortex.Entry{Tool: cortex.ToolClaude, Timestamp: at, Role: role, Kind: string(role),
		Text: text, SessionID: session, Project: "/p", RecordKey: key, Severity: cortex.SevInfo},
		Raw: []byte(`{"k":"` + key + `"}`), ContentHash: "h-" + key, Line: 1, Events: ev}
}

func bashCall(id string) cortex.Events {
	return cortex.Events{Tools: []cortex.ToolEvent{{CallID: id, ToolName: "Bash", EventKind: cortex.ToolClaudeUse, HasCall: true}}}
}

func hookRan(command, status string) cortex.Events {
	return cortex.Events{Hooks: []cortex.HookEvent{{HookEvent: "PostToolUse", HookName: "PostToolUse:Bash", Command: command,
		Status: status, EvidenceKind: cortex.EvidenceRuntime, Meta: map[string]string{"attachment_type": "hook_success"}}}}
}

// claudeSession is one session: a prompt, then a Bash call a minute later
// per entry of hooks (with the PostToolUse:Bash run hooks[i] after it, or
// none when it is empty).
func claudeSession(id string, start time.Time, hooks ...cortex.Events) cortex.ImportBatch {
	return claudeSessionStart(id, start, true, hooks...)
}

// claudeSessionStart is claudeSession, with a SessionStart hook run first
// when started (the session's transcript then shows that it records hook
// runs).
func claudeSessionStart(id string, start time.Time, started bool, hooks ...cortex.Events) cortex.ImportBatch {
	recs := []cortex.ImportRecord{hookRec(id, id+"-u", cortex.RoleUser, "run the checks", start, cortex.Events{})}
	if started {
		recs = append(recs, hookRec(id, id+"-s", cortex.RoleHook, "hook SessionStart:startup", start, cortex.Events{Hooks: []cortex.HookEvent{{
			HookEvent: "SessionStart", HookName: "SessionStart:startup", Command: "bd prime", Status: cortex.HookSuccess,
			EvidenceKind: cortex.EvidenceRuntime, Meta: map[string]string{"attachment_type": "hook_success"}}}}))
	}
	for i, h := range hooks {
		at := start.Add(time.Duration(i+1) * time.Minute)
		recs = append(recs, hookRec(id, fmt.Sprintf("%s-c%d", id, i), cortex.RoleToolCall, "Bash make check", at, bashCall(fmt.Sprintf("%s-%d", id, i))))
		if len(h.Hooks) > 0 {
			recs = append(recs, hookRec(id, fmt.Sprintf("%s-h%d", id, i), cortex.RoleHook, "hook PostToolUse:Bash", at.Add(5*time.Second), h))
		}
	}
	return cortex.ImportBatch{Source: cortex.Source{Path: "/t/" + id + ".jsonl", Kind: "claude", Tool: cortex.ToolClaude},
		Records: recs, Hostname: "host-a", SourceTag: "transcripts"}
}

func hookDB(t *testing.T, batches ...cortex.ImportBatch) *sqlite.DB {
	t.Helper()
	db, _ := teststore.Indexed(t)
	if _, err := db.ImportBatches(context.Background(), batches); err != nil {
		t.Fatal(err)
	}
	return db
}

func configure(t *testing.T, db *sqlite.DB, hooks ...sqlite.ConfigHook) {
	t.Helper()
	if _, _, err := db.StoreConfigHooks(context.Background(), "host-a", hookT0.Add(24*time.Hour), hooks); err != nil {
		t.Fatal(err)
	}
}

func configured(tool cortex.Tool, project, event, name, command string, meta map[string]string) sqlite.ConfigHook {
	src := string(tool) + ":user:settings.json"
	if project != "" {
		src = string(tool) + ":project:settings.json"
	}
	return sqlite.ConfigHook{Tool: tool, Project: project, Hook: cortex.HookEvent{HookEvent: event, HookName: name,
		HookSource: src, Command: command, Status: cortex.HookConfigured, EvidenceKind: cortex.EvidenceConfig, Meta: meta}}
}

func incidentsOf(t *testing.T, db *sqlite.DB, p cortex.IncidentParams) []cortex.Incident {
	t.Helper()
	list, err := New(db).Incidents(context.Background(), hookLens{}, p)
	if err != nil {
		t.Fatal(err)
	}
	return list.Incidents
}

// Configuration rows (no session) never join runtime groups; they form
// their own groups only when the selection has no runtime evidence, and
// those are usage (configured, not run), never incidents.
func TestHookGroupingWithConfigRows(t *testing.T) {
	ok := hookRan("lint", cortex.HookSuccess)
	bad := hookRan("lint", cortex.HookFailed)
	db := hookDB(t, claudeSession("s1", hookT0, ok, bad))
	configure(t, db, configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "lint", map[string]string{"matcher": "Bash"}),
		configured(cortex.ToolClaude, "", "Stop", "Stop", "notify", nil))

	incs := incidentsOf(t, db, cortex.IncidentParams{})
	if len(incs) != 1 || incs[0].SessionID != "s1" || incs[0].EvidenceBasis != cortex.EvidenceRuntime || incs[0].HookSource != "" ||
		incs[0].EventCount != 2 || len(incs[0].EventIDs) != 2 || !slices.Equal(incs[0].SignalsPresent, []string{cortex.SignalHookFailed}) {
		t.Fatalf("incidents %+v", incs)
	}
	// Usage lists the runtime group only: configuration is context.
	usage := incidentsOf(t, db, cortex.IncidentParams{IncludeUsage: true})
	if len(usage) != 2 {
		t.Fatalf("usage %+v", usage)
	}
	for _, u := range usage {
		if u.SessionID != "s1" || u.EvidenceBasis != cortex.EvidenceRuntime {
			t.Errorf("usage lists configuration: %+v", u)
		}
	}
	// A hook that is only configured: a configuration group, usage only.
	if got := incidentsOf(t, db, cortex.IncidentParams{Hook: "stop"}); len(got) != 0 {
		t.Errorf("configured Stop listed as an incident: %+v", got)
	}
	cfg := incidentsOf(t, db, cortex.IncidentParams{Hook: "stop", IncludeUsage: true})
	if len(cfg) != 1 || cfg[0].SessionID != "" || cfg[0].EvidenceBasis != cortex.EvidenceConfig ||
		cfg[0].HookSource != "claude:user:settings.json" || len(cfg[0].SignalsPresent) != 0 || cfg[0].Label != "low" {
		t.Errorf("configuration group %+v", cfg)
	}
	// Runtime only: the configuration is not read.
	if got := incidentsOf(t, db, cortex.IncidentParams{Hook: "stop", IncludeUsage: true, EvidenceKind: cortex.EvidenceRuntime}); len(got) != 0 {
		t.Errorf("runtime only: %+v", got)
	}
	// Within one session: no configuration group.
	if got := incidentsOf(t, db, cortex.IncidentParams{Hook: "stop", IncludeUsage: true, Session: "s1"}); len(got) != 0 {
		t.Errorf("session: %+v", got)
	}
	// Ids are stable across runs.
	if again := incidentsOf(t, db, cortex.IncidentParams{}); again[0].ID != incs[0].ID || !strings.HasPrefix(incs[0].ID, "hook-inc-") {
		t.Errorf("ids %s %s", incs[0].ID, again[0].ID)
	}
}

// hook_not_invoked: a configured hook whose command ran in the sessions
// before and after, but not in this one although its trigger happened.
func TestHookNotInvoked(t *testing.T) {
	lint := hookRan("lint", cortex.HookSuccess)
	none := cortex.Events{}
	sessions := []cortex.ImportBatch{
		claudeSession("before", hookT0, lint),
		claudeSession("missed", hookT0.Add(time.Hour), none, none),
		claudeSession("after", hookT0.Add(2*time.Hour), lint),
	}
	bash := map[string]string{"matcher": "Bash"}
	for _, tc := range []struct {
		name   string
		cfg    sqlite.ConfigHook
		drop   string // a session left out of the store
		other  bool   // the missed session ran the hook under another command
		silent bool   // the missed session records no hook runs at all (a version that writes none)
		params cortex.IncidentParams
		want   bool
	}{
		{name: "expected and missing", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "lint", bash), want: true},
		{name: "project-level in that project", cfg: configured(cortex.ToolClaude, "/p", "PostToolUse", "PostToolUse:Bash", "lint", bash), want: true},
		{name: "regex matcher", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash|Edit", "lint", map[string]string{"matcher": "Bash|Edit"}), want: true},
		{name: "empty matcher", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse", "lint", map[string]string{"matcher": ""}), want: true},
		{name: "the configured command never ran", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "other", bash)},
		{name: "disabled", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "lint", map[string]string{"matcher": "Bash", "enabled": "false"})},
		{name: "another project's configuration", cfg: configured(cortex.ToolClaude, "/q", "PostToolUse", "PostToolUse:Bash", "lint", bash)},
		{name: "matcher for other tools", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Edit", "lint", map[string]string{"matcher": "Edit"})},
		{name: "no run after it", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "lint", bash), drop: "after"},
		{name: "no run before it", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "lint", bash), drop: "before"},
		{name: "the session ran the hook event", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "lint", bash), other: true},
		{name: "the session records no hook runs", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "lint", bash), silent: true},
		// Codex writes no hook runs: its configuration never becomes a
		// claim that a hook ran or did not run.
		{name: "codex", cfg: configured(cortex.ToolCodex, "", "PostToolUse", "PostToolUse:Bash", "lint", bash)},
		{name: "runtime evidence only", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "lint", bash),
			params: cortex.IncidentParams{EvidenceKind: cortex.EvidenceRuntime}},
		{name: "configuration evidence only", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "lint", bash),
			params: cortex.IncidentParams{EvidenceKind: cortex.EvidenceConfig}, want: true},
		{name: "selected by hook name", cfg: configured(cortex.ToolClaude, "", "PostToolUse", "PostToolUse:Bash", "lint", bash),
			params: cortex.IncidentParams{Hook: "post_tool_use:bash", Session: "missed"}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bs []cortex.ImportBatch
			for _, b := range sessions {
				if !strings.Contains(b.Source.Path, "/"+tc.drop+".") || tc.drop == "" {
					bs = append(bs, b)
				}
			}
			switch {
			case tc.other:
				bs[1] = claudeSession("missed", hookT0.Add(time.Hour), hookRan("lint-v2", cortex.HookSuccess), none)
			case tc.silent:
				bs[1] = claudeSessionStart("missed", hookT0.Add(time.Hour), false, none, none)
			}
			db := hookDB(t, bs...)
			configure(t, db, tc.cfg)
			var got []cortex.Incident
			for _, inc := range incidentsOf(t, db, tc.params) {
				if inc.SignalCounts[cortex.SignalHookNotInvoked] > 0 {
					got = append(got, inc)
				}
			}
			if !tc.want {
				if len(got) != 0 {
					t.Fatalf("want none, got %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one not-invoked incident, got %+v", got)
			}
			inc := got[0]
			if inc.SessionID != "missed" || inc.EvidenceBasis != cortex.EvidenceConfig || inc.HookSource != tc.cfg.Hook.HookSource ||
				inc.EventCount != 2 || len(inc.AnchorLogIDs) != 2 || inc.Label == "high" || inc.Label == "critical" {
				t.Errorf("incident %+v", inc)
			}
			// The bundle shows the configured entry and the Bash calls
			// that should have triggered it; nothing claims it ran.
			inv, err := New(db).Investigate(context.Background(), hookLens{}, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{IncidentID: inc.ID}})
			if err != nil || len(inv.Bundles) != 1 {
				t.Fatalf("investigate: %+v %v", inv, err)
			}
			b := inv.Bundles[0]
			if len(b.HookEvents) != 1 || b.HookEvents[0].EvidenceKind != cortex.EvidenceConfig || len(b.NearbyToolCalls) != 2 ||
				len(b.SignalAnchors) != 2 || b.SignalAnchors[0].ToolName != "Bash" && b.SignalAnchors[0].Kind != "tool_call" {
				t.Errorf("bundle: hook events %+v, calls %d, anchors %+v", b.HookEvents, len(b.NearbyToolCalls), b.SignalAnchors)
			}
			f := b.Findings
			if !strings.HasPrefix(f.EvidenceBasis, "config_inventory only") || !strings.Contains(f.EvidenceBasis, "not proof") ||
				len(f.FailureModes) != 1 || f.FailureModes[0].Category != "hook_not_invoked" || f.FailureModes[0].Confidence != "low" {
				t.Errorf("findings %+v", f)
			}
		})
	}
}

// --- investigations ---

func investigate(t *testing.T, db *sqlite.DB, p cortex.IncidentParams) cortex.Investigation {
	t.Helper()
	inv, err := New(db).Investigate(context.Background(), hookLens{}, cortex.InvestigateParams{IncidentParams: p})
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func TestHookInvestigateLabelled(t *testing.T) {
	root := testcorpus.Labelled(t)
	db, _ := teststore.Indexed(t, root)
	ctx := context.Background()
	for _, typed := range []string{"PostToolUse:Bash", "post_tool_use:bash", "posttooluse/BASH"} {
		inv := investigate(t, db, cortex.IncidentParams{Hook: typed})
		if len(inv.Bundles) != 1 || inv.Total != 1 || inv.NoData || inv.NoIncident || inv.Matched != "hook PostToolUse:Bash" {
			t.Fatalf("%s: %+v", typed, inv)
		}
		b := inv.Bundles[0]
		inc := b.Incident
		if inc.HookName != "PostToolUse:Bash" || inc.HookEvent != "PostToolUse" || inc.EvidenceBasis != cortex.EvidenceRuntime ||
			inc.SignalCounts[cortex.SignalHookFailed] != 4 || inc.Label != "critical" || len(inc.AnchorLogIDs) != 4 {
			t.Errorf("%s: incident %+v", typed, inc)
		}
		if len(b.HookEvents) != 4 || len(b.NearbyToolCalls) != 4 || len(b.NearbyMCPEvents) != 0 || len(b.SignalAnchors) != 4 {
			t.Errorf("%s: %d hook events, %d calls, %d MCP, %d anchors", typed, len(b.HookEvents), len(b.NearbyToolCalls),
				len(b.NearbyMCPEvents), len(b.SignalAnchors))
		}
		f := b.Findings
		if len(f.FailureModes) == 0 || f.FailureModes[0].Category != "hook_command_not_found" || f.FailureModes[0].Confidence != "high" ||
			!strings.Contains(f.FailureModes[0].Why, `"exit 127"`) || !strings.Contains(f.FailureModes[0].Hint, `"PostToolUse:Bash" hook`) ||
			!strings.HasPrefix(f.EvidenceBasis, "runtime_transcript") {
			t.Errorf("%s: findings %+v", typed, f)
		}
		q := typed
		if m := (hookLens{}).matched(ctx, db, &cortex.IncidentParams{Hook: q}); m != "hook PostToolUse:Bash" {
			t.Errorf("%s: matched %q", typed, m)
		}
	}
	if m := (hookLens{}).matched(ctx, db, &cortex.IncidentParams{Hook: "post_tool_use"}); m != "hook event PostToolUse (PostToolUse:Bash)" {
		t.Errorf("event matched %q", m)
	}
	if m := (hookLens{}).matched(ctx, db, &cortex.IncidentParams{Hook: "nope"}); m != "" {
		t.Errorf("no match %q", m)
	}

	// By event: the same incident.
	if inv := investigate(t, db, cortex.IncidentParams{HookEvent: "post_tool_use"}); inv.Total != 1 || inv.Bundles[0].Incident.HookName != "PostToolUse:Bash" {
		t.Errorf("by event: %+v", inv)
	}

	// Usage without a negative signal: a low-severity summary.
	inv := investigate(t, db, cortex.IncidentParams{Hook: "session_start"})
	if !inv.NoIncident || inv.NoData || len(inv.Bundles) != 1 || !strings.Contains(inv.Message, "hook runs") ||
		inv.Matched != "hook event SessionStart (SessionStart:startup)" ||
		!strings.Contains(inv.Message, `hook "SessionStart"`) || inv.Bundles[0].Incident.Label != "low" {
		t.Errorf("usage only: %+v", inv)
	}

	// No data: say so and suggest.
	inv = investigate(t, db, cortex.IncidentParams{Hook: "PostToolUze:Bash"})
	if !inv.NoData || len(inv.Bundles) != 0 || inv.Matched != "" || !slices.Contains(inv.SuggestedFilters, `did you mean hook "PostToolUse:Bash"?`) ||
		!slices.Contains(inv.SuggestedFilters, "list hooks: cortex ai hook-events") {
		t.Errorf("no data: %+v", inv)
	}
	inv = investigate(t, db, cortex.IncidentParams{Hook: "post_tool_use", Since: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})
	if !inv.NoData || !slices.Contains(inv.SuggestedFilters, "widen the time range (since 30d, or no since)") {
		t.Errorf("no data in range: %+v", inv)
	}
}

// A hook that is only configured: the answer says so, and nothing claims
// that it ran.
func TestHookInvestigateConfigOnly(t *testing.T) {
	db := hookDB(t, claudeSession("s1", hookT0, hookRan("lint", cortex.HookSuccess)))
	configure(t, db, configured(cortex.ToolClaude, "", "Stop", "Stop", "notify", nil),
		configured(cortex.ToolCodex, "", "SessionStart", "SessionStart", "codex-hook", nil))
	inv := investigate(t, db, cortex.IncidentParams{Hook: "stop"})
	if !inv.NoIncident || len(inv.Bundles) != 1 || !strings.Contains(inv.Message, "config_inventory only") ||
		!strings.Contains(inv.Message, "not proof") {
		t.Fatalf("config only: %+v", inv)
	}
	b := inv.Bundles[0]
	if b.Incident.EvidenceBasis != cortex.EvidenceConfig || len(b.HookEvents) != 1 || b.HookEvents[0].LogID != nil {
		t.Errorf("bundle %+v", b)
	}
	f := b.Findings
	if !strings.Contains(f.EvidenceBasis, "not proof that it ran") || !slices.ContainsFunc(f.OpenQuestions, func(q string) bool {
		return strings.Contains(q, "config/trust inventory only")
	}) {
		t.Errorf("findings %+v", f)
	}
	for _, m := range f.FailureModes {
		for _, s := range []string{m.Hint, m.Why} {
			if strings.Contains(s, "executed") || strings.Contains(s, "exit ") {
				t.Errorf("%s claims a run: %q", m.Category, s)
			}
		}
	}
	// Codex: configuration only, and the answer says Codex records no runs.
	inv = investigate(t, db, cortex.IncidentParams{Hook: "session_start", Tool: cortex.ToolCodex})
	if !inv.NoIncident || len(inv.Bundles) != 1 || inv.Bundles[0].Incident.EvidenceBasis != cortex.EvidenceConfig ||
		!slices.ContainsFunc(inv.Bundles[0].Findings.OpenQuestions, func(q string) bool { return strings.Contains(q, "only Claude Code") }) {
		t.Errorf("codex: %+v", inv)
	}
	// Runtime evidence only: no data, and the configuration is named.
	inv = investigate(t, db, cortex.IncidentParams{Hook: "stop", EvidenceKind: cortex.EvidenceRuntime})
	if !inv.NoData || !strings.Contains(inv.Message, "configured") || !strings.Contains(inv.Message, "not proof") ||
		!slices.Contains(inv.SuggestedFilters, "drop the evidence_kind filter") {
		t.Errorf("runtime only: %+v", inv)
	}
}

// The real corpus: its two exit-127 runs are incidents, and nothing else
// is: busy sessions are not "too often", and the Stop run the user's own
// interrupt cancelled (written in the same millisecond) is the user
// stopping the agent, not the hook failing.
func TestHookRealCorpus(t *testing.T) {
	root := testcorpus.Real(t)
	db, _ := teststore.Indexed(t, root)
	list, err := New(db).Incidents(context.Background(), hookLens{}, cortex.IncidentParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, inc := range list.Incidents {
		got = append(got, fmt.Sprintf("%s %s %v", inc.HookName, inc.EvidenceBasis, inc.SignalsPresent))
	}
	slices.Sort(got)
	want := []string{
		"Stop runtime_transcript [hook_failed]",             // exit 127
		"UserPromptSubmit runtime_transcript [hook_failed]", // exit 127
	}
	if !slices.Equal(got, want) {
		t.Fatalf("real corpus hook incidents:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	statuses := map[string]bool{}
	for _, inc := range list.Incidents {
		inv, err := New(db).Investigate(context.Background(), hookLens{}, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{IncidentID: inc.ID}})
		if err != nil || len(inv.Bundles) != 1 {
			t.Fatal(inv, err)
		}
		for _, ev := range inv.Bundles[0].HookEvents {
			if ev.Status != cortex.HookSuccess {
				statuses[fmt.Sprintf("%s %v", ev.Status, ev.ExitCode != nil && *ev.ExitCode == 127)] = true
			}
		}
		if f := inv.Bundles[0].Findings; f.FailureModes[0].Category != "hook_command_not_found" || !strings.HasPrefix(f.EvidenceBasis, "runtime_transcript") {
			t.Errorf("%s: findings %+v", inc.ID, f)
		}
	}
	if !statuses["failed true"] || statuses["cancelled false"] {
		t.Errorf("statuses %v", statuses)
	}
}
