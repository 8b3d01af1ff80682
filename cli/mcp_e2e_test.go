package cli_test

import (
	"context"
	"encoding/json"
	"errors"
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
	if len(tools.Tools) != len(app.Actions()) {
		t.Errorf("%d tools for %d actions", len(tools.Tools), len(app.Actions()))
	}
	var st struct {
		DBPath string `json:"db_path"`
		Rows   int64  `json:"rows"`
	}
	mcpCall(t, cs, "status", nil, &st)
	if st.Rows == 0 || st.DBPath != db {
		t.Errorf("status: %+v", st)
	}
	// Without --admin the admin tools are listed but refused.
	if res := mcpCall(t, cs, "llm_invocations", nil, nil); !res.IsError {
		t.Errorf("llm_invocations without --admin: %+v", res)
	}
	// skill_assess is a read: a dry-run preview that writes nothing.
	var assessed struct {
		Mode string `json:"mode"`
	}
	mcpCall(t, cs, "skill_assess", map[string]any{"skill": "lavra:lavra-plan"}, &assessed)
	cs.Close()
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
	if len(audit.Invocations) != 0 || assessed.Mode != "dry_run" {
		t.Errorf("audit after skill_assess: %+v (mode %s)", audit, assessed.Mode)
	}
}

// TestMCPNeedsADatabase checks that `cortex mcp` never creates an empty
// store: it fails like the read-only commands.
func TestMCPNeedsADatabase(t *testing.T) {
	e := newEnv(t)
	db := filepath.Join(e.home, "missing.db")
	out, errOut, code := e.run("--db", db, "mcp")
	if code != 3 || out != "" || !strings.Contains(errOut, "no database at") || !strings.Contains(errOut, "cortex index") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cortex mcp created %s", db)
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
		sum.Tools != len(app.Actions()) || sum.Skill != "lavra:lavra-plan" {
		t.Fatalf("summary %+v (%v):\n%s", sum, err, out.String())
	}
	t.Logf("TypeScript client: %s", lines[len(lines)-1])
}

// TestTypeScriptClientStdio drives `cortex mcp` with the official
// TypeScript SDK over stdio.
func TestTypeScriptClientStdio(t *testing.T) {
	e := newEnv(t)
	db := indexedLabelled(t, e)
	runTypeScriptClient(t, e.vars, "stdio", cortexBin, db)
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
