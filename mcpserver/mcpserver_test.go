package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/llm"
	"github.com/cortexhq/cortex/mcpserver"
)

var (
	reader = app.Caller{Surface: cortex.SurfaceMCP, Scopes: []app.Scope{app.ScopeRead}, Name: "test-read"}
	admin  = app.Caller{Surface: cortex.SurfaceMCP, Scopes: []app.Scope{app.ScopeRead, app.ScopeAdmin}, Name: "test-admin"}
)

// newService indexes the labelled corpus into a fresh store, with the
// LLM runner that audits skill_assess's dry runs (as cortex mcp has).
func newService(t *testing.T) *app.Service {
	t.Helper()
	db, _ := teststore.Indexed(t, testcorpus.Labelled(t))
	svc := app.New(db)
	if err := svc.EnableLLM(context.Background(), llm.DefaultConfig(), nil); err != nil {
		t.Fatal(err)
	}
	return svc
}

// connect runs a server for caller and returns a client session to it.
func connect(t *testing.T, svc *app.Service, caller app.Caller) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpserver.New(svc, caller, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content block, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, not text", res.Content[0])
	}
	return tc.Text
}

// ok checks a successful result and decodes its structured content into
// v; the text content must be the same JSON.
func ok(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(t, res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var fromText, fromStructured any
	if err := json.Unmarshal([]byte(text(t, res)), &fromText); err != nil {
		t.Fatalf("text is not JSON: %v", err)
	}
	json.Unmarshal(raw, &fromStructured)
	if !reflect.DeepEqual(fromText, fromStructured) {
		t.Fatalf("text and structured content differ:\n%s\n%s", text(t, res), raw)
	}
	if _, isObject := fromStructured.(map[string]any); !isObject {
		t.Fatalf("structured content is not an object: %s", raw)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}
}

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// toolError checks an IsError result with the REST error body.
func toolError(t *testing.T, res *mcp.CallToolResult, code string, mentions ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want a tool error %s, got success: %s", code, text(t, res))
	}
	var body errorBody
	if err := json.Unmarshal([]byte(text(t, res)), &body); err != nil {
		t.Fatalf("error text is not the error body: %v: %s", err, text(t, res))
	}
	if body.Error.Code != code {
		t.Fatalf("want code %s, got %+v", code, body.Error)
	}
	for _, m := range mentions {
		if !strings.Contains(body.Error.Message, m) {
			t.Errorf("error message %q does not mention %q", body.Error.Message, m)
		}
	}
}

// TestToolsMatchRegistry fails when a tool is missing, extra, or its
// parameters differ from the action registry's.
func TestToolsMatchRegistry(t *testing.T) {
	cs := connect(t, newService(t), reader)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		if tools[tool.Name] != nil {
			t.Errorf("tool %s listed twice", tool.Name)
		}
		tools[tool.Name] = tool
	}
	actions := app.Actions()
	if len(res.Tools) != len(actions) {
		t.Errorf("%d tools for %d actions", len(res.Tools), len(actions))
	}
	for _, a := range actions {
		tool := tools[a.Name]
		if tool == nil {
			t.Errorf("no tool for action %s", a.Name)
			continue
		}
		want := roundTrip(t, a.Schema())
		if got := roundTrip(t, tool.InputSchema); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: input schema differs from the registry's\n got %v\nwant %v", a.Name, got, want)
		}
		props, _ := want.(map[string]any)["properties"].(map[string]any)
		if len(props) != len(a.Params()) {
			t.Errorf("%s: schema has %d properties for params %v", a.Name, len(props), a.Params())
		}
		suffix := fmt.Sprintf("(scope %s, cost %s)", a.Scope, a.Cost)
		if !strings.HasPrefix(tool.Description, a.Description) || !strings.HasSuffix(tool.Description, suffix) {
			t.Errorf("%s: description %q", a.Name, tool.Description)
		}
		ann := tool.Annotations
		write := a.Cost == app.CostWrite
		if ann == nil || ann.ReadOnlyHint == write || ann.IdempotentHint == write ||
			ann.DestructiveHint == nil || *ann.DestructiveHint != a.Destructive || ann.OpenWorldHint == nil || *ann.OpenWorldHint {
			t.Errorf("%s: annotations %+v", a.Name, ann)
		}
	}
	for name := range tools {
		if _, err := app.ActionByName(name); err != nil {
			t.Errorf("tool %s is not an action", name)
		}
	}
	if tools["skills_backfill"].Annotations.ReadOnlyHint || !tools["skill_investigate"].Annotations.ReadOnlyHint {
		t.Error("skills_backfill must not be read-only, skill_investigate must")
	}

	help, _ := app.ActionByName("help")
	h, err := app.New(nil).Call(context.Background(), reader, help, nil)
	if err != nil {
		t.Fatal(err)
	}
	init := cs.InitializeResult()
	if init.Instructions == "" || init.Instructions != h.(app.Help).Guidance {
		t.Errorf("instructions %q are not the help guidance", init.Instructions)
	}
	if init.ServerInfo.Name != "cortex" || init.ServerInfo.Version != "test" {
		t.Errorf("server info %+v", init.ServerInfo)
	}
}

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type investigation struct {
	Evidence []struct {
		Incident struct {
			SkillName string `json:"skill_name"`
		} `json:"incident"`
		Findings struct {
			FailureModes []struct {
				Category string `json:"category"`
			} `json:"likely_failure_modes"`
		} `json:"deterministic_findings"`
	} `json:"evidence"`
}

