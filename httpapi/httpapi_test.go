package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/httpapi"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/llm"
)

const (
	readTok  = "read-secret-token"
	adminTok = "admin-secret-token"
)

// newServer serves the handler over a store indexed from the labelled
// sessions.
func newServer(t *testing.T, o httpapi.Options) *httptest.Server {
	t.Helper()
	db, _ := teststore.Indexed(t, testcorpus.Labelled(t))
	svc := app.New(db)
	if err := svc.EnableLLM(context.Background(), llm.DefaultConfig(), nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.NewHandler(svc, o))
	t.Cleanup(srv.Close)
	return srv
}

type response struct {
	status int
	body   map[string]any
	raw    string
}

func do(t *testing.T, srv *httptest.Server, method, path, token string, body string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	r := response{status: res.StatusCode, raw: string(b)}
	if err := json.Unmarshal(b, &r.body); err != nil {
		t.Fatalf("%s %s: body is not a JSON object: %v\n%s", method, path, err, b)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: content type %q", method, path, ct)
	}
	return r
}

func errCode(r response) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// minimal are parameters that make every action answer on the labelled
// store (a test fails when an action is added without an entry here).
var minimal = map[string]string{
	"status": "", "search": "query=deploy", "sessions": "", "skill_events": "summary=true",
	"skill_incidents": "", "skill_investigate": "skill=lavra:lavra-plan", "skill_assess": "skill=lavra:lavra-plan",
	"abuse": "", "abuse_incidents": "", "abuse_investigate": "", "mcp_events": "errors=true", "hook_events": "",
	"llm_invocations": "", "skills_backfill": `{"dry_run":true}`, "help": "",
	"redact_rescan": `{"dry_run":true}`, "purge": `{"dry_run":true,"match":"lavra-plan"}`,
	"mcp_incidents": "", "mcp_investigate": "target=labby", "hook_incidents": "", "hook_investigate": "hook=PostToolUse:Bash",
	"incidents": "", "investigate": "lens=skill",
	"friction_incidents": "", "friction_investigate": "", "signals": "",
	"session_show": "detail=true", "row_show": "",
	"skill_versions": "skill=lavra:lavra-plan", "skill_health": "", "skill_compare": "skill=lavra:lavra-plan&before=2020-01-01",
	"skill_propose": "skill=lavra:lavra-plan&file=../lifecycle/testdata/using-entire/SKILL.md", "skill_evals": "skill=lavra:lavra-plan",
}

// pathValues fills the {name} segments of a route with values of the
// labelled store: a session id and a row id.
func pathValues(t *testing.T, srv *httptest.Server) *strings.Replacer {
	t.Helper()
	r := do(t, srv, "GET", "/api/search?query=deploy&limit=1", adminTok, "")
	hit := r.body["hits"].([]any)[0].(map[string]any)
	return strings.NewReplacer("{session}", hit["ai_session_id"].(string), "{id}", fmt.Sprint(int64(hit["id"].(float64))))
}

func TestEveryActionHasARouteThatAnswers(t *testing.T) {
	srv := newServer(t, httpapi.Options{ReadToken: readTok, AdminToken: adminTok})
	fill := pathValues(t, srv)
	for _, a := range app.Actions() {
		q, ok := minimal[a.Name]
		if !ok {
			t.Errorf("action %s has no REST test parameters", a.Name)
			continue
		}
		var r response
		if a.Method == http.MethodGet {
			path := fill.Replace(a.Path)
			if q != "" {
				path += "?" + q
			}
			r = do(t, srv, "GET", path, adminTok, "")
		} else {
			r = do(t, srv, a.Method, a.Path, adminTok, q)
		}
		if r.status != http.StatusOK {
			t.Errorf("%s %s: %d %s", a.Method, a.Path, r.status, r.raw)
		}
	}
	// The skill-first investigation answers with the labelled incident:
	// its summary by default, the whole bundle with detail=true.
	r := do(t, srv, "GET", "/api/ai/skill-investigate?skill=lavra:lavra-plan", readTok, "")
	sum := r.body["evidence_summary"].([]any)
	inc := sum[0].(map[string]any)["incident"].(map[string]any)
	if len(sum) != 1 || inc["skill_name"] != "lavra:lavra-plan" || r.body["evidence"] != nil || r.body["detail"] != false {
		t.Fatalf("skill-investigate: %s", r.raw[:min(len(r.raw), 400)])
	}
	full := do(t, srv, "GET", "/api/ai/skill-investigate?skill=lavra:lavra-plan&detail=true", readTok, "")
	ev := full.body["evidence"].([]any)
	if len(ev) != 1 || full.body["evidence_summary"] != nil || len(full.raw) <= len(r.raw) {
		t.Fatalf("skill-investigate detail: %d bytes vs summary %d", len(full.raw), len(r.raw))
	}
	// investigate takes any lens's incident by id.
	id := inc["incident_id"].(string)
	byID := do(t, srv, "GET", "/api/ai/investigate?incident_id="+id, readTok, "")
	got := byID.body["evidence_summary"].([]any)[0].(map[string]any)["incident"].(map[string]any)
	if byID.status != 200 || got["incident_id"] != id || got["lens"] != "skill" {
		t.Fatalf("investigate by id: %s", byID.raw[:min(len(byID.raw), 400)])
	}
}

