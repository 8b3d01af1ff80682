package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/assess"
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
	svc := newService(t)
	for _, caller := range []app.Caller{reader, admin} {
		cs := connect(t, svc, caller)
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
		for _, a := range app.Actions() {
			tool := tools[a.Name]
			listed := a.OnMCP() && caller.Has(a.Scope)
			if (tool != nil) != listed {
				t.Errorf("%s (caller %s): listed %v, want %v", a.Name, caller.Name, tool != nil, listed)
			}
			if tool == nil {
				continue
			}
			// The input schema is the registry's, without its
			// description, additionalProperties and null variants.
			in := roundTrip(t, tool.InputSchema).(map[string]any)
			props, _ := in["properties"].(map[string]any)
			advertised := 0
			for _, p := range a.Params() {
				unlisted := a.Unlisted(p) != ""
				if !unlisted {
					advertised++
				}
				if _, ok := props[p]; ok == unlisted {
					t.Errorf("%s.%s: advertised %v, unlisted %q", a.Name, p, ok, a.Unlisted(p))
				}
			}
			if len(props) != advertised || in["description"] != nil || in["additionalProperties"] != nil {
				t.Errorf("%s: input schema %v for params %v", a.Name, in, a.Params())
			}
			for name, p := range props {
				want := roundTrip(t, a.Schema().Properties[name]).(map[string]any)
				got := p.(map[string]any)
				if !reflect.DeepEqual(got["enum"], want["enum"]) && !reflect.DeepEqual(got["items"], want["items"]) {
					t.Errorf("%s.%s: %v, registry %v", a.Name, name, got, want)
				}
				if typ, isList := got["type"].([]any); isList && slices.Contains(typ, "null") {
					t.Errorf("%s.%s: input type %v admits null", a.Name, name, typ)
				}
			}
			out := roundTrip(t, tool.OutputSchema).(map[string]any)
			outProps, _ := out["properties"].(map[string]any)
			full := roundTrip(t, a.ResultSchema()).(map[string]any)["properties"].(map[string]any)
			if out["type"] != "object" || len(outProps) != len(full) {
				t.Errorf("%s: output schema %v, result fields %d", a.Name, out, len(full))
			}
			if !strings.HasPrefix(tool.Description, a.Description) {
				t.Errorf("%s: description %q", a.Name, tool.Description)
			}
			ann := tool.Annotations
			write := a.Cost == app.CostWrite
			if ann == nil || ann.ReadOnlyHint == write || ann.IdempotentHint == write || ann.OpenWorldHint == nil || *ann.OpenWorldHint ||
				(write && (ann.DestructiveHint == nil || *ann.DestructiveHint != a.Destructive)) {
				t.Errorf("%s: annotations %+v", a.Name, ann)
			}
		}
		for name := range tools {
			if _, err := app.ActionByName(name); err != nil {
				t.Errorf("tool %s is not an action", name)
			}
		}
		init := cs.InitializeResult()
		help, _ := app.ActionByName("help")
		h, err := app.New(nil).Call(context.Background(), caller, help, nil)
		if err != nil {
			t.Fatal(err)
		}
		if init.Instructions == "" || init.Instructions != h.(app.Help).Guidance {
			t.Errorf("instructions %q are not the help guidance", init.Instructions)
		}
		if init.ServerInfo.Name != "cortex" || init.ServerInfo.Version != "test" {
			t.Errorf("server info %+v", init.ServerInfo)
		}
	}
}

// TestToolListBudget keeps what every agent session pays for Cortex's
// tools small: the tools/list answer of a read-only client at most 20 KB
// of JSON, about 5k tokens (a token is about 4 bytes); one tool per
// action would be 47 KB. Without the five skill-author tools it was
// 14 KB, about 3.5k tokens (docs/mcp/TOOLS.md).
func TestToolListBudget(t *testing.T) {
	cs := connect(t, newService(t), reader)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	const budget = 20 << 10
	t.Logf("tools/list: %d tools, %d bytes, ~%d tokens", len(res.Tools), len(b), len(b)/4)
	if len(b) > budget {
		t.Errorf("tools/list is %d bytes (~%d tokens), over the %d-byte budget; shorten descriptions or schemas",
			len(b), len(b)/4, budget)
	}
}

