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

func TestServerSettings(t *testing.T) {
	cfg, err := load(t, `
[server]
read_token = "0123456789abcdef-read"
admin_token = "0123456789abcdef-admin"
allowed_hosts = ["cortex.internal"]
tls_cert = "~/cert.pem"
tls_key = "~/key.pem"
`, map[string]string{"CORTEX_ALLOWED_HOSTS": "a.lan,b.lan"})
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Server
	if s.MaxConnections != DefaultMaxConnections || strings.Join(s.AllowedHosts, ",") != "a.lan,b.lan" ||
		!strings.HasSuffix(s.TLSCert, "/cert.pem") || strings.HasPrefix(s.TLSKey, "~") {
		t.Fatalf("server config %+v", s)
	}
	for body, want := range map[string]string{
		"[server]\nread_token = \"short\"\n":       "read_token (CORTEX_READ_TOKEN) is 5 characters; use at least 16",
		"[server]\nadmin_token = \"0123456789\"\n": "admin_token (CORTEX_ADMIN_TOKEN) is 10 characters",
		"[server]\ntls_cert = \"c.pem\"\n":         "tls_cert and tls_key must be set together",
		"[server]\nmax_connections = -1\n":         "max_connections must be positive",
		"[server]\nread_token = \"same-token-0123456789\"\nadmin_token = \"same-token-0123456789\"\n": "must differ",
	} {
		_, err := load(t, body, nil)
		if cortex.ErrorCode(err) != cortex.CodeInvalid || !strings.Contains(cortex.ErrorMessage(err), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
	if _, err := load(t, "", map[string]string{"CORTEX_READ_TOKEN": "abc"}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("short token from the environment: %v", err)
	}
}
