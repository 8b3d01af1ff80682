package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
)

// Search finds every transcript that says a phrase, wherever in a record it
// stands — tool outputs, arguments, attachments, hook output, injected
// context. The expectation is built from the raw files with encoding/json,
// independently of the parsers and of the search text: every string value
// of every record (JSON inside strings decoded too) but a Claude tool
// result's snapshots and copies of files, matched as whole words (a plural
// counts: the index stems English words). The other copies that structured
// copy holds (an edit's strings, file names) are not indexed on its row,
// but the transcript still says them on another.
func TestSearchFindsEveryTranscriptSayingAPhrase(t *testing.T) {
	dir := testcorpus.Real(t)
	db, _ := openDB(t)
	sum := index(t, db, Options{Paths: []string{dir}, Workers: 2})
	if sum.Search == nil || sum.Search.Indexed != sum.Inserted || sum.Search.Pending != 0 {
		t.Fatalf("search index after the run: %+v (rows %d)", sum.Search, sum.Inserted)
	}
	sources, err := db.Sources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{} // transcript path → every string it holds, lower-cased
	for path, s := range sources {
		if s.Kind == "unsupported" || s.Kind == "empty" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var all strings.Builder
		dec := json.NewDecoder(bytes.NewReader(b))
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				break
			}
			if bookkeeping(v) {
				continue
			}
			jsonStrings(&all, v)
		}
		texts[path] = strings.ToLower(all.String())
	}
	phrases := []string{"race condition", "memory leak", "connection refused", "permission denied", "rate limit",
		"merge conflict", "null pointer", "stack trace", "not found", "timed out", "pull request"}
	checked := 0
	for _, p := range phrases {
		re := regexp.MustCompile(`\b` + strings.Join(strings.Fields(p), `s?\W+`) + `s?\b`)
		var want []string
		for path, text := range texts {
			if re.MatchString(text) {
				want = append(want, path)
			}
		}
		if len(want) == 0 {
			continue
		}
		checked++
		res, err := db.Search(context.Background(), cortex.SearchParams{Query: `"` + p + `"`, Limit: 100000})
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, h := range res.Hits {
			found[h.TranscriptPath] = true
		}
		var missed []string
		for _, path := range want {
			if !found[path] {
				missed = append(missed, path)
			}
		}
		slices.Sort(missed)
		if len(missed) > 0 {
			t.Errorf("search %q: %d of %d transcripts that say it not found, e.g. %s", p, len(missed), len(want), missed[0])
		}
		t.Logf("%q: %d transcripts, %d rows", p, len(want), len(res.Hits))
	}
	if checked < 8 {
		t.Fatalf("only %d phrases occur in the corpus", checked)
	}
}

// bookkeeping reports whether a record is one Cortex counts but does not
// store (see docs/ingest.md): a file-history snapshot, a mode switch, a
// title, a queue operation, Codex's session and turn metadata (which carry
// the agent's instructions) and its token counts.
func bookkeeping(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	switch m["type"] {
	case "file-history-snapshot", "permission-mode", "last-prompt", "ai-title", "mode", "queue-operation",
		"session_meta", "turn_context":
		return true
	case "event_msg":
		p, _ := m["payload"].(map[string]any)
		switch p["type"] {
		case "token_count", "task_started", "task_complete":
			return true
		}
	}
	return false
}

// jsonStrings writes every string of a decoded JSON value, one per line;
// a string that holds a JSON object or array is decoded too.
func jsonStrings(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if r, ok := e.(map[string]any); ok && k == "toolUseResult" {
				// A file's snapshot before an edit is not something the
				// session said; a Read's copy of the file is said by its
				// result's text (with line numbers between the lines).
				r = maps.Clone(r)
				delete(r, "originalFile")
				delete(r, "originalFileContents")
				delete(r, "file")
				e = r
			}
			jsonStrings(b, e)
		}
	case []any:
		for _, e := range x {
			jsonStrings(b, e)
		}
	case string:
		if t := strings.TrimSpace(x); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
			var inner any
			if json.Unmarshal([]byte(t), &inner) == nil {
				jsonStrings(b, inner)
				return
			}
		}
		b.WriteString(x)
		b.WriteByte('\n')
	}
}
