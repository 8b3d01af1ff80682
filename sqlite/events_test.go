package sqlite

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/toolcall"
)

func bptr(b bool) *bool { return &b }
func iptr(n int) *int   { return &n }

// withEvents attaches events to a record.
func withEvents(r cortex.ImportRecord, ev cortex.Events) cortex.ImportRecord {
	r.Events = ev
	return r
}

type mcpRow struct {
	callLog, resultLog       sql.NullInt64
	toolName, status, kind   string
	resultKind, server, tool sql.NullString
	duration, isErr, exit    sql.NullInt64
	args, out, errText       sql.NullString
	ts, callTS, resultTS     sql.NullString
}

func readMCP(t *testing.T, db *DB, callID string) mcpRow {
	t.Helper()
	var r mcpRow
	err := db.r.QueryRow(`SELECT call_log_id, result_log_id, tool_name, status, event_kind, result_kind, mcp_server, mcp_tool,
		duration_ms, is_error, exit_code, arguments_json, output_preview, error_text, timestamp, call_timestamp, result_timestamp
		FROM ai_mcp_events WHERE call_id = ?`, callID).Scan(&r.callLog, &r.resultLog, &r.toolName, &r.status, &r.kind,
		&r.resultKind, &r.server, &r.tool, &r.duration, &r.isErr, &r.exit, &r.args, &r.out, &r.errText, &r.ts, &r.callTS, &r.resultTS)
	if err != nil {
		t.Fatalf("read call %s: %v", callID, err)
	}
	return r
}

var t0 = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

func callEvent(id, name string) cortex.Events {
	return cortex.Events{Tools: []cortex.ToolEvent{{CallID: id, ToolName: name, MCPServer: "labby", MCPTool: "search",
		EventKind: cortex.ToolCodexCall, HasCall: true, ArgumentsJSON: `{"q":"x"}`}}}
}

func resultEvent(id, status string, isErr bool, text string) cortex.Events {
	e := cortex.ToolEvent{CallID: id, EventKind: cortex.ToolCodexOutput, HasResult: true, Status: status}
	if status != cortex.CallUnknown {
		e.IsError = bptr(isErr)
	}
	if isErr {
		e.ErrorText = text
	} else {
		e.OutputPreview = text
	}
	return cortex.Events{Tools: []cortex.ToolEvent{e}}
}

// The call and its result merge into one row whichever comes first, in one
// batch or in separate transactions; duration is the time between them.
func TestToolEventsMergeInAnyOrder(t *testing.T) {
	for _, order := range []string{"call-first", "result-first", "separate-transactions"} {
		t.Run(order, func(t *testing.T) {
			db, _ := openTestDB(t)
			call := withEvents(rec("c", "", cortex.RoleToolCall, "call", t0), callEvent("call_1", "mcp__labby__search"))
			result := withEvents(rec("r", "", cortex.RoleToolResult, "result", t0.Add(1500*time.Millisecond)),
				resultEvent("call_1", cortex.CallError, true, "timed out"))
			var res []cortex.ImportResult
			switch order {
			case "call-first":
				res = mustImport(t, db, batch("/t/a.jsonl", call, result))
			case "result-first":
				res = mustImport(t, db, batch("/t/a.jsonl", result, call))
			default:
				res = append(mustImport(t, db, batch("/t/a.jsonl", call)), mustImport(t, db, batch("/t/a.jsonl", result))...)
			}
			var total cortex.EventCounts
			for _, r := range res {
				total.Add(r.Events)
			}
			if total.Tools != 1 || total.Merged != 1 {
				t.Errorf("counts %+v: want 1 new row and 1 merged side", total)
			}
			if n := count(t, db, `SELECT count(*) FROM ai_mcp_events`); n != 1 {
				t.Fatalf("%d rows for one call", n)
			}
			r := readMCP(t, db, "call_1")
			callLog, resultLog := logID(t, db, "/t/a.jsonl", "c"), logID(t, db, "/t/a.jsonl", "r")
			if r.callLog.Int64 != callLog || r.resultLog.Int64 != resultLog {
				t.Errorf("log ids %v/%v, want %d/%d", r.callLog, r.resultLog, callLog, resultLog)
			}
			if r.toolName != "mcp__labby__search" || r.server.String != "labby" || r.status != "error" || r.isErr.Int64 != 1 ||
				r.errText.String != "timed out" || r.args.String != `{"q":"x"}` || r.kind != cortex.ToolCodexCall ||
				r.resultKind.String != cortex.ToolCodexOutput {
				t.Errorf("merged row %+v", r)
			}
			if !r.duration.Valid || r.duration.Int64 != 1500 {
				t.Errorf("duration %v, want 1500 ms", r.duration)
			}
			if r.ts.String != cortex.FormatTime(t0) {
				t.Errorf("timestamp %s, want the call's", r.ts.String)
			}
		})
	}
}