func TestSkillInvestigate(t *testing.T) {
	cs := connect(t, newService(t), reader)
	var inv investigation
	ok(t, call(t, cs, "skill_investigate", map[string]any{"skill": "lavra:lavra-plan"}), &inv)
	if len(inv.Evidence) != 1 || inv.Evidence[0].Incident.SkillName != "lavra:lavra-plan" {
		t.Fatalf("evidence: %+v", inv)
	}
	if len(inv.Evidence[0].Findings.FailureModes) == 0 {
		t.Errorf("no findings: %+v", inv)
	}
	// format=md: the text is the Markdown report, the structured answer
	// carries it without the bundles.
	res := call(t, cs, "skill_investigate", map[string]any{"skill": "lavra:lavra-plan", "format": "md"})
	if res.IsError || !strings.HasPrefix(text(t, res), "# Cortex investigation — skill `lavra:lavra-plan`") {
		t.Fatalf("markdown: %s", text(t, res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var md struct {
		Report   string `json:"report"`
		Evidence []any  `json:"evidence"`
		Total    int    `json:"total_incidents"`
	}
	if err := json.Unmarshal(raw, &md); err != nil || md.Report != text(t, res) || len(md.Evidence) != 0 || md.Total != 1 {
		t.Fatalf("structured: %s", raw)
	}
	toolError(t, call(t, cs, "skill_investigate", map[string]any{"skill": "lavra:lavra-plan", "format": "html"}), "invalid", "json or md")
	// No arguments at all, and explicit null, are the defaults.
	var st struct {
		Rows int64 `json:"rows"`
	}
	ok(t, call(t, cs, "status", nil), &st)
	if st.Rows == 0 {
		t.Errorf("status: %+v", st)
	}
	ok(t, call(t, cs, "help", json.RawMessage(`{}`)), nil)
}

func TestInvalidParams(t *testing.T) {
	cs := connect(t, newService(t), reader)
	toolError(t, call(t, cs, "skill_investigate", map[string]any{"limit": "x"}), "invalid", "limit", "integer")
	toolError(t, call(t, cs, "skill_investigate", map[string]any{"nope": 1}), "invalid", "nope", "skill")
	toolError(t, call(t, cs, "search", map[string]any{"query": ""}), "invalid", "empty")
	toolError(t, call(t, cs, "skill_incidents", map[string]any{"since": "last tuesday-ish"}), "invalid", "since")
	toolError(t, call(t, cs, "help", map[string]any{"action": "nope"}), "not_found", "nope")
}

func TestScopes(t *testing.T) {
	svc := newService(t)
	ro, rw := connect(t, svc, reader), connect(t, svc, admin)
	toolError(t, call(t, ro, "llm_invocations", nil), "forbidden", "cortex:admin")
	toolError(t, call(t, ro, "skills_backfill", map[string]any{"dry_run": true}), "forbidden", "cortex:admin")

	// skill_assess from MCP never runs an LLM: findings and a dry-run
	// preview; a read writes nothing (no audit row).
	var assessed struct {
		Mode        string           `json:"mode"`
		Assessments []map[string]any `json:"assessments"`
	}
	ok(t, call(t, ro, "skill_assess", map[string]any{"skill": "lavra:lavra-plan"}), &assessed)
	if len(assessed.Assessments) != 1 {
		t.Errorf("skill_assess: %+v", assessed)
	}
	var audit struct {
		Invocations []struct {
			Action        string `json:"action"`
			Status        string `json:"status"`
			CallerSurface string `json:"caller_surface"`
		} `json:"invocations"`
	}
	ok(t, call(t, rw, "llm_invocations", nil), &audit)
	if len(audit.Invocations) != 0 || assessed.Assessments[0]["prompt_preview"] == "" {
		t.Errorf("audit after skill_assess: %+v; assessment %v", audit, assessed.Assessments[0])
	}

	toolError(t, call(t, rw, "skills_backfill", nil), "invalid", "dry_run")
	toolError(t, call(t, rw, "skills_backfill", map[string]any{"dry_run": "yes"}), "invalid", "dry_run")
	var bf struct {
		DryRun  bool  `json:"dry_run"`
		Scanned int64 `json:"scanned_rows"`
	}
	ok(t, call(t, rw, "skills_backfill", map[string]any{"dry_run": true}), &bf)
	if !bf.DryRun || bf.Scanned == 0 {
		t.Errorf("backfill dry run: %+v", bf)
	}
}

func TestUnknownToolIsAProtocolError(t *testing.T) {
	cs := connect(t, newService(t), reader)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("want a protocol error naming the tool, got %v", err)
	}
}

// TestConcurrentCalls runs calls in parallel on one session (for -race).
func TestConcurrentCalls(t *testing.T) {
	cs := connect(t, newService(t), reader)
	var wg sync.WaitGroup
	for _, name := range []string{"status", "skill_investigate", "skill_incidents", "abuse_investigate", "sessions", "skill_events", "mcp_events", "hook_events"} {
		wg.Go(func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Errorf("%s: %v %+v", name, err, res)
			}
		})
	}
	wg.Wait()
}

