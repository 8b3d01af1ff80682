package ingest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"context"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/redact"
)

// fileLeaks returns the corpus secrets a piece of which is in the
// database file or its WAL.
func fileLeaks(t *testing.T, path string, corpus []testcorpus.Secret) []string {
	t.Helper()
	var data []byte
	for _, suffix := range []string{"", "-wal"} {
		b, _ := os.ReadFile(path + suffix)
		data = append(data, b...)
	}
	var out []string
	for _, c := range corpus {
		if testcorpus.Leak(string(data), c.Value) != "" {
			out = append(out, c.Value)
		}
	}
	return out
}

// TestRescanRedactsWhatAWeakerVersionStored: rows stored by a Cortex that
// redacted nothing hold every secret; `redact --rescan` (Rescan) leaves
// none in the database file, keeps every row, and a forced re-read of the
// transcript afterwards stores nothing twice.
func TestRescanRedactsWhatAWeakerVersionStored(t *testing.T) {
	corpus := testcorpus.Secrets(t)
	dir := t.TempDir()
	var lines []string
	for i, c := range corpus {
		lines = append(lines, claudeLine(fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "2026-11-01T10:00:00.000Z", c.Text))
		b, _ := json.Marshal(map[string]any{"type": "assistant", "timestamp": "2026-11-01T10:00:01.000Z", "sessionId": "sess-bad",
			"message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("t%d", i),
				"name": "Bash", "input": map[string]any{"command": c.Text}}}}})
		lines = append(lines, string(b)) // no uuid: keyed by content
	}
	writeFile(t, filepath.Join(dir, "s.jsonl"), []byte(strings.Join(lines, "\n")+"\n"))
	db, path := openDB(t)
	first := index(t, db, Options{Paths: []string{dir}, Redactor: redact.None()})
	if leaked := fileLeaks(t, path, corpus); len(leaked) < len(corpus)*9/10 {
		t.Fatalf("the weak store should hold the secrets: %d of %d", len(leaked), len(corpus))
	}
	dry, err := Rescan(context.Background(), db, RescanOptions{DryRun: true, Hostname: "h"})
	if err != nil || dry.RawRecords == 0 || dry.Messages == 0 || dry.Values == 0 {
		t.Fatalf("dry run: %+v %v", dry, err)
	}
	if leaked := fileLeaks(t, path, corpus); len(leaked) < len(corpus)*9/10 {
		t.Fatal("a dry run changed the store")
	}
	res, err := Rescan(context.Background(), db, RescanOptions{Hostname: "h"})
	if err != nil || res.RawRecords != dry.RawRecords || res.Scanned != first.Inserted {
		t.Fatalf("rescan: %+v %v (dry %+v)", res, err, dry)
	}
	if leaked := fileLeaks(t, path, corpus); len(leaked) > 0 {
		t.Fatalf("%d secrets still in the database file after the rescan, e.g. %q", len(leaked), leaked[0])
	}
	r := rawDB(t, path)
	if n := count(t, r, `SELECT count(*) FROM logs`); n != first.Inserted {
		t.Fatalf("%d rows after the rescan, %d before", n, first.Inserted)
	}
	if again, _ := Rescan(context.Background(), db, RescanOptions{Hostname: "h", DryRun: true}); again.RawRecords+again.Messages+again.Values != 0 {
		t.Fatalf("a second rescan still finds work: %+v", again)
	}
	// Re-reading the transcript with the current rules maps every record
	// (content-keyed ones too) onto its rescanned row.
	if sum := index(t, db, Options{Paths: []string{dir}, Force: true}); sum.Inserted != 0 {
		t.Fatalf("re-read after the rescan inserted %d rows", sum.Inserted)
	}
	// The searchable text was re-indexed: no piece of a secret is found.
	for _, c := range corpus[:10] {
		hits, err := db.Search(context.Background(), cortex.SearchParams{Query: `"` + c.Value + `"`, Limit: 5})
		if err == nil && len(hits.Hits) > 0 {
			t.Fatalf("secret %q is still searchable: %+v", c.Value, hits.Hits[0])
		}
	}
}
