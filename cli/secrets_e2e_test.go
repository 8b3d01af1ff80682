package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/rawcodec"
)

func jsonLine(v any) string {
	b, err := json.Marshal(v) // Go's encoder: & < > as \u escapes
	if err != nil {
		panic(err)
	}
	return string(b)
}

// uEscaped writes every character of secret in s as a JSON \u escape.
func uEscaped(line, secret string) string {
	inner, _ := json.Marshal(secret)
	var esc strings.Builder
	for _, c := range secret {
		fmt.Fprintf(&esc, `\u%04x`, c)
	}
	return strings.Replace(line, string(inner[1:len(inner)-1]), esc.String(), 1)
}

// writeSecretTranscripts writes Claude, Codex and Gemini transcripts that
// carry every format in every place a transcript carries text: typed user
// messages (next to abusive words, so incident evidence quotes them), tool
// arguments and output, a tool error, escaped JSON, JSON inside JSON, a
// fully \u-escaped copy, and a line that is not valid JSON.
func writeSecretTranscripts(t *testing.T, dir string, corpus []testcorpus.Secret) {
	t.Helper()
	var claude, codex []string
	var gemini []map[string]any
	ts := func(i, k int) string {
		return time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC).Add(time.Duration(i*20+k) * time.Second).Format("2006-01-02T15:04:05.000Z")
	}
	uuid := func(i, k int) string { return fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", i, k) }
	cl := func(i, k int, typ string, msg map[string]any) map[string]any {
		return map[string]any{"type": typ, "uuid": uuid(i, k), "timestamp": ts(i, k), "sessionId": "secret-session",
			"cwd": "/work/secrets", "message": msg}
	}
	for i, f := range corpus {
		user := jsonLine(cl(i, 0, "user", map[string]any{"role": "user", "content": f.Text}))
		claude = append(claude, user, uEscaped(strings.Replace(user, uuid(i, 0), uuid(i, 9), 1), f.Value))
		claude = append(claude,
			jsonLine(cl(i, 1, "assistant", map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "Running it: " + f.Text},
				map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", i), "name": "Bash", "input": map[string]any{"command": f.Text}},
				map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolm_%d", i), "name": "mcp__vault__write",
					"input": map[string]any{"document": jsonLine(map[string]string{"text": f.Text})}},
			}})),
			jsonLine(cl(i, 2, "user", map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprintf("toolu_%d", i), "is_error": true, "content": "error: rejected " + f.Text},
				map[string]any{"type": "tool_result", "tool_use_id": fmt.Sprintf("toolm_%d", i), "is_error": true, "content": "vault: " + f.Text},
			}})),
			jsonLine(cl(i, 3, "user", map[string]any{"role": "user", "content": "wtf, this is useless garbage, stop it"})),
			`{"type":"user","uuid":"`+uuid(i, 4)+`", this line is broken: `+f.Text,
		)
		args := jsonLine(map[string]string{"cmd": f.Text})
		codex = append(codex,
			jsonLine(map[string]any{"timestamp": ts(i, 5), "type": "event_msg", "payload": map[string]any{"type": "user_message", "message": f.Text}}),
			jsonLine(map[string]any{"timestamp": ts(i, 6), "type": "response_item", "payload": map[string]any{"type": "function_call",
				"name": "shell", "arguments": args, "call_id": fmt.Sprintf("call_%d", i)}}),
			jsonLine(map[string]any{"timestamp": ts(i, 7), "type": "response_item", "payload": map[string]any{"type": "function_call_output",
				"call_id": fmt.Sprintf("call_%d", i), "output": "Exit code: 1\n" + f.Text}}),
		)
		gemini = append(gemini,
			map[string]any{"id": fmt.Sprintf("g%d-u", i), "timestamp": ts(i, 8), "type": "user", "content": f.Text},
			map[string]any{"id": fmt.Sprintf("g%d-a", i), "timestamp": ts(i, 8), "type": "gemini", "content": "ok",
				"toolCalls": []any{map[string]any{"id": fmt.Sprintf("gc%d", i), "name": "run_shell_command", "args": map[string]any{"command": f.Text},
					"status": "error", "result": []any{map[string]any{"functionResponse": map[string]any{"response": map[string]any{"error": f.Text}}}}}}},
		)
	}
	codex = append([]string{jsonLine(map[string]any{"timestamp": ts(0, 0), "type": "session_meta",
		"payload": map[string]any{"id": "019a0000-0000-7000-8000-00000000beef", "cwd": "/work/secrets"}})}, codex...)
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("claude/secret-session.jsonl", strings.Join(claude, "\n")+"\n")
	write("codex/rollout-2026-11-20T10-00-00-019a0000-0000-7000-8000-00000000beef.jsonl", strings.Join(codex, "\n")+"\n")
	write("gemini/session-secrets.json", jsonLine(map[string]any{"sessionId": "gemini-secrets", "projectHash": "abc",
		"startTime": ts(0, 0), "lastUpdated": ts(len(corpus), 0), "messages": gemini}))
}

