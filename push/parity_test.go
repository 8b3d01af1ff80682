package push_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/testpg"
	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/llm"
	"github.com/cortexhq/cortex/push"
)

// noModel is a provider that must never run (the assessments compared are
// dry runs).
type noModel struct{}

func (noModel) Name() string    { return "gemini" }
func (noModel) Program() string { return "none" }
func (noModel) Model() string   { return "none" }
func (noModel) Run(context.Context, string, io.Writer) (string, error) {
	return "", fmt.Errorf("no model in this test")
}

// tickClock advances a millisecond on every reading, so audit records
// made in the same order get the same, distinct times on both stores.
type tickClock struct{ t time.Time }

func (c *tickClock) Now() time.Time {
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// call is one action call of the parity test.
type call struct {
	action string
	params map[string]any
}

// storeBase is where the team store numbers the rows of the first pushing
// store (store_no 1 << 40).
const storeBase = int64(1) << 40

// normalize makes a result comparable across stores: row and event ids in
// the team store's numbering are mapped back, and what names the store
// itself (path, size, schema version, the full-text expression), an audit
// record's random id suffix and the byte counts of texts quoting ids are dropped.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		_, search := x["not_yet_searchable"]
		for k, e := range x {
			if search && (k == "path" || k == "bytes" || k == "segments") {
				continue // where and how each store keeps its search index
			}
			if n, ok := e.(string); ok && (k == "next" || k == "cursor") {
				// A listing's cursor may hold a row id.
				out[k] = normalCursor(n)
				continue
			}
			switch k {
			case "db_path", "db_bytes", "wal_bytes", "schema_version", "fts_query",
				// Sizes of prompts that quote row ids, longer in the
				// team store's numbering (the prompts are compared).
				"evidence_bytes", "prompt_bytes":
				continue
			}
			out[k] = normalize(e)
		}
		return out
	case []any:
		for i := range x {
			x[i] = normalize(x[i])
		}
		return x
	case float64:
		if x >= float64(storeBase) && x < float64(2*storeBase) {
			return x - float64(storeBase)
		}
	case string:
		// An audit record's id ends in random hex.
		x = auditID.ReplaceAllString(x, "$1")
		// A Markdown report's prompt size (see prompt_bytes).
		x = promptSize.ReplaceAllString(x, "the prompt is … bytes, … of them evidence")
		// Ids quoted in texts ("mcp events 1069, 1072").
		return bigID.ReplaceAllStringFunc(x, func(n string) string {
			id, _ := strconv.ParseInt(n, 10, 64)
			if id >= storeBase && id < 2*storeBase {
				return strconv.FormatInt(id-storeBase, 10)
			}
			return n
		})
	}
	return v
}

// normalCursor maps the row id a cursor may hold back to the pushing
// store's numbering.
func normalCursor(s string) string {
	c, err := cortex.DecodeCursor(s)
	if err != nil || c == nil {
		return s
	}
	if c.ID >= storeBase && c.ID < 2*storeBase {
		c.ID -= storeBase
	}
	return c.Encode()
}

var (
	bigID   = regexp.MustCompile(`\b[0-9]{13,}\b`)
	auditID = regexp.MustCompile(`^(llm-[0-9]{8}T[0-9.]+)-[0-9a-f]+$`)
	// promptSize is how a Markdown assessment quotes its prompt's size.
	promptSize = regexp.MustCompile(`the prompt is [0-9]+ bytes, [0-9]+ of them evidence`)
)

func canonical(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.MarshalIndent(normalize(x), "", " ")
	return string(b)
}

// withParam returns a copy of params with k set to v.
func withParam(params map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for pk, pv := range params {
		if pk != k {
			out[pk] = pv
		}
	}
	return out
}

// firstDiff shows where two renderings part.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			lo := max(0, i-3)
			return fmt.Sprintf("line %d:\nsqlite:   %s\npostgres: %s\ncontext:\n%s", i+1, al[i], bl[i], strings.Join(al[lo:i], "\n"))
		}
	}
	return fmt.Sprintf("lengths %d and %d lines", len(al), len(bl))
}

