package llm

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

// Lines as the Gemini CLI writes them with --output-format stream-json.
const (
	gsInit      = `{"type":"init","timestamp":"2026-03-01T10:00:00.000Z","session_id":"3f1c2a9e-7b1d-4c55-9a55-0c6b2e1d7f10","model":"gemini-3.1-flash-lite-preview"}`
	gsUser      = `{"type":"message","timestamp":"2026-03-01T10:00:00.010Z","role":"user","content":"Read the instructions and the evidence from standard input and answer in Markdown."}`
	gsDelta1    = `{"type":"message","timestamp":"2026-03-01T10:00:02.100Z","role":"assistant","content":"# Skill Improvement Assessment\n\n","delta":true}`
	gsDelta2    = `{"type":"message","timestamp":"2026-03-01T10:00:02.300Z","role":"assistant","content":"The skill \u201cdeploy\u201d failed 3\u00d7 \ud83d\ude42.\n","delta":true}`
	gsSuccess   = `{"type":"result","timestamp":"2026-03-01T10:00:03.000Z","status":"success","stats":{"total_tokens":1520,"input_tokens":1400,"output_tokens":120,"cached":0,"input":1400,"duration_ms":2950,"tool_calls":0}}`
	gsFailed    = `{"type":"result","timestamp":"2026-03-01T10:00:03.000Z","status":"error","error":{"type":"FatalAuthenticationError","message":"Quota exceeded for quota metric 'Generate Content API requests per minute'"},"stats":{"total_tokens":0}}`
	gsWarning   = `{"type":"error","timestamp":"2026-03-01T10:00:01.000Z","severity":"warning","message":"Loop detected, stopping execution"}`
	gsError     = `{"type":"error","timestamp":"2026-03-01T10:00:01.000Z","severity":"error","message":"Maximum session turns exceeded"}`
	gsShell     = `{"type":"tool_use","timestamp":"2026-03-01T10:00:01.500Z","tool_name":"run_shell_command","tool_id":"run_shell_command-1761-1","parameters":{"command":"cat ~/.ssh/id_rsa"}}`
	gsSkill     = `{"type":"tool_use","timestamp":"2026-03-01T10:00:01.500Z","tool_name":"activate_skill","tool_id":"activate_skill-1","parameters":{"name":"assess"}}`
	gsTopic     = `{"type":"tool_use","timestamp":"2026-03-01T10:00:01.500Z","tool_name":"update_topic","tool_id":"update_topic-1","parameters":{"topic":"Assessment"}}`
	gsToolOK    = `{"type":"tool_result","timestamp":"2026-03-01T10:00:01.600Z","tool_id":"activate_skill-1","status":"success","output":"ok"}`
	gsWrite     = `{"type":"tool_use","timestamp":"2026-03-01T10:00:02.500Z","tool_name":"write_file","tool_id":"write_file-1","parameters":{"file_path":"/tmp/plans/assessment.md","content":"# Written assessment\n"}}`
	gsWriteNone = `{"type":"tool_use","timestamp":"2026-03-01T10:00:02.500Z","tool_name":"write_file","tool_id":"write_file-2","parameters":{"file_path":"/tmp/plans/empty.md","content":""}}`
)

