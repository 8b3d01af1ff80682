package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

// hookRun is a runtime hook event for a fixture record.
func hookRun(event, name, command, status, kind string) cortex.HookEvent {
	return cortex.HookEvent{HookEvent: event, HookName: name, Command: command, Status: status,
		EvidenceKind: cortex.EvidenceRuntime, Meta: map[string]string{"attachment_type": kind}}
}

// hookFixture stores two Claude sessions (sess-1 in /home/u/proj, sess-2
// in /other) with hook runs, a Bash call and an MCP call, and three
// configured hooks (user-level, project-level, a Codex trust hash).
func hookFixture(t *testing.T) *DB {
	t.Helper()
	db, _ := openTestDB(t)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	s1 := []cortex.ImportRecord{
		rec("u1", "", cortex.RoleUser, "run the tests", at(0)),
		withEvents(rec("h1", "", cortex.RoleHook, "hook SessionStart:startup success", at(0)), cortex.Events{Hooks: []cortex.HookEvent{
			hookRun("SessionStart", "SessionStart:startup", "bd prime", cortex.HookSuccess, "hook_success")}}),
		withEvents(rec("ctx", "", cortex.RoleHook, "context", at(0)), cortex.Events{Hooks: []cortex.HookEvent{
			hookRun("SessionStart", "SessionStart", "", cortex.HookSuccess, "hook_additional_context")}}),
		withEvents(rec("call", "", cortex.RoleToolCall, "Bash go test", at(1)), cortex.Events{Tools: []cortex.ToolEvent{
			{CallID: "B1", ToolName: "Bash", EventKind: cortex.ToolClaudeUse, HasCall: true}}}),
		withEvents(rec("mcp", "", cortex.RoleToolCall, "labby search", at(2)), cortex.Events{Tools: []cortex.ToolEvent{
			{CallID: "M1", ToolName: "mcp__labby__search", MCPServer: "labby", MCPTool: "search", EventKind: cortex.ToolClaudeUse, HasCall: true}}}),
		withEvents(rec("h2", "", cortex.RoleHook, "hook PostToolUse:Bash failed exit 127", at(3)), cortex.Events{Hooks: []cortex.HookEvent{
			hookRun("PostToolUse", "PostToolUse:Bash", "marvin check", cortex.HookFailed, "hook_non_blocking_error")}}),
	}
	s2 := []cortex.ImportRecord{
		withEvents(rec("h3", "", cortex.RoleHook, "hook PostToolUse:Bash success", at(30)), cortex.Events{Hooks: []cortex.HookEvent{
			hookRun("PostToolUse", "PostToolUse:Bash", "marvin check", cortex.HookSuccess, "hook_success")}}),
	}
	for i := range s2 {
		s2[i].Entry.SessionID, s2[i].Entry.Project = "sess-2", "/other"
	}
	mustImport(t, db, batch("/t/s1.jsonl", s1...), batch("/t/s2.jsonl", s2...))
	cfg := []ConfigHook{
		{Tool: cortex.ToolClaude, Hook: cortex.HookEvent{HookEvent: "PostToolUse", HookName: "PostToolUse:Bash", HookSource: "claude:user:settings.json",
			Command: "marvin check", Status: cortex.HookConfigured, EvidenceKind: cortex.EvidenceConfig, Meta: map[string]string{"matcher": "Bash"}}},
		{Tool: cortex.ToolClaude, Project: "/home/u/proj", Hook: cortex.HookEvent{HookEvent: "Stop", HookName: "Stop",
			HookSource: "claude:project:settings.json", Command: "lint", Status: cortex.HookConfigured, EvidenceKind: cortex.EvidenceConfig}},
		{Tool: cortex.ToolCodex, Hook: cortex.HookEvent{HookEvent: "hook_trust_state", HookName: "/h/.codex/hooks.json:stop:0:0",
			HookSource: "codex:user:config.toml[hooks.state]", TrustedHash: "sha256:x", Status: cortex.HookConfigured, EvidenceKind: cortex.EvidenceTrust}},
	}
	if _, _, err := db.StoreConfigHooks(context.Background(), "host-a", at(60), cfg); err != nil {
		t.Fatal(err)
	}
	return db
}

