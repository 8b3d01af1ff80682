package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

// TestPurgeAndRescanCommands drives `cortex purge` and `cortex redact
// --rescan` of the real binary: dry runs count, real runs delete (from
// the file's bytes too) and re-indexing does not bring purged rows back.
func TestPurgeAndRescanCommands(t *testing.T) {
	e := newEnv(t)
	db := filepath.Join(e.home, "c.db")
	dir := filepath.Join(e.home, "in")
	copyFile(t, filepath.Join(testcorpus.Labelled(t), "claude", "abuse", "session.jsonl"), filepath.Join(dir, "abuse.jsonl"))
	phrase := "confidential-merger-codename-zebra"
	line := `{"type":"user","uuid":"11111111-2222-4333-8444-555555555555","timestamp":"2026-11-01T10:00:00.000Z","sessionId":"purge-me","cwd":"/w","message":{"role":"user","content":"the plan is ` + phrase + ` do not share"}}`
	other := `{"type":"user","uuid":"11111111-2222-4333-8444-555555555556","timestamp":"2026-11-01T10:00:01.000Z","sessionId":"purge-me","cwd":"/w","message":{"role":"user","content":"an ordinary message"}}`
	// A summary titles the session with the phrase: purged with it.
	summary := `{"type":"summary","summary":"Merger ` + phrase + `","leafUuid":"11111111-2222-4333-8444-555555555556"}`
	if err := os.WriteFile(filepath.Join(dir, "purge-me.jsonl"), []byte(line+"\n"+other+"\n"+summary+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := e.run("--db", db, "index", dir); code != 0 {
		t.Fatalf("index: %d\n%s%s", code, out, errOut)
	}
	type result struct {
		DryRun   bool  `json:"dry_run"`
		Rows     int64 `json:"rows"`
		Sessions int64 `json:"sessions"`
		Removed  int64 `json:"sessions_removed"`
	}
	purge := func(args ...string) (result, int) {
		out, errOut, code := e.run(append([]string{"--db", db, "purge", "--json"}, args...)...)
		var r result
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("purge %v: %v\n%s%s", args, err, out, errOut)
			}
		}
		return r, code
	}
	if r, code := purge("--match", phrase, "--dry-run"); code != 0 || !r.DryRun || r.Rows != 1 {
		t.Fatalf("dry run: %+v exit %d", r, code)
	}
	if b, _ := os.ReadFile(db); !strings.Contains(string(b)+readWAL(db), phrase) {
		// (compressed raw records hide it; the searchable text shows it)
		if out, _, _ := e.run("--db", db, "search", "zebra", "--json"); !strings.Contains(out, phrase) {
			t.Fatal("the phrase should be stored before the purge")
		}
	}
	if out, _, _ := e.run("--db", db, "sessions", "--json"); !strings.Contains(out, `"title": "Merger `+phrase) {
		t.Fatalf("the summary should title the session: %s", out)
	}
	if r, code := purge("--match", phrase); code != 0 || r.Rows != 1 || r.Sessions != 1 || r.Removed != 0 {
		t.Fatalf("purge: %+v exit %d", r, code)
	}
	// The session keeps a row: its title is now its first prompt left.
	if out, _, _ := e.run("--db", db, "sessions", "--json"); !strings.Contains(out, `"title": "an ordinary message"`) {
		t.Fatalf("title after the purge: %s", out)
	}
	if out, _, _ := e.run("--db", db, "search", "zebra", "--json"); strings.Contains(out, phrase) {
		t.Fatalf("purged row still searchable: %s", out)
	}
	if b, _ := os.ReadFile(db); strings.Contains(string(b)+readWAL(db), phrase) {
		all := string(b) + readWAL(db)
		i := strings.Index(all, phrase)
		t.Fatalf("the purged text is still in the database file (%d bytes, wal %d, at %d): %q", len(b), len(readWAL(db)), i, all[max(0, i-300):i+50])
	}
	// Re-indexing (even forced) does not bring it back.
	if _, _, code := e.run("--db", db, "index", dir, "--force"); code != 0 {
		t.Fatal("re-index failed")
	}
	if out, _, _ := e.run("--db", db, "search", "zebra", "--json"); strings.Contains(out, phrase) {
		t.Fatal("re-indexing brought the purged row back")
	}
	// A session purge removes the session's last row and the session.
	if r, code := purge("--session", "purge-me", "--tool", "claude"); code != 0 || r.Rows != 1 || r.Removed != 1 {
		t.Fatalf("session purge: %+v exit %d", r, code)
	}
	if out, _, _ := e.run("--db", db, "sessions", "--json"); strings.Contains(out, "purge-me") {
		t.Fatalf("purged session still listed: %s", out)
	}
	// Bad selections.
	if _, code := purge(); code != 2 {
		t.Errorf("no selector: exit %d, want 2", code)
	}
	if _, code := purge("--match", "short"); code != 2 {
		t.Errorf("short match: exit %d, want 2", code)
	}
	if _, code := purge("--source", filepath.Join(dir, "nope.jsonl")); code != 3 {
		t.Errorf("unknown source: exit %d, want 3", code)
	}
	if r, code := purge("--source", filepath.Join(dir, "abuse.jsonl"), "--dry-run"); code != 0 || r.Rows == 0 {
		t.Errorf("source dry run: %+v exit %d", r, code)
	}
	// A rescan of a store redacted with the current rules finds nothing.
	out, errOut, code := e.run("--db", db, "redact", "--rescan", "--json")
	var rs struct {
		Scanned    int64 `json:"scanned_rows"`
		Redactions int64 `json:"redactions"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rs) != nil || rs.Scanned == 0 || rs.Redactions != 0 {
		t.Fatalf("rescan: exit %d %+v\n%s%s", code, rs, out, errOut)
	}
	if _, _, code := e.run("--db", db, "redact"); code != 2 {
		t.Errorf("redact without --rescan: exit %d, want 2", code)
	}
}

func readWAL(db string) string {
	b, _ := os.ReadFile(db + "-wal")
	return string(b)
}
