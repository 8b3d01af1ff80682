package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

// The end-to-end tests drive the real binary, built once.
var cortexBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cortex-e2e-")
	if err != nil {
		panic(err)
	}
	cortexBin = filepath.Join(dir, "cortex")
	cmd := exec.Command("go", "build", "-o", cortexBin, "../cmd/cortex")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func realCorpus(t *testing.T) string { return testcorpus.Real(t) }

type env struct {
	t    *testing.T
	home string
	vars []string
}

func newEnv(t *testing.T) *env {
	home := t.TempDir()
	return &env{t: t, home: home, vars: []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"CORTEX_HOSTNAME=e2e-host", "PATH=" + os.Getenv("PATH"),
	}}
}

// run runs cortex and returns stdout, stderr and the exit code.
func (e *env) run(args ...string) (string, string, int) {
	e.t.Helper()
	cmd := exec.Command(cortexBin, args...)
	cmd.Env = e.vars
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func (e *env) json(v any, args ...string) {
	e.t.Helper()
	out, errOut, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("cortex %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.t.Fatalf("cortex %s: output is not JSON: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultRootsEndToEnd puts real transcripts where the agents write
// them and runs the README's main command: `cortex index` with no path.
func TestDefaultRootsEndToEnd(t *testing.T) {
	corpus := realCorpus(t)
	e := newEnv(t)
	copyFile(t, filepath.Join(corpus, "claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"),
		filepath.Join(e.home, ".claude/projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"))
	copyFile(t, filepath.Join(corpus, "codex/codex-session-view/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"),
		filepath.Join(e.home, ".codex/sessions/2025/11/17/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"))
	copyFile(t, filepath.Join(corpus, "gemini/M-Gemini/chat_logs/session-2025-12-30T01-16-3f9ce747.json"),
		filepath.Join(e.home, ".gemini/tmp/abc123/chats/session-2025-12-30T01-16-3f9ce747.json"))

	out, errOut, code := e.run("index")
	if code != 0 {
		t.Fatalf("index: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "Indexed into "+filepath.Join(e.home, ".local/share/cortex/cortex.db")) {
		t.Errorf("index did not use the XDG default database:\n%s", out)
	}
	var st struct {
		Rows       int64            `json:"rows"`
		RowsByTool map[string]int64 `json:"rows_by_tool"`
		Sources    struct {
			ByKind map[string]int64 `json:"by_kind"`
		} `json:"sources"`
	}
	e.json(&st, "status", "--json")
	for _, tool := range []string{"claude", "codex", "gemini"} {
		if st.RowsByTool[tool] == 0 {
			t.Errorf("no %s rows after indexing the default roots: %+v", tool, st)
		}
	}

	var again struct {
		Inserted  int64 `json:"rows_inserted"`
		Unchanged int   `json:"files_unchanged"`
	}
	e.json(&again, "index", "--json")
	if again.Inserted != 0 || again.Unchanged != 3 {
		t.Errorf("second index: %+v", again)
	}

	var sessions struct {
		Sessions []struct {
			Tool string `json:"ai_tool"`
			Rows int64  `json:"rows"`
		} `json:"sessions"`
	}
	e.json(&sessions, "sessions", "--json")
	if len(sessions.Sessions) != 3 {
		t.Errorf("want 3 sessions, got %+v", sessions.Sessions)
	}
	var codexOnly struct {
		Sessions []struct {
			Tool string `json:"ai_tool"`
		} `json:"sessions"`
	}
	e.json(&codexOnly, "sessions", "--tool", "codex", "--json")
	if len(codexOnly.Sessions) != 1 || codexOnly.Sessions[0].Tool != "codex" {
		t.Errorf("sessions --tool codex: %+v", codexOnly)
	}
}

// indexedPath indexes path with the real binary into a new store and
// returns the store's path.
func indexedPath(t *testing.T, e *env, path string) string {
	t.Helper()
	db := filepath.Join(e.home, "c.db")
	if out, errOut, code := e.run("--db", db, "index", path, "--json"); code != 0 {
		t.Fatalf("index %s: exit %d %s %s", path, code, out, errOut)
	}
	return db
}

func TestSearchEndToEnd(t *testing.T) {
	corpus := realCorpus(t)
	e := newEnv(t)
	db := indexedPath(t, e, filepath.Join(corpus, "codex"))
	var res struct {
		Hits []struct {
			Tool    string `json:"ai_tool"`
			Snippet string `json:"snippet"`
			Role    string `json:"role"`
		} `json:"hits"`
		Truncated bool `json:"truncated"`
	}
	e.json(&res, "--db", db, "search", "exec_command", "--limit", "5", "--json")
	if len(res.Hits) != 5 || !res.Truncated {
		t.Errorf("want 5 hits and truncated, got %d (truncated=%v)", len(res.Hits), res.Truncated)
	}
	for _, h := range res.Hits {
		if h.Tool != "codex" || !strings.Contains(strings.ToLower(h.Snippet), "exec_command") {
			t.Errorf("hit does not match: %+v", h)
		}
	}
	// User input never becomes FTS syntax.
	for _, q := range []string{`cargo-build`, `it"s`, `"unbalanced`, `a OR`, `NEAR(x y)`, `col:value`, `-v --force`, `(a) AND NOT b*`} {
		out, errOut, code := e.run("--db", db, "search", "--json", "--", q)
		if code != 0 {
			t.Errorf("search %q: exit %d %s %s", q, code, out, errOut)
		}
	}
	// Punctuation only: a clear invalid-input error, exit 2, JSON error body.
	out, _, code := e.run("--db", db, "search", "--json", "--", "---")
	var er struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if code != 2 || json.Unmarshal([]byte(out), &er) != nil || er.Error.Code != "invalid" {
		t.Errorf("search '---': exit %d, %s", code, out)
	}
	// Human output is one line per hit plus the snippet.
	out, _, code = e.run("--db", db, "search", "apply_patch", "--limit", "2")
	if code != 0 || strings.Count(out, "\n") < 4 {
		t.Errorf("human search output:\n%s", out)
	}
}

func TestErrorsAreOneLineAndExitNonZero(t *testing.T) {
	e := newEnv(t)
	missing := filepath.Join(e.home, "nope.db")
	_, errOut, code := e.run("--db", missing, "status")
	if code != 3 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "cortex index") {
		t.Errorf("status on a missing database: exit %d, stderr %q", code, errOut)
	}
	out, _, code := e.run("--db", missing, "status", "--json")
	if code != 3 || !strings.Contains(out, `"not_found"`) {
		t.Errorf("--json error: exit %d, %s", code, out)
	}
	_, errOut, code = e.run("--db", missing, "search", "x", "--since", "last tuesday")
	if code != 2 || !strings.Contains(errOut, "--since") {
		t.Errorf("bad --since: exit %d, %s", code, errOut)
	}
	_, errOut, code = e.run("index", "--no-such-flag")
	if code != 2 || !strings.Contains(errOut, "unknown flag") {
		t.Errorf("unknown flag: exit %d, %s", code, errOut)
	}
	_, errOut, code = e.run("--db", filepath.Join(e.home, "x.db"), "index", filepath.Join(e.home, "missing-dir"))
	if code != 3 || !strings.Contains(errOut, "no such file or folder") {
		t.Errorf("index of a missing path: exit %d, %s", code, errOut)
	}
	// A config file with a typo is rejected with its location.
	cfg := filepath.Join(e.home, "bad.toml")
	os.WriteFile(cfg, []byte("dbb = 'x'\n"), 0o644)
	_, errOut, code = e.run("--config", cfg, "config")
	if code != 2 || !strings.Contains(errOut, "dbb") {
		t.Errorf("bad config: exit %d, %s", code, errOut)
	}
}
