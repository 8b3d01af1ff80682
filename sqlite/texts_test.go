package sqlite

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/transcript"
)

// A row whose text is read from its record stores none (an empty BLOB),
// and gives its text to every reader: evidence rows, the row view, a
// session page, a push's export.
func TestTextReadFromRecord(t *testing.T) {
	ctx := context.Background()
	db, path := openTestDB(t)
	text := strings.Repeat("the tests pass now; ", 20)
	raw, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": "u-1", "timestamp": "2026-11-01T10:00:00.000Z",
		"sessionId": "sess-1", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}})
	r := rec("u:u-1", "", cortex.RoleAssistant, strings.TrimSpace(text), testNow)
	r.Raw = raw
	if !transcript.TextFromRecord(cortex.ToolClaude, raw, &r.Entry) {
		t.Fatal("the record does not give its text back")
	}
	r.TextFromRecord = true
	kept := rec("u:u-2", "", cortex.RoleAssistant, "short", testNow)
	if _, err := db.Import(ctx, cortex.ImportBatch{Source: cortex.Source{Path: "/t/a.jsonl", Kind: "transcript", Tool: cortex.ToolClaude},
		Hostname: "h", Records: []cortex.ImportRecord{r, kept}}); err != nil {
		t.Fatal(err)
	}
	var fromRecord, typ string
	if err := rawConn(t, path).QueryRow(`SELECT typeof(message), (SELECT typeof(message) FROM logs WHERE id = 2) FROM logs WHERE id = 1`).
		Scan(&fromRecord, &typ); err != nil || fromRecord != "blob" || typ != "text" {
		t.Fatalf("message types %q, %q (%v)", fromRecord, typ, err)
	}
	want := r.Entry.Text
	ev, err := db.RowsByID(ctx, []int64{1, 2})
	if err != nil || len(ev) != 2 || ev[0].Message != want || ev[1].Message != "short" {
		t.Fatalf("evidence rows %+v (%v)", ev, err)
	}
	row, _, err := db.Row(ctx, 1, 10)
	if err != nil || row.Text != want[:10] || row.TextBytes != len(want) {
		t.Fatalf("row %+v (%v)", row, err)
	}
	page, err := db.TranscriptRows(ctx, cortex.TranscriptQuery{Tool: cortex.ToolClaude, Session: "sess-1", Host: "h", Limit: 10})
	if err != nil || len(page.Rows) != 2 || page.Rows[0].Text != want && page.Rows[1].Text != want {
		t.Fatalf("session page %+v (%v)", page, err)
	}
	var logs store.Table
	for _, tb := range store.PushTables {
		if tb.Name == "logs" {
			logs = tb
		}
	}
	out, err := db.ExportRows(ctx, logs, 0, 10, 10, "raw")
	if err != nil || len(out) != 2 || out[0][logs.Index("message")] != want {
		t.Fatalf("exported %v (%v)", out, err)
	}
	if n, blocks := db.TextReads(); n != 4 || blocks != 2 {
		t.Fatalf("%d texts read from records in %d blocks, want 4 in 2 (evidence, session page)", n, blocks)
	}
}