func TestToolEventStatusPrecedence(t *testing.T) {
	db, _ := openTestDB(t)
	// A pending call, then an outcome-less text result (unknown), then a
	// definitive failure (mcp_tool_call_end), then another outcome-less
	// result: the failure stays.
	mustImport(t, db, batch("/t/a.jsonl", withEvents(rec("c", "", cortex.RoleToolCall, "call", t0), callEvent("k", "mcp__labby__search"))))
	if r := readMCP(t, db, "k"); r.status != cortex.CallPending || r.isErr.Valid {
		t.Fatalf("call only: %+v", r)
	}
	mustImport(t, db, batch("/t/a.jsonl", withEvents(rec("o1", "", cortex.RoleToolResult, "out", t0.Add(time.Second)),
		resultEvent("k", cortex.CallUnknown, false, "tool call failed: request timed out"))))
	if r := readMCP(t, db, "k"); r.status != cortex.CallUnknown || r.isErr.Valid {
		t.Errorf("unknown result: %+v", r)
	}
	mustImport(t, db, batch("/t/a.jsonl", withEvents(rec("o2", "", cortex.RoleToolResult, "end", t0.Add(2*time.Second)),
		resultEvent("k", cortex.CallError, true, "request timed out after 30s"))))
	mustImport(t, db, batch("/t/a.jsonl", withEvents(rec("o3", "", cortex.RoleToolResult, "out", t0.Add(3*time.Second)),
		resultEvent("k", cortex.CallUnknown, false, "later text"))))
	r := readMCP(t, db, "k")
	if r.status != cortex.CallError || r.isErr.Int64 != 1 || r.errText.String != "request timed out after 30s" {
		t.Errorf("a definitive failure was overwritten: %+v", r)
	}
}

// Sessionless events dedupe too (the unique key coalesces NULL sessions),
// and a NULL-session call never merges with a session's call.
func TestToolEventsWithoutSessionDedupe(t *testing.T) {
	db, _ := openTestDB(t)
	r1 := withEvents(rec("a", "", cortex.RoleToolCall, "x", t0), callEvent("same", "Bash"))
	r1.Entry.SessionID = ""
	r2 := withEvents(rec("b", "", cortex.RoleToolCall, "y", t0), callEvent("same", "Bash"))
	r2.Entry.SessionID = ""
	r3 := withEvents(rec("c", "", cortex.RoleToolCall, "z", t0), callEvent("same", "Bash"))
	mustImport(t, db, batch("/t/a.jsonl", r1, r2, r3))
	if n := count(t, db, `SELECT count(*) FROM ai_mcp_events`); n != 2 {
		t.Errorf("%d rows; want 2 (no session, and sess-1)", n)
	}
}

