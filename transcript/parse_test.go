package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// decodeObjects splits a line into its JSON values with encoding/json,
// independently of the package's own splitter.
func decodeObjects(t *testing.T, line []byte) []map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	var out []map[string]any
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		out = append(out, m)
	}
}

func TestParseLineConcatenatedRealLines(t *testing.T) {
	files := []string{
		"claude/entireio-cli/ee/cf21d297fe/0/full.jsonl",
		"claude/entireio-cli/8c/fa910f8ef9/0/full.jsonl",
	}
	found := 0
	for _, rel := range files {
		data := readCorpusFile(t, rel)
		p := NewClaudeParser(ContextFromPath(rel, FormatClaude))
		for i, line := range bytes.Split(data, []byte("\n")) {
			no := int64(i + 1)
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if json.Valid(line) {
				// Keep the parser's state as in a real read.
				ParseLine(p, line, no, true)
				continue
			}
			found++
			objs := decodeObjects(t, line)
			if len(objs) < 2 {
				t.Fatalf("%s:%d: invalid line holds %d objects", rel, no, len(objs))
			}
			res := ParseLine(p, line, no, true)
			if len(res) != len(objs) {
				t.Fatalf("%s:%d: %d results for %d records", rel, no, len(res), len(objs))
			}
			for j, r := range res {
				if r.Err != nil {
					t.Errorf("%s:%d record %d: %v", rel, no, j+1, r.Err)
					continue
				}
				if r.Line != no {
					t.Errorf("%s:%d record %d: Line = %d", rel, no, j+1, r.Line)
				}
				typ, _ := objs[j]["type"].(string)
				if r.Type != typ && !strings.HasPrefix(r.Type, typ+":") {
					t.Errorf("%s:%d record %d: Type = %q, want %q", rel, no, j+1, r.Type, typ)
				}
				if !json.Valid(r.Raw) {
					t.Errorf("%s:%d record %d: Raw is not one JSON value", rel, no, j+1)
				}
				if r.Skip != "" {
					continue
				}
				if u, ok := objs[j]["uuid"].(string); ok {
					if r.Entry.RecordKey != "u:"+u {
						t.Errorf("%s:%d record %d: RecordKey = %q, want u:%s", rel, no, j+1, r.Entry.RecordKey, u)
					}
				} else if !strings.HasPrefix(r.Entry.RecordKey, "h:") {
					t.Errorf("%s:%d record %d: RecordKey = %q, want a content key", rel, no, j+1, r.Entry.RecordKey)
				}
			}
		}
	}
	if found != 3 {
		t.Errorf("found %d concatenated lines in the two files, the reference counts 3", found)
	}
}

func TestParseLineConcatenatedExcerpt(t *testing.T) {
	line := []byte(testdataLines(t, "claude/concatenated.jsonl")[0])
	if json.Valid(line) {
		t.Fatal("excerpt is valid JSON; expected two records on one line")
	}
	for _, complete := range []bool{true, false} {
		res := ParseLine(NewClaudeParser(FileContext{SessionID: "ctx"}), line, 300, complete)
		if len(res) != 2 {
			t.Fatalf("complete=%v: %d results, want 2", complete, len(res))
		}
		a, s := res[0], res[1]
		if a.Err != nil || s.Err != nil {
			t.Fatalf("errors: %v / %v", a.Err, s.Err)
		}
		if a.Entry.Role != "assistant" || a.Entry.RecordKey != "u:7007c696-ea4b-464e-92d4-b258367335f4" {
			t.Errorf("first record: role %q key %q", a.Entry.Role, a.Entry.RecordKey)
		}
		// The second record is a summary: not a row, the title of its
		// leaf message's session.
		if s.Type != "summary" || s.Skip != SkipSummary || s.Summary == nil ||
			!strings.Contains(s.Summary.Text, "Refactor: Extract Duplicate Timestamp Functions") {
			t.Errorf("second record: type %q skip %q summary %+v", s.Type, s.Skip, s.Summary)
		}
		if !bytes.HasPrefix(s.Raw, []byte(`{"type":"summary"`)) || !bytes.HasSuffix(a.Raw, []byte(`"timestamp":"2026-01-14T15:18:07.297Z"}`)) {
			t.Errorf("Raw split at the wrong place: %q / %q", trunc(a.Raw), trunc(s.Raw))
		}
	}
}

// realPrompt is the real typed prompt excerpt, whose content is
// "python diverse_musical_ai.py".
func realPrompt(t *testing.T) string {
	t.Helper()
	l := testdataLines(t, "claude/user_prompt.jsonl")[0]
	if !strings.Contains(l, `"content":"python diverse_musical_ai.py"`) {
		t.Fatal("user_prompt.jsonl excerpt changed")
	}
	return l
}

func withPrompt(t *testing.T, content string) string {
	t.Helper()
	return strings.Replace(realPrompt(t), `"content":"python diverse_musical_ai.py"`, `"content":`+content, 1)
}

