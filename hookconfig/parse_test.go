package hookconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
)

func claudeSrc(name string) Source {
	return Source{Path: "/home/dev/.claude/" + name, Kind: KindClaudeSettings, Tool: cortex.ToolClaude, Scope: ScopeUser}
}

var (
	srcClaude = claudeSrc("settings.json")
	srcCodex  = Source{Path: "/home/dev/.codex/hooks.json", Kind: KindCodexHooks, Tool: cortex.ToolCodex, Scope: ScopeUser}
	srcToml   = Source{Path: "/home/dev/.codex/config.toml", Kind: KindCodexConfig, Tool: cortex.ToolCodex, Scope: ScopeUser}
	srcGemini = Source{Path: "/home/dev/src/app/.gemini/settings.json", Kind: KindGeminiSettings, Tool: cortex.ToolGemini,
		Scope: ScopeProject, Project: "/home/dev/src/app"}
)

// row is the part of a Hook a table test checks.
type row struct {
	event, name, command, source string
	meta                         map[string]string // only the keys listed are checked; "" means absent
}

func TestParseTable(t *testing.T) {
	long := strings.Repeat("é", 600) // 1200 bytes; 1024 falls inside a rune
	tests := []struct {
		name string
		src  Source
		data string
		rows []row
		// errHas lists substrings the error must hold; nil means no error.
		errHas []string
	}{
		{name: "empty file", src: srcClaude, data: ""},
		{name: "whitespace only", src: srcGemini, data: " \n\t\n"},
		{name: "empty object claude", src: srcClaude, data: `{}`},
		{name: "empty object codex", src: srcCodex, data: `{}`},
		{name: "empty object gemini", src: srcGemini, data: `{}`},
		{name: "empty toml", src: srcToml, data: ``},
		{name: "hooks null", src: srcClaude, data: `{"hooks":null}`},
		{name: "permissions only", src: claudeSrc("settings.local.json"),
			data: `{"permissions":{"allow":["Bash(ls:*)"]}}`},
		{
			name:   "invalid JSON",
			src:    srcClaude,
			data:   "{\n  \"hooks\": {\n    \"Stop\": [,]\n  }\n}\n",
			errHas: []string{srcClaude.Path, "invalid JSON", "line 3, column 14"},
		},
		{
			name:   "truncated JSON",
			src:    srcCodex,
			data:   "{\"hooks\": {",
			errHas: []string{srcCodex.Path, "invalid JSON", "line 1"},
		},
		{
			name:   "top level is a list",
			src:    srcClaude,
			data:   `[{"hooks":{}}]`,
			errHas: []string{srcClaude.Path, "expected a JSON object at the top level, got a list"},
		},
		{
			name:   "hooks not an object",
			src:    srcClaude,
			data:   `{"hooks":[{"matcher":"","hooks":[{"type":"command","command":"x"}]}]}`,
			errHas: []string{srcClaude.Path, `"hooks": expected an object, got a list`},
		},
		{
			name:   "hooks a string in codex",
			src:    srcCodex,
			data:   `{"hooks":"Stop"}`,
			errHas: []string{`"hooks": expected an object, got a string`},
		},
		{
			name: "event not a list",
			src:  srcClaude,
			data: `{"hooks":{"Stop":{"matcher":"","hooks":[]},"SessionEnd":[{"hooks":[{"type":"command","command":"bye"}]}]}}`,
			rows: []row{{event: "SessionEnd", name: "SessionEnd", command: "bye", source: "claude:user:settings.json",
				meta: map[string]string{"position": "0.0", "matcher": "", "type": "command"}}},
			errHas: []string{srcClaude.Path, "1 problem (1 hooks kept)", "hooks.Stop: expected a list of hook groups, got an object"},
		},
		{
			name: "null matcher",
			src:  srcCodex,
			data: `{"hooks":{"Stop":[{"matcher":null,"hooks":[{"type":"command","command":"entire hooks codex stop","timeout":30}]}]}}`,
			rows: []row{{event: "Stop", name: "Stop", command: "entire hooks codex stop", source: "codex:user:hooks.json",
				meta: map[string]string{"matcher": "", "timeout": "30", "position": "0.0"}}},
		},
		{
			name: "regex matcher",
			src:  srcCodex,
			data: `{"hooks":{"SessionStart":[{"matcher":"^(startup|resume)$","hooks":[{"type":"command","command":"s","timeoutSec":10}]}]}}`,
			rows: []row{{event: "SessionStart", name: "SessionStart:^(startup|resume)$", command: "s",
				meta: map[string]string{"matcher": "^(startup|resume)$", "timeout": "10"}}},
		},
		{
			name: "same event and matcher twice",
			src:  srcClaude,
			data: `{"hooks":{"PostToolUse":[
				{"matcher":"Bash","hooks":[{"type":"command","command":"a"},{"type":"command","command":"b"}]},
				{"matcher":"Bash","hooks":[{"type":"command","command":"a"}]}]}}`,
			rows: []row{
				{event: "PostToolUse", name: "PostToolUse:Bash", command: "a", meta: map[string]string{"position": "0.0", "matcher": "Bash"}},
				{event: "PostToolUse", name: "PostToolUse:Bash", command: "b", meta: map[string]string{"position": "0.1"}},
				{event: "PostToolUse", name: "PostToolUse:Bash", command: "a", meta: map[string]string{"position": "1.0"}},
			},
		},
		{
			name: "argv command",
			src:  srcCodex,
			data: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":["notify-send","Codex","done now"]}]}]}}`,
			rows: []row{{event: "Stop", name: "Stop", command: "notify-send Codex done now",
				meta: map[string]string{"command_argv": "true", "command_truncated": ""}}},
		},
		{
			name:   "argv with a non-string",
			src:    srcCodex,
			data:   `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":["sleep",5]}]}]}}`,
			errHas: []string{"hooks.Stop[0].hooks[0].command[1]: expected a string, got a number; hook skipped"},
		},
		{
			name: "huge command",
			src:  srcClaude,
			data: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"` + long + `"}]}]}}`,
			rows: []row{{event: "Stop", name: "Stop", command: long[:1024],
				meta: map[string]string{"command_truncated": "true", "command_bytes": "1200"}}},
		},
		{
			name: "control characters",
			src:  srcClaude,
			data: `{"hooks":{"Stop":[{"hooks":[
				{"type":"command","command":"echo \u001b[31mred"},
				{"type":"command","command":"printf 'a\tb\n'\necho multi-line"}]}]}}`,
			rows: []row{{event: "Stop", command: "printf 'a\tb\n'\necho multi-line", meta: map[string]string{"position": "0.1"}}},
			errHas: []string{"hooks.Stop[0].hooks[0].command holds control characters other than tab and newline; hook skipped",
				"(1 hooks kept)"},
		},
		{
			name:   "missing command and prompt hook",
			src:    srcClaude,
			data:   `{"hooks":{"Stop":[{"hooks":[{"type":"command"},{"type":"prompt","prompt":"is the task done?"}]}]}}`,
			rows:   []row{{event: "Stop", name: "Stop", command: "", meta: map[string]string{"type": "prompt", "position": "0.1"}}},
			errHas: []string{"hooks.Stop[0].hooks[0]: no command; hook skipped"},
		},
		{
			name: "bad group shapes",
			src:  srcClaude,
			data: `{"hooks":{"Stop":["x",{"matcher":3,"hooks":[]},{"matcher":"a"},{"hooks":{}},{"hooks":[7]}],"":[]}}`,
			errHas: []string{
				"hooks.Stop[0]: expected a hook group object, got a string",
				"hooks.Stop[1].matcher: expected a string, got a number; group skipped",
				`hooks.Stop[2]: no "hooks" list; group skipped`,
				"hooks.Stop[3].hooks: expected a list, got an object",
				"hooks.Stop[4].hooks[0]: expected a hook object, got a number",
				`hooks."": empty event name`,
				"6 problems (0 hooks kept)",
			},
		},
		{
			name: "bad metadata is left out, hook kept",
			src:  srcGemini,
			data: `{"hooks":{"BeforeTool":[{"matcher":"*","hooks":[{"type":"command","command":"c","name":7,"timeout":true}]}]}}`,
			rows: []row{{event: "BeforeTool", name: "BeforeTool:*", command: "c", meta: map[string]string{"name": "", "timeout": ""}}},
			errHas: []string{"hooks.BeforeTool[0].hooks[0].name: expected a string, got a number; left out",
				"hooks.BeforeTool[0].hooks[0].timeout: expected a number, got a boolean; left out"},
		},
		{
			name: "claude disableAllHooks",
			src:  srcClaude,
			data: `{"disableAllHooks":true,"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"}]}],"SessionStart":[{"hooks":[{"type":"command","command":"b"}]}]}}`,
			rows: []row{
				{event: "Stop", command: "a", meta: map[string]string{"enabled": "false", "disabled_by": "disableAllHooks"}},
				{event: "SessionStart", command: "b", meta: map[string]string{"enabled": "false", "disabled_by": "disableAllHooks"}},
			},
		},
		{
			name: "gemini hooks disabled",
			src:  srcGemini,
			data: `{"hooks":{"enabled":false,"SessionStart":[{"hooks":[{"name":"s","type":"command","command":"a"}]}]}}`,
			rows: []row{{event: "SessionStart", command: "a", source: "gemini:project:settings.json",
				meta: map[string]string{"name": "s", "enabled": "false", "disabled_by": "hooks.enabled"}}},
		},
		{
			name: "gemini tools.enableHooks false",
			src:  srcGemini,
			data: `{"tools":{"enableHooks":false},"hooks":{"AfterAgent":[{"hooks":[{"type":"command","command":"a"}]}]}}`,
			rows: []row{{event: "AfterAgent", command: "a", meta: map[string]string{"enabled": "false", "disabled_by": "tools.enableHooks"}}},
		},
		{
			name: "gemini named hooks and disabled list",
			src:  srcGemini,
			data: `{"hooksConfig":{"enabled":true,"disabled":["lint-check"]},"hooks":{"enabled":true,"notifications":true,
				"BeforeTool":[{"matcher":"write_file|replace","sequential":true,"hooks":[
					{"name":"lint-check","type":"command","command":"./lint.sh","timeout":5000},
					{"name":"audit","type":"command","command":"./audit.sh"}]}],
				"SessionEnd":[{"matcher":"exit","hooks":[{"name":"bye","type":"command","command":"./bye.sh"}]}]}}`,
			rows: []row{
				{event: "BeforeTool", name: "BeforeTool:write_file|replace", command: "./lint.sh",
					meta: map[string]string{"name": "lint-check", "timeout": "5000", "enabled": "false", "disabled_by": "hooksConfig.disabled"}},
				{event: "BeforeTool", name: "BeforeTool:write_file|replace", command: "./audit.sh",
					meta: map[string]string{"name": "audit", "enabled": ""}},
				{event: "SessionEnd", name: "SessionEnd:exit", command: "./bye.sh", meta: map[string]string{"name": "bye", "position": "0.0"}},
			},
		},
		{
			name: "gemini comments",
			src:  srcGemini,
			data: "{\n  // user hooks\n  \"hooks\": { /* one */ \"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo //not a comment\"}]}]}\n}\n",
			rows: []row{{event: "SessionStart", command: "echo //not a comment"}},
		},
		{
			name: "codex top-level events and flat entry",
			src:  srcCodex,
			data: `{"Stop":[{"name":"n","command":["say","done"],"timeoutSec":5}],"version":1,"PreToolUse":[{"matcher":"shell","hooks":[{"command":"x"}]}]}`,
			rows: []row{
				{event: "Stop", name: "Stop", command: "say done", source: "codex:user:hooks.json",
					meta: map[string]string{"name": "n", "position": "0.0", "timeout": "5", "command_argv": "true"}},
				{event: "PreToolUse", name: "PreToolUse:shell", command: "x", meta: map[string]string{"position": "0.0", "type": ""}},
			},
		},
		{
			name:   "flat entry outside codex",
			src:    srcClaude,
			data:   `{"hooks":{"Stop":[{"command":"x"}]}}`,
			errHas: []string{`hooks.Stop[0]: no "hooks" list; group skipped`},
		},
		{
			name: "duplicate event key: last wins",
			src:  srcClaude,
			data: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"first"}]}],"Stop":[{"hooks":[{"type":"command","command":"second"}]}]}}`,
			rows: []row{{event: "Stop", command: "second"}},
		},
		{
			name: "byte order mark",
			src:  srcClaude,
			data: "\uFEFF" + `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"}]}]}}`,
			rows: []row{{event: "Stop", command: "a"}},
		},
		{
			name: "project settings.local.json source",
			src:  Source{Path: "/p/.claude/settings.local.json", Kind: KindClaudeSettings, Scope: ScopeProject, Project: "/p"},
			data: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"}]}]}}`,
			rows: []row{{event: "Stop", command: "a", source: "claude:project:settings.local.json",
				meta: map[string]string{"config_path": "/p/.claude/settings.local.json"}}},
		},
		{
			name: "toml hooks.state strings and tables",
			src:  srcToml,
			data: `
[features]
codex_hooks = true

[hooks.state]
"/h/.codex/hooks.json:stop:0:0" = "sha256:aa"
[hooks.state."/h/.codex/hooks.json:session_start:1:2"]
enabled = false
trusted_hash = "sha256:bb"
[hooks.state.other]
hash = "sha256:cc"
`,
			rows: []row{
				{event: "hook_trust_state", name: "/h/.codex/hooks.json:session_start:1:2", source: "codex:user:config.toml[hooks.state]",
					meta: map[string]string{"enabled": "false", "position": "1.2", "hook_event_key": "session_start",
						"hook_config_path": "/h/.codex/hooks.json", "codex_hooks_feature": "true"}},
				{event: "hook_trust_state", name: "/h/.codex/hooks.json:stop:0:0",
					meta: map[string]string{"enabled": "", "position": "0.0", "codex_hooks_feature": "true"}},
				{event: "hook_trust_state", name: "other", meta: map[string]string{"position": "", "hook_event_key": ""}},
			},
		},
		{
			name: "toml bad state entries",
			src:  srcToml,
			data: "[hooks.state]\nnum = 3\n[hooks.state.t]\ntrusted_hash = 4\n[hooks.state.ok]\nenabled = true\n",
			rows: []row{{event: "hook_trust_state", name: "ok", meta: map[string]string{"enabled": "true"}}},
			errHas: []string{"hooks.state.num: expected a hash string or a table, got a number; skipped",
				"hooks.state.t.trusted_hash: expected a string, got a number; skipped"},
		},
		{
			name:   "toml syntax error",
			src:    srcToml,
			data:   "[features]\ncodex_hooks = true\n\n[hooks.state\nx = 1\n",
			errHas: []string{srcToml.Path, "invalid TOML at line 4"},
		},
		{
			name:   "toml hooks.state not a table",
			src:    srcToml,
			data:   "[hooks]\nstate = \"on\"\n",
			errHas: []string{srcToml.Path, "hooks.state: expected a table, got a string"},
		},
		{
			name: "toml without hooks",
			src:  srcToml,
			data: "model = \"o3\"\n[features]\nhooks = true\n",
		},
		{
			name:   "unknown kind",
			src:    Source{Path: "/x", Kind: "cursor_settings"},
			data:   `{}`,
			errHas: []string{`/x: unknown source kind "cursor_settings"`},
		},
		{
			name:   "tool does not match kind",
			src:    Source{Path: "/x", Kind: KindCodexHooks, Tool: cortex.ToolClaude},
			data:   `{}`,
			errHas: []string{"source kind codex_hooks is for codex, not claude"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.src, []byte(tc.data))
			checkErr(t, err, tc.errHas)
			if len(got) != len(tc.rows) {
				t.Fatalf("%d hooks, want %d: %+v", len(got), len(tc.rows), got)
			}
			for i, w := range tc.rows {
				h := got[i]
				if h.Index != i {
					t.Errorf("row %d: Index %d", i, h.Index)
				}
				if h.HookEvent.HookEvent != w.event {
					t.Errorf("row %d: event %q, want %q", i, h.HookEvent.HookEvent, w.event)
				}
				if w.name != "" && h.HookName != w.name {
					t.Errorf("row %d: name %q, want %q", i, h.HookName, w.name)
				}
				if h.Command != w.command {
					t.Errorf("row %d: command %q, want %q", i, h.Command, w.command)
				}
				if w.source != "" && h.HookSource != w.source {
					t.Errorf("row %d: source %q, want %q", i, h.HookSource, w.source)
				}
				if !utf8.ValidString(h.Command) || len(h.Command) > MaxCommandBytes {
					t.Errorf("row %d: command not bounded UTF-8 (%d bytes)", i, len(h.Command))
				}
				if h.Status != cortex.HookConfigured {
					t.Errorf("row %d: status %q", i, h.Status)
				}
				for k, v := range w.meta {
					if got, ok := h.Meta[k]; v == "" && ok {
						t.Errorf("row %d: Meta[%s] = %q, want absent", i, k, got)
					} else if v != "" && got != v {
						t.Errorf("row %d: Meta[%s] = %q, want %q", i, k, got, v)
					}
				}
			}
		})
	}
}

