package sqlpart

import (
	"reflect"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

func TestFilters(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		name  string
		w     Where
		sql   string
		args  []any
		empty bool
	}{
		{"no filter", Candidate(store.CandidateFilter{}, ""), "", nil, false},
		{"candidate", Candidate(store.CandidateFilter{Tool: "claude", Host: "h", Since: t0}, "l."),
			" AND l.ai_tool = ? AND l.hostname = ? AND l.timestamp >= ?", []any{"claude", "h", "2026-01-02T03:04:05.000Z"}, false},
		{"events", Event(cortex.EventFilter{Project: "/p", Session: "s", Until: t0}),
			" AND ai_project = ? AND ai_session_id = ? AND timestamp < ?", []any{"/p", "s", "2026-01-02T03:04:05.000Z"}, false},
		{"skill as stored", SkillEvents(cortex.EventFilter{}, "search", nil, "p"), " AND skill_name = ? AND skill_plugin = ?",
			[]any{"search", "p"}, false},
		{"skill as typed", SkillEvents(cortex.EventFilter{}, "search", []string{"search", "entire:search"}, ""),
			" AND skill_name IN (?,?)", []any{"search", "entire:search"}, false},
		{"hook", HookEvents(cortex.HookEventParams{Hook: "Stop", Status: "failed"}),
			" AND (hook_name = ? OR hook_event = ?) AND status = ?", []any{"Stop", "Stop", "failed"}, false},
		{"mcp", MCP(store.MCPFilter{Server: "labby", MCPTool: "search"}),
			" AND mcp_server IS NOT NULL AND mcp_server = ? AND mcp_tool = ?", []any{"labby", "search"}, false},
	} {
		if c.w.SQL() != c.sql || !reflect.DeepEqual(c.w.Args, c.args) {
			t.Errorf("%s: %q %v, want %q %v", c.name, c.w.SQL(), c.w.Args, c.sql, c.args)
		}
	}
	var w Where
	if HookSubject(store.HookFilter{Events: []string{}}, &w) || HookSubject(store.HookFilter{Names: []string{}}, &w) {
		t.Error("an empty, non-nil subject list must match nothing")
	}
	if !HookSubject(store.HookFilter{Events: []string{"Stop", "PreToolUse"}, Source: "s"}, &w) ||
		w.SQL() != " AND hook_event IN (?,?) AND hook_source = ?" {
		t.Errorf("hook subject %q", w.SQL())
	}
	if c, ok := HookConfig(store.HookFilter{CandidateFilter: store.CandidateFilter{Project: "/p", Session: "ignored"}}); !ok ||
		c.SQL() != " AND (ai_project = ? OR ai_project IS NULL) AND evidence_kind IN (?, ?)" {
		t.Errorf("hook config %q", c.SQL())
	}
	if l, err := Logs(store.LogParams{Severity: cortex.SevError}); err != nil || len(l.Args) != 4 {
		t.Errorf("logs at err or worse: %v %v", l.Args, err)
	}
	if _, err := Logs(store.LogParams{Severity: "loud"}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("unknown severity: %v", err)
	}
}

func TestSessionRange(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := store.SessionScope{Tool: cortex.ToolClaude, Session: "s1", Host: "h"}
	const q = `SELECT id FROM ai_user_events WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ?`
	for _, c := range []struct {
		name     string
		from, to time.Time
		sql      string
		args     []any
	}{
		{"open", time.Time{}, time.Time{}, q, []any{"s1", "claude", "h"}},
		{"from", t0, time.Time{}, q + ` AND timestamp >= ?`, []any{"s1", "claude", "h", "2026-01-02T03:04:05.000Z"}},
		{"to", time.Time{}, t0, q + ` AND timestamp <= ?`, []any{"s1", "claude", "h", "2026-01-02T03:04:05.000Z"}},
		{"both", t0, t0.Add(time.Minute), q + ` AND timestamp >= ? AND timestamp <= ?`,
			[]any{"s1", "claude", "h", "2026-01-02T03:04:05.000Z", "2026-01-02T03:05:05.000Z"}},
	} {
		sql, args := SessionRange(q, s, c.from, c.to)
		if sql != c.sql || !reflect.DeepEqual(args, c.args) {
			t.Errorf("%s: %q %v, want %q %v", c.name, sql, args, c.sql, c.args)
		}
	}
}
