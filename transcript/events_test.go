package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// sum is the hex SHA-256 of s, computed here independently of the code
// under test.
func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// encode re-encodes a decoded record (for derived variants).
func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// claudeEv parses Claude lines with one parser and returns the stored
// results, after checking every one against re-extraction and the event
// invariants.
func claudeEv(t *testing.T, lines ...string) []Result {
	t.Helper()
	rs := stored(parseClaudeLines(t, FileContext{SessionID: "s"}, lines...))
	for i, r := range rs {
		where := fmt.Sprintf("result %d (%s)", i, r.Entry.Kind)
		checkReextract(t, where, r)
		checkEvents(t, where, r.Events)
	}
	return rs
}

// codexEv is claudeEv for Codex lines (skipped records are kept, so that
// indexes match the lines).
func codexEv(t *testing.T, lines ...string) []Result {
	t.Helper()
	rs := codexLines(t, FileContext{SessionID: "s"}, lines...)
	for i, r := range rs {
		if r.Skip != "" {
			if !r.Events.Empty() {
				t.Errorf("line %d: skipped record with events", i+1)
			}
			continue
		}
		where := fmt.Sprintf("line %d (%s)", i+1, r.Entry.Kind)
		checkReextract(t, where, r)
		checkEvents(t, where, r.Events)
	}
	return rs
}

// onlySkill returns the single skill event of a result (and no other
// event kinds unless allowed).
func onlySkill(t *testing.T, r Result) cortex.SkillEvent {
	t.Helper()
	if len(r.Events.Skills) != 1 {
		t.Fatalf("%d skill events, want 1: %+v", len(r.Events.Skills), r.Events.Skills)
	}
	return r.Events.Skills[0]
}

func TestNormalizeSkill(t *testing.T) {
	euro100 := strings.Repeat("€", 100) // 300 bytes, 3 per rune
	long := strings.Repeat("p", 300)
	for _, tc := range []struct {
		name, plugin         string
		wantName, wantPlugin string
		ok                   bool
	}{
		{"verify", "", "verify", "", true},
		{"  verify \n", "", "verify", "", true},
		{"marvin:marvin", "", "marvin:marvin", "marvin", true},
		{"entire-internal:github-pr-review", "", "entire-internal:github-pr-review", "entire-internal", true},
		{"lavra:lavra-plan", "lavra", "lavra:lavra-plan", "lavra", true},
		// A plugin given separately is never folded into the name.
		{"github-pr-review", "entire", "github-pr-review", "entire", true},
		{"x:y", "p", "x:y", "p", true},
		{"s", "  ", "s", "", true},
		{" p : s ", "", "p : s", "p", true},
		{"a:b:c", "", "a:b:c", "a", true},
		// A colon without both parts is not the plugin:skill form.
		{"p:", "", "p:", "", true},
		{":s", "", ":s", "", true},
		{":", "", ":", "", true},
		{" :s", "", ":s", "", true},
		// Rejected: empty, control characters anywhere (C0, DEL, C1).
		{"", "", "", "", false},
		{" \t\n", "p", "", "", false},
		{"ver\nify", "", "", "", false},
		{"a\x00b", "", "", "", false},
		{"a\x7fb", "", "", "", false},
		{"a\u0085b", "", "", "", false},
		{"ok", "pl\x07", "", "", false},
		{"ok", "p\nq", "", "", false},
		// Invalid UTF-8 is replaced, not rejected.
		{"a\xffb", "", "a\uFFFDb", "", true},
		// Clamped to 256 bytes on a rune boundary.
		{euro100, "", strings.Repeat("€", 85), "", true},
		{"é" + euro100, "", "é" + strings.Repeat("€", 84), "", true},
		{"s", long, "s", long[:256], true},
		{long + ":s", "", long[:256], long[:256], true},
		{euro100 + ":s", "", strings.Repeat("€", 85), strings.Repeat("€", 85), true},
		{strings.Repeat("a", 255) + " b", "", strings.Repeat("a", 255), "", true},
	} {
		t.Run(fmt.Sprintf("%.20q/%.10q", tc.name, tc.plugin), func(t *testing.T) {
			n, p, ok := NormalizeSkill(tc.name, tc.plugin)
			if n != tc.wantName || p != tc.wantPlugin || ok != tc.ok {
				t.Errorf("NormalizeSkill(%q, %q) = %q, %q, %v; want %q, %q, %v", tc.name, tc.plugin, n, p, ok, tc.wantName, tc.wantPlugin, tc.ok)
			}
			if len(n) > MaxSkillField || len(p) > MaxSkillField || !utf8.ValidString(n) || !utf8.ValidString(p) {
				t.Errorf("not clamped to valid UTF-8: %d/%d bytes", len(n), len(p))
			}
		})
	}
}

func TestSplitMCPName(t *testing.T) {
	for _, tc := range []struct{ name, server, tool string }{
		{"mcp__claude_ai_Datadog__authenticate", "claude_ai_Datadog", "authenticate"},
		{"mcp__linear-server__list_issues", "linear-server", "list_issues"},
		{"mcp__node_repl__js", "node_repl", "js"},
		{"mcp__a__b__c", "a", "b__c"},
		{"mcp__solo", "solo", ""},
		{"mcp____x", "", ""},
		{"Bash", "", ""},
		{"exec_command", "", ""},
		{"mcp_single__x", "", ""},
	} {
		server, tool, ok := SplitMCPName(tc.name)
		if server != tc.server || tool != tc.tool || ok != (tc.server != "") {
			t.Errorf("SplitMCPName(%q) = %q, %q, %v", tc.name, server, tool, ok)
		}
	}
}

func TestClaudeAttributionEvents(t *testing.T) {
	for _, name := range []string{"claude/attribution_plugin.jsonl", "claude/attribution_bundled.jsonl", "claude/empty_thinking_attribution.jsonl"} {
		t.Run(name, func(t *testing.T) {
			line := testdataLines(t, name)[0]
			rec := obj(t, line)
			r := claudeEv(t, line)[0]
			s := onlySkill(t, r)
			plugin, _ := rec["attributionPlugin"].(string)
			if s.SkillName != rec["attributionSkill"] || s.SkillPlugin != plugin || s.EventKind != cortex.SkillClaudeAttribution ||
				s.EvidenceKind != cortex.EvidenceStructured || s.Meta["field"] != "attributionSkill" || s.SkillPath != "" {
				t.Errorf("event %+v for attributionSkill %q / attributionPlugin %q", s, rec["attributionSkill"], plugin)
			}
		})
	}

	line := testdataLines(t, "claude/attribution_plugin.jsonl")[0]
	// Derived: the fields under message (the issue allows for it).
	rec := obj(t, line)
	msg := rec["message"].(map[string]any)
	msg["attributionSkill"], msg["attributionPlugin"] = rec["attributionSkill"], rec["attributionPlugin"]
	delete(rec, "attributionSkill")
	delete(rec, "attributionPlugin")
	if s := onlySkill(t, claudeEv(t, encode(t, rec))[0]); s.SkillName != "marvin:marvin" || s.SkillPlugin != "marvin" || s.Meta["field"] != "message.attributionSkill" {
		t.Errorf("message-level attribution: %+v", s)
	}
	// Derived: plugin given separately, skill name without a colon.
	rec = obj(t, line)
	rec["attributionSkill"], rec["attributionPlugin"] = "github-pr-review", "entire"
	if s := onlySkill(t, claudeEv(t, encode(t, rec))[0]); s.SkillName != "github-pr-review" || s.SkillPlugin != "entire" {
		t.Errorf("no plugin:skill may be fabricated: %+v", s)
	}
	// Derived: a blank or control-character name is no event.
	for _, bad := range []any{"  ", "a\nb", nil, 7} {
		rec = obj(t, line)
		rec["attributionSkill"] = bad
		if r := claudeEv(t, encode(t, rec))[0]; len(r.Events.Skills) != 0 {
			t.Errorf("attributionSkill %q: %+v", bad, r.Events.Skills)
		}
	}
	// No attribution field: no skill event. Attribution on a user record
	// is not read.
	for _, name := range []string{"claude/assistant_text.jsonl", "claude/thinking.jsonl", "claude/user_prompt.jsonl"} {
		for _, r := range claudeEv(t, testdataLines(t, name)...) {
			if len(r.Events.Skills) != 0 {
				t.Errorf("%s: %+v", name, r.Events.Skills)
			}
		}
	}
	rec = obj(t, testdataLines(t, "claude/user_prompt.jsonl")[0])
	rec["attributionSkill"] = "verify"
	if r := claudeEv(t, encode(t, rec))[0]; len(r.Events.Skills) != 0 {
		t.Errorf("attribution on a user record: %+v", r.Events.Skills)
	}
}

