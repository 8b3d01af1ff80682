package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/testpg"
)

// example is one command line of a ```sh block in the docs.
type example struct {
	file string
	line int
	text string
}

// docExamples collects the shell examples and the TOML blocks of README.md
// and docs/.
func docExamples(t *testing.T) (shell []example, toml []example) {
	t.Helper()
	files := []string{"../README.md"}
	for _, pattern := range []string{"../docs/*.md", "../docs/*/*.md"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		lang, n, start := "", 0, 0
		var block []string
		for sc.Scan() {
			n++
			l := sc.Text()
			trimmed := strings.TrimSpace(l)
			if strings.HasPrefix(trimmed, "```") {
				if lang == "" {
					lang, start, block = strings.TrimPrefix(trimmed, "```")+" ", n, nil
					continue
				}
				switch strings.TrimSpace(lang) {
				case "sh":
					for i, b := range block {
						if s := stripComment(b); s != "" {
							shell = append(shell, example{f, start + 1 + i, s})
						}
					}
				case "toml":
					toml = append(toml, example{f, start, strings.Join(block, "\n")})
				}
				lang = ""
				continue
			}
			if lang != "" {
				block = append(block, l)
			}
		}
		fh.Close()
	}
	return shell, toml
}

// stripComment removes a trailing "# comment" (outside quotes).
func stripComment(s string) string {
	inQuote := rune(0)
	for i, r := range s {
		switch {
		case inQuote != 0 && r == inQuote:
			inQuote = 0
		case inQuote == 0 && (r == '"' || r == '\''):
			inQuote = r
		case inQuote == 0 && r == '#' && (i == 0 || s[i-1] == ' '):
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

// splitArgs splits a command line like a shell would for our examples:
// quotes group, VAR=value prefixes become environment, > redirects drop.
func splitArgs(s string) (env, args []string) {
	var cur strings.Builder
	inQuote, have := rune(0), false
	flush := func() {
		if have {
			args = append(args, cur.String())
		}
		cur.Reset()
		have = false
	}
	for _, r := range s {
		switch {
		case inQuote != 0 && r == inQuote:
			inQuote = 0
		case inQuote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			inQuote, have = r, true
		case r == ' ' || r == '\t':
			flush()
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	flush()
	for len(args) > 0 && regexp.MustCompile(`^[A-Z_]+=`).MatchString(args[0]) {
		env, args = append(env, args[0]), args[1:]
	}
	for i, a := range args {
		if a == ">" {
			args = args[:i]
			break
		}
	}
	return env, args
}

// notRun are example commands that are not Cortex commands (or need a
// machine we do not have in CI); they are recognised explicitly so a new
// kind of example fails this test until it is handled.
var notRun = []string{"go test", "go run ./internal/gendocs", "go install", "go build", "CGO_ENABLED=0 go build", ".ci/run",
	"claude mcp add", "curl", "TOKEN="}

// TestDocExamplesRun runs every `cortex …` example of the docs with the
// real binary on an indexed store: each must parse (never exit 2, the
// usage/invalid code) and run. Placeholder incident ids are replaced by
// real ones; long-running commands are stopped after a moment.
func TestDocExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every documented command")
	}
	e := newEnv(t)
	db := indexedLabelled(t, e)
	e.vars = append(e.vars, "CORTEX_DB="+db)
	fakeGemini(t, e, "ok")
	var skill, abuse struct {
		Incidents []struct {
			ID string `json:"incident_id"`
		} `json:"incidents"`
	}
	e.json(&skill, "ai", "skill-incidents", "--json")
	e.json(&abuse, "ai", "abuse-incidents", "--json")
	if len(skill.Incidents) == 0 || len(abuse.Incidents) == 0 {
		t.Fatal("the labelled store has no incidents")
	}
	ids := strings.NewReplacer("skill-inc-3871b0698ae1063daab5bdad67c8926d", skill.Incidents[0].ID,
		"skill-inc-…", skill.Incidents[0].ID, "inc-…", abuse.Incidents[0].ID)

	// The team-store examples run against a real PostgreSQL when there is
	// one (their placeholder URL replaced), else they are skipped.
	teamURL := ""
	if os.Getenv(testpg.Env) != "" || os.Getenv("CORTEX_REQUIRE_POSTGRES") != "" {
		teamURL = testpg.URL(t)
	}
	const placeholderURL = "postgres://cortex:change-me@db.example.com:5432/cortex"
	labelled := testcorpus.Labelled(t)
	shell, _ := docExamples(t)
	ran := 0
	for _, ex := range shell {
		where := filepath.Base(ex.file) + ":" + itoa(ex.line)
		text := ids.Replace(ex.text)
		if strings.Contains(text, "postgres://") {
			if teamURL == "" || !strings.Contains(text, placeholderURL) {
				t.Logf("%s: skipped (needs PostgreSQL): %s", where, text)
				continue
			}
			text = strings.ReplaceAll(text, placeholderURL, teamURL)
		}
		if strings.HasPrefix(text, "cortex push") && !strings.Contains(text, "--url") {
			if teamURL == "" {
				continue
			}
			text = strings.Replace(text, "cortex push", "cortex push --url "+teamURL, 1)
		}
		text = strings.ReplaceAll(text, "go run ./cmd/cortex ", "cortex ")
		if strings.HasPrefix(text, "./cortex ") {
			text = text[2:]
		}
		skip := false
		for _, p := range notRun {
			skip = skip || strings.HasPrefix(text, p)
		}
		env, args := splitArgs(text)
		if skip {
			continue
		}
		if len(args) == 0 || args[0] != "cortex" {
			t.Errorf("%s: example %q is neither a cortex command nor a known other command", where, ex.text)
			continue
		}
		args = args[1:]
		for i, a := range args {
			args[i] = strings.ReplaceAll(strings.ReplaceAll(a, "~", e.home), "../shared/corpus/labelled", labelled)
		}
		if strings.Contains(strings.Join(args, " "), "…") {
			t.Errorf("%s: example %q has a placeholder this test cannot fill", where, ex.text)
			continue
		}
		if len(args) > 0 && args[0] == "bench" && len(args) > 1 && args[1] != "queries" {
			args = append(args, "--help") // generating or ingesting a GB is the bench's job, not this test's
		}
		code, out := runExample(t, e, env, args)
		ran++
		if code == 2 || code == 1 || code < 0 {
			t.Errorf("%s: `%s` exited %d:\n%s", where, ex.text, code, out)
		}
	}
	t.Logf("ran %d documented commands", ran)
}

// runExample runs one example; serve, watch and mcp are stopped with
// SIGINT (or end of input) after a moment.
func runExample(t *testing.T, e *env, env, args []string) (int, string) {
	t.Helper()
	long := len(args) > 0 && (args[0] == "serve" || args[0] == "watch" || args[0] == "mcp" || args[0] == "syslog" ||
		args[0] == "push" && slices.Contains(args, "--watch"))
	if len(args) > 0 && args[0] == "serve" {
		args = append(args, "--listen", "127.0.0.1:0")
		for i, a := range args {
			if a == "--listen" && i+1 < len(args) && args[i+1] != "127.0.0.1:0" {
				args[i+1] = "127.0.0.1:0"
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cortexBin, args...)
	cmd.Env = append(append([]string{}, e.vars...), env...)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if long {
		stdin, _ := cmd.StdinPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		_ = stdin.Close()
		_ = cmd.Process.Signal(syscall.SIGINT)
	} else if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	// A long-running command still starting up on a loaded machine may die
	// of the SIGINT before it handles signals: it was running, not failing.
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); long && ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
		return 0, out.String()
	}
	if err == nil {
		return 0, out.String()
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	}
	return -1, out.String() + err.Error()
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestDocConfigExamplesLoad checks every TOML example of Cortex's config
// loads (unknown keys are errors there).
func TestDocConfigExamplesLoad(t *testing.T) {
	_, tomls := docExamples(t)
	for _, ex := range tomls {
		if strings.Contains(ex.text, "[mcp_servers.") {
			continue // Codex's config, not ours
		}
		e := newEnv(t)
		path := filepath.Join(e.home, "config.toml")
		if err := os.WriteFile(path, []byte(ex.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, errOut, code := e.run("--config", path, "config"); code != 0 {
			t.Errorf("%s:%d: config example does not load: exit %d\n%s%s", filepath.Base(ex.file), ex.line, code, out, errOut)
		}
	}
}

// TestDocCurlExamplesRun runs the curl examples against `cortex serve`
// started with the documented tokens; each must get a 2xx answer.
func TestDocCurlExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	e := newEnv(t)
	db := indexedLabelled(t, e)
	e.vars = append(e.vars, "CORTEX_DB="+db, "CORTEX_READ_TOKEN=read-token-change-me", "CORTEX_ADMIN_TOKEN=admin-token-change-me")
	base := startServe(t, e, "--no-watch")
	host := strings.TrimPrefix(base, "http://")
	shell, _ := docExamples(t)
	ran := 0
	for _, ex := range shell {
		if !strings.HasPrefix(ex.text, "curl ") {
			continue
		}
		line := strings.ReplaceAll(ex.text, "127.0.0.1:3100", host)
		line = strings.ReplaceAll(line, "localhost:3100", host)
		line = "curl -f" + strings.TrimPrefix(line, "curl")
		cmd := exec.Command("sh", "-c", line)
		cmd.Env = append(append([]string{}, e.vars...), "TOKEN=read-token-change-me")
		out, err := cmd.CombinedOutput()
		ran++
		if err != nil {
			t.Errorf("%s:%d: `%s`: %v\n%s", filepath.Base(ex.file), ex.line, ex.text, err, out)
		}
	}
	if ran == 0 {
		t.Fatal("no curl examples found")
	}
	t.Logf("ran %d curl examples", ran)
}