func hookNames(cs []HookCandidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestHookCandidatesAreRuntimeOnlyAndFiltered(t *testing.T) {
	db := hookFixture(t)
	ctx := context.Background()
	all, err := db.HookCandidates(ctx, HookFilter{CandidateFilter: CandidateFilter{Limit: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"PostToolUse:Bash", "PostToolUse:Bash", "SessionStart", "SessionStart:startup"}; !slices.Equal(hookNames(all), want) {
		t.Fatalf("candidates %v, want %v (newest first, runtime only)", hookNames(all), want)
	}
	for _, c := range all {
		if c.LogID == 0 || c.Session == "" || c.EvidenceKind != cortex.EvidenceRuntime {
			t.Errorf("not a runtime row: %+v", c)
		}
	}
	if all[1].Meta["attachment_type"] != "hook_non_blocking_error" || all[1].Command != "marvin check" || all[1].Status != cortex.HookFailed {
		t.Errorf("fields: %+v", all[1])
	}
	for _, tc := range []struct {
		f    HookFilter
		want []string
	}{
		{HookFilter{Events: []string{"SessionStart"}}, []string{"SessionStart", "SessionStart:startup"}},
		{HookFilter{Names: []string{"PostToolUse:Bash"}, CandidateFilter: CandidateFilter{Session: "sess-1"}}, []string{"PostToolUse:Bash"}},
		{HookFilter{Names: []string{}}, nil}, // resolved to nothing
		{HookFilter{Source: "claude:user:settings.json"}, nil},
		{HookFilter{CandidateFilter: CandidateFilter{Since: t0.Add(10 * time.Minute)}}, []string{"PostToolUse:Bash"}},
	} {
		tc.f.Limit = 100
		got, err := db.HookCandidates(ctx, tc.f)
		if err != nil || !slices.Equal(hookNames(got), tc.want) {
			t.Errorf("%+v: %v %v, want %v", tc.f, hookNames(got), err, tc.want)
		}
	}
	if got, _ := db.HookCandidates(ctx, HookFilter{CandidateFilter: CandidateFilter{Limit: 1}}); len(got) != 1 {
		t.Errorf("limit: %d rows", len(got))
	}
}

func TestHookConfigRows(t *testing.T) {
	db := hookFixture(t)
	ctx := context.Background()
	get := func(f HookFilter) []string {
		t.Helper()
		f.Limit = 100
		rows, err := db.HookConfigRows(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if r.LogID != 0 || r.Session != "" || r.Status != cortex.HookConfigured {
				t.Errorf("not a configuration row: %+v", r)
			}
		}
		out := hookNames(rows)
		slices.Sort(out)
		return out
	}
	if got := get(HookFilter{}); len(got) != 3 {
		t.Errorf("all configuration rows: %v", got)
	}
	// A project sees its own and the user-level configuration.
	if got := get(HookFilter{CandidateFilter: CandidateFilter{Project: "/home/u/proj", Tool: cortex.ToolClaude}}); !slices.Equal(got, []string{"PostToolUse:Bash", "Stop"}) {
		t.Errorf("project: %v", got)
	}
	if got := get(HookFilter{CandidateFilter: CandidateFilter{Project: "/other", Tool: cortex.ToolClaude}}); !slices.Equal(got, []string{"PostToolUse:Bash"}) {
		t.Errorf("other project: %v", got)
	}
	// A session filter does not exclude configuration (it has none).
	if got := get(HookFilter{CandidateFilter: CandidateFilter{Session: "sess-1"}, EvidenceKind: cortex.EvidenceTrust}); len(got) != 1 {
		t.Errorf("trust rows: %v", got)
	}
	// Configured during the range: first seen before until, last seen
	// after since.
	if got := get(HookFilter{CandidateFilter: CandidateFilter{Until: t0.Add(59 * time.Minute)}}); len(got) != 0 {
		t.Errorf("before first seen: %v", got)
	}
	if got := get(HookFilter{CandidateFilter: CandidateFilter{Since: t0.Add(61 * time.Minute)}}); len(got) != 0 {
		t.Errorf("after last seen: %v", got)
	}
	if got := get(HookFilter{Names: []string{"Stop"}, CandidateFilter: CandidateFilter{Since: t0}}); !slices.Equal(got, []string{"Stop"}) {
		t.Errorf("by name: %v", got)
	}
	rows, _ := db.HookConfigRows(ctx, HookFilter{Names: []string{"PostToolUse:Bash"}, CandidateFilter: CandidateFilter{Limit: 1}})
	if len(rows) != 1 || rows[0].Meta["matcher"] != "Bash" || rows[0].Command != "marvin check" || rows[0].LastSeen.IsZero() {
		t.Errorf("fields: %+v", rows)
	}
}

func TestHookNamesAndEventsByID(t *testing.T) {
	db := hookFixture(t)
	ctx := context.Background()
	names, err := db.HookNames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []HookName{{Event: "PostToolUse", Name: "PostToolUse:Bash"}, {Event: "SessionStart", Name: "SessionStart"},
		{Event: "SessionStart", Name: "SessionStart:startup"}, {Event: "Stop", Name: "Stop"},
		{Event: "hook_trust_state", Name: "/h/.codex/hooks.json:stop:0:0"}}
	if !slices.Equal(names, want) {
		t.Errorf("names %v, want %v", names, want)
	}
	all, _ := db.HookCandidates(ctx, HookFilter{CandidateFilter: CandidateFilter{Limit: 100}})
	ids := []int64{999999}
	for _, c := range all {
		ids = append(ids, c.ID)
	}
	rows, err := db.HookEventsByID(ctx, ids)
	if err != nil || len(rows) != len(all) {
		t.Fatalf("by id: %d rows, %v", len(rows), err)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].Timestamp < rows[i-1].Timestamp {
			t.Errorf("not in time order: %v", rows)
		}
	}
	if r := rows[len(rows)-2]; r.HookName != "PostToolUse:Bash" || r.LogID == nil || r.Metadata["attachment_type"] == "" {
		t.Errorf("row %+v", r)
	}
	// More ids than one IN list holds.
	many := make([]int64, 0, 1200)
	for i := range 1200 {
		many = append(many, int64(i+1))
	}
	if rows, err := db.HookEventsByID(ctx, many); err != nil || len(rows) != 7 {
		t.Errorf("chunked: %d rows, %v", len(rows), err)
	}
	if rows, err := db.HookEventsByID(ctx, nil); err != nil || len(rows) != 0 {
		t.Errorf("no ids: %v %v", rows, err)
	}
}

func TestHookSessionReads(t *testing.T) {
	db := hookFixture(t)
	ctx := context.Background()
	s1 := SessionScope{Tool: cortex.ToolClaude, Session: "sess-1", Host: "host-a"}
	recs, err := db.SessionHookRecords(ctx, s1)
	slices.SortFunc(recs, func(a, b HookRecord) int { return strings.Compare(a.Event+a.Name+a.Kind, b.Event+b.Name+b.Kind) })
	if want := []HookRecord{{Event: "PostToolUse", Name: "PostToolUse:Bash", Kind: "hook_non_blocking_error"},
		{Event: "SessionStart", Name: "SessionStart:startup", Kind: "hook_success"}, {Event: "SessionStart", Name: "SessionStart", Kind: "hook_additional_context"}}; err != nil || !slices.Equal(recs, want) {
		t.Errorf("session hook records %v %v", recs, err)
	}
	// Record kinds without an attachment type.
	db2, _ := openTestDB(t)
	mustImport(t, db2, batch("/t/k.jsonl",
		withEvents(rec("p", "", cortex.RoleHook, "progress", t0), cortex.Events{Hooks: []cortex.HookEvent{{HookEvent: "Stop", HookName: "Stop",
			Status: cortex.HookUnknown, EvidenceKind: cortex.EvidenceRuntime, Meta: map[string]string{"phase": "started"}}}}),
		withEvents(rec("s", "", cortex.RoleHook, "summary", t0), cortex.Events{Hooks: []cortex.HookEvent{{HookEvent: "Stop", HookName: "Stop",
			Status: cortex.HookSuccess, EvidenceKind: cortex.EvidenceRuntime, Meta: map[string]string{"hook_count": "1"}}}})))
	recs, _ = db2.SessionHookRecords(ctx, s1)
	slices.SortFunc(recs, func(a, b HookRecord) int { return strings.Compare(a.Kind, b.Kind) })
	if want := []HookRecord{{Event: "Stop", Name: "Stop", Kind: "hook_progress"}, {Event: "Stop", Name: "Stop", Kind: "stop_hook_summary"}}; !slices.Equal(recs, want) {
		t.Errorf("record kinds %v", recs)
	}
	if recs, _ := db.SessionHookRecords(ctx, SessionScope{Tool: cortex.ToolClaude, Session: "nope", Host: "host-a"}); len(recs) != 0 {
		t.Errorf("unknown session: %v", recs)
	}
	spans, err := db.HookCommandRuns(ctx, cortex.ToolClaude, "host-a", "PostToolUse", "marvin check", 10)
	if err != nil || len(spans) != 2 || spans[0].Session != "sess-1" || spans[1].Session != "sess-2" || spans[1].Project != "/other" ||
		spans[0].Runs != 1 || !spans[0].First.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("command runs %+v %v", spans, err)
	}
	if spans, _ := db.HookCommandRuns(ctx, cortex.ToolClaude, "host-a", "PostToolUse", "other", 10); len(spans) != 0 {
		t.Errorf("other command: %+v", spans)
	}
	between := func(f SessionFilter) []string {
		t.Helper()
		f.Tool, f.Host, f.Limit = cortex.ToolClaude, "host-a", 10
		ss, err := db.SessionsBetween(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range ss {
			out = append(out, s.Session)
		}
		return out
	}
	if got := between(SessionFilter{After: t0.Add(-time.Minute), Before: t0.Add(time.Hour)}); !slices.Equal(got, []string{"sess-1", "sess-2"}) {
		t.Errorf("between: %v", got)
	}
	if got := between(SessionFilter{After: t0, Before: t0.Add(time.Hour)}); !slices.Equal(got, []string{"sess-2"}) {
		t.Errorf("strictly after: %v", got)
	}
	if got := between(SessionFilter{After: t0.Add(-time.Minute), Before: t0.Add(time.Hour), Project: "/other"}); !slices.Equal(got, []string{"sess-2"}) {
		t.Errorf("project: %v", got)
	}
	if got := between(SessionFilter{After: t0.Add(-time.Minute), Before: t0.Add(time.Hour), Until: t0.Add(10 * time.Minute)}); !slices.Equal(got, []string{"sess-1"}) {
		t.Errorf("until: %v", got)
	}
	calls, err := db.SessionToolEvents(ctx, s1, t0, t0.Add(time.Hour), false, 10)
	if err != nil || len(calls) != 2 || calls[0].ToolName != "Bash" || calls[0].CallLogID == nil {
		t.Errorf("tool events %+v %v", calls, err)
	}
	mcp, err := db.SessionToolEvents(ctx, s1, t0, t0.Add(time.Hour), true, 10)
	if err != nil || len(mcp) != 1 || mcp[0].MCPServer != "labby" {
		t.Errorf("MCP events %+v %v", mcp, err)
	}
}

func TestHookUsage(t *testing.T) {
	db := hookFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		f                      HookFilter
		runs, sessions, config int64
	}{
		// The additional-context record is output, not a run; the trust
		// row counts as configuration.
		{HookFilter{}, 3, 2, 3},
		{HookFilter{Names: []string{"PostToolUse:Bash"}}, 2, 2, 1},
		{HookFilter{Names: []string{"Stop"}}, 0, 0, 1},
		{HookFilter{Names: []string{"Stop"}, EvidenceKind: cortex.EvidenceRuntime}, 0, 0, 0},
		{HookFilter{Events: []string{}}, 0, 0, 0},
		// Within one session: no configuration.
		{HookFilter{CandidateFilter: CandidateFilter{Session: "sess-1"}}, 2, 1, 0},
	} {
		u, err := db.HookUsage(ctx, tc.f)
		if err != nil || u.Runs != tc.runs || u.Sessions != tc.sessions || u.ConfigRows != tc.config {
			t.Errorf("%+v: %+v %v, want %d runs %d sessions %d config", tc.f, u, err, tc.runs, tc.sessions, tc.config)
		}
	}
	u, _ := db.HookUsage(ctx, HookFilter{Names: []string{"Stop"}})
	if fmt.Sprint(u.Sources) != "[claude:project:settings.json]" {
		t.Errorf("sources %v", u.Sources)
	}
}
