package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
)

// obj decodes one JSON line with encoding/json (the expectations of these
// tests are read from the excerpts this way, not from the parser).
func obj(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("excerpt is not a JSON object: %v", err)
	}
	return m
}

// at walks a decoded JSON value: string keys index objects, ints index arrays.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("path %v: not an object at %q", path, k)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("path %v: not an array at %d", path, k)
			}
			v = a[k]
		}
	}
	return v
}

func atStr(t *testing.T, v any, path ...any) string {
	t.Helper()
	s, ok := at(t, v, path...).(string)
	if !ok {
		t.Fatalf("path %v is not a string", path)
	}
	return s
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return ts.UTC()
}

// claudeFile parses every line of a testdata excerpt with one parser.
func claudeFile(t *testing.T, name string, ctx FileContext) ([]string, []Result) {
	t.Helper()
	lines := testdataLines(t, name)
	return lines, parseClaudeLines(t, ctx, lines...)
}

// one returns the single stored entry of a one-line excerpt.
func one(t *testing.T, name string) (map[string]any, Result) {
	t.Helper()
	lines, rs := claudeFile(t, name, FileContext{})
	if len(lines) != 1 || len(rs) != 1 {
		t.Fatalf("%s: %d lines, %d results", name, len(lines), len(rs))
	}
	r := rs[0]
	if r.Err != nil || r.Skip != "" {
		t.Fatalf("%s: not stored: err=%v skip=%q", name, r.Err, r.Skip)
	}
	checkEntryBasics(t, name, obj(t, lines[0]), r)
	return obj(t, lines[0]), r
}

// checkEntryBasics compares the envelope fields with the record's own.
func checkEntryBasics(t *testing.T, name string, rec map[string]any, r Result) {
	t.Helper()
	e := r.Entry
	if e.Tool != cortex.ToolClaude {
		t.Errorf("%s: Tool = %q", name, e.Tool)
	}
	if u, ok := rec["uuid"].(string); ok && e.RecordKey != "u:"+u && rec["type"] != "progress" {
		t.Errorf("%s: RecordKey = %q, want u:%s", name, e.RecordKey, u)
	}
	if s, ok := rec["sessionId"].(string); ok && e.SessionID != s {
		t.Errorf("%s: SessionID = %q, want %q", name, e.SessionID, s)
	}
	if v, ok := rec["version"].(string); ok && (e.ToolVersion != v || r.Version != v) {
		t.Errorf("%s: version %q/%q, want %q", name, e.ToolVersion, r.Version, v)
	}
	if ts, ok := rec["timestamp"].(string); ok && rec["type"] != "progress" {
		if !e.Timestamp.Equal(mustTime(t, ts)) || e.TimestampEstimated {
			t.Errorf("%s: Timestamp = %v (estimated %v), want %s", name, e.Timestamp, e.TimestampEstimated, ts)
		}
	}
	if cwd, ok := rec["cwd"].(string); ok && !strings.Contains(cwd, "worktrees") && e.Project != cwd {
		t.Errorf("%s: Project = %q, want %q", name, e.Project, cwd)
	}
	if !utf8.ValidString(e.Text) {
		t.Errorf("%s: Text is not valid UTF-8", name)
	}
	if e.IsError != (e.Severity != cortex.SevInfo) {
		t.Errorf("%s: IsError %v with severity %q", name, e.IsError, e.Severity)
	}
}

func TestClaudeUserPrompt(t *testing.T) {
	rec, r := one(t, "claude/user_prompt.jsonl")
	e := r.Entry
	want := atStr(t, rec, "message", "content")
	if e.Role != cortex.RoleUser || e.Kind != "user" || e.Text != want || e.TextTruncated {
		t.Errorf("got role %q kind %q text %q", e.Role, e.Kind, e.Text)
	}
	if e.Project != "/Users/chip/dev/ai-music" || e.Sidechain || e.AgentID != "" {
		t.Errorf("project %q sidechain %v agent %q", e.Project, e.Sidechain, e.AgentID)
	}
	if e.Severity != cortex.SevInfo || e.IsError {
		t.Errorf("severity %q", e.Severity)
	}
}