// TestResultsMatchOutputSchemas calls every tool an admin sees and checks
// its structured content against the full result schema the tool's
// output schema was cut from (clients validate against the tool's).
func TestResultsMatchOutputSchemas(t *testing.T) {
	cs := connect(t, newService(t), admin)
	listed, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]*jsonschema.Schema{}
	for _, tool := range listed.Tools {
		var s jsonschema.Schema
		if err := json.Unmarshal(roundTripJSON(t, tool.OutputSchema), &s); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		outputs[tool.Name] = &s
	}
	args := map[string]any{"search": map[string]any{"query": "deploy"}, "skills_backfill": map[string]any{"dry_run": true},
		"investigate": map[string]any{"skill": "lavra:lavra-plan"}, "redact_rescan": map[string]any{"dry_run": true},
		"purge": map[string]any{"dry_run": true, "match": "lavra-plan"}, "skill_versions": map[string]any{"skill": "lavra:lavra-plan"},
		"skill_compare": map[string]any{"skill": "lavra:lavra-plan", "before": "2020-01-01"},
		"skill_propose": map[string]any{"skill": "lavra:lavra-plan", "file": "../lifecycle/testdata/using-entire/SKILL.md"},
		"skill_evals":   map[string]any{"skill": "lavra:lavra-plan"}}
	var hit struct {
		Hits []struct {
			ID      int64  `json:"id"`
			Session string `json:"ai_session_id"`
		} `json:"hits"`
	}
	ok(t, call(t, cs, "search", map[string]any{"query": "deploy", "limit": 1}), &hit)
	args["session_show"] = map[string]any{"session": hit.Hits[0].Session, "limit": 5}
	args["row_show"] = map[string]any{"id": hit.Hits[0].ID}
	for _, a := range app.Actions() {
		if !a.OnMCP() {
			continue
		}
		res := call(t, cs, a.Name, args[a.Name])
		if res.IsError {
			t.Errorf("%s: %s", a.Name, text(t, res))
			continue
		}
		for _, s := range []*jsonschema.Schema{a.ResultSchema(), outputs[a.Name]} {
			rs, err := s.Resolve(nil)
			if err != nil {
				t.Fatalf("%s: %v", a.Name, err)
			}
			var v any
			json.Unmarshal([]byte(text(t, res)), &v)
			if err := rs.Validate(v); err != nil {
				t.Errorf("%s: result does not match its schema: %v", a.Name, err)
			}
		}
	}
	// The detail and summary forms of an investigation both match.
	res := call(t, cs, "investigate", map[string]any{"lens": "skill", "detail": true, "all": true})
	inv, _ := app.ActionByName("investigate")
	rs, _ := inv.ResultSchema().Resolve(nil)
	var v any
	json.Unmarshal([]byte(text(t, res)), &v)
	if err := rs.Validate(v); err != nil {
		t.Errorf("investigate detail: %v", err)
	}
}

func roundTripJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
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
	} `json:"evidence_summary"`
	Detail bool `json:"detail"`
}

