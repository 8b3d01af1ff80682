package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
)

// parsedFile is one corpus transcript parsed the way ingest does it.
type parsedFile struct {
	corpusFile
	data    []byte
	format  Format
	results []Result
}

// parseCorpus sniffs and parses every transcript of the real corpus:
// Sniff on the first 64 KiB, ContextFromPath plus SessionFromHead for
// copies without a session in their name, LineReader + ParseLine for JSONL,
// ParseGemini for Gemini.
func parseCorpus(t *testing.T) []parsedFile {
	t.Helper()
	var out []parsedFile
	for _, f := range corpusFiles(t, true) {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 {
			continue
		}
		hd := head(data, sniffHead)
		format, err := Sniff(hd)
		if err != nil {
			t.Fatalf("%s: %v", f.Rel, err)
		}
		ctx := ContextFromPath(f.Path, format)
		if ctx.SessionID == "" && ctx.AgentID == "" {
			ctx.SessionID = SessionFromHead(hd, format)
		}
		pf := parsedFile{corpusFile: f, data: data, format: format}
		switch format {
		case FormatClaude:
			pf.results = parseJSONL(t, NewClaudeParser(ctx), data)
		case FormatCodex:
			pf.results = parseJSONL(t, NewCodexParser(ctx, CodexState{}), data)
		default:
			pf.results, err = ParseGemini(ctx, data)
			if err != nil {
				t.Errorf("%s: %v", f.Rel, err)
			}
		}
		out = append(out, pf)
	}
	return out
}

// jsonRecords decodes every record of a JSONL file with encoding/json,
// including records written back to back on one line.
func jsonRecords(t *testing.T, data []byte) [][]map[string]any {
	t.Helper()
	var lines [][]map[string]any
	for _, ln := range bytes.Split(data, []byte("\n")) {
		var recs []map[string]any
		dec := json.NewDecoder(bytes.NewReader(ln))
		for {
			var m map[string]any
			err := dec.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("corpus line is not JSON: %v", err)
			}
			recs = append(recs, m)
		}
		lines = append(lines, recs)
	}
	return lines
}