func TestClaudeSkillInvocation(t *testing.T) {
	lines, rs := claudeFile(t, "claude/skill_invocation.jsonl", FileContext{})
	if len(rs) != 3 {
		t.Fatalf("%d results", len(rs))
	}
	for i, r := range rs {
		if r.Err != nil || r.Skip != "" {
			t.Fatalf("line %d not stored: %v %q", i+1, r.Err, r.Skip)
		}
		checkEntryBasics(t, "skill_invocation", obj(t, lines[i]), r)
		// The cwd is a worktree checkout: the project is its repository.
		if r.Entry.Project != "/Users/alex/workspace/cli" {
			t.Errorf("line %d: Project = %q", i+1, r.Entry.Project)
		}
	}
	skill := atStr(t, obj(t, lines[0]), "message", "content", 0, "input", "skill")
	call := rs[0].Entry
	if call.Role != cortex.RoleToolCall || call.ToolName != "Skill" || !strings.Contains(call.Text, "skill="+skill) {
		t.Errorf("Skill tool_use: role %q tool %q text %q", call.Role, call.ToolName, call.Text)
	}
	launch := rs[1].Entry
	if launch.Role != cortex.RoleToolResult || launch.ToolName != "Skill" || launch.IsError || !strings.Contains(launch.Text, "Launching skill: "+skill) {
		t.Errorf("Skill result: role %q tool %q text %q", launch.Role, launch.ToolName, launch.Text)
	}
	body := rs[2].Entry
	if body.Role != cortex.RoleContext || !strings.HasPrefix(body.Text, "Base directory for this skill: ") {
		t.Errorf("skill body: role %q text %.60q", body.Role, body.Text)
	}
	if src := atStr(t, obj(t, lines[2]), "sourceToolUseID"); src != atStr(t, obj(t, lines[0]), "message", "content", 0, "id") || body.Meta["source_tool_use_id"] != src {
		t.Errorf("skill body meta %v, want source_tool_use_id %s", body.Meta, src)
	}
	if len(body.Text) > MaxContextText || !body.TextTruncated {
		t.Errorf("skill body (5 KB) should be cut to the context bound: %d bytes, truncated %v", len(body.Text), body.TextTruncated)
	}

	// A plugin skill body from a newer version (no envelope cwd before it).
	_, r := one(t, "claude/skill_body_plugin.jsonl")
	if r.Entry.Role != cortex.RoleContext || r.Entry.Kind != "user:meta" || !strings.HasPrefix(r.Entry.Text, "Base directory for this skill:") {
		t.Errorf("plugin skill body: role %q kind %q", r.Entry.Role, r.Entry.Kind)
	}
}

func TestClaudeSlashCommand(t *testing.T) {
	rec, r := one(t, "claude/slash_command.jsonl")
	e := r.Entry
	if e.Role != cortex.RoleUser || e.Kind != "user:command" || e.Text != "/orchestrator create TODO app by Next.js" {
		t.Errorf("role %q kind %q text %q", e.Role, e.Kind, e.Text)
	}
	name, args, ok := SlashCommand(atStr(t, rec, "message", "content"))
	if !ok || name != "orchestrator" || args != "create TODO app by Next.js" {
		t.Errorf("SlashCommand = %q %q %v", name, args, ok)
	}
	for _, tc := range []struct {
		in, name, args string
		ok             bool
	}{
		{"<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>", "clear", "", true},
		{"<command-message>review</command-message>", "review", "", true},
		{"  <command-name>/model</command-name><command-args>opus</command-args>", "model", "opus", true},
		{"please run /clear", "", "", false},
		{"<command-name></command-name>", "", "", false},
	} {
		n, a, ok := SlashCommand(tc.in)
		if n != tc.name || a != tc.args || ok != tc.ok {
			t.Errorf("SlashCommand(%q) = %q %q %v", tc.in, n, a, ok)
		}
	}
}

func TestClaudeInterrupt(t *testing.T) {
	_, r := one(t, "claude/interrupt.jsonl")
	if r.Entry.Role != cortex.RoleSystem || r.Entry.Text != "[Request interrupted by user]" {
		t.Errorf("role %q text %q", r.Entry.Role, r.Entry.Text)
	}
	// The same text as string content.
	line := withPrompt(t, `"[Request interrupted by user for tool use]"`)
	rs := parseClaudeLines(t, FileContext{}, line)
	if rs[0].Entry.Role != cortex.RoleSystem {
		t.Errorf("string interrupt: role %q", rs[0].Entry.Role)
	}
}

func TestClaudeAssistantText(t *testing.T) {
	rec, r := one(t, "claude/assistant_text.jsonl")
	e := r.Entry
	if e.Role != cortex.RoleAssistant || e.Text != atStr(t, rec, "message", "content", 0, "text") {
		t.Errorf("role %q text %q", e.Role, e.Text)
	}
	if e.Model != atStr(t, rec, "message", "model") || e.Meta["message_id"] != atStr(t, rec, "message", "id") || e.Meta["request_id"] != atStr(t, rec, "requestId") {
		t.Errorf("model %q meta %v", e.Model, e.Meta)
	}
}

