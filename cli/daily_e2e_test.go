package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSessionsOnTheRealCorpusEndToEnd indexes the real corpus with the
// binary and checks what a daily user sees: sessions with titles,
// durations, models, token usage and cost; no session made of a summary
// alone (nor dated at index time); Codex failures as "exit N: …".
func TestSessionsOnTheRealCorpusEndToEnd(t *testing.T) {
	e := newEnv(t)
	db := indexedPath(t, e, realCorpus(t))
	type usage struct {
		Total struct {
			Input     int64 `json:"input_tokens"`
			Output    int64 `json:"output_tokens"`
			Responses int64 `json:"responses"`
		} `json:"total"`
		CostUSD float64 `json:"cost_usd"`
	}
	var list struct {
		Sessions []struct {
			ID          string   `json:"ai_session_id"`
			Tool        string   `json:"ai_tool"`
			FirstSeen   string   `json:"first_seen"`
			LastSeen    string   `json:"last_seen"`
			Title       string   `json:"title"`
			TitleSource string   `json:"title_source"`
			Duration    float64  `json:"duration_secs"`
			Models      []string `json:"models"`
			Usage       *usage   `json:"usage"`
		} `json:"sessions"`
	}
	e.json(&list, "--db", db, "sessions", "--limit", "1000", "--json")
	if len(list.Sessions) == 0 {
		t.Fatal("no sessions")
	}
	titled, priced, summaries := 0, 0, 0
	for _, s := range list.Sessions {
		// ../shared/corpus/real/claude/claude-code-log/-Users-dain-workspace-claude-code-log-sample/4e27c414-….jsonl
		// holds one summary record and nothing else.
		if strings.HasPrefix(s.ID, "4e27c414-") {
			t.Errorf("a summary-only file became session %s (%s)", s.ID, s.LastSeen)
		}
		if s.LastSeen > "2026-11-01" {
			t.Errorf("session %s is dated %s: the corpus ends in June 2026 (index time leaked in)", s.ID, s.LastSeen)
		}
		if s.Title != "" {
			titled++
		}
		if s.TitleSource == "summary" {
			summaries++
		}
		if s.Usage != nil && s.Usage.CostUSD > 0 && len(s.Models) > 0 {
			priced++
		}
	}
	if titled < len(list.Sessions)*9/10 || summaries == 0 || priced < len(list.Sessions)/2 {
		t.Errorf("%d sessions: %d titled (%d by a summary), %d with usage and cost", len(list.Sessions), titled, summaries, priced)
	}
	// The session of the README example, by hand from its file: 98
	// assistant lines, 47 distinct responses.
	for _, s := range list.Sessions {
		if s.ID == "3b5a9bec-34c4-48d5-9502-dd21f9e1e011" &&
			(s.Usage == nil || s.Usage.Total.Responses != 47 || s.Usage.Total.Input != 5879 || s.Usage.Total.Output != 45373) {
			t.Errorf("session 3b5a9bec usage %+v, want 47 responses, 5879 input, 45373 output tokens", s.Usage)
		}
	}
	out, _, code := e.run("--db", db, "sessions", "--limit", "3")
	if code != 0 || !strings.HasPrefix(out, "LAST SEEN") || !strings.Contains(out, "TOKENS") || !strings.Contains(out, "$") {
		t.Errorf("human sessions:\n%s", out)
	}

	// Incidents carry what the session spent during them.
	var incs struct {
		Incidents []struct {
			ID    string `json:"incident_id"`
			Usage *usage `json:"usage"`
		} `json:"incidents"`
	}
	e.json(&incs, "--db", db, "ai", "incidents", "--limit", "100", "--json")
	withUsage := 0
	for _, i := range incs.Incidents {
		if i.Usage != nil && i.Usage.Total.Responses > 0 {
			withUsage++
		}
	}
	if withUsage == 0 {
		t.Errorf("no incident carries token usage: %+v", incs)
	}

	// Codex failures read "exit N: <output>", not Codex's header.
	var calls struct {
		Events []struct {
			ErrorText string `json:"error_text"`
			ExitCode  *int   `json:"exit_code"`
		} `json:"events"`
	}
	e.json(&calls, "--db", db, "ai", "mcp-events", "--agent", "codex", "--errors", "--limit", "200", "--json")
	exits := 0
	for _, c := range calls.Events {
		if strings.Contains(c.ErrorText, "Chunk ID:") || strings.HasPrefix(c.ErrorText, "Wall time:") {
			t.Errorf("codex error text keeps the header: %.120q", c.ErrorText)
		}
		if c.ExitCode != nil && strings.HasPrefix(c.ErrorText, "exit ") {
			exits++
		}
	}
	if exits == 0 {
		t.Errorf("no codex failure reads exit N: …")
	}
}

