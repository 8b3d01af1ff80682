package ingest

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

// TestFirstRecordOver64KiBIsSniffedWhole: a Claude and a Codex transcript
// found by content (outside the agents' folders, under names that say
// nothing) whose first record is larger than the 64 KiB head are
// recognized from their complete first record, not marked unsupported.
// A source judged unsupported by an older sniffer is judged again.
func TestFirstRecordOver64KiBIsSniffedWhole(t *testing.T) {
	dir := t.TempDir()
	huge := strings.Repeat("long prompt text ", 8<<10) // 136 KiB
	claude := claudeLine("00000000-0000-4000-8000-000000000001", "2026-11-01T10:00:00.000Z", huge) + "\n" +
		claudeLine("00000000-0000-4000-8000-000000000002", "2026-11-01T10:00:01.000Z", "second") + "\n"
	// Codex: the identifying "type" comes after the big payload.
	codex := `{"timestamp":"2026-11-01T10:00:00.000Z","payload":{"id":"019a0000-0000-7000-8000-000000000001","cwd":"/w","instructions":"` +
		huge + `"},"type":"session_meta"}` + "\n" +
		`{"timestamp":"2026-11-01T10:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"hello codex"}}` + "\n"
	writeFile(t, filepath.Join(dir, "export-a"), []byte(claude))
	writeFile(t, filepath.Join(dir, "export-b.jsonl"), []byte(codex))
	db, path := openDB(t)
	sum := index(t, db, Options{Paths: []string{dir}})
	if sum.FilesUnsupported != 0 || sum.FilesRead != 2 || len(sum.Errors) != 0 {
		t.Fatalf("outcomes: %+v", sum)
	}
	r := rawDB(t, path)
	if n := count(t, r, `SELECT count(*) FROM logs WHERE ai_tool = 'claude'`); n != 2 {
		t.Errorf("claude rows %d, want 2", n)
	}
	if n := count(t, r, `SELECT count(*) FROM logs WHERE ai_tool = 'codex' AND message = 'hello codex'`); n != 1 {
		t.Errorf("codex user row %d, want 1", n)
	}

	// An older version remembered such a file as unsupported (no sniff
	// version): the next run judges it again although it is unchanged.
	w, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`UPDATE transcript_sources SET kind = 'unsupported' WHERE path LIKE '%export-a'`); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`DELETE FROM transcript_parser_states
		WHERE source_id = (SELECT id FROM transcript_sources WHERE path LIKE '%export-a')`); err != nil {
		t.Fatal(err)
	}
	sum = index(t, db, Options{Paths: []string{dir}})
	if sum.FilesRead+sum.FilesResumed != 1 || sum.FilesUnchanged != 1 {
		t.Fatalf("re-sniff of an old unsupported source: %+v", sum)
	}
	var kind string
	if err := r.QueryRow(`SELECT kind FROM transcript_sources WHERE path LIKE '%export-a'`).Scan(&kind); err != nil || kind != "claude" {
		t.Fatalf("kind after re-sniff: %q %v", kind, err)
	}
}