// skillBodyOf splits a "Base directory for this skill:" text the way the
// tests expect: directory and trimmed body.
func skillBodyOf(t *testing.T, text string) (dir, body string) {
	t.Helper()
	first, rest, _ := strings.Cut(text, "\n")
	dir, ok := strings.CutPrefix(first, "Base directory for this skill: ")
	if !ok {
		t.Fatalf("not a skill body: %.80q", text)
	}
	return dir, strings.TrimSpace(rest)
}

func TestClaudeSkillToolAndBody(t *testing.T) {
	lines := testdataLines(t, "claude/skill_invocation.jsonl")
	rs := claudeEv(t, lines...)
	if len(rs) != 3 {
		t.Fatalf("%d results", len(rs))
	}
	useID := atStr(t, obj(t, lines[0]), "message", "content", 0, "id")
	// 1: the Skill tool_use — a tool call and a claude_skill_tool event.
	s := onlySkill(t, rs[0])
	if s.SkillName != "github-pr-review" || s.SkillPlugin != "" || s.EventKind != cortex.SkillClaudeTool ||
		s.EvidenceKind != cortex.EvidenceStructured || s.Meta["tool_use_id"] != useID || s.Meta["args"] != "" {
		t.Errorf("Skill tool_use: %+v", s)
	}
	if len(rs[0].Events.Tools) != 1 || rs[0].Events.Tools[0].ToolName != "Skill" || rs[0].Events.Tools[0].ArgumentsJSON != `{"skill":"github-pr-review"}` {
		t.Errorf("Skill tool call: %+v", rs[0].Events.Tools)
	}
	// 2: "Launching skill: …" is the tool result, not a skill event.
	if len(rs[1].Events.Skills) != 0 || len(rs[1].Events.Tools) != 1 || rs[1].Events.Tools[0].OutputPreview != "Launching skill: github-pr-review" {
		t.Errorf("launch result: %+v", rs[1].Events)
	}
	// 3: the injected body, loaded by that tool_use.
	rec := obj(t, lines[2])
	dir, body := skillBodyOf(t, atStr(t, rec, "message", "content", 0, "text"))
	s = onlySkill(t, rs[2])
	if s.SkillName != "github-pr-review" || s.EventKind != cortex.SkillClaudeBody || s.EvidenceKind != cortex.EvidenceContent ||
		s.SkillPath != dir+"/SKILL.md" || s.Meta["source_tool_use_id"] != useID || s.Meta["skill_content_sha256"] != sum(body) {
		t.Errorf("skill body: %+v (want sha %s)", s, sum(body))
	}
	if len(rs[2].Events.Tools) != 0 {
		t.Errorf("skill body with tool events: %+v", rs[2].Events.Tools)
	}

	// A Skill tool_use with args.
	line := testdataLines(t, "claude/skill_tool_args.jsonl")[0]
	var in map[string]any
	for _, b := range at(t, obj(t, line), "message", "content").([]any) {
		if b.(map[string]any)["name"] == "Skill" {
			in = b.(map[string]any)["input"].(map[string]any)
		}
	}
	r := claudeEv(t, line)[0]
	var tool *cortex.SkillEvent
	for i := range r.Events.Skills {
		if r.Events.Skills[i].EventKind == cortex.SkillClaudeTool {
			tool = &r.Events.Skills[i]
		}
	}
	if tool == nil || tool.SkillName != in["skill"] || tool.Meta["args"] != cortex.CutUTF8(in["args"].(string), 256) || tool.Meta["args"] == "" {
		t.Errorf("Skill tool_use with args %v: %+v", in, r.Events.Skills)
	}
}

func TestClaudeSlashCommandSkill(t *testing.T) {
	// claude/entireio-cli/0e/3fdc072c53/0/full.jsonl lines 505 (the typed
	// /github-pr-review) and 506 (the body it injected, no sourceToolUseID).
	lines := testdataLines(t, "claude/slash_skill_body.jsonl")
	rs := claudeEv(t, lines...)
	if len(rs) != 2 || rs[0].Entry.Kind != "user:command" || rs[1].Entry.Kind != "user:meta" {
		t.Fatalf("results %d", len(rs))
	}
	// The command line is the activation the user typed (and their act).
	if c := onlySkill(t, rs[0]); c.SkillName != "github-pr-review" || c.EventKind != cortex.SkillClaudeCommand {
		t.Errorf("typed slash command: %+v", c)
	}
	if u := rs[0].Events.Users; len(u) != 1 || u[0].Kind != cortex.UserCommand || u[0].Text != "github-pr-review" {
		t.Errorf("typed slash command as a user act: %+v", u)
	}
	rec := obj(t, lines[1])
	if _, ok := rec["sourceToolUseID"]; ok {
		t.Fatal("excerpt changed")
	}
	dir, body := skillBodyOf(t, atStr(t, rec, "message", "content", 0, "text"))
	s := onlySkill(t, rs[1])
	if s.SkillName != "github-pr-review" || s.EventKind != cortex.SkillClaudeSlash || s.EvidenceKind != cortex.EvidenceContent ||
		s.SkillPath != dir+"/SKILL.md" || s.Meta["skill_content_sha256"] != sum(body) || s.Meta["source_tool_use_id"] != "" {
		t.Errorf("slash-command body: %+v", s)
	}
	// The same SKILL.md loaded by the Skill tool hashes the same.
	viaTool := claudeEv(t, testdataLines(t, "claude/skill_invocation.jsonl")...)[2].Events.Skills[0]
	if viaTool.Meta["skill_content_sha256"] != s.Meta["skill_content_sha256"] {
		t.Errorf("same skill, different hashes: %s / %s", viaTool.Meta["skill_content_sha256"], s.Meta["skill_content_sha256"])
	}
	// A plugin skill's directory (…/plugins/entire/skills/search) names
	// the skill as the user typed it: entire:search.
	line := testdataLines(t, "claude/skill_body_plugin.jsonl")[0]
	dir, body = skillBodyOf(t, atStr(t, obj(t, line), "message", "content", 0, "text"))
	s = onlySkill(t, claudeEv(t, line)[0])
	if s.SkillName != "entire:search" || s.SkillPlugin != "entire" || s.EventKind != cortex.SkillClaudeSlash || s.SkillPath != dir+"/SKILL.md" || s.Meta["skill_content_sha256"] != sum(body) {
		t.Errorf("plugin skill body: %+v", s)
	}
	// Derived: the same text typed by a user (not isMeta) is no event.
	rec = obj(t, line)
	delete(rec, "isMeta")
	if r := claudeEv(t, encode(t, rec))[0]; r.Entry.Kind == "user:meta" || len(r.Events.Skills) != 0 {
		t.Errorf("non-meta record %q: %+v", r.Entry.Kind, r.Events.Skills)
	}
}

