package mcpserver_test

import (
	"context"
	"encoding/json"
	"maps"
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
// parameters differ from the action registry's: every action is its own
// tool, a view of a fold, served by the all-lens tools, or no tool.
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
		if want := mcpserver.Tools(caller); len(want) != len(res.Tools) {
			t.Errorf("%d tools listed, Tools says %d", len(res.Tools), len(want))
		}
		for _, a := range app.Actions() {
			name, _ := a.MCPCall()
			tool := tools[name]
			listed := a.MCPTool() != "" && caller.Has(a.Scope)
			if (tool != nil) != listed {
				t.Errorf("%s (caller %s): tool %q listed %v, want %v", a.Name, caller.Name, name, tool != nil, listed)
			}
			if !a.OnMCP() && tools[a.Name] != nil {
				t.Errorf("%s is served as %s but listed as a tool of its own", a.Name, a.MCPTool())
			}
			if tool == nil || a.Lens != "" {
				continue // the all-lens tools are actions of their own, checked as such
			}
			// The input schema is the registry's, without its
			// description, additionalProperties and null variants; a
			// fold's is the union of its views' and its selector.
			in := roundTrip(t, tool.InputSchema).(map[string]any)
			props, _ := in["properties"].(map[string]any)
			views := []app.Action{a}
			advertised := map[string]bool{}
			if a.Fold != nil {
				views = nil
				for _, v := range a.Fold.Values() {
					va, _ := a.Fold.Action(v)
					views = append(views, va)
				}
				sel, _ := props[a.Fold.Param].(map[string]any)
				if sel == nil || !reflect.DeepEqual(sel["enum"], roundTrip(t, a.Fold.Values())) ||
					!reflect.DeepEqual(in["required"], []any{a.Fold.Param}) {
					t.Errorf("%s: selector %s of %s: %v (required %v)", a.Name, a.Fold.Param, name, sel, in["required"])
				}
				advertised[a.Fold.Param] = true
			}
			for _, v := range views {
				for _, p := range v.Params() {
					if v.Unlisted(p) == "" {
						advertised[p] = true
					}
				}
			}
			for _, p := range a.Params() {
				if _, ok := props[p]; ok != advertised[p] || !ok && a.Unlisted(p) == "" {
					t.Errorf("%s.%s: advertised %v, unlisted %q", a.Name, p, ok, a.Unlisted(p))
				}
			}
			if len(props) != len(advertised) || in["description"] != nil || in["additionalProperties"] != nil {
				t.Errorf("%s: input schema %v for params %v", a.Name, in, a.Params())
			}
			for _, p := range a.Params() {
				got, ok := props[p].(map[string]any)
				if !ok {
					continue
				}
				want := roundTrip(t, a.Schema().Properties[p]).(map[string]any)
				if !reflect.DeepEqual(got["enum"], want["enum"]) && !reflect.DeepEqual(got["items"], want["items"]) {
					t.Errorf("%s.%s: %v, registry %v", a.Name, p, got, want)
				}
				if typ, isList := got["type"].([]any); isList && slices.Contains(typ, "null") {
					t.Errorf("%s.%s: input type %v admits null", a.Name, p, typ)
				}
			}
			// The output schema names every top-level field of the
			// result: for a view, its anyOf branch and the shared root.
			out := roundTrip(t, tool.OutputSchema).(map[string]any)
			fields := map[string]bool{}
			for f := range outputFields(t, out, a.View) {
				fields[f] = true
			}
			full := roundTrip(t, a.ResultSchema()).(map[string]any)["properties"].(map[string]any)
			for f := range full {
				if !fields[f] {
					t.Errorf("%s: output schema of %s lacks %s", a.Name, name, f)
				}
			}
			if out["type"] != "object" || len(fields) != len(full) {
				t.Errorf("%s: output schema %v, result fields %d", a.Name, out, len(full))
			}
			desc := a.Description
			if a.Fold != nil {
				desc = a.Fold.Description
				if !strings.Contains(desc, a.View+" (") {
					t.Errorf("%s: the description of %s does not name view %s: %q", a.Name, name, a.View, desc)
				}
				if a.Cost != app.CostCheap && !strings.Contains(tool.Description, string(a.Cost)+": ") {
					t.Errorf("%s: the description of %s does not give the cost of view %s: %q", a.Name, name, a.View, tool.Description)
				}
			}
			if !strings.HasPrefix(tool.Description, desc) {
				t.Errorf("%s: description %q", a.Name, tool.Description)
			}
			ann := tool.Annotations
			write := a.Cost == app.CostWrite
			if ann == nil || ann.ReadOnlyHint == write || ann.IdempotentHint == write || ann.OpenWorldHint == nil || *ann.OpenWorldHint ||
				(write && (ann.DestructiveHint == nil || *ann.DestructiveHint != a.Destructive)) {
				t.Errorf("%s: annotations %+v", a.Name, ann)
			}
		}
		folds := map[string]bool{}
		for _, f := range app.Folds() {
			folds[f.Tool] = true
		}
		for name := range tools {
			if _, err := app.ActionByName(name); err != nil && !folds[name] {
				t.Errorf("tool %s is neither an action nor a fold", name)
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

// outputFields are the top-level fields an output schema gives a result
// of view ("" for a tool of its own): its properties, and those of the
// anyOf branch titled with the view.
func outputFields(t *testing.T, out map[string]any, view string) map[string]any {
	t.Helper()
	fields := map[string]any{}
	props, _ := out["properties"].(map[string]any)
	maps.Copy(fields, props)
	branches, _ := out["anyOf"].([]any)
	found := len(branches) == 0
	for _, b := range branches {
		b := b.(map[string]any)
		if slices.Contains(strings.Split(b["title"].(string), ", "), view) {
			bp, _ := b["properties"].(map[string]any)
			maps.Copy(fields, bp)
			found = true
		}
	}
	if !found {
		t.Errorf("no output branch for view %q: %v", view, out)
	}
	return fields
}

// TestToolListBudget keeps what every agent session pays for Cortex's
// tools small: the tools/list answer of a read-only client at most 14 KB
// of JSON, about 3.5k tokens (a token is about 4 bytes); one tool per
// action would be 47 KB (docs/mcp/TOOLS.md). The admin client's list is
// logged.
func TestToolListBudget(t *testing.T) {
	svc := newService(t)
	const budget = 14 << 10
	for _, caller := range []app.Caller{reader, admin} {
		res, err := connect(t, svc, caller).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("tools/list for %s: %d tools, %d bytes, ~%d tokens", caller.Name, len(res.Tools), len(b), len(b)/4)
		if caller.Name == reader.Name && len(b) > budget {
			t.Errorf("tools/list is %d bytes (~%d tokens), over the %d-byte budget; shorten descriptions or schemas",
				len(b), len(b)/4, budget)
		}
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
		"skill_evals":   map[string]any{"skill": "lavra:lavra-plan"}, "skill_investigate": map[string]any{"skill": "lavra:lavra-plan"}}
	var hit struct {
		Hits []struct {
			ID      int64  `json:"id"`
			Session string `json:"ai_session_id"`
		} `json:"hits"`
	}
	ok(t, call(t, cs, "search", map[string]any{"query": "deploy", "limit": 1}), &hit)
	args["session_show"] = map[string]any{"session": hit.Hits[0].Session, "limit": 5}
	args["row_show"] = map[string]any{"id": hit.Hits[0].ID}
	called := map[string]bool{}
	for _, a := range app.Actions() {
		// Every action an MCP client can reach, through the tool that
		// serves it: its own, a fold's view or an all-lens tool.
		name, fixed := a.MCPCall()
		if name == "" {
			continue
		}
		called[name] = true
		params, _ := args[a.Name].(map[string]any)
		params = maps.Clone(params)
		if params == nil {
			params = map[string]any{}
		}
		maps.Copy(params, fixed)
		res := call(t, cs, name, params)
		if res.IsError {
			t.Errorf("%s (%s): %s", a.Name, a.MCPTool(), text(t, res))
			continue
		}
		for _, s := range []*jsonschema.Schema{a.ResultSchema(), outputs[name]} {
			rs, err := s.Resolve(nil)
			if err != nil {
				t.Fatalf("%s: %v", a.Name, err)
			}
			var v any
			json.Unmarshal([]byte(text(t, res)), &v)
			if err := rs.Validate(v); err != nil {
				t.Errorf("%s (%s): result does not match its schema: %v", a.Name, a.MCPTool(), err)
			}
		}
	}
	for name := range outputs {
		if !called[name] {
			t.Errorf("tool %s was not called", name)
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
	for _, c := range []struct{ name, key, value string }{{"status", "", ""}, {"investigate", "lens", "skill"},
		{"incidents", "", ""}, {"sessions", "", ""}, {"events", "kind", "abuse"}, {"events", "kind", "skill"},
		{"events", "kind", "mcp"}, {"events", "kind", "hook"}, {"skill", "view", "health"}} {
		wg.Go(func() {
			name, args := c.name, map[string]any{}
			if c.key != "" {
				args[c.key] = c.value
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
		want := len(mcpserver.Tools(reader))
		if isAdmin {
			want = len(mcpserver.Tools(admin))
		}
		if err != nil || len(tools.Tools) != want || want >= len(app.Actions()) {
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

// TestSkillLifecycleTools calls the skill lifecycle views of the skill
// tool over the MCP transport: health and versions answer; writing, the
// LLM and other files are refused to a remote caller.
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
	ok(t, call(t, cs, "skill", map[string]any{"view": "health"}), &health)
	if len(health.Skills) == 0 || health.GradeFormula == "" || health.Skills[0].Grade == "" {
		t.Fatalf("skill view=health: %+v", health)
	}
	var versions struct {
		Skill    string           `json:"skill"`
		Versions []map[string]any `json:"versions"`
	}
	ok(t, call(t, cs, "skill", map[string]any{"view": "versions", "skill": "lavra:lavra-plan", "diff": true}), &versions)
	if versions.Skill != "lavra:lavra-plan" {
		t.Errorf("skill view=versions: %+v", versions)
	}
	var cmp struct {
		Verdict string `json:"verdict"`
	}
	ok(t, call(t, cs, "skill", map[string]any{"view": "compare", "skill": "lavra:lavra-plan"}), &cmp)
	if cmp.Verdict != "not_enough_runs" {
		t.Errorf("skill view=compare: %+v", cmp)
	}
	propose := map[string]any{"view": "propose", "skill": "lavra:lavra-plan"}
	toolError(t, call(t, cs, "skill", with(propose, "write", true)), "invalid", "local CLI")
	toolError(t, call(t, cs, "skill", with(propose, "file", "/etc/passwd")), "invalid", "SKILL.md")
	toolError(t, call(t, cs, "skill", map[string]any{"view": "evals", "skill": "lavra:lavra-plan", "out": t.TempDir()}), "invalid", "local CLI")
	toolError(t, call(t, cs, "skill", map[string]any{"view": "versions"}), "invalid", "skill view=versions: a skill is required")
}

// with returns a copy of args with key set to v.
func with(args map[string]any, key string, v any) map[string]any {
	out := maps.Clone(args)
	out[key] = v
	return out
}

// TestFoldedTools calls every view of the folded tools: each answers what
// its action answers through the service, a call is checked against the
// parameters of its view, and a missing or unknown selector is a clear
// tool error.
func TestFoldedTools(t *testing.T) {
	svc := newService(t)
	cs := connect(t, svc, reader)
	for _, f := range app.Folds() {
		for _, v := range f.Values() {
			a, found := f.Action(v)
			if !found {
				t.Fatalf("%s %s=%s: no action", f.Tool, f.Param, v)
			}
			args := map[string]any{}
			if slices.Contains(a.Params(), "skill") {
				args["skill"] = "lavra:lavra-plan"
			}
			if a.Name == "skill_propose" {
				args["file"] = "../lifecycle/testdata/using-entire/SKILL.md"
			}
			direct, err := svc.Call(context.Background(), reader, a, must(a.DecodeJSON(roundTripJSON(t, args))))
			if err != nil {
				t.Fatalf("%s: %v", a.Name, err)
			}
			res := call(t, cs, f.Tool, with(args, f.Param, v))
			ok(t, res, nil)
			if want := string(roundTripJSON(t, direct)); text(t, res) != want {
				t.Errorf("%s %s=%s answers\n%s\nnot what %s answers\n%s", f.Tool, f.Param, v, text(t, res), a.Name, want)
			}
			// A parameter of no view of the fold names the call and the
			// view's own parameters.
			res = call(t, cs, f.Tool, with(with(args, f.Param, v), "nope", 1))
			toolError(t, res, "invalid", f.Tool+" "+f.Param+"="+v+": unknown parameter", "nope", "since")
		}
		toolError(t, call(t, cs, f.Tool, nil), "invalid", f.Param, "required", strings.Join(f.Values(), ", "))
		toolError(t, call(t, cs, f.Tool, map[string]any{f.Param: "nope"}), "invalid", "must be one of", `"nope"`)
		toolError(t, call(t, cs, f.Tool, map[string]any{f.Param: 3}), "invalid", "must be one of")
		toolError(t, call(t, cs, f.Tool, json.RawMessage(`[1]`)), "invalid", "arguments must be a JSON object")
	}
	// A parameter of another view is refused, not ignored.
	toolError(t, call(t, cs, "skill", map[string]any{"view": "health", "diff": true}), "invalid",
		"skill view=health: unknown parameter", "diff")
	toolError(t, call(t, cs, "events", map[string]any{"kind": "skill", "errors": true}), "invalid",
		"events kind=skill: unknown parameter", "errors")
	// Each view keeps its own checks, enums and the older name tool.
	toolError(t, call(t, cs, "events", map[string]any{"kind": "hook", "status": "nope"}), "invalid", "status")
	toolError(t, call(t, cs, "events", map[string]any{"kind": "mcp", "limit": "x"}), "invalid", "limit", "integer")
	var calls struct {
		Events []struct {
			Tool string `json:"ai_tool"`
		} `json:"events"`
	}
	ok(t, call(t, cs, "events", map[string]any{"kind": "mcp", "tool": "codex", "limit": 500}), &calls)
	if len(calls.Events) == 0 {
		t.Fatal("events kind=mcp tool=codex: no calls")
	}
	for _, e := range calls.Events {
		if e.Tool != "codex" {
			t.Fatalf("events kind=mcp tool=codex lists a %s call", e.Tool)
		}
	}
	// Unlisted parameters of a view are accepted.
	ok(t, call(t, cs, "events", map[string]any{"kind": "hook", "evidence_kind": "config_inventory", "hook_event": "Stop"}), nil)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
