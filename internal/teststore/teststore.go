// Package teststore opens temporary Cortex stores for tests, indexed from
// a corpus folder.
package teststore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/sqlite"
)

// Indexed returns a read-write store in a temporary folder holding the
// transcripts of dirs (indexed as host "testhost"), and its path. It is
// closed when the test ends.
func Indexed(tb testing.TB, dirs ...string) (*sqlite.DB, string) {
	tb.Helper()
	ctx := context.Background()
	path := filepath.Join(tb.TempDir(), "cortex.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if len(dirs) > 0 {
		if _, err := ingest.Index(ctx, db, ingest.Options{Paths: dirs, Hostname: "testhost"}); err != nil {
			tb.Fatal(err)
		}
	}
	return db, path
}

// Reader opens the store file at path read-only, for what the store's API
// does not give (counts, digests). It is closed when the test ends.
func Reader(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// Writer opens the store file at path for writing beside the store's own
// handle, for tests that put in what the store's API does not write (data
// of an older binary). It is closed when the test ends.
func Writer(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