// TestCrashTruncatedLineThenAppendedRecord: the agent crashed mid-record
// (no newline), restarted and appended its next record to the same
// physical line. The cut record is a parse error; the appended one is
// stored — for Claude and for Codex.
func TestCrashTruncatedLineThenAppendedRecord(t *testing.T) {
	dir := t.TempDir()
	first := claudeLine("00000000-0000-4000-8000-000000000011", "2026-11-01T10:00:00.000Z", "before the crash")
	cut := claudeLine("00000000-0000-4000-8000-000000000012", "2026-11-01T10:00:01.000Z", "this record was cut {\"x\": 1} mid-write")
	cut = cut[:len(cut)-25]
	next := claudeLine("00000000-0000-4000-8000-000000000013", "2026-11-01T10:00:02.000Z", "after the restart")
	codexFirst := `{"timestamp":"2026-11-01T10:00:00.000Z","type":"session_meta","payload":{"id":"019a0000-0000-7000-8000-0000000000aa","cwd":"/w"}}`
	codexCut := `{"timestamp":"2026-11-01T10:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"cut her`
	codexNext := `{"timestamp":"2026-11-01T10:00:02.000Z","type":"event_msg","payload":{"type":"user_message","message":"codex after the restart"}}`
	claudePath, codexPath := filepath.Join(dir, "c.jsonl"), filepath.Join(dir, "rollout-x.jsonl")
	writeFile(t, claudePath, []byte(first+"\n"+cut))
	writeFile(t, codexPath, []byte(codexFirst+"\n"+codexCut))
	db, path := openDB(t)
	sum := index(t, db, Options{Paths: []string{dir}})
	if sum.PendingFiles != 2 {
		t.Fatalf("the cut records should wait: %+v", sum)
	}
	appendTo(t, claudePath, next+"\n")
	appendTo(t, codexPath, codexNext+"\n")
	sum = index(t, db, Options{Paths: []string{dir}})
	if sum.ParseErrors != 2 || sum.PendingFiles != 0 {
		t.Fatalf("after the append: %+v", sum)
	}
	r := rawDB(t, path)
	for _, msg := range []string{"before the crash", "after the restart", "codex after the restart"} {
		if n := count(t, r, `SELECT count(*) FROM logs WHERE message = ?`, msg); n != 1 {
			t.Errorf("%q stored %d times, want 1", msg, n)
		}
	}
	if n := count(t, r, `SELECT count(*) FROM transcript_parse_errors WHERE error LIKE 'record cut short%'`); n != 2 {
		t.Errorf("parse errors naming the cut records: %d", n)
	}
	// Idempotent: a forced re-read stores nothing new.
	sum = index(t, db, Options{Paths: []string{dir}, Force: true})
	if sum.Inserted != 0 {
		t.Fatalf("re-read inserted %d rows", sum.Inserted)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestMovedFilesAreFollowed: Codex moving a rollout from sessions/ to
// archived_sessions/ (both default roots) and a renamed Claude session do
// not store their records twice: the source follows the file, its rows
// point at the new path, and an append after the move is still ingested.
func TestMovedFilesAreFollowed(t *testing.T) {
	corpus := testcorpus.Real(t)
	home := t.TempDir()
	codexOld := filepath.Join(home, ".codex", "sessions", "2025", "11", "17", "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl")
	codexNew := filepath.Join(home, ".codex", "archived_sessions", filepath.Base(codexOld))
	claudeOld := filepath.Join(home, ".claude", "projects", "-experiments-ideas", "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")
	claudeNew := filepath.Join(home, ".claude", "projects", "-experiments-ideas", "renamed-session.jsonl")
	copyTo(t, filepath.Join(corpus, "codex/codex-session-view", filepath.Base(codexOld)), codexOld)
	copyTo(t, filepath.Join(corpus, "claude/claude-code-log/-experiments-ideas", filepath.Base(claudeOld)), claudeOld)
	os.MkdirAll(filepath.Dir(codexNew), 0o755)

	db, path := openDB(t)
	first := index(t, db, Options{Home: home})
	r := rawDB(t, path)
	rows := func(tool string) int64 {
		return count(t, r, `SELECT count(*) FROM logs WHERE ai_tool = ?`, tool)
	}
	codexRows, claudeRows := rows("codex"), rows("claude")
	if codexRows == 0 || claudeRows == 0 || first.Inserted != codexRows+claudeRows {
		t.Fatalf("first index: codex %d, claude %d rows: %+v", codexRows, claudeRows, first)
	}
	if err := os.Rename(codexOld, codexNew); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(claudeOld, claudeNew); err != nil {
		t.Fatal(err)
	}
	sum := index(t, db, Options{Home: home})
	if sum.FilesMoved != 2 || sum.Inserted != 0 {
		t.Fatalf("after the moves: %+v", sum)
	}
	if rows("codex") != codexRows || rows("claude") != claudeRows {
		t.Fatalf("rows doubled: codex %d → %d, claude %d → %d", codexRows, rows("codex"), claudeRows, rows("claude"))
	}
	if n := count(t, r, `SELECT count(*) FROM transcript_sources`); n != 2 {
		t.Errorf("%d sources, want 2", n)
	}
	for _, p := range []string{codexNew, claudeNew} {
		if n := count(t, r, `SELECT count(*) FROM logs JOIN transcript_sources s ON s.id = logs.source_id WHERE s.path = ?`, p); n == 0 {
			t.Errorf("no rows point at the new path %s", p)
		}
	}
	if n := count(t, r, `SELECT count(*) FROM logs JOIN transcript_sources s ON s.id = logs.source_id WHERE s.path IN (?, ?)`, codexOld, claudeOld); n != 0 {
		t.Errorf("%d rows still point at the old paths", n)
	}
	// The moved file goes on growing: the append is ingested, once.
	appendTo(t, claudeNew, claudeLine("00000000-0000-4000-8000-00000000abcd", "2026-11-01T10:00:00.000Z", "appended after the rename")+"\n")
	sum = index(t, db, Options{Home: home})
	if sum.Inserted != 1 || sum.FilesResumed != 1 {
		t.Fatalf("append after the move: %+v", sum)
	}
	if sum = index(t, db, Options{Home: home, Force: true}); sum.Inserted != 0 {
		t.Fatalf("forced re-read inserted %d", sum.Inserted)
	}
}

func copyTo(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, b)
}

// A folder reached through a symbolic link (a linked ~/.claude, say) is
// one set of files whichever way it is named: the index stores the
// resolved paths, as the watcher names them, and a store that learned the
// files under the linked name (before paths were resolved) follows them
// without storing a row twice.
func TestFilesThroughALinkAreStoredOnce(t *testing.T) {
	corpus := testcorpus.Real(t)
	real := filepath.Join(t.TempDir(), "dotfiles", "claude")
	file := filepath.Join(real, "projects", "-experiments-ideas", "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")
	copyTo(t, filepath.Join(corpus, "claude/claude-code-log/-experiments-ideas", filepath.Base(file)), file)
	link := filepath.Join(t.TempDir(), ".claude")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	viaLink := filepath.Join(link, "projects")
	real, err := filepath.EvalSymlinks(real) // the temp folder may itself be linked
	if err != nil {
		t.Fatal(err)
	}
	file = filepath.Join(real, "projects", "-experiments-ideas", filepath.Base(file))

	db, path := openDB(t)
	r := rawDB(t, path)
	first := index(t, db, Options{Paths: []string{viaLink}})
	if first.Inserted == 0 {
		t.Fatalf("nothing stored: %+v", first)
	}
	if n := count(t, r, `SELECT count(*) FROM transcript_sources WHERE path = ?`, file); n != 1 {
		t.Fatalf("the source is not stored under its resolved path %s", file)
	}
	if again := index(t, db, Options{Paths: []string{filepath.Join(real, "projects")}}); again.Inserted != 0 || again.FilesUnchanged != 1 {
		t.Fatalf("the same file by its real path: %+v", again)
	}

	// A store written before paths were resolved knows the linked name.
	aliased := filepath.Join(viaLink, "-experiments-ideas", filepath.Base(file))
	w, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Exec(`UPDATE transcript_sources SET path = ?`, aliased); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`UPDATE logs SET ai_transcript_path = ?`, aliased); err != nil {
		t.Fatal(err)
	}
	followed := index(t, db, Options{Paths: []string{viaLink}})
	if followed.Inserted != 0 || followed.FilesMoved != 1 {
		t.Fatalf("an older store's linked path: %+v", followed)
	}
	if n := count(t, r, `SELECT count(*) FROM logs`); n != first.Inserted {
		t.Fatalf("%d rows, want %d", n, first.Inserted)
	}
	if n := count(t, r, `SELECT count(*) FROM transcript_sources WHERE path = ?`, file); n != 1 {
		t.Errorf("the source did not follow to the resolved path")
	}
}