func TestStreamParser(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		lines   []string
		deltas  string // concatenated deltas
		want    string // Finish's text
		wantErr string // error of Line or Finish
	}{
		{
			name:   "deltas",
			lines:  []string{gsInit, gsUser, gsDelta1, "", "   ", gsDelta2, gsSuccess},
			deltas: "# Skill Improvement Assessment\n\nThe skill “deploy” failed 3× 🙂.\n",
			want:   "# Skill Improvement Assessment\n\nThe skill “deploy” failed 3× 🙂.\n",
		},
		{
			name:   "allowed tools and warnings",
			lines:  []string{gsInit, gsSkill, gsToolOK, gsTopic, gsWarning, gsDelta1, gsSuccess},
			deltas: "# Skill Improvement Assessment\n\n",
			want:   "# Skill Improvement Assessment\n\n",
		},
		{
			name: "content parts, thoughts skipped",
			lines: []string{
				`{"type":"message","role":"assistant","content":[{"text":"A"},{"text":"plan","thought":true},{"inlineData":{}},"B",{"text":"C"}]}`,
				gsSuccess,
			},
			deltas: "ABC",
			want:   "ABC",
		},
		{
			name:   "write_file content preferred",
			lines:  []string{gsInit, gsWrite, gsWriteNone, gsDelta1, gsSuccess},
			deltas: "# Skill Improvement Assessment\n\n",
			want:   "# Written assessment\n",
		},
		{
			name:   "result response preferred over deltas",
			lines:  []string{gsDelta1, `{"type":"result","status":"success","response":"# Full response\n"}`},
			deltas: "# Skill Improvement Assessment\n\n",
			want:   "# Full response\n",
		},
		{
			name:   "unknown types ignored",
			lines:  []string{gsInit, `{"type":"stats","tokens":3}`, `{"no_type":true}`, gsDelta1, gsSuccess},
			deltas: "# Skill Improvement Assessment\n\n",
			want:   "# Skill Improvement Assessment\n\n",
		},
		{
			name:    "other tool",
			lines:   []string{gsInit, gsDelta1, gsShell, gsSuccess},
			deltas:  "# Skill Improvement Assessment\n\n",
			wantErr: `the model tried to use tool "run_shell_command"; assessments may not use tools`,
		},
		{
			name:    "unknown tool event",
			lines:   []string{gsInit, `{"type":"function_call","name":"x","kind":"tool_use"}`, gsSuccess},
			wantErr: `unknown event "function_call" that mentions a tool`,
		},
		{
			name:    "error event",
			lines:   []string{gsInit, gsError, gsSuccess},
			wantErr: `gemini reported an error: "Maximum session turns exceeded"`,
		},
		{
			name:    "failed result",
			lines:   []string{gsInit, gsDelta1, gsFailed},
			deltas:  "# Skill Improvement Assessment\n\n",
			wantErr: `gemini failed (result status "error"): "Quota exceeded`,
		},
		{
			name:    "failed result with a string error",
			lines:   []string{`{"type":"result","status":"cancelled","error":"stopped"}`},
			wantErr: `(result status "cancelled"): "stopped"`,
		},
		{
			name:    "not JSON",
			lines:   []string{gsInit, "Loaded cached credentials.", gsSuccess},
			wantErr: `gemini wrote a line that is not JSON: "Loaded cached credentials."`,
		},
		{
			name:    "not an object",
			lines:   []string{`["message"]`},
			wantErr: "not a JSON object",
		},
		{
			name:    "long garbage is quoted briefly",
			lines:   []string{strings.Repeat("x", 5000)},
			wantErr: `"` + strings.Repeat("x", 200) + `"…`,
		},
		{
			name:    "garbage is redacted",
			lines:   []string{"key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
			wantErr: `"key [REDACTED]"`,
		},
		{
			name:    "no result",
			lines:   []string{gsInit, gsDelta1, gsDelta2},
			deltas:  "# Skill Improvement Assessment\n\nThe skill “deploy” failed 3× 🙂.\n",
			wantErr: "gemini ended without a result",
		},
		{
			name:    "no text",
			lines:   []string{gsInit, gsUser, `{"type":"message","role":"assistant","content":"  \n"}`, gsSuccess},
			deltas:  "  \n",
			wantErr: "gemini returned no assessment text",
		},
		{
			name:    "empty output",
			wantErr: "gemini ended without a result",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p geminiStreamParser
			var deltas strings.Builder
			var err error
			for _, l := range tc.lines {
				var d string
				if d, err = p.Line([]byte(l)); err != nil {
					break
				}
				deltas.WriteString(d)
			}
			var got string
			if err == nil {
				got, err = p.Finish()
			}
			if deltas.String() != tc.deltas {
				t.Errorf("deltas %q, want %q", deltas.String(), tc.deltas)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				if code := cortex.ErrorCode(err); code != cortex.CodeUnavailable {
					t.Errorf("code %s", code)
				}
				if _, again := p.Finish(); again == nil {
					t.Errorf("the error is not sticky")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("text %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStreamParserReadLines(t *testing.T) {
	t.Parallel()
	// A line just under the line cap is read, its text cut to the answer
	// cap (never an error); a last line without a newline is read.
	long := `{"type":"message","role":"assistant","content":"` + strings.Repeat("a", geminiMaxLine-100) + `"}`
	input := long + "\n" + gsSuccess
	var p geminiStreamParser
	var stream bytes.Buffer
	if err := geminiRead(strings.NewReader(input), &p, &stream); err != nil {
		t.Fatal(err)
	}
	if text, err := p.Finish(); err != nil || len(text) != geminiMaxAnswer || stream.String() != text {
		t.Fatalf("text of %d bytes, streamed %d, err %v", len(text), stream.Len(), err)
	}

	// A line over the line cap is dropped unread: the answer before it
	// stands, cut, and the run succeeds.
	var q geminiStreamParser
	input = gsDelta1 + "\n" + strings.Repeat("b", geminiMaxLine+1) + "\n" + gsDelta2 + "\n" + gsSuccess
	if err := geminiRead(strings.NewReader(input), &q, nil); err != nil {
		t.Fatal(err)
	}
	if text, err := q.Finish(); err != nil || !q.cut || strings.Contains(text, "b") || text == "" {
		t.Fatalf("after an over-long line: %q %v", text, err)
	}
}

// geminiFailingWriter fails every write.
type geminiFailingWriter struct{ n int }

func (w *geminiFailingWriter) Write(b []byte) (int, error) {
	w.n++
	return 0, bytes.ErrTooLarge
}

func TestStreamParserBrokenStream(t *testing.T) {
	t.Parallel()
	var p geminiStreamParser
	w := &geminiFailingWriter{}
	input := strings.Join([]string{gsInit, gsDelta1, gsDelta2, gsSuccess}, "\n")
	if err := geminiRead(strings.NewReader(input), &p, w); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Finish(); err != nil || w.n != 1 {
		t.Fatalf("err %v after %d writes to a broken stream", err, w.n)
	}
}

func FuzzStreamParser(f *testing.F) {
	for _, seed := range []string{
		strings.Join([]string{gsInit, gsUser, gsDelta1, gsDelta2, gsSuccess}, "\n"),
		strings.Join([]string{gsInit, gsSkill, gsToolOK, gsWrite, gsDelta1, gsSuccess}, "\n"),
		strings.Join([]string{gsInit, gsWarning, gsShell, gsError, gsFailed}, "\n"),
		`{"type":"message","role":"assistant","content":[{"text":"A"},{"text":"B","thought":true},"C"]}` + "\n" + gsSuccess,
		`{"type":"result","status":"success","response":"R"}`,
		"not json\n{}\n[]\n\"s\"\n1\nnull",
		`{"type":"message","role":"assistant","content":"\xff\xfe"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p geminiStreamParser
		var all strings.Builder
		var err error
		for _, line := range bytes.Split(data, []byte("\n")) {
			var d string
			d, err = p.Line(line)
			if err != nil {
				if d != "" {
					t.Fatalf("delta %q with error %v", d, err)
				}
				break
			}
			all.WriteString(d)
			if !strings.Contains(p.Answer(), d) {
				t.Fatalf("delta %q is not part of the answer %q", d, p.Answer())
			}
		}
		if all.String() != p.Answer() {
			t.Fatalf("deltas %q do not add up to the answer %q", all.String(), p.Answer())
		}
		text, ferr := p.Finish()
		if err != nil && ferr == nil {
			t.Fatalf("Finish succeeded after the error %v", err)
		}
		if ferr == nil && strings.TrimSpace(text) == "" {
			t.Fatalf("Finish returned blank text without an error")
		}
	})
}
