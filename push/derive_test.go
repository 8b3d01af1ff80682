package push

import (
	"testing"

	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/toolcall"
)

// A call whose stored facts are missing or of other rules is sent with
// facts derived from its texts; current facts are sent as stored.
func TestDeriveFacts(t *testing.T) {
	var calls store.Table
	for _, tb := range store.PushTables {
		if tb.Name == "ai_mcp_events" {
			calls = tb
		}
	}
	row := func(version any) []any {
		r := make([]any, len(calls.Columns))
		set := func(c string, v any) { r[calls.Index(c)] = v }
		set("tool_name", "Bash")
		set("status", "error")
		set("is_error", int64(1))
		set("exit_code", int64(127))
		set("arguments_json", `{"command":"npm run build"}`)
		set("error_text", "sh: 1: vite: command not found")
		set("facts_version", version)
		set("class", "stored")
		return r
	}
	rows := [][]any{row(nil), row(int64(toolcall.Version - 1)), row(int64(toolcall.Version))}
	var p pusher
	p.derive(calls, rows)
	want := toolcall.Read(toolcall.Call{ToolName: "Bash", Status: "error", IsError: true, ExitCode: ptr(int64(127)),
		Arguments: `{"command":"npm run build"}`, ErrorText: "sh: 1: vite: command not found"})
	for i, r := range rows[:2] {
		if r[calls.Index("class")] != want.Class || r[calls.Index("op")] != want.Op || r[calls.Index("why")] != want.Why ||
			r[calls.Index("facts_version")] != int64(toolcall.Version) {
			t.Errorf("row %d: class %v op %v why %v version %v, want %+v", i, r[calls.Index("class")], r[calls.Index("op")],
				r[calls.Index("why")], r[calls.Index("facts_version")], want)
		}
	}
	if got := rows[2][calls.Index("class")]; got != "stored" {
		t.Errorf("current facts were derived again: %v", got)
	}
	if keyHash("Bash npm run") != keyHash("Bash npm run") || keyHash("a") == keyHash("b") || keyHash("") != "" {
		t.Error("keyHash does not keep equality")
	}
}

// An assistant row whose stored claims are missing or of other rules is
// sent with claims read from its text; current claims are sent as stored,
// and other rows get none.
func TestDeriveClaims(t *testing.T) {
	logs := store.PushTables[0]
	if logs.Name != "logs" {
		t.Fatal("logs is not the first pushed table")
	}
	row := func(role string, kinds, version any) []any {
		r := make([]any, len(logs.Columns))
		r[logs.Index("ai_role")], r[logs.Index("message")] = role, "The notion MCP server is not available here."
		r[logs.Index("facility")] = "transcript"
		r[logs.Index("claim")], r[logs.Index("claim_version")] = kinds, version
		return r
	}
	rows := [][]any{row("assistant", nil, nil), row("assistant", int64(0), int64(claim.Version-1)),
		row("assistant", int64(claim.Failure), int64(claim.Version)), row("user", nil, nil)}
	var p pusher
	p.derive(logs, rows)
	for i, r := range rows[:2] {
		if r[logs.Index("claim")] != int64(claim.Unavailable) || r[logs.Index("claim_version")] != int64(claim.Version) {
			t.Errorf("row %d: claims %v version %v", i, r[logs.Index("claim")], r[logs.Index("claim_version")])
		}
	}
	if got := rows[2][logs.Index("claim")]; got != int64(claim.Failure) {
		t.Errorf("current claims were read again: %v", got)
	}
	if got := rows[3][logs.Index("claim")]; got != nil {
		t.Errorf("a user row got claims: %v", got)
	}
}

func ptr[T any](v T) *T { return &v }
