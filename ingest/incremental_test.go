package ingest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/sqlite"
)

// corpusFile returns a real transcript file's bytes.
func corpusFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realCorpus(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Real files used by the incremental tests: a Claude session with
// subagent traffic and hooks, and a Codex rollout (records without ids).
const (
	claudeRel = "claude/planetfall-seed-signalkit/68/4e6d7327e9/0/full.jsonl"
	codexRel  = "codex/planetfall-seed-signalkit/5b/ee34acb370/0/full.jsonl"
)

// splitAt returns data cut after the n-th newline.
func splitAt(data []byte, n int) ([]byte, []byte) {
	off := 0
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(data[off:], '\n')
		if j < 0 {
			return data, nil
		}
		off += j + 1
	}
	return data[:off], data[off:]
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// mtime granularity: make sure the change is visible to the stat check.
	future := time.Now().Add(time.Duration(len(data)) * time.Microsecond)
	os.Chtimes(path, future, future)
}

// cleanSnapshot indexes the files' final content into a fresh store.
func cleanSnapshot(t *testing.T, files map[string][]byte) []string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		writeFile(t, filepath.Join(dir, name), data)
	}
	db, path := openDB(t)
	index(t, db, Options{Paths: []string{dir}})
	return snapshot(t, path, dir)
}

func TestAppendResumesAndStoresExactlyTheNewRecords(t *testing.T) {
	for _, rel := range []string{claudeRel, codexRel} {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(rel))), func(t *testing.T) {
			data := corpusFile(t, rel)
			if !bytes.HasSuffix(data, []byte("\n")) {
				data = append(data, '\n')
			}
			want := cleanSnapshot(t, map[string][]byte{"s.jsonl": data})

			dir := t.TempDir()
			file := filepath.Join(dir, "s.jsonl")
			first, rest := splitAt(data, 40)
			second, third := splitAt(rest, 60)
			writeFile(t, file, first)
			db, path := openDB(t)
			s1 := index(t, db, Options{Paths: []string{dir}})
			n1 := len(snapshot(t, path, dir))

			appendFile(t, file, second)
			s2 := index(t, db, Options{Paths: []string{dir}})
			if s2.FilesResumed != 1 || s2.FilesRewritten != 0 {
				t.Fatalf("append not resumed: %+v", s2)
			}
			n2 := len(snapshot(t, path, dir))
			if int64(n2-n1) != s2.Inserted {
				t.Errorf("second run inserted %d but the store grew by %d", s2.Inserted, n2-n1)
			}
			if s2.Duplicates != 0 {
				t.Errorf("a resumed append re-read %d stored records", s2.Duplicates)
			}

			// A half-written record waits for the rest of its line.
			cut := len(third) / 2
			for cut > 0 && third[cut-1] == '\n' {
				cut--
			}
			appendFile(t, file, third[:cut])
			s3 := index(t, db, Options{Paths: []string{dir}})
			if s3.ParseErrors != 0 {
				t.Errorf("a partial last line was reported as %d parse errors", s3.ParseErrors)
			}
			appendFile(t, file, third[cut:])
			index(t, db, Options{Paths: []string{dir}})

			got := snapshot(t, path, dir)
			diffSnapshots(t, want, got)
			_ = s1
		})
	}
}

func TestRewrittenAndTruncatedFilesAreReReadWithoutDuplicates(t *testing.T) {
	data := corpusFile(t, codexRel)
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	writeFile(t, file, data)
	db, path := openDB(t)
	index(t, db, Options{Paths: []string{dir}})
	before := snapshot(t, path, dir)

	// Rewrite in place, same size: change one byte inside the first line.
	mod := bytes.Clone(data)
	i := bytes.Index(mod, []byte(`"cwd":"`)) + len(`"cwd":"`)
	mod[i] ^= 0x01
	writeFile(t, file, mod)
	future := time.Now().Add(time.Hour)
	os.Chtimes(file, future, future)
	s := index(t, db, Options{Paths: []string{dir}})
	if s.FilesRewritten != 1 {
		t.Fatalf("rewrite not detected: %+v", s)
	}
	after := snapshot(t, path, dir)
	if len(after) < len(before) {
		t.Errorf("rows lost after a rewrite: %d -> %d", len(before), len(after))
	}

	// Truncate to half: re-read from the start, nothing lost, nothing new.
	half, _ := splitAt(mod, 100)
	writeFile(t, file, half)
	s = index(t, db, Options{Paths: []string{dir}})
	if s.FilesRewritten != 1 || s.Inserted != 0 {
		t.Errorf("truncation: %+v", s)
	}
	if n := len(snapshot(t, path, dir)); n != len(after) {
		t.Errorf("rows changed after truncation: %d -> %d", len(after), n)
	}
}

func TestCanceledIndexResumesToTheSameStore(t *testing.T) {
	root := realCorpus(t)
	dir := t.TempDir()
	for _, rel := range []string{claudeRel, codexRel, "claude/claude-code-log", "codex/agentv", "gemini/M-Gemini/chat_logs"} {
		src := filepath.Join(root, rel)
		if fi, err := os.Stat(src); err == nil && fi.IsDir() {
			copyTree(t, src, filepath.Join(dir, filepath.Base(rel)))
		} else {
			writeFile(t, filepath.Join(dir, filepath.Base(filepath.Dir(filepath.Dir(rel)))+".jsonl"), corpusFile(t, rel))
		}
	}
	dbClean, cleanPath := openDB(t)
	index(t, dbClean, Options{Paths: []string{dir}})
	want := snapshot(t, cleanPath, dir)

	for _, stopAfter := range []int{1, 2, 4} {
		db, path := openDB(t)
		ctx, cancel := context.WithCancel(context.Background())
		// Cancel right after the n-th committed transaction.
		store := &cancelingStore{Store: db, after: stopAfter, cancel: cancel}
		sum, err := Index(ctx, store, Options{Paths: []string{dir}, Hostname: "testhost", BatchRecords: 50, Workers: 2})
		cancel()
		if err != nil {
			t.Fatalf("canceled index returned an error: %v", err)
		}
		if !sum.Canceled {
			t.Fatalf("stop after %d: the run finished before it was canceled", stopAfter)
		}
		partial := len(snapshot(t, path, dir))
		if partial >= len(want) {
			t.Fatalf("stop after %d: nothing left to resume (%d of %d)", stopAfter, partial, len(want))
		}
		index(t, db, Options{Paths: []string{dir}})
		got := snapshot(t, path, dir)
		diffSnapshots(t, want, got)
		t.Logf("canceled after %d transactions (%d records stored), resumed to %d", stopAfter, partial, len(got))
	}
}

