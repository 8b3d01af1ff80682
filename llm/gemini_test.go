//go:build unix

package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
)

// fakeGeminiDir holds the fake gemini binary built by fakeGeminiPath; it is
// removed by TestMain.
var (
	fakeGeminiOnce sync.Once
	fakeGeminiDir  string
	fakeGeminiBin  string
	fakeGeminiErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fakeGeminiDir != "" {
		os.RemoveAll(fakeGeminiDir)
	}
	os.Exit(code)
}

// fakeGeminiPath builds ./internal/fakellm once per test binary and returns
// the path of the resulting "gemini" executable.
func fakeGeminiPath(tb testing.TB) string {
	tb.Helper()
	fakeGeminiOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			fakeGeminiErr = err
			return
		}
		if fakeGeminiDir, err = os.MkdirTemp("", "cortex-fakellm-"); err != nil {
			fakeGeminiErr = err
			return
		}
		bin := filepath.Join(fakeGeminiDir, "gemini")
		out, err := exec.Command(goBin, "build", "-o", bin, "github.com/cortexhq/cortex/internal/fakellm").CombinedOutput()
		if err != nil {
			fakeGeminiErr = errors.New(err.Error() + ": " + string(out))
			return
		}
		fakeGeminiBin = bin
	})
	if fakeGeminiErr != nil {
		tb.Fatalf("build the fake gemini: %v", fakeGeminiErr)
	}
	return fakeGeminiBin
}

// newFakeGemini returns a Gemini provider running the fake in mode, with
// a fake home (holding .gemini/oauth_creds.json) and extra arguments.
func newFakeGemini(tb testing.TB, mode string, args ...string) *Gemini {
	tb.Helper()
	home := tb.TempDir()
	writeGeminiTestFile(tb, filepath.Join(home, ".gemini", "oauth_creds.json"), `{"access_token":"fake"}`)
	g, err := NewGemini(GeminiConfig{
		Program: fakeGeminiPath(tb),
		Model:   "gemini-test-model",
		Home:    home,
		Args:    append([]string{"--fake-mode=" + mode}, args...),
	})
	if err != nil {
		tb.Fatalf("NewGemini: %v", err)
	}
	return g
}

func writeGeminiTestFile(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
}

func runFakeGemini(t *testing.T, g *Gemini, prompt string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stream bytes.Buffer
	text, err := g.Run(ctx, prompt, &stream)
	return text, stream.String(), err
}

func wantGeminiCode(t *testing.T, err error, code cortex.Code, contains string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s error containing %q", code, contains)
	}
	if got := cortex.ErrorCode(err); got != code {
		t.Errorf("code %s, want %s (%v)", got, code, err)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Errorf("error %q does not contain %q", err, contains)
	}
}

