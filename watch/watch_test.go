package watch

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"syscall"

	"github.com/fsnotify/fsnotify"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/sqlite"
)

// The latency target: an appended complete line is searchable within this.
const target = 2 * time.Second

func TestWatchAppendIsSearchableQuickly(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	root := t.TempDir()
	file := filepath.Join(root, "-experiments-ideas", newID()+".jsonl")
	writeFile(t, file, fx.headBytes())

	w := start(t, db, []string{root}, nil)
	base := rows(t, db)
	if base == 0 {
		t.Fatal("the initial full pass stored nothing")
	}
	for i := range 3 {
		word := token("append")
		appendFile(t, file, fx.probe(t, word))
		took := waitHits(t, db, word, target)
		t.Logf("append %d: searchable after %s", i+1, took.Round(time.Millisecond))
	}
	if got := rows(t, db); got != base+3 {
		t.Errorf("rows = %d, want %d", got, base+3)
	}
	w.alive()
}

func TestWatchPartialLineWaitsForItsEnd(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	root := t.TempDir()
	file := filepath.Join(root, "p", newID()+".jsonl")
	writeFile(t, file, fx.headBytes())
	w := start(t, db, []string{root}, nil)
	base := rows(t, db)

	word := token("partial")
	line := fx.probe(t, word)
	cut := len(line) / 2
	appendFile(t, file, line[:cut])
	rep := w.waitPass(file, 5*time.Second)
	if rep.Err != nil || len(rep.Summary.Errors) > 0 || rep.Summary.ParseErrors > 0 {
		t.Fatalf("pass over a partial line: err %v, %+v", rep.Err, rep.Summary)
	}
	if rep.Summary.PendingFiles != 1 {
		t.Errorf("pending files = %d, want 1", rep.Summary.PendingFiles)
	}
	if n := hits(t, db, word); n != 0 || rows(t, db) != base {
		t.Fatalf("a partial line was stored (%d hits)", n)
	}
	appendFile(t, file, line[cut:])
	took := waitHits(t, db, word, target)
	t.Logf("completed line searchable after %s", took.Round(time.Millisecond))
	if got := rows(t, db); got != base+1 {
		t.Errorf("rows = %d, want %d", got, base+1)
	}
}

func TestWatchNewNestedFolder(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	root := t.TempDir()
	start(t, db, []string{root}, nil)

	// mkdir -p and an immediate write: the file exists before the new
	// folders can be watched.
	word := token("nested")
	file := filepath.Join(root, "2026", "11", "30", newID()+".jsonl")
	writeFile(t, file, append(fx.headBytes(), fx.probe(t, word)...))
	took := waitHits(t, db, word, target)
	t.Logf("file in a new nested folder searchable after %s", took.Round(time.Millisecond))

	// The new folders are watched now: an append is seen too.
	word2 := token("nestedappend")
	appendFile(t, file, fx.probe(t, word2))
	waitHits(t, db, word2, target)

	// Files ingest ignores (and folders it skips) are not read.
	writeFile(t, filepath.Join(root, "2026", "notes.txt"), []byte("nothing"))
	writeFile(t, filepath.Join(root, "node_modules", "x", newID()+".jsonl"), fx.probe(t, token("skipped")))
}

func TestWatchRootCreatedLater(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	base := t.TempDir()
	existing := filepath.Join(base, "claude")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	later := filepath.Join(base, "codex", "sessions") // neither folder exists yet
	w := start(t, db, []string{existing, later}, nil)

	word := token("later")
	file := filepath.Join(later, "2026", "11", "30", newID()+".jsonl")
	writeFile(t, file, append(fx.headBytes(), fx.probe(t, word)...))
	took := waitHits(t, db, word, target)
	t.Logf("file under a root created after start searchable after %s", took.Round(time.Millisecond))
	w.alive()
}

func TestWatchRewrittenFileHasNoDuplicates(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	root := t.TempDir()
	file := filepath.Join(root, "r", newID()+".jsonl")
	kept := fx.probe(t, token("kept"))
	writeFile(t, file, append(fx.headBytes(), kept...))
	start(t, db, []string{root}, nil)
	base := rows(t, db)

	// Truncate and rewrite with a new first line: not an append.
	word := token("rewrite")
	body := append(append(fx.probe(t, word), fx.headBytes()...), kept...)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(body); err != nil {
		t.Fatal(err)
	}
	f.Close()
	waitHits(t, db, word, target)
	time.Sleep(300 * time.Millisecond) // let any second pass finish
	if got := rows(t, db); got != base+1 {
		t.Errorf("rows after the rewrite = %d, want %d (no duplicates)", got, base+1)
	}
}