func mapAt(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func strAt(v any, keys ...string) string {
	s, _ := mapAt(v, keys...).(string)
	return s
}

var (
	reProcessExit  = regexp.MustCompile(`(?m)^Process exited with code (-?\d+)`)
	reExitCodeLine = regexp.MustCompile(`(?m)^Exit code: (-?\d+)`)
)

func TestRealCorpus(t *testing.T) {
	files := parseCorpus(t)
	roleCounts := map[cortex.Tool]map[cortex.Role]int{}
	var (
		claudeErrResults, claudeErrExpected int
		claudeHooks, claudeHooksExpected    int
		codexNonZero, codexNonZeroExpected  int
		codexFailed, codexFailedExpected    int
		codexUsers, codexTyped              int
		codexAssistant, codexAgentMessages  int
		geminiResults, geminiCalls          int
		toolNamesChecked                    int
		bigLineChecked                      bool
	)
	validRoles := cortex.Roles()
	for _, pf := range files {
		tool := pf.format.Tool()
		if tool != folderTool[pf.Folder] {
			t.Errorf("%s: parsed as %s", pf.Rel, pf.format)
		}
		if roleCounts[tool] == nil {
			roleCounts[tool] = map[cortex.Role]int{}
		}
		seenTime := false
		for _, r := range pf.results {
			if r.Err != nil {
				t.Errorf("%s:%d: %v", pf.Rel, r.Line, r.Err)
				continue
			}
			if r.Skip != "" {
				continue
			}
			e := r.Entry
			roleCounts[tool][e.Role]++
			where := fmt.Sprintf("%s:%d (%s)", pf.Rel, r.Line, e.Kind)
			if e.SessionID == "" || e.RecordKey == "" || e.Tool != tool || !slices.Contains(validRoles, e.Role) {
				t.Errorf("%s: session %q key %q tool %q role %q", where, e.SessionID, e.RecordKey, e.Tool, e.Role)
			}
			if e.SessionID == "full" || e.SessionID == "raw_transcript" {
				t.Errorf("%s: session id %q taken from a copy's file name", where, e.SessionID)
			}
			if !utf8.ValidString(e.Text) || strings.ContainsRune(e.Text, 0) {
				t.Errorf("%s: text is not clean UTF-8", where)
			}
			if len(e.Text) > maxEntryText {
				t.Errorf("%s: text %d bytes > %d", where, len(e.Text), maxEntryText)
			}
			if m := longestBase64Run(e.Text); len(m) > 1024 {
				t.Errorf("%s: text holds a %d-byte base64 run: %.60s…", where, len(m), m)
			}
			if e.Severity.Level() < 0 || e.IsError && !e.Severity.AtLeast(cortex.SevWarning) {
				t.Errorf("%s: severity %q with IsError %v", where, e.Severity, e.IsError)
			}
			if e.Timestamp.IsZero() {
				if seenTime {
					t.Errorf("%s: zero timestamp after the file's first timestamped record", where)
				}
				if !e.TimestampEstimated {
					t.Errorf("%s: zero timestamp not marked estimated", where)
				}
			} else {
				seenTime = true
			}
			switch {
			case tool == cortex.ToolClaude && e.Role == cortex.RoleToolResult && e.IsError:
				claudeErrResults++
			case tool == cortex.ToolClaude && e.Role == cortex.RoleHook:
				claudeHooks++
			case tool == cortex.ToolCodex && strings.HasPrefix(r.Type, "response_item:") && strings.HasSuffix(r.Type, "_output"):
				if c, ok := e.Meta["exit_code"]; ok && c != "0" {
					codexNonZero++
				}
				if e.IsError {
					codexFailed++
				}
			case tool == cortex.ToolCodex && e.Role == cortex.RoleUser:
				codexUsers++
			case tool == cortex.ToolCodex && e.Role == cortex.RoleAssistant:
				codexAssistant++
			case tool == cortex.ToolGemini && e.Role == cortex.RoleToolResult:
				geminiResults++
			}
		}

		// Independent expectations, from encoding/json over the same bytes.
		switch pf.format {
		case FormatClaude:
			recs := jsonRecords(t, pf.data)
			nRecs := 0
			for _, line := range recs {
				nRecs += len(line)
			}
			if len(pf.results) != nRecs {
				t.Errorf("%s: %d results for %d records", pf.Rel, len(pf.results), nRecs)
			}
			claudeErrExpected += claudeErrorRecords(recs)
			claudeHooksExpected += claudeHookRecords(recs)
			toolNamesChecked += checkClaudeToolNames(t, pf, recs)
			for i, ln := range bytes.Split(pf.data, []byte("\n")) {
				if len(ln) == 1046940 {
					checkImageLine(t, pf, int64(i+1), ln)
					bigLineChecked = true
				}
			}
		case FormatCodex:
			recs := jsonRecords(t, pf.data)
			nRecs := 0
			for _, line := range recs {
				nRecs += len(line)
				for _, rec := range line {
					typ, pt := strAt(rec, "type"), strAt(rec, "payload", "type")
					switch {
					case typ == "event_msg" && pt == "user_message":
						codexTyped++
					case typ == "event_msg" && pt == "agent_message":
						codexAgentMessages++
					case typ == "response_item" && (pt == "function_call_output" || pt == "custom_tool_call_output"):
						exit, known := codexExit(mapAt(rec, "payload", "output"))
						if known && exit != 0 {
							codexNonZeroExpected++
						}
						out, _ := mapAt(rec, "payload", "output").(string)
						if known && exit != 0 || !known && strings.Contains(out, "apply_patch verification failed") {
							codexFailedExpected++
						}
					}
				}
			}
			if len(pf.results) != nRecs {
				t.Errorf("%s: %d results for %d records", pf.Rel, len(pf.results), nRecs)
			}
		default:
			var doc struct {
				Messages []struct {
					ToolCalls []json.RawMessage `json:"toolCalls"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(pf.data, &doc); err != nil {
				t.Fatalf("%s: %v", pf.Rel, err)
			}
			for _, m := range doc.Messages {
				geminiCalls += len(m.ToolCalls)
			}
		}
	}

	for _, tool := range cortex.Tools() {
		var parts []string
		total := 0
		for _, role := range validRoles {
			if n := roleCounts[tool][role]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s=%d", role, n))
				total += n
			}
		}
		t.Logf("%-6s %5d entries: %s", tool, total, strings.Join(parts, " "))
	}
	t.Logf("claude: %d failed tool results, %d hook rows, %d tool names checked; codex: %d non-zero exits, %d failed outputs, %d typed prompts, %d assistant messages; gemini: %d tool results",
		claudeErrResults, claudeHooks, toolNamesChecked, codexNonZero, codexFailed, codexUsers, codexAssistant, geminiResults)

	if claudeErrResults != claudeErrExpected || claudeErrExpected < 100 {
		t.Errorf("claude failed tool results: %d, records with is_error tool_result blocks: %d", claudeErrResults, claudeErrExpected)
	}
	if claudeHooks != claudeHooksExpected || claudeHooks < 300 {
		t.Errorf("claude hook rows: %d, hook records: %d (floor 300)", claudeHooks, claudeHooksExpected)
	}
	if codexNonZero != codexNonZeroExpected || codexFailed != codexFailedExpected || codexFailed < 40 {
		t.Errorf("codex outputs: %d non-zero exits (expected %d), %d failed (expected %d, floor 40)", codexNonZero, codexNonZeroExpected, codexFailed, codexFailedExpected)
	}
	if codexUsers != codexTyped || codexAssistant != codexAgentMessages {
		t.Errorf("codex: %d user entries for %d typed prompts, %d assistant entries for %d agent messages", codexUsers, codexTyped, codexAssistant, codexAgentMessages)
	}
	if geminiResults != geminiCalls || geminiCalls == 0 {
		t.Errorf("gemini: %d tool results for %d tool calls", geminiResults, geminiCalls)
	}
	if !bigLineChecked {
		t.Error("the 1,046,940-byte line was not found")
	}
}

// longestBase64Run returns the longest run of base64 alphabet characters.
func longestBase64Run(s string) string {
	best, start := "", -1
	for i := 0; i <= len(s); i++ {
		in := i < len(s) && (s[i] >= 'A' && s[i] <= 'Z' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= '0' && s[i] <= '9' || s[i] == '+' || s[i] == '/' || s[i] == '=')
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			if i-start > len(best) {
				best = s[start:i]
			}
			start = -1
		}
	}
	return best
}

// claudeErrorRecords counts user records (top-level or embedded in
// agent_progress) holding a tool_result block with is_error true.
func claudeErrorRecords(lines [][]map[string]any) int {
	n := 0
	for _, line := range lines {
		for _, rec := range line {
			var msg any
			switch {
			case strAt(rec, "type") == "user":
				msg = rec["message"]
			case strAt(rec, "type") == "progress" && strAt(rec, "data", "type") == "agent_progress" && strAt(rec, "data", "message", "type") == "user":
				msg = mapAt(rec, "data", "message", "message")
			default:
				continue
			}
			blocks, _ := mapAt(msg, "content").([]any)
			for _, b := range blocks {
				if strAt(b, "type") == "tool_result" && mapAt(b, "is_error") == true {
					n++
					break
				}
			}
		}
	}
	return n
}

// claudeHookRecords counts hook records of the three generations.
func claudeHookRecords(lines [][]map[string]any) int {
	n := 0
	for _, line := range lines {
		for _, rec := range line {
			typ := strAt(rec, "type")
			at := strAt(rec, "attachment", "type")
			switch {
			case typ == "attachment" && (strings.HasPrefix(at, "hook_") || at == "async_hook_response"),
				typ == "progress" && strAt(rec, "data", "type") == "hook_progress",
				typ == "system" && strAt(rec, "subtype") == "stop_hook_summary":
				n++
			}
		}
	}
	return n
}

// checkClaudeToolNames checks that every top-level tool_result entry names
// the tool of its tool_use from earlier in the file, and returns how many
// were checked.
func checkClaudeToolNames(t *testing.T, pf parsedFile, lines [][]map[string]any) int {
	t.Helper()
	byKey := map[string]Result{}
	for _, r := range pf.results {
		if r.Skip == "" && r.Err == nil {
			byKey[r.Entry.RecordKey] = r
		}
	}
	names := map[string]string{}
	n := 0
	for _, line := range lines {
		for _, rec := range line {
			blocks, _ := mapAt(rec, "message", "content").([]any)
			want := ""
			for _, b := range blocks {
				switch strAt(b, "type") {
				case "tool_use":
					names[strAt(b, "id")] = strAt(b, "name")
				case "tool_result":
					if want == "" {
						want = names[strAt(b, "tool_use_id")]
					}
				}
			}
			if strAt(rec, "type") != "user" || want == "" || strAt(rec, "uuid") == "" {
				continue
			}
			r, ok := byKey["u:"+strAt(rec, "uuid")]
			if !ok {
				t.Errorf("%s: no entry for user record %s", pf.Rel, strAt(rec, "uuid"))
				continue
			}
			n++
			if r.Entry.ToolName != want {
				t.Errorf("%s:%d: tool_result ToolName %q, the tool_use says %q", pf.Rel, r.Line, r.Entry.ToolName, want)
			}
		}
	}
	return n
}

// checkImageLine checks the 1 MB user line with a base64 image.
func checkImageLine(t *testing.T, pf parsedFile, no int64, line []byte) {
	t.Helper()
	var rec struct {
		Type    string `json:"type"`
		UUID    string `json:"uuid"`
		Message struct {
			Content []struct {
				Type   string `json:"type"`
				Text   string `json:"text"`
				Source struct {
					Data string `json:"data"`
				} `json:"source"`
			} `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(line, &rec); err != nil {
		t.Fatal(err)
	}
	var data, text string
	for _, c := range rec.Message.Content {
		switch c.Type {
		case "image":
			data = c.Source.Data
		case "text":
			text = c.Text
		}
	}
	if rec.Type != "user" || len(data) < 1<<20-64<<10 || text == "" {
		t.Fatalf("%s:%d: not the expected image line (type %q, image %d bytes)", pf.Rel, no, rec.Type, len(data))
	}
	for _, r := range pf.results {
		if r.Line != no {
			continue
		}
		e := r.Entry
		if r.Skip != "" || e.Role != cortex.RoleUser || e.RecordKey != "u:"+rec.UUID {
			t.Errorf("%s:%d: skip %q role %q key %q", pf.Rel, no, r.Skip, e.Role, e.RecordKey)
		}
		if !strings.Contains(e.Text, "[1 image(s)]") || !strings.Contains(e.Text, strings.TrimSpace(text)[:40]) {
			t.Errorf("%s:%d: text %.100q does not mention the image and the prompt", pf.Rel, no, e.Text)
		}
		if strings.Contains(e.Text, data[:64]) || len(e.Text) > 64<<10 {
			t.Errorf("%s:%d: image payload in the text (%d bytes)", pf.Rel, no, len(e.Text))
		}
		return
	}
	t.Errorf("%s:%d: no result", pf.Rel, no)
}

// codexExit reads a tool output's exit code the documented ways: the JSON
// envelope's metadata.exit_code, else a "Process exited with code N" or an
// "Exit code: N" line near the start.
func codexExit(out any) (int, bool) {
	s, ok := out.(string)
	if !ok {
		return 0, false
	}
	var env struct {
		Metadata struct {
			ExitCode *int `json:"exit_code"`
		} `json:"metadata"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(s)), &env) == nil && env.Metadata.ExitCode != nil {
		return *env.Metadata.ExitCode, true
	}
	if len(s) > 4096 {
		s = s[:4096]
	}
	for _, re := range []*regexp.Regexp{reProcessExit, reExitCodeLine} {
		if m := re.FindStringSubmatch(s); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n, true
		}
	}
	return 0, false
}

// TestRealCorpusKinds lists, per tool, the record kinds seen (as a log for
// reviewers) and checks that no record type is unknown to the parsers.
func TestRealCorpusKinds(t *testing.T) {
	unknown := map[string]int{}
	kinds := map[string]int{}
	for _, pf := range parseCorpus(t) {
		for _, r := range pf.results {
			switch {
			case r.Skip == SkipUnknownType:
				unknown[string(pf.format.Tool())+" "+r.Type]++
			case r.Skip == "" && r.Err == nil:
				kinds[string(pf.format.Tool())+" "+r.Entry.Kind]++
			}
		}
	}
	keys := make([]string, 0, len(kinds))
	for k := range kinds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-60s %5d", k, kinds[k])
	}
	for k, n := range unknown {
		t.Errorf("unknown record type in the real corpus: %s (%d)", k, n)
	}
}