// TestHTTPHandler serves the tools over streamable HTTP; the caller comes
// from the request (here a test header standing in for the auth
// middleware).
func TestHTTPHandler(t *testing.T) {
	svc := newService(t)
	h := mcpserver.HTTPHandler(svc, func(r *http.Request) app.Caller {
		if r.Header.Get("X-Test-Admin") == "1" {
			return admin
		}
		return reader
	}, "test")
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, isAdmin := range []bool{false, true} {
		hc := srv.Client()
		if isAdmin {
			hc = &http.Client{Transport: headerTransport{base: http.DefaultTransport, key: "X-Test-Admin", value: "1"}}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil || len(tools.Tools) != len(app.Actions()) {
			t.Fatalf("list tools over HTTP: %v (%d tools)", err, len(tools.Tools))
		}
		var inv investigation
		ok(t, call(t, cs, "skill_investigate", map[string]any{"skill": "lavra:lavra-plan"}), &inv)
		if len(inv.Evidence) != 1 || inv.Evidence[0].Incident.SkillName != "lavra:lavra-plan" {
			t.Errorf("evidence over HTTP: %+v", inv)
		}
		toolError(t, call(t, cs, "skill_investigate", map[string]any{"limit": "x"}), "invalid", "limit")
		if res := call(t, cs, "llm_invocations", nil); isAdmin {
			ok(t, res, nil)
		} else {
			toolError(t, res, "forbidden")
		}
		cs.Close()
	}
}

type headerTransport struct {
	base       http.RoundTripper
	key, value string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return h.base.RoundTrip(r)
}

// TestSessionAndRowAreSummarisedByDefault reads a session and a row the
// way an agent would: short texts unless it asks for detail.
func TestSessionAndRowAreSummarisedByDefault(t *testing.T) {
	db, _ := teststore.Indexed(t, testcorpus.Real(t))
	cs := connect(t, app.New(db), reader)
	var hits struct {
		Hits []struct {
			ID      int64  `json:"id"`
			Session string `json:"ai_session_id"`
		} `json:"hits"`
	}
	ok(t, call(t, cs, "search", map[string]any{"query": "error", "role": "tool_result", "limit": 1}), &hits)
	if len(hits.Hits) == 0 {
		t.Fatal("no hit")
	}
	type page struct {
		Rows []struct {
			Text          string `json:"text"`
			TextTruncated bool   `json:"text_truncated"`
		} `json:"rows"`
		Detail bool `json:"detail"`
	}
	var summary, detail page
	ok(t, call(t, cs, "session_show", map[string]any{"session": hits.Hits[0].Session}), &summary)
	ok(t, call(t, cs, "session_show", map[string]any{"session": hits.Hits[0].Session, "detail": true}), &detail)
	cut := 0
	for i, r := range summary.Rows {
		if len(r.Text) > app.SummaryTextBytes {
			t.Fatalf("summary row of %d bytes", len(r.Text))
		}
		if r.TextTruncated {
			cut++
			if len(detail.Rows[i].Text) <= len(r.Text) {
				t.Fatalf("detail row %d is not longer than its summary", i)
			}
		}
	}
	if len(summary.Rows) == 0 || summary.Detail || !detail.Detail || cut == 0 {
		t.Fatalf("summary: %d rows, %d cut", len(summary.Rows), cut)
	}
	var row struct {
		ID  int64  `json:"id"`
		Raw string `json:"raw"`
	}
	ok(t, call(t, cs, "row_show", map[string]any{"id": hits.Hits[0].ID}), &row)
	if row.ID != hits.Hits[0].ID || row.Raw != "" {
		t.Fatalf("row_show: %+v", row)
	}
	ok(t, call(t, cs, "row_show", map[string]any{"id": hits.Hits[0].ID, "detail": true}), &row)
	if row.Raw == "" {
		t.Fatal("row_show detail: no original record")
	}
	toolError(t, call(t, cs, "row_show", map[string]any{"id": 99999999}), "not_found")
}

// TestSkillLifecycleTools calls the skill lifecycle tools over the MCP
// transport: health and versions answer; writing, the LLM and other files
// are refused to a remote caller.
func TestSkillLifecycleTools(t *testing.T) {
	cs := connect(t, newService(t), reader)
	var health struct {
		Skills []struct {
			Skill string `json:"skill"`
			Runs  int    `json:"runs"`
			Grade string `json:"grade"`
		} `json:"skills"`
		GradeFormula string `json:"grade_formula"`
	}
	ok(t, call(t, cs, "skill_health", map[string]any{}), &health)
	if len(health.Skills) == 0 || health.GradeFormula == "" || health.Skills[0].Grade == "" {
		t.Fatalf("skill_health: %+v", health)
	}
	var versions struct {
		Skill    string           `json:"skill"`
		Versions []map[string]any `json:"versions"`
	}
	ok(t, call(t, cs, "skill_versions", map[string]any{"skill": "lavra:lavra-plan", "diff": true}), &versions)
	if versions.Skill != "lavra:lavra-plan" {
		t.Errorf("skill_versions: %+v", versions)
	}
	var cmp struct {
		Verdict string `json:"verdict"`
	}
	ok(t, call(t, cs, "skill_compare", map[string]any{"skill": "lavra:lavra-plan"}), &cmp)
	if cmp.Verdict != "not_enough_runs" {
		t.Errorf("skill_compare: %+v", cmp)
	}
	toolError(t, call(t, cs, "skill_propose", map[string]any{"skill": "lavra:lavra-plan", "write": true}), "invalid", "local CLI")
	toolError(t, call(t, cs, "skill_propose", map[string]any{"skill": "lavra:lavra-plan", "file": "/etc/passwd"}), "invalid", "SKILL.md")
	toolError(t, call(t, cs, "skill_evals", map[string]any{"skill": "lavra:lavra-plan", "out": t.TempDir()}), "invalid", "local CLI")
	toolError(t, call(t, cs, "skill_versions", map[string]any{}), "invalid", "skill is required")
}
