package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/fts"
)

// testNow is the clock of test databases unless a test sets its own.
var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// openTestDB opens a fresh store in a temp dir with a fixed clock.
func openTestDB(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cortex.db")
	db, err := Open(context.Background(), path, Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// rawConn opens the database file directly (a second "process"), for
// assertions and for holding locks. busy_timeout is 0 so that lock
// conflicts surface at once.
func rawConn(t testing.TB, path string) *sql.DB {
	t.Helper()
	c, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// wantCode fails unless err carries the cortex error code want.
func wantCode(t testing.TB, err error, want cortex.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want code %s", want)
	}
	var ce *cortex.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *cortex.Error, want code %s", err, err, want)
	}
	if ce.Code != want {
		t.Fatalf("error %q has code %s, want %s", err, ce.Code, want)
	}
}

// rec builds an import record with sensible defaults; key doubles as the
// content hash unless hash is given.
func rec(key, hash string, role cortex.Role, text string, ts time.Time) cortex.ImportRecord {
	if hash == "" {
		hash = "h-" + key
	}
	return cortex.ImportRecord{
		Entry: cortex.Entry{
			Tool:      cortex.ToolClaude,
			Timestamp: ts,
			Role:      role,
			Kind:      string(role),
			Text:      text,
			SessionID: "sess-1",
			Project:   "/home/u/proj",
			RecordKey: key,
			Severity:  cortex.SevInfo,
		},
		Raw:         recordJSON(key, text),
		ContentHash: hash,
		Line:        1,
	}
}

// recordJSON is a test record's raw JSON: its key and, as transcript
// records do, its text (the search index reads the record).
func recordJSON(key, text string) []byte {
	b, _ := json.Marshal(struct {
		Text string `json:"text,omitempty"`
		Key  string `json:"k"`
	}{text, key})
	return b
}

// batch builds a batch of records for path.
func batch(path string, recs ...cortex.ImportRecord) cortex.ImportBatch {
	return cortex.ImportBatch{
		Source:    cortex.Source{Path: path, Kind: "claude", Tool: cortex.ToolClaude},
		Records:   recs,
		Hostname:  "host-a",
		SourceTag: "transcripts",
	}
}

func mustImport(t testing.TB, db *DB, bs ...cortex.ImportBatch) []cortex.ImportResult {
	t.Helper()
	res, err := db.ImportBatches(context.Background(), bs)
	if err != nil {
		t.Fatalf("ImportBatches: %v", err)
	}
	if len(res) != len(bs) {
		t.Fatalf("ImportBatches returned %d results for %d batches", len(res), len(bs))
	}
	indexSearch(t, db) // the rows are searchable, as after an index run
	return res
}

// count runs a count(*)-style query through db's own reader pool.
func count(t testing.TB, db *DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.r.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// ids runs a query returning one integer column.
func ids(t testing.TB, db *DB, query string, args ...any) []int64 {
	t.Helper()
	return column[int64](t, db, query, args...)
}

// column runs a query returning one column of values of type T.
func column[T any](t testing.TB, db *DB, query string, args ...any) []T {
	t.Helper()
	rows, err := db.r.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// indexSearch makes every stored row searchable.
func indexSearch(t testing.TB, db *DB) {
	t.Helper()
	if _, err := db.IndexSearch(context.Background(), nil); err != nil {
		t.Fatalf("IndexSearch: %v", err)
	}
}

// ftsMatch returns the rowids whose indexed text contains word, asking the
// search index directly (after bringing it up to date).
func ftsMatch(t testing.TB, db *DB, word string) []int64 {
	t.Helper()
	indexSearch(t, db)
	got := ids(t, db, `SELECT rowid FROM search.search_fts WHERE search_fts MATCH ?`, `"`+strings.ReplaceAll(word, `"`, `""`)+`"`)
	slices.Sort(got)
	return got
}

// indexedRows returns the rowids present in the search index (after
// bringing it up to date): a contentless FTS5 table keeps one docsize row
// per indexed rowid.
func indexedRows(t testing.TB, db *DB) []int64 {
	t.Helper()
	indexSearch(t, db)
	return ids(t, db, `SELECT id FROM search.search_fts_docsize ORDER BY id`)
}

// snippet is the excerpt fts.Excerpt cuts for words taken as phrases.
func snippet(text string, words []string, width int) string {
	s, _ := fts.Excerpt(text, phrases(words), width)
	return s
}

// phrases reads each of words as a phrase to highlight.
func phrases(words []string) fts.Query {
	var q fts.Query
	for _, w := range words {
		q.Groups = append(q.Groups, []fts.Term{{Text: w}})
	}
	return q
}

func logID(t testing.TB, db *DB, path, key string) int64 {
	t.Helper()
	return count(t, db, `SELECT r.log_id FROM transcript_import_records r JOIN transcript_sources s ON s.id = r.source_id
		WHERE s.path = ? AND r.record_key = ?`, path, key)
}

// searchIDs runs Search and returns the hit ids in order.
func searchIDs(t testing.TB, db *DB, p cortex.SearchParams) []int64 {
	t.Helper()
	if p.Limit == 0 {
		p.Limit = 1000
	}
	res, err := db.Search(context.Background(), p)
	if err != nil {
		t.Fatalf("Search(%+v): %v", p, err)
	}
	out := []int64{}
	for _, h := range res.Hits {
		out = append(out, h.ID)
	}
	return out
}