// cancelingStore cancels the run after a number of committed transactions.
type cancelingStore struct {
	Store
	after, n int
	cancel   func()
}

func (s *cancelingStore) ImportBatches(ctx context.Context, bs []cortex.ImportBatch) ([]cortex.ImportResult, error) {
	res, err := s.Store.ImportBatches(ctx, bs)
	if s.n++; s.n == s.after {
		s.cancel()
	}
	return res, err
}

// rejectingStore refuses the batches of one file that hold a given line,
// as the store does for records that violate a constraint; the file's
// other batches would be accepted.
type rejectingStore struct {
	Store
	path string
	line int64
}

func (s *rejectingStore) ImportBatches(ctx context.Context, bs []cortex.ImportBatch) ([]cortex.ImportResult, error) {
	for _, b := range bs {
		for _, r := range b.Records {
			if b.Source.Path == s.path && r.Line >= s.line && r.Line < s.line+10 {
				return nil, cortex.Errorf(cortex.CodeInvalid, "records of %s were rejected", s.path)
			}
		}
	}
	return s.Store.ImportBatches(ctx, bs)
}

func TestARejectedFileFailsAloneAndIsReadAgainLater(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"a.jsonl": corpusFile(t, claudeRel),
		"b.jsonl": corpusFile(t, codexRel),
		"c.jsonl": corpusFile(t, "claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"),
	}
	for name, data := range files {
		writeFile(t, filepath.Join(dir, name), data)
	}
	want := cleanSnapshot(t, files)
	db, path := openDB(t)
	bad := filepath.Join(dir, "b.jsonl")
	sum := index(t, &rejectingStore{Store: db, path: bad, line: 60}, Options{Paths: []string{dir}, BatchRecords: 15})
	if sum.FilesFailed != 1 || len(sum.Errors) != 1 || sum.Errors[0].Path != bad {
		t.Fatalf("want only b.jsonl failed, got %d failed, errors %v", sum.FilesFailed, sum.Errors)
	}
	raw := rawDB(t, path)
	// Only records before the rejected batch are stored, and the checkpoint
	// stays before it.
	if n := count(t, raw, "SELECT count(*) FROM logs JOIN transcript_sources s ON s.id = logs.source_id WHERE s.path = ? AND source_line >= 60", bad); n != 0 {
		t.Errorf("%d rows at or after the rejected batch were stored", n)
	}
	if n := count(t, raw, "SELECT last_line FROM transcript_sources WHERE path = ?", bad); n >= 60 {
		t.Errorf("the checkpoint moved past the rejected batch (line %d)", n)
	}
	if n := count(t, raw, "SELECT count(*) FROM logs JOIN transcript_sources s ON s.id = logs.source_id WHERE s.path != ?", bad); n == 0 {
		t.Error("the other files were not stored")
	}
	// The next run stores the file completely.
	index(t, db, Options{Paths: []string{dir}})
	diffSnapshots(t, want, snapshot(t, path, dir))
}

// sourceCounter counts the whole-checkpoint reads of a store.
type sourceCounter struct {
	*sqlite.DB
	all atomic.Int32
}

func (s *sourceCounter) Sources(ctx context.Context) (map[string]cortex.Source, error) {
	s.all.Add(1)
	return s.DB.Sources(ctx)
}

// Work-count gate: a pass over a few known files (a watcher's pass over
// what changed) reads their checkpoints only, not every checkpoint of the
// store; a path the store does not know yet (maybe a moved file) still
// reads them all.
func TestAPassOverKnownFilesReadsOnlyTheirCheckpoints(t *testing.T) {
	data := corpusFile(t, codexRel)
	first, rest := splitAt(data, 40)
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	writeFile(t, file, first)
	db, path := openDB(t)
	store := &sourceCounter{DB: db}
	index(t, store, Options{Paths: []string{dir}})
	if n := store.all.Load(); n != 1 {
		t.Fatalf("the first index of an unknown file read all checkpoints %d times, want 1", n)
	}

	appendFile(t, file, rest)
	s := index(t, store, Options{Paths: []string{file}})
	if n := store.all.Load(); n != 1 {
		t.Errorf("a pass over one known file read every checkpoint (%d reads in all)", n)
	}
	if s.FilesResumed != 1 || s.Inserted == 0 {
		t.Errorf("the append was not resumed: %+v", s)
	}
	// The resumed file was read with its parser state: the same rows as a
	// clean index of the whole file.
	diffSnapshots(t, cleanSnapshot(t, map[string][]byte{"s.jsonl": data}), snapshot(t, path, dir))

	other := filepath.Join(dir, "t.jsonl")
	writeFile(t, other, first)
	index(t, store, Options{Paths: []string{file, other}})
	if n := store.all.Load(); n != 2 {
		t.Errorf("a pass with an unknown path read all checkpoints %d times in all, want 2", n)
	}
}
