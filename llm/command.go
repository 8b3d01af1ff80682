package llm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cortexhq/cortex"
)

// ProgramConfig configures a local agent CLI run as a model in print mode
// ([llm.claude], [llm.codex]).
type ProgramConfig struct {
	// Program is the executable (a name on PATH or a path).
	Program string `toml:"program" json:"program"`
	// Model is passed with --model / -m ("" = the program's default).
	Model string `toml:"model" json:"model,omitempty"`
	// Args are extra arguments (checked against the forbidden flags).
	Args []string `toml:"args" json:"args,omitempty"`
}

// Default programs.
const (
	DefaultClaudeProgram = "claude"
	DefaultCodexProgram  = "codex"
)

// maxProgramOutput bounds what a program may print before it is stopped
// (the runner then cuts the answer to max_output_bytes).
const maxProgramOutput = 8 << 20

// claudeReserved and codexReserved are the flags Cortex sets; extra
// arguments may not repeat them.
var (
	claudeReserved = []string{"-p", "--print", "--output-format", "--permission-mode", "--model", "--max-turns",
		"--allowedTools", "--allowed-tools", "--disallowedTools", "--disallowed-tools", "--mcp-config", "--strict-mcp-config",
		"--add-dir"}
	codexReserved = []string{"--sandbox", "-s", "--model", "-m", "--output-last-message", "-o", "--full-auto",
		"--cd", "-C", "--add-dir", "--ask-for-approval", "-a"}
)

// Program runs prompts through a local agent CLI in its non-interactive
// mode — `claude -p` (Claude Code) or `codex exec` (Codex CLI) — read-only
// (Claude: plan permission mode, one turn, no MCP servers; Codex: the
// read-only sandbox), in an empty working directory, with the prompt on
// standard input. It implements [Provider].
type Program struct {
	name string // "claude" or "codex"
	cfg  ProgramConfig
}

var _ Provider = (*Program)(nil)

// NewClaude returns the Claude Code provider (`claude -p`).
func NewClaude(cfg ProgramConfig) (*Program, error) {
	return newProgram("claude", DefaultClaudeProgram, claudeReserved, cfg)
}

// NewCodex returns the Codex CLI provider (`codex exec`).
func NewCodex(cfg ProgramConfig) (*Program, error) {
	return newProgram("codex", DefaultCodexProgram, codexReserved, cfg)
}

func newProgram(name, dflt string, reserved []string, cfg ProgramConfig) (*Program, error) {
	cfg.Program = strings.TrimSpace(cfg.Program)
	if cfg.Program == "" {
		cfg.Program = dflt
	}
	cfg.Model = strings.TrimSpace(cfg.Model)
	cfg.Args = slices.Clone(cfg.Args)
	if err := programCheck(name, reserved, cfg); err != nil {
		return nil, err
	}
	return &Program{name: name, cfg: cfg}, nil
}

// programCheck refuses flags that would let the model act without
// approval, flags Cortex sets, and a model that is not a model name.
func programCheck(name string, reserved []string, cfg ProgramConfig) error {
	joined := strings.ToLower(cfg.Program + " " + strings.Join(cfg.Args, " ") + " " + cfg.Model)
	for _, f := range geminiForbidden {
		if strings.Contains(joined, strings.ToLower(f)) {
			return cortex.Errorf(cortex.CodeInvalid,
				"[llm.%s] program, model or args contain the forbidden flag %q: Cortex runs models read-only", name, f)
		}
	}
	for _, a := range cfg.Args {
		if a == "-y" || strings.Contains(strings.ToLower(a), "workspace-write") {
			return cortex.Errorf(cortex.CodeInvalid, "[llm.%s] args contain the forbidden flag %q: Cortex runs models read-only", name, a)
		}
		for _, f := range reserved {
			if a == f || strings.HasPrefix(a, f+"=") {
				return cortex.Errorf(cortex.CodeInvalid, "[llm.%s] args may not contain %q: Cortex sets it", name, f)
			}
		}
	}
	if cfg.Model != "" && !geminiValidModel(cfg.Model) {
		return cortex.Errorf(cortex.CodeInvalid, "[llm.%s] model %q is not a model name (letters, digits and . _ - / : only)", name, cfg.Model)
	}
	return nil
}

// Name returns "claude" or "codex".
func (p *Program) Name() string { return p.name }

