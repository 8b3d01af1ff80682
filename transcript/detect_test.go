package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sniffHead = 64 << 10 // what ingest hands to Sniff

func head(data []byte, n int) []byte {
	if len(data) > n {
		return data[:n]
	}
	return data
}

func TestSniffRealCorpus(t *testing.T) {
	empty := 0
	for _, f := range corpusFiles(t, true) {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 {
			// Ingest records empty files before sniffing; nothing can be
			// recognized in zero bytes.
			empty++
			if _, err := Sniff(data); !errors.Is(err, ErrNotTranscript) {
				t.Errorf("%s: empty file sniffed as a transcript", f.Rel)
			}
			continue
		}
		for _, n := range []int{sniffHead, len(data)} {
			got, err := Sniff(head(data, n))
			if err != nil {
				t.Errorf("%s (head %d): %v", f.Rel, n, err)
				continue
			}
			if got.Tool() != folderTool[f.Folder] {
				t.Errorf("%s (head %d): sniffed %s, folder says %s", f.Rel, n, got, f.Folder)
			}
			if f.Folder == "gemini" && got != FormatGeminiJSON {
				t.Errorf("%s: sniffed %s; every real Gemini file is a JSON document", f.Rel, got)
			}
		}
	}
	if empty > 1 {
		t.Errorf("%d empty transcript files; the corpus has one", empty)
	}
	for _, f := range corpusFiles(t, false) {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Sniff(head(data, sniffHead)); !errors.Is(err, ErrNotTranscript) {
			t.Errorf("%s: sniffed %q (%v), want ErrNotTranscript", f.Rel, got, err)
		}
	}
}

