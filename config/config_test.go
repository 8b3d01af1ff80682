package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/llm"
)

func load(t *testing.T, body string, env map[string]string) (*Config, error) {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(path, func(k string) (string, bool) {
		if k == "HOME" {
			return home, true
		}
		v, ok := env[k]
		return v, ok
	})
}

func TestLLMSectionKeepsDefaultsItDoesNotSet(t *testing.T) {
	cfg, err := load(t, `
[llm]
max_invocations_per_hour = 10

[llm.actions.ai_assess]
enabled = false

[llm.actions.skill_propose]
provider = "claude"
model = "claude-sonnet-4-5"

[llm.gemini]
model = "gemini-2.5-pro"
home = "~/auth"

[llm.claude]
program = "~/bin/claude"
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := llm.DefaultConfig()
	l := cfg.LLM
	if l.MaxPerHour != 10 || l.MaxPerMinute != want.MaxPerMinute || l.TimeoutSecs != want.TimeoutSecs || !l.Enabled ||
		*l.Actions["ai_assess"].Enabled || l.Actions["skill_propose"].Enabled != nil || l.ProviderFor("skill_propose") != "claude" ||
		!strings.HasSuffix(l.Claude.Program, "/bin/claude") || strings.HasPrefix(l.Claude.Program, "~") || l.Gemini.Model != "gemini-2.5-pro" || l.Gemini.Program != llm.DefaultGeminiProgram ||
		!strings.HasSuffix(l.Gemini.Home, "/auth") || strings.HasPrefix(l.Gemini.Home, "~") {
		t.Fatalf("llm config %+v", l)
	}
}

func TestLLMKillSwitchAndErrors(t *testing.T) {
	cfg, err := load(t, "[llm]\nenabled = true\n", map[string]string{"CORTEX_LLM_ENABLED": "false"})
	if err != nil || cfg.LLM.Enabled {
		t.Fatalf("env kill switch: %+v %v", cfg, err)
	}
	for body, want := range map[string]string{
		"[llm]\nmax_concurrent = 0\n":                       "max_concurrent",
		"[llm]\ntimeout = 5\n":                              "unknown setting",
		"[llm.actions.skil_assess]\nenabled = false\n":      "unknown action",
		"[llm.gemini]\nargs = [\"--yolo\"]\n":               "--yolo",
		"[llm.gemini]\nargs = [\"--approval-mode=yolo\"]\n": "yolo",
	} {
		_, err := load(t, body, nil)
		if err == nil || cortex.ErrorCode(err) != cortex.CodeInvalid || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v (want an invalid error naming %q)", body, err, want)
		}
	}
	if _, err := load(t, "", map[string]string{"CORTEX_LLM_ENABLED": "perhaps"}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Fatalf("bad env: %v", err)
	}
}
