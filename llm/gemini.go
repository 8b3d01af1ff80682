package llm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/redact"
)

const (
	// geminiPromptStub is passed with --prompt; the CLI appends it to the
	// real prompt, which it reads from standard input.
	geminiPromptStub = "Read the instructions and the evidence from standard input and answer in Markdown."
	// geminiMaxLine bounds one line of the CLI's output that is parsed:
	// room for a result line repeating a whole (capped) answer. Longer
	// lines are dropped unread and cut the answer.
	geminiMaxLine = geminiMaxAnswer + 1<<20
	// geminiStderrTail is how much of the CLI's standard error is kept.
	geminiStderrTail = 4096
	// geminiWaitDelay bounds how long Wait waits for the output pipes once
	// the CLI has exited or been killed (a grandchild may hold them).
	geminiWaitDelay = 2 * time.Second
	// geminiMaxAuthFile bounds an auth or settings file copied or read.
	geminiMaxAuthFile = 1 << 20
	// geminiDefaultAuth is the auth type used when the user's settings do
	// not name one and the environment does not imply one.
	geminiDefaultAuth = "oauth-personal"
)

// geminiAuthFiles are the only files copied from the user's ~/.gemini into
// the isolated home.
var geminiAuthFiles = []string{"oauth_creds.json", "gemini-credentials.json", "google_accounts.json"}

// geminiPassEnv are the variables passed from Cortex's environment to the
// CLI when set (authentication, locale, proxies and extra CA certificates,
// which the CLI needs to reach its API); nothing else is passed.
var geminiPassEnv = []string{
	"LANG",
	"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE",
	"GEMINI_API_KEY",
	"GOOGLE_API_KEY",
	"GOOGLE_CLOUD_PROJECT",
	"GOOGLE_CLOUD_LOCATION",
	"GOOGLE_GENAI_USE_VERTEXAI",
	"GOOGLE_APPLICATION_CREDENTIALS",
}

// geminiForbidden are substrings that may not appear (case-insensitively)
// in the program, model and extra arguments: each would let the model act
// without approval.
var geminiForbidden = []string{
	"--full-auto",
	"--dangerously-bypass-approvals-and-sandbox",
	"--dangerously-skip-permissions",
	"--allow-dangerously-skip-permissions",
	"--yolo",
	"danger-full-access",
	"bypassPermissions",
	"--approval-mode=yolo",
	"--approval-mode yolo",
	"auto_edit",
}

// geminiReservedFlags are flags Cortex sets itself (or that widen what the
// model may do); extra arguments may not repeat or override them.
var geminiReservedFlags = []string{
	"--approval-mode", "--output-format", "-o", "--model", "-m",
	"--extensions", "-e", "--prompt", "-p", "--prompt-interactive", "-i",
	"--allowed-tools", "--allowed-mcp-server-names",
}

// geminiRedactor is shared by every run: building a Redactor is costly.
var geminiRedactor = sync.OnceValue(redact.New)

// Gemini runs prompts through the Gemini CLI in headless mode
// (--output-format stream-json), read-only (--approval-mode plan), without
// extensions, MCP servers, hooks or context files, in an isolated home and
// an empty working directory, with a minimal environment. It implements
// [Provider].
type Gemini struct {
	cfg GeminiConfig
}

var _ Provider = (*Gemini)(nil)

// NewGemini returns a Gemini provider for cfg, with the default program and
// model filled in. It refuses (CodeInvalid) a configuration whose program,
// model or arguments contain a flag that would let the model act without
// approval, or that overrides a flag Cortex sets.
func NewGemini(cfg GeminiConfig) (*Gemini, error) {
	cfg.Program = strings.TrimSpace(cfg.Program)
	if cfg.Program == "" {
		cfg.Program = DefaultGeminiProgram
	}
	cfg.Model = strings.TrimSpace(cfg.Model)
	if cfg.Model == "" {
		cfg.Model = DefaultGeminiModel
	}
	cfg.Args = slices.Clone(cfg.Args)
	if err := geminiCheck(cfg); err != nil {
		return nil, err
	}
	return &Gemini{cfg: cfg}, nil
}

// Name returns "gemini".
func (g *Gemini) Name() string { return "gemini" }

// Program returns the configured executable.
func (g *Gemini) Program() string { return g.cfg.Program }

// Model returns the model passed with --model.
func (g *Gemini) Model() string { return g.cfg.Model }