// TestEveryListingPages walks each listing one row at a time with the
// cursor it returns: every page is new, and the pages together are the
// whole listing.
func TestEveryListingPages(t *testing.T) {
	srv := newServer(t, httpapi.Options{ReadToken: readTok, AdminToken: adminTok})
	for _, tc := range []struct{ path, key, id string }{
		{"/api/search?query=the", "hits", "id"},
		{"/api/sessions", "sessions", "ai_session_id"},
		{"/api/ai/skills", "events", "id"},
		{"/api/ai/skills?summary=true", "events", "skill_name"},
		{"/api/ai/mcp-events", "events", "id"},
		{"/api/ai/hooks", "events", "id"},
		{"/api/ai/incidents", "incidents", "incident_id"},
		{"/api/ai/skill-incidents?include_usage=true", "incidents", "incident_id"},
		{"/api/ai/abuse?terms=broken,deploy", "matches", "term"},
	} {
		sep := "?"
		if strings.Contains(tc.path, "?") {
			sep = "&"
		}
		whole := do(t, srv, "GET", tc.path+sep+"limit=100", readTok, "")
		want := len(whole.body[tc.key].([]any))
		if want < 2 {
			t.Errorf("%s: %d rows; the test needs at least 2", tc.path, want)
			continue
		}
		seen := 0
		cursor := ""
		for page := 0; ; page++ {
			r := do(t, srv, "GET", tc.path+sep+"limit=1"+cursor, readTok, "")
			rows := r.body[tc.key].([]any)
			if r.status != 200 || len(rows) != 1 || page > want {
				t.Fatalf("%s page %d: %d %s", tc.path, page, r.status, r.raw[:min(300, len(r.raw))])
			}
			wantRow := whole.body[tc.key].([]any)[seen].(map[string]any)
			if rows[0].(map[string]any)[tc.id] != wantRow[tc.id] {
				t.Errorf("%s page %d: %v, want %v", tc.path, page, rows[0].(map[string]any)[tc.id], wantRow[tc.id])
			}
			seen++
			next, _ := r.body["next"].(string)
			if next == "" {
				break
			}
			cursor = "&cursor=" + next
		}
		if seen != want {
			t.Errorf("%s: %d rows over the pages, %d in one", tc.path, seen, want)
		}
	}
	if r := do(t, srv, "GET", "/api/ai/mcp-events?cursor=nonsense", readTok, ""); r.status != 400 || !strings.Contains(r.raw, "cursor") {
		t.Errorf("bad cursor: %d %s", r.status, r.raw)
	}
}

func TestAuthAndScopes(t *testing.T) {
	srv := newServer(t, httpapi.Options{ReadToken: readTok, AdminToken: adminTok})
	for _, tc := range []struct {
		method, path, token, body string
		status                    int
		code                      string
	}{
		{"GET", "/health", "", "", 200, ""},
		{"GET", "/api/status", "", "", 401, "unauthorized"},
		{"GET", "/api/status", "wrong", "", 401, "unauthorized"},
		{"GET", "/api/status", readTok, "", 200, ""},
		{"GET", "/api/ai/llm-invocations", readTok, "", 403, "forbidden"},
		{"GET", "/api/ai/llm-invocations", adminTok, "", 200, ""},
		{"POST", "/api/ai/skills/backfill", readTok, `{"dry_run":true}`, 403, "forbidden"},
		{"GET", "/api/openapi.json", "", "", 401, "unauthorized"},
		{"GET", "/api/openapi.json", readTok, "", 200, ""},
		{"GET", "/api/nope", readTok, "", 404, "not_found"},
		{"POST", "/api/status", readTok, "", 404, "not_found"},
	} {
		r := do(t, srv, tc.method, tc.path, tc.token, tc.body)
		if r.status != tc.status || errCode(r) != tc.code {
			t.Errorf("%s %s (token %q): %d %s, want %d %s", tc.method, tc.path, tc.token, r.status, r.raw, tc.status, tc.code)
		}
	}
}