func TestSkillAndHookEventsAreIdempotentAndReplaced(t *testing.T) {
	db, _ := openTestDB(t)
	ev := cortex.Events{
		Skills: []cortex.SkillEvent{{SkillName: "lavra:lavra-plan", SkillPlugin: "lavra", EventKind: cortex.SkillClaudeAttribution,
			EvidenceKind: cortex.EvidenceStructured, Meta: map[string]string{"field": "attributionSkill"}}},
		Hooks: []cortex.HookEvent{{HookEvent: "PostToolUse", HookName: "PostToolUse:Bash", Command: "lint", Status: cortex.HookFailed,
			ExitCode: iptr(127), EvidenceKind: cortex.EvidenceRuntime}},
	}
	r := withEvents(rec("k", "v1", cortex.RoleAssistant, "text", t0), ev)
	res := mustImport(t, db, batch("/t/a.jsonl", r))
	if res[0].Events.Skills != 1 || res[0].Events.Hooks != 1 {
		t.Fatalf("counts %+v", res[0].Events)
	}
	// The same record again: nothing new.
	res = mustImport(t, db, batch("/t/a.jsonl", r))
	if res[0].Duplicates != 1 || res[0].Events != (cortex.EventCounts{}) {
		t.Errorf("re-import: %+v", res[0])
	}
	// The record changed (last write wins): its events are rebuilt from
	// the new version.
	changed := withEvents(rec("k", "v2", cortex.RoleAssistant, "text2", t0), cortex.Events{
		Skills: []cortex.SkillEvent{{SkillName: "verify", EventKind: cortex.SkillClaudeAttribution, EvidenceKind: cortex.EvidenceStructured}}})
	mustImport(t, db, batch("/t/a.jsonl", changed))
	if n := count(t, db, `SELECT count(*) FROM ai_skill_events WHERE skill_name = 'verify'`); n != 1 {
		t.Error("the changed record's skill event is missing")
	}
	if n := count(t, db, `SELECT count(*) FROM ai_skill_events WHERE skill_name = 'lavra:lavra-plan'`); n != 0 {
		t.Error("the replaced version's skill event is still there")
	}
	if n := count(t, db, `SELECT count(*) FROM ai_hook_events`); n != 0 {
		t.Error("the replaced version's hook event is still there")
	}
	list, err := db.SkillEvents(context.Background(), cortex.SkillEventParams{EventFilter: cortex.EventFilter{Limit: 10}, Skill: "verify"})
	if err != nil || len(list.Events) != 1 || list.Events[0].Tool != cortex.ToolClaude || list.Events[0].SessionID != "sess-1" {
		t.Errorf("listing: %+v %v", list, err)
	}
}

func TestConfigHooksInsertThenRefresh(t *testing.T) {
	db, _ := openTestDB(t)
	hooks := []ConfigHook{
		{Tool: cortex.ToolClaude, Hook: cortex.HookEvent{HookEvent: "Stop", HookName: "Stop", HookSource: "claude:user:settings.json",
			Command: "a", Status: cortex.HookConfigured, EvidenceKind: cortex.EvidenceConfig}},
		// Same event and matcher, another command: a distinct hook.
		{Tool: cortex.ToolClaude, Hook: cortex.HookEvent{HookEvent: "Stop", HookName: "Stop", HookSource: "claude:user:settings.json",
			Command: "b", Status: cortex.HookConfigured, EvidenceKind: cortex.EvidenceConfig}},
		// The same hook in two projects: two rows.
		{Tool: cortex.ToolClaude, Project: "/p1", Hook: cortex.HookEvent{HookEvent: "Stop", HookSource: "claude:project:settings.json",
			Command: "c", Status: cortex.HookConfigured, EvidenceKind: cortex.EvidenceConfig}},
		{Tool: cortex.ToolClaude, Project: "/p2", Hook: cortex.HookEvent{HookEvent: "Stop", HookSource: "claude:project:settings.json",
			Command: "c", Status: cortex.HookConfigured, EvidenceKind: cortex.EvidenceConfig}},
	}
	ins, ref, err := db.StoreConfigHooks(context.Background(), "host-a", t0, hooks)
	if err != nil || ins != 4 || ref != 0 {
		t.Fatalf("first collection: %d inserted, %d refreshed, %v", ins, ref, err)
	}
	ins, ref, err = db.StoreConfigHooks(context.Background(), "host-a", t0.Add(time.Hour), hooks[:2])
	if err != nil || ins != 0 || ref != 2 {
		t.Fatalf("second collection: %d inserted, %d refreshed, %v", ins, ref, err)
	}
	if n := count(t, db, `SELECT count(*) FROM ai_hook_events WHERE log_id IS NULL AND ai_session_id IS NULL AND timestamp = ? AND last_seen = ?`,
		cortex.FormatTime(t0), cortex.FormatTime(t0.Add(time.Hour))); n != 2 {
		t.Errorf("%d rows kept their first-seen time and moved last_seen", n)
	}
	list, err := db.HookEvents(context.Background(), cortex.HookEventParams{EventFilter: cortex.EventFilter{Limit: 10}, EvidenceKind: cortex.EvidenceConfig})
	if err != nil || len(list.Events) != 4 || list.Events[0].LogID != nil {
		t.Errorf("listing: %+v %v", list, err)
	}
}