// checkErr asserts err is nil (errHas nil) or a *cortex.Error of code invalid
// holding every substring.
func checkErr(t *testing.T, err error, errHas []string) {
	t.Helper()
	if errHas == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want one holding %q", errHas)
	}
	var ce *cortex.Error
	if !errors.As(err, &ce) || ce.Code != cortex.CodeInvalid {
		t.Errorf("error %T %v is not a cortex invalid error", err, err)
	}
	for _, s := range errHas {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}

// TestParseManyProblems bounds the listed problems.
func TestParseManyProblems(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"hooks":{"Stop":[`)
	for i := range 15 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"hooks":[{"type":"command"}]}`)
	}
	b.WriteString(`]}}`)
	_, err := Parse(srcClaude, []byte(b.String()))
	checkErr(t, err, []string{"15 problems (0 hooks kept)", "hooks.Stop[9].hooks[0]", " | and 5 more"})
	if strings.Contains(err.Error(), "hooks.Stop[10]") {
		t.Errorf("error lists more than %d problems: %v", maxProblems, err)
	}
}

// TestParseSyntheticTestdata checks the synthetic files in testdata.
func TestParseSyntheticTestdata(t *testing.T) {
	t.Run("config-hooks-state.toml", func(t *testing.T) {
		// Parse is pure: the Path is a label (HookSource takes its base name).
		src := srcToml
		data, err := os.ReadFile(filepath.Join("testdata", "codex", "config-hooks-state.toml"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(src, data)
		if err != nil {
			t.Fatal(err)
		}
		exp := expectTOML(t, src, data)
		if len(exp) != 5 {
			t.Fatalf("independent decode found %d state keys, want 5", len(exp))
		}
		checkRows(t, src, got, exp)
		for i := 1; i < len(got); i++ {
			if got[i-1].HookName >= got[i].HookName {
				t.Errorf("trust rows not in key order: %q then %q", got[i-1].HookName, got[i].HookName)
			}
		}
	})
	t.Run("settings.local.json", func(t *testing.T) {
		src := claudeSrc("settings.local.json")
		src.Path = filepath.Join("testdata", "claude", "settings.local.json")
		data, err := os.ReadFile(src.Path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(src, data)
		if err != nil || len(got) != 0 {
			t.Fatalf("got %d hooks, err %v; want 0, nil", len(got), err)
		}
	})
	t.Run("hooks-toplevel.json", func(t *testing.T) {
		src := srcCodex
		src.Path = filepath.Join("testdata", "codex", "hooks-toplevel.json")
		data, err := os.ReadFile(src.Path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(src, data)
		if err != nil {
			t.Fatal(err)
		}
		var summary []string
		for _, h := range got {
			summary = append(summary, fmt.Sprintf("%s|%s|%s|%s|%s", h.HookName, h.Command, h.Meta["position"], h.Meta["timeout"], h.Meta["name"]))
		}
		want := []string{
			"SessionStart:^(startup|resume)$|entire hooks codex session-start|0.0|30|",
			"Stop|notify-send Codex turn finished|0.0|5|notify",
		}
		if fmt.Sprint(summary) != fmt.Sprint(want) {
			t.Errorf("got %q\nwant %q", summary, want)
		}
	})
}

func TestStripJSONComments(t *testing.T) {
	in := "{\"a\": \"x // y /* z */\", // c\n /* multi\nline */ \"b\": \"\\\"//\"}"
	out := stripJSONComments([]byte(in))
	if len(out) != len(in) || strings.Count(string(out), "\n") != strings.Count(in, "\n") {
		t.Fatalf("offsets not kept: %q", out)
	}
	want := "{\"a\": \"x // y /* z */\",     \n         \n        \"b\": \"\\\"//\"}"
	if string(out) != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
}