func TestWatchBusyStoreRetries(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, path := openStore(t)
	root := t.TempDir()
	file := filepath.Join(root, "b", newID()+".jsonl")
	writeFile(t, file, fx.headBytes())
	w := start(t, db, []string{root}, nil)

	// A second "process" holds the write lock for 1.5 s.
	unlock := lockStore(t, path)
	locked := time.Now()
	word := token("busy")
	appendFile(t, file, fx.probe(t, word))
	time.Sleep(1500 * time.Millisecond)
	if n := hits(t, db, word); n != 0 {
		t.Fatalf("stored while the database was locked")
	}
	unlock()
	took := waitHits(t, db, word, 5*time.Second)
	t.Logf("stored %s after the lock was released (%s after the append)", took.Round(time.Millisecond),
		time.Since(locked).Round(time.Millisecond))
	w.alive()
}

// flakyStore fails on demand, like a database locked for longer than the
// store's own retries.
type flakyStore struct {
	ingest.Store
	failSources atomic.Int32
	failImports atomic.Int32
}

func (s *flakyStore) Sources(ctx context.Context) (map[string]cortex.Source, error) {
	if s.failSources.Add(-1) >= 0 {
		return nil, cortex.Errorf(cortex.CodeBusy, "the database is locked by another process; try again")
	}
	return s.Store.Sources(ctx)
}

func (s *flakyStore) ImportBatches(ctx context.Context, bs []cortex.ImportBatch) ([]cortex.ImportResult, error) {
	if s.failImports.Add(-1) >= 0 {
		return nil, cortex.Errorf(cortex.CodeBusy, "the database is locked by another process; try again")
	}
	return s.Store.ImportBatches(ctx, bs)
}

// IndexSearch passes the search indexing through (the wrapped store's).
func (s *flakyStore) IndexSearch(ctx context.Context, progress func(sqlite.SearchProgress)) (sqlite.SearchProgress, error) {
	return s.Store.(ingest.SearchStore).IndexSearch(ctx, progress)
}

func TestWatchRetriesWithBackoff(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	store := &flakyStore{Store: db}
	root := t.TempDir()
	file := filepath.Join(root, "f", newID()+".jsonl")
	writeFile(t, file, fx.headBytes())
	w := start(t, store, []string{root}, nil)

	// First the whole pass fails (Index returns the error), then the file's
	// batches are refused twice (reported per file): four attempts in all.
	store.failSources.Store(1)
	store.failImports.Store(2)
	word := token("flaky")
	began := time.Now()
	appendFile(t, file, fx.probe(t, word))
	var failures []Report
	for {
		rep := w.waitPass(file, 10*time.Second)
		if rep.Err == nil && len(rep.Summary.Errors) == 0 {
			break
		}
		failures = append(failures, rep)
	}
	if n := hits(t, db, word); n != 1 {
		t.Fatalf("hits after the retries = %d, want 1", n)
	}
	t.Logf("stored after %d failed passes, %s after the append", len(failures), time.Since(began).Round(time.Millisecond))
	if len(failures) != 3 || failures[0].Err == nil || cortex.ErrorCode(failures[0].Err) != cortex.CodeBusy ||
		len(failures[1].Summary.Errors) != 1 || failures[1].Summary.Errors[0].Path != file {
		t.Errorf("failed passes: %+v", failures)
	}
	logs := w.logs.String()
	if strings.Count(logs, "level=WARN") < 3 || !strings.Contains(logs, "retrying") || !strings.Contains(logs, "retry_in") {
		t.Errorf("retries were not logged as warnings:\n%s", logs)
	}
	// 250 ms + 500 ms + 1 s of backoff, less jitter.
	if d := time.Since(began); d < 1400*time.Millisecond {
		t.Errorf("retried too fast: %s", d)
	}
	w.alive()
}

func TestWatchCancelReturnsNilQuickly(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	root := t.TempDir()
	file := filepath.Join(root, "c", newID()+".jsonl")
	writeFile(t, file, fx.headBytes())
	w := start(t, db, []string{root}, nil)
	appendFile(t, file, fx.probe(t, token("cancel"))) // a pass may be pending or running
	time.Sleep(150 * time.Millisecond)
	took, err := w.stop()
	if err != nil {
		t.Fatalf("Run returned %v", err)
	}
	if took > time.Second {
		t.Errorf("Run took %s to return after cancel", took)
	}
	t.Logf("Run returned nil %s after cancel", took.Round(time.Microsecond))
}

func TestWatchCancelDuringBlockedPass(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, path := openStore(t)
	root := t.TempDir()
	file := filepath.Join(root, "c", newID()+".jsonl")
	writeFile(t, file, fx.headBytes())
	w := start(t, db, []string{root}, nil)
	// The pass for the append waits on a database locked elsewhere.
	defer lockStore(t, path)()
	appendFile(t, file, fx.probe(t, token("blocked")))
	time.Sleep(700 * time.Millisecond)
	took, err := w.stop()
	if err != nil {
		t.Fatalf("Run returned %v", err)
	}
	if took > time.Second {
		t.Errorf("Run took %s to return after cancel during a blocked pass", took)
	}
	t.Logf("Run returned nil %s after cancel during a pass blocked on a locked database", took.Round(time.Microsecond))
}