func TestClaudeInvokedSkills(t *testing.T) {
	// planetfall 84/da75cf4015 (Claude Code 2.1.170) line 418.
	line := testdataLines(t, "claude/invoked_skills.jsonl")[0]
	skills := at(t, obj(t, line), "attachment", "skills").([]any)
	r := claudeEv(t, line)[0]
	if len(r.Events.Skills) != len(skills) || len(skills) == 0 {
		t.Fatalf("%d events for %d skills", len(r.Events.Skills), len(skills))
	}
	for i, sk := range skills {
		m := sk.(map[string]any)
		s := r.Events.Skills[i]
		if s.SkillName != m["name"] || s.SkillPath != m["path"] || s.EventKind != cortex.SkillClaudeInvoked ||
			s.EvidenceKind != cortex.EvidenceStructured || s.Meta["skill_content_sha256"] != sum(m["content"].(string)) {
			t.Errorf("skill %d: %+v", i, s)
		}
	}
}

// toolInput decodes a tool event's arguments for comparison with the
// record's input.
func toolInput(t *testing.T, js string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatalf("arguments %.80q: %v", js, err)
	}
	return v
}

func TestClaudeToolEvents(t *testing.T) {
	t.Run("error result", func(t *testing.T) {
		lines := testdataLines(t, "claude/bash_error.jsonl")
		rs := claudeEv(t, lines...)
		use := at(t, obj(t, lines[0]), "message", "content", 0).(map[string]any)
		res := at(t, obj(t, lines[1]), "message", "content", 0).(map[string]any)
		call := rs[0].Events.Tools
		if len(call) != 1 || call[0].CallID != use["id"] || call[0].ToolName != "Bash" || call[0].MCPServer != "" ||
			!call[0].HasCall || call[0].HasResult || call[0].Status != "" || call[0].IsError != nil || call[0].EventKind != cortex.ToolClaudeUse ||
			!reflect.DeepEqual(toolInput(t, call[0].ArgumentsJSON), use["input"]) {
			t.Errorf("call %+v", call)
		}
		out := rs[1].Events.Tools
		if res["is_error"] != true || len(out) != 1 || out[0].CallID != use["id"] || out[0].ToolName != "" || out[0].HasCall || !out[0].HasResult ||
			out[0].Status != cortex.CallError || out[0].IsError == nil || !*out[0].IsError || out[0].ErrorText != res["content"] || out[0].OutputPreview != "" {
			t.Errorf("result %+v", out)
		}
	})
	t.Run("list content, is_error false", func(t *testing.T) {
		line := testdataLines(t, "claude/tool_result_text_list.jsonl")[0]
		res := at(t, obj(t, line), "message", "content", 0).(map[string]any)
		var parts []string
		for _, p := range res["content"].([]any) {
			parts = append(parts, p.(map[string]any)["text"].(string))
		}
		out := claudeEv(t, line)[0].Events.Tools
		if len(out) != 1 || out[0].Status != cortex.CallSuccess || out[0].IsError == nil || *out[0].IsError ||
			out[0].OutputPreview != cortex.CutUTF8(strings.Join(parts, "\n"), MaxEventOutput) || out[0].CallID != res["tool_use_id"] {
			t.Errorf("result %+v", out)
		}
	})
	t.Run("several tool_use blocks, results, hook progress", func(t *testing.T) {
		// Claude Code 2.1.50: one assistant line with two Glob calls; each
		// result follows a PostToolUse hook_progress record.
		lines := testdataLines(t, "claude/multi_tool_use.jsonl")
		rs := claudeEv(t, lines...)
		var ids []string
		for _, b := range at(t, obj(t, lines[0]), "message", "content").([]any) {
			if b.(map[string]any)["type"] == "tool_use" {
				ids = append(ids, b.(map[string]any)["id"].(string))
			}
		}
		calls := rs[0].Events.Tools
		if len(ids) != 2 || len(calls) != 2 || calls[0].CallID != ids[0] || calls[1].CallID != ids[1] || calls[0].ToolName != "Glob" {
			t.Fatalf("calls %+v for ids %v", calls, ids)
		}
		for i, want := range []string{"hook", ids[0], "hook", ids[1]} {
			ev := rs[i+1].Events
			if want == "hook" {
				d := at(t, obj(t, lines[i+1]), "data").(map[string]any)
				if len(ev.Hooks) != 1 || ev.Hooks[0].Status != cortex.HookUnknown || ev.Hooks[0].Meta["phase"] != "started" ||
					ev.Hooks[0].HookEvent != d["hookEvent"] || ev.Hooks[0].HookName != d["hookName"] || ev.Hooks[0].Command != d["command"] {
					t.Errorf("line %d: hook_progress %+v", i+2, ev)
				}
				continue
			}
			if len(ev.Tools) != 1 || ev.Tools[0].CallID != want || !ev.Tools[0].HasResult {
				t.Errorf("line %d: result %+v", i+2, ev)
			}
		}
	})
	t.Run("mcp", func(t *testing.T) {
		lines := testdataLines(t, "claude/mcp_tool_use.jsonl")
		rs := claudeEv(t, lines...)
		call, out := rs[0].Events.Tools[0], rs[1].Events.Tools[0]
		if call.ToolName != "mcp__linear-server__list_issues" || call.MCPServer != "linear-server" || call.MCPTool != "list_issues" ||
			out.CallID != call.CallID || out.Status != cortex.CallSuccess || !strings.HasPrefix(out.OutputPreview, `{"issues":[`) {
			t.Errorf("call %+v result %+v", call, out)
		}
	})
	t.Run("agent_progress", func(t *testing.T) {
		line := testdataLines(t, "claude/agent_progress_tool_use.jsonl")[0]
		use := at(t, obj(t, line), "data", "message", "message", "content", 0).(map[string]any)
		ev := claudeEv(t, line)[0].Events
		if len(ev.Tools) != 1 || ev.Tools[0].CallID != use["id"] || ev.Tools[0].ToolName != use["name"] || !ev.Tools[0].HasCall {
			t.Errorf("embedded tool_use: %+v", ev.Tools)
		}
		line = testdataLines(t, "claude/agent_progress.jsonl")[0]
		res := at(t, obj(t, line), "data", "message", "message", "content", 0).(map[string]any)
		ev = claudeEv(t, line)[0].Events
		if len(ev.Tools) != 1 || ev.Tools[0].CallID != res["tool_use_id"] || !ev.Tools[0].HasResult || ev.Tools[0].HasCall {
			t.Errorf("embedded tool_result: %+v", ev.Tools)
		}
	})
	t.Run("bounded output", func(t *testing.T) {
		for _, name := range []string{"claude/large_error_result.jsonl", "claude/large_tool_result.jsonl"} {
			lines := testdataLines(t, name)
			res := at(t, obj(t, lines[1]), "message", "content", 0).(map[string]any)
			body := toolResultText(fastjson.MustParse(encode(t, res["content"])))
			x := claudeEv(t, lines...)[1].Events.Tools[0]
			text := x.OutputPreview
			if res["is_error"] == true {
				text = x.ErrorText
				if x.Meta["error_truncated"] != "true" || !strings.HasPrefix(text, body[:1000]) || !strings.HasSuffix(text, body[len(body)-200:]) {
					t.Errorf("%s: error text keeps head and tail? %d bytes, meta %v", name, len(text), x.Meta)
				}
			} else if x.Meta["output_truncated"] != "true" || text != cortex.CutUTF8(body, MaxEventOutput) {
				t.Errorf("%s: preview %d bytes, meta %v", name, len(text), x.Meta)
			}
			if len(body) <= MaxEventText || len(text) > MaxEventText {
				t.Errorf("%s: body %d, preview %d bytes", name, len(body), len(text))
			}
		}
	})
}

