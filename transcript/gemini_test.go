package transcript

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
)

// geminiDocument is the legacy chat file shape, decoded with encoding/json
// for the expectations.
type geminiDocument struct {
	SessionID   string `json:"sessionId"`
	ProjectHash string `json:"projectHash"`
	StartTime   string `json:"startTime"`
	Messages    []struct {
		ID        string          `json:"id"`
		Timestamp string          `json:"timestamp"`
		Type      string          `json:"type"`
		Content   json.RawMessage `json:"content"`
		Model     string          `json:"model"`
		ToolCalls []struct {
			ID     string `json:"id"`
			Name   string `json:"name"`
			Status string `json:"status"`
			Result []struct {
				FunctionResponse struct {
					Response map[string]any `json:"response"`
				} `json:"functionResponse"`
			} `json:"result"`
		} `json:"toolCalls"`
	} `json:"messages"`
}

func checkGeminiDocument(t *testing.T, name string, data []byte, results []Result) {
	t.Helper()
	var doc geminiDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	project := "gemini://project/" + doc.ProjectHash
	i := 0
	next := func() Result {
		t.Helper()
		if i >= len(results) {
			t.Fatalf("%s: only %d results", name, len(results))
		}
		i++
		return results[i-1]
	}
	for mi, m := range doc.Messages {
		r := next()
		e := r.Entry
		if r.Err != nil || r.Skip != "" {
			t.Fatalf("%s message %d: err %v skip %q", name, mi+1, r.Err, r.Skip)
		}
		if e.Tool != cortex.ToolGemini || e.SessionID != doc.SessionID || e.Project != project || e.RecordKey != "m:"+m.ID {
			t.Errorf("%s message %d: tool %q session %q project %q key %q", name, mi+1, e.Tool, e.SessionID, e.Project, e.RecordKey)
		}
		if !e.Timestamp.Equal(mustTime(t, m.Timestamp)) || e.TimestampEstimated || r.Line != int64(mi+1) {
			t.Errorf("%s message %d: time %v line %d", name, mi+1, e.Timestamp, r.Line)
		}
		if e.Model != m.Model {
			t.Errorf("%s message %d: model %q, want %q", name, mi+1, e.Model, m.Model)
		}
		var content string
		_ = json.Unmarshal(m.Content, &content)
		var role cortex.Role
		switch m.Type {
		case "user":
			role = cortex.RoleUser
		case "gemini":
			role = cortex.RoleAssistant
			if len(m.ToolCalls) > 0 {
				role = cortex.RoleToolCall
			}
		case "info", "error":
			role = cortex.RoleSystem
		}
		if e.Role != role || e.IsError != (m.Type == "error") || (m.Type == "error") != (e.Severity == cortex.SevError) {
			t.Errorf("%s message %d (%s): role %q error %v severity %q", name, mi+1, m.Type, e.Role, e.IsError, e.Severity)
		}
		if content != "" && !strings.HasPrefix(e.Text, strings.TrimSpace(content)[:min(40, len(strings.TrimSpace(content)))]) {
			t.Errorf("%s message %d: text %.60q does not start with the content", name, mi+1, e.Text)
		}
		for _, tc := range m.ToolCalls {
			if !strings.Contains(e.Text, tc.Name) {
				t.Errorf("%s message %d: text lacks tool %q", name, mi+1, tc.Name)
			}
			if e.ToolName == "" {
				t.Errorf("%s message %d: no ToolName", name, mi+1)
			}
		}
		for _, tc := range m.ToolCalls {
			r := next()
			e := r.Entry
			failed := tc.Status == "error"
			for _, res := range tc.Result {
				if _, ok := res.FunctionResponse.Response["error"]; ok {
					failed = true
				}
			}
			if e.Role != cortex.RoleToolResult || e.RecordKey != "m:"+m.ID+"/t:"+tc.ID || e.ToolName != tc.Name {
				t.Errorf("%s call %s: role %q key %q tool %q", name, tc.ID, e.Role, e.RecordKey, e.ToolName)
			}
			if e.IsError != failed || e.Meta["status"] != tc.Status || e.Meta["call_id"] != tc.ID {
				t.Errorf("%s call %s (%s): error %v meta %v", name, tc.ID, tc.Status, e.IsError, e.Meta)
			}
			switch {
			case failed:
				if e.Severity != cortex.SevError || !strings.HasPrefix(e.Text, "["+tc.Name+" error]") {
					t.Errorf("%s call %s: severity %q text %.60q", name, tc.ID, e.Severity, e.Text)
				}
			case tc.Status == "cancelled":
				if e.Severity != cortex.SevWarning || !strings.HasPrefix(e.Text, "["+tc.Name+" cancelled]") {
					t.Errorf("%s call %s: severity %q text %.60q", name, tc.ID, e.Severity, e.Text)
				}
			default:
				if e.Severity != cortex.SevInfo || !strings.HasPrefix(e.Text, "["+tc.Name+" result]") {
					t.Errorf("%s call %s: severity %q text %.60q", name, tc.ID, e.Severity, e.Text)
				}
			}
			if e.SessionID != doc.SessionID || e.Timestamp.IsZero() {
				t.Errorf("%s call %s: session %q time %v", name, tc.ID, e.SessionID, e.Timestamp)
			}
		}
	}
	if i != len(results) {
		t.Errorf("%s: %d results, expected %d", name, len(results), i)
	}
}