// TestConfigAndVersionEndToEnd prints the effective configuration: every
// default filled in, the same keys as JSON, loadable again.
func TestConfigAndVersionEndToEnd(t *testing.T) {
	e := newEnv(t)
	out, _, code := e.run("config")
	for _, want := range []string{"workers = ", "udp = '127.0.0.1:1514'", "queue_size = 65536", ".claude/projects", "[prices.",
		"prices: US dollars per million tokens"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("config lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "workers = 0") || strings.Contains(out, "queue_size = 0") {
		t.Errorf("config prints zeros instead of defaults:\n%s", out)
	}
	path := filepath.Join(e.home, "effective.toml")
	os.WriteFile(path, []byte(out), 0o644)
	if again, errOut, code := e.run("--config", path, "config"); code != 0 || again[strings.Index(again, "\n"):] != out[strings.Index(out, "\n"):] {
		t.Errorf("the printed configuration does not load back the same: exit %d %s", code, errOut)
	}
	var js map[string]any
	e.json(&js, "config", "--json")
	for _, key := range []string{"db", "hostname", "index", "server", "syslog", "llm", "prices", "prices_as_of", "config_file"} {
		if _, ok := js[key]; !ok {
			t.Errorf("config --json lacks %s", key)
		}
	}
	var v struct {
		Version string `json:"version"`
		Schema  int    `json:"schema_version"`
	}
	e.json(&v, "version", "--json")
	vout, _, code := e.run("--version")
	if v.Version == "" || v.Schema < 13 || code != 0 || !strings.HasPrefix(vout, "cortex "+v.Version) {
		t.Errorf("version %+v, --version %q", v, vout)
	}
}

// TestBackfillProgressOnATerminal runs backfill under a pseudo-terminal
// (script(1)): the progress line says how many rows of how many.
func TestBackfillProgressOnATerminal(t *testing.T) {
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed")
	}
	e := newEnv(t)
	db := indexedLabelled(t, e)
	cmd := exec.Command(scriptBin, "-qec", cortexBin+" --db "+db+" ai backfill --all --dry-run", "/dev/null")
	cmd.Env = e.vars
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("backfill: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`scanned [0-9,]+ of [0-9,]+ rows \(100%\)`).Match(out) {
		t.Errorf("no progress with a total:\n%q", out)
	}
}

