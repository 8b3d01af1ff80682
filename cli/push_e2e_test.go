package cli_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
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

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/cortexhq/cortex/internal/testpg"
	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/store"
)

// digest is what a table holds, as comparable text: per table the row
// count and a hash of every row's id and content columns, in id order.
type digest map[string]string

// digestCols are the columns hashed (as text) besides the id.
var digestCols = map[string][]string{
	"logs":            {"timestamp", "hostname", "message", "ai_session_id", "ai_role", "is_error", "metadata_json"},
	"ai_skill_events": {"skill_name", "timestamp", "event_kind", "body_sha256"},
	"ai_mcp_events":   {"call_id", "status", "output_preview", "is_error"},
	"ai_hook_events":  {"hook_event", "status", "last_seen"},
	"ai_user_events":  {"event_kind", "text", "voice", "voice_version"},
	"ai_token_usage": {"ai_session_id", "usage_key", "timestamp", "model", "input_tokens", "output_tokens", "cache_read_tokens",
		"cache_write_tokens", "reasoning_tokens"},
}

// digestExpr is the text a digest hashes of a row of table (cast is the
// store's cast to text, or "").
func digestExpr(t *testing.T, table, cast, sep string) string {
	t.Helper()
	cols := digestCols[table]
	if len(cols) == 0 {
		t.Fatalf("no digest columns for the pushed table %s", table)
	}
	return "COALESCE(" + strings.Join(cols, cast+", '') || "+sep+" || COALESCE(") + cast + ", '')"
}