func TestSkillInvestigate(t *testing.T) {
	cs := connect(t, newService(t), reader)
	var inv investigation
	ok(t, call(t, cs, "investigate", map[string]any{"skill": "lavra:lavra-plan"}), &inv)
	if len(inv.Evidence) != 1 || inv.Evidence[0].Incident.SkillName != "lavra:lavra-plan" || inv.Detail {
		t.Fatalf("evidence: %+v", inv)
	}
	if len(inv.Evidence[0].Findings.FailureModes) == 0 {
		t.Errorf("no findings: %+v", inv)
	}
	// The summary is a fraction of the whole bundle.
	summary := text(t, call(t, cs, "investigate", map[string]any{"skill": "lavra:lavra-plan"}))
	detail := text(t, call(t, cs, "investigate", map[string]any{"skill": "lavra:lavra-plan", "detail": true}))
	if !strings.Contains(detail, `"evidence":[`) || len(summary)*2 > len(detail) {
		t.Errorf("summary %d bytes, detail %d bytes", len(summary), len(detail))
	}
	// The lens's own action is not a tool; the all-lens tools serve it.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "skill_investigate"}); err == nil {
		t.Error("skill_investigate is listed as a tool")
	}
	var list struct {
		Incidents []struct {
			Lens string `json:"lens"`
		} `json:"incidents"`
	}
	ok(t, call(t, cs, "incidents", map[string]any{"tool": "codex", "skill": "worktree", "lens": []string{"skill"}}), &list)
	if len(list.Incidents) != 1 || list.Incidents[0].Lens != "skill" {
		t.Errorf("incidents of a skill, by the older agent parameter name: %+v", list)
	}
	// A skill alone is a subject of the skill and the friction lens.
	ok(t, call(t, cs, "incidents", map[string]any{"skill": "worktree"}), &list)
	for _, i := range list.Incidents {
		if i.Lens != "skill" && i.Lens != "friction" {
			t.Errorf("incidents of a skill include a %s incident", i.Lens)
		}
	}
	toolError(t, call(t, cs, "incidents", map[string]any{"skill": "x", "hook": "Stop"}), "invalid", "several lenses")
	// format=md: the text is the Markdown report, the structured answer
	// carries it without the bundles.
	res := call(t, cs, "investigate", map[string]any{"skill": "lavra:lavra-plan", "format": "md"})
	if res.IsError || !strings.HasPrefix(text(t, res), "# Cortex investigation — skill `lavra:lavra-plan`") {
		t.Fatalf("markdown: %s", text(t, res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var md struct {
		Report    string `json:"report"`
		Evidence  []any  `json:"evidence"`
		Summaries []any  `json:"evidence_summary"`
		Total     int    `json:"total_incidents"`
	}
	if err := json.Unmarshal(raw, &md); err != nil || md.Report != text(t, res) || len(md.Evidence) != 0 || len(md.Summaries) != 0 || md.Total != 1 {
		t.Fatalf("structured: %s", raw)
	}
	toolError(t, call(t, cs, "investigate", map[string]any{"skill": "lavra:lavra-plan", "format": "html"}), "invalid", "json or md")
	// No arguments at all, and explicit null, are the defaults.
	var st struct {
		Rows int64 `json:"rows"`
	}
	ok(t, call(t, cs, "status", nil), &st)
	if st.Rows == 0 {
		t.Errorf("status: %+v", st)
	}
	ok(t, call(t, cs, "status", json.RawMessage(`{}`)), nil)
	// Tuning parameters are accepted though not listed.
	ok(t, call(t, cs, "investigate", map[string]any{"lens": "skill", "window_minutes": 30, "max_bytes": 200}), nil)
}

func TestInvalidParams(t *testing.T) {
	cs := connect(t, newService(t), reader)
	toolError(t, call(t, cs, "investigate", map[string]any{"limit": "x"}), "invalid", "limit", "integer")
	toolError(t, call(t, cs, "investigate", map[string]any{"nope": 1}), "invalid", "nope", "skill")
	toolError(t, call(t, cs, "search", map[string]any{"query": ""}), "invalid", "empty")
	toolError(t, call(t, cs, "incidents", map[string]any{"since": "last tuesday-ish"}), "invalid", "since")
	toolError(t, call(t, cs, "investigate", map[string]any{"lens": "nope"}), "invalid", "nope")
}

func TestScopes(t *testing.T) {
	svc := newService(t)
	ro, rw := connect(t, svc, reader), connect(t, svc, admin)
	// Admin tools are not listed to a read-only client: calling one is an
	// unknown tool.
	for _, name := range []string{"llm_invocations", "skills_backfill", "redact_rescan", "purge"} {
		if _, err := ro.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"dry_run": true}}); err == nil {
			t.Errorf("%s answered a read-only client", name)
		}
	}

	// skill_assess is no MCP tool (a remote dry run is for people); run
	// remotely elsewhere it is a read: a prompt preview, no audit row.
	if _, err := ro.CallTool(context.Background(), &mcp.CallToolParams{Name: "skill_assess"}); err == nil {
		t.Error("skill_assess is an MCP tool")
	}
	sa, _ := app.ActionByName("skill_assess")
	res, err := svc.Call(context.Background(), app.Caller{Surface: cortex.SurfaceREST, Scopes: []app.Scope{app.ScopeRead}}, sa,
		&app.SkillAssessParams{SkillSubjectParams: app.SkillSubjectParams{Skill: "lavra:lavra-plan"}})
	if err != nil {
		t.Fatal(err)
	}
	assessed := res.(assess.Result)
	var audit struct {
		Invocations []struct {
			Action        string `json:"action"`
			Status        string `json:"status"`
			CallerSurface string `json:"caller_surface"`
		} `json:"invocations"`
	}
	ok(t, call(t, rw, "llm_invocations", nil), &audit)
	if len(audit.Invocations) != 0 || len(assessed.Assessments) == 0 || assessed.Assessments[0].PromptPreview == "" {
		t.Errorf("audit after skill_assess: %+v; assessment %+v", audit, assessed)
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
	for _, name := range []string{"status", "investigate", "incidents", "abuse", "sessions", "skill_events", "mcp_events", "hook_events"} {
		wg.Go(func() {
			args := map[string]any{}
			if name == "investigate" {
				args["lens"] = "skill"
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
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
		want := 0
		for _, a := range app.Actions() {
			if a.OnMCP() && (isAdmin || a.Scope == app.ScopeRead) {
				want++
			}
		}
		if err != nil || len(tools.Tools) != want {
			t.Fatalf("list tools over HTTP: %v (%d tools, want %d)", err, len(tools.Tools), want)
		}
		var inv investigation
		ok(t, call(t, cs, "investigate", map[string]any{"skill": "lavra:lavra-plan"}), &inv)
		if len(inv.Evidence) != 1 || inv.Evidence[0].Incident.SkillName != "lavra:lavra-plan" {
			t.Errorf("evidence over HTTP: %+v", inv)
		}
		toolError(t, call(t, cs, "investigate", map[string]any{"limit": "x"}), "invalid", "limit")
		if isAdmin {
			ok(t, call(t, cs, "llm_invocations", nil), nil)
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