func TestOpenModeIsReadOnlyAndLoopbackOnly(t *testing.T) {
	srv := newServer(t, httpapi.Options{})
	if r := do(t, srv, "GET", "/api/status", "", ""); r.status != 200 {
		t.Fatalf("open read: %d", r.status)
	}
	if r := do(t, srv, "GET", "/api/ai/llm-invocations", "", ""); r.status != 403 {
		t.Fatalf("open admin: %d %s", r.status, r.raw)
	}
	for addr, ok := range map[string]bool{"127.0.0.1:3100": true, "localhost:3100": true, "[::1]:3100": true,
		"0.0.0.0:3100": false, "192.168.1.5:3100": false, ":3100": false} {
		err := httpapi.CheckListen(addr, httpapi.Options{})
		if (err == nil) != ok {
			t.Errorf("CheckListen(%s) = %v", addr, err)
		}
		if err := httpapi.CheckListen(addr, httpapi.Options{ReadToken: "x"}); err != nil {
			t.Errorf("with a token, %s: %v", addr, err)
		}
	}
}

func TestParametersAndErrors(t *testing.T) {
	srv := newServer(t, httpapi.Options{ReadToken: readTok, AdminToken: adminTok})
	for _, tc := range []struct {
		path   string
		status int
		want   string
	}{
		{"/api/ai/skill-incidents?limit=abc", 400, `parameter \"limit\" must be an integer`},
		{"/api/ai/skill-incidents?nope=1", 400, `unknown parameter \"nope\"`},
		{"/api/ai/skill-incidents?limit=1&limit=2", 400, "given 2 times"},
		{"/api/ai/skill-incidents?since=yesteryear", 400, "since"},
		{"/api/ai/skill-incidents?agent=vim", 400, "unknown agent"},
		{"/api/ai/skill-incidents?tool=vim", 400, "unknown agent"}, // the older name of agent
		{"/api/ai/skill-incidents?tool=claude&agent=claude", 400, "not both"},
		{"/api/ai/investigate", 400, "incident_id"},
		{"/api/ai/investigate?incident_id=nope-1", 404, "no incident id"},
		{"/api/ai/skill-investigate?incident_id=skill-inc-0000", 404, "skill-inc-0000"},
		{"/api/search", 400, "empty"},
		{"/api/ai/abuse-incidents?terms=crap&terms=useless&limit=5", 200, `"incidents"`},
		{"/api/ai/incidents?lens=skill&lens=mcp&limit=5", 200, `"lens":"skill"`},
	} {
		r := do(t, srv, "GET", tc.path, readTok, "")
		if r.status != tc.status || !strings.Contains(r.raw, tc.want) {
			t.Errorf("GET %s: %d %s, want %d with %q", tc.path, r.status, r.raw, tc.status, tc.want)
		}
	}
	// Repeated and comma-separated list parameters are the same list.
	a := do(t, srv, "GET", "/api/ai/skill-incidents?signals=user_correction_after_skill&signals=tool_failure_after_skill", readTok, "")
	b := do(t, srv, "GET", "/api/ai/skill-incidents?signals=user_correction_after_skill,tool_failure_after_skill", readTok, "")
	c := do(t, srv, "GET", "/api/ai/skill-incidents?signals=user_correction_after_skill", readTok, "")
	if a.status != 200 || a.raw != b.raw || a.body["total_incidents"].(float64) < c.body["total_incidents"].(float64) {
		t.Fatalf("repeated signals: %s\nvs %s", a.raw, b.raw)
	}
	// The write action requires an explicit dry_run.
	for body, want := range map[string]string{
		``:                       "dry_run is required",
		`{}`:                     "dry_run is required",
		`{"dry_run":"yes"}`:      `parameter \"dry_run\" must be true or false`,
		`{"dry_run":true,"x":1}`: `unknown parameter \"x\"`,
		`{"dry_run":true} {}`:    "one JSON object",
	} {
		r := do(t, srv, "POST", "/api/ai/skills/backfill", adminTok, body)
		if r.status != 400 || !strings.Contains(r.raw, want) {
			t.Errorf("backfill body %q: %d %s", body, r.status, r.raw)
		}
	}
	r := do(t, srv, "POST", "/api/ai/skills/backfill", adminTok, `{"dry_run":true,"kinds":["skills","mcp"]}`)
	if r.status != 200 || r.body["dry_run"] != true {
		t.Fatalf("backfill dry run: %s", r.raw)
	}
	// skill_assess never runs a model from REST: a dry-run preview, and a
	// GET writes nothing (no audit row).
	for range 3 {
		r = do(t, srv, "GET", "/api/ai/skill-assess?skill=lavra:lavra-plan", readTok, "")
		if r.status != 200 || r.body["mode"] != "dry_run" {
			t.Fatalf("skill-assess: %s", r.raw[:min(400, len(r.raw))])
		}
		as := r.body["assessments"].([]any)[0].(map[string]any)
		if as["prompt_preview"] == "" || as["invocation_id"] != nil {
			t.Fatalf("skill-assess preview: %v", as)
		}
	}
	r = do(t, srv, "GET", "/api/ai/llm-invocations", adminTok, "")
	if inv := r.body["invocations"].([]any); len(inv) != 0 {
		t.Fatalf("a GET wrote audit rows: %s", r.raw)
	}
}