// geminiCheck validates the program, model and extra arguments.
func geminiCheck(cfg GeminiConfig) error {
	joined := strings.ToLower(cfg.Program + " " + strings.Join(cfg.Args, " ") + " " + cfg.Model)
	for _, f := range geminiForbidden {
		if strings.Contains(joined, strings.ToLower(f)) {
			return cortex.Errorf(cortex.CodeInvalid,
				"[llm.gemini] program, model or args contain the forbidden flag %q: assessments run read-only", f)
		}
	}
	for _, a := range cfg.Args {
		if a == "-y" {
			return cortex.Errorf(cortex.CodeInvalid,
				"[llm.gemini] args contain the forbidden flag \"-y\" (yolo): assessments run read-only")
		}
		for _, f := range geminiReservedFlags {
			if a == f || strings.HasPrefix(a, f+"=") {
				return cortex.Errorf(cortex.CodeInvalid,
					"[llm.gemini] args may not contain %q: Cortex sets it (use [llm.gemini] model for the model)", f)
			}
		}
	}
	if !geminiValidModel(cfg.Model) {
		return cortex.Errorf(cortex.CodeInvalid,
			"[llm.gemini] model %q is not a model name (letters, digits and . _ - / : only)", cfg.Model)
	}
	return nil
}

func geminiValidModel(m string) bool {
	if m == "" || len(m) > 200 || m[0] == '-' {
		return false
	}
	for _, r := range m {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("._-/:", r)
		if !ok {
			return false
		}
	}
	return true
}

// args returns the CLI's arguments.
func (g *Gemini) args() []string {
	a := []string{
		"--approval-mode", "plan",
		"--extensions", "none",
		"--output-format", "stream-json",
		"--model", g.cfg.Model,
	}
	a = append(a, g.cfg.Args...)
	return append(a, "--prompt", geminiPromptStub)
}

// Run sends prompt to the Gemini CLI on standard input and returns the
// answer, writing the answer's text to stream as it arrives. When ctx is
// done the CLI's whole process group is killed and the error wraps
// ctx.Err().
func (g *Gemini) Run(ctx context.Context, prompt string, stream io.Writer) (string, error) {
	if err := geminiCheck(g.cfg); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", geminiContextError(err)
	}
	path, err := exec.LookPath(g.cfg.Program)
	if err != nil {
		return "", cortex.WrapError(cortex.CodeUnavailable, err,
			"gemini CLI not found (install it or set [llm.gemini] program): %s", g.cfg.Program)
	}
	// One folder holds the isolated home (with the copied credentials) and
	// the empty working directory; its name carries this process's id so
	// that a later runner can remove it if this process is killed.
	dir, err := os.MkdirTemp("", ProviderDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", cortex.WrapError(cortex.CodeInternal, err, "create the isolated gemini home")
	}
	defer os.RemoveAll(dir)
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	for _, d := range []string{home, work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return "", cortex.WrapError(cortex.CodeInternal, err, "create the isolated gemini home")
		}
	}
	if err := g.prepareHome(home); err != nil {
		return "", err
	}
	return g.run(ctx, path, dir, prompt, stream)
}

func (g *Gemini) run(ctx context.Context, path, dir, prompt string, stream io.Writer) (string, error) {
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(runCtx, path, g.args()...)
	cmd.Dir = work
	cmd.Env = geminiEnv(home)
	cmd.WaitDelay = geminiWaitDelay
	geminiProcessGroup(cmd)
	stderr := &geminiTail{max: geminiStderrTail}
	cmd.Stderr = stderr
	// An io.Pipe, not StdoutPipe: exec copies the OS pipe into it, so Wait
	// (bounded by WaitDelay) never depends on a grandchild closing stdout.
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", cortex.WrapError(cortex.CodeInternal, err, "create gemini's standard input")
	}
	if err := cmd.Start(); err != nil {
		return "", cortex.WrapError(cortex.CodeUnavailable, err, "start the gemini CLI %s", g.cfg.Program)
	}
	pid := cmd.Process.Pid
	providerStarted(ctx, pid, dir)

	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(stdin, prompt)
		if cerr := stdin.Close(); err == nil {
			err = cerr
		}
		written <- err
	}()

	var parser geminiStreamParser
	parsed := make(chan error, 1)
	go func() {
		err := geminiRead(pr, &parser, stream)
		if err != nil {
			// Stop the CLI and unblock exec's copy into pw.
			cancel()
			pr.CloseWithError(err)
		}
		parsed <- err
	}()

	waitErr := cmd.Wait()
	pw.Close()
	parseErr := <-parsed
	writeErr := <-written
	geminiKillGroup(pid) // best effort: nothing the CLI started may outlive it

	if err := ctx.Err(); err != nil {
		return "", geminiContextError(err)
	}
	if parseErr != nil {
		return "", parseErr
	}
	if waitErr != nil && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return "", cortex.WrapError(cortex.CodeUnavailable, waitErr, "gemini failed (%s): %s",
			geminiExitText(waitErr), stderr.text())
	}
	if writeErr != nil {
		return "", cortex.WrapError(cortex.CodeUnavailable, writeErr,
			"gemini did not read the whole prompt; its answer is not an assessment of the evidence")
	}
	return parser.Finish()
}