func TestGeminiNewDefaults(t *testing.T) {
	t.Parallel()
	g, err := NewGemini(GeminiConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Name() != "gemini" || g.Program() != DefaultGeminiProgram || g.Model() != DefaultGeminiModel {
		t.Errorf("defaults: %q %q %q", g.Name(), g.Program(), g.Model())
	}
}

func TestGeminiForbiddenFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  GeminiConfig
		flag string // "" = allowed
	}{
		{"yolo", GeminiConfig{Args: []string{"--yolo"}}, "--yolo"},
		{"y", GeminiConfig{Args: []string{"-y"}}, `"-y"`},
		{"approval mode yolo", GeminiConfig{Args: []string{"--approval-mode=yolo"}}, "--approval-mode=yolo"},
		{"approval mode yolo split", GeminiConfig{Args: []string{"--approval-mode", "yolo"}}, "--approval-mode yolo"},
		{"approval mode default", GeminiConfig{Args: []string{"--approval-mode", "default"}}, "--approval-mode"},
		{"auto edit", GeminiConfig{Args: []string{"--approval-mode=auto_edit"}}, "auto_edit"},
		{"full auto", GeminiConfig{Args: []string{"--full-auto"}}, "--full-auto"},
		{"codex bypass", GeminiConfig{Args: []string{"--dangerously-bypass-approvals-and-sandbox"}}, "--dangerously-bypass-approvals-and-sandbox"},
		{"claude skip", GeminiConfig{Args: []string{"--dangerously-skip-permissions"}}, "--dangerously-skip-permissions"},
		{"claude allow skip", GeminiConfig{Args: []string{"--allow-dangerously-skip-permissions"}}, "--allow-dangerously-skip-permissions"},
		{"sandbox", GeminiConfig{Args: []string{"--sandbox-mode=danger-full-access"}}, "danger-full-access"},
		{"bypass", GeminiConfig{Args: []string{"--permission-mode", "bypassPermissions"}}, "bypassPermissions"},
		{"in program", GeminiConfig{Program: "gemini --yolo"}, "--yolo"},
		{"model override", GeminiConfig{Args: []string{"--model=other"}}, "--model"},
		{"output override", GeminiConfig{Args: []string{"-o", "text"}}, `"-o"`},
		{"dash model", GeminiConfig{Model: "-y"}, "model"},
		{"fake mode", GeminiConfig{Args: []string{"--fake-mode=sleep", "--fake-pidfile=/tmp/x"}}, ""},
		{"debug", GeminiConfig{Args: []string{"--debug", "-yes-no"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewGemini(tc.cfg)
			if tc.flag == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			wantGeminiCode(t, err, cortex.CodeInvalid, tc.flag)
		})
	}
}