func TestOpenAPIDescribesEveryAction(t *testing.T) {
	doc := httpapi.OpenAPI("test")
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Paths map[string]map[string]struct {
			OperationID string           `json:"operationId"`
			Parameters  []map[string]any `json:"parameters"`
			RequestBody map[string]any   `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &parsed); err != nil {
		t.Fatal(err)
	}
	for _, a := range app.Actions() {
		op, ok := parsed.Paths[a.Path][strings.ToLower(a.Method)]
		if !ok || op.OperationID != a.Name {
			t.Errorf("%s: no operation at %s %s", a.Name, a.Method, a.Path)
			continue
		}
		var names []string
		for _, p := range op.Parameters {
			if p["deprecated"] != true {
				names = append(names, p["name"].(string))
			}
		}
		if a.Method == "GET" && strings.Join(names, ",") != strings.Join(a.Params(), ",") {
			t.Errorf("%s: parameters %v, registry %v", a.Name, names, a.Params())
		}
		if a.Method == "POST" && op.RequestBody == nil {
			t.Errorf("%s: no request body", a.Name)
		}
	}
	if !bytes.Contains(b, []byte(`"openapi":"3.1.0"`)) {
		t.Fatal("not OpenAPI 3.1")
	}
}

// format=md asks for a Markdown report: investigations and the skill
// assessment preview carry it in report.
func TestMarkdownReports(t *testing.T) {
	srv := newServer(t, httpapi.Options{ReadToken: readTok, AdminToken: adminTok})
	for path, heading := range map[string]string{
		"/api/ai/skill-investigate?skill=lavra:lavra-plan&format=md": "# Cortex investigation — skill `lavra:lavra-plan`",
		"/api/ai/skill-assess?skill=lavra:lavra-plan&format=md":      "# Cortex assessment — skill `lavra:lavra-plan`",
		"/api/ai/hook-investigate?hook=PostToolUse:Bash&format=md":   "# Cortex investigation — hook `PostToolUse:Bash`",
	} {
		r := do(t, srv, "GET", path, readTok, "")
		rep, _ := r.body["report"].(string)
		if r.status != http.StatusOK || !strings.HasPrefix(rep, heading) {
			t.Errorf("%s: %d %v", path, r.status, r.body)
		}
	}
	if r := do(t, srv, "GET", "/api/ai/skill-investigate?format=pdf", readTok, ""); r.status != http.StatusBadRequest {
		t.Errorf("bad format: %d", r.status)
	}
}

// TestSkillLifecycleRoutes: the lifecycle routes answer over REST and
// refuse what only the local CLI may do.
func TestSkillLifecycleRoutes(t *testing.T) {
	srv := newServer(t, httpapi.Options{ReadToken: readTok, AdminToken: adminTok})
	r := do(t, srv, "GET", "/api/ai/skill-health?limit=2", readTok, "")
	if r.status != http.StatusOK || r.body["grade_formula"] == nil || len(r.body["skills"].([]any)) == 0 {
		t.Fatalf("skill-health: %d %.300s", r.status, r.raw)
	}
	for _, q := range []string{"skill=lavra:lavra-plan&write=true", "skill=lavra:lavra-plan&llm=true", "skill=lavra:lavra-plan&file=/etc/passwd"} {
		if r := do(t, srv, "GET", "/api/ai/skill-propose?"+q, readTok, ""); r.status != http.StatusBadRequest || errCode(r) != "invalid" {
			t.Errorf("skill-propose?%s: %d %s", q, r.status, r.raw)
		}
	}
	if r := do(t, srv, "GET", "/api/ai/skill-evals?skill=lavra:lavra-plan&out=/tmp/x", readTok, ""); r.status != http.StatusBadRequest {
		t.Errorf("skill-evals out: %d %s", r.status, r.raw)
	}
	if r := do(t, srv, "GET", "/api/ai/skill-compare?skill=no-such-skill", readTok, ""); r.status != http.StatusNotFound {
		t.Errorf("unknown skill: %d %s", r.status, r.raw)
	}
}