// TestDynamicCompletionEndToEnd asks the binary for completions the way
// the shell scripts of `cortex completion` do: names come from the store.
func TestDynamicCompletionEndToEnd(t *testing.T) {
	e := newEnv(t)
	db := indexedLabelled(t, e)
	complete := func(args ...string) []string {
		t.Helper()
		out, errOut, code := e.run(append([]string{"--db", db, "__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("__complete %v: exit %d %s", args, code, errOut)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l != "" && !strings.HasPrefix(l, ":") {
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
		}
		return got
	}
	has := func(list []string, want string) bool {
		for _, x := range list {
			if x == want {
				return true
			}
		}
		return false
	}
	if got := complete("ai", "skill-investigate", "lavra"); !has(got, "lavra:lavra-plan") {
		t.Errorf("skill completion: %v", got)
	}
	if got := complete("ai", "mcp-events", "--server", ""); !has(got, "labby") {
		t.Errorf("MCP server completion: %v", got)
	}
	if got := complete("ai", "hook-investigate", "Post"); len(got) == 0 || !strings.HasPrefix(got[0], "Post") {
		t.Errorf("hook completion: %v", got)
	}
	var sessions struct {
		Sessions []struct {
			ID string `json:"ai_session_id"`
		} `json:"sessions"`
	}
	e.json(&sessions, "--db", db, "sessions", "--json")
	id := sessions.Sessions[0].ID
	if got := complete("ai", "skills", "--session", id[:4]); !has(got, id) {
		t.Errorf("session completion of %q: %v", id[:4], got)
	}
	if got := complete("search", "x", "--agent", "co"); len(got) != 1 || got[0] != "codex" {
		t.Errorf("agent completion: %v", got)
	}
	if got := complete("ai", "incidents", "--lens", ""); !has(got, "skill") || !has(got, "abuse") {
		t.Errorf("lens completion: %v", got)
	}
}

// TestSearchAndTablesEndToEnd: the README's search example searches the
// phrase, matches are marked, an empty result inside --since says what
// lies outside it; tables fit COLUMNS, show local time (or --utc), and are
// coloured on a terminal unless NO_COLOR.
func TestSearchAndTablesEndToEnd(t *testing.T) {
	e := newEnv(t)
	db := indexedPath(t, e, filepath.Join(realCorpus(t), "codex"))
	var res struct {
		FTSQuery string `json:"fts_query"`
		Hits     []struct {
			Snippet    string   `json:"snippet"`
			Highlights [][2]int `json:"highlights"`
		} `json:"hits"`
		NewestMatch string `json:"newest_match_outside_range"`
		NewestRow   string `json:"newest_row"`
	}
	// The shell passes `timeout OR "rate limit"` as three arguments.
	e.json(&res, "--db", db, "search", "timeout", "OR", "rate limit", "--json")
	if res.FTSQuery != `("timeout" OR "rate limit")` || len(res.Hits) == 0 {
		t.Fatalf("phrase query: %q, %d hits", res.FTSQuery, len(res.Hits))
	}
	for _, h := range res.Hits {
		if len(h.Highlights) == 0 {
			t.Errorf("no highlight in %q", h.Snippet)
			continue
		}
		if w := strings.ToLower(h.Snippet[h.Highlights[0][0]:h.Highlights[0][1]]); w != "timeout" && w != "rate limit" {
			t.Errorf("highlight %q in %q", w, h.Snippet)
		}
	}
	res.Hits = nil
	e.json(&res, "--db", db, "search", "exec_command", "--since", "2026-11-01", "--json")
	if len(res.Hits) != 0 || res.NewestMatch == "" || res.NewestRow == "" {
		t.Fatalf("empty answer inside --since: %+v", res)
	}
	out, _, _ := e.run("--db", db, "search", "exec_command", "--since", "2026-11-01")
	if !strings.Contains(out, "Older matches exist") || !strings.Contains(out, "newest stored row") {
		t.Errorf("human empty answer:\n%s", out)
	}

	// Tables fit COLUMNS by display width.
	e.vars = append(e.vars, "COLUMNS=80")
	out, _, code := e.run("--db", db, "ai", "mcp-events", "--limit", "20")
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if n := len([]rune(l)); code != 0 || n > 80 && !strings.HasPrefix(l, "(") {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	// Local time by default, UTC with --utc.
	local := append(append([]string{}, e.vars...), "TZ=Asia/Tokyo")
	cmd := exec.Command(cortexBin, "--db", db, "sessions", "--limit", "1")
	cmd.Env = local
	tokyo, _ := cmd.Output()
	cmd = exec.Command(cortexBin, "--db", db, "sessions", "--limit", "1", "--utc")
	cmd.Env = local
	utc, _ := cmd.Output()
	if string(tokyo) == string(utc) || len(tokyo) == 0 {
		t.Errorf("local and UTC times are the same:\n%s\n%s", tokyo, utc)
	}
	// Colour on a terminal, none with NO_COLOR.
	if scriptBin, err := exec.LookPath("script"); err == nil {
		for _, noColor := range []bool{false, true} {
			env := append([]string{}, e.vars...)
			if noColor {
				env = append(env, "NO_COLOR=1")
			}
			cmd := exec.Command(scriptBin, "-qec", cortexBin+" --db "+db+" ai mcp-events --limit 3", "/dev/null")
			cmd.Env = append(env, "TERM=xterm")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("script: %v %s", err, out)
			}
			if colored := strings.Contains(string(out), "\x1b["); colored == noColor {
				t.Errorf("NO_COLOR=%v: coloured %v:\n%q", noColor, colored, out)
			}
		}
	}
}