func TestGeminiLegacy(t *testing.T) {
	for _, name := range []string{"gemini/legacy_chat.json", "gemini/entire_full.jsonl"} {
		data := readTestdata(t, name)
		res, err := ParseGemini(FileContext{SessionID: "from-path"}, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkGeminiDocument(t, name, data, res)
	}
	// The shrunk chat has one failed, one cancelled and one successful call.
	data := readTestdata(t, "gemini/legacy_chat.json")
	res, _ := ParseGemini(FileContext{}, data)
	statuses := map[string]int{}
	for _, r := range res {
		if r.Entry.Role == cortex.RoleToolResult {
			statuses[r.Entry.Meta["status"]]++
		}
	}
	if statuses["error"] != 1 || statuses["cancelled"] != 1 || statuses["success"] != 1 {
		t.Errorf("statuses %v", statuses)
	}
	var errText string
	for _, r := range res {
		if r.Entry.IsError {
			errText = r.Entry.Text
		}
	}
	if !strings.Contains(errText, "File not found") && !strings.Contains(errText, "rror") {
		t.Errorf("error result text %q carries no error message", errText)
	}
}

func geminiOplog(t *testing.T) string {
	t.Helper()
	return string(readTestdata(t, "gemini/oplog_synthetic.jsonl"))
}

func TestGeminiJSONL(t *testing.T) {
	data := geminiOplog(t)
	if strings.HasSuffix(data, "\n") {
		t.Fatal("the op-log excerpt must end with an unterminated line")
	}
	res, err := ParseGemini(FileContext{SessionID: "from-path"}, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		key     string
		role    cortex.Role
		text    string // prefix
		rewound bool
		isError bool
	}
	wants := []want{
		{"m:u1", cortex.RoleUser, "list the go files", false, false},
		{"m:g1", cortex.RoleToolCall, "run_shell_command command=ls *.go", false, false},
		{"m:g1/t:run_shell_command-1789150402500-1a2b3c4d", cortex.RoleToolResult, "[run_shell_command result] Command: ls *.go", false, false},
		{"m:g2", cortex.RoleAssistant, "There are two Go files: main.go and util.go.", false, false},
		{"m:u2", cortex.RoleUser, "delete util.go", true, false},
		{"m:g3", cortex.RoleToolCall, "run_shell_command command=rm util.go", true, false},
		{"m:g3/t:run_shell_command-1789150460000-5e6f7a8b", cortex.RoleToolResult, "[run_shell_command error] rm: cannot remove", true, true},
		{"m:u3", cortex.RoleUser, "never mind, keep it", false, false},
	}
	if len(res) != len(wants) {
		for _, r := range res {
			t.Logf("%q %q %q %v", r.Entry.RecordKey, r.Skip, r.Entry.Text, r.Err)
		}
		t.Fatalf("%d results, want %d", len(res), len(wants))
	}
	for i, w := range wants {
		r := res[i]
		e := r.Entry
		if r.Err != nil || r.Skip != "" {
			t.Errorf("%s: err %v skip %q", w.key, r.Err, r.Skip)
		}
		if e.RecordKey != w.key || e.Role != w.role || !strings.HasPrefix(e.Text, w.text) || e.IsError != w.isError {
			t.Errorf("result %d: key %q role %q error %v text %.60q, want %q %q %v %q", i, e.RecordKey, e.Role, e.IsError, e.Text, w.key, w.role, w.isError, w.text)
		}
		if (e.Meta["rewound"] == "true") != w.rewound {
			t.Errorf("%s: rewound meta %v, want %v", w.key, e.Meta, w.rewound)
		}
		if e.SessionID != "7c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f" || e.Project != "/home/dev/proj" {
			t.Errorf("%s: session %q project %q", w.key, e.SessionID, e.Project)
		}
	}
	// Last write wins: g1's call is the rewritten, finished one, and it is
	// reported at the line of its last write.
	if res[2].Entry.Meta["status"] != "success" || res[1].Line != 5 || res[3].Line != 8 {
		t.Errorf("g1 status %q line %d, g2 line %d", res[2].Entry.Meta["status"], res[1].Line, res[3].Line)
	}
	if strings.Contains(res[3].Entry.Text, "There are two Go files.") {
		t.Error("the first version of g2 survived")
	}
	// The unterminated last record is ignored; once terminated it is an error.
	res2, err := ParseGemini(FileContext{}, []byte(data+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	nErr := 0
	for _, r := range res2 {
		if r.Err != nil {
			nErr++
			if r.Line != 14 || r.Skip != "" {
				t.Errorf("error result: line %d skip %q", r.Line, r.Skip)
			}
		}
	}
	if nErr != 1 || len(res2) != len(wants)+1 {
		t.Errorf("terminated broken line: %d errors, %d results", nErr, len(res2))
	}
	// Completing the record appends the message.
	done := strings.TrimSuffix(data, "Okay, I left util.go in pla") + `Okay, I left util.go in place."}` + "\n"
	res3, err := ParseGemini(FileContext{}, []byte(done))
	if err != nil || len(res3) != len(wants)+1 || res3[len(res3)-1].Entry.RecordKey != "m:g4" {
		t.Errorf("completed log: err %v, %d results", err, len(res3))
	}
}

func TestGeminiRewind(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(geminiOplog(t)), "\n")
	lines = lines[:len(lines)-1] // drop the unterminated record
	u2 := lines[9]
	if !strings.Contains(u2, `"id":"u2"`) {
		t.Fatal("excerpt changed")
	}
	rewound := func(data string) map[string]bool {
		t.Helper()
		res, err := ParseGemini(FileContext{}, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, r := range res {
			if r.Entry.Role != cortex.RoleToolResult {
				out[r.Entry.RecordKey] = r.Entry.Meta["rewound"] == "true"
			}
		}
		return out
	}
	// A rewound message written again is live again.
	got := rewound(strings.Join(append(append([]string{}, lines...), u2), "\n") + "\n")
	if got["m:u2"] || !got["m:g3"] {
		t.Errorf("re-added u2: %v", got)
	}
	// Rewinding to an unknown id rewinds everything (as gemini-cli does).
	got = rewound(strings.Join(append(append([]string{}, lines[:9]...), `{"$rewindTo":"nope"}`), "\n") + "\n")
	for k, v := range got {
		if !v {
			t.Errorf("%s not rewound after rewinding to an unknown id", k)
		}
	}
	// $set can carry messages.
	set := `{"$set":{"messages":[{"id":"s1","timestamp":"2026-09-10T18:16:00.000Z","type":"user","content":"from set"}]}}`
	res, err := ParseGemini(FileContext{}, []byte(strings.Join(append(append([]string{}, lines...), set), "\n")+"\n"))
	if err != nil || res[len(res)-1].Entry.RecordKey != "m:s1" || res[len(res)-1].Entry.Text != "from set" {
		t.Errorf("$set messages: %v", err)
	}
}

func TestGeminiDegenerate(t *testing.T) {
	header := `{"sessionId":"7c1d2e3f-5a6b-4c7d-8e9f-0a1b2c3d4e5f","projectHash":"9f2c","startTime":"2026-09-10T18:13:00.000Z","lastUpdated":"2026-09-10T18:13:00.000Z","kind":"main"}`
	for _, tc := range []struct {
		name    string
		data    string
		wantErr bool
		n       int
	}{
		{"empty", "", false, 0},
		{"whitespace", " \n\t\n", false, 0},
		{"JSONL header only", header + "\n", false, 0},
		{"JSONL header only, unterminated", header, false, 0},
		{"legacy with empty messages", `{"sessionId":"s","projectHash":"h","messages":[]}`, false, 0},
		{"pretty document without messages", "{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\"\n}\n", true, 0},
		{"other JSON object", `{"hooks":{"enabled":true}}`, true, 0},
		{"other pretty JSON", "{\n  \"hooks\": {}\n}", true, 0},
		{"array", `[{"id":"a","type":"user"}]`, true, 0},
		{"number", `42`, true, 0},
		{"not JSON", "hello\nworld\n", true, 0},
		{"one message record", `{"id":"u1","timestamp":"2026-09-10T18:13:21.000Z","type":"user","content":"hi"}`, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ParseGemini(FileContext{SessionID: "p"}, []byte(tc.data))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			stored := 0
			for _, r := range res {
				if r.Err == nil && r.Skip == "" {
					stored++
				}
			}
			if !tc.wantErr && stored != tc.n {
				t.Errorf("%d stored results, want %d", stored, tc.n)
			}
		})
	}
}

func TestGeminiThoughtsOnlyAndUnknown(t *testing.T) {
	doc := `{"sessionId":"s","projectHash":"h","startTime":"2026-01-01T00:00:00Z","messages":[` +
		`{"id":"a","timestamp":"2026-01-01T00:00:01Z","type":"gemini","content":"","thoughts":[{"subject":"Plan","description":"look at files"}]},` +
		`{"id":"b","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":""},` +
		`{"id":"c","type":"hologram","content":"x"},` +
		`{"type":"user","content":"no id"},` +
		`{"type":"user","content":"no id"},` +
		`{"id":"d","type":"warning","content":"careful"}]}`
	res, err := ParseGemini(FileContext{}, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 6 {
		t.Fatalf("%d results", len(res))
	}
	if e := res[0].Entry; e.Role != cortex.RoleThinking || e.Text != "Plan: look at files" {
		t.Errorf("thoughts only: %q %q", e.Role, e.Text)
	}
	if res[1].Skip != SkipEmpty || res[2].Skip != SkipUnknownType || res[2].Type != "gemini:hologram" {
		t.Errorf("empty/unknown: %q %q %q", res[1].Skip, res[2].Skip, res[2].Type)
	}
	// Identical anonymous messages stay distinct records.
	if res[3].Entry.RecordKey == res[4].Entry.RecordKey || res[3].Entry.RecordKey == "" {
		t.Errorf("anonymous keys %q %q", res[3].Entry.RecordKey, res[4].Entry.RecordKey)
	}
	// Untimed messages take the previous time, estimated.
	if !res[3].Entry.TimestampEstimated || !res[3].Entry.Timestamp.Equal(mustTime(t, "2026-01-01T00:00:02Z")) {
		t.Errorf("untimed: %v %v", res[3].Entry.Timestamp, res[3].Entry.TimestampEstimated)
	}
	if e := res[5].Entry; e.Role != cortex.RoleSystem || e.Severity != cortex.SevWarning || e.IsError {
		t.Errorf("warning: %q %q %v", e.Role, e.Severity, e.IsError)
	}
	for _, r := range res {
		if !utf8.ValidString(r.Entry.Text) {
			t.Error("invalid UTF-8")
		}
	}
}
