package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/sqlite"
)

// openDB opens a fresh store in a temp dir.
func openDB(t testing.TB) (*sqlite.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cortex.db")
	db, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// index runs Index with test defaults.
func index(t testing.TB, db Store, opts Options) Summary {
	t.Helper()
	if opts.Hostname == "" {
		opts.Hostname = "testhost"
	}
	sum, err := Index(context.Background(), db, opts)
	if err != nil {
		t.Fatalf("index: %v", err)
	}
	return sum
}

// rawDB opens the database file directly for assertions.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// snapshot renders the stored records as "file|key|hash|message" lines,
// sorted: two stores with equal snapshots hold the same records. Paths are
// taken relative to root so copies in different folders compare equal.
func snapshot(t testing.TB, path, root string) []string {
	t.Helper()
	db := rawDB(t, path)
	rows, err := db.Query(`SELECT s.path, r.record_key, r.content_hash, l.message, l.ai_session_id, l.timestamp
		FROM transcript_import_records r JOIN transcript_sources s ON s.id = r.source_id JOIN logs l ON l.id = r.log_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p, key, hash, msg, ts string
		var sess sql.NullString
		if err := rows.Scan(&p, &key, &hash, &msg, &sess, &ts); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, strings.Join([]string{rel, key, hash, sess.String, ts, msg}, "|"))
	}
	sort.Strings(out)
	return out
}

func count(t testing.TB, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// copyTree copies src into dst.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return copyFile(p, target)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func diffSnapshots(t testing.TB, want, got []string) {
	t.Helper()
	if len(want) != len(got) {
		t.Errorf("snapshot sizes differ: want %d records, got %d", len(want), len(got))
	}
	w := map[string]bool{}
	for _, s := range want {
		w[s] = true
	}
	g := map[string]bool{}
	for _, s := range got {
		g[s] = true
	}
	shown := 0
	for _, s := range want {
		if !g[s] && shown < 5 {
			t.Errorf("missing: %.200s", s)
			shown++
		}
	}
	for _, s := range got {
		if !w[s] && shown < 10 {
			t.Errorf("unexpected: %.200s", s)
			shown++
		}
	}
}

// storedRecord returns the record of a stored logs.raw value read through
// conn: a per-record frame, or a reference into a raw block.
func storedRecord(conn *sql.DB, codec *rawcodec.Codec, stored []byte) ([]byte, error) {
	id, i, ok := rawcodec.ParseRef(stored)
	if !ok {
		return codec.Decode(stored)
	}
	var data []byte
	if err := conn.QueryRow(`SELECT data FROM raw_blocks WHERE id = ?`, id).Scan(&data); err != nil {
		return nil, fmt.Errorf("raw block %d: %w", id, err)
	}
	recs, err := codec.DecodeBlock(data)
	if err != nil {
		return nil, err
	}
	if i >= len(recs) {
		return nil, fmt.Errorf("raw block %d has no record %d", id, i)
	}
	return recs[i], nil
}

// logIDs returns the ids of every stored row, in order.
func logIDs(t testing.TB, path string) []int64 {
	t.Helper()
	rows, err := rawDB(t, path).Query(`SELECT id FROM logs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}