func TestWatchConstantAppendsAreIngestedEverySecond(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	root := t.TempDir()
	file := filepath.Join(root, "k", newID()+".jsonl")
	writeFile(t, file, fx.headBytes())
	// A debounce longer than the gap between writes: only the 1 s cap
	// gets the file ingested while it keeps growing.
	start(t, db, []string{root}, func(o *Options) { o.Debounce = 300 * time.Millisecond })
	word := token("steady")
	began := time.Now()
	appendFile(t, file, fx.probe(t, word))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				appendFile(t, file, fx.probe(t, token("filler")))
			}
		}
	}()
	defer func() { close(stop); <-done }()
	took := waitHits(t, db, word, target)
	t.Logf("a file appended every 100 ms was ingested %s after its first change", took.Round(time.Millisecond))
	if took > 1600*time.Millisecond {
		t.Errorf("took %s: the 1 s cap on waiting did not apply (since start %s)", took, time.Since(began))
	}
}

func TestWatchFallsBackToRescans(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	root := t.TempDir()
	logs := &logBuffer{}
	w, err := newWatcher(db, Options{
		Roots:  []string{root},
		Index:  ingest.Options{Workers: 1},
		Rescan: time.Minute, // the fallback must shorten it
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	w.notifier = func() (*fsnotify.Watcher, error) { return nil, fmt.Errorf("inotify: %w", syscall.ENOSPC) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	time.Sleep(100 * time.Millisecond)
	word := token("fallback")
	writeFile(t, filepath.Join(root, "x", newID()+".jsonl"), append(fx.headBytes(), fx.probe(t, word)...))
	took := waitHits(t, db, word, FallbackRescan+target)
	t.Logf("without notifications: stored after %s", took.Round(time.Millisecond))
	cancel()
	<-done
	done <- nil
	out := logs.String()
	if strings.Count(out, "level=WARN") != 1 || !strings.Contains(out, "max_user_watches") || !strings.Contains(out, "every 2s") {
		t.Errorf("want one clear warning, got:\n%s", out)
	}
}

func TestBackoffGrowsToTheCap(t *testing.T) {
	var b backoff
	now := time.Now()
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second,
		8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}
	for i, w := range want {
		d := b.next(now)
		if d > w || d < w*4/5 {
			t.Errorf("attempt %d: delay %s, want %s less up to 20%%", i+1, d, w)
		}
	}
}

func TestCandidate(t *testing.T) {
	for p, want := range map[string]bool{
		"/h/.claude/projects/p/s.jsonl":     true,
		"/h/.gemini/tmp/x/chats/s.json":     true,
		"/x/a.jsonl":                        true,
		"/x/a.ndjson":                       true,
		"/x/raw_transcript":                 true,
		"/x/agent-1.meta.json":              false,
		"/x/notes.txt":                      false,
		"/x/.hidden":                        false,
		"/x/cortex.db-wal":                  false,
		"/h/.codex/sessions/2026/11/r.json": true,
	} {
		if got := candidate(p); got != want {
			t.Errorf("candidate(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	db, _ := openStore(t)
	if err := Run(context.Background(), db, Options{}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("no roots: %v", err)
	}
	if err := Run(context.Background(), nil, Options{Roots: []string{t.TempDir()}}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("no store: %v", err)
	}
}

func TestWatchRenamedIntoPlaceAndRootRecreated(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	w := start(t, db, []string{root}, nil)

	// Written elsewhere, then renamed into place (atomic replace).
	word := token("renamed")
	tmp := filepath.Join(root, "s", ".tmp-write")
	writeFile(t, tmp, append(fx.headBytes(), fx.probe(t, word)...))
	if err := os.Rename(tmp, filepath.Join(root, "s", newID()+".jsonl")); err != nil {
		t.Fatal(err)
	}
	waitHits(t, db, word, target)

	// The whole root goes away and comes back.
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	word2 := token("recreated")
	writeFile(t, filepath.Join(root, "again", newID()+".jsonl"), append(fx.headBytes(), fx.probe(t, word2)...))
	took := waitHits(t, db, word2, target)
	t.Logf("file in a re-created root searchable after %s", took.Round(time.Millisecond))
	w.alive()
}

// lockStore holds the write lock of the database at path from a second
// connection (a second "process") until the returned function releases it.
func lockStore(t *testing.T, path string) func() {
	t.Helper()
	raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := raw.Conn(ctx)
	if err != nil {
		raw.Close()
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		raw.Close()
		t.Fatal(err)
	}
	return func() {
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Error(err)
		}
		conn.Close()
		raw.Close()
	}
}