func TestClaudeToolUseAndErrorResult(t *testing.T) {
	lines, rs := claudeFile(t, "claude/bash_error.jsonl", FileContext{})
	if len(rs) != 2 {
		t.Fatalf("%d results", len(rs))
	}
	use, res := obj(t, lines[0]), obj(t, lines[1])
	checkEntryBasics(t, "bash_error:1", use, rs[0])
	checkEntryBasics(t, "bash_error:2", res, rs[1])
	call := rs[0].Entry
	cmd := atStr(t, use, "message", "content", 0, "input", "command")
	if call.Role != cortex.RoleToolCall || call.ToolName != "Bash" || call.Kind != "assistant:tool_use" {
		t.Errorf("tool_use: role %q tool %q kind %q", call.Role, call.ToolName, call.Kind)
	}
	if !strings.HasPrefix(call.Text, "Bash command="+cmd[:40]) {
		t.Errorf("tool_use text %q does not carry the command %q", call.Text, cmd)
	}
	if !call.Sidechain {
		t.Error("isSidechain record not marked Sidechain")
	}
	if at(t, res, "message", "content", 0, "is_error") != true || atStr(t, res, "message", "content", 0, "tool_use_id") != atStr(t, use, "message", "content", 0, "id") {
		t.Fatal("excerpt changed")
	}
	out := rs[1].Entry
	if out.Role != cortex.RoleToolResult || !out.IsError || out.Severity != cortex.SevError || out.ToolName != "Bash" {
		t.Errorf("tool_result: role %q error %v severity %q tool %q", out.Role, out.IsError, out.Severity, out.ToolName)
	}
	if out.Text != "[Bash error] "+atStr(t, res, "message", "content", 0, "content") {
		t.Errorf("tool_result text %q", out.Text)
	}
	// Without the tool_use earlier in the same parser the tool is unknown.
	alone := parseClaudeLines(t, FileContext{}, lines[1])[0].Entry
	if alone.ToolName != "" || !alone.IsError || !strings.HasPrefix(alone.Text, "[tool error] ") {
		t.Errorf("result alone: tool %q text %q", alone.ToolName, alone.Text)
	}
}

func TestClaudeToolResultTextList(t *testing.T) {
	rec, r := one(t, "claude/tool_result_text_list.jsonl")
	part := atStr(t, rec, "message", "content", 0, "content", 0, "text")
	e := r.Entry
	if e.Role != cortex.RoleToolResult || e.IsError || !strings.Contains(e.Text, strings.TrimSpace(part[:200])) {
		t.Errorf("role %q error %v text %.80q", e.Role, e.IsError, e.Text)
	}
	if strings.Contains(e.Text, `"type":"text"`) {
		t.Error("text parts rendered as JSON instead of their text")
	}
}

func TestClaudeThinking(t *testing.T) {
	rec, r := one(t, "claude/thinking.jsonl")
	if r.Entry.Role != cortex.RoleThinking || r.Entry.Text != atStr(t, rec, "message", "content", 0, "thinking") {
		t.Errorf("role %q text %q", r.Entry.Role, r.Entry.Text)
	}
	if strings.Contains(r.Entry.Text, atStr(t, rec, "message", "content", 0, "signature")[:20]) {
		t.Error("signature leaked into the text")
	}
}

func TestClaudeEmptyThinkingWithAttribution(t *testing.T) {
	rec, r := one(t, "claude/empty_thinking_attribution.jsonl")
	if rec["attributionSkill"] != "marvin:marvin" || atStr(t, rec, "message", "content", 0, "thinking") != "" {
		t.Fatal("excerpt changed")
	}
	e := r.Entry
	if r.Skip != "" || e.Role != cortex.RoleThinking || e.Text != "" {
		t.Errorf("skip %q role %q text %q", r.Skip, e.Role, e.Text)
	}
	if e.Model != "claude-opus-4-7" || e.Meta["message_id"] != atStr(t, rec, "message", "id") {
		t.Errorf("model %q meta %v", e.Model, e.Meta)
	}
}