func TestClaudeHookEvents(t *testing.T) {
	success := testdataLines(t, "claude/hook_success.jsonl")[0]
	exit2 := obj(t, success)
	exit2["attachment"].(map[string]any)["exitCode"] = 2 // derived: a failing hook_success
	for _, tc := range []struct {
		name, line, status string
		stdoutFrom         string // attachment field shown as stdout
	}{
		{"hook_success", success, cortex.HookSuccess, "stdout"},
		{"hook_success exit 2", encode(t, exit2), cortex.HookFailed, "stdout"},
		{"hook_non_blocking_error", testdataLines(t, "claude/hook_non_blocking_error.jsonl")[0], cortex.HookFailed, "stdout"},
		{"hook_cancelled", testdataLines(t, "claude/hook_cancelled.jsonl")[0], cortex.HookCancelled, ""},
		{"hook_additional_context", testdataLines(t, "claude/hook_additional_context.jsonl")[0], cortex.HookSuccess, "content"},
		{"hook_system_message", testdataLines(t, "claude/hook_system_message.jsonl")[0], cortex.HookSuccess, "content"},
		{"async_hook_response", testdataLines(t, "claude/async_hook_response.jsonl")[0], cortex.HookSuccess, "stdout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := obj(t, tc.line)["attachment"].(map[string]any)
			ev := claudeEv(t, tc.line)[0].Events
			if len(ev.Hooks) != 1 || len(ev.Tools)+len(ev.Skills) != 0 {
				t.Fatalf("events %+v", ev)
			}
			h := ev.Hooks[0]
			str := func(k string) string { s, _ := a[k].(string); return s }
			var stdout string
			switch c := a[tc.stdoutFrom].(type) {
			case string:
				stdout = c
			case []any:
				for i, p := range c {
					if i > 0 {
						stdout += "\n"
					}
					stdout += p.(string)
				}
			}
			if h.Status != tc.status || h.HookEvent != str("hookEvent") || h.HookName != str("hookName") || h.Command != str("command") ||
				h.EvidenceKind != cortex.EvidenceRuntime || h.Index != 0 || h.StdoutPreview != strings.TrimSpace(stdout) ||
				h.StderrPreview != strings.TrimSpace(str("stderr")) || h.Meta["attachment_type"] != str("type") || h.Meta["tool_use_id"] != str("toolUseID") {
				t.Errorf("hook %+v", h)
			}
			if code, ok := a["exitCode"].(float64); ok != (h.ExitCode != nil) || ok && *h.ExitCode != int(code) {
				t.Errorf("exit code %v, attachment %v", h.ExitCode, a["exitCode"])
			}
			if d, ok := a["durationMs"].(float64); ok != (h.DurationMS != nil) || ok && *h.DurationMS != int64(d) {
				t.Errorf("duration %v, attachment %v", h.DurationMS, a["durationMs"])
			}
		})
	}
	// Specific values of the real excerpts.
	h := claudeEv(t, testdataLines(t, "claude/hook_non_blocking_error.jsonl")[0])[0].Events.Hooks[0]
	if *h.ExitCode != 127 || !strings.Contains(h.StderrPreview, "command not found") {
		t.Errorf("non-blocking error: %+v", h)
	}
	h = claudeEv(t, testdataLines(t, "claude/hook_cancelled.jsonl")[0])[0].Events.Hooks[0]
	if h.DurationMS == nil || h.ExitCode != nil {
		t.Errorf("cancelled: %+v", h)
	}
	// Derived: a persisted-output pointer is kept.
	rec := obj(t, success)
	rec["attachment"].(map[string]any)["persistedOutputPath"] = "/tmp/hook-output.txt"
	if h := claudeEv(t, encode(t, rec))[0].Events.Hooks[0]; h.PersistedOutputPath != "/tmp/hook-output.txt" {
		t.Errorf("persisted output: %+v", h)
	}
	// Derived: no hookEvent — the event is the hook name up to ":".
	rec = obj(t, success)
	delete(rec["attachment"].(map[string]any), "hookEvent")
	if h := claudeEv(t, encode(t, rec))[0].Events.Hooks[0]; h.HookEvent != "SessionStart" || h.HookName != "SessionStart:startup" {
		t.Errorf("hook event from name: %+v", h)
	}
}

func TestClaudeStopHookSummary(t *testing.T) {
	for _, name := range []string{"claude/stop_hook_summary.jsonl", "claude/stop_hook_summary_multi.jsonl"} {
		line := testdataLines(t, name)[0]
		rec := obj(t, line)
		infos := rec["hookInfos"].([]any)
		hooks := claudeEv(t, line)[0].Events.Hooks
		if len(hooks) != len(infos) {
			t.Fatalf("%s: %d events for %d hooks", name, len(hooks), len(infos))
		}
		for i, h := range hooks {
			info := infos[i].(map[string]any)
			if h.Index != i || h.HookEvent != "Stop" || h.HookName != "Stop" || h.Command != info["command"] || h.Status != cortex.HookSuccess ||
				h.Meta["hook_count"] != fmt.Sprint(rec["hookCount"]) || h.StderrPreview != "" || h.EvidenceKind != cortex.EvidenceRuntime {
				t.Errorf("%s hook %d: %+v", name, i, h)
			}
			if d, ok := info["durationMs"].(float64); ok && (h.DurationMS == nil || *h.DurationMS != int64(d)) {
				t.Errorf("%s hook %d: duration %v", name, i, h.DurationMS)
			}
		}
	}
	line := testdataLines(t, "claude/stop_hook_summary_multi.jsonl")[0]
	// Derived: the hooks reported errors.
	rec := obj(t, line)
	rec["hookErrors"] = []any{"lint failed: 3 problems", map[string]any{"code": 2}}
	for _, h := range claudeEv(t, encode(t, rec))[0].Events.Hooks {
		if h.Status != cortex.HookFailed || h.StderrPreview != "lint failed: 3 problems\n{\"code\":2}" {
			t.Errorf("hookErrors: %+v", h)
		}
	}
	// Derived: the hooks prevented continuation.
	rec = obj(t, line)
	rec["preventedContinuation"], rec["stopReason"] = true, "tests must pass"
	for _, h := range claudeEv(t, encode(t, rec))[0].Events.Hooks {
		if h.Status != cortex.HookBlocked || h.Meta["stop_reason"] != "tests must pass" {
			t.Errorf("preventedContinuation: %+v", h)
		}
	}
}

// skillBlockRe reads a <skill> block independently of the scanner.
var skillBlockRe = regexp.MustCompile(`(?s)<skill>\s*<name>(.*?)</name>\s*<path>(.*?)</path>(.*?)</skill>`)

