package ingest

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
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
	if _, err := w.Exec(`UPDATE transcript_sources SET kind = 'unsupported', parser_state = NULL WHERE path LIKE '%export-a'`); err != nil {
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