// Program returns the configured executable.
func (p *Program) Program() string { return p.cfg.Program }

// Model returns the configured model ("" = the program's default).
func (p *Program) Model() string { return p.cfg.Model }

// args returns the program's arguments; out is Codex's last-message file.
func (p *Program) args(out string) []string {
	var a []string
	switch p.name {
	case "claude":
		a = []string{"-p", "--output-format", "text", "--permission-mode", "plan", "--max-turns", "1", "--strict-mcp-config"}
		if p.cfg.Model != "" {
			a = append(a, "--model", p.cfg.Model)
		}
		return append(a, p.cfg.Args...)
	default:
		a = []string{"exec", "--sandbox", "read-only", "--skip-git-repo-check", "--ephemeral", "--color", "never",
			"--output-last-message", out}
		if p.cfg.Model != "" {
			a = append(a, "--model", p.cfg.Model)
		}
		a = append(a, p.cfg.Args...)
		return append(a, "-") // the prompt comes on standard input
	}
}

// programPassEnv are the variables passed to the program when set:
// locale, proxies, CA certificates and the agents' own configuration
// homes and API keys; nothing else.
var programPassEnv = []string{"HOME", "LANG", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY",
	"no_proxy", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR", "OPENAI_API_KEY",
	"CODEX_HOME", "XDG_CONFIG_HOME"}

// Run sends prompt on standard input and returns the answer: Claude's
// printed text, or the last message Codex wrote. When ctx is done the
// program's process group is killed and the error wraps ctx.Err().
func (p *Program) Run(ctx context.Context, prompt string, stream io.Writer) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", programContextError(p.name, err)
	}
	path, err := exec.LookPath(p.cfg.Program)
	if err != nil {
		return "", cortex.WrapError(cortex.CodeUnavailable, err, "%s not found (install it or set [llm.%s] program): %s",
			p.name, p.name, p.cfg.Program)
	}
	work, err := os.MkdirTemp("", "cortex-"+p.name+"-work-")
	if err != nil {
		return "", cortex.WrapError(cortex.CodeInternal, err, "create the %s working directory", p.name)
	}
	defer os.RemoveAll(work)
	last := filepath.Join(work, ".last-message")
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(runCtx, path, p.args(last)...)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for _, k := range programPassEnv {
		if v, ok := os.LookupEnv(k); ok && v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.WaitDelay = geminiWaitDelay
	geminiProcessGroup(cmd)
	cmd.Stdin = strings.NewReader(prompt)
	stderr := &geminiTail{max: geminiStderrTail}
	cmd.Stderr = stderr
	out := &capWriter{max: maxProgramOutput, stop: cancel}
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		return "", cortex.WrapError(cortex.CodeUnavailable, err, "start %s", p.cfg.Program)
	}
	pid := cmd.Process.Pid
	waitErr := cmd.Wait()
	geminiKillGroup(pid) // nothing the program started may outlive it
	if err := ctx.Err(); err != nil {
		return "", programContextError(p.name, err)
	}
	if out.over {
		return "", cortex.Errorf(cortex.CodeUnavailable, "%s printed more than %d MiB", p.name, maxProgramOutput>>20)
	}
	if waitErr != nil && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return "", cortex.WrapError(cortex.CodeUnavailable, waitErr, "%s failed (%s): %s", p.name, geminiExitText(waitErr), stderr.text())
	}
	answer := out.buf.String()
	if p.name == "codex" {
		if b, err := os.ReadFile(last); err == nil && len(bytes.TrimSpace(b)) > 0 {
			answer = string(b)
		}
	}
	if strings.TrimSpace(answer) == "" {
		return "", cortex.Errorf(cortex.CodeUnavailable, "%s answered nothing: %s", p.name, stderr.text())
	}
	if stream != nil {
		_, _ = io.WriteString(stream, answer)
	}
	return answer, nil
}

func programContextError(name string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return cortex.WrapError(cortex.CodeUnavailable, err, "%s timed out", name)
	}
	return cortex.WrapError(cortex.CodeUnavailable, err, "%s was cancelled", name)
}

// capWriter keeps up to max bytes and stops the program past them.
type capWriter struct {
	buf  bytes.Buffer
	max  int
	over bool
	stop func()
}

// Write implements io.Writer.
func (w *capWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.max {
		if !w.over {
			w.over = true
			w.stop()
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}
