package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

// fakeProgram writes an executable shell script named name into a
// temporary folder: it records its arguments and standard input next to
// itself, then runs body.
func fakeProgram(t *testing.T, name, body string) (string, string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell-script fakes need a Unix shell")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + filepath.Join(dir, "args") + "\ncat > " + filepath.Join(dir, "stdin") + "\n" + body + "\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p, dir
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestClaudeProvider(t *testing.T) {
	prog, dir := fakeProgram(t, "claude", `echo "--- a/SKILL.md"; echo "answer from claude"`)
	p, err := NewClaude(ProgramConfig{Program: prog, Model: "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	var stream strings.Builder
	out, err := p.Run(context.Background(), "the prompt\nwith lines", &stream)
	if err != nil || out != "--- a/SKILL.md\nanswer from claude\n" || stream.String() != out {
		t.Fatalf("run: %q %v (stream %q)", out, err, stream.String())
	}
	args := readFile(t, filepath.Join(dir, "args"))
	for _, want := range []string{"-p\n", "--output-format\ntext\n", "--permission-mode\nplan\n", "--max-turns\n1\n",
		"--strict-mcp-config\n", "--model\nclaude-sonnet-4-5\n"} {
		if !strings.Contains(args, want) {
			t.Errorf("claude args lack %q:\n%s", want, args)
		}
	}
	if got := readFile(t, filepath.Join(dir, "stdin")); got != "the prompt\nwith lines" {
		t.Errorf("prompt on stdin = %q", got)
	}
	if p.Name() != "claude" || p.Program() != prog || p.Model() != "claude-sonnet-4-5" {
		t.Errorf("audit names: %s %s %s", p.Name(), p.Program(), p.Model())
	}
}

func TestCodexProviderReadsTheLastMessage(t *testing.T) {
	// codex exec streams progress and prints the final message; with
	// --output-last-message it writes that message to the file.
	prog, dir := fakeProgram(t, "codex", `echo "progress noise"
while [ "$#" -gt 0 ]; do
  if [ "$1" = "--output-last-message" ]; then printf 'the final message\n' > "$2"; fi
  shift
done`)
	p, err := NewCodex(ProgramConfig{Program: prog})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Run(context.Background(), "prompt", nil)
	if err != nil || out != "the final message\n" {
		t.Fatalf("run: %q %v", out, err)
	}
	args := readFile(t, filepath.Join(dir, "args"))
	for _, want := range []string{"exec\n", "--sandbox\nread-only\n", "--skip-git-repo-check\n", "--ephemeral\n"} {
		if !strings.Contains(args, want) {
			t.Errorf("codex args lack %q:\n%s", want, args)
		}
	}
	if !strings.HasSuffix(args, "\n-\n") || strings.Contains(args, "--model") {
		t.Errorf("codex reads the prompt from stdin and keeps its default model:\n%s", args)
	}
}

func TestProgramProviderFailures(t *testing.T) {
	for name, cfg := range map[string]ProgramConfig{
		"yolo":        {Args: []string{"--dangerously-skip-permissions"}},
		"bypass":      {Args: []string{"--permission-mode=bypassPermissions"}},
		"reserved":    {Args: []string{"--output-format", "json"}},
		"write":       {Args: []string{"--sandbox=workspace-write"}},
		"model":       {Model: "x; rm -rf /"},
		"model flag":  {Model: "--yolo"},
		"reserved -p": {Args: []string{"-p"}},
	} {
		if _, err := NewClaude(cfg); cortex.ErrorCode(err) != cortex.CodeInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := NewCodex(ProgramConfig{Args: []string{"--full-auto"}}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("codex --full-auto: %v", err)
	}
	p, _ := NewClaude(ProgramConfig{Program: filepath.Join(t.TempDir(), "no-such-claude")})
	if _, err := p.Run(context.Background(), "x", nil); cortex.ErrorCode(err) != cortex.CodeUnavailable || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing program: %v", err)
	}
	fail, _ := fakeProgram(t, "claude", `echo "boom: not logged in" >&2; exit 2`)
	p, _ = NewClaude(ProgramConfig{Program: fail})
	if _, err := p.Run(context.Background(), "x", nil); err == nil || !strings.Contains(err.Error(), "exit status 2") ||
		!strings.Contains(err.Error(), "not logged in") {
		t.Errorf("failing program: %v", err)
	}
	empty, _ := fakeProgram(t, "claude", `exit 0`)
	p, _ = NewClaude(ProgramConfig{Program: empty})
	if _, err := p.Run(context.Background(), "x", nil); err == nil || !strings.Contains(err.Error(), "answered nothing") {
		t.Errorf("empty answer: %v", err)
	}
	// A timeout kills the program and whatever it started.
	slow, _ := fakeProgram(t, "claude", `sleep 30 & sleep 30`)
	p, _ = NewClaude(ProgramConfig{Program: slow})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := p.Run(ctx, "x", nil); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("timeout: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the timeout took %v", d)
	}
}

func TestOpenAIProvider(t *testing.T) {
	var got chatRequest
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		auth = r.Header.Get("Authorization")
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &got); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		switch got.Model {
		case "broken":
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"model is loading"}}`)
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "empty":
			io.WriteString(w, `{"choices":[]}`)
		default:
			io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"a local answer"},"finish_reason":"stop"}]}`)
		}
	}))
	defer srv.Close()
	t.Setenv("CORTEX_TEST_LLM_KEY", "sk-local-test")
	p, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1/", Model: "qwen2.5-coder:7b", APIKeyEnv: "CORTEX_TEST_LLM_KEY", Temperature: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	var stream strings.Builder
	out, err := p.Run(context.Background(), "the prompt", &stream)
	if err != nil || out != "a local answer" || stream.String() != out {
		t.Fatalf("run: %q %v", out, err)
	}
	if got.Model != "qwen2.5-coder:7b" || len(got.Messages) != 1 || got.Messages[0].Content != "the prompt" ||
		got.Messages[0].Role != "user" || got.Stream || got.Temperature != 0.2 || auth != "Bearer sk-local-test" {
		t.Errorf("request: %+v auth %q", got, auth)
	}
	if p.Program() != srv.URL+"/v1/chat/completions" || p.Name() != "openai" {
		t.Errorf("audit names: %s %s", p.Name(), p.Program())
	}
	for model, want := range map[string]string{"broken": "HTTP 503: model is loading", "empty": "no message"} {
		q, _ := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Model: model})
		if _, err := q.Run(context.Background(), "x", nil); cortex.ErrorCode(err) != cortex.CodeUnavailable || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", model, err)
		}
	}
	q, _ := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "slow"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := q.Run(ctx, "x", nil); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("slow: %v", err)
	}
	for name, cfg := range map[string]OpenAIConfig{
		"remote":      {BaseURL: "https://api.example.com/v1", Model: "m"},
		"credentials": {BaseURL: "http://user:pw@127.0.0.1:8080/v1", Model: "m"},
		"scheme":      {BaseURL: "file:///etc/passwd", Model: "m"},
		"no model":    {BaseURL: "http://127.0.0.1:8080/v1"},
	} {
		if _, err := NewOpenAI(cfg); cortex.ErrorCode(err) != cortex.CodeInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := NewOpenAI(OpenAIConfig{BaseURL: "https://api.example.com/v1", Model: "m", AllowRemote: true}); err != nil {
		t.Errorf("allow_remote: %v", err)
	}
}