func TestClaudeHooks(t *testing.T) {
	success := testdataLines(t, "claude/hook_success.jsonl")[0]
	if !strings.Contains(success, `"exitCode":0,`) {
		t.Fatal("excerpt changed")
	}
	failedSuccess := strings.Replace(success, `"exitCode":0,`, `"exitCode":2,`, 1)
	for _, tc := range []struct {
		name    string
		line    string
		status  string
		isError bool
		sev     cortex.Severity
		text    []string
	}{
		{"hook_success exit 0", success, "success", false, cortex.SevInfo,
			[]string{"hook SessionStart:startup success exit 0", "entire hooks claude-code session-start", "Entire CLI will link"}},
		{"hook_success exit 2", failedSuccess, "failed", true, cortex.SevWarning, []string{"exit 2"}},
		{"hook_non_blocking_error exit 127", testdataLines(t, "claude/hook_non_blocking_error.jsonl")[0], "failed", true, cortex.SevWarning,
			[]string{"hook Stop failed exit 127", "marvin hooks claude-code stop", "/bin/sh: marvin: command not found"}},
		{"hook_cancelled", testdataLines(t, "claude/hook_cancelled.jsonl")[0], "cancelled", true, cortex.SevWarning,
			[]string{"hook Stop cancelled", "entire hooks claude-code stop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := parseClaudeLines(t, FileContext{}, tc.line)[0]
			checkEntryBasics(t, tc.name, obj(t, tc.line), r)
			e := r.Entry
			if e.Role != cortex.RoleHook || e.Meta["hook_status"] != tc.status || e.IsError != tc.isError || e.Severity != tc.sev {
				t.Errorf("role %q status %q error %v severity %q", e.Role, e.Meta["hook_status"], e.IsError, e.Severity)
			}
			for _, s := range tc.text {
				if !strings.Contains(e.Text, s) {
					t.Errorf("text %q lacks %q", e.Text, s)
				}
			}
		})
	}

	_, r := one(t, "claude/hook_progress.jsonl")
	if r.Entry.Role != cortex.RoleHook || r.Type != "progress:hook_progress" || r.Entry.Meta["hook_status"] != "started" || !strings.Contains(r.Entry.Text, "PostToolUse:Read") {
		t.Errorf("hook_progress: %q %q %v %q", r.Entry.Role, r.Type, r.Entry.Meta, r.Entry.Text)
	}
	_, r = one(t, "claude/stop_hook_summary.jsonl")
	if r.Entry.Role != cortex.RoleHook || r.Type != "system:stop_hook_summary" || r.Entry.IsError || !strings.Contains(r.Entry.Text, "clmail.cmd") {
		t.Errorf("stop_hook_summary: %q %q %q", r.Entry.Role, r.Type, r.Entry.Text)
	}
	// hookErrors make the summary a warning.
	withErr := strings.Replace(testdataLines(t, "claude/stop_hook_summary.jsonl")[0], `"hookErrors":[]`, `"hookErrors":["hook exploded"]`, 1)
	r = parseClaudeLines(t, FileContext{}, withErr)[0]
	if !r.Entry.IsError || r.Entry.Severity != cortex.SevWarning || !strings.Contains(r.Entry.Text, "hook exploded") {
		t.Errorf("stop_hook_summary with errors: %v %q %q", r.Entry.IsError, r.Entry.Severity, r.Entry.Text)
	}
}

func TestHookStatus(t *testing.T) {
	for _, tc := range []struct {
		typ     string
		exit    int64
		hasExit bool
		want    string
	}{
		{"hook_success", 0, true, "success"},
		{"hook_success", 0, false, "success"},
		{"hook_success", 1, true, "failed"},
		{"hook_success", -1, true, "failed"},
		{"hook_non_blocking_error", 127, true, "failed"},
		{"hook_blocking_error", 2, true, "blocked"},
		{"hook_error_during_execution", 0, false, "error"},
		{"hook_cancelled", 0, false, "cancelled"},
		{"hook_additional_context", 0, false, "success"},
		{"hook_system_message", 0, false, "success"},
		{"async_hook_response", 0, true, "success"},
		{"async_hook_response", 3, true, "failed"},
		{"hook_stopped_continuation", 0, false, "blocked"},
		{"hook_something_cancelled_later", 0, false, "cancelled"},
		{"hook_new_block_kind", 0, false, "blocked"},
		{"hook_new_failure", 0, false, "error"},
		{"hook_brand_new", 0, false, "unknown"},
	} {
		if got := HookStatus(tc.typ, tc.exit, tc.hasExit); got != tc.want {
			t.Errorf("HookStatus(%q, %d, %v) = %q, want %q", tc.typ, tc.exit, tc.hasExit, got, tc.want)
		}
	}
}

func TestClaudeSystemRecords(t *testing.T) {
	rec, r := one(t, "claude/api_error.jsonl")
	e := r.Entry
	if e.Role != cortex.RoleSystem || !e.IsError || e.Severity != cortex.SevError || r.Type != "system:api_error" {
		t.Errorf("api_error: role %q error %v severity %q type %q", e.Role, e.IsError, e.Severity, r.Type)
	}
	if !strings.Contains(e.Text, "529") || !strings.Contains(e.Text, atStr(t, rec, "error", "error", "error", "message")) {
		t.Errorf("api_error text %q", e.Text)
	}

	rec, r = one(t, "claude/compact_boundary.jsonl")
	e = r.Entry
	if e.Role != cortex.RoleSystem || r.Type != "system:compact_boundary" || e.IsError {
		t.Errorf("compact_boundary: role %q type %q", e.Role, r.Type)
	}
	if !strings.Contains(e.Text, atStr(t, rec, "compactMetadata", "trigger")+" trigger") || !strings.Contains(e.Text, "155068") {
		t.Errorf("compact_boundary text %q", e.Text)
	}
}