// TestParityRealCorpus indexes the real corpus into SQLite, pushes it to
// PostgreSQL and calls every read action on both stores — sessions, search,
// events, every lens's incidents and each incident's investigation by id,
// session and row viewers, status, dry-run assessments and their audit —
// expecting identical answers (row ids mapped to the pushing store's).
func TestParityRealCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("compares hundreds of answers on the real corpus")
	}
	url := testpg.URL(t)
	ctx := context.Background()
	local, _ := teststore.Indexed(t, testcorpus.Real(t))
	team := openTeam(t, url)
	if _, err := push.Run(ctx, local, team, push.Options{Hostname: "testhost"}); err != nil {
		t.Fatal(err)
	}
	st, err := local.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	newest, _ := cortex.ParseTimestamp(st.Newest)
	now := func() time.Time { return newest.Add(time.Hour) }
	a, b := app.New(local), app.New(team)
	for _, s := range []*app.Service{a, b} {
		s.Now, s.Host = now, "testhost"
		cfg := llm.DefaultConfig()
		if err := s.EnableLLM(ctx, cfg, func(string) (llm.Provider, error) { return noModel{}, nil }, llm.WithClock(&tickClock{now()}),
			llm.WithHost("testhost", 1)); err != nil {
			t.Fatal(err)
		}
	}
	caller := app.Caller{Surface: cortex.SurfaceCLI, Scopes: []app.Scope{app.ScopeRead, app.ScopeAdmin}, Name: "parity"}
	run := func(s *app.Service, c call) (string, string) {
		act, err := app.ActionByName(c.action)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(c.params)
		p, err := act.DecodeJSON(raw)
		if err != nil {
			t.Fatalf("%s %s: %v", c.action, raw, err)
		}
		res, err := s.Call(ctx, caller, act, p)
		if err != nil {
			return "error " + string(cortex.ErrorCode(err)) + ": " + cortex.ErrorMessage(err), ""
		}
		// The store's own cursor of the next page (normalized in the
		// answer compared).
		var next struct {
			Next string `json:"next"`
		}
		b, _ := json.Marshal(res)
		_ = json.Unmarshal(b, &next)
		return canonical(t, res), next.Next
	}
	compared := map[string]int{}
	check := func(c call) string {
		ra, _ := run(a, c)
		rb, _ := run(b, c)
		compared[c.action]++
		if ra != rb {
			raw, _ := json.Marshal(c.params)
			t.Errorf("%s %s differs: %s", c.action, raw, firstDiff(ra, rb))
		}
		return ra
	}
	// pages follows a listing page by page, each store with its own
	// cursors, comparing every page (at most max); it returns how many
	// pages it compared.
	pages := func(c call, max int) int {
		ca, cb := c, c
		for n := 1; ; n++ {
			ra, na := run(a, ca)
			rb, nb := run(b, cb)
			compared[c.action]++
			if ra != rb {
				raw, _ := json.Marshal(ca.params)
				t.Errorf("%s %s (page %d) differs: %s", c.action, raw, n, firstDiff(ra, rb))
				return n
			}
			if na == "" || nb == "" || n == max {
				if (na == "") != (nb == "") {
					t.Errorf("%s: page %d ends the listing on one store only", c.action, n)
				}
				return n
			}
			ca, cb = call{c.action, withParam(c.params, "cursor", na)}, call{c.action, withParam(c.params, "cursor", nb)}
		}
	}

	calls := []call{
		{"status", nil}, {"help", nil},
		{"sessions", map[string]any{"limit": 1000}}, {"sessions", map[string]any{"tool": "codex"}},
		{"sessions", map[string]any{"since": "30d", "host": "testhost"}},
		{"skill_events", map[string]any{"limit": 500}}, {"skill_events", map[string]any{"summary": true, "limit": 500}},
		{"mcp_events", map[string]any{"limit": 500}}, {"mcp_events", map[string]any{"errors": true, "limit": 500}},
		{"mcp_events", map[string]any{"only_mcp": true, "limit": 500}},
		{"hook_events", map[string]any{"limit": 500}}, {"hook_events", map[string]any{"evidence_kind": "runtime_transcript", "limit": 500}},
		{"hook_events", map[string]any{"status": "configured", "limit": 500}}, {"hook_events", map[string]any{"status": "nope"}},
		{"abuse", map[string]any{"limit": 100}},
		{"signals", nil}, {"signals", map[string]any{"tool": "claude"}}, {"signals", map[string]any{"since": "30d", "host": "testhost"}},
		{"skill_health", nil}, {"skill_health", map[string]any{"limit": 200, "tool": "codex"}},
	}
	searches := []string{"error", "permission denied", `"no such file"`, "test*", "git OR npm", "npm install", "failed",
		"mcp__labby__search", "/home", "café", "don't", "TODO fix*", "exit code 1", "rate limit OR timeout"}
	for _, q := range searches {
		calls = append(calls, call{"search", map[string]any{"query": q, "limit": 500}},
			call{"search", map[string]any{"query": q, "role": "user", "limit": 500}},
			call{"search", map[string]any{"query": q, "tool": "claude", "since": "90d", "limit": 50}})
	}
	for _, lens := range []string{"skill", "friction", "mcp", "hook", "abuse"} {
		list := map[string]string{"skill": "skill_incidents", "friction": "friction_incidents", "mcp": "mcp_incidents",
			"hook": "hook_incidents", "abuse": "abuse_incidents"}[lens]
		inv := map[string]string{"skill": "skill_investigate", "friction": "friction_investigate", "mcp": "mcp_investigate",
			"hook": "hook_investigate", "abuse": "abuse_investigate"}[lens]
		out := check(call{list, map[string]any{"limit": 100}})
		check(call{list, map[string]any{"limit": 100, "since": "30d"}})
		check(call{inv, map[string]any{"all": true}})
		var l struct {
			Incidents []struct {
				ID string `json:"incident_id"`
			} `json:"incidents"`
		}
		if err := json.Unmarshal([]byte(out), &l); err != nil {
			t.Fatalf("%s: %v", list, err)
		}
		for i, inc := range l.Incidents {
			calls = append(calls, call{inv, map[string]any{"incident_id": inc.ID, "max_bytes": 4096}})
			if i < 5 {
				// The Markdown report of the same investigation.
				calls = append(calls, call{inv, map[string]any{"incident_id": inc.ID, "format": "md"}})
			}
		}
		if lens == "skill" {
			for i, inc := range l.Incidents[:min(3, len(l.Incidents))] {
				calls = append(calls, call{"skill_assess", map[string]any{"incident_id": inc.ID}})
				if i == 0 {
					calls = append(calls, call{"skill_assess", map[string]any{"incident_id": inc.ID, "format": "md"}})
				}
			}
		}
	}
	// The surfaces of issue 14: listings a page at a time (each store
	// following its own cursors), all-lens incidents with their token
	// cost, investigations as summaries and in detail, search's
	// highlights and the hints of an empty range.
	paged := 0
	for _, c := range []call{
		{"sessions", map[string]any{"limit": 7}}, {"sessions", map[string]any{"agent": "claude", "limit": 5}},
		{"skill_events", map[string]any{"limit": 25}}, {"skill_events", map[string]any{"summary": true, "limit": 4}},
		{"mcp_events", map[string]any{"limit": 60, "agent": "codex"}}, {"hook_events", map[string]any{"limit": 40}},
		{"abuse", map[string]any{"limit": 3}},
		{"search", map[string]any{"query": "error", "limit": 25}}, {"search", map[string]any{"query": "git OR npm", "limit": 40, "role": "user"}},
		{"incidents", map[string]any{"limit": 15}}, {"skill_incidents", map[string]any{"limit": 20}},
		{"mcp_incidents", map[string]any{"limit": 20}}, {"friction_incidents", map[string]any{"limit": 20}},
	} {
		paged += pages(c, 6)
	}
	var hint struct {
		Outside string `json:"newest_match_outside_range"`
		Newest  string `json:"newest_row"`
	}
	_ = json.Unmarshal([]byte(check(call{"search", map[string]any{"query": "error", "since": "2001-01-01", "until": "2001-01-02"}})), &hint)
	if hint.Outside == "" || hint.Newest == "" {
		t.Errorf("a search of an empty range gives no hints: %+v", hint)
	}
	var lit struct {
		Hits []struct {
			Highlights [][2]int `json:"highlights"`
		} `json:"hits"`
	}
	_ = json.Unmarshal([]byte(check(call{"search", map[string]any{"query": "permission denied", "limit": 50}})), &lit)
	if len(lit.Hits) == 0 || len(lit.Hits[0].Highlights) == 0 {
		t.Errorf("search hits without highlights: %+v", lit.Hits)
	}
	calls = append(calls,
		call{"search", map[string]any{"query": "zzqqxxnothing"}},
		call{"incidents", map[string]any{"lens": []string{"skill", "hook"}, "limit": 50}},
		call{"incidents", map[string]any{"signals": []string{"user_correction"}, "limit": 50}},
		call{"incidents", map[string]any{"since": "30d", "limit": 100}},
		call{"investigate", map[string]any{"lens": "mcp"}}, call{"investigate", map[string]any{"lens": "hook", "detail": true}},
		call{"investigate", map[string]any{"lens": "friction", "all": true}})
	var all struct {
		Incidents []struct {
			ID    string          `json:"incident_id"`
			Usage json.RawMessage `json:"usage"`
		} `json:"incidents"`
	}
	if err := json.Unmarshal([]byte(check(call{"incidents", map[string]any{"limit": 500}})), &all); err != nil {
		t.Fatal(err)
	}
	costed := 0
	for i, inc := range all.Incidents {
		if len(inc.Usage) > 0 {
			costed++
		}
		if i%4 == 0 {
			calls = append(calls, call{"investigate", map[string]any{"incident_id": inc.ID}},
				call{"investigate", map[string]any{"incident_id": inc.ID, "detail": true, "max_bytes": 2048}})
		}
	}
	var skills struct {
		Events []struct {
			Name string `json:"skill_name"`
		} `json:"events"`
	}
	_ = json.Unmarshal([]byte(check(call{"skill_events", map[string]any{"summary": true, "limit": 500}})), &skills)
	for _, s := range skills.Events {
		calls = append(calls, call{"skill_investigate", map[string]any{"skill": s.Name}},
			call{"skill_incidents", map[string]any{"skill": s.Name, "include_usage": true}},
			// The skill lifecycle: versions (with the diff of the last
			// two), health, compare, a deterministic proposal, evals.
			call{"skill_versions", map[string]any{"skill": s.Name, "diff": true}},
			call{"skill_health", map[string]any{"skill": s.Name}},
			call{"skill_compare", map[string]any{"skill": s.Name}},
			call{"skill_propose", map[string]any{"skill": s.Name}},
			call{"skill_evals", map[string]any{"skill": s.Name}})
	}
	var sessions struct {
		Sessions []struct {
			ID    string          `json:"ai_session_id"`
			Title string          `json:"title"`
			Usage json.RawMessage `json:"usage"`
		} `json:"sessions"`
	}
	_ = json.Unmarshal([]byte(check(call{"sessions", map[string]any{"limit": 1000}})), &sessions)
	titled, used := 0, 0
	for _, s := range sessions.Sessions {
		if s.Title != "" {
			titled++
		}
		if len(s.Usage) > 0 {
			used++
		}
	}
	// The answers compared carry what the sessions and incidents cost.
	t.Logf("sessions: %d, titled %d, with token usage %d; incidents %d, with token cost %d; listing pages compared %d",
		len(sessions.Sessions), titled, used, len(all.Incidents), costed, paged)
	if titled == 0 || used == 0 || costed == 0 || paged < 30 {
		t.Errorf("titles %d, sessions with usage %d, incidents with cost %d, pages %d: the comparison is not telling much",
			titled, used, costed, paged)
	}
	for i, s := range sessions.Sessions {
		calls = append(calls, call{"session_show", map[string]any{"session": s.ID, "limit": 1000, "detail": i%2 == 0}})
	}
	for id := int64(1); id <= 9000; id += 97 {
		calls = append(calls, call{"row_show", map[string]any{"id": id, "detail": true}})
	}
	versions, diffs, pivots := 0, 0, 0
	for _, c := range calls {
		if c.action == "row_show" {
			// The team store numbers rows from its base.
			ra, _ := run(a, c)
			cb := call{c.action, map[string]any{"id": storeBase + c.params["id"].(int64), "detail": true}}
			rb, _ := run(b, cb)
			compared[c.action]++
			if ra != rb {
				t.Errorf("row_show %d differs: %s", c.params["id"], firstDiff(ra, rb))
			}
			// The session viewer's pages around, after and before the row.
			var row struct {
				Session string `json:"ai_session_id"`
				Agent   string `json:"ai_tool"`
			}
			if json.Unmarshal([]byte(ra), &row) != nil || row.Session == "" {
				continue
			}
			id := c.params["id"].(int64)
			for _, pivot := range []string{"row", "after_id", "before_id"} {
				page := func(s *app.Service, id int64) string {
					out, _ := run(s, call{"session_show", map[string]any{"session": row.Session, "agent": row.Agent, pivot: id, "limit": 12}})
					return out
				}
				// An error names the row by each store's id.
				pa, pb := page(a, id), strings.Replace(page(b, storeBase+id), fmt.Sprint(storeBase+id), fmt.Sprint(id), 1)
				compared["session_show"]++
				pivots++
				if pa != pb {
					t.Errorf("session_show %s=%d differs: %s", pivot, id, firstDiff(pa, pb))
				}
			}
			continue
		}
		out := check(c)
		if c.action == "skill_versions" {
			var v struct {
				Versions []struct {
					Bytes int `json:"bytes"`
				} `json:"versions"`
				Diff *struct {
					Diff string `json:"diff"`
				} `json:"diff"`
			}
			_ = json.Unmarshal([]byte(out), &v)
			versions += len(v.Versions)
			if v.Diff != nil && v.Diff.Diff != "" {
				diffs++
			}
		}
	}
	// The lifecycle answers compared hold versions and their diffs (the
	// skill bodies reached the team store), and session pages were read
	// around rows.
	t.Logf("skill versions compared: %d, with a diff: %d; session pages around a row: %d", versions, diffs, pivots)
	if versions < 10 || diffs == 0 || pivots < 30 {
		t.Errorf("the skill versions compared hold %d versions and %d diffs, %d session pages around a row: the comparison is not telling much",
			versions, diffs, pivots)
	}
	check(call{"llm_invocations", map[string]any{"limit": 500}})
	// Ranked search orders by bm25 on SQLite and ts_rank_cd on PostgreSQL:
	// the hits are the same rows.
	hits := 0
	for _, q := range searches {
		c := call{"search", map[string]any{"query": q, "rank": true, "limit": 500}}
		ids := func(s *app.Service) []float64 {
			out, _ := run(s, c)
			var r struct {
				Hits []struct {
					ID float64 `json:"id"`
				} `json:"hits"`
				Truncated bool `json:"truncated"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("search %q: %v", q, err)
			}
			var ids []float64
			for _, h := range r.Hits {
				ids = append(ids, h.ID)
			}
			if r.Truncated {
				return nil
			}
			sort.Float64s(ids)
			return ids
		}
		ia, ib := ids(a), ids(b)
		hits += len(ia)
		if fmt.Sprint(ia) != fmt.Sprint(ib) {
			t.Errorf("ranked search %q: %d hits on SQLite, %d on PostgreSQL", q, len(ia), len(ib))
		}
	}
	if hits < 100 {
		t.Errorf("the searches found %d rows: the comparison is not telling much", hits)
	}
	names := make([]string, 0, len(compared))
	for k := range compared {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s %d", k, compared[k]))
	}
	t.Logf("compared: %s", strings.Join(parts, ", "))
	for _, act := range app.Actions() {
		if act.Cost != app.CostWrite && compared[act.Name] == 0 {
			t.Errorf("read action %s was not compared", act.Name)
		}
	}
}