// Every stored call carries the facts of its merged row, whichever way its
// sides met: in one record, folded in Go within a transaction, or merged
// by the upsert across transactions (derived again before the commit).
// Sides that change nothing keep the facts.
func TestCallFactsFollowTheMergedRow(t *testing.T) {
	shell := func(id string, status string, isErr bool, out string) (cortex.Events, cortex.Events) {
		call := cortex.Events{Tools: []cortex.ToolEvent{{CallID: id, ToolName: "Bash", EventKind: cortex.ToolClaudeUse, HasCall: true,
			ArgumentsJSON: `{"command":"npm test | head -5"}`}}}
		res := cortex.ToolEvent{CallID: id, EventKind: cortex.ToolClaudeResult, HasResult: true, Status: status, IsError: bptr(isErr)}
		if isErr {
			res.ErrorText = out
		} else {
			res.OutputPreview = out
		}
		return call, cortex.Events{Tools: []cortex.ToolEvent{res}}
	}
	for _, order := range []string{"one-batch", "separate-transactions", "result-first-separately"} {
		t.Run(order, func(t *testing.T) {
			db, _ := openTestDB(t)
			callEv, resEv := shell("toolu_1", cortex.CallSuccess, false, "Error: Cannot find module 'vitest'")
			call := withEvents(rec("c", "", cortex.RoleToolCall, "call", t0), callEv)
			result := withEvents(rec("r", "", cortex.RoleToolResult, "result", t0.Add(time.Second)), resEv)
			switch order {
			case "one-batch":
				mustImport(t, db, batch("/t/a.jsonl", call, result))
			case "separate-transactions":
				mustImport(t, db, batch("/t/a.jsonl", call))
				if f := storedFacts(t, db, "toolu_1"); f.Class != toolcall.ClassUnknown || f.Op != "Bash npm test" {
					t.Fatalf("a pending call: %+v", f)
				}
				mustImport(t, db, batch("/t/a.jsonl", result))
			default:
				mustImport(t, db, batch("/t/a.jsonl", result))
				mustImport(t, db, batch("/t/a.jsonl", call))
			}
			got := storedFacts(t, db, "toolu_1")
			want := sqlFacts{Facts: toolcall.Read(toolcall.Call{ToolName: "Bash", Status: cortex.CallSuccess,
				Arguments: `{"command":"npm test | head -5"}`, Output: "Error: Cannot find module 'vitest'"}), Version: toolcall.Version}
			if got != want {
				t.Errorf("stored %+v, want %+v", got, want)
			}
			if want.Class != toolcall.ClassFailedInOutput {
				t.Fatalf("the case is not a masked failure: %+v", want)
			}
			// A stored call read again by an older binary's rules is
			// found stale; storing facts clears it.
			raw := rawConn(t, db.Path())
			if _, err := raw.Exec(`UPDATE ai_mcp_events SET facts_version = 7`); err != nil {
				t.Fatal(err)
			}
			stale, err := db.StaleCallFacts(context.Background(), toolcall.Version, 0, 10)
			if err != nil || len(stale) != 1 || stale[0].Output != "Error: Cannot find module 'vitest'" {
				t.Fatalf("stale calls: %+v, %v", stale, err)
			}
			if err := db.SetCallFacts(context.Background(), []CallFacts{{ID: stale[0].ID, Facts: toolcall.Read(stale[0].Call),
				Version: toolcall.Version}}); err != nil {
				t.Fatal(err)
			}
			if s, _ := db.StaleCallFacts(context.Background(), toolcall.Version, 0, 10); len(s) != 0 || storedFacts(t, db, "toolu_1") != want {
				t.Errorf("after the refresh: %d stale, %+v", len(s), storedFacts(t, db, "toolu_1"))
			}
		})
	}
}

type sqlFacts struct {
	toolcall.Facts
	Version int
}

func storedFacts(t *testing.T, db *DB, callID string) sqlFacts {
	t.Helper()
	var f sqlFacts
	var why sql.NullString
	var loads int
	if err := db.r.QueryRow(`SELECT class, why, op, loads_skill, facts_version FROM ai_mcp_events WHERE call_id = ?`, callID).Scan(
		&f.Class, &why, &f.Op, &loads, &f.Version); err != nil {
		t.Fatal(err)
	}
	f.Why, f.LoadsSkill = why.String, loads == 1
	return f
}
