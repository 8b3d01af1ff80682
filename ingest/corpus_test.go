package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/rawcodec"
)

// corpusFacts are counted straight from the corpus bytes with
// encoding/json, independently of the parsers.
type corpusFacts struct {
	claudeFiles, codexFiles, geminiFiles int
	attributionLines                     int
	claudeToolUse                        int // assistant records with a tool_use block
	claudeErrorResults                   int // user records with an is_error tool_result
	hookAttachments                      int
	codexFunctionCalls                   int
	geminiToolCalls                      int
	splitRecords                         []map[string]any // records that shared a line with another
	bigLineUUID                          string
}

func decodeAll(line []byte) []map[string]any {
	dec := json.NewDecoder(bytes.NewReader(line))
	var out []map[string]any
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return out
		}
		out = append(out, m)
	}
}

func countCorpus(t *testing.T, root string) corpusFacts {
	t.Helper()
	var f corpusFacts
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || strings.Contains(p, "/config/") {
			return err
		}
		base := filepath.Base(p)
		if base == "metadata.json" || strings.HasSuffix(base, ".meta.json") || base == "SOURCES.md" {
			return nil
		}
		tool := strings.Split(strings.TrimPrefix(p, root+"/"), "/")[0]
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return nil
		}
		switch tool {
		case "gemini":
			f.geminiFiles++
			var doc struct {
				Messages []struct {
					ToolCalls []any `json:"toolCalls"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			for _, m := range doc.Messages {
				f.geminiToolCalls += len(m.ToolCalls)
			}
			return nil
		case "claude":
			f.claudeFiles++
		case "codex":
			f.codexFiles++
		}
		seen := map[string]bool{} // uuids of this file: a repeated uuid is one record (last write wins)
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 4<<20), 8<<20)
		for sc.Scan() {
			line := sc.Bytes()
			recs := decodeAll(line)
			if len(recs) > 1 {
				f.splitRecords = append(f.splitRecords, recs...)
			}
			if len(line) > 1_000_000 && len(recs) == 1 {
				f.bigLineUUID, _ = recs[0]["uuid"].(string)
			}
			for _, r := range recs {
				if tool == "codex" {
					if pl, ok := r["payload"].(map[string]any); ok && r["type"] == "response_item" && pl["type"] == "function_call" {
						f.codexFunctionCalls++
					}
					continue
				}
				if u, _ := r["uuid"].(string); u != "" {
					if seen[u] {
						continue
					}
					seen[u] = true
				}
				if _, ok := r["attributionSkill"]; ok {
					f.attributionLines++
				}
				if a, ok := r["attachment"].(map[string]any); ok && r["type"] == "attachment" {
					if at, _ := a["type"].(string); strings.HasPrefix(at, "hook_") || at == "async_hook_response" {
						f.hookAttachments++
					}
				}
				msg, _ := r["message"].(map[string]any)
				blocks, _ := msg["content"].([]any)
				hasUse, hasErr := false, false
				for _, b := range blocks {
					bm, _ := b.(map[string]any)
					if bm["type"] == "tool_use" {
						hasUse = true
					}
					if bm["type"] == "tool_result" && bm["is_error"] == true {
						hasErr = true
					}
				}
				if r["type"] == "assistant" && hasUse {
					f.claudeToolUse++
				}
				if r["type"] == "user" && hasErr {
					f.claudeErrorResults++
				}
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestIndexRealCorpus(t *testing.T) {
	if testing.Short() {
		// The race run (-short) drives the same concurrent pipeline with
		// the generated and labelled corpora; the whole real corpus under
		// the race detector takes minutes.
		t.Skip("the whole real corpus: not in -short")
	}
	root := realCorpus(t)
	facts := countCorpus(t, root)
	db, path := openDB(t)
	sum := index(t, db, Options{Paths: []string{root}})
	t.Logf("summary: %+v", sum)
	if sum.FilesFailed != 0 || len(sum.Errors) != 0 || sum.ParseErrors != 0 {
		t.Fatalf("failures: %d files, errors %v, %d parse errors", sum.FilesFailed, sum.Errors, sum.ParseErrors)
	}
	raw := rawDB(t, path)
	kinds := map[string]int{}
	rows, err := raw.Query(`SELECT kind, count(*) FROM transcript_sources GROUP BY kind`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		kinds[k] = n
	}
	rows.Close()
	// Every transcript file of the corpus is ingested, with the right format.
	if kinds["claude"] != facts.claudeFiles || kinds["codex"] != facts.codexFiles || kinds["gemini-json"] != facts.geminiFiles {
		t.Errorf("sources by kind %v; corpus has %d claude, %d codex, %d gemini files", kinds, facts.claudeFiles, facts.codexFiles, facts.geminiFiles)
	}
	if kinds["empty"] != 1 {
		t.Errorf("want the one empty session file recorded as empty, got %v", kinds)
	}

	// Rows the later issues extract events from are all kept.
	checks := []struct {
		name string
		q    string
		want int
	}{
		{"claude tool_use lines", `SELECT count(*) FROM logs WHERE ai_tool='claude' AND ai_kind = 'assistant:tool_use'`, facts.claudeToolUse},
		{"claude is_error tool results", `SELECT count(*) FROM logs WHERE ai_tool='claude' AND ai_kind = 'user:tool_result' AND is_error=1`, facts.claudeErrorResults},
		{"claude hook attachments", `SELECT count(*) FROM logs WHERE ai_tool='claude' AND ai_role='hook' AND ai_kind LIKE 'attachment:%'`, facts.hookAttachments},
		{"codex function calls", `SELECT count(*) FROM logs WHERE ai_tool='codex' AND ai_kind='response_item:function_call'`, facts.codexFunctionCalls},
		{"gemini tool calls", `SELECT count(*) FROM logs WHERE ai_tool='gemini' AND ai_kind='gemini:tool_result'`, facts.geminiToolCalls},
	}
	for _, c := range checks {
		if got := count(t, raw, c.q); got != int64(c.want) {
			t.Errorf("%s: %d rows, corpus has %d", c.name, got, c.want)
		}
	}

	// Skill attribution lines: the stored raw JSON keeps the field.
	codec, err := rawcodec.New()
	if err != nil {
		t.Fatal(err)
	}
	attributed := 0
	rr, err := raw.Query(`SELECT raw FROM logs WHERE ai_tool = 'claude'`)
	if err != nil {
		t.Fatal(err)
	}
	for rr.Next() {
		var b []byte
		if err := rr.Scan(&b); err != nil {
			t.Fatal(err)
		}
		j, err := storedRecord(raw, codec, b)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(j) {
			t.Fatalf("stored raw is not valid JSON: %.200s", j)
		}
		if bytes.Contains(j, []byte(`"attributionSkill"`)) {
			attributed++
		}
	}
	rr.Close()
	if attributed < facts.attributionLines {
		t.Errorf("%d stored rows carry attributionSkill; the corpus has %d such lines", attributed, facts.attributionLines)
	}

	// Records sharing a line ("…}{…") and the 1 MB line are stored.
	if len(facts.splitRecords) < 6 {
		t.Fatalf("expected the corpus's joined lines, found %d records", len(facts.splitRecords))
	}
	for _, r := range facts.splitRecords {
		typ, _ := r["type"].(string)
		uuid, _ := r["uuid"].(string)
		switch {
		case typ == "summary":
			// A summary is the title of its leaf message's session.
			leaf, _ := r["leafUuid"].(string)
			if count(t, raw, `SELECT count(*) FROM ai_session_summaries WHERE leaf_uuid = ? AND summary = ?`, leaf, r["summary"]) == 0 {
				t.Errorf("summary (leaf %s) from a joined line is not stored", leaf)
			}
		case uuid != "" && typ != "file-history-snapshot":
			if count(t, raw, `SELECT count(*) FROM transcript_import_records WHERE record_key = ?`, "u:"+uuid) == 0 {
				t.Errorf("record %s (%s) from a joined line is not stored", uuid, typ)
			}
		}
	}
	if facts.bigLineUUID == "" {
		t.Fatal("the corpus's 1 MB line was not found")
	}
	if count(t, raw, `SELECT count(*) FROM transcript_import_records r JOIN logs l ON l.id = r.log_id
		WHERE r.record_key = ? AND l.ai_role = 'user' AND length(l.message) < 100000`, "u:"+facts.bigLineUUID) != 1 {
		t.Error("the 1 MB line (a user message with an image) is not stored as a bounded user row")
	}

	// Re-indexing stores nothing and reads nothing.
	again := index(t, db, Options{Paths: []string{root}})
	if again.Inserted != 0 || again.FilesUnchanged != again.FilesSeen {
		t.Errorf("re-index: %d inserted, %d of %d files unchanged", again.Inserted, again.FilesUnchanged, again.FilesSeen)
	}
	// Forcing a full re-read still duplicates nothing.
	forced := index(t, db, Options{Paths: []string{root}, Force: true})
	if forced.Inserted != 0 || forced.Updated != 0 {
		t.Errorf("forced re-read inserted %d, updated %d", forced.Inserted, forced.Updated)
	}
}

// errIs is errors.Is with a readable name in tests.
var errIs = errors.Is

var _ = io.EOF
