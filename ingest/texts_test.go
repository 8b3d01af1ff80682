package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/redact"
	"github.com/cortexhq/cortex/sqlite"
)

// A store that reads long texts from their records (see
// transcript.TextFromRecord) gives every reader exactly what a store
// keeping every text gives: row by row, evidence rows, session pages,
// search hits and the texts whose claims are read again.
func TestTextsFromRecordsReadAsStored(t *testing.T) {
	ctx := context.Background()
	dir := corpusDirs(t)
	a, pathA := openDB(t)
	index(t, a, Options{Paths: []string{dir}, Workers: 1})
	b, pathB := openDB(t)
	index(t, b, Options{Paths: []string{dir}, Workers: 1, keepTexts: true})

	sizes := func(path string) (fromRecord, rows, bytes int64) {
		if err := rawDB(t, path).QueryRow(`SELECT count(*) FILTER (WHERE message = x''), count(*), sum(length(CAST(message AS BLOB)))
			FROM logs`).Scan(&fromRecord, &rows, &bytes); err != nil {
			t.Fatal(err)
		}
		return
	}
	fromA, rowsA, bytesA := sizes(pathA)
	fromB, rowsB, bytesB := sizes(pathB)
	if fromA == 0 || fromB != 0 || rowsA != rowsB || bytesA >= bytesB/2 {
		t.Fatalf("texts read from records: %d of %d rows (%d message bytes); kept: %d of %d rows (%d bytes)",
			fromA, rowsA, bytesA, fromB, rowsB, bytesB)
	}
	t.Logf("%d of %d rows read their text from their record; messages %d bytes, kept %d", fromA, rowsA, bytesA, bytesB)
	if n := count(t, rawDB(t, pathA), `SELECT count(*) FROM logs WHERE message = x'' AND ((claim & 3) > 0 OR ai_role = 'user')`); n != 0 {
		t.Fatalf("%d rows the lenses read in bulk (typed text, claims about tools) read their text from their record", n)
	}

	ids := logIDs(t, pathA)

	for i := 0; i < len(ids); i += 400 {
		part := ids[i:min(i+400, len(ids))]
		ea, err := a.RowsByID(ctx, part)
		if err != nil {
			t.Fatal(err)
		}
		eb, err := b.RowsByID(ctx, part)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ea, eb) {
			t.Fatalf("evidence rows of ids %d…%d differ", part[0], part[len(part)-1])
		}
	}
	sessions := map[sqlite.SessionScope]bool{}
	for _, id := range ids {
		ra, recA, err := a.Row(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		rb, recB, err := b.Row(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		ra.ReceivedAt, rb.ReceivedAt = "", "" // when each was stored
		if !reflect.DeepEqual(ra, rb) || !bytes.Equal(recA, recB) {
			t.Fatalf("row %d differs:\n%+v\n%+v", id, ra, rb)
		}
		if ra.SessionID != "" {
			sessions[sqlite.SessionScope{Tool: ra.Tool, Session: ra.SessionID, Host: ra.Hostname}] = true
		}
	}
	for s := range sessions {
		q := cortex.TranscriptQuery{Tool: s.Tool, Session: s.Session, Host: s.Host, Limit: 100000}
		pa, err := a.TranscriptRows(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := b.TranscriptRows(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(pa, pb) {
			t.Fatalf("session %s reads differently", s.Session)
		}
	}
	for _, db := range []*sqlite.DB{a, b} {
		if _, err := db.IndexSearch(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"error", "test", "skill"} {
		sa, err := a.Search(ctx, cortex.SearchParams{Query: q, Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		sb, err := b.Search(ctx, cortex.SearchParams{Query: q, Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		if len(sa.Hits) == 0 || !reflect.DeepEqual(sa, sb) {
			t.Fatalf("search %q: %d and %d hits, or different ones", q, len(sa.Hits), len(sb.Hits))
		}
	}
	ca, err := a.StaleClaims(ctx, claim.Version+1, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.StaleClaims(ctx, claim.Version+1, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(ca) == 0 || !reflect.DeepEqual(ca, cb) {
		t.Fatalf("texts of claims to read again: %d and %d, or different ones", len(ca), len(cb))
	}
	if n, _ := a.TextReads(); n < fromA {
		t.Fatalf("%d texts read from records, %d rows have one", n, fromA)
	}
}

// A row whose text is read from its record keeps that text when `redact
// --rescan` changes the record (the text itself held no secret): it is
// stored as the row's message from then on.
func TestRescanKeepsATextReadFromItsRecord(t *testing.T) {
	ctx := context.Background()
	secret := testcorpus.Secrets(t)[0]
	text := strings.TrimSpace(strings.Repeat("The build passed after the fix to the parser. ", 8))
	b, _ := json.Marshal(map[string]any{"type": "assistant", "uuid": "00000000-0000-4000-8000-000000000001",
		"timestamp": "2026-11-01T10:00:01.000Z", "sessionId": "sess-r", "cwd": secret.Text,
		"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.jsonl"), append(b, '\n'))
	db, path := openDB(t)
	index(t, db, Options{Paths: []string{dir}, Redactor: redact.None()})
	r := rawDB(t, path)
	if n := count(t, r, `SELECT count(*) FROM logs WHERE message = x''`); n != 1 {
		t.Fatalf("%d rows read their text from their record, want 1", n)
	}
	res, err := Rescan(ctx, db, RescanOptions{Hostname: "h"})
	if err != nil || res.RawRecords != 1 || res.Messages != 0 {
		t.Fatalf("rescan: %+v %v", res, err)
	}
	var msg string
	if err := r.QueryRow(`SELECT message FROM logs WHERE message <> x''`).Scan(&msg); err != nil || msg != text {
		t.Fatalf("stored message %q (%v), want the text", msg, err)
	}
	rows, err := db.RowsByID(ctx, []int64{1})
	if err != nil || len(rows) != 1 || rows[0].Message != text {
		t.Fatalf("row after the rescan: %+v %v", rows, err)
	}
}
