package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/fts"
	"github.com/cortexhq/cortex/internal/testpg"
	"github.com/cortexhq/cortex/store"
)

func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                             "SELECT 1",
		"a = ? AND b IN (?, ?)":                "a = $1 AND b IN ($2, $3)",
		`x LIKE ? ESCAPE '\' AND y = '?' OR ?`: `x LIKE $1 ESCAPE '\' AND y = '?' OR $2`,
	} {
		if got := rebind(in); got != want {
			t.Errorf("rebind(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, u := range []string{"postgres://u:s3cret@h/db", "postgres://u@h/db?password=s3cret"} {
		if got := Redact(u); strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q", u, got)
		}
	}
}

func TestTsQuery(t *testing.T) {
	words, err := fts.NewIndexer()
	if err != nil {
		t.Fatal(err)
	}
	defer words.Close()
	db := &DB{words: words}
	for in, want := range map[string]string{
		"error":               `(('error'))`,
		"memory leaks":        `(('memori')) & (('leak'))`,
		`"permission denied"`: `((('permiss' <-> 'deni') | ('permiss deni')))`,
		`"no such" file*`:     `((('no' <-> 'such') | ('no such'))) & (('file':*))`,
		"a OR b":              `(('a') | ('b'))`,
		"it's":                `((('it' <-> 's') | ('it s')))`,
		`O'Brien\x`:           `((('o' <-> 'brien' <-> 'x') | ('o brien' & 'brien x')))`,
		"Crème":               `(('creme'))`,
		"mcp__labby__search":  `((('mcp' <-> 'labbi' <-> 'search') | ('mcp labbi' & 'labbi search')))`,
	} {
		q, err := fts.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := db.tsQuery(context.Background(), q); err != nil || got != want {
			t.Errorf("tsQuery(%q) = %s, want %s", in, got, want)
		}
	}
}

func openTest(t *testing.T) (*DB, string) {
	t.Helper()
	url := testpg.URL(t)
	db, err := Open(context.Background(), url, Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, url
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=2", Options{})
	if cortex.ErrorCode(err) != cortex.CodeUnavailable || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("unreachable server: %v", err)
	}
	if _, err := Open(ctx, "postgres://u@h:notaport/db", Options{}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("bad URL: %v", err)
	}
	url := testpg.URL(t)
	// A reader of an empty database is told to push first.
	_, err = Open(ctx, url, Options{})
	if cortex.ErrorCode(err) != cortex.CodeNotFound || !strings.Contains(err.Error(), "cortex push") {
		t.Errorf("empty store: %v", err)
	}
	db, err := Open(ctx, url, Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Migrating twice is a no-op; a reader then opens it.
	for _, o := range []Options{{Migrate: true}, {}} {
		db, err := Open(ctx, url, o)
		if err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	// A store from a newer binary is refused.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO cortex_schema VALUES ($1, 'future', 'x')`, SchemaVersion()+5); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Migrate: true}, {}} {
		if _, err := Open(ctx, url, o); cortex.ErrorCode(err) != cortex.CodeUnavailable || !strings.Contains(err.Error(), "newer") {
			t.Errorf("newer schema (%+v): %v", o, err)
		}
	}
}

// Texts that COPY's text format must escape, and words the index must
// hold as FTS5 splits them, survive a push and a search.
func TestCopyRoundTrip(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	p, err := db.Register(ctx, "store-a", "h")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"tab\there", "new\nline\r\n", `back\slash \N \\x`, "quote ' and \"", "nul\x00byte", "bad \xff utf8",
		"Crème brûlée", strings.Repeat("long ", 5000), strings.Repeat("x", 5000) + " tail", "日本語",
		// Past the positions a tsvector keeps: a phrase is still found.
		strings.Repeat("w ", 20000) + "don't stop"}
	logs := store.PushTables[0]
	var rows [][]any
	for i, s := range texts {
		// The columns, then the search text a push derives.
		row := make([]any, len(logs.Columns)+len(logs.Derived))
		row[len(logs.Columns)] = s
		set := func(col string, v any) { row[logs.Index(col)] = v }
		set("id", int64(i+1))
		set("timestamp", "2026-01-01T00:00:0"+string(rune('0'+i))+".000Z")
		set("hostname", "h")
		set("severity", "info")
		set("message", s)
		set("raw", []byte{0, 1, 2, '\\', 'x'})
		set("received_at", "2026-01-01T00:00:00.000Z")
		set("source", "transcript")
		set("ai_tool", "claude")
		set("ai_session_id", "s")
		set("ai_role", "user")
		set("is_error", int64(0))
		rows = append(rows, row)
	}
	to := p.Marks.Clone()
	to.Tables["logs"] = int64(len(texts))
	if _, err := db.Apply(ctx, Batch{StoreID: "store-a", From: p.Marks, To: to, Content: store.ContentFull, Table: &logs, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		r, raw, err := db.Row(ctx, int64(p.StoreNo)<<idShift+int64(i+1), 0)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
		if r.Text != want || string(raw) != "\x00\x01\x02\\x" {
			t.Errorf("row %d: %q %q, want %q", i, r.Text, raw, want)
		}
	}
	for q, n := range map[string]int{"creme": 1, `"long long"`: 1, "tail": 1, "x*": 2, "byte": 1, "日本語": 1, "brulee OR tab": 2, `"don't stop"`: 1, `"w don't"`: 1} {
		res, err := db.Search(ctx, cortex.SearchParams{Query: q, Limit: 10})
		if err != nil || len(res.Hits) != n {
			t.Errorf("search %q: %d hits, want %d (%v)", q, len(res.Hits), n, err)
		}
	}
	// The same batch again is refused: the marks moved.
	if _, err := db.Apply(ctx, Batch{StoreID: "store-a", From: p.Marks, To: to, Table: &logs, Rows: rows}); err != ErrMoved {
		t.Errorf("stale batch: %v", err)
	}
	// Counts follow the rows.
	st, err := db.Status(ctx)
	if err != nil || st.Rows != int64(len(texts)) || st.RowsByRole["claude"]["user"] != int64(len(texts)) {
		t.Errorf("status %+v %v", st.RowsByRole, err)
	}
}
