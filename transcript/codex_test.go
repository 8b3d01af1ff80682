package transcript

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// codexLines parses lines with one Codex parser.
func codexLines(t *testing.T, ctx FileContext, lines ...string) []Result {
	t.Helper()
	p := NewCodexParser(ctx, CodexState{})
	var out []Result
	for i, l := range lines {
		rs := ParseLine(p, []byte(l), int64(i+1), true)
		if len(rs) != 1 {
			t.Fatalf("line %d: %d results", i+1, len(rs))
		}
		if rs[0].Err != nil {
			t.Fatalf("line %d: %v", i+1, rs[0].Err)
		}
		if rs[0].Err != nil && rs[0].Skip != "" {
			t.Fatalf("line %d: both Err and Skip", i+1)
		}
		out = append(out, rs[0])
	}
	return out
}

// payloadText returns the joined input/output text parts of a message payload.
func payloadText(t *testing.T, rec map[string]any) string {
	t.Helper()
	var parts []string
	for _, p := range at(t, rec, "payload", "content").([]any) {
		if s, ok := p.(map[string]any)["text"].(string); ok {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

func TestCodexRollout058(t *testing.T) {
	lines := testdataLines(t, "codex/rollout_0_58_head.jsonl")
	meta := obj(t, lines[0])
	sid := atStr(t, meta, "payload", "id")
	cwd := atStr(t, meta, "payload", "cwd")
	ver := atStr(t, meta, "payload", "cli_version")
	rs := codexLines(t, FileContext{SessionID: "from-path"}, lines...)

	want := []struct {
		skip string
		role cortex.Role
		typ  string
	}{
		{SkipBookkeeping, "", "session_meta"},
		{"", cortex.RoleContext, "response_item:message"},
		{"", cortex.RoleUser, "response_item:message"},
		{SkipDuplicate, "", "event_msg:user_message"},
		{SkipBookkeeping, "", "turn_context"},
		{SkipBookkeeping, "", "response_item:ghost_snapshot"},
		{SkipBookkeeping, "", "event_msg:token_count"},
		{"", cortex.RoleThinking, "event_msg:agent_reasoning"},
		{SkipBookkeeping, "", "event_msg:token_count"},
		{SkipDuplicate, "", "response_item:reasoning"},
		{"", cortex.RoleToolCall, "response_item:function_call"},
		{"", cortex.RoleToolResult, "response_item:function_call_output"},
		{SkipBookkeeping, "", "turn_context"},
	}
	if len(rs) != len(want) {
		t.Fatalf("%d results", len(rs))
	}
	for i, w := range want {
		r := rs[i]
		if r.Skip != w.skip || r.Type != w.typ || (w.skip == "" && r.Entry.Role != w.role) {
			t.Errorf("line %d: skip %q type %q role %q, want %q %q %q", i+1, r.Skip, r.Type, r.Entry.Role, w.skip, w.typ, w.role)
		}
		if r.Version != ver {
			t.Errorf("line %d: Version %q, want %q", i+1, r.Version, ver)
		}
		if r.Skip != "" {
			continue
		}
		e := r.Entry
		rec := obj(t, lines[i])
		if e.Tool != cortex.ToolCodex || e.SessionID != sid || e.Project != cwd || e.ToolVersion != ver || e.RecordKey == "" {
			t.Errorf("line %d: tool %q session %q project %q version %q key %q", i+1, e.Tool, e.SessionID, e.Project, e.ToolVersion, e.RecordKey)
		}
		if !e.Timestamp.Equal(mustTime(t, atStr(t, rec, "timestamp"))) || e.TimestampEstimated {
			t.Errorf("line %d: Timestamp %v", i+1, e.Timestamp)
		}
	}
	if rs[2].Entry.Text != strings.TrimSpace(payloadText(t, obj(t, lines[2]))) {
		t.Errorf("typed prompt text %q", rs[2].Entry.Text)
	}
	if !strings.HasPrefix(rs[1].Entry.Text, "<environment_context>") {
		t.Errorf("environment context text %.40q", rs[1].Entry.Text)
	}
	if rs[7].Entry.Text != atStr(t, obj(t, lines[7]), "payload", "text") {
		t.Errorf("reasoning text %q", rs[7].Entry.Text)
	}
	call, out := rs[10].Entry, rs[11].Entry
	callID := atStr(t, obj(t, lines[10]), "payload", "call_id")
	if call.ToolName != "shell" || call.Meta["call_id"] != callID || !strings.Contains(call.Text, `command=["bash","-lc","ls"]`) {
		t.Errorf("function_call: tool %q meta %v text %q", call.ToolName, call.Meta, call.Text)
	}
	if out.ToolName != "shell" || out.IsError || out.Meta["exit_code"] != "0" || out.Meta["call_id"] != callID {
		t.Errorf("function_call_output: tool %q error %v meta %v", out.ToolName, out.IsError, out.Meta)
	}
	var env struct{ Output string }
	if err := json.Unmarshal([]byte(atStr(t, obj(t, lines[11]), "payload", "output")), &env); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Text, "[shell result] "+env.Output[:30]) {
		t.Errorf("output text %.60q, want the envelope's output", out.Text)
	}
	// 0.58 turn_context has no turn_id; the model is kept for assistant messages.
	if _, ok := call.Meta["turn_id"]; ok {
		t.Errorf("unexpected turn_id meta %v", call.Meta)
	}
}

func TestCodexSessionMetaState(t *testing.T) {
	lines := testdataLines(t, "codex/rollout_0_58_head.jsonl")
	meta, env, prompt := lines[0], lines[1], lines[2]
	sid := atStr(t, obj(t, meta), "payload", "id")
	// Before any session_meta the path's session is used; after it the
	// record's; a repeated session_meta (resume) changes nothing.
	rs := codexLines(t, FileContext{SessionID: "from-path", Project: "/from/path"}, env, meta, prompt, meta, meta, env)
	if e := rs[0].Entry; e.SessionID != "from-path" || e.Project != "/from/path" || e.ToolVersion != "" {
		t.Errorf("before session_meta: session %q project %q version %q", e.SessionID, e.Project, e.ToolVersion)
	}
	for _, i := range []int{2, 5} {
		if e := rs[i].Entry; e.SessionID != sid || e.Project != "/home/user/projects/temp/chatbot-ui" || e.ToolVersion != "0.58.0" {
			t.Errorf("record %d: session %q project %q version %q", i+1, e.SessionID, e.Project, e.ToolVersion)
		}
	}
	for _, i := range []int{1, 3, 4} {
		if rs[i].Skip != SkipBookkeeping {
			t.Errorf("session_meta %d: skip %q", i+1, rs[i].Skip)
		}
	}
	// The repeated injected context is stored again: context is never deduplicated.
	if rs[5].Skip != "" || rs[5].Entry.Role != cortex.RoleContext {
		t.Errorf("repeated context: skip %q role %q", rs[5].Skip, rs[5].Entry.Role)
	}
}

func TestCodexDesktopTurn(t *testing.T) {
	lines := testdataLines(t, "codex/rollout_desktop_turn.jsonl")
	turnID := atStr(t, obj(t, lines[1]), "payload", "turn_id")
	rs := codexLines(t, ContextFromPath("/x/codex/entireio-skills/ca/64320841af/0/raw_transcript", FormatCodex), lines...)
	byType := map[string][]Result{}
	for i, r := range rs {
		byType[r.Type] = append(byType[r.Type], r)
		if r.Skip == "" && i > 1 && r.Entry.Meta["turn_id"] != turnID {
			t.Errorf("line %d: meta turn_id %q, want %q from turn_context", i+1, r.Entry.Meta["turn_id"], turnID)
		}
		if r.Skip == "" && i > 1 && r.Entry.Project != "/Users/rizel/Documents/work/skills" {
			t.Errorf("line %d: project %q", i+1, r.Entry.Project)
		}
	}
	// Typed prompt stored once, assistant message once.
	if rs[2].Skip != "" || rs[2].Entry.Role != cortex.RoleUser || rs[2].Entry.Text != "checkout main..pull the latest" {
		t.Errorf("typed prompt: %q %q %q", rs[2].Skip, rs[2].Entry.Role, rs[2].Entry.Text)
	}
	if rs[3].Skip != SkipDuplicate {
		t.Errorf("user_message twin: skip %q", rs[3].Skip)
	}
	if rs[5].Skip != SkipEmpty || rs[5].Type != "response_item:reasoning" {
		t.Errorf("encrypted reasoning: %q %q", rs[5].Skip, rs[5].Type)
	}
	if rs[6].Skip != "" || rs[6].Entry.Role != cortex.RoleAssistant || rs[7].Skip != SkipDuplicate {
		t.Errorf("assistant pair: %q/%q %q", rs[6].Skip, rs[7].Skip, rs[6].Entry.Role)
	}
	if rs[6].Entry.Text != strings.TrimSpace(atStr(t, obj(t, lines[6]), "payload", "message")) {
		t.Errorf("agent_message text %q", rs[6].Entry.Text)
	}
	calls := byType["response_item:function_call"]
	if len(calls) != 3 {
		t.Fatalf("%d function calls", len(calls))
	}
	for _, c := range calls {
		args := atStr(t, obj(t, string(c.Raw)), "payload", "arguments")
		var a struct{ Cmd string }
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			t.Fatal(err)
		}
		e := c.Entry
		if e.Role != cortex.RoleToolCall || e.ToolName != "exec_command" || !strings.HasPrefix(e.Text, "exec_command cmd="+a.Cmd) {
			t.Errorf("function_call: role %q tool %q text %q (cmd %q)", e.Role, e.ToolName, e.Text, a.Cmd)
		}
		if e.Meta["call_id"] != atStr(t, obj(t, string(c.Raw)), "payload", "call_id") {
			t.Errorf("call_id meta %v", e.Meta)
		}
	}
	outs := byType["response_item:function_call_output"]
	if len(outs) != 3 {
		t.Fatalf("%d outputs", len(outs))
	}
	for _, o := range outs {
		e := o.Entry
		if e.Role != cortex.RoleToolResult || e.ToolName != "exec_command" || e.IsError || e.Meta["exit_code"] != "0" {
			t.Errorf("output: role %q tool %q error %v meta %v", e.Role, e.ToolName, e.IsError, e.Meta)
		}
	}
	for _, r := range byType["event_msg:exec_command_end"] {
		if r.Skip != "" || r.Entry.Role != cortex.RoleSystem || r.Entry.IsError || r.Entry.Meta["exit_code"] != "0" {
			t.Errorf("exec_command_end: %q %q %v", r.Skip, r.Entry.Role, r.Entry.Meta)
		}
	}
	// No session_meta in this excerpt and the file is an Entire copy: no
	// session id from the name (ingest falls back to SessionFromHead).
	if rs[0].Entry.SessionID != "" {
		t.Errorf("session %q from the name raw_transcript", rs[0].Entry.SessionID)
	}
}

func TestCodexDedupeOrders(t *testing.T) {
	turn := testdataLines(t, "codex/rollout_desktop_turn.jsonl")
	riUser, evUser := turn[2], turn[3]
	evAsst, riAsst := turn[6], turn[7]
	img := testdataLines(t, "codex/image_prompt.jsonl")
	cit := testdataLines(t, "codex/memory_citation.jsonl")
	reason := testdataLines(t, "codex/reasoning_multi_summary.jsonl")
	for _, tc := range []struct {
		name   string
		lines  []string
		stored []cortex.Role // per line; "" = skipped as duplicate
	}{
		{"user: response_item then event_msg", []string{riUser, evUser}, []cortex.Role{cortex.RoleUser, ""}},
		{"user: event_msg then response_item", []string{evUser, riUser}, []cortex.Role{cortex.RoleUser, ""}},
		{"user typed twice", []string{riUser, evUser, riUser, evUser}, []cortex.Role{cortex.RoleUser, "", cortex.RoleUser, ""}},
		{"assistant: event_msg then response_item", []string{evAsst, riAsst}, []cortex.Role{cortex.RoleAssistant, ""}},
		{"assistant: response_item then event_msg", []string{riAsst, evAsst}, []cortex.Role{cortex.RoleAssistant, ""}},
		{"prompt with image", img, []cortex.Role{cortex.RoleUser, ""}},
		{"prompt with image, event first", []string{img[1], img[0]}, []cortex.Role{cortex.RoleUser, ""}},
		{"assistant with memory citation", cit, []cortex.Role{cortex.RoleAssistant, ""}},
		{"assistant with memory citation, item first", []string{cit[1], cit[0]}, []cortex.Role{cortex.RoleAssistant, ""}},
		{"reasoning with three summary parts", reason, []cortex.Role{cortex.RoleThinking, cortex.RoleThinking, cortex.RoleThinking, "-", ""}},
		{"reasoning item first", []string{reason[4], reason[0], reason[1], reason[2]}, []cortex.Role{cortex.RoleThinking, "", "", ""}},
		{"user and assistant interleaved", []string{riUser, evAsst, evUser, riAsst}, []cortex.Role{cortex.RoleUser, cortex.RoleAssistant, "", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := codexLines(t, FileContext{}, tc.lines...)
			for i, want := range tc.stored {
				r := rs[i]
				switch want {
				case "-":
					if r.Skip != SkipBookkeeping {
						t.Errorf("line %d: skip %q", i+1, r.Skip)
					}
				case "":
					if r.Skip != SkipDuplicate {
						t.Errorf("line %d: skip %q, want duplicate (role %q)", i+1, r.Skip, r.Entry.Role)
					}
				default:
					if r.Skip != "" || r.Entry.Role != want {
						t.Errorf("line %d: skip %q role %q, want stored %q", i+1, r.Skip, r.Entry.Role, want)
					}
				}
			}
		})
	}

	// The image prompt mentions the image, without tags or payload.
	e := codexLines(t, FileContext{}, img...)[0].Entry
	if !strings.Contains(e.Text, "add this image to the very top of the readme") || !strings.HasSuffix(e.Text, "[1 image(s)]") ||
		strings.Contains(e.Text, "<image") || strings.Contains(e.Text, "base64") {
		t.Errorf("image prompt text %q", e.Text)
	}
}

func TestCodexInjectedContext(t *testing.T) {
	env := testdataLines(t, "codex/rollout_0_58_head.jsonl")[1]
	envText := payloadText(t, obj(t, env))
	// An event_msg carrying exactly the injected text must still be stored:
	// injected context is never paired with typed text.
	evSame, err := json.Marshal(map[string]any{
		"timestamp": "2025-11-17T21:30:45.026Z", "type": "event_msg",
		"payload": map[string]any{"type": "user_message", "message": envText, "images": []any{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		file   string
		role   cortex.Role
		prefix string
	}{
		{"AGENTS.md", "codex/agents_md.jsonl", cortex.RoleContext, "# AGENTS.md instructions for "},
		{"skill", "codex/skill_message.jsonl", cortex.RoleContext, "<skill>\n<name>worktree</name>"},
		{"developer", "codex/developer_message.jsonl", cortex.RoleContext, "Capabilities from the `Entire` plugin"},
		{"turn aborted message", "codex/turn_aborted.jsonl", cortex.RoleSystem, "The user interrupted the previous turn"},
	} {
		rs := codexLines(t, FileContext{}, testdataLines(t, tc.file)...)
		e := rs[0].Entry
		if rs[0].Skip != "" || e.Role != tc.role || !strings.HasPrefix(e.Text, tc.prefix) || len(e.Text) > MaxContextText {
			t.Errorf("%s: skip %q role %q text %.50q (%d bytes)", tc.name, rs[0].Skip, e.Role, e.Text, len(e.Text))
		}
	}
	rs := codexLines(t, FileContext{}, env, string(evSame))
	if rs[0].Entry.Role != cortex.RoleContext || rs[1].Skip != "" || rs[1].Entry.Role != cortex.RoleUser {
		t.Errorf("context then identical event: %q / skip %q role %q", rs[0].Entry.Role, rs[1].Skip, rs[1].Entry.Role)
	}
}

func TestCodexToolOutputs(t *testing.T) {
	zero := testdataLines(t, "codex/apply_patch_exit_zero.jsonl")
	if !strings.Contains(zero[1], `"output":"Exit code: 0\n`) {
		t.Fatal("excerpt changed")
	}
	one := []string{zero[0], strings.Replace(zero[1], `"output":"Exit code: 0\n`, `"output":"Exit code: 1\n`, 1)}
	for _, tc := range []struct {
		name    string
		lines   []string
		tool    string
		isError bool
		exit    string // "" = no exit_code meta
		label   string
	}{
		{"JSON envelope exit 1", testdataLines(t, "codex/exit_json_nonzero.jsonl"), "shell", true, "1", "[shell error]"},
		{"Process exited with code 1", testdataLines(t, "codex/exit_process_nonzero.jsonl"), "exec_command", true, "1", "[exec_command error] Chunk ID"},
		{"Exit code: 0", zero, "apply_patch", false, "0", "[apply_patch result] Exit code: 0"},
		{"Exit code: 1", one, "apply_patch", true, "1", "[apply_patch error] Exit code: 1"},
		{"apply_patch verification failed", testdataLines(t, "codex/apply_patch_verification_failed.jsonl"), "apply_patch", true, "", "[apply_patch error] apply_patch verification failed: Failed to find expected lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := codexLines(t, FileContext{}, tc.lines...)
			call, out := rs[0].Entry, rs[1].Entry
			callID := atStr(t, obj(t, tc.lines[0]), "payload", "call_id")
			if call.Role != cortex.RoleToolCall || call.ToolName != tc.tool || call.Meta["call_id"] != callID {
				t.Errorf("call: role %q tool %q meta %v", call.Role, call.ToolName, call.Meta)
			}
			if out.Role != cortex.RoleToolResult || out.ToolName != tc.tool || out.IsError != tc.isError || out.Meta["exit_code"] != tc.exit || out.Meta["call_id"] != callID {
				t.Errorf("output: role %q tool %q error %v meta %v", out.Role, out.ToolName, out.IsError, out.Meta)
			}
			if tc.isError != (out.Severity == cortex.SevError) {
				t.Errorf("severity %q", out.Severity)
			}
			if !strings.HasPrefix(out.Text, tc.label) {
				t.Errorf("text %.80q, want prefix %q", out.Text, tc.label)
			}
		})
	}
}

func TestCodexCustomToolAndEvents(t *testing.T) {
	lines := testdataLines(t, "codex/custom_tool_call.jsonl")
	rs := codexLines(t, FileContext{}, lines...)
	patch := atStr(t, obj(t, lines[0]), "payload", "input")
	if e := rs[0].Entry; e.Role != cortex.RoleToolCall || e.ToolName != "apply_patch" || e.Kind != "response_item:custom_tool_call" ||
		!strings.HasPrefix(e.Text, "apply_patch "+patch[:20]) {
		t.Errorf("custom_tool_call: %q %q %q %.60q", e.Role, e.ToolName, e.Kind, e.Text)
	}
	if e := rs[1].Entry; e.Role != cortex.RoleSystem || e.Text != "patch applied" || e.IsError {
		t.Errorf("patch_apply_end: %q %q", e.Role, e.Text)
	}
	if e := rs[2].Entry; e.Role != cortex.RoleToolResult || e.ToolName != "apply_patch" || e.IsError || e.Meta["exit_code"] != "0" {
		t.Errorf("custom_tool_call_output: %q %q %v %v", e.Role, e.ToolName, e.IsError, e.Meta)
	}
	failed := strings.Replace(lines[1], `"success":true`, `"success":false`, 1)
	if failed == lines[1] {
		t.Fatal("excerpt changed")
	}
	if e := codexLines(t, FileContext{}, failed)[0].Entry; !e.IsError || !strings.HasPrefix(e.Text, "patch failed") {
		t.Errorf("failed patch_apply_end: %v %q", e.IsError, e.Text)
	}

	mcp := testdataLines(t, "codex/mcp_tool_call_end_error.jsonl")[0]
	rec := obj(t, mcp)
	name := "mcp__" + atStr(t, rec, "payload", "invocation", "server") + "__" + atStr(t, rec, "payload", "invocation", "tool")
	if at(t, rec, "payload", "result", "Ok", "isError") != true {
		t.Fatal("excerpt changed")
	}
	e := codexLines(t, FileContext{}, mcp)[0].Entry
	if e.Role != cortex.RoleToolResult || e.ToolName != name || !e.IsError || e.Severity != cortex.SevError || !strings.HasPrefix(e.Text, "["+name+" error] ") {
		t.Errorf("mcp_tool_call_end: %q %q %v %.60q", e.Role, e.ToolName, e.IsError, e.Text)
	}
	okMCP := strings.Replace(mcp, `"isError":true`, `"isError":false`, 1)
	if e := codexLines(t, FileContext{}, okMCP)[0].Entry; e.IsError {
		t.Error("successful MCP call marked as error")
	}

	for _, tc := range []struct {
		file string
		skip string
		role cortex.Role
		text string
	}{
		{"codex/reasoning_encrypted.jsonl", SkipEmpty, "", ""},
		{"codex/token_count.jsonl", SkipBookkeeping, "", ""},
		{"codex/turn_aborted_event.jsonl", "", cortex.RoleSystem, "Turn aborted: interrupted"},
	} {
		r := codexLines(t, FileContext{}, testdataLines(t, tc.file)...)[0]
		if r.Skip != tc.skip || r.Entry.Role != tc.role || r.Entry.Text != tc.text {
			t.Errorf("%s: skip %q role %q text %q", tc.file, r.Skip, r.Entry.Role, r.Entry.Text)
		}
	}

	// Unknown types keep their type path and the version.
	unknown := strings.Replace(testdataLines(t, "codex/token_count.jsonl")[0], `"type":"token_count"`, `"type":"hologram_event"`, 1)
	rs = codexLines(t, FileContext{}, testdataLines(t, "codex/rollout_0_58_head.jsonl")[0], unknown, `{"type":"future_top","payload":{}}`)
	for i, want := range []string{"event_msg:hologram_event", "future_top"} {
		if r := rs[i+1]; r.Skip != SkipUnknownType || r.Type != want || r.Version != "0.58.0" {
			t.Errorf("unknown %d: %q %q %q", i, r.Skip, r.Type, r.Version)
		}
	}
}

// TestCodexUnboundedFields feeds absurdly long free-form fields: the
// searchable text stays within its bounds.
func TestCodexUnboundedFields(t *testing.T) {
	long := strings.Repeat("q", 200<<10)
	recs := []map[string]any{
		{"type": "event_msg", "payload": map[string]any{"type": "web_search_end", "query": long}},
		{"type": "event_msg", "payload": map[string]any{"type": "turn_aborted", "reason": long}},
		{"type": "event_msg", "payload": map[string]any{"type": "mcp_tool_call_end", "invocation": map[string]any{"server": long, "tool": "t"}, "result": map[string]any{"Err": long}}},
		{"type": "response_item", "payload": map[string]any{"type": "function_call", "name": long, "arguments": long, "call_id": "c1"}},
		{"type": "response_item", "payload": map[string]any{"type": "function_call_output", "call_id": "c1", "output": long}},
		{"type": "response_item", "payload": map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": long}}}},
		{"type": "event_msg", "payload": map[string]any{"type": "exec_command_end", "command": long, "exit_code": 1}},
	}
	var lines []string
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	for i, r := range codexLines(t, FileContext{}, lines...) {
		if n := len(r.Entry.Text); n > maxEntryText {
			t.Errorf("record %d (%s): text %d bytes > %d", i+1, r.Type, n, maxEntryText)
		}
	}
}

func TestCodexOutput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		json   string // the output value as JSON
		text   string // expected Text prefix
		exit   int    // -999 = nil
		failed bool
	}{
		{"envelope exit 1", `"{\"output\":\"boom\\n\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.1}}"`, "boom", 1, true},
		{"envelope exit 0", `"{\"output\":\"ok\",\"metadata\":{\"exit_code\":0}}"`, "ok", 0, false},
		{"envelope, spaces", `"  {\"output\": \"x\", \"metadata\": {\"exit_code\": 127}}"`, "x", 127, true},
		{"envelope exit 0 quoting a verification failure", `"{\"output\":\"src/x.go: apply_patch verification failed\",\"metadata\":{\"exit_code\":0}}"`, "src/x.go", 0, false},
		{"envelope with NUL", `"{\"output\":\"a\\u0000b\",\"metadata\":{\"exit_code\":2}}"`, "ab", 2, true},
		{"broken envelope", `"{\"output\":\"x\",\"metadata\":{\"exit_code\":1}"`, "{", -999, false},
		{"process exited 2", `"Chunk ID: ab\nWall time: 0.1 seconds\nProcess exited with code 2\nOriginal token count: 3\nOutput:\nerr"`, "Chunk ID", 2, true},
		{"process exited 0", `"Chunk ID: ab\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\n"`, "Chunk ID", 0, false},
		{"process exited -1", `"Process exited with code -1\n"`, "Process", -1, true},
		{"process exited 0, output quotes a failure", `"Process exited with code 0\nOutput:\napply_patch verification failed: nope"`, "Process", 0, false},
		{"still running", `"Chunk ID: ab\nWall time: 10 seconds\nProcess running with session ID 123\nOutput:\n"`, "Chunk ID", -999, false},
		{"exit code 1", `"Exit code: 1\nWall time: 0 seconds\nOutput:\nnope"`, "Exit code: 1", 1, true},
		{"exit code 0", `"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess."`, "Exit code: 0", 0, false},
		{"mid-line mention", `"grep says: Process exited with code 3"`, "grep", -999, false},
		{"verification failed", `"apply_patch verification failed: Failed to find expected lines in /a.js:\n  x"`, "apply_patch verification failed", -999, true},
		{"plain text", `"hello"`, "hello", -999, false},
		{"image list", `[{"type":"input_image","image_url":"data:image/png;base64,AAAA"},{"type":"input_text","text":"caption"}]`, "[image]\ncaption", -999, false},
		{"object", `{"output":"o","metadata":{"exit_code":4}}`, "o", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := CodexOutput(fastjson.MustParse(tc.json))
			if !strings.HasPrefix(o.Text, tc.text) || strings.ContainsRune(o.Text, 0) || !utf8.ValidString(o.Text) {
				t.Errorf("Text = %q, want prefix %q", o.Text, tc.text)
			}
			if strings.Contains(o.Text, "base64") {
				t.Errorf("image payload in text %q", o.Text)
			}
			switch {
			case tc.exit == -999 && o.ExitCode != nil:
				t.Errorf("ExitCode = %d, want none", *o.ExitCode)
			case tc.exit != -999 && (o.ExitCode == nil || *o.ExitCode != tc.exit):
				t.Errorf("ExitCode = %v, want %d", o.ExitCode, tc.exit)
			}
			if o.Failed != tc.failed {
				t.Errorf("Failed = %v, want %v", o.Failed, tc.failed)
			}
		})
	}
	if o := CodexOutput(nil); o.Text != "" || o.ExitCode != nil || o.Failed {
		t.Errorf("CodexOutput(nil) = %+v", o)
	}
}

// entriesEqual compares two entries field by field (times with Equal).
func entriesEqual(a, b *Result) string {
	x, y := a.Entry, b.Entry
	switch {
	case a.Skip != b.Skip:
		return "Skip " + a.Skip + " vs " + b.Skip
	case a.Type != b.Type || a.Version != b.Version || a.Line != b.Line || a.Warn != b.Warn:
		return "Type/Version/Line/Warn"
	case (a.Err == nil) != (b.Err == nil):
		return "Err"
	case !bytes.Equal(a.Raw, b.Raw):
		return "Raw"
	case x.Tool != y.Tool || x.Role != y.Role || x.Kind != y.Kind:
		return "Tool/Role/Kind"
	case !x.Timestamp.Equal(y.Timestamp) || x.TimestampEstimated != y.TimestampEstimated:
		return "Timestamp " + x.Timestamp.Format(time.RFC3339Nano) + " vs " + y.Timestamp.Format(time.RFC3339Nano)
	case x.Text != y.Text || x.TextTruncated != y.TextTruncated:
		return "Text"
	case x.ToolName != y.ToolName:
		return "ToolName " + x.ToolName + " vs " + y.ToolName
	case x.IsError != y.IsError || x.Severity != y.Severity:
		return "IsError/Severity"
	case x.SessionID != y.SessionID || x.Project != y.Project || x.RecordKey != y.RecordKey:
		return "Session/Project/RecordKey"
	case x.AgentID != y.AgentID || x.Sidechain != y.Sidechain || x.ToolVersion != y.ToolVersion || x.Model != y.Model:
		return "Agent/Sidechain/Version/Model"
	case !maps.Equal(x.Meta, y.Meta):
		return "Meta"
	}
	return ""
}

// TestParserStateRoundTrip parses each real Codex rollout (and Claude
// session) in two halves with the state saved between them as JSON, and
// compares with one pass over the whole file.
func TestParserStateRoundTrip(t *testing.T) {
	n := 0
	for _, f := range corpusFiles(t, true) {
		if f.Folder != "codex" && f.Folder != "claude" {
			continue
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 {
			continue
		}
		format := FormatCodex
		if f.Folder == "claude" {
			format = FormatClaude
		}
		ctx := ContextFromPath(f.Path, format)
		var whole RecordParser
		if format == FormatCodex {
			whole = NewCodexParser(ctx, CodexState{})
		} else {
			whole = NewClaudeParser(ctx)
		}
		all := parseJSONL(t, whole, data)

		lines := bytes.SplitAfter(data, []byte("\n"))
		half := len(lines) / 2
		first := bytes.Join(lines[:half], nil)
		var resumed []Result
		var stateJSON []byte
		if format == FormatCodex {
			p := NewCodexParser(ctx, CodexState{})
			resumed = parseJSONL(t, p, first)
			stateJSON, err = json.Marshal(p.State())
			if err != nil {
				t.Fatal(err)
			}
			var st CodexState
			if err := json.Unmarshal(stateJSON, &st); err != nil {
				t.Fatal(err)
			}
			lr := NewLineReader(bytes.NewReader(data[len(first):]), int64(len(first)), int64(half+1))
			resumed = append(resumed, readRest(t, lr, NewCodexParser(ctx, st))...)
		} else {
			p := NewClaudeParser(ctx)
			resumed = parseJSONL(t, p, first)
			stateJSON, err = json.Marshal(p.State())
			if err != nil {
				t.Fatal(err)
			}
			var st ClaudeState
			if err := json.Unmarshal(stateJSON, &st); err != nil {
				t.Fatal(err)
			}
			lr := NewLineReader(bytes.NewReader(data[len(first):]), int64(len(first)), int64(half+1))
			resumed = append(resumed, readRest(t, lr, NewClaudeParserAt(ctx, st))...)
		}
		if len(resumed) != len(all) {
			t.Errorf("%s: %d results resumed, %d in one pass", f.Rel, len(resumed), len(all))
			continue
		}
		for i := range all {
			if d := entriesEqual(&all[i], &resumed[i]); d != "" {
				t.Errorf("%s line %d: resumed read differs: %s", f.Rel, all[i].Line, d)
				break
			}
		}
		n++
	}
	t.Logf("%d files compared", n)
}

func readRest(t *testing.T, lr *LineReader, p RecordParser) []Result {
	t.Helper()
	var out []Result
	for {
		l, err := lr.Next()
		if err != nil {
			return out
		}
		for _, r := range ParseLine(p, l.Data, l.No, l.Complete) {
			r.Raw = append([]byte(nil), r.Raw...)
			out = append(out, r)
		}
	}
}