// geminiRead feeds r to parser line by line, writing each delta to stream.
// A failing stream stops the streaming, not the run.
func geminiRead(r io.Reader, parser *geminiStreamParser, stream io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := geminiReadLine(br)
		if errors.Is(err, errGeminiOverlong) {
			parser.Overlong()
			continue
		}
		if len(line) > 0 {
			delta, perr := parser.Line(line)
			if perr != nil {
				return perr
			}
			if delta != "" && stream != nil {
				if _, werr := io.WriteString(stream, delta); werr != nil {
					stream = nil
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		var ce *cortex.Error
		if errors.As(err, &ce) {
			return err
		}
		if err != nil {
			return cortex.WrapError(cortex.CodeUnavailable, err, "read gemini's output")
		}
	}
}

// errGeminiOverlong reports a line over geminiMaxLine, consumed and
// dropped.
var errGeminiOverlong = errors.New("gemini output line over the line limit")

// geminiReadLine returns the next line of br (with its newline), at most
// geminiMaxLine bytes; a longer line is read to its end, dropped and
// reported as errGeminiOverlong. The slice may alias br's buffer.
func geminiReadLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > geminiMaxLine {
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, errGeminiOverlong
		}
		if line == nil && err != bufio.ErrBufferFull {
			return frag, err
		}
		line = append(line, frag...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// geminiContextError wraps ctx.Err() so that errors.Is still finds
// context.DeadlineExceeded or context.Canceled.
func geminiContextError(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return cortex.WrapError(cortex.CodeUnavailable, err, "gemini timed out")
	}
	return cortex.WrapError(cortex.CodeUnavailable, err, "gemini was cancelled")
}

func geminiExitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code >= 0 {
			return fmt.Sprintf("exit status %d", code)
		}
		return ee.String()
	}
	return err.Error()
}

// geminiEnv returns the CLI's whole environment: PATH, the isolated home,
// workspace trust and the variables of geminiPassEnv that are set.
func geminiEnv(home string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	}
	for _, k := range geminiPassEnv {
		if v, ok := os.LookupEnv(k); ok && v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// sourceHome returns the directory whose .gemini auth files are copied, or
// "" when there is none (the CLI may then authenticate from the
// environment).
func (g *Gemini) sourceHome() (string, error) {
	src := g.cfg.Home
	explicit := src != ""
	if !explicit {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", nil
		}
		src = h
	}
	fi, err := os.Lstat(src)
	switch {
	case err != nil && !explicit && errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", cortex.WrapError(cortex.CodeInvalid, err, "gemini home %s cannot be read ([llm.gemini] home)", src)
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", cortex.Errorf(cortex.CodeInvalid,
			"gemini home %s is a symbolic link; set [llm.gemini] home to the directory it points to", src)
	case !fi.IsDir():
		return "", cortex.Errorf(cortex.CodeInvalid, "gemini home %s is not a directory ([llm.gemini] home)", src)
	}
	return src, nil
}

// prepareHome fills the isolated home: .gemini (auth files and sanitized
// settings), .config and .cache.
func (g *Gemini) prepareHome(home string) error {
	src, err := g.sourceHome()
	if err != nil {
		return err
	}
	dot := filepath.Join(home, ".gemini")
	for _, d := range []string{dot, filepath.Join(home, ".config"), filepath.Join(home, ".cache")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return cortex.WrapError(cortex.CodeInternal, err, "create the isolated gemini home")
		}
	}
	var userSettings []byte
	if src != "" {
		for _, name := range geminiAuthFiles {
			data, err := geminiReadUserFile(filepath.Join(src, ".gemini", name))
			if err != nil {
				return err
			}
			if data == nil {
				continue
			}
			if err := geminiWriteFile(filepath.Join(dot, name), data); err != nil {
				return err
			}
		}
		if userSettings, err = geminiReadUserFile(filepath.Join(src, ".gemini", "settings.json")); err != nil {
			return err
		}
	}
	settings, err := json.MarshalIndent(geminiSettings(userSettings), "", "  ")
	if err != nil {
		return cortex.WrapError(cortex.CodeInternal, err, "encode the gemini settings")
	}
	return geminiWriteFile(filepath.Join(dot, "settings.json"), settings)
}

