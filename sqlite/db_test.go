package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

// migrationFiles lists the migration files on disk (not through the
// embedded FS the code uses) as version → name.
func migrationFiles(t *testing.T) map[int]string {
	t.Helper()
	entries, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("migration file %s: %v", e.Name(), err)
		}
		out[v] = strings.TrimSuffix(e.Name(), ".sql")
	}
	if len(out) == 0 {
		t.Fatal("no migration files")
	}
	return out
}

type migrationRow struct {
	version   int
	name      string
	appliedAt string
}

func readMigrations(t *testing.T, c *sql.DB) []migrationRow {
	t.Helper()
	rows, err := c.Query(`SELECT version, name, applied_at FROM schema_migrations ORDER BY version, rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []migrationRow
	for rows.Next() {
		var m migrationRow
		if err := rows.Scan(&m.version, &m.name, &m.appliedAt); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func checkAllMigrations(t *testing.T, c *sql.DB, files map[int]string) []migrationRow {
	t.Helper()
	got := readMigrations(t, c)
	if len(got) != len(files) {
		t.Fatalf("schema_migrations has %d rows %v, want %d (one per file)", len(got), got, len(files))
	}
	for _, m := range got {
		if files[m.version] != m.name {
			t.Errorf("schema_migrations row %d %q, file says %q", m.version, m.name, files[m.version])
		}
	}
	return got
}

func tableExists(t *testing.T, c *sql.DB, name string) bool {
	t.Helper()
	var n int
	if err := c.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

func TestOpenCreatesWALDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "dir", "cortex.db")
	db, err := Open(ctx, path, Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("database file: %v, %v", fi, err)
	}
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
	raw := rawConn(t, path)
	var mode string
	if err := raw.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	files := migrationFiles(t)
	got := checkAllMigrations(t, raw, files)
	for _, m := range got {
		if m.appliedAt != cortex.FormatTime(testNow) {
			t.Errorf("migration %d applied_at %q, want %q", m.version, m.appliedAt, cortex.FormatTime(testNow))
		}
	}
	newest := 0
	for v := range files {
		newest = max(newest, v)
	}
	if SchemaVersion() != newest {
		t.Errorf("SchemaVersion() = %d, newest file is %d", SchemaVersion(), newest)
	}
	for _, table := range []string{"logs", "search_changes", "store_meta", "transcript_sources", "transcript_import_records",
		"transcript_parse_errors", "transcript_unknown_types", "ai_sessions", "log_counts"} {
		if !tableExists(t, raw, table) {
			t.Errorf("table %s missing", table)
		}
	}
}

func TestOpenTwiceIsNoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cortex.db")
	db, err := Open(ctx, path, Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	mustImport(t, db, batch("/t/a.jsonl", rec("k1", "", cortex.RoleUser, "hello there", testNow)))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	later := testNow.Add(time.Hour)
	for i := 0; i < 2; i++ {
		db, err = Open(ctx, path, Options{Now: func() time.Time { return later }})
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	raw := rawConn(t, path)
	for _, m := range checkAllMigrations(t, raw, migrationFiles(t)) {
		if m.appliedAt != cortex.FormatTime(testNow) {
			t.Errorf("migration %d re-applied at %s", m.version, m.appliedAt)
		}
	}
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM logs`).Scan(&n); err != nil || n != 1 {
		t.Errorf("logs rows after reopen = %d, %v; want 1", n, err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	future := SchemaVersion() + 7

	t.Run("migrated", func(t *testing.T) {
		db, path := openTestDB(t)
		db.Close()
		raw := rawConn(t, path)
		if _, err := raw.Exec(`INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, 'future', 'x')`, future); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		_, err := Open(ctx, path, Options{})
		wantCode(t, err, cortex.CodeUnavailable)
		msg := cortex.ErrorMessage(err)
		for _, want := range []string{"newer", strconv.Itoa(future), strconv.Itoa(SchemaVersion()), "upgrade"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q does not mention %q", msg, want)
			}
		}
	})

	// A database that only records a newer version is not touched: no
	// table of this binary's migrations is created in it.
	t.Run("untouched", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "future.db")
		raw := rawConn(t, path)
		if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);
			INSERT INTO schema_migrations VALUES (?, 'future', 'x')`, future); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, path, Options{})
		wantCode(t, err, cortex.CodeUnavailable)
		if tableExists(t, raw, "logs") {
			t.Error("Open created tables in a database of a newer schema")
		}
		if got := readMigrations(t, raw); len(got) != 1 || got[0].version != future {
			t.Errorf("schema_migrations changed: %v", got)
		}
	})
}

func TestOpenReadOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nope.db")
		_, err := Open(ctx, path, Options{ReadOnly: true})
		wantCode(t, err, cortex.CodeNotFound)
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("read-only Open created %s", path)
		}
	})

	t.Run("not migrated", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "empty.db")
		raw := rawConn(t, path)
		if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, path, Options{ReadOnly: true})
		wantCode(t, err, cortex.CodeUnavailable)
	})

	t.Run("next to a writer", func(t *testing.T) {
		w, path := openTestDB(t)
		mustImport(t, w, batch("/t/a.jsonl", rec("k1", "", cortex.RoleUser, "committed zebra", testNow)))
		indexSearch(t, w)
		ro, err := Open(ctx, path, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("read-only Open next to a writer: %v", err)
		}
		defer ro.Close()
		if got := searchIDs(t, ro, cortex.SearchParams{Query: "zebra"}); len(got) != 1 {
			t.Errorf("reader sees %d zebra rows, want 1", len(got))
		}
		// Committed later by the writer: visible to the next read.
		mustImport(t, w, batch("/t/a.jsonl", rec("k2", "", cortex.RoleUser, "second zebra", testNow)))
		indexSearch(t, w)
		if got := searchIDs(t, ro, cortex.SearchParams{Query: "zebra"}); len(got) != 2 {
			t.Errorf("reader sees %d zebra rows after a second commit, want 2", len(got))
		}
		_, err = ro.ImportBatches(ctx, []cortex.ImportBatch{batch("/t/b.jsonl", rec("k", "", cortex.RoleUser, "x", testNow))})
		wantCode(t, err, cortex.CodeInvalid)
		if n := count(t, w, `SELECT count(*) FROM logs`); n != 2 {
			t.Errorf("logs rows = %d after a refused read-only import, want 2", n)
		}
	})
}

func TestOpenNotADatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not sqlite\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), path, Options{})
	wantCode(t, err, cortex.CodeUnavailable)
}

// A crash between creating schema_migrations and applying the first
// migration leaves an empty ledger: the next Open applies everything.
func TestOpenAfterInterruptedMigration(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crashed.db")
	raw := rawConn(t, path)
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkAllMigrations(t, raw, migrationFiles(t))
	mustImport(t, db, batch("/t/a.jsonl", rec("k1", "", cortex.RoleUser, "works", testNow)))
}

// A migration's DDL and its schema_migrations row commit together: when
// the last statement of the first migration fails (a table it creates
// already exists), none of its earlier statements stay and no version is
// recorded; once the obstacle is gone, Open applies it completely.
func TestMigrationIsAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ms[0].SQL, "CREATE TABLE log_counts") || !strings.Contains(ms[0].SQL, "CREATE TABLE logs ") {
		t.Skip("the first migration no longer creates logs and log_counts; adapt this test")
	}
	if strings.Index(ms[0].SQL, "CREATE TABLE logs ") > strings.Index(ms[0].SQL, "CREATE TABLE log_counts") {
		t.Skip("log_counts is no longer created after logs; adapt this test")
	}
	path := filepath.Join(t.TempDir(), "half.db")
	raw := rawConn(t, path)
	if _, err := raw.Exec(`CREATE TABLE log_counts (x)`); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, path, Options{})
	wantCode(t, err, cortex.CodeUnavailable)
	if !strings.Contains(err.Error(), ms[0].Name) {
		t.Errorf("error %q does not name the migration %s", err, ms[0].Name)
	}
	for _, table := range []string{"logs", "transcript_sources", "ai_sessions"} {
		if tableExists(t, raw, table) {
			t.Errorf("table %s of the failed migration was kept", table)
		}
	}
	if got := readMigrations(t, raw); len(got) != 0 {
		t.Errorf("schema_migrations after a failed migration: %v", got)
	}

	if _, err := raw.Exec(`DROP TABLE log_counts`); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkAllMigrations(t, raw, migrationFiles(t))
	mustImport(t, db, batch("/t/a.jsonl", rec("k1", "", cortex.RoleUser, "works", testNow)))
	if n := count(t, db, `SELECT rows FROM log_counts WHERE ai_tool = 'claude' AND ai_role = 'user'`); n != 1 {
		t.Errorf("log_counts after recovery = %d, want 1", n)
	}
}

// lockWriter takes the write lock of path from another connection (as
// another process would) and returns its release function.
func lockWriter(t *testing.T, path string) (release func() error) {
	t.Helper()
	raw := rawConn(t, path)
	conn, err := raw.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return func() error {
		defer conn.Close()
		_, err := conn.ExecContext(context.Background(), "COMMIT")
		return err
	}
}

func TestImportWaitsForAnotherWriter(t *testing.T) {
	t.Parallel()
	db, path := openTestDB(t)
	const hold = 300 * time.Millisecond
	release := lockWriter(t, path)
	done := make(chan error, 1)
	time.AfterFunc(hold, func() { done <- release() })
	start := time.Now()
	res, err := db.ImportBatches(context.Background(), []cortex.ImportBatch{
		batch("/t/a.jsonl", rec("k1", "", cortex.RoleUser, "after the lock", testNow)),
	})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("ImportBatches while another connection held the lock for %v: %v", hold, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("lock holder: %v", err)
	}
	if res[0].Inserted != 1 {
		t.Errorf("Inserted = %d, want 1", res[0].Inserted)
	}
	if elapsed < hold-50*time.Millisecond {
		t.Errorf("ImportBatches returned after %v, before the lock was released (%v): the lock was not contended", elapsed, hold)
	}
	if n := count(t, db, `SELECT count(*) FROM logs`); n != 1 {
		t.Errorf("logs rows = %d, want 1", n)
	}
}

// busyError produces a real SQLITE_BUSY error: another connection holds the
// write lock and this one does not wait.
func busyError(t *testing.T) error {
	t.Helper()
	_, path := openTestDB(t)
	release := lockWriter(t, path)
	raw := rawConn(t, path)
	_, err := raw.Exec("BEGIN IMMEDIATE")
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err == nil {
		t.Fatal("BEGIN IMMEDIATE succeeded while another connection held the write lock")
	}
	return err
}

// The write path's retry budget (busy_timeout of 5 s per attempt, 1 +
// maxBusyRetries attempts, backoff up to 2 s) is too long to exhaust in a unit test
// with a real lock, so the classification and the wrapping are tested
// separately: isBusy on real errors, and write with a function that keeps
// failing with a real SQLITE_BUSY.
func TestIsBusy(t *testing.T) {
	t.Parallel()
	busy := busyError(t)
	if !isBusy(busy) {
		t.Fatalf("isBusy(%v) = false", busy)
	}
	if !isBusy(fmt.Errorf("claim records: %w", busy)) {
		t.Error("isBusy does not see a wrapped SQLITE_BUSY")
	}
	db, _ := openTestDB(t)
	_, syntaxErr := db.r.Exec("SELEC 1")
	if syntaxErr == nil {
		t.Fatal("syntax error expected")
	}
	_, constraintErr := db.w.Exec(`INSERT INTO logs(timestamp, hostname, received_at, severity) VALUES ('t', 'h', 'r', 'bogus')`)
	if constraintErr == nil {
		t.Fatal("constraint error expected")
	}
	for _, err := range []error{nil, errors.New("database is locked"), syntaxErr, constraintErr, context.Canceled} {
		if isBusy(err) {
			t.Errorf("isBusy(%v) = true", err)
		}
	}
}

func TestWriteRetriesBusy(t *testing.T) {
	t.Parallel()
	busy := busyError(t)
	db, _ := openTestDB(t)
	var calls atomic.Int32
	err := db.write(context.Background(), func(tx *sql.Tx) error {
		if calls.Add(1) == 1 {
			return busy
		}
		_, err := tx.Exec(`INSERT INTO log_counts VALUES ('x', 'y', 1)`)
		return err
	})
	if err != nil {
		t.Fatalf("write after one SQLITE_BUSY: %v", err)
	}
	if calls.Load() != 2 {
		t.Errorf("fn ran %d times, want 2", calls.Load())
	}
	if n := count(t, db, `SELECT count(*) FROM log_counts WHERE ai_tool = 'x'`); n != 1 {
		t.Errorf("rows written = %d, want 1 (the failed attempt must roll back)", n)
	}

	// A non-busy error is not retried.
	calls.Store(0)
	boom := errors.New("boom")
	if err := db.write(context.Background(), func(*sql.Tx) error { calls.Add(1); return boom }); !errors.Is(err, boom) {
		t.Errorf("write = %v, want boom", err)
	}
	if calls.Load() != 1 {
		t.Errorf("fn ran %d times for a non-busy error, want 1", calls.Load())
	}

	// Cancellation ends the retries.
	ctx, cancel := context.WithCancel(context.Background())
	calls.Store(0)
	err = db.write(ctx, func(*sql.Tx) error { cancel(); calls.Add(1); return busy })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("write with a canceled context = %v, want context.Canceled", err)
	}
}

// Exhausting the retries takes the full backoff (about 0.75-1.5 s of
// sleeps), so this test runs in parallel with the rest.
func TestWriteBusyExhausted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("sleeps through the whole retry backoff")
	}
	busy := busyError(t)
	db, _ := openTestDB(t)
	var calls atomic.Int32
	err := db.write(context.Background(), func(*sql.Tx) error { calls.Add(1); return busy })
	wantCode(t, err, cortex.CodeBusy)
	if !isBusy(err) {
		t.Error("the busy error does not keep its SQLite cause")
	}
	if c := calls.Load(); c != 1+maxBusyRetries {
		t.Errorf("fn ran %d times, want %d (1 + %d retries)", c, 1+maxBusyRetries, maxBusyRetries)
	}
}

// Migrations are numbered uniquely and sorted.
func TestLoadMigrations(t *testing.T) {
	t.Parallel()
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	files := migrationFiles(t)
	if len(ms) != len(files) {
		t.Fatalf("%d embedded migrations, %d files", len(ms), len(files))
	}
	if !sort.SliceIsSorted(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version }) {
		t.Error("migrations not sorted")
	}
	for i, m := range ms {
		if i > 0 && ms[i-1].Version == m.Version {
			t.Errorf("duplicate migration version %d", m.Version)
		}
		if files[m.Version] != m.Name || strings.TrimSpace(m.SQL) == "" {
			t.Errorf("migration %d %q does not match its file", m.Version, m.Name)
		}
	}
}