// TestSecretsNeverStoredOrServed indexes transcripts carrying every format
// of the secret corpus in every place, then looks for any 12-byte piece of
// each secret in the database file's bytes, in every stored value (raw
// records decompressed), and in the output of every surface: the CLI's
// commands, every REST route and every MCP tool.
func TestSecretsNeverStoredOrServed(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes and serves")
	}
	corpus := testcorpus.Secrets(t)
	e := newEnv(t)
	dir := filepath.Join(e.home, "transcripts")
	writeSecretTranscripts(t, dir, corpus)
	db := filepath.Join(e.home, "c.db")
	if out, errOut, code := e.run("--db", db, "index", dir, "--json"); code != 0 {
		t.Fatalf("index: exit %d\n%s%s", code, out, errOut)
	}
	leaks := map[string][]string{} // format → where
	check := func(where, s string) {
		for _, f := range corpus {
			if p := testcorpus.Leak(s, f.Value); p != "" {
				leaks[f.Name] = append(leaks[f.Name], where)
			}
		}
	}

	// Surfaces first (cortex serve writes nothing; the file check is last).
	for _, args := range [][]string{
		{"status", "--json"}, {"sessions", "--json"}, {"ai", "skills", "--json"}, {"ai", "mcp-events", "--json", "--limit", "500"},
		{"ai", "mcp-events", "--errors", "--json", "--limit", "500"}, {"ai", "hook-events", "--json"},
		{"ai", "abuse", "--json", "--limit", "500", "--before", "5", "--after", "5"}, {"ai", "incidents", "--json"},
		{"ai", "investigate", "--all", "--json", "--max-bytes", "16384"}, {"ai", "mcp-incidents", "--json"},
		{"ai", "mcp-investigate", "vault", "--json", "--all"}, {"ai", "hook-incidents", "--json"},
		{"assess", "abuse", "--dry-run", "--json", "--all"}, {"assess", "mcp", "vault", "--dry-run", "--json"},
		{"ai", "llm-invocations", "--json"}, {"logs", "--json"},
	} {
		out, errOut, _ := e.run(append([]string{"--db", db}, args...)...)
		check("cli "+strings.Join(args, " "), out+errOut)
	}
	for _, word := range []string{"curl", "token", "key", "secret", "password", "Authorization", "docker", "mysql", "error", "https", "export", "wtf"} {
		out, errOut, _ := e.run("--db", db, "search", word, "--json", "--limit", "500")
		check("cli search "+word, out+errOut)
	}
	for _, f := range corpus {
		// The secret itself is not searchable (the answer echoes the
		// query, so only the hits are checked).
		out, _, _ := e.run("--db", db, "search", f.Value, "--json")
		var res struct {
			Hits []any `json:"hits"`
		}
		json.Unmarshal([]byte(out), &res)
		if len(res.Hits) > 0 {
			leaks[f.Name] = append(leaks[f.Name], "searchable")
		}
	}

	// REST: every route of the registry.
	admin := "admin-token-for-secret-test"
	e.vars = append(e.vars, "CORTEX_DB="+db, "CORTEX_ADMIN_TOKEN="+admin)
	base := startServe(t, e, "--no-watch")
	params := surfaceParams()
	for _, a := range app.Actions() {
		p := params[a.Name]
		var req *http.Request
		if a.Method == http.MethodGet {
			q := url.Values{}
			for k, v := range p {
				q.Set(k, fmt.Sprint(v))
			}
			req, _ = http.NewRequest("GET", base+a.Path+"?"+q.Encode(), nil)
		} else {
			req, _ = http.NewRequest(a.Method, base+a.Path, strings.NewReader(jsonLine(p)))
		}
		req.Header.Set("Authorization", "Bearer "+admin)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		check("rest "+a.Name, string(b))
	}

	// MCP: every tool, admin scope.
	cs, _ := mcpSession(t, e, db, "--admin")
	for _, a := range app.Actions() {
		// The tool that serves the action: its own, the all-lens tool
		// with its lens or a fold with its view.
		name, fixed := a.MCPCall()
		if name == "" {
			continue // REST and the CLI only
		}
		args := maps.Clone(params[a.Name])
		if args == nil {
			args = map[string]any{}
		}
		maps.Copy(args, fixed)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("mcp %s: %v", a.Name, err)
		}
		b, _ := json.Marshal(res)
		check("mcp "+a.Name, string(b))
	}
	cs.Close()

	// Every stored value, raw records decompressed.
	stored := storedText(t, db)
	check("stored values", stored)
	// The database file's bytes (and a WAL if one is left).
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(db + suffix)
		if err != nil && suffix == "" {
			t.Fatal(err)
		}
		check("file bytes"+suffix, string(b))
	}
	// Sanity: the test sees what it scans.
	for _, want := range []string{"wtf, this is useless garbage", "curl -u admin:", "secret-session"} {
		if !strings.Contains(stored, want) {
			t.Fatalf("stored values lack %q: the scan is not looking at the data", want)
		}
	}
	var names []string
	for n := range leaks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w := leaks[n]
		t.Errorf("%s leaks: %d places, e.g. %v", n, len(w), w[:min(4, len(w))])
	}
	t.Logf("secret corpus: %d formats, %d leaked", len(corpus), len(leaks))
}

