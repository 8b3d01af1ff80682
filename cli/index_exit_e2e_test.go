package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexExitCodes: `cortex index` exits non-zero, listing the failures,
// whenever something it was asked to index could not be indexed — and a
// named file that is not a transcript is reported on every run, not
// remembered silently. What could be read is still stored.
func TestIndexExitCodes(t *testing.T) {
	e := newEnv(t)
	db := filepath.Join(e.home, "c.db")
	dir := filepath.Join(e.home, "in")
	good := filepath.Join(dir, "good.jsonl")
	copyFile(t, filepath.Join(labelledDir(t), "claude", "abuse", "session.jsonl"), good)
	notes := filepath.Join(e.home, "notes.json")
	if err := os.WriteFile(notes, []byte(`{"todo":["not a transcript"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Everything fine: 0.
	if out, errOut, code := e.run("--db", db, "index", dir); code != 0 {
		t.Fatalf("good folder: exit %d\n%s%s", code, out, errOut)
	}
	// A named non-transcript: 2, on the first run and on every later one.
	for run := 1; run <= 2; run++ {
		out, errOut, code := e.run("--db", db, "index", dir, notes)
		if code != 2 || !strings.Contains(errOut, "notes.json") || !strings.Contains(errOut, "not a transcript") {
			t.Fatalf("run %d with a named non-transcript: exit %d\n%s%s", run, code, out, errOut)
		}
		var sum struct {
			Errors []struct {
				Path        string `json:"path"`
				Unsupported bool   `json:"unsupported"`
			} `json:"errors"`
		}
		jout, jerr, jcode := e.run("--db", db, "index", notes, "--json")
		if jcode != 2 {
			t.Fatalf("--json run %d: exit %d\n%s%s", run, jcode, jout, jerr)
		}
		if err := json.Unmarshal([]byte(jout), &sum); err != nil {
			t.Fatalf("--json output is not one JSON document: %v\n%s", err, jout)
		}
		if len(sum.Errors) != 1 || !sum.Errors[0].Unsupported || !strings.HasSuffix(sum.Errors[0].Path, "notes.json") {
			t.Fatalf("--json errors: %+v", sum.Errors)
		}
	}
	// A missing named path next to a good one: 3, the good one still read.
	if out, errOut, code := e.run("--db", db, "index", dir, filepath.Join(e.home, "nope.jsonl")); code != 3 || !strings.Contains(errOut, "nope.jsonl") {
		t.Fatalf("missing path: exit %d\n%s%s", code, out, errOut)
	}
	// A file that cannot be read (a chat file over the 512 MiB bound; a
	// sparse file costs no disk): 7, listed, and the rest of the folder is
	// indexed.
	chats := filepath.Join(e.home, ".gemini", "tmp", "abc", "chats")
	if err := os.MkdirAll(chats, 0o755); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(chats, "session-huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(513 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	copyFile(t, good, filepath.Join(chats, "..", "other.jsonl"))
	out, errOut, code := e.run("--db", db, "index", filepath.Join(e.home, ".gemini"))
	if code != 7 || !strings.Contains(errOut, "session-huge.json") || !strings.Contains(out, "Indexed into") {
		t.Fatalf("unreadable file: exit %d\n%s%s", code, out, errOut)
	}
}
