package transcript

import (
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

// users returns the user events of all results.
func users(rs []Result) []cortex.UserEvent {
	var out []cortex.UserEvent
	for _, r := range rs {
		out = append(out, r.Events.Users...)
	}
	return out
}

func TestClaudeUserEvents(t *testing.T) {
	type want struct {
		kind, text, callID, source string
		meta                       map[string]string
	}
	cases := []struct {
		file string
		want []want
	}{
		// A typed prompt of a version that marks it (promptSource).
		{"claude/typed_prompt.jsonl", []want{{kind: cortex.UserPrompt, source: "typed",
			text: "lets pick back up and start thinking about what level 2 should look like..use entire checkpoints to learn about the repo and you can learn about entire cli here : Documents/work/cli"}}},
		// The IDE's selection in front of the prompt is not the user's words.
		{"claude/ide_selection_prompt.jsonl", []want{{kind: cortex.UserPrompt,
			text: "How can I make this possible to install as a library with `uv` so I can run from any directory?"}}},
		// A rejection with the user's reason ("…the user said:").
		{"claude/rejection_said.jsonl", []want{{kind: cortex.UserRejection, callID: "toolu_01FwZv79ztE4K77Ht6TmB1hc",
			text: "or something descriptive? but yeah let's not worry too much about it as long as it doesn't add confusion"}}},
		// A plan rejected with a reason (the older wording).
		{"claude/rejection_reason.jsonl", []want{{kind: cortex.UserRejection, callID: "toolu_016a9zCVnUoTuPMb6A8eqHmE",
			text: "Let's keep the name of the py file but change the pyproject script to reference it, otherwise gtg"}}},
		// AskUserQuestion answered in words: a clarification, not a refusal.
		{"claude/clarify.jsonl", []want{{kind: cortex.UserClarify, callID: "toolu_014CEUK1Qqx6fXVoSKeyDJe1"}}},
		{"claude/interrupt_tool_use.jsonl", []want{{kind: cortex.UserInterrupt, meta: map[string]string{"for_tool_use": "true"}}}},
		{"claude/interrupt.jsonl", []want{{kind: cortex.UserInterrupt}}},
		// Queued while the agent worked: typed; a background task notice is not.
		{"claude/queued_command.jsonl", nil},
		{"claude/queued_task_notification.jsonl", nil},
		{"claude/slash_plugin_command.jsonl", []want{{kind: cortex.UserCommand, text: "entire:commit-push-pr",
			meta: map[string]string{"command": "entire:commit-push-pr"}}}},
		// Injected context is never the user's voice.
		{"claude/skill_body_plugin.jsonl", nil},
		{"claude/bash_error.jsonl", nil},
	}
	for _, c := range cases {
		got := users(claudeEv(t, testdataLines(t, c.file)...))
		if c.file == "claude/queued_command.jsonl" {
			// The excerpt is a typed queued prompt.
			if len(got) != 1 || got[0].Kind != cortex.UserPrompt || got[0].Source != "queued" || got[0].Text == "" {
				t.Errorf("%s: %+v", c.file, got)
			}
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %d user events %+v, want %d", c.file, len(got), got, len(c.want))
			continue
		}
		for i, w := range c.want {
			g := got[i]
			if g.Kind != w.kind || g.Text != w.text || g.CallID != w.callID || g.Source != w.source {
				t.Errorf("%s: event %d = %+v, want %+v", c.file, i, g, w)
			}
			for k, v := range w.meta {
				if g.Meta[k] != v {
					t.Errorf("%s: meta %s = %q, want %q", c.file, k, g.Meta[k], v)
				}
			}
		}
	}
}

func TestQueuedNoticeIsContext(t *testing.T) {
	r := claudeEv(t, testdataLines(t, "claude/queued_task_notification.jsonl")...)[0]
	if r.Entry.Role == cortex.RoleUser {
		t.Errorf("a background task notice is stored as typed text (role %s)", r.Entry.Role)
	}
}

func TestCodexUserEvents(t *testing.T) {
	// The typed request after Codex Desktop's list of attached files.
	got := users(codexEv(t, testdataLines(t, "codex/prompt_with_files.jsonl")...))
	if len(got) != 1 || got[0].Kind != cortex.UserPrompt || got[0].Text != "add this image to the very top of the readme" {
		t.Errorf("prompt with files: %+v", got)
	}
	got = users(codexEv(t, testdataLines(t, "codex/turn_aborted_event.jsonl")...))
	if len(got) != 1 || got[0].Kind != cortex.UserInterrupt || got[0].Meta["reason"] != "interrupted" {
		t.Errorf("turn aborted: %+v", got)
	}
	// The response_item twin of an abort is the harness telling the model:
	// one abort is one interrupt.
	if got := users(codexEv(t, testdataLines(t, "codex/turn_aborted.jsonl")...)); len(got) != 0 {
		t.Errorf("turn_aborted message counted as a second interrupt: %+v", got)
	}
	// Injected AGENTS.md is not the user's voice.
	if got := users(codexEv(t, testdataLines(t, "codex/agents_md.jsonl")...)); len(got) != 0 {
		t.Errorf("AGENTS.md as a prompt: %+v", got)
	}
	// A denied approval (output shape of codex-rs: "exec command rejected
	// by user"; no real sample in the corpus, synthetic).
	call := `{"timestamp":"2026-06-25T13:11:36.646Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"rm -rf build\"}","call_id":"call_x"}}`
	out := `{"timestamp":"2026-06-25T13:11:38.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_x","output":"exec command rejected by user"}}`
	got = users(codexEv(t, call, out))
	if len(got) != 1 || got[0].Kind != cortex.UserRejection || got[0].CallID != "call_x" {
		t.Errorf("denied approval: %+v", got)
	}
}

func TestGeminiUserEvents(t *testing.T) {
	data := readLabelledOrCorpus(t, "gemini/M-Gemini/chat_logs/session-2025-12-24T21-37-2ccb51c5.json")
	rs, err := ParseGemini(FileContext{SessionID: "s"}, data)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, r := range stored(rs) {
		checkEvents(t, r.Entry.Kind, r.Events)
		for _, u := range r.Events.Users {
			counts[u.Kind]++
			if u.Kind == cortex.UserRejection && (u.CallID == "" || r.Entry.Kind != "gemini:tool_result") {
				t.Errorf("rejection %+v from %s", u, r.Entry.Kind)
			}
		}
	}
	// The session: 13 typed messages, one "Request cancelled.", one
	// declined (cancelled) tool call.
	if counts[cortex.UserPrompt] != 13 || counts[cortex.UserInterrupt] != 1 || counts[cortex.UserRejection] != 1 {
		t.Errorf("gemini user events %v", counts)
	}
}

// readLabelledOrCorpus reads a file of the real corpus (skipping when the
// corpus is absent).
func readLabelledOrCorpus(t *testing.T, rel string) []byte {
	t.Helper()
	return readCorpusFile(t, rel)
}

func TestSkillFromPath(t *testing.T) {
	cases := []struct{ path, name, plugin string }{
		// Real paths from the corpus.
		{"/Users/alisha/Projects/agent-plugins/plugins/entire/skills/search", "entire:search", "entire"},
		{"/Users/alisha/.claude/plugins/cache/entire-internal/entire-internal/1.4.1/skills/github-pr-review", "entire-internal:github-pr-review", "entire-internal"},
		{"/Users/alisha/.claude/plugins/cache/claude-plugins-official/skill-creator/1553c1f81c40/skills/skill-creator", "skill-creator:skill-creator", "skill-creator"},
		{"/home/entity/.codex/plugins/cache/compound-engineering-plugin/compound-engineering/3.13.1/skills/ce-work/SKILL.md", "compound-engineering:ce-work", "compound-engineering"},
		{"/Users/alisha/.codex/plugins/cache/skills/entire/0.1.0/skills/collab/SKILL.md", "entire:collab", "entire"},
		{"/home/entity/.codex/plugins/cache/openai-curated/github/015c0dff/skills/github/SKILL.md", "github:github", "github"},
		{"/Users/alisha/Projects/marvin/plugin/skills/marvin", "marvin", ""},
		{"/private/tmp/claude-501/bundled-skills/2.1.179/40ea5be0c1d0b5fb946a127cc31da4ae/run", "run", ""},
		{"/home/entity/.agents/skills/coordinator/SKILL.md", "coordinator", ""},
		{"/Users/alisha/.codex/superpowers/skills/writing-skills/SKILL.md", "writing-skills", ""},
		{`C:\Users\me\.claude\skills\lint\SKILL.md`, "lint", ""},
	}
	for _, c := range cases {
		n, p, ok := SkillFromPath(c.path)
		if !ok || n != c.name || p != c.plugin {
			t.Errorf("SkillFromPath(%q) = %q %q %v, want %q %q", c.path, n, p, ok, c.name, c.plugin)
		}
	}
}

func TestSkillRead(t *testing.T) {
	cases := []struct{ cmd, name string }{
		// Real Codex commands that load an installed skill.
		{"sed -n '1,240p' /home/entity/.agents/skills/coordinator/SKILL.md", "coordinator"},
		{"sed -n '241,520p' /home/entity/.codex/plugins/cache/compound-engineering-plugin/compound-engineering/3.13.1/skills/ce-work/SKILL.md", "compound-engineering:ce-work"},
		{"sed -n '1,220p' /Users/goose-guest/.codex/skills/using-entire/SKILL.md", "using-entire"},
		{"sed -n '1,240p' /Users/goose-guest/Documents/work/planetfall-seed-signalkit/.codex/skills/trail/SKILL.md", "trail"},
		{"cat ~/.claude/skills/lint/SKILL.md | head -50", "lint"},
		// Real commands that do not load a skill: a repository that
		// develops skills, browsing a skills checkout, git, find.
		{"sed -n '1,240p' plugins/entire/skills/search/SKILL.md", ""},
		{"sed -n '1,180p' /Users/goose-guest/Documents/work/skills/skills/search/SKILL.md", ""},
		{"git diff -- plugins/entire/skills/search/SKILL.md", ""},
		{"git add plugins/entire/skills/search/SKILL.md", ""},
		{"find /Users/goose-guest/Documents/work/skills -maxdepth 4 -name 'SKILL.md' -print | sort", ""},
		{"cat ~/.codex/skills/a/SKILL.md ~/.codex/skills/b/SKILL.md", ""},
		{"sed -i 's/x/y/' ~/.codex/skills/a/SKILL.md", ""},
	}
	for _, c := range cases {
		n, _, _, ok := SkillRead(c.cmd)
		if ok != (c.name != "") || n != c.name {
			t.Errorf("SkillRead(%q) = %q %v, want %q", c.cmd, n, ok, c.name)
		}
	}
	// Through the Codex parser, with the real records.
	for _, c := range []struct{ file, name string }{
		{"codex/skill_read.jsonl", "coordinator"},
		{"codex/skill_read_plugin_cache.jsonl", "compound-engineering:ce-work"},
	} {
		rs := codexEv(t, testdataLines(t, c.file)...)
		var got []string
		for _, r := range rs {
			for _, s := range r.Events.Skills {
				if s.EventKind == cortex.SkillCodexRead {
					got = append(got, s.SkillName)
				}
			}
		}
		if strings.Join(got, ",") != c.name {
			t.Errorf("%s: skill reads %v, want %s", c.file, got, c.name)
		}
	}
}

func TestAnnounced(t *testing.T) {
	cases := []struct {
		text string
		want string
	}{
		{"Using `agentv-dev` because this is about eval contract behavior.", "agentv-dev"},
		{"Using `using-superpowers` and `writing-skills` for this edit. I’m opening the skill guidance", "using-superpowers,writing-skills"},
		{"Using `entire:code-tour` to gather repo structure", "entire:code-tour"},
		{"I'm using the `worktree` skill to branch.", "worktree"},
		{"Using `getByRole(..., { name })`\n- `name` is the accessible name", ""},
		{"I will check `entire:search` next. Using `x` later.", ""},
		{"The plan: Using `npm run build` first", ""},
	}
	for _, c := range cases {
		if got := strings.Join(Announced(c.text), ","); got != c.want {
			t.Errorf("Announced(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	// The event_msg and response_item twins are one stored message: one
	// announcement per skill.
	rs := codexEv(t, testdataLines(t, "codex/skill_announced.jsonl")...)
	var got []string
	for _, r := range rs {
		for _, s := range r.Events.Skills {
			if s.EventKind == cortex.SkillCodexAnnounced {
				got = append(got, s.SkillName)
			}
		}
	}
	if strings.Join(got, ",") != "using-superpowers,writing-skills" {
		t.Errorf("announced skills %v", got)
	}
}