// surfaceParams are parameters that make every action answer on the
// secret store (actions without an entry take none).
func surfaceParams() map[string]map[string]any {
	return map[string]map[string]any{
		"search":            {"query": "token", "limit": 500},
		"skill_events":      {"summary": true},
		"abuse":             {"limit": 500, "before": 5, "after": 5},
		"abuse_investigate": {"all": true, "max_bytes": 16384},
		"mcp_events":        {"limit": 500},
		"mcp_investigate":   {"target": "vault", "all": true},
		"hook_investigate":  {"hook": "PostToolUse"},
		"skills_backfill":   {"dry_run": true},
		"redact_rescan":     {"dry_run": true},
		"purge":             {"dry_run": true, "session": "secret-session"},
	}
}

// storedText renders every value of every table (raw records
// decompressed) as text.
func storedText(t *testing.T, path string) string {
	t.Helper()
	conn, err := sql.Open("sqlite", path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	codec, err := rawcodec.New()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	var sb strings.Builder
	for _, table := range tables {
		rs, err := conn.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			continue // virtual tables without content
		}
		cols, _ := rs.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rs.Next() {
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				switch x := v.(type) {
				case []byte:
					if table == "logs" && cols[i] == "raw" {
						if d, err := codec.Decode(x); err == nil {
							x = d
						}
					}
					if table == "raw_blocks" && cols[i] == "data" {
						recs, err := codec.DecodeBlock(x)
						if err != nil {
							t.Fatalf("raw block: %v", err)
						}
						x = bytes.Join(recs, []byte("\n"))
					}
					sb.Write(x)
				default:
					fmt.Fprint(&sb, x)
				}
				sb.WriteByte('\n')
			}
		}
		rs.Close()
	}
	return sb.String()
}