// codexMessage builds a response_item message record around texts.
func codexMessage(t *testing.T, role string, texts ...string) string {
	t.Helper()
	var parts []any
	for _, s := range texts {
		parts = append(parts, map[string]any{"type": "input_text", "text": s})
	}
	return encode(t, map[string]any{"timestamp": "2026-06-25T13:11:36.646Z", "type": "response_item",
		"payload": map[string]any{"type": "message", "role": role, "content": parts}})
}

func TestCodexSkillEvents(t *testing.T) {
	texts := map[string]string{}
	for _, tc := range []struct{ name, skill, plugin string }{
		{"codex/skill_message_0125.jsonl", "entire:code-tour", "entire"}, // 0.125.0
		{"codex/skill_message_0141.jsonl", "coordinator", ""},            // 0.141.0
		{"codex/skill_message.jsonl", "worktree", ""},                    // 0.142.1
	} {
		line := testdataLines(t, tc.name)[0]
		text := payloadText(t, obj(t, line))
		m := skillBlockRe.FindStringSubmatch(text)
		if m == nil || m[1] != tc.skill {
			t.Fatalf("%s: excerpt changed", tc.name)
		}
		texts[tc.skill] = text
		s := onlySkill(t, codexEv(t, line)[0])
		if s.SkillName != tc.skill || s.SkillPlugin != tc.plugin || s.SkillPath != m[2] || s.EventKind != cortex.SkillCodexBlock ||
			s.EvidenceKind != cortex.EvidenceContent || s.Meta["skill_content_sha256"] != sum(strings.TrimSpace(m[3])) {
			t.Errorf("%s: %+v", tc.name, s)
		}
	}
	names := func(r Result) []string {
		var out []string
		for _, s := range r.Events.Skills {
			out = append(out, s.SkillName)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		line  string
		names []string
	}{
		{"two blocks in one part", codexMessage(t, "user", texts["coordinator"]+"\n"+texts["worktree"]), []string{"coordinator", "worktree"}},
		{"two blocks in two parts", codexMessage(t, "developer", texts["entire:code-tour"], texts["worktree"]), []string{"entire:code-tour", "worktree"}},
		{"same block twice", codexMessage(t, "user", texts["worktree"], texts["worktree"]+texts["worktree"]), []string{"worktree"}},
		{"assistant role", codexMessage(t, "assistant", texts["worktree"]), []string{"worktree"}},
		{"whitespace in and between tags", codexMessage(t, "user", "< skill >\n  <name>\n lavra:lavra-plan \n</ name >\n\t< path > /p/SKILL.md </path>\nbody\n</skill >"), []string{"lavra:lavra-plan"}},
		{"unclosed blocks", codexMessage(t, "user", "<skill><name>a</name>body a\n<skill><name>b</name>body b"), []string{"a", "b"}},
		{"incomplete name", codexMessage(t, "user", "<skill><name>a"), nil},
		{"name with a newline inside", codexMessage(t, "user", "<skill><name>a\nb</name></skill>"), nil},
		{"tag inside the name", codexMessage(t, "user", "<skill><name>a<b>c</b></name></skill>"), nil},
		{"empty name", codexMessage(t, "user", "<skill><name> </name></skill>"), nil},
		{"name not first", codexMessage(t, "user", "<skill>see <name>x</name></skill>"), nil},
		{"<skills> tag", codexMessage(t, "user", "<skills><name>x</name></skills>"), nil},
		{"prose", codexMessage(t, "user", "use the rust skill, then the worktree skill"), nil},
		{"CLI help text", codexMessage(t, "user", "| `--skills <skill>`   | Review skill that was run. |"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := codexEv(t, tc.line)[0]
			if got := names(r); !reflect.DeepEqual(got, tc.names) {
				t.Errorf("skills %q, want %q", got, tc.names)
			}
		})
	}
	// The body of an unclosed block runs to the next <skill>.
	r := codexEv(t, codexMessage(t, "user", "<skill><name>a</name>body a\n<skill><name>b</name>\nbody b"))[0]
	if r.Events.Skills[0].Meta["skill_content_sha256"] != sum("body a") || r.Events.Skills[1].Meta["skill_content_sha256"] != sum("body b") {
		t.Errorf("unclosed bodies: %+v", r.Events.Skills)
	}
	// Whitespace-padded path and name are trimmed.
	r = codexEv(t, codexMessage(t, "user", "< skill >\n<name> x:y </name>< path > /p/SKILL.md </path>body</skill>"))[0]
	if s := r.Events.Skills[0]; s.SkillName != "x:y" || s.SkillPlugin != "x" || s.SkillPath != "/p/SKILL.md" || s.Meta["skill_content_sha256"] != sum("body") {
		t.Errorf("padded: %+v", s)
	}

	// Not scanned: tool output (real: "--skills <skill>" in rg output),
	// event_msg copies and compacted history.
	line := testdataLines(t, "codex/skill_in_tool_output.jsonl")[0]
	if !strings.Contains(line, "<skill>") {
		t.Fatal("excerpt changed")
	}
	if r := codexEv(t, line)[0]; len(r.Events.Skills) != 0 || len(r.Events.Tools) != 1 {
		t.Errorf("tool output: %+v", r.Events)
	}
	block := texts["worktree"]
	for _, rec := range []map[string]any{
		{"type": "response_item", "payload": map[string]any{"type": "function_call_output", "call_id": "c", "output": block}},
		{"type": "event_msg", "payload": map[string]any{"type": "user_message", "message": block}},
		{"type": "compacted", "payload": map[string]any{"message": "", "replacement_history": []any{
			map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": block}}}}}},
	} {
		if r := codexEv(t, encode(t, rec))[0]; len(r.Events.Skills) != 0 {
			t.Errorf("%v: %+v", rec["type"], r.Events.Skills)
		}
	}
}

// onlyTool returns the single tool event of a result.
func onlyTool(t *testing.T, r Result) cortex.ToolEvent {
	t.Helper()
	if len(r.Events.Tools) != 1 || len(r.Events.Skills)+len(r.Events.Hooks) != 0 {
		t.Fatalf("%s: events %+v, want one tool event", r.Entry.Kind, r.Events)
	}
	return r.Events.Tools[0]
}

func TestCodexCallEvents(t *testing.T) {
	// Desktop 0.128 turn: exec_command calls without metadata (the turn
	// comes from turn_context), exec_command_end and outputs.
	lines := testdataLines(t, "codex/rollout_desktop_turn.jsonl")
	rs := codexEv(t, lines...)
	turn := atStr(t, obj(t, lines[1]), "payload", "turn_id")
	pl := at(t, obj(t, lines[8]), "payload").(map[string]any)
	call := onlyTool(t, rs[8])
	var args any
	if err := json.Unmarshal([]byte(pl["arguments"].(string)), &args); err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(pl["arguments"].(string))); err != nil {
		t.Fatal(err)
	}
	if call.CallID != pl["call_id"] || call.ToolName != "exec_command" || call.MCPServer != "" || !call.HasCall || call.HasResult ||
		call.Status != "" || call.TurnID != turn || call.EventKind != cortex.ToolCodexCall || !reflect.DeepEqual(toolInput(t, call.ArgumentsJSON), args) ||
		call.ArgumentsJSON != compact.String() {
		t.Errorf("call %+v", call)
	}
	end := at(t, obj(t, lines[10]), "payload").(map[string]any)
	x := onlyTool(t, rs[10])
	if x.EventKind != cortex.ToolCodexExecEnd || x.CallID != end["call_id"] || x.HasCall || !x.HasResult || x.ExitCode == nil || *x.ExitCode != 0 ||
		x.Status != cortex.CallSuccess || *x.IsError || x.TurnID != end["turn_id"] || x.OutputPreview != end["aggregated_output"] || x.Meta["duration_ms"] != "0" {
		t.Errorf("exec_command_end %+v", x)
	}
	if x := onlyTool(t, rs[14]); x.EventKind != cortex.ToolCodexOutput || x.Status != cortex.CallSuccess || *x.ExitCode != 0 || x.TurnID != turn {
		t.Errorf("output %+v", x)
	}
	// Derived: a failed command.
	failed := obj(t, lines[10])
	failed["payload"].(map[string]any)["exit_code"] = 2
	failed["payload"].(map[string]any)["aggregated_output"] = "fatal: not a git repository"
	if x := onlyTool(t, codexEv(t, encode(t, failed))[0]); x.Status != cortex.CallError || *x.ExitCode != 2 || !*x.IsError || x.ErrorText != "fatal: not a git repository" {
		t.Errorf("failed exec_command_end %+v", x)
	}
}

func TestCodexOutputEvents(t *testing.T) {
	zero := testdataLines(t, "codex/apply_patch_exit_zero.jsonl")
	one := []string{zero[0], strings.Replace(zero[1], `"output":"Exit code: 0\n`, `"output":"Exit code: 1\n`, 1)} // derived
	for _, tc := range []struct {
		name   string
		lines  []string
		tool   string
		status string
		exit   int // -1: none
	}{
		{"JSON envelope exit 1", testdataLines(t, "codex/exit_json_nonzero.jsonl"), "shell", cortex.CallError, 1},
		{"Process exited with code 1", testdataLines(t, "codex/exit_process_nonzero.jsonl"), "exec_command", cortex.CallError, 1},
		{"Exit code: 0", zero, "apply_patch", cortex.CallSuccess, 0},
		{"Exit code: 1", one, "apply_patch", cortex.CallError, 1},
		{"apply_patch verification failed", testdataLines(t, "codex/apply_patch_verification_failed.jsonl"), "apply_patch", cortex.CallError, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := codexEv(t, tc.lines...)
			call, out := onlyTool(t, rs[0]), onlyTool(t, rs[1])
			if call.ToolName != tc.tool || !call.HasCall || out.CallID != call.CallID || out.HasCall || !out.HasResult || out.Status != tc.status ||
				out.IsError == nil || *out.IsError != (tc.status == cortex.CallError) || (out.ExitCode == nil) != (tc.exit < 0) || tc.exit >= 0 && *out.ExitCode != tc.exit {
				t.Errorf("call %+v\noutput %+v", call, out)
			}
			if tc.status == cortex.CallError && out.OutputPreview != "" || tc.status != cortex.CallError && out.ErrorText != "" {
				t.Errorf("error text %.60q preview %.60q", out.ErrorText, out.OutputPreview)
			}
			if tc.exit < 0 && out.Meta["failure"] != "apply_patch_verification_failed" {
				t.Errorf("meta %v", out.Meta)
			}
		})
	}
	// The function_call with metadata.turn_id uses it.
	lines := testdataLines(t, "codex/exit_process_nonzero.jsonl")
	if x := onlyTool(t, codexEv(t, lines[0])[0]); x.TurnID != atStr(t, obj(t, lines[0]), "payload", "metadata", "turn_id") || x.TurnID == "" {
		t.Errorf("turn from metadata: %q", x.TurnID)
	}
	// Without metadata, the entry's turn (from turn_context; backfill
	// reads it from the stored metadata).
	rec := obj(t, lines[0])
	delete(rec["payload"].(map[string]any), "metadata")
	ev, err := ExtractEvents(cortex.ToolCodex, &cortex.Entry{Kind: "response_item:function_call", Meta: map[string]string{"turn_id": "turn-7"}}, []byte(encode(t, rec)))
	if err != nil || len(ev.Tools) != 1 || ev.Tools[0].TurnID != "turn-7" {
		t.Errorf("turn from entry: %+v %v", ev.Tools, err)
	}
	// Plain text without an exit code: unknown, IsError unset; the preview
	// is the output without Codex's "Wall time: …\nOutput:" header.
	lines = testdataLines(t, "codex/namespaced_mcp_call.jsonl")
	if x := onlyTool(t, codexEv(t, lines...)[2]); x.Status != cortex.CallUnknown || x.IsError != nil || x.ExitCode != nil || !strings.HasPrefix(x.OutputPreview, `[{"type":"text"`) {
		t.Errorf("plain output %+v", x)
	}
	// Arguments that are not JSON stay a JSON string; long ones are cut.
	for _, tc := range []struct{ args, want string }{
		{"not json \u0007", `"not json \u0007"`},
		{`{"a": [1, 2]}`, `{"a":[1,2]}`},
		{`"quoted"`, `"quoted"`},
		// fastjson's validator accepts this (a raw control byte in a
		// string after an escaped backslash; found by FuzzCodexParse in
		// CI): it is not JSON, so it stays a JSON string.
		{"[\"\\\\\x15\\\\-\"]", `"[\"\\\\\u0015\\\\-\"]"`},
	} {
		rec := map[string]any{"type": "response_item", "payload": map[string]any{"type": "function_call", "name": "x", "arguments": tc.args, "call_id": "c"}}
		if x := onlyTool(t, codexEv(t, encode(t, rec))[0]); x.ArgumentsJSON != tc.want {
			t.Errorf("arguments %q → %q, want %q", tc.args, x.ArgumentsJSON, tc.want)
		}
	}
	rec = map[string]any{"type": "response_item", "payload": map[string]any{"type": "function_call", "name": "x", "call_id": "c",
		"arguments": encode(t, map[string]any{"cmd": strings.Repeat("é", 3000)})}}
	if x := onlyTool(t, codexEv(t, encode(t, rec))[0]); len(x.ArgumentsJSON) > MaxEventArgs || len(x.ArgumentsJSON) < MaxEventArgs-1 ||
		!utf8.ValidString(x.ArgumentsJSON) || x.Meta["arguments_truncated"] != "true" {
		t.Errorf("long arguments: %d bytes, meta %v", len(x.ArgumentsJSON), x.Meta)
	}
}

func TestCodexCustomToolAndPatchEvents(t *testing.T) {
	lines := testdataLines(t, "codex/custom_tool_call.jsonl")
	rs := codexEv(t, lines...)
	pl := at(t, obj(t, lines[0]), "payload").(map[string]any)
	call := onlyTool(t, rs[0])
	var input string
	if err := json.Unmarshal([]byte(call.ArgumentsJSON), &input); err != nil && call.Meta["arguments_truncated"] == "" {
		t.Fatalf("arguments %q: %v", call.ArgumentsJSON, err)
	}
	if call.ToolName != "apply_patch" || call.Meta["item_type"] != "custom_tool_call" || (input != pl["input"] && !strings.HasPrefix(call.ArgumentsJSON, `"*** Begin Patch\n`)) {
		t.Errorf("custom_tool_call %+v", call)
	}
	patch := at(t, obj(t, lines[1]), "payload").(map[string]any)
	x := onlyTool(t, rs[1])
	if x.EventKind != cortex.ToolCodexPatchApply || x.CallID != call.CallID || x.Status != cortex.CallSuccess || *x.IsError ||
		x.OutputPreview != patch["stdout"] || x.TurnID != patch["turn_id"] {
		t.Errorf("patch_apply_end %+v", x)
	}
	if x := onlyTool(t, rs[2]); x.Meta["item_type"] != "custom_tool_call_output" || x.Status != cortex.CallSuccess || *x.ExitCode != 0 {
		t.Errorf("custom_tool_call_output %+v", x)
	}
	// Derived: a failed patch.
	failed := obj(t, lines[1])
	failed["payload"].(map[string]any)["success"] = false
	failed["payload"].(map[string]any)["stderr"] = "patch rejected"
	if x := onlyTool(t, codexEv(t, encode(t, failed))[0]); x.Status != cortex.CallError || !*x.IsError || x.ErrorText != "patch rejected" {
		t.Errorf("failed patch %+v", x)
	}
}

func TestCodexMCPEvents(t *testing.T) {
	// 0.142: an MCP call written as {"name":"js","namespace":"mcp__node_repl"},
	// its mcp_tool_call_end (Ok) and its function_call_output.
	lines := testdataLines(t, "codex/namespaced_mcp_call.jsonl")
	rs := codexEv(t, lines...)
	call := onlyTool(t, rs[0])
	if call.ToolName != "mcp__node_repl__js" || call.MCPServer != "node_repl" || call.MCPTool != "js" || rs[0].Entry.ToolName != "mcp__node_repl__js" {
		t.Errorf("namespaced call %+v (entry tool %q)", call, rs[0].Entry.ToolName)
	}
	if rs[2].Entry.ToolName != "mcp__node_repl__js" || !strings.HasPrefix(rs[2].Entry.Text, "[mcp__node_repl__js result]") {
		t.Errorf("output entry names %q", rs[2].Entry.ToolName)
	}
	pl := at(t, obj(t, lines[1]), "payload").(map[string]any)
	end := onlyTool(t, rs[1])
	content := at(t, pl, "result", "Ok", "content", 0, "text").(string)
	if end.EventKind != cortex.ToolCodexMCPEnd || end.CallID != call.CallID || end.ToolName != "mcp__node_repl__js" || end.MCPServer != "node_repl" ||
		end.MCPTool != "js" || end.HasCall || !end.HasResult || end.Status != cortex.CallSuccess || *end.IsError ||
		end.OutputPreview != cortex.CutUTF8(content, MaxEventOutput) || end.Meta["duration_ms"] == "" ||
		!argumentsMatch(t, end, at(t, pl, "invocation", "arguments")) {
		t.Errorf("mcp_tool_call_end %+v", end)
	}
	// Ok with isError true (real), Ok success (real), Err (labelled).
	for _, tc := range []struct {
		name   string
		lines  []string
		status string
	}{
		{"Ok isError", testdataLines(t, "codex/mcp_tool_call_end_error.jsonl"), cortex.CallError},
		{"Ok", testdataLines(t, "codex/mcp_tool_call_end_ok.jsonl"), cortex.CallSuccess},
	} {
		x := onlyTool(t, codexEv(t, tc.lines...)[0])
		if x.Status != tc.status || *x.IsError != (tc.status == cortex.CallError) || x.MCPServer == "" || x.MCPTool == "" {
			t.Errorf("%s: %+v", tc.name, x)
		}
	}
	data := readLabelled(t, "codex/mcp-timeouts/rollout-2026-10-14T19-00-00-019a0000-aaaa-7bbb-8ccc-000000000006.jsonl")
	var calls, errs int
	for _, r := range stored(parseJSONL(t, NewCodexParser(FileContext{SessionID: "s"}, CodexState{}), data)) {
		checkReextract(t, r.Entry.Kind, r)
		for _, x := range r.Events.Tools {
			switch x.EventKind {
			case cortex.ToolCodexCall:
				calls++
				if x.MCPServer != "labby" || x.MCPTool != "search" || x.TurnID != "turn-1" {
					t.Errorf("labelled call %+v", x)
				}
			case cortex.ToolCodexMCPEnd:
				errs++
				if x.Status != cortex.CallError || !*x.IsError || !strings.Contains(x.ErrorText, "time") && !strings.Contains(x.ErrorText, "rate limit") ||
					x.TurnID != "turn-1" {
					t.Errorf("labelled Err %+v", x)
				}
			case cortex.ToolCodexOutput:
				if x.Status != cortex.CallUnknown || x.IsError != nil {
					t.Errorf("labelled output %+v", x)
				}
			}
		}
	}
	if calls != 3 || errs != 3 {
		t.Errorf("labelled mcp-timeouts: %d calls, %d Err results", calls, errs)
	}
}

// readLabelled reads a labelled-corpus file.
func readLabelled(t *testing.T, rel string) []byte {
	t.Helper()
	var data []byte
	for _, pf := range parseLabelled(t) {
		if pf.Rel == rel {
			data = pf.data
		}
	}
	if data == nil {
		t.Fatalf("labelled file %s not found", rel)
	}
	return data
}

func TestGeminiToolEvents(t *testing.T) {
	data := readTestdata(t, "gemini/legacy_chat.json")
	var doc struct {
		Messages []struct {
			ToolCalls []map[string]any `json:"toolCalls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	calls := map[string]map[string]any{}
	for _, m := range doc.Messages {
		for _, tc := range m.ToolCalls {
			calls[tc["id"].(string)] = tc
		}
	}
	rs, err := ParseGemini(FileContext{SessionID: "s"}, data)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]int{}
	for _, r := range stored(rs) {
		checkReextract(t, r.Entry.Kind, r)
		checkEvents(t, r.Entry.Kind, r.Events)
		if r.Entry.Kind != "gemini:tool_result" {
			if len(r.Events.Skills)+len(r.Events.Tools)+len(r.Events.Hooks) != 0 {
				t.Errorf("%s: message entry with events %+v", r.Entry.Kind, r.Events)
			}
			continue
		}
		x := onlyTool(t, r)
		tc := calls[x.CallID]
		if tc == nil || x.ToolName != tc["name"] || !x.HasCall || !x.HasResult || x.EventKind != cortex.ToolGeminiToolCall ||
			!reflect.DeepEqual(toolInput(t, x.ArgumentsJSON), tc["args"]) {
			t.Errorf("event %+v for call %v", x, tc)
			continue
		}
		statuses[x.Status]++
		want := map[string]string{"success": cortex.CallSuccess, "error": cortex.CallError, "cancelled": cortex.CallCancelled}[tc["status"].(string)]
		if x.Status != want || (x.IsError != nil) == (want == cortex.CallCancelled) || x.IsError != nil && *x.IsError != (want == cortex.CallError) {
			t.Errorf("status %q / IsError %v for %q", x.Status, x.IsError, tc["status"])
		}
		if (x.ErrorText != "") != (want == cortex.CallError) {
			t.Errorf("%s: error text %q", x.Status, x.ErrorText)
		}
	}
	if statuses[cortex.CallSuccess] != 1 || statuses[cortex.CallError] != 1 || statuses[cortex.CallCancelled] != 1 {
		t.Errorf("statuses %v", statuses)
	}
}

func TestExtractEventsInput(t *testing.T) {
	for _, tc := range []struct {
		tool cortex.Tool
		raw  string
	}{
		{cortex.ToolClaude, `{"type":`},
		{cortex.ToolCodex, `[1,2]`},
		{cortex.ToolGemini, `"x"`},
		{"cursor", `{}`},
	} {
		if _, err := ExtractEvents(tc.tool, &cortex.Entry{}, []byte(tc.raw)); err == nil {
			t.Errorf("%s %s: no error", tc.tool, tc.raw)
		}
	}
	ev, err := ExtractEvents(cortex.ToolClaude, nil, []byte(testdataLines(t, "claude/bash_error.jsonl")[0]))
	if err != nil || len(ev.Tools) != 1 {
		t.Errorf("nil entry: %+v %v", ev, err)
	}
}

func TestJSONText(t *testing.T) {
	const raw = `{"a\/b":"caf\u00e9 \"q\" \\ \/ \u0007 \ud83d\ude00","n":[1.50,-2e3,true,false,null],"o":{}}`
	want := "{\"a/b\":\"café \\\"q\\\" \\\\ / \\u0007 😀\",\"n\":[1.50,-2e3,true,false,null],\"o\":{}}"
	fresh := fastjson.MustParse(raw)
	if got, cut := jsonText(fresh, 1<<20); got != want || cut {
		t.Errorf("jsonText = %s (cut %v), want %s", got, cut, want)
	}
	// Reading the strings first (as the parsers do) changes nothing —
	// unlike fastjson's MarshalTo.
	read := fastjson.MustParse(raw)
	_ = str(read, "a/b")
	if got, _ := jsonText(read, 1<<20); got != want {
		t.Errorf("after reads: %s", got)
	}
	// Invalid UTF-8 becomes U+FFFD and the output stays valid JSON.
	bad := fastjson.MustParse("{\"k\":\"a\xffb\"}")
	if got, _ := jsonText(bad, 1<<20); got != `{"k":"a`+"\uFFFD"+`b"}` || !json.Valid([]byte(got)) {
		t.Errorf("invalid UTF-8: %q", got)
	}
	// An unbounded rendering is whole.
	if got, cut := jsonText(fresh, math.MaxInt); got != want || cut {
		t.Errorf("unbounded: %s (cut %v)", got, cut)
	}
	// Bounded on a rune boundary.
	long := fastjson.MustParse(`{"k":"` + strings.Repeat("€", 100) + `"}`)
	if got, cut := jsonText(long, 50); !cut || len(got) > 50 || !utf8.ValidString(got) {
		t.Errorf("bounded: %q cut %v", got, cut)
	}
}

func TestGeminiToolRawIsFaithful(t *testing.T) {
	// Derived: a call whose arguments hold an ANSI escape, an escaped
	// non-ASCII letter and an escaped slash. The parser reads the
	// arguments for the entry text; the stored raw call must still be the
	// call as written (fastjson re-quotes strings it has read Go-style,
	// "\x1b", which is not JSON), so that re-extraction agrees.
	doc := `{"sessionId":"s","messages":[{"id":"m","type":"gemini","timestamp":"2026-01-01T00:00:00Z","content":"",` +
		`"toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"printf '\u001b[0m' caf\u00e9 a\/b"},"status":"success",` +
		`"result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"\u001b[0mok"}}}]}]}]}`
	rs, err := ParseGemini(FileContext{}, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range stored(rs) {
		checkReextract(t, r.Entry.Kind, r)
		if r.Entry.Kind != "gemini:tool_result" {
			continue
		}
		n++
		if !json.Valid(r.Raw) || !strings.Contains(string(r.Raw), `\u001b[0m`) {
			t.Errorf("raw call %s", r.Raw)
		}
		x := onlyTool(t, r)
		if x.ArgumentsJSON != `{"command":"printf '\u001b[0m' café a/b"}` || x.OutputPreview != "\x1b[0mok" {
			t.Errorf("event %+v", x)
		}
	}
	if n != 1 {
		t.Errorf("%d tool results", n)
	}
}

func TestExitLineMatchesRegexp(t *testing.T) {
	for _, prefix := range []string{"Process exited with code ", "Exit code: "} {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(prefix) + `(-?\d+)`)
		for _, in := range []string{
			"", prefix, prefix + "0", prefix + "-1\n", "x" + prefix + "1", "a\n" + prefix + "2\nb",
			prefix + "x\n" + prefix + "3", prefix + "-\n" + prefix + "4", "\r\n" + prefix + "5", "a\r" + prefix + "6",
			prefix + "99999999999999999999", prefix + "12abc", prefix[:len(prefix)-1] + "\n" + prefix + "7", "\n\n" + prefix + "8",
		} {
			n, found, ok := exitLine([]byte(in), prefix)
			m := re.FindStringSubmatch(in)
			if found != (m != nil) {
				t.Errorf("%q: found %v, regexp %v", in, found, m)
				continue
			}
			if m != nil {
				want, err := strconv.Atoi(m[1])
				if ok != (err == nil) || ok && n != want {
					t.Errorf("%q: %d %v, regexp %q", in, n, ok, m[1])
				}
			}
		}
	}
	// An exit code that does not fit falls through to the next format.
	out := fastjson.MustParse(`"Process exited with code 99999999999999999999\nExit code: 3"`)
	if o := CodexOutput(out); o.ExitCode == nil || *o.ExitCode != 3 || !o.Failed {
		t.Errorf("overflow fallback: %+v", o)
	}
}

// argumentsMatch compares an event's ArgumentsJSON with the record's
// arguments: equal when complete, a prefix of their JSON when truncated.
func argumentsMatch(t *testing.T, ev cortex.ToolEvent, want any) bool {
	t.Helper()
	if ev.Meta["arguments_truncated"] != "true" {
		return reflect.DeepEqual(toolInput(t, ev.ArgumentsJSON), want)
	}
	return len(ev.ArgumentsJSON) <= MaxEventArgs && len(ev.ArgumentsJSON) >= MaxEventArgs-4
}

// TestNoMCPWithoutServer: a tool whose name has the MCP prefix but no
// server (mcp____, a server named "__") is not an MCP call, for Claude's
// tool_use and mcp_tool_use and Codex's mcp_tool_call_end alike.
func TestNoMCPWithoutServer(t *testing.T) {
	for _, tc := range []struct {
		tool cortex.Tool
		line string
		name string
	}{
		{cortex.ToolClaude, `{"type":"assistant","uuid":"u","message":{"content":[{"type":"tool_use","id":"t","name":"mcp____","input":{}}]}}`, "mcp____"},
		{cortex.ToolClaude, `{"type":"assistant","uuid":"u","message":{"content":[{"type":"mcp_tool_use","id":"t","name":"x","server_name":"__","input":{}}]}}`, "x"},
		{cortex.ToolClaude, `{"type":"assistant","uuid":"u","message":{"content":[{"type":"mcp_tool_use","id":"t","name":"x","server_name":"","input":{}}]}}`, "x"},
		{cortex.ToolClaude, `{"type":"assistant","uuid":"u","message":{"content":[{"type":"mcp_tool_use","id":"t","name":"q","server_name":"srv","input":{}}]}}`, "mcp__srv__q"},
		{cortex.ToolCodex, `{"type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c","invocation":{"server":"a__b","tool":"t"}}}`, "t"},
	} {
		var p RecordParser = NewClaudeParser(FileContext{SessionID: "s"})
		if tc.tool == cortex.ToolCodex {
			p = NewCodexParser(FileContext{SessionID: "s"}, CodexState{})
		}
		for _, r := range ParseLine(p, []byte(tc.line), 1, true) {
			for _, x := range r.Events.Tools {
				_, _, mcp := SplitMCPName(x.ToolName)
				if x.ToolName != tc.name || (x.MCPServer != "") != mcp {
					t.Errorf("%s: tool %q server %q, want name %q", tc.line, x.ToolName, x.MCPServer, tc.name)
				}
			}
		}
	}
}
