package sqlite

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

// A tool call's previews are stored compressed when that is smaller, and
// every reader — the call's event, the session's calls, the texts of a
// call, the facts' inputs, the push's export — gives them back as written;
// short and incompressible texts, and texts stored as TEXT by an older
// version, read as they are.
func TestPackedTextsReadAsWritten(t *testing.T) {
	ctx := context.Background()
	long := `{"command":"go test ./...","description":"` + strings.Repeat("run the tests of every package ", 20) + `"}`
	output := strings.Repeat("ok  \tgithub.com/acme/widget/store\t0.412s\n", 12)
	noise := make([]byte, 300)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	random := base64.StdEncoding.EncodeToString(noise) // does not compress
	cases := []struct {
		name, args, out string
		blobs           int64 // how many of the two are stored compressed
	}{
		{"long texts", long, output, 2},
		{"short texts", `{"q":"x"}`, "3 results", 0},
		{"incompressible", random, random, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, _ := openTestDB(t)
			ev := callEvent("call_1", "Bash")
			ev.Tools[0].ArgumentsJSON = tc.args
			res := resultEvent("call_1", cortex.CallSuccess, false, tc.out)
			mustImport(t, db, batch("/t/a.jsonl",
				withEvents(rec("c", "", cortex.RoleToolCall, "call", t0), ev),
				withEvents(rec("r", "", cortex.RoleToolResult, "result", t0.Add(time.Second)), res)))
			if n := count(t, db, `SELECT (typeof(arguments_json) = 'blob') + (typeof(output_preview) = 'blob') FROM ai_mcp_events`); n != tc.blobs {
				t.Fatalf("%d of the two texts stored compressed, want %d", n, tc.blobs)
			}
			checkPackedReads(t, db, tc.args, tc.out)
		})
	}

	t.Run("stored as text by an older version", func(t *testing.T) {
		db, _ := openTestDB(t)
		mustImport(t, db, batch("/t/a.jsonl",
			withEvents(rec("c", "", cortex.RoleToolCall, "call", t0), callEvent("call_1", "Bash")),
			withEvents(rec("r", "", cortex.RoleToolResult, "result", t0.Add(time.Second)),
				resultEvent("call_1", cortex.CallSuccess, false, "done"))))
		if _, err := db.w.ExecContext(ctx, `UPDATE ai_mcp_events SET arguments_json = ?, output_preview = ?`, long, output); err != nil {
			t.Fatal(err)
		}
		checkPackedReads(t, db, long, output)
	})
}

// checkPackedReads reads the one stored call through every reader of its
// texts.
func checkPackedReads(t *testing.T, db *DB, args, out string) {
	t.Helper()
	ctx := context.Background()
	id := int64(count(t, db, `SELECT id FROM ai_mcp_events`))
	evs, err := db.ToolEventsByID(ctx, []int64{id})
	if err != nil || len(evs) != 1 {
		t.Fatalf("ToolEventsByID: %v, %d rows", err, len(evs))
	}
	if evs[0].ArgumentsJSON != args || evs[0].OutputPreview != out {
		t.Errorf("ToolEventsByID: %q, %q", evs[0].ArgumentsJSON, evs[0].OutputPreview)
	}
	scope := SessionScope{Session: "sess-1", Tool: cortex.ToolClaude, Host: evs[0].Hostname}
	calls, err := db.SessionCalls(ctx, scope, time.Time{}, time.Time{}, 10)
	if err != nil || len(calls) != 1 {
		t.Fatalf("SessionCalls: %v, %d calls", err, len(calls))
	}
	if calls[0].Arguments != args || calls[0].Output != out {
		t.Errorf("SessionCalls: %q, %q", calls[0].Arguments, calls[0].Output)
	}
	tools, err := db.SessionToolEvents(ctx, scope, t0.Add(-time.Hour), t0.Add(time.Hour), false, 10)
	if err != nil || len(tools) != 1 || tools[0].ArgumentsJSON != args || tools[0].OutputPreview != out {
		t.Errorf("SessionToolEvents: %v, %+v", err, tools)
	}
	texts, err := db.CallTextsByID(ctx, []int64{id})
	if err != nil || texts[id].Arguments != args || texts[id].Output != out {
		t.Errorf("CallTextsByID: %v, %+v", err, texts[id])
	}
	if _, err := db.w.ExecContext(ctx, `UPDATE ai_mcp_events SET facts_version = NULL`); err != nil {
		t.Fatal(err)
	}
	stale, err := db.StaleCallFacts(ctx, 1<<30, 0, 10)
	if err != nil || len(stale) != 1 || stale[0].Arguments != args || stale[0].Output != out {
		t.Errorf("StaleCallFacts: %v, %+v", err, stale)
	}
	var tbl store.Table
	for _, pt := range store.PushTables {
		if pt.Name == "ai_mcp_events" {
			tbl = pt
		}
	}
	rows, err := db.ExportRows(ctx, tbl, 0, id, 10)
	if err != nil || len(rows) != 1 {
		t.Fatalf("ExportRows: %v, %d rows", err, len(rows))
	}
	if got := rows[0][tbl.Index("arguments_json")]; got != args {
		t.Errorf("exported arguments %#v", got)
	}
	if got := rows[0][tbl.Index("output_preview")]; got != out {
		t.Errorf("exported output %#v", got)
	}
}

// Re-redaction reads a compressed preview, and stores what it fixed
// compressed again.
func TestRedactColumnsFixesPackedTexts(t *testing.T) {
	ctx := context.Background()
	db, _ := openTestDB(t)
	output := strings.Repeat("deploying with token tok_live_0123456789abcdef\n", 6)
	mustImport(t, db, batch("/t/a.jsonl",
		withEvents(rec("c", "", cortex.RoleToolCall, "call", t0), callEvent("call_1", "Bash")),
		withEvents(rec("r", "", cortex.RoleToolResult, "result", t0.Add(time.Second)),
			resultEvent("call_1", cortex.CallSuccess, false, output))))
	if n := count(t, db, `SELECT count(*) FROM ai_mcp_events WHERE typeof(output_preview) = 'blob'`); n != 1 {
		t.Fatalf("%d previews stored compressed, want 1", n)
	}
	fix := func(s string) (string, bool) {
		if !strings.Contains(s, "tok_live_") {
			return s, false
		}
		return strings.ReplaceAll(s, "tok_live_0123456789abcdef", "[REDACTED]"), true
	}
	n, err := db.RedactColumns(ctx, fix, false)
	if err != nil || n != 1 {
		t.Fatalf("RedactColumns: %d changed, %v; want 1", n, err)
	}
	if n := count(t, db, `SELECT count(*) FROM ai_mcp_events WHERE typeof(output_preview) = 'blob'`); n != 1 {
		t.Errorf("the fixed preview is not stored compressed")
	}
	evs, err := db.ToolEventsByID(ctx, []int64{int64(count(t, db, `SELECT id FROM ai_mcp_events`))})
	if err != nil || len(evs) != 1 {
		t.Fatalf("ToolEventsByID: %v", err)
	}
	if want := strings.Repeat("deploying with token [REDACTED]\n", 6); evs[0].OutputPreview != want {
		t.Errorf("preview after re-redaction %q", evs[0].OutputPreview)
	}
}