func TestClaudeAttachments(t *testing.T) {
	rec, r := one(t, "claude/invoked_skills.jsonl")
	e := r.Entry
	if e.Role != cortex.RoleContext || r.Type != "attachment:invoked_skills" {
		t.Errorf("invoked_skills: role %q type %q", e.Role, r.Type)
	}
	for _, s := range at(t, rec, "attachment", "skills").([]any) {
		name := atStr(t, s, "name")
		if !strings.Contains(e.Text, name) {
			t.Errorf("invoked_skills text lacks skill %q", name)
		}
	}
	if !strings.HasPrefix(e.Text, "Invoked skills: verify") || len(e.Text) > MaxContextText {
		t.Errorf("invoked_skills text %.60q (%d bytes)", e.Text, len(e.Text))
	}

	rec, r = one(t, "claude/queued_command.jsonl")
	if r.Entry.Role != cortex.RoleUser || r.Entry.Text != atStr(t, rec, "attachment", "prompt") {
		t.Errorf("queued_command: role %q text %q", r.Entry.Role, r.Entry.Text)
	}
}

func TestClaudeAgentProgress(t *testing.T) {
	lines, rs := claudeFile(t, "claude/agent_progress.jsonl", FileContext{})
	rec := obj(t, lines[0])
	r := rs[0]
	if r.Err != nil || r.Skip != "" {
		t.Fatalf("%v %q", r.Err, r.Skip)
	}
	e := r.Entry
	inner := at(t, rec, "data", "message")
	if e.RecordKey != "u:"+atStr(t, inner, "uuid") || e.RecordKey == "u:"+atStr(t, rec, "uuid") {
		t.Errorf("RecordKey = %q, want the embedded message's uuid", e.RecordKey)
	}
	if !e.Sidechain || e.AgentID != atStr(t, rec, "data", "agentId") {
		t.Errorf("sidechain %v agent %q", e.Sidechain, e.AgentID)
	}
	if !e.Timestamp.Equal(mustTime(t, atStr(t, inner, "timestamp"))) || e.TimestampEstimated {
		t.Errorf("Timestamp %v, want the embedded message's", e.Timestamp)
	}
	if e.Role != cortex.RoleToolResult || e.Kind != "progress:agent_progress:user:tool_result" || !strings.Contains(e.Text, "No matches found") {
		t.Errorf("role %q kind %q text %q", e.Role, e.Kind, e.Text)
	}
	if e.SessionID != atStr(t, rec, "sessionId") || e.Project != "/Users/alex/workspace/cli" {
		t.Errorf("session %q project %q", e.SessionID, e.Project)
	}
}

func TestClaudeSummary(t *testing.T) {
	line := testdataLines(t, "claude/summary.jsonl")[0]
	rec := obj(t, line)
	r := parseClaudeLines(t, FileContext{SessionID: "4e27c414-a885-46a0-b5c8-d58e1417377d"}, line)[0]
	// A summary is no row: it titles the session of its leaf message.
	if r.Skip != SkipSummary || r.Summary == nil || r.Summary.Text != atStr(t, rec, "summary") ||
		r.Summary.LeafUUID != atStr(t, rec, "leafUuid") || r.Entry.SessionID != "" || !r.Entry.Timestamp.IsZero() {
		t.Errorf("summary: %+v", r)
	}
}

// bareAssistant is a real assistant line without its sessionId, cwd and
// timestamp: a record that must borrow them.
func bareAssistant(t *testing.T) string {
	t.Helper()
	l := testdataLines(t, "claude/assistant_text.jsonl")[0]
	l = strings.Replace(l, `"sessionId":"0d3a8e6f-290f-4105-a327-a2496e5e2a83",`, ``, 1)
	l = strings.Replace(l, `"timestamp":"2025-07-05T19:40:27.094Z"`, `"timestamp":""`, 1)
	l = strings.Replace(l, `"cwd":"/Users/dain/workspace/claude-code-log",`, ``, 1)
	if strings.Contains(l, "sessionId") || strings.Contains(l, "2025-07-05T19:40:27") || strings.Contains(l, `"cwd"`) {
		t.Fatal("excerpt changed")
	}
	return l
}