func TestSniff(t *testing.T) {
	claudeLine := realPrompt(t)
	codexMeta := testdataLines(t, "codex/rollout_0_58_head.jsonl")[0]
	gemini := string(readTestdata(t, "gemini/legacy_chat.json"))
	oplog := geminiOplog(t)
	oplogLines := strings.Split(oplog, "\n")
	minified, err := json.Marshal(json.RawMessage(gemini))
	if err != nil {
		t.Fatal(err)
	}
	concatenated := testdataLines(t, "claude/concatenated.jsonl")[0]
	for _, tc := range []struct {
		name string
		head string
		want Format // "" = ErrNotTranscript
	}{
		{"claude line", claudeLine + "\n", FormatClaude},
		{"claude line without newline", claudeLine, FormatClaude},
		{"claude after BOM and blank lines", "\xef\xbb\xbf\n\n" + claudeLine + "\n", FormatClaude},
		{"claude summary first", testdataLines(t, "claude/summary.jsonl")[0] + "\n" + claudeLine + "\n", FormatClaude},
		{"claude snapshot-only file", testdataLines(t, "claude/file_history_snapshot.jsonl")[0] + "\n", FormatClaude},
		{"claude concatenated first line", concatenated + "\n", FormatClaude},
		{"claude after a bad line", "{oops\n" + claudeLine + "\n", FormatClaude},
		{"claude first line cut by the buffer", claudeLine[:200], FormatClaude},
		{"codex session_meta", codexMeta + "\n", FormatCodex},
		{"codex first line cut by the buffer", codexMeta[:150], FormatCodex},
		{"gemini pretty document", gemini, FormatGeminiJSON},
		{"gemini pretty document, head only", gemini[:600], FormatGeminiJSON},
		{"gemini minified document", string(minified), FormatGeminiJSON},
		{"gemini op-log", oplog, FormatGeminiJSONL},
		{"gemini op-log header only", oplogLines[0] + "\n", FormatGeminiJSONL},
		{"gemini $set first", oplogLines[2] + "\n", FormatGeminiJSONL},
		{"empty", "", ""},
		{"whitespace", " \n\t\r\n  ", ""},
		{"binary", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ""},
		{"NUL after a brace", "{\"type\":\"user\"}\x00\x01\x02", ""},
		{"JSON array", `[{"type":"user","sessionId":"s","message":{}}]`, ""},
		{"JSON number", "42\n", ""},
		{"plain text", "hello world\n", ""},
		{"pretty non-Gemini JSON", "{\n  \"hooks\": {\n    \"Stop\": []\n  },\n  \"permissions\": {}\n}\n", ""},
		{"pretty JSON with messages but no session", "{\n  \"messages\": []\n}\n", ""},
		{"other JSONL", "{\"level\":\"info\",\"msg\":\"started\"}\n{\"level\":\"warn\",\"msg\":\"x\"}\n", ""},
		{"unrelated long first line", `{"data":"` + strings.Repeat("x", 5000), ""},
		{"braces but not JSON", "{{{{\n}}}}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Sniff([]byte(tc.head))
			if tc.want == "" {
				if !errors.Is(err, ErrNotTranscript) {
					t.Errorf("Sniff = %q, %v; want ErrNotTranscript", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Sniff = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestSniffLongFirstLine sniffs real files whose first line is longer than
// the sniff buffer (the sniffPartial path).
func TestSniffLongFirstLine(t *testing.T) {
	n := 0
	for _, f := range corpusFiles(t, true) {
		if f.Folder == "gemini" {
			continue
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		first, _, _ := bytes.Cut(data, []byte("\n"))
		if len(first) <= 4<<10 {
			continue
		}
		n++
		got, err := Sniff(data[:4<<10])
		if err != nil || got.Tool() != folderTool[f.Folder] {
			t.Errorf("%s (first line %d bytes, head 4 KiB): %q %v", f.Rel, len(first), got, err)
		}
	}
	if n == 0 {
		t.Skip("no file with a first line over 4 KiB")
	}
	t.Logf("%d files with a first line over 4 KiB", n)
}

func TestFormatFromPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want Format
		ok   bool
	}{
		{"/home/u/.claude/projects/-home-u-proj/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl", FormatClaude, true},
		{"/home/u/.claude/projects/-home-u-proj/agent-659acfed.jsonl", FormatClaude, true},
		{"/home/u/.claude/projects/-home-u-proj/ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/agent-a36efb2a1231c41e2.jsonl", FormatClaude, true},
		{"/home/u/.claude/projects/-home-u-proj/ef958aa1/subagents/agent-a36efb2a1231c41e2.meta.json", "", false},
		{"/home/u/.claude/settings.json", "", false},
		{"/home/u/.codex/sessions/2025/11/17/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl", FormatCodex, true},
		{"/home/u/.codex/archived_sessions/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl", FormatCodex, true},
		{"/home/u/.codex/config.toml", "", false},
		{"/home/u/.codex/sessions/2025/11/17/notes.txt", "", false},
		{"/home/u/.gemini/tmp/86bc0e27f2ba/chats/session-2025-12-24T21-37-2ccb51c5.json", FormatGeminiJSON, true},
		{"/home/u/.gemini/tmp/86bc0e27f2ba/chats/session-2026-09-10T18-13-7c1d2e3f.jsonl", FormatGeminiJSONL, true},
		{"/home/u/.gemini/tmp/86bc0e27f2ba/chats/7c1d2e3f-5a6b/8a9b0c1d.jsonl", FormatGeminiJSONL, true},
		{"/home/u/.gemini/tmp/86bc0e27f2ba/logs.json", "", false},
		{"/home/u/.gemini/settings.json", "", false},
		{"/data/claude/entireio-cli/0e/3fdc072c53/0/full.jsonl", "", false},
		{"/data/x/raw_transcript", "", false},
		{"", "", false},
	} {
		got, ok := FormatFromPath(filepath.FromSlash(tc.path))
		if got != tc.want || ok != tc.ok {
			t.Errorf("FormatFromPath(%s) = %q %v, want %q %v", tc.path, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFormatTool(t *testing.T) {
	for f, want := range map[Format]string{FormatClaude: "claude", FormatCodex: "codex", FormatGeminiJSON: "gemini", FormatGeminiJSONL: "gemini"} {
		if got := string(f.Tool()); got != want {
			t.Errorf("%s.Tool() = %s", f, got)
		}
	}
}

// firstSessionID finds the first "sessionId" (Claude) or session_meta id
// (Codex) of a head with encoding/json, line by line.
func firstSessionID(head []byte, codex bool) string {
	for _, ln := range bytes.Split(head, []byte("\n")) {
		dec := json.NewDecoder(bytes.NewReader(ln))
		for {
			var m struct {
				Type      string `json:"type"`
				SessionID string `json:"sessionId"`
				Payload   struct {
					ID string `json:"id"`
				} `json:"payload"`
			}
			if dec.Decode(&m) != nil {
				break
			}
			if codex && m.Type == "session_meta" && m.Payload.ID != "" {
				return m.Payload.ID
			}
			if !codex && m.SessionID != "" {
				return m.SessionID
			}
			break // only whole lines count, as in SessionFromHead
		}
	}
	return ""
}

func TestSessionFromHead(t *testing.T) {
	// Excerpts: a summary without a session, then a record with one.
	h := testdataLines(t, "claude/summary.jsonl")[0] + "\n" + realPrompt(t) + "\n"
	if got := SessionFromHead([]byte(h), FormatClaude); got != "d3ad4cdc-5657-435d-98fa-0035d53e383d" {
		t.Errorf("claude excerpt: %q", got)
	}
	if got := SessionFromHead([]byte(testdataLines(t, "claude/summary.jsonl")[0]), FormatClaude); got != "" {
		t.Errorf("summary only: %q", got)
	}
	rollout := strings.Join(testdataLines(t, "codex/rollout_0_58_head.jsonl"), "\n")
	if got := SessionFromHead([]byte(rollout), FormatCodex); got != "019a93b9-f380-7600-98ff-940e6b99603c" {
		t.Errorf("codex excerpt: %q", got)
	}
	if got := SessionFromHead([]byte(rollout), FormatGeminiJSON); got != "" {
		t.Errorf("gemini format: %q", got)
	}
}

// TestSessionFromHeadEntireCopies checks every Entire copy in the corpus
// (named full.jsonl / raw_transcript).
func TestSessionFromHeadEntireCopies(t *testing.T) {
	n := 0
	for _, f := range corpusFiles(t, true) {
		base := filepath.Base(f.Rel)
		if (base != "full.jsonl" && base != "raw_transcript") || f.Folder == "gemini" {
			continue
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		hd := head(data, sniffHead)
		format := FormatClaude
		if f.Folder == "codex" {
			format = FormatCodex
		}
		if ctx := ContextFromPath(f.Path, format); ctx.SessionID != "" {
			t.Errorf("%s: ContextFromPath session %q from the name of a copy", f.Rel, ctx.SessionID)
		}
		want := firstSessionID(hd, format == FormatCodex)
		got := SessionFromHead(hd, format)
		if got != want {
			t.Errorf("%s: SessionFromHead = %q, want %q", f.Rel, got, want)
		}
		if got == "" && format == FormatClaude {
			t.Errorf("%s: no session id in the first 64 KiB", f.Rel)
		}
		n++
	}
	t.Logf("%d Entire copies checked", n)
}

func TestResolveClaudeProject(t *testing.T) {
	dirs := map[string]bool{"/Users": true, "/Users/dain": true, "/Users/dain/workspace": true,
		"/Users/dain/workspace/claude-code-log": true, "/Users/dain/.config": true, "/Users/dain/.config/my_app": true,
		"/Users/dain/workspace/claude": true}
	isDir := func(p string) bool { return dirs[p] }
	for name, want := range map[string]string{
		"-Users-dain-workspace-claude-code-log": "/Users/dain/workspace/claude-code-log",
		"-Users-dain--config-my-app":            "/Users/dain/.config/my_app",
		"-Users-dain-workspace":                 "/Users/dain/workspace",
		"-Users-dain-elsewhere":                 "",
		"relative":                              "",
	} {
		if got := ResolveClaudeProject(name, isDir); got != want {
			t.Errorf("ResolveClaudeProject(%q) = %q, want %q", name, got, want)
		}
	}
	for path, want := range map[string]string{
		"/h/.claude/projects/-Users-x/abc.jsonl":                   "-Users-x",
		"/h/.claude/projects/-Users-x/abc/subagents/agent-1.jsonl": "-Users-x",
		"/h/elsewhere/abc.jsonl":                                   "",
	} {
		got, ok := ClaudeProjectFolder(path)
		if got != want || ok != (want != "") {
			t.Errorf("ClaudeProjectFolder(%q) = %q %v", path, got, ok)
		}
	}
}