func hashRows(rows interface {
	Next() bool
	Scan(...any) error
}, base int64) (int, string, error) {
	h := sha256.New()
	n := 0
	for rows.Next() {
		var id int64
		var rest string
		if err := rows.Scan(&id, &rest); err != nil {
			return 0, "", err
		}
		fmt.Fprintf(h, "%d\x00%s\x01", id-base, rest)
		n++
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// localDigest reads the digest of a laptop's SQLite store.
func localDigest(t *testing.T, path string) digest {
	t.Helper()
	db := teststore.Reader(t, path)
	d := digest{}
	for _, tb := range store.PushTables {
		if tb.Name == "logs" {
			d[tb.Name] = localLogsDigest(t, path, db)
			continue
		}
		d[tb.Name] = localTableDigest(t, db, tb.Name)
	}
	// The skill bodies the events show.
	rows, err := db.Query(`SELECT sha256, bytes || char(31) || lines || char(31) || complete || char(31) || first_seen || char(31) || body
		FROM ai_skill_bodies WHERE sha256 IN (SELECT body_sha256 FROM ai_skill_events) ORDER BY sha256`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	d[bodiesKey] = hashBodies(t, rows)
	return d
}

// localTableDigest is digestExpr's digest of a SQLite table, read value by
// value: a tool call's previews may be stored compressed (a zstd frame),
// which the digest reads decompressed, as the team store holds them.
func localTableDigest(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	digestExpr(t, table, "", "") // the table has digest columns
	cols := digestCols[table]
	rows, err := db.Query(`SELECT id, ` + strings.Join(cols, ", ") + ` FROM ` + table + ` ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	codec, err := rawcodec.New()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	n := 0
	for rows.Next() {
		var id int64
		vals := make([]any, len(cols))
		ptrs := []any{&id}
		for i := range vals {
			ptrs = append(ptrs, &vals[i])
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		texts := make([]string, len(vals))
		for i, v := range vals {
			switch x := v.(type) {
			case int64:
				texts[i] = strconv.FormatInt(x, 10)
			case string:
				texts[i] = x
			case []byte:
				plain, err := codec.Decode(x)
				if err != nil {
					t.Fatal(err)
				}
				texts[i] = string(plain)
			case nil:
			default:
				t.Fatalf("%s.%s: a %T value", table, cols[i], v)
			}
		}
		fmt.Fprintf(h, "%d\x00%s\x01", id, strings.Join(texts, "\x1f"))
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d rows %s", n, hex.EncodeToString(h.Sum(nil)))
}

// bodiesKey is the skill bodies' entry of a digest.
const bodiesKey = "ai_skill_bodies"

func hashBodies(t *testing.T, rows interface {
	Next() bool
	Scan(...any) error
}) string {
	t.Helper()
	h := sha256.New()
	n := 0
	for rows.Next() {
		var sha, rest string
		if err := rows.Scan(&sha, &rest); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s\x00%s\x01", sha, rest)
		n++
	}
	return fmt.Sprintf("%d bodies %s", n, hex.EncodeToString(h.Sum(nil)))
}

// localLogsDigest is the digest of a laptop's logs: a row whose text the
// store reads from its record (an empty BLOB message) is hashed with that
// text, read through the store, as push sends it.
func localLogsDigest(t *testing.T, path string, db *sql.DB) string {
	t.Helper()
	cols := digestCols["logs"]
	i := slices.Index(cols, "message")
	part := func(cs []string) string {
		return "COALESCE(" + strings.Join(cs, ", '') || char(31) || COALESCE(") + ", '')"
	}
	rows, err := db.Query(`SELECT id, message = x'', ` + part(cols[:i]) + `, COALESCE(message, ''), ` + part(cols[i+1:]) +
		` FROM logs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ctx := context.Background()
	var st *sqlite.DB
	h := sha256.New()
	n, fromRecord := 0, 0
	for rows.Next() {
		var id int64
		var readText bool
		var pre, msg, post string
		if err := rows.Scan(&id, &readText, &pre, &msg, &post); err != nil {
			t.Fatal(err)
		}
		if readText {
			if st == nil {
				if st, err = sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true}); err != nil {
					t.Fatal(err)
				}
				defer st.Close()
			}
			r, _, err := st.Row(ctx, id, 0)
			if err != nil {
				t.Fatal(err)
			}
			msg = r.Text
			fromRecord++
		}
		fmt.Fprintf(h, "%d\x00%s\x1f%s\x1f%s\x01", id, pre, msg, post)
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fromRecord == 0 {
		t.Error("no row of the laptop's store reads its text from its record: the digest does not test that push sends it")
	}
	return fmt.Sprintf("%d rows %s", n, hex.EncodeToString(h.Sum(nil)))
}

// teamDigest reads the digest of one pushing store's rows on the team
// store.
func teamDigest(t *testing.T, url string, storeNo int64) digest {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	base := storeNo << 40
	d := digest{}
	for _, tb := range store.PushTables {
		expr := digestExpr(t, tb.Name, "::text", "chr(31)")
		rows, err := conn.Query(ctx, `SELECT id, `+expr+` FROM `+tb.Name+` WHERE id >> 40 = $1 ORDER BY id`, storeNo)
		if err != nil {
			t.Fatal(err)
		}
		n, sum, err := hashRows(rows, base)
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		d[tb.Name] = fmt.Sprintf("%d rows %s", n, sum)
	}
	rows, err := conn.Query(ctx, `SELECT sha256, bytes || chr(31) || lines || chr(31) || complete || chr(31) || first_seen || chr(31) || body
		FROM ai_skill_bodies WHERE store_no = $1 ORDER BY sha256`, storeNo)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	d[bodiesKey] = hashBodies(t, rows)
	return d
}

func sameDigest(t *testing.T, what string, local, team digest) {
	t.Helper()
	for _, tb := range append(store.PushTables, store.Table{Name: bodiesKey}) {
		if local[tb.Name] != team[tb.Name] {
			t.Errorf("%s: %s: laptop %s, team store %s", what, tb.Name, local[tb.Name], team[tb.Name])
		}
	}
}

// TestPushKilledAndResumed kills `cortex push` with SIGKILL at random points
// ten times, then lets it finish: the team store ends with exactly the
// laptop's rows — none lost, none twice — and its counts agree.
func TestPushKilledAndResumed(t *testing.T) {
	url := testpg.URL(t)
	e := newEnv(t)
	dbPath := filepath.Join(e.home, "laptop.db")
	e.vars = append(e.vars, "CORTEX_DB="+dbPath)
	if out, errOut, code := e.run("index", realCorpus(t)); code != 0 {
		t.Fatalf("index: %d %s%s", code, out, errOut)
	}
	pushCmd := func() *exec.Cmd {
		cmd := exec.Command(cortexBin, "push", "--url", url, "--batch-rows", "150", "--json")
		cmd.Env = e.vars
		return cmd
	}
	// An uninterrupted push to another database sets the time scale.
	start := time.Now()
	other := exec.Command(cortexBin, "push", "--url", testpg.URL(t), "--batch-rows", "150", "--json")
	other.Env = e.vars
	if out, err := other.CombinedOutput(); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	full := time.Since(start)
	partial := 0
	for i := range 10 {
		cmd := pushCmd()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(100+rand.Int64N(int64(full/time.Millisecond)/4+1)) * time.Millisecond
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if testpg.Count(t, url, `SELECT count(*) FROM pg_tables WHERE tablename = 'logs'`) == 0 {
			t.Logf("kill %d after %v: before the schema existed", i+1, delay)
			continue
		}
		logs := testpg.Count(t, url, `SELECT count(*) FROM logs`)
		events := testpg.Count(t, url, `SELECT count(*) FROM ai_user_events`)
		t.Logf("kill %d after %v: %d rows, %d user events on the team store", i+1, delay, logs, events)
		if logs > 0 && events == 0 {
			partial++
		}
	}
	if partial == 0 {
		t.Errorf("no kill landed mid-push (push took %v): the test did not test resumption", full)
	}
	out, err := pushCmd().CombinedOutput()
	if err != nil {
		t.Fatalf("final push: %v\n%s", err, out)
	}
	sameDigest(t, "after 10 kills", localDigest(t, dbPath), teamDigest(t, url, 1))
	// The triggers' counts agree with the rows.
	if c, n := testpg.Count(t, url, `SELECT COALESCE(sum(rows), 0)::bigint FROM log_counts`),
		testpg.Count(t, url, `SELECT count(*) FROM logs WHERE ai_tool IS NOT NULL`); c != n {
		t.Errorf("log_counts say %d rows, logs has %d", c, n)
	}
	// And a re-push inserts nothing.
	var again struct {
		Rows int64 `json:"rows"`
	}
	e.json(&again, "push", "--url", url, "--json")
	if again.Rows != 0 {
		t.Errorf("a re-push sent %d rows", again.Rows)
	}
}

// TestPushConcurrentHosts pushes two laptops' stores at the same time:
// both complete, and each one's rows are on the team store under its own
// number and hostname, nothing mixed.
func TestPushConcurrentHosts(t *testing.T) {
	url := testpg.URL(t)
	corpus := realCorpus(t)
	laptops := []struct{ host, dir, db string }{
		{"laptop-a", filepath.Join(corpus, "claude"), ""},
		{"laptop-b", filepath.Join(corpus, "codex"), ""},
	}
	envs := make([]*env, len(laptops))
	for i := range laptops {
		e := newEnv(t)
		laptops[i].db = filepath.Join(e.home, "laptop.db")
		e.vars = append(e.vars, "CORTEX_DB="+laptops[i].db, "CORTEX_HOSTNAME="+laptops[i].host)
		if out, errOut, code := e.run("index", laptops[i].dir, filepath.Join(corpus, "gemini")); code != 0 {
			t.Fatalf("index: %d %s%s", code, out, errOut)
		}
		envs[i] = e
	}
	var wg sync.WaitGroup
	outs := make([]string, len(laptops))
	errs := make([]error, len(laptops))
	for i := range laptops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(cortexBin, "push", "--url", url, "--batch-rows", "300", "--json")
			cmd.Env = envs[i].vars
			b, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(b), err
		}()
	}
	wg.Wait()
	for i, l := range laptops {
		if errs[i] != nil {
			t.Fatalf("%s: push failed: %v\n%s", l.host, errs[i], outs[i])
		}
		no := testpg.Count(t, url, `SELECT store_no FROM push_stores WHERE hostname = $1`, l.host)
		sameDigest(t, l.host, localDigest(t, l.db), teamDigest(t, url, no))
		if n := testpg.Count(t, url, `SELECT count(*) FROM logs WHERE id >> 40 = $1 AND hostname <> $2`, no, l.host); n != 0 {
			t.Errorf("%s: %d of its rows carry another host", l.host, n)
		}
		if n := testpg.Count(t, url, `SELECT count(*) FROM ai_sessions WHERE store_no = $1 AND hostname <> $2`, no, l.host); n != 0 {
			t.Errorf("%s: %d of its sessions carry another host", l.host, n)
		}
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM push_stores`); n != 2 {
		t.Errorf("%d pushing stores, want 2", n)
	}
	// The host filter reads one laptop.
	var sessions struct {
		Sessions []struct {
			Host string `json:"hostname"`
		} `json:"sessions"`
	}
	envs[0].json(&sessions, "--store", url, "sessions", "--host", "laptop-b", "--json")
	if len(sessions.Sessions) == 0 {
		t.Error("no sessions of laptop-b through --store --host")
	}
	for _, s := range sessions.Sessions {
		if s.Host != "laptop-b" {
			t.Errorf("--host laptop-b listed a session of %s", s.Host)
		}
	}

	teamReadCommands(t, url)

	// cortex serve --store: REST routes, MCP and the dashboard over both
	// laptops, with the host filter.
	srv := newEnv(t)
	srv.vars = append(srv.vars, "CORTEX_STORE="+url, "CORTEX_READ_TOKEN=read-token-0123456789", "CORTEX_ADMIN_TOKEN=admin-token-0123456789")
	base := startServe(t, srv)
	var st struct {
		Rows     int64 `json:"rows"`
		Sessions int64 `json:"sessions"`
	}
	if code := getJSON(t, base+"/api/status", "read-token-0123456789", &st); code != 200 || st.Rows == 0 {
		t.Fatalf("status on the team store: %d %+v", code, st)
	}
	var incs struct {
		Incidents []struct {
			Host string `json:"hostname"`
		} `json:"incidents"`
	}
	for _, host := range []string{"laptop-a", "laptop-b"} {
		if code := getJSON(t, base+"/api/ai/friction-incidents?limit=100&host="+host, "read-token-0123456789", &incs); code != 200 {
			t.Fatalf("friction incidents of %s: %d", host, code)
		}
		for _, inc := range incs.Incidents {
			if inc.Host != host {
				t.Errorf("host=%s listed an incident of %s", host, inc.Host)
			}
		}
	}
	req, _ := http.NewRequest("GET", base+"/incidents?host=laptop-a", nil)
	req.Header.Set("Authorization", "Bearer read-token-0123456789")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(page), `name="host" value="laptop-a"`) {
		t.Errorf("dashboard incidents page on the team store: %d", res.StatusCode)
	}
}

// Misused team-store flags fail with a usage error before any connection.
func TestPushAndStoreErrors(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"push"}, 2, "no team store"},
		{[]string{"push", "--url", "mysql://x/y"}, 2, "postgres://"},
		{[]string{"push", "--url", "postgres://h/db", "--content", "some"}, 2, "full, redacted or none"},
		{[]string{"push", "--watch", "--interval", "0s"}, 2, "--interval"},
		{[]string{"--store", "/tmp/x.db", "status"}, 2, "postgres:// URL"},
		{[]string{"--store", "postgres://h/db", "index"}, 2, "cortex push"},
		{[]string{"--store", "postgres://h/db", "watch"}, 2, "cortex push"},
		{[]string{"--store", "postgres://h/db", "push"}, 2, "cortex push"},
		{[]string{"--store", "postgres://h/db", "redact", "--rescan"}, 2, "cortex push"},
		{[]string{"--store", "postgres://h/db", "purge", "--session", "s1", "--dry-run"}, 2, "cortex push"},
		{[]string{"--store", "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=2", "status"}, 7, "cannot connect"},
	} {
		out, errOut, code := e.run(c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.msg) {
			t.Errorf("cortex %s: exit %d (want %d)\n%s%s", strings.Join(c.args, " "), code, c.code, out, errOut)
		}
		if strings.Contains(out+errOut, "s3cret") {
			t.Errorf("cortex %s printed the password", strings.Join(c.args, " "))
		}
	}
}

// teamReadCommands runs the read commands on a team store with the flags of
// the surfaces rework: listings page by page with --cursor, --agent, the
// all-lens incidents with their token cost, --utc tables, and shell
// completion reading names from the team store (this machine has no local
// store at all).
func teamReadCommands(t *testing.T, url string) {
	e := newEnv(t)
	type page struct {
		Sessions []struct {
			ID    string `json:"ai_session_id"`
			Agent string `json:"ai_tool"`
			Title string `json:"title"`
		} `json:"sessions"`
		Next string `json:"next"`
	}
	var p1, p2 page
	e.json(&p1, "--store", url, "sessions", "--agent", "codex", "--limit", "3", "--json")
	if len(p1.Sessions) != 3 || p1.Next == "" {
		t.Fatalf("first page of codex sessions: %+v", p1)
	}
	e.json(&p2, "--store", url, "sessions", "--agent", "codex", "--limit", "3", "--cursor", p1.Next, "--json")
	seen := map[string]bool{}
	for _, s := range append(p1.Sessions, p2.Sessions...) {
		if seen[s.ID] || s.Agent != "codex" || s.Title == "" {
			t.Errorf("session %+v: repeated, of another agent or untitled", s)
		}
		seen[s.ID] = true
	}
	if len(p2.Sessions) == 0 {
		t.Error("no second page of sessions")
	}
	var incs struct {
		Incidents []struct {
			Lens  string          `json:"lens"`
			Usage json.RawMessage `json:"usage"`
		} `json:"incidents"`
		Next string `json:"next"`
	}
	e.json(&incs, "--store", url, "ai", "incidents", "--limit", "5", "--json")
	if len(incs.Incidents) != 5 || incs.Next == "" {
		t.Fatalf("all-lens incidents on the team store: %+v", incs)
	}
	out, errOut, code := e.run("--store", url, "--utc", "sessions", "--agent", "claude", "--limit", "5")
	if code != 0 || !strings.Contains(out, "TITLE") || !strings.Contains(out, "TOKENS") || !strings.Contains(out, "COST") {
		t.Errorf("sessions table on the team store: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = e.run("--store", url, "__complete", "search", "error", "--session", "")
	if code != 0 || len(strings.Fields(out)) < 3 {
		t.Errorf("session ids completed from the team store: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = e.run("__complete", "search", "error", "--session", "")
	if strings.Contains(out, p1.Sessions[0].ID) {
		t.Errorf("without --store the completion read a team store:\n%s", out)
	}
	// cortex mcp --store serves the team store as it is: no local store
	// is made, nothing is indexed.
	local := filepath.Join(e.home, "local.db")
	cs, stderr := mcpSession(t, e, local, "--store", url)
	var p3 page
	mcpCall(t, cs, "sessions", map[string]any{"agent": "codex", "limit": 3}, &p3)
	if len(p3.Sessions) != 3 || p3.Next != p1.Next {
		t.Errorf("sessions over MCP on the team store: %+v (next %q, the CLI's %q)", p3, p3.Next, p1.Next)
	}
	mcpCall(t, cs, "incidents", map[string]any{"limit": 5}, &incs)
	if len(incs.Incidents) != 5 {
		t.Errorf("incidents over MCP on the team store: %+v", incs)
	}
	// The folded tools (events kind=…, skill view=…) read the team store
	// too, and a bad selector value is refused there as on a laptop.
	var calls struct {
		Events []struct {
			Host string `json:"hostname"`
		} `json:"events"`
	}
	mcpCall(t, cs, "events", map[string]any{"kind": "mcp", "host": "laptop-b", "limit": 5}, &calls)
	if len(calls.Events) == 0 {
		t.Error("events kind=mcp host=laptop-b on the team store: no events")
	}
	for _, ev := range calls.Events {
		if ev.Host != "laptop-b" {
			t.Errorf("events kind=mcp host=laptop-b: an event of %s", ev.Host)
		}
	}
	var health struct {
		Skills []json.RawMessage `json:"skills"`
	}
	mcpCall(t, cs, "skill", map[string]any{"view": "health"}, &health)
	if len(health.Skills) == 0 {
		t.Error("skill view=health on the team store: no skills")
	}
	var skill struct {
		Skill string `json:"skill"`
	}
	if len(health.Skills) > 0 && json.Unmarshal(health.Skills[0], &skill) == nil {
		// skill-propose reads the team store too (this machine has no
		// local store).
		file := filepath.Join(e.home, "SKILL.md")
		if err := os.WriteFile(file, []byte("---\nname: "+skill.Skill+"\n---\n\n# Use\n\nRun it.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := e.run("--store", url, "ai", "skill-propose", skill.Skill, "--file", file, "--json")
		if code != 0 || !strings.Contains(out, `"skill"`) {
			t.Errorf("skill-propose %s on the team store: exit %d\n%s%s", skill.Skill, code, out, errOut)
		}
	}
	if res := mcpCall(t, cs, "events", map[string]any{"kind": "hook", "status": "nope"}, nil); !res.IsError {
		t.Error("events kind=hook status=nope on the team store: no error")
	}
	cs.Close()
	if _, err := os.Stat(local); err == nil {
		t.Errorf("cortex mcp --store made a local store\n%s", stderr)
	}
}