func TestClaudeBookkeepingAndUnknown(t *testing.T) {
	for _, tc := range []struct{ file, typ string }{
		{"claude/file_history_snapshot.jsonl", "file-history-snapshot"},
		{"claude/permission_mode.jsonl", "permission-mode"},
		{"claude/last_prompt.jsonl", "last-prompt"},
		{"claude/ai_title.jsonl", "ai-title"},
		{"claude/mode.jsonl", "mode"},
		{"claude/turn_duration.jsonl", "system:turn_duration"},
		{"claude/bash_progress.jsonl", "progress:bash_progress"},
	} {
		rs := parseClaudeLines(t, FileContext{}, testdataLines(t, tc.file)...)
		if len(rs) != 1 || rs[0].Err != nil || rs[0].Skip != SkipBookkeeping || rs[0].Type != tc.typ {
			t.Errorf("%s: %+v", tc.file, rs)
		}
	}

	mode := testdataLines(t, "claude/mode.jsonl")[0]
	if !strings.Contains(mode, `"type":"mode"`) {
		t.Fatal("excerpt changed")
	}
	unknown := strings.Replace(mode, `"type":"mode"`, `"type":"future-record"`, 1)
	versioned := strings.Replace(unknown, `{`, `{"version":"2.1.999",`, 1)
	rs := parseClaudeLines(t, FileContext{}, realPrompt(t), unknown, versioned, unknown)
	for i, want := range []string{"1.0.17", "2.1.999", "2.1.999"} {
		r := rs[i+1]
		if r.Skip != SkipUnknownType || r.Type != "future-record" || r.Version != want || r.Err != nil {
			t.Errorf("unknown record %d: skip %q type %q version %q err %v", i, r.Skip, r.Type, r.Version, r.Err)
		}
	}
	// An unknown progress subtype is unknown too, with its type path.
	hp := strings.Replace(testdataLines(t, "claude/hook_progress.jsonl")[0], `"type":"hook_progress"`, `"type":"teleport_progress"`, 1)
	r := parseClaudeLines(t, FileContext{}, hp)[0]
	if r.Skip != SkipUnknownType || r.Type != "progress:teleport_progress" || r.Version != "2.1.42" {
		t.Errorf("unknown progress: %q %q %q", r.Skip, r.Type, r.Version)
	}
}

func TestClaudeSessionFallback(t *testing.T) {
	prompt := realPrompt(t)
	other := strings.Replace(testdataLines(t, "claude/assistant_text.jsonl")[0], `"sessionId":"0d3a8e6f-290f-4105-a327-a2496e5e2a83"`, `"sessionId":"other-session"`, 1)
	noSession := strings.Replace(testdataLines(t, "claude/assistant_text.jsonl")[0], `"sessionId":"0d3a8e6f-290f-4105-a327-a2496e5e2a83",`, ``, 1)
	if other == noSession || strings.Contains(noSession, "sessionId") {
		t.Fatal("excerpt changed")
	}
	bare := bareAssistant(t)
	rs := parseClaudeLines(t, FileContext{SessionID: "from-path"}, bare, prompt, bare, other, noSession)
	want := []string{"from-path", "d3ad4cdc-5657-435d-98fa-0035d53e383d", "d3ad4cdc-5657-435d-98fa-0035d53e383d", "other-session", "other-session"}
	for i, r := range rs {
		if r.Entry.SessionID != want[i] {
			t.Errorf("record %d: SessionID %q, want %q", i+1, r.Entry.SessionID, want[i])
		}
	}
	// Timestamps: an untimed record after a timed one takes its time, estimated.
	if !rs[2].Entry.Timestamp.Equal(rs[1].Entry.Timestamp) || !rs[2].Entry.TimestampEstimated {
		t.Errorf("untimed record's time %v est %v, want the previous record's", rs[2].Entry.Timestamp, rs[2].Entry.TimestampEstimated)
	}
}

func TestClaudeContextFromPath(t *testing.T) {
	root := filepath.FromSlash("/home/u/.claude/projects/-Users-x-proj")
	for _, tc := range []struct {
		path                    string
		session, agent, project string
		format                  Format
	}{
		{filepath.Join(root, "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"), "0d3a8e6f-290f-4105-a327-a2496e5e2a83", "", "/Users/x/proj", FormatClaude},
		{filepath.Join(root, "ef958aa1-0e93-49f0-bb71-150f63befcd1", "subagents", "agent-a36efb2a1231c41e2.jsonl"), "ef958aa1-0e93-49f0-bb71-150f63befcd1", "a36efb2a1231c41e2", "/Users/x/proj", FormatClaude},
		{filepath.Join(root, "agent-659acfed.jsonl"), "", "659acfed", "/Users/x/proj", FormatClaude},
		{filepath.FromSlash("/data/claude/entireio-cli/0e/3fdc072c53/0/full.jsonl"), "", "", "", FormatClaude},
		{filepath.FromSlash("/data/x/raw_transcript"), "", "", "", FormatClaude},
		{filepath.FromSlash("/h/.codex/sessions/2025/11/17/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"), "019a93b9-f380-7600-98ff-940e6b99603c", "", "", FormatCodex},
		{filepath.FromSlash("/h/.gemini/tmp/abc/chats/session-2025-12-24T21-37-2ccb51c5.json"), "session-2025-12-24T21-37-2ccb51c5", "", "", FormatGeminiJSON},
	} {
		ctx := ContextFromPath(tc.path, tc.format)
		if ctx.SessionID != tc.session || ctx.AgentID != tc.agent || ctx.Project != tc.project || ctx.Path != tc.path {
			t.Errorf("ContextFromPath(%s) = %+v, want session %q agent %q project %q", tc.path, ctx, tc.session, tc.agent, tc.project)
		}
	}

	// Records of a subagent file are sidechain records of that agent.
	ctx := ContextFromPath(filepath.Join(root, "ef958aa1-0e93-49f0-bb71-150f63befcd1", "subagents", "agent-a36efb2a1231c41e2.jsonl"), FormatClaude)
	ctx.AgentType = "general-purpose"
	rs := parseClaudeLines(t, ctx, bareAssistant(t), realPrompt(t))
	for i, r := range rs {
		e := r.Entry
		if !e.Sidechain || e.AgentID != "a36efb2a1231c41e2" || e.Meta["agent_type"] != "general-purpose" {
			t.Errorf("record %d: sidechain %v agent %q meta %v", i+1, e.Sidechain, e.AgentID, e.Meta)
		}
	}
	if rs[0].Entry.SessionID != "ef958aa1-0e93-49f0-bb71-150f63befcd1" || rs[0].Entry.Project != "/Users/x/proj" {
		t.Errorf("sessionless record in subagent file: session %q project %q", rs[0].Entry.SessionID, rs[0].Entry.Project)
	}
	// A record's own cwd wins over the folder name.
	if rs[1].Entry.Project != "/Users/chip/dev/ai-music" {
		t.Errorf("project %q", rs[1].Entry.Project)
	}
}