func TestParseLineBraceInsideString(t *testing.T) {
	line := withPrompt(t, `"if (a) }{ b } {\"x\":1}{\"y\":2}"`)
	res := ParseLine(NewClaudeParser(FileContext{}), []byte(line), 1, true)
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("got %d results (%v), want one record", len(res), res)
	}
	if want := `if (a) }{ b } {"x":1}{"y":2}`; res[0].Entry.Text != want {
		t.Errorf("Text = %q, want %q", res[0].Entry.Text, want)
	}
	// Joined with a second record, the "}{" inside the string still does not split.
	joined := line + testdataLines(t, "claude/summary.jsonl")[0]
	res = ParseLine(NewClaudeParser(FileContext{}), []byte(joined), 1, true)
	if len(res) != 2 || res[0].Err != nil || res[1].Err != nil || res[1].Type != "summary" {
		t.Fatalf("joined line: %d results %+v", len(res), res)
	}
	if res[0].Entry.Text != `if (a) }{ b } {"x":1}{"y":2}` {
		t.Errorf("joined line first text %q", res[0].Entry.Text)
	}
}

func TestParseLineTruncation(t *testing.T) {
	full := realPrompt(t)
	codexFull := testdataLines(t, "codex/rollout_0_58_head.jsonl")[2]
	for _, tc := range []struct {
		name     string
		p        func() RecordParser
		line     string
		complete bool
		wantErr  bool
		wantTrun bool
	}{
		{"claude cut, unterminated", claudeP, full[:len(full)/2], false, true, true},
		{"claude cut, terminated mid-file", claudeP, full[:len(full)/2], true, true, false},
		{"claude cut after first brace", claudeP, "{", false, true, true},
		{"claude whole, unterminated", claudeP, full, false, false, false},
		{"codex cut, unterminated", codexP, codexFull[:len(codexFull)-3], false, true, true},
		{"codex cut, terminated", codexP, codexFull[:len(codexFull)-3], true, true, false},
		{"joined, second cut, unterminated", claudeP, full + full[:40], false, true, true},
		{"joined, second cut, terminated", claudeP, full + full[:40], true, true, false},
		{"garbage after object, terminated", claudeP, full + "xyz", true, true, false},
		{"not JSON at all", claudeP, "hello world", true, true, false},
		{"not JSON, unterminated", claudeP, "hello world", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := ParseLine(tc.p(), []byte(tc.line), 9, tc.complete)
			if len(res) != 1 {
				t.Fatalf("%d results, want 1", len(res))
			}
			r := res[0]
			if (r.Err != nil) != tc.wantErr {
				t.Fatalf("Err = %v, want error %v", r.Err, tc.wantErr)
			}
			if errors.Is(r.Err, ErrTruncated) != tc.wantTrun {
				t.Errorf("Err = %v, want ErrTruncated %v", r.Err, tc.wantTrun)
			}
			if r.Err != nil && r.Skip != "" {
				t.Errorf("both Err and Skip set")
			}
			if r.Line != 9 || len(r.Raw) == 0 {
				t.Errorf("Line %d Raw %q", r.Line, r.Raw)
			}
		})
	}
}

func claudeP() RecordParser { return NewClaudeParser(FileContext{}) }
func codexP() RecordParser  { return NewCodexParser(FileContext{}, CodexState{}) }

func TestParseLineNonObject(t *testing.T) {
	for _, line := range []string{`[1,2]`, `[{"type":"user"}]`, `42`, `"text"`, `null`, `true`, `{"a":1} [2]`, `{"a":1} 3`} {
		for _, p := range []func() RecordParser{claudeP, codexP} {
			res := ParseLine(p(), []byte(line), 1, true)
			if len(res) != 1 || res[0].Err == nil {
				t.Errorf("%s: got %+v, want one error", line, res)
				continue
			}
			if errors.Is(res[0].Err, ErrTruncated) {
				t.Errorf("%s: complete non-object reported as truncated", line)
			}
		}
	}
	if _, err := SplitConcatenated([]byte(`{"a":1}[2]`)); err == nil {
		t.Error("SplitConcatenated accepted an array")
	}
}

func TestParseLineBlank(t *testing.T) {
	for _, line := range []string{"", " ", "\t\r", "\r\n"} {
		if res := ParseLine(claudeP(), []byte(line), 1, true); res != nil {
			t.Errorf("%q: %d results, want none", line, len(res))
		}
	}
	// Surrounding whitespace and a CR are trimmed.
	res := ParseLine(claudeP(), []byte("  "+realPrompt(t)+"\r"), 1, true)
	if len(res) != 1 || res[0].Err != nil || res[0].Entry.Text != "python diverse_musical_ai.py" {
		t.Errorf("padded line: %+v", res)
	}
}