func TestGeminiMissingProgram(t *testing.T) {
	t.Parallel()
	g, err := NewGemini(GeminiConfig{Program: "cortex-no-such-gemini-program"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Run(context.Background(), "prompt", nil)
	wantGeminiCode(t, err, cortex.CodeUnavailable, "gemini CLI not found")
}

func TestGeminiOK(t *testing.T) {
	t.Parallel()
	prompt := "Evidence: é🙂\n" + strings.Repeat("x", 300<<10)
	text, streamed, err := runFakeGemini(t, newFakeGemini(t, "ok"), prompt)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Skill Improvement Assessment\nPrompt had " + strconv.Itoa(len(prompt)) + " bytes\n"
	if text != want || streamed != want {
		t.Errorf("text %q, streamed %q, want %q", text, streamed, want)
	}
}

func TestGeminiIsolation(t *testing.T) {
	t.Setenv("SECRET_PARENT_VAR", "parent-secret")
	t.Setenv("GEMINI_API_KEY", "test-api-key")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "")
	g := newFakeGemini(t, "args")
	src := g.cfg.Home
	writeGeminiTestFile(t, filepath.Join(src, ".gemini", "settings.json"), `{
		"security": {"auth": {"selectedType": "gemini-api-key"}},
		"mcpServers": {"evil": {"command": "evil-server"}},
		"hooks": {"BeforeTool": [{"command": "evil-hook"}]},
		"context": {"fileName": ["EVIL.md"]}
	}`)
	writeGeminiTestFile(t, filepath.Join(src, ".gemini", "GEMINI.md"), "evil context")
	writeGeminiTestFile(t, filepath.Join(src, ".gemini", "extensions", "evil", "gemini-extension.json"), "{}")
	writeGeminiTestFile(t, filepath.Join(src, ".gemini", "google_accounts.json"), `{"active":"a@b.c"}`)

	text, _, err := runFakeGemini(t, g, "the prompt")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Argv       []string          `json:"argv"`
		Env        []string          `json:"env"`
		Home       string            `json:"home"`
		Files      map[string]string `json:"files"`
		Settings   map[string]any    `json:"settings"`
		Cwd        string            `json:"cwd"`
		CwdEntries int               `json:"cwd_entries"`
		StdinBytes int               `json:"stdin_bytes"`
	}
	if err := json.Unmarshal([]byte(text), &rep); err != nil {
		t.Fatalf("report %q: %v", text, err)
	}

	argv := strings.Join(rep.Argv, " ")
	for _, want := range []string{"--approval-mode plan", "--output-format stream-json", "--extensions none",
		"--model gemini-test-model", "--fake-mode=args", "--prompt " + geminiPromptStub} {
		if !strings.Contains(argv, want) {
			t.Errorf("argv %q lacks %q", argv, want)
		}
	}
	if rep.StdinBytes != len("the prompt") {
		t.Errorf("stdin bytes %d", rep.StdinBytes)
	}

	allowed := append([]string{"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "GEMINI_CLI_TRUST_WORKSPACE"}, geminiPassEnv...)
	for _, k := range rep.Env {
		if !slices.Contains(allowed, k) {
			t.Errorf("unexpected environment variable %s passed to gemini", k)
		}
	}
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_API_KEY"} {
		if !slices.Contains(rep.Env, k) {
			t.Errorf("environment lacks %s: %v", k, rep.Env)
		}
	}

	if dir := filepath.Dir(rep.Home); filepath.Base(rep.Home) != "home" ||
		!strings.HasPrefix(filepath.Base(dir), fmt.Sprintf("%s%d-", ProviderDirPrefix, os.Getpid())) || filepath.Dir(rep.Cwd) != dir {
		t.Errorf("home %q (work %q) is not an isolated temp dir", rep.Home, rep.Cwd)
	}
	wantFiles := map[string]string{
		".gemini":                      "0700",
		".gemini/oauth_creds.json":     "0600",
		".gemini/google_accounts.json": "0600",
		".gemini/settings.json":        "0600",
		".config":                      "0700",
		".cache":                       "0700",
	}
	if !maps.Equal(rep.Files, wantFiles) {
		t.Errorf("home contents %v, want %v", rep.Files, wantFiles)
	}
	if _, err := os.Stat(rep.Home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("isolated home %s not removed: %v", rep.Home, err)
	}
	if rep.CwdEntries != 0 || rep.Cwd == "" {
		t.Errorf("working directory %q has %d entries", rep.Cwd, rep.CwdEntries)
	}
	if _, err := os.Stat(rep.Cwd); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("working directory %s not removed: %v", rep.Cwd, err)
	}

	s, _ := json.Marshal(rep.Settings)
	settings := string(s)
	for _, want := range []string{`"mcpServers":{}`, `"hooks":{}`, `"context":{"fileName":[]}`,
		`"selectedType":"gemini-api-key"`, `"extensions":{"enabled":false}`} {
		if !strings.Contains(settings, want) {
			t.Errorf("settings %s lack %s", settings, want)
		}
	}
	for _, bad := range []string{"evil", "EVIL"} {
		if strings.Contains(settings, bad) {
			t.Errorf("settings %s keep the user's %s", settings, bad)
		}
	}
}

func TestGeminiSymlinkHome(t *testing.T) {
	t.Parallel()
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "home")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	g, err := NewGemini(GeminiConfig{Program: fakeGeminiPath(t), Home: link})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = runFakeGemini(t, g, "p")
	wantGeminiCode(t, err, cortex.CodeInvalid, "symbolic link")
}

func TestGeminiFail(t *testing.T) {
	t.Parallel()
	_, _, err := runFakeGemini(t, newFakeGemini(t, "fail"), "p")
	wantGeminiCode(t, err, cortex.CodeUnavailable, "boom: token [REDACTED] leaked")
	if strings.Contains(err.Error(), "sk-ant") {
		t.Errorf("error leaks the token: %v", err)
	}
	if !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("error lacks the exit status: %v", err)
	}
}

func TestGeminiToolUse(t *testing.T) {
	t.Parallel()
	_, _, err := runFakeGemini(t, newFakeGemini(t, "tooluse"), "p")
	wantGeminiCode(t, err, cortex.CodeUnavailable, `tool "run_shell_command"`)
}