func TestNormalizeProject(t *testing.T) {
	for in, want := range map[string]string{
		"/repo/.worktrees/x":              "/repo",
		"/repo/.worktrees/x/sub/dir":      "/repo",
		"/Users/a/p/.claude/worktrees/f1": "/Users/a/p",
		"/repo/":                          "/repo",
		"  /repo  ":                       "/repo",
		"/":                               "/",
		"":                                "",
		"gemini://project/abc":            "gemini://project/abc",
		"/repo/worktrees/x":               "/repo/worktrees/x",
		"/repo/.worktreesx/y":             "/repo/.worktreesx/y",
	} {
		if got := NormalizeProject(in); got != want {
			t.Errorf("NormalizeProject(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClaudeTextBounds(t *testing.T) {
	// A 4.3 KB Read result: cut to head + tail with a marker.
	lines, rs := claudeFile(t, "claude/large_tool_result.jsonl", FileContext{})
	body := atStr(t, obj(t, lines[1]), "message", "content", 0, "content")
	if len(body) <= MaxToolOutputHead+MaxToolOutputTail+64 {
		t.Fatal("excerpt too small for this test")
	}
	e := rs[1].Entry
	if e.Role != cortex.RoleToolResult || e.ToolName != "Read" || e.IsError || !e.TextTruncated {
		t.Errorf("role %q tool %q error %v truncated %v", e.Role, e.ToolName, e.IsError, e.TextTruncated)
	}
	checkHeadTail(t, "read result", e.Text, "[Read result] ", body, MaxToolOutputHead, MaxToolOutputTail)

	// A 10 KB error result keeps a larger head, and its tail.
	lines, rs = claudeFile(t, "claude/large_error_result.jsonl", FileContext{})
	body = atStr(t, obj(t, lines[1]), "message", "content", 0, "content")
	e = rs[1].Entry
	if !e.IsError || e.ToolName != "Bash" || !e.TextTruncated {
		t.Errorf("error %v tool %q truncated %v", e.IsError, e.ToolName, e.TextTruncated)
	}
	checkHeadTail(t, "error result", e.Text, "[Bash error] ", body, MaxErrorHead, MaxErrorTail)

	// A 3.9 KB error is kept whole; the same output as a success is cut.
	lines, rs = claudeFile(t, "claude/medium_error_result.jsonl", FileContext{})
	body = atStr(t, obj(t, lines[1]), "message", "content", 0, "content")
	e = rs[1].Entry
	if !e.IsError || e.TextTruncated || e.Text != "[Bash error] "+strings.TrimSpace(body) {
		t.Errorf("medium error: truncated %v, text %d bytes for a %d-byte body", e.TextTruncated, len(e.Text), len(body))
	}
	if !strings.Contains(lines[1], `"is_error":true`) {
		t.Fatal("excerpt changed")
	}
	success := strings.Replace(lines[1], `"is_error":true`, `"is_error":false`, 1)
	e = parseClaudeLines(t, FileContext{}, lines[0], success)[1].Entry
	if e.IsError || !e.TextTruncated {
		t.Errorf("medium success: error %v truncated %v", e.IsError, e.TextTruncated)
	}
	checkHeadTail(t, "medium success", e.Text, "[Bash result] ", body, MaxToolOutputHead, MaxToolOutputTail)

	// A typed prompt over MaxUserText.
	long := strings.Repeat("ü", MaxUserText) // 2 bytes each
	e = parseClaudeLines(t, FileContext{}, withPrompt(t, `"`+long+`"`))[0].Entry
	if len(e.Text) > MaxUserText || len(e.Text) < MaxUserText-1 || !e.TextTruncated || !utf8.ValidString(e.Text) {
		t.Errorf("long prompt: %d bytes, truncated %v", len(e.Text), e.TextTruncated)
	}
}

// checkHeadTail asserts text = prefix + head of body + omission marker +
// tail of body, with the head and tail no longer than their bounds and
// together missing only what the marker says.
func checkHeadTail(t *testing.T, name, text, prefix, body string, head, tail int) {
	t.Helper()
	// The text builder trims the whole entry, so trailing whitespace of the
	// body is gone from the tail.
	trimmed := strings.TrimRight(body, " \t\r\n")
	if !strings.HasPrefix(text, prefix) {
		t.Fatalf("%s: text does not start with %q: %.60q", name, prefix, text)
	}
	rest := text[len(prefix):]
	i := strings.Index(rest, "\n[… ")
	j := strings.Index(rest, " bytes omitted …]\n")
	if i < 0 || j < i {
		t.Fatalf("%s: no omission marker in %d-byte text", name, len(text))
	}
	h := rest[:i]
	tl := rest[j+len(" bytes omitted …]\n"):]
	var omitted int
	if _, err := fmt.Sscan(rest[i+len("\n[… "):j], &omitted); err != nil {
		t.Fatalf("%s: marker count: %v", name, err)
	}
	if len(h) > head || len(h) < head-3 || !strings.HasPrefix(body, h) {
		t.Errorf("%s: head is %d bytes (bound %d) or not the body's start", name, len(h), head)
	}
	if len(tl) > tail || len(tl) < tail-3-(len(body)-len(trimmed)) || !strings.HasSuffix(trimmed, tl) {
		t.Errorf("%s: tail is %d bytes (bound %d) or not the body's end", name, len(tl), tail)
	}
	if len(h)+omitted+len(tl)+len(body)-len(trimmed) != len(body) {
		t.Errorf("%s: head %d + omitted %d + tail %d != body %d", name, len(h), omitted, len(tl), len(body))
	}
}

// In a subagent transcript the "user" is the parent agent: its prompt is
// context, never text a human typed (detectors read corrections from
// RoleUser only).
func TestClaudeSubagentPromptIsContext(t *testing.T) {
	rel := "claude/claude-code-log/-src-experiments-claude_p/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl"
	data := readCorpusFile(t, rel)
	first := data[:bytes.IndexByte(data, '\n')]
	ctx := ContextFromPath("/x/.claude/projects/-src/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl", FormatClaude)
	rs := ParseLine(NewClaudeParser(ctx), first, 1, true)
	if len(rs) != 1 || rs[0].Err != nil || rs[0].Skip != "" {
		t.Fatalf("results %+v", rs)
	}
	e := rs[0].Entry
	if e.Role != cortex.RoleContext || e.Kind != "user:subagent_prompt" || !e.Sidechain {
		t.Errorf("role %q kind %q sidechain %v", e.Role, e.Kind, e.Sidechain)
	}
	if !strings.HasPrefix(e.Text, "Give me a comprehensive overview") {
		t.Errorf("text %q", e.Text)
	}
	// The same line in a main-thread file without the sidechain flag is a
	// typed prompt.
	main := bytes.Replace(first, []byte(`"isSidechain":true`), []byte(`"isSidechain":false`), 1)
	main = bytes.Replace(main, []byte(`"agentId":"a2271d1",`), nil, 1)
	rs = ParseLine(NewClaudeParser(FileContext{}), main, 1, true)
	if rs[0].Entry.Role != cortex.RoleUser {
		t.Errorf("main-thread prompt role %q", rs[0].Entry.Role)
	}
}

// Tool result parts of unknown type (documents) are named, never dumped:
// their payload may be megabytes of base64.
func TestClaudeUnknownToolResultPartIsNamed(t *testing.T) {
	payload := strings.Repeat("QUJD", 5000)
	line := `{"type":"user","uuid":"u1","timestamp":"2026-01-01T00:00:00Z","sessionId":"s","message":{"role":"user","content":[` +
		`{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"see attached"},{"type":"document","source":{"type":"base64","data":"` + payload + `"}}]}]}}`
	rs := ParseLine(NewClaudeParser(FileContext{}), []byte(line), 1, true)
	e := rs[0].Entry
	if strings.Contains(e.Text, "QUJD") || !strings.Contains(e.Text, "[document]") || !strings.Contains(e.Text, "see attached") {
		t.Errorf("text %q", e.Text)
	}
}

// Gemini content given as a single part object still yields its text.
func TestGeminiSinglePartContent(t *testing.T) {
	doc := `{"sessionId":"s","projectHash":"h","messages":[{"id":"m1","timestamp":"2026-01-01T00:00:00Z","type":"user","content":{"text":"hello there"}}]}`
	rs, err := ParseGemini(FileContext{}, []byte(doc))
	if err != nil || len(rs) != 1 || rs[0].Entry.Text != "hello there" {
		t.Fatalf("%v %+v", err, rs)
	}
}