// geminiReadUserFile reads a regular file of at most geminiMaxAuthFile
// bytes; it returns nil, nil when the file does not exist.
func geminiReadUserFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeInvalid, err, "read gemini file %s", path)
	}
	if !fi.Mode().IsRegular() || fi.Size() > geminiMaxAuthFile {
		return nil, cortex.Errorf(cortex.CodeInvalid,
			"gemini file %s is not a regular file of at most %d KiB", path, geminiMaxAuthFile>>10)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeInvalid, err, "read gemini file %s", path)
	}
	if len(data) > geminiMaxAuthFile {
		return nil, cortex.Errorf(cortex.CodeInvalid, "gemini file %s is larger than %d KiB", path, geminiMaxAuthFile>>10)
	}
	return data, nil
}

func geminiWriteFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return cortex.WrapError(cortex.CodeInternal, err, "write %s in the isolated gemini home", filepath.Base(path))
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return cortex.WrapError(cortex.CodeInternal, err, "write %s in the isolated gemini home", filepath.Base(path))
	}
	return nil
}

// geminiSettings returns the isolated home's settings.json: the user's
// auth type and nothing else of theirs, with MCP servers, hooks, context
// files, extensions and auto-update off.
func geminiSettings(user []byte) map[string]any {
	return map[string]any{
		"security": map[string]any{
			"auth": map[string]any{"selectedType": geminiAuthType(user)},
		},
		"mcpServers":  map[string]any{},
		"hooks":       map[string]any{},
		"hooksConfig": map[string]any{"enabled": false},
		"context":     map[string]any{"fileName": []string{}},
		"admin": map[string]any{
			"extensions": map[string]any{"enabled": false},
			"mcp":        map[string]any{"enabled": false},
		},
		"general": map[string]any{
			"enableAutoUpdate":             false,
			"enableAutoUpdateNotification": false,
		},
	}
}

// geminiAuthType returns security.auth.selectedType from the user's
// settings (or the legacy top-level selectedAuthType). Without one it
// follows the environment the CLI would use (Vertex AI, then an API key)
// and falls back to oauth-personal. Settings that are not plain JSON (the
// CLI tolerates comments) count as naming none.
func geminiAuthType(user []byte) string {
	var s struct {
		Security struct {
			Auth struct {
				SelectedType string `json:"selectedType"`
			} `json:"auth"`
		} `json:"security"`
		SelectedAuthType string `json:"selectedAuthType"`
	}
	if len(user) > 0 && json.Unmarshal(user, &s) == nil {
		for _, t := range []string{s.Security.Auth.SelectedType, s.SelectedAuthType} {
			if geminiValidAuthType(t) {
				return t
			}
		}
	}
	switch {
	case strings.EqualFold(os.Getenv("GOOGLE_GENAI_USE_VERTEXAI"), "true"):
		return "vertex-ai"
	case os.Getenv("GEMINI_API_KEY") != "":
		return "gemini-api-key"
	}
	return geminiDefaultAuth
}

func geminiValidAuthType(t string) bool {
	if t == "" || len(t) > 64 {
		return false
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// geminiTail keeps the last max bytes written to it.
type geminiTail struct {
	buf       []byte
	max       int
	truncated bool
}

// Write implements io.Writer; it never fails.
func (t *geminiTail) Write(p []byte) (int, error) {
	n := len(p)
	if t.buf == nil {
		t.buf = make([]byte, 0, t.max)
	}
	if len(p) >= t.max {
		t.truncated = t.truncated || len(t.buf) > 0 || len(p) > t.max
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.truncated = true
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// text returns the kept bytes as valid, redacted UTF-8.
func (t *geminiTail) text() string {
	b := t.buf
	if t.truncated {
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if s == "" {
		return "no error output"
	}
	s, _ = geminiRedactor().String(s)
	if t.truncated {
		s = "…" + s
	}
	return s
}