func TestParseLineInvalidUTF8(t *testing.T) {
	line := withPrompt(t, "\"caf\xe9 \xff\xfe na\xc3\xafve \xed\xa0\x80 ok\"")
	if utf8.ValidString(line) {
		t.Fatal("test line should hold invalid UTF-8")
	}
	res := ParseLine(claudeP(), []byte(line), 1, true)
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("%+v", res)
	}
	e := res[0].Entry
	if !utf8.ValidString(e.Text) || !strings.Contains(e.Text, "naïve") || !strings.HasSuffix(e.Text, " ok") || !strings.Contains(e.Text, "\uFFFD") {
		t.Errorf("Text = %q", e.Text)
	}
	// Escaped lone surrogates and NULs.
	line = withPrompt(t, `"a\ud800b\u0000c"`)
	res = ParseLine(claudeP(), []byte(line), 1, true)
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("%+v", res)
	}
	if txt := res[0].Entry.Text; !utf8.ValidString(txt) || strings.ContainsRune(txt, 0) || !strings.HasPrefix(txt, "a") || !strings.HasSuffix(txt, "c") {
		t.Errorf("Text = %q", txt)
	}
	// Codex: invalid UTF-8 in a typed prompt and a tool output.
	cl := []string{
		"{\"timestamp\":\"2025-11-17T21:32:46.911Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"bad \xff byte\",\"images\":[]}}",
		"{\"timestamp\":\"2025-11-17T21:32:50.530Z\",\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":\"{\\\"output\\\":\\\"x\xfey\\\\u0000z\\\",\\\"metadata\\\":{\\\"exit_code\\\":3}}\"}}",
	}
	p := codexP()
	for _, l := range cl {
		res := ParseLine(p, []byte(l), 1, true)
		if len(res) != 1 || res[0].Err != nil || res[0].Skip != "" {
			t.Fatalf("%q: %+v", l, res)
		}
		if txt := res[0].Entry.Text; !utf8.ValidString(txt) || strings.ContainsRune(txt, 0) {
			t.Errorf("codex Text = %q", txt)
		}
	}
}

func TestSplitConcatenated(t *testing.T) {
	for _, tc := range []struct {
		in    string
		parts []string
		trunc bool
		err   bool
	}{
		{in: `{"a":1}`, parts: []string{`{"a":1}`}},
		{in: `{"a":1}{"b":2}`, parts: []string{`{"a":1}`, `{"b":2}`}},
		{in: `{"a":"}{"} {"b":2}  {"c":3}`, parts: []string{`{"a":"}{"}`, `{"b":2}`, `{"c":3}`}},
		{in: `{"a":1}{"b":`, trunc: true},
		{in: `{"a":1}}`, err: true},
		{in: `{"a":1}[1]`, err: true},
		{in: ``, err: true},
		{in: `   `, err: true},
	} {
		parts, err := SplitConcatenated([]byte(tc.in))
		switch {
		case tc.trunc:
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("%q: err = %v, want ErrTruncated", tc.in, err)
			}
		case tc.err:
			if err == nil || errors.Is(err, ErrTruncated) {
				t.Errorf("%q: err = %v, want a non-truncation error", tc.in, err)
			}
		default:
			if err != nil || len(parts) != len(tc.parts) {
				t.Errorf("%q: %q, %v", tc.in, parts, err)
				continue
			}
			for i := range parts {
				if string(parts[i]) != tc.parts[i] {
					t.Errorf("%q part %d = %q, want %q", tc.in, i, parts[i], tc.parts[i])
				}
			}
		}
	}
}

// TestParseLineCutRecordThenAppended: a record cut short by a crash and
// the record the restarted agent appended on the same line: an error for
// the cut one (its bytes as Raw), the appended ones parsed.
func TestParseLineCutRecordThenAppended(t *testing.T) {
	full := realPrompt(t)
	codexFull := testdataLines(t, "codex/rollout_0_58_head.jsonl")[2]
	for _, tc := range []struct {
		name   string
		p      func() RecordParser
		cut    string
		tail   []string
		wantOK int
	}{
		{"claude cut mid-string", claudeP, full[:len(full)/2], []string{full}, 1},
		{"claude cut after a nested object", claudeP, full[:strings.LastIndex(full, "}")-1], []string{full}, 1},
		{"claude cut, two appended", claudeP, full[:len(full)/3], []string{full, full}, 2},
		{"codex cut", codexP, codexFull[:len(codexFull)-3], []string{codexFull}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := tc.cut + strings.Join(tc.tail, "")
			res := ParseLine(tc.p(), []byte(line), 4, true)
			if len(res) != 1+len(tc.tail) {
				t.Fatalf("%d results, want %d", len(res), 1+len(tc.tail))
			}
			if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "cut short") || string(res[0].Raw) != tc.cut {
				t.Fatalf("first result: %v raw %q", res[0].Err, res[0].Raw)
			}
			ok := 0
			for _, r := range res[1:] {
				if r.Err == nil {
					ok++
				}
			}
			if ok != tc.wantOK {
				t.Fatalf("%d appended records parsed, want %d", ok, tc.wantOK)
			}
		})
	}
}
