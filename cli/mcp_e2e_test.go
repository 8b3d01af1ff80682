package cli_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/llm"
	"github.com/cortexhq/cortex/mcpserver"
	"github.com/cortexhq/cortex/sqlite"
)

// indexedLabelled indexes the labelled sessions with the real binary and
// returns the database path.
func indexedLabelled(t *testing.T, e *env) string {
	t.Helper()
	db := filepath.Join(e.home, "c.db")
	if out, errOut, code := e.run("--db", db, "index", testcorpus.Labelled(t)); code != 0 {
		t.Fatalf("index: exit %d\n%s%s", code, out, errOut)
	}
	return db
}

// mcpSession starts `cortex --db db mcp args…` and connects the Go SDK
// client to it over stdio.
func mcpSession(t *testing.T, e *env, db string, args ...string) (*mcp.ClientSession, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(cortexBin, append([]string{"--db", db, "mcp"}, args...)...)
	cmd.Env = e.vars
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to cortex mcp: %v\nstderr: %s", err, stderr)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

func mcpCall(t *testing.T, cs *mcp.ClientSession, name string, args any, v any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if v != nil {
		if res.IsError {
			t.Fatalf("%s: tool error %+v", name, res.Content)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return res
}

// TestMCPStdioEndToEnd runs `cortex mcp` as an agent would: initialize,
// list the tools, call them.
func TestMCPStdioEndToEnd(t *testing.T) {
	e := newEnv(t)
	db := indexedLabelled(t, e)
	cs, stderr := mcpSession(t, e, db)

	init := cs.InitializeResult()
	if init.ServerInfo.Name != "cortex" || init.Instructions == "" {
		t.Errorf("initialize: %+v", init)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != readTools() {
		t.Errorf("%d tools, want %d", len(tools.Tools), readTools())
	}
	var st struct {
		DBPath string `json:"db_path"`
		Rows   int64  `json:"rows"`
	}
	mcpCall(t, cs, "status", nil, &st)
	if st.Rows == 0 || st.DBPath != db {
		t.Errorf("status: %+v", st)
	}
	// The folded tools: skill events and skill health, each a view.
	var skills struct {
		Events []struct {
			Skill string `json:"skill_name"`
		} `json:"events"`
	}
	mcpCall(t, cs, "events", map[string]any{"kind": "skill", "summary": true}, &skills)
	var health struct {
		Skills []struct {
			Skill string `json:"skill"`
		} `json:"skills"`
	}
	mcpCall(t, cs, "skill", map[string]any{"view": "health"}, &health)
	if len(skills.Events) == 0 || len(health.Skills) == 0 {
		t.Errorf("events kind=skill: %+v; skill view=health: %+v", skills, health)
	}
	if res := mcpCall(t, cs, "skill", map[string]any{"view": "health", "diff": true}, nil); !res.IsError {
		t.Errorf("skill view=health took diff, a parameter of view versions: %+v", res.Content)
	}
	// Without --admin the admin tools are not listed.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "llm_invocations"}); err == nil {
		t.Errorf("llm_invocations answered without --admin")
	}
	cs.Close()
	// A dry run is audited (here one from the CLI); an admin MCP client
	// reads the audit.
	if out, errOut, code := e.run("--db", db, "assess", "skill", "lavra:lavra-plan", "--dry-run"); code != 0 {
		t.Fatalf("assess --dry-run: exit %d %s %s", code, out, errOut)
	}
	if s := stderr.String(); strings.Contains(s, "ERROR") || strings.Contains(s, "panic") {
		t.Errorf("stderr: %s", s)
	}

	adm, _ := mcpSession(t, e, db, "--admin")
	var audit struct {
		Invocations []struct {
			Status        string `json:"status"`
			CallerSurface string `json:"caller_surface"`
		} `json:"invocations"`
	}
	mcpCall(t, adm, "llm_invocations", nil, &audit)
	if len(audit.Invocations) != 1 || audit.Invocations[0].Status != "dry_run" || audit.Invocations[0].CallerSurface != "cli" {
		t.Errorf("audit after a dry run: %+v", audit)
	}
}

// readTools is how many tools a read-only MCP client sees.
func readTools() int {
	return len(mcpserver.Tools(app.Caller{Surface: cortex.SurfaceMCP, Scopes: []app.Scope{app.ScopeRead}}))
}

// TestMCPCreatesTheStoreAndIndexes runs `cortex mcp` as an agent config
// does, with no store yet: it creates it, indexes the agents' folders
// before answering, and keeps watching them.
func TestMCPCreatesTheStoreAndIndexes(t *testing.T) {
	labelled := testcorpus.Labelled(t)
	e := newEnv(t)
	src := filepath.Join(labelled, "claude")
	projects := filepath.Join(e.home, ".claude", "projects", "-work-demo")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		copyFile(t, p, filepath.Join(projects, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(e.home, "fresh", "c.db")
	cs, stderr := mcpSession(t, e, db)
	var st struct {
		Rows       int64            `json:"rows"`
		RowsByTool map[string]int64 `json:"rows_by_tool"`
	}
	mcpCall(t, cs, "status", nil, &st)
	if st.RowsByTool["claude"] == 0 {
		t.Fatalf("status right after start: %+v (stderr %s)", st, stderr)
	}
	// A session written while the server runs is found soon after.
	copyFile(t, filepath.Join(realCorpus(t), "claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"),
		filepath.Join(projects, "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"))
	deadline := time.Now().Add(30 * time.Second)
	for {
		var sessions struct {
			Sessions []struct {
				ID string `json:"ai_session_id"`
			} `json:"sessions"`
		}
		mcpCall(t, cs, "sessions", map[string]any{"limit": 1000}, &sessions)
		found := false
		for _, s := range sessions.Sessions {
			found = found || s.ID == "03eb5929-52b3-4b13-ada3-b93ae35806b8"
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new session was not indexed while cortex mcp ran (stderr %s)", stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

const mcpClientDir = "../tests/mcp-client"

// runTypeScriptClient runs the official TypeScript SDK client and checks
// its summary line.
func runTypeScriptClient(t *testing.T, vars []string, args ...string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(mcpClientDir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("CORTEX_REQUIRE_TS_CLIENT") != "" {
			t.Fatal("the TypeScript MCP client is not installed (npm ci --prefix tests/mcp-client)")
		}
		t.Skip("run npm ci --prefix tests/mcp-client")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("tests/mcp-client/node_modules exists but node is not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(mcpClientDir, "client.mjs")}, args...)...)
	cmd.Env = vars
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("TypeScript client %s: %v\nstdout: %s\nstderr: %s", args[0], err, out.String(), errOut.String())
	}
	var sum struct {
		OK    bool   `json:"ok"`
		Mode  string `json:"mode"`
		Tools int    `json:"tools"`
		Skill string `json:"skill"`
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil || !sum.OK || sum.Mode != args[0] ||
		sum.Tools != readTools() || sum.Skill != "lavra:lavra-plan" {
		t.Fatalf("summary %+v (%v):\n%s", sum, err, out.String())
	}
	t.Logf("TypeScript client: %s", lines[len(lines)-1])
}

// TestTypeScriptClientStdio drives `cortex mcp` with the official
// TypeScript SDK over stdio, as an agent config does on a machine with
// no store yet: the labelled sessions sit where the agents write them,
// and cortex mcp creates the store and indexes them before it answers.
func TestTypeScriptClientStdio(t *testing.T) {
	e := newEnv(t)
	labelled := testcorpus.Labelled(t)
	for agent, dst := range map[string]string{"claude": ".claude/projects/-work-demo", "codex": ".codex/sessions/2026/10/14"} {
		src := filepath.Join(labelled, agent)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			copyFile(t, p, filepath.Join(e.home, dst, rel))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(e.home, "no-store-yet", "c.db")
	runTypeScriptClient(t, e.vars, "stdio", cortexBin, db)
	if _, err := os.Stat(db); err != nil {
		t.Errorf("cortex mcp did not create the store: %v", err)
	}
}

// TestTypeScriptClientHTTP drives mcpserver.HTTPHandler with the official
// TypeScript SDK over streamable HTTP, behind a test bearer-token check
// standing in for the server's auth middleware.
func TestTypeScriptClientHTTP(t *testing.T) {
	e := newEnv(t)
	dbPath := indexedLabelled(t, e)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, dbPath, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := app.New(db)
	if err := svc.EnableLLM(ctx, llm.DefaultConfig(), nil); err != nil {
		t.Fatal(err)
	}
	const token = "e2e-secret-token"
	var authorized, refused atomic.Int64
	h := mcpserver.HTTPHandler(svc, func(*http.Request) app.Caller {
		return app.Caller{Surface: cortex.SurfaceMCP, Scopes: []app.Scope{app.ScopeRead}, Name: "e2e-token"}
	}, "e2e")
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			refused.Add(1)
			http.Error(w, `{"error":{"code":"unauthorized","message":"bearer token required"}}`, http.StatusUnauthorized)
			return
		}
		authorized.Add(1)
		h.ServeHTTP(w, r)
	}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: status %d", resp.StatusCode)
	}
	runTypeScriptClient(t, e.vars, "http", srv.URL+"/mcp", token)
	if authorized.Load() < 3 || refused.Load() != 1 {
		t.Errorf("requests: %d authorized, %d refused", authorized.Load(), refused.Load())
	}
}