func TestGeminiBadJSON(t *testing.T) {
	t.Parallel()
	_, _, err := runFakeGemini(t, newFakeGemini(t, "badjson"), "p")
	wantGeminiCode(t, err, cortex.CodeUnavailable, `not JSON: "Loaded cached credentials."`)
}

func TestGeminiWriteFile(t *testing.T) {
	t.Parallel()
	text, streamed, err := runFakeGemini(t, newFakeGemini(t, "writefile"), "p")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Skill Improvement Assessment\n\nWritten with write_file.\n"; text != want {
		t.Errorf("text %q, want %q", text, want)
	}
	if streamed != "I wrote the assessment to plans/assessment.md.\n" {
		t.Errorf("streamed %q", streamed)
	}
}

func TestGeminiBig(t *testing.T) {
	t.Parallel()
	text, streamed, err := runFakeGemini(t, newFakeGemini(t, "big"), "p")
	if err != nil {
		t.Fatal(err)
	}
	if len(text) != 1<<20 || text != streamed || !utf8.ValidString(text) || !strings.Contains(text, "Café 🙂") {
		t.Errorf("text: %d bytes, equal to stream %v, valid %v", len(text), text == streamed, utf8.ValidString(text))
	}
}

func TestGeminiNoDrain(t *testing.T) {
	t.Parallel()
	// Larger than any pipe buffer, so the write must fail.
	_, _, err := runFakeGemini(t, newFakeGemini(t, "nodrain"), strings.Repeat("evidence ", 1<<17))
	wantGeminiCode(t, err, cortex.CodeUnavailable, "did not read the whole prompt")
}

func TestGeminiTimeout(t *testing.T) {
	t.Parallel()
	pidfile := filepath.Join(t.TempDir(), "grandchild.pid")
	g := newFakeGemini(t, "sleep", "--fake-pidfile="+pidfile)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := g.Run(ctx, "p", nil)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run took %v after a 1.5 s deadline", d)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v is not a deadline", err)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("the fake did not record its grandchild: %v", err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); geminiTestAlive(pid); {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("grandchild %d survived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestGeminiCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newFakeGemini(t, "ok").Run(ctx, "p", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v is not a cancellation", err)
	}
}

func TestGeminiTail(t *testing.T) {
	t.Parallel()
	tail := &geminiTail{max: 8}
	for _, s := range []string{"abc", "defgh", "ijé"} {
		tail.Write([]byte(s))
	}
	if got := string(tail.buf); got != "efghijé" {
		t.Errorf("tail %q", got)
	}
	tail.Write([]byte(strings.Repeat("z", 100) + "é🙂end"))
	if got := tail.text(); got != "…🙂end" {
		t.Errorf("text %q", got)
	}
	if cap(tail.buf) > 16 {
		t.Errorf("tail grew to %d bytes", cap(tail.buf))
	}
}

// geminiTestAlive reports whether pid runs (a zombie, which an init that
// does not reap may leave behind, counts as dead).
func geminiTestAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z' && stat[i+2] != 'X'
	}
	return true
}

// TestGeminiOutputOver32MiBIsCut: a model writing 40 MiB (and a result
// line repeating it) is cut to max_output_bytes by the runner — a
// successful, truncated answer, not a failure.
func TestGeminiOutputOver32MiBIsCut(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	r, _, _ := testRunner(t, nil)
	var stream bytes.Buffer
	res, err := r.Run(context.Background(), Spec{Action: ActionSkillAssess, Prompt: "p", Stream: &stream}, newFakeGemini(t, "huge"))
	if err != nil {
		t.Fatal(err)
	}
	if !res.OutputTruncated || len(res.Output) > cfg.MaxOutputBytes || len(res.Output) < cfg.MaxOutputBytes-4 ||
		!utf8.ValidString(res.Output) || stream.Len() != len(res.Output) {
		t.Fatalf("output %d bytes (cap %d), truncated %v, streamed %d", len(res.Output), cfg.MaxOutputBytes, res.OutputTruncated, stream.Len())
	}
}
