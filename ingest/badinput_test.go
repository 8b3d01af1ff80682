package ingest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// claudeLine builds a Claude user record.
func claudeLine(uuid, ts, text string) string {
	b, _ := json.Marshal(map[string]any{
		"type": "user", "uuid": uuid, "timestamp": ts, "sessionId": "sess-bad", "cwd": "/work/bad",
		"message": map[string]any{"role": "user", "content": text},
	})
	return string(b)
}

func TestBadInputsGetAClearOutcomeAndLoseNothingElse(t *testing.T) {
	dir := t.TempDir()
	good := func(n int) string {
		return claudeLine(fmt.Sprintf("00000000-0000-4000-8000-%012d", n), "2026-11-01T10:00:00.000Z", fmt.Sprintf("good record %d", n))
	}
	binary := make([]byte, 4096)
	rand.Read(binary)
	binary[10] = 0
	big := claudeLine("00000000-0000-4000-8000-bbbbbbbbbbbb", "2026-11-01T10:00:01.000Z", "big "+strings.Repeat("x", 5<<20))
	files := map[string]string{
		"empty.jsonl":  "",
		"binary.jsonl": string(binary),
		"utf8.jsonl": good(1) + "\n" + `{"type":"user","uuid":"00000000-0000-4000-8000-00000000000a","timestamp":"2026-11-01T10:00:02.000Z","sessionId":"sess-bad","message":{"role":"user","content":"bad ` +
			"\xff\xfe" + ` bytes"}}` + "\n",
		"truncated.jsonl": good(2) + "\n" + good(3)[:40],
		"midbad.jsonl":    good(4) + "\n" + `{"type":"user", this is not json` + "\n" + good(5) + "\n",
		"badtime.jsonl":   claudeLine("00000000-0000-4000-8000-0000000000ff", "yesterday-ish", "record with a bad time") + "\n" + good(6) + "\n",
		"big.jsonl":       good(7) + "\n" + big + "\n" + good(8) + "\n",
		"notes.txt.json":  "just some text, not JSON\n",
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), []byte(content))
	}
	db, path := openDB(t)
	sum := index(t, db, Options{Paths: []string{dir}})
	t.Logf("%+v", sum)
	if sum.FilesEmpty != 1 || sum.FilesUnsupported != 2 || sum.FilesFailed != 0 {
		t.Errorf("outcomes: %d empty (want 1), %d unsupported (want 2: binary, text), %d failed", sum.FilesEmpty, sum.FilesUnsupported, sum.FilesFailed)
	}
	if sum.PendingFiles != 1 {
		t.Errorf("the truncated last record should be left pending, got %d pending files", sum.PendingFiles)
	}
	if sum.ParseErrors != 1 {
		t.Errorf("want exactly one parse error (the bad line in midbad.jsonl), got %d", sum.ParseErrors)
	}
	if sum.Warnings != 1 {
		t.Errorf("want one warning (the bad timestamp), got %d", sum.Warnings)
	}
	raw := rawDB(t, path)
	for i := 1; i <= 8; i++ {
		if i == 3 {
			continue // still being written: checked below
		}
		if count(t, raw, "SELECT count(*) FROM logs WHERE message = ?", fmt.Sprintf("good record %d", i)) != 1 {
			t.Errorf("good record %d was lost", i)
		}
	}
	if n := count(t, raw, "SELECT count(*) FROM logs WHERE message LIKE 'bad % bytes'"); n != 1 {
		t.Errorf("the record with invalid UTF-8 was not stored (%d)", n)
	}
	if n := count(t, raw, "SELECT count(*) FROM logs WHERE message = 'record with a bad time' AND timestamp = '2026-11-01T10:00:00.000Z'"); n != 1 {
		t.Errorf("the record with a bad timestamp should be stored with the next record's time (%d)", n)
	}
	if n := count(t, raw, "SELECT count(*) FROM logs WHERE message LIKE 'big x%' AND length(message) <= 40000"); n != 1 {
		t.Errorf("the 5 MB record should be stored with bounded text (%d)", n)
	}
	if n := count(t, raw, "SELECT count(*) FROM transcript_parse_errors WHERE error LIKE 'invalid JSON%' AND preview LIKE '{\"type\":\"user\", this is not json%'"); n != 1 {
		t.Errorf("the bad line's parse error with preview is missing (%d)", n)
	}
	if n := count(t, raw, "SELECT count(*) FROM transcript_sources WHERE kind = 'unsupported' AND last_error LIKE 'not a transcript: binary%'"); n != 1 {
		t.Errorf("the binary file's outcome is not recorded (%d)", n)
	}

	st, err := db.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// midbad.jsonl (bad line) and badtime.jsonl (warning) have errors;
	// the binary and text files are not counted: they are not transcripts.
	if st.Sources.WithErrors != 2 || st.Sources.Pending != 1 || st.ParseErrors != 2 {
		t.Errorf("status: %d files with errors, %d pending, %d parse errors", st.Sources.WithErrors, st.Sources.Pending, st.ParseErrors)
	}

	// The truncated record is stored once the writer completes it.
	f, _ := os.OpenFile(filepath.Join(dir, "truncated.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(good(3)[40:] + "\n")
	f.Close()
	again := index(t, db, Options{Paths: []string{dir}})
	if again.Inserted != 1 || again.PendingFiles != 0 {
		t.Errorf("completing the truncated record: %+v", again)
	}
	if count(t, raw, "SELECT count(*) FROM logs WHERE message = 'good record 3'") != 1 {
		t.Error("the completed record is not stored")
	}

	// A binary file named explicitly is an error the user sees.
	s := index(t, db, Options{Paths: []string{filepath.Join(dir, "binary.jsonl")}, Force: true})
	if len(s.Errors) != 1 || !strings.Contains(s.Errors[0].Error, "binary") {
		t.Errorf("explicit binary file: errors %v", s.Errors)
	}
}

func TestMissingPathIsNotFound(t *testing.T) {
	db, _ := openDB(t)
	_, err := Index(t.Context(), db, Options{Paths: []string{filepath.Join(t.TempDir(), "nope")}})
	if err == nil || !strings.Contains(err.Error(), "no such file or folder") {
		t.Fatalf("want a not-found error, got %v", err)
	}
}

func TestTenThousandTinyFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10k files")
	}
	dir := t.TempDir()
	for i := 0; i < 10000; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("p%02d", i%100))
		if i < 100 {
			os.MkdirAll(sub, 0o755)
		}
		line := claudeLine(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "2026-11-01T10:00:00.000Z", fmt.Sprintf("tiny %d", i))
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("s%05d.jsonl", i)), []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, path := openDB(t)
	sum := index(t, db, Options{Paths: []string{dir}})
	if sum.FilesRead != 10000 || sum.Inserted != 10000 {
		t.Fatalf("first index: %+v", sum)
	}
	again := index(t, db, Options{Paths: []string{dir}})
	if again.FilesUnchanged != 10000 || again.Inserted != 0 || again.BytesRead != 0 {
		t.Errorf("re-scan of unchanged files: %+v", again)
	}
	t.Logf("10k files: first index %v, unchanged re-scan %v", sum.Elapsed, again.Elapsed)
	if n := count(t, rawDB(t, path), "SELECT count(*) FROM ai_sessions"); n != 1 {
		t.Errorf("all records share one session id; got %d sessions", n)
	}
	_ = bytes.MinRead
}