func TestProviderChoice(t *testing.T) {
	c := DefaultConfig()
	c.OpenAI.Model = "llama3"
	c.Actions = map[string]ActionConfig{ActionSkillPropose: {Provider: "openai", Model: "qwen"}, ActionSkillAssess: {Enabled: new(false)}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.ProviderFor(ActionSkillPropose) != "openai" || c.ModelFor(ActionSkillPropose) != "qwen" ||
		c.ProviderFor(ActionAbuseAssess) != "gemini" || !c.actionEnabled(ActionSkillPropose) || c.actionEnabled(ActionSkillAssess) {
		t.Errorf("choice: %s %s %s", c.ProviderFor(ActionSkillPropose), c.ModelFor(ActionSkillPropose), c.ProviderFor(ActionAbuseAssess))
	}
	for name, p := range map[string]string{"gemini": "gemini", "claude": "claude", "codex": "codex", "openai": "openai"} {
		pr, err := NewProvider(c, name, "")
		if err != nil || pr.Name() != p {
			t.Errorf("NewProvider(%s): %v", name, err)
		}
	}
	bad := DefaultConfig()
	bad.Actions = map[string]ActionConfig{ActionSkillPropose: {Provider: "gpt"}}
	if err := bad.Validate(); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("unknown action provider: %v", err)
	}
	bad = DefaultConfig()
	bad.Provider = "openai" // no model configured
	if err := bad.Validate(); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("openai without a model: %v", err)
	}
}
