package incident

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/store"
)

// ---- detectors (no store) ----

// mcpTestGroup is a labby/search group of calls given as "fail", "ok",
// "pending" or "fail:<error text>", one minute apart from t0+1m (event ids
// 1.., result rows 101..).
func mcpTestGroup(spec ...string) (*group, mcpInput) {
	g := &group{Key: groupKey{Tool: cortex.ToolClaude, Host: "h", Session: "s", Subject: [3]string{"labby", "search"}}}
	in := mcpInput{calls: map[int64]mcpCall{}}
	for i, sp := range spec {
		id, at := int64(i+1), t0.Add(time.Duration(i+1)*time.Minute)
		outcome, text, _ := strings.Cut(sp, ":")
		c := mcpCall{ID: id, LogID: 100 + id, At: at, Failed: outcome == "fail", Succeeded: outcome == "ok"}
		if c.Failed {
			c.ErrorText = text
		}
		in.calls[id] = c
		in.server = append(in.server, c)
		g.Members = append(g.Members, member{ID: id, LogID: 50 + id, At: at, Key: g.Key})
	}
	g.First, g.Last = g.Members[0].At, g.Members[len(g.Members)-1].At
	return g, in
}

func mcpText(id int64, at time.Duration, text string) textRow {
	return textRow{ID: id, At: t0.Add(at), Text: text}
}

func TestMCPFailureSignals(t *testing.T) {
	w := 10 * time.Minute
	cases := []struct {
		name  string
		spec  []string
		users []textRow
		want  map[string]int
	}{
		{"a streak of failures", []string{"fail:request timed out", "fail:request timed out", "fail:rate limit exceeded"}, nil,
			map[string]int{cortex.SignalRepeatedFailure: 3, cortex.SignalTimeoutOrRateLimit: 3}},
		{"failures spread over successes are normal work", []string{"fail:timed out", "ok", "fail:timed out", "ok", "ok"}, nil,
			map[string]int{}},
		{"failures ending the group unrecovered", []string{"fail:boom", "ok", "fail:401 Unauthorized"}, nil,
			map[string]int{cortex.SignalRepeatedFailure: 2, cortex.SignalAuthFailure: 1}},
		{"a lone failure recovered", []string{"fail:request timed out", "ok"}, nil, map[string]int{}},
		{"a lone failure never recovered", []string{"ok", "fail:Invalid arguments: missing required query"}, nil,
			map[string]int{cortex.SignalSchemaError: 1}},
		{"a lone plain failure never recovered", []string{"fail:TypeError: x is not a function"}, nil, map[string]int{}},
		{"a lone recovered failure with a correction after it", []string{"fail:Unknown tool: serch", "ok"},
			[]textRow{mcpText(9, 150*time.Second, "that's the wrong tool")},
			map[string]int{cortex.SignalUnknownToolOrServer: 1, cortex.SignalCorrectionAfterCall: 1}},
		{"pending outcomes are neither", []string{"fail:timed out", "pending", "fail:timed out"}, nil,
			map[string]int{cortex.SignalRepeatedFailure: 2, cortex.SignalTimeoutOrRateLimit: 2}},
		{"all success", []string{"ok", "ok"}, nil, map[string]int{}},
	}
	for _, c := range cases {
		g, in := mcpTestGroup(c.spec...)
		in.users = c.users
		detectMCP(g, in, w)
		got := map[string]int{}
		for s, n := range g.Signals {
			if n > 0 {
				got[s] = n
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: signals %v, want %v", c.name, got, c.want)
		}
		if g.EventCount != len(c.spec) || !g.SignalEnd.Equal(g.Last.Add(w)) {
			t.Errorf("%s: event count %d, signal end %v", c.name, g.EventCount, g.SignalEnd)
		}
		// Failure anchors are the result rows.
		for _, a := range g.Anchors {
			if slices.Contains(a.Signals, cortex.SignalRepeatedFailure) && (a.LogID < 101 || a.LogID > 199) {
				t.Errorf("%s: anchor %d is not a result row", c.name, a.LogID)
			}
		}
	}
}

func TestMCPCorrectionAfterCall(t *testing.T) {
	w := 10 * time.Minute
	cases := []struct {
		name  string
		users []textRow
		want  int
	}{
		// After a successful call a correction is charged to the tool only
		// when it is about it: it names the server or tool, or the choice
		// of tool.
		{"a correction about something else", []textRow{mcpText(1, 0, "search the docs"), mcpText(2, 90*time.Second, "No, that's wrong.")}, 0},
		{"a correction naming the server", []textRow{mcpText(2, 90*time.Second, "the page labby returned is not it, that's wrong")}, 1},
		{"tool-choice correction", []textRow{mcpText(2, 90*time.Second, "You used the wrong server for that")}, 1},
		{"the user spoke in between", []textRow{mcpText(2, 70*time.Second, "thanks"), mcpText(3, 90*time.Second, "that's wrong")}, 0},
		{"before any call", []textRow{mcpText(2, 30*time.Second, "that's wrong, use labby")}, 0},
		{"after the window", []textRow{mcpText(2, 20*time.Minute, "that's wrong")}, 0},
		{"quoted", []textRow{mcpText(2, 90*time.Second, "log the message \"that's wrong\" please")}, 0},
		{"not a correction", []textRow{mcpText(2, 90*time.Second, "great, now summarize")}, 0},
	}
	for _, c := range cases {
		g, in := mcpTestGroup("ok")
		in.users = c.users
		detectMCP(g, in, w)
		if got := g.Signals[cortex.SignalCorrectionAfterCall]; got != c.want {
			t.Errorf("%s: %d corrections, want %d", c.name, got, c.want)
		}
	}
	// After a failed call any correction answers the failure.
	g, in := mcpTestGroup("fail:boom")
	in.users = []textRow{mcpText(2, 90*time.Second, "No, that's wrong.")}
	detectMCP(g, in, w)
	if g.Signals[cortex.SignalCorrectionAfterCall] != 1 {
		t.Errorf("a correction after a failed call: %v", g.Signals)
	}
}

func TestMCPClaimsAgainstEvidence(t *testing.T) {
	w := 10 * time.Minute
	cases := []struct {
		name      string
		spec      []string
		assistant []textRow
		signal    string
		want      int
	}{
		{"claims unavailable before a working call", []string{"ok"},
			[]textRow{mcpText(1, 0, "I checked: the labby MCP server is not available in this session.")}, cortex.SignalToolClaimedUnavailable, 1},
		{"claims the tool does not exist", []string{"ok", "ok"},
			[]textRow{mcpText(1, 3*time.Minute, "Sadly the search tool doesn't exist here.")}, cortex.SignalToolClaimedUnavailable, 1},
		{"a fair report after failures", []string{"ok", "fail:timed out", "fail:timed out"},
			[]textRow{mcpText(1, 4*time.Minute, "The search tool is unavailable right now.")}, cortex.SignalToolClaimedUnavailable, 0},
		{"no working call of the server", []string{"fail:boom"},
			[]textRow{mcpText(1, 0, "labby is unavailable")}, cortex.SignalToolClaimedUnavailable, 0},
		{"names another tool", []string{"ok"},
			[]textRow{mcpText(1, 0, "The linear tool is unavailable.")}, cortex.SignalToolClaimedUnavailable, 0},
		{"name and claim in different sentences", []string{"ok"},
			[]textRow{mcpText(1, 0, "I will use labby. The docs site is unavailable.")}, cortex.SignalToolClaimedUnavailable, 0},
		{"quoted claim", []string{"ok"},
			[]textRow{mcpText(1, 0, "The doc says \"labby is unavailable on weekends\" but let me try.")}, cortex.SignalToolClaimedUnavailable, 0},
		{"says a successful call failed", []string{"ok"},
			[]textRow{mcpText(1, 90*time.Second, "The labby search returned an error, so I'll guess.")}, cortex.SignalResultContradicted, 1},
		{"says a failed call failed", []string{"fail:boom"},
			[]textRow{mcpText(1, 90*time.Second, "The labby search returned an error.")}, cortex.SignalResultContradicted, 0},
		{"after the next call of the server", []string{"ok", "fail:boom"},
			[]textRow{mcpText(1, 150*time.Second, "The labby search returned an error.")}, cortex.SignalResultContradicted, 0},
	}
	for _, c := range cases {
		g, in := mcpTestGroup(c.spec...)
		in.assistant = c.assistant
		detectMCP(g, in, w)
		if got := g.Signals[c.signal]; got != c.want {
			t.Errorf("%s: %s %d, want %d (signals %v)", c.name, c.signal, got, c.want, g.present())
		}
	}
}

func TestMCPScoreAndLabel(t *testing.T) {
	cases := []struct {
		signals map[string]int
		score   float64
		label   string
	}{
		{map[string]int{}, 0, "low"},
		{map[string]int{cortex.SignalTimeoutOrRateLimit: 1}, 10, "low"},
		{map[string]int{cortex.SignalRepeatedFailure: 2}, 13, "low"},
		{map[string]int{cortex.SignalRepeatedFailure: 3, cortex.SignalTimeoutOrRateLimit: 1}, 27, "medium"},
		{map[string]int{cortex.SignalRepeatedFailure: 3, cortex.SignalTimeoutOrRateLimit: 3}, 37, "high"},
		{map[string]int{cortex.SignalCorrectionAfterCall: 1}, 20, "medium"},
		{map[string]int{cortex.SignalRepeatedFailure: 20, cortex.SignalAuthFailure: 20}, 6*4 + 3*8 + 2*5, "high"},
		{map[string]int{cortex.SignalRepeatedFailure: 6, cortex.SignalUnknownToolOrServer: 6, cortex.SignalCorrectionAfterCall: 2}, 24 + 24 + 30 + 15, "critical"},
		{map[string]int{cortex.SignalToolClaimedUnavailable: 5, cortex.SignalResultContradicted: 1}, 20 + 10 + 10, "high"},
	}
	for _, c := range cases {
		l := mcpLens{}
		if got := l.score(&group{Signals: c.signals}); got != c.score || l.label(got) != c.label {
			t.Errorf("%v: %g %s, want %g %s", c.signals, got, l.label(got), c.score, c.label)
		}
	}
}

func TestMCPPrepareTargets(t *testing.T) {
	cases := []struct {
		p            cortex.IncidentParams
		server, tool string
		err          bool
	}{
		{p: cortex.IncidentParams{Target: "labby"}, server: "labby"},
		{p: cortex.IncidentParams{Target: "mcp__labby__search"}, server: "labby", tool: "search"},
		{p: cortex.IncidentParams{Target: "MCP__labby__search"}, server: "labby", tool: "search"},
		{p: cortex.IncidentParams{Target: "mcp__labby"}, server: "labby"},
		{p: cortex.IncidentParams{Target: "labby/search"}, server: "labby", tool: "search"},
		{p: cortex.IncidentParams{Target: " labby / search "}, server: "labby", tool: "search"},
		{p: cortex.IncidentParams{Target: "mcp__node_repl__js"}, server: "node_repl", tool: "js"},
		{p: cortex.IncidentParams{ToolName: "mcp__labby__search"}, server: "labby", tool: "search"},
		{p: cortex.IncidentParams{MCPServer: "labby", MCPTool: "search"}, server: "labby", tool: "search"},
		{p: cortex.IncidentParams{Target: "labby", MCPTool: "search"}, server: "labby", tool: "search"},
		{p: cortex.IncidentParams{Target: "Labby/search", MCPServer: "labby"}, server: "labby", tool: "search"},
		{p: cortex.IncidentParams{Target: "labby", MCPServer: "linear"}, err: true},
		{p: cortex.IncidentParams{Target: "labby/search", MCPTool: "fetch"}, err: true},
		{p: cortex.IncidentParams{ToolName: "Bash"}, err: true},
		{p: cortex.IncidentParams{Skill: "x"}, err: true},
		{p: cortex.IncidentParams{Terms: []string{"x"}}, err: true},
		{p: cortex.IncidentParams{Hook: "Stop"}, err: true},
	}
	for _, c := range cases {
		p := c.p
		err := mcpLens{}.prepare(&p)
		switch {
		case c.err:
			if cortex.ErrorCode(err) != cortex.CodeInvalid {
				t.Errorf("%+v: %v, want invalid", c.p, err)
			}
		case err != nil:
			t.Errorf("%+v: %v", c.p, err)
		case p.MCPServer != c.server || p.MCPTool != c.tool:
			t.Errorf("%+v: server %q tool %q, want %q %q", c.p, p.MCPServer, p.MCPTool, c.server, c.tool)
		default:
			// Idempotent: the engine prepares again on re-runs.
			if err := (mcpLens{}).prepare(&p); err != nil || p.MCPServer != c.server || p.MCPTool != c.tool {
				t.Errorf("%+v: second prepare %+v %v", c.p, p, err)
			}
		}
	}
}

// ---- the engine over a store ----

// claudeLine is one step of a Claude Code session file: user text ("u"),
// assistant text ("a"), or a tool call ("call") with its result ten
// seconds later, at a minute offset.
type claudeLine struct {
	min     float64
	kind    string // u, a, call
	text    string // u, a: text; call: result text
	name    string // call: tool name
	id      string // call: tool_use id
	failed  bool   // call: is_error
	pending bool   // call: no result
}

func writeClaudeSession(t *testing.T, dir, session string, start time.Time, lines ...claudeLine) {
	t.Helper()
	var b strings.Builder
	n := 0
	emit := func(at time.Time, typ string, msg any) {
		n++
		rec := map[string]any{"type": typ, "sessionId": session, "uuid": fmt.Sprintf("%s-%04d", session, n),
			"timestamp": cortex.FormatTime(at), "cwd": "/home/dev/proj", "version": "2.1.132", "userType": "external",
			"isSidechain": false, "message": msg}
		js, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(js)
		b.WriteByte('\n')
	}
	for _, l := range lines {
		at := start.Add(time.Duration(l.min * float64(time.Minute)))
		switch l.kind {
		case "u":
			emit(at, "user", map[string]any{"role": "user", "content": l.text})
		case "a":
			emit(at, "assistant", map[string]any{"role": "assistant", "type": "message", "model": "claude-opus-4-7",
				"content": []any{map[string]any{"type": "text", "text": l.text}}})
		case "call":
			emit(at, "assistant", map[string]any{"role": "assistant", "type": "message", "model": "claude-opus-4-7",
				"content": []any{map[string]any{"type": "tool_use", "id": l.id, "name": l.name, "input": map[string]any{"query": "x"}}}})
			if !l.pending {
				emit(at.Add(10*time.Second), "user", map[string]any{"role": "user", "content": []any{
					map[string]any{"type": "tool_result", "tool_use_id": l.id, "content": l.text, "is_error": l.failed}}})
			}
		}
	}
	path := filepath.Join(dir, session+".jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// mcpStore indexes three Claude sessions:
//
//   - mcp-a: two labby/search calls that time out, then the user says it
//     was the wrong tool; a labby/fetch call that works; a builtin Bash
//     call that fails; two working linear/get_issue calls; an hour later a
//     working labby/search call.
//   - mcp-c: the agent says the notion server is not available, then
//     calls it successfully.
func mcpStore(t *testing.T) *sqlite.DB {
	t.Helper()
	dir := t.TempDir()
	start := time.Date(2026, 10, 20, 9, 0, 0, 0, time.UTC)
	writeClaudeSession(t, dir, "mcp-a", start,
		claudeLine{min: 0, kind: "u", text: "Search the docs for the retention policy."},
		claudeLine{min: 1, kind: "call", name: "mcp__labby__search", id: "tu1", failed: true, text: "MCP error -32001: Request timed out"},
		claudeLine{min: 2, kind: "call", name: "mcp__labby__search", id: "tu2", failed: true, text: "MCP error -32001: Request timed out"},
		claudeLine{min: 3, kind: "a", text: "The labby search keeps failing; I will try later."},
		claudeLine{min: 4, kind: "u", text: "That's the wrong tool, use fetch on the policy page."},
		claudeLine{min: 5, kind: "call", name: "mcp__labby__fetch", id: "tu3", text: "Retention: 30 days."},
		claudeLine{min: 6, kind: "call", name: "Bash", id: "tu4", failed: true, text: "Exit code 1\npermission denied; request timed out"},
		claudeLine{min: 7, kind: "call", name: "mcp__linear__get_issue", id: "tu5", text: "ENG-1: retention"},
		claudeLine{min: 8, kind: "call", name: "mcp__linear__get_issue", id: "tu6", text: "ENG-2: retention"},
		claudeLine{min: 70, kind: "call", name: "mcp__labby__search", id: "tu7", text: "3 hits"},
	)
	writeClaudeSession(t, dir, "mcp-c", start.Add(24*time.Hour),
		claudeLine{min: 0, kind: "u", text: "Find the notion page about onboarding."},
		claudeLine{min: 1, kind: "a", text: "The notion MCP server is not available in this session, so I will grep."},
		claudeLine{min: 2, kind: "call", name: "mcp__notion__search", id: "tn1", text: "1 page: Onboarding"},
	)
	return indexed(t, dir)
}

func TestMCPLensOverStore(t *testing.T) {
	db := mcpStore(t)
	e := New(db)
	ctx := context.Background()
	l := mcpLens{}

	list, err := e.Incidents(ctx, l, cortex.IncidentParams{})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != 2 {
		t.Fatalf("want 2 incidents, got %+v", list.Incidents)
	}
	top, claim := list.Incidents[0], list.Incidents[1]
	if top.MCPServer != "labby" || top.MCPTool != "search" || top.SessionID != "mcp-a" || top.EventCount != 2 ||
		!strings.HasPrefix(top.ID, "mcp-inc-") || top.Label != "high" ||
		!slices.Equal(top.SignalsPresent, []string{cortex.SignalRepeatedFailure, cortex.SignalTimeoutOrRateLimit, cortex.SignalCorrectionAfterCall}) {
		t.Fatalf("top incident: %+v", top)
	}
	if top.Score != 2*4+2*5+15+3*5 {
		t.Fatalf("top score %g", top.Score)
	}
	if claim.MCPServer != "notion" || !slices.Equal(claim.SignalsPresent, []string{cortex.SignalToolClaimedUnavailable}) {
		t.Fatalf("claim incident: %+v", claim)
	}

	// Grouping: five groups of MCP calls; the builtin Bash call is never one;
	// the working search an hour later is a group of its own.
	all, err := e.Incidents(ctx, l, cortex.IncidentParams{IncludeUsage: true})
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, inc := range all.Incidents {
		subjects = append(subjects, fmt.Sprintf("%s/%s:%d", inc.MCPServer, inc.MCPTool, inc.EventCount))
	}
	slices.Sort(subjects)
	if want := []string{"labby/fetch:1", "labby/search:1", "labby/search:2", "linear/get_issue:2", "notion/search:1"}; !slices.Equal(subjects, want) {
		t.Fatalf("groups %v, want %v", subjects, want)
	}
	if all.CandidateRows != 7 {
		t.Fatalf("candidate rows %d, want 7 MCP calls", all.CandidateRows)
	}
	// The signal filter and a subject filter.
	if got, _ := e.Incidents(ctx, l, cortex.IncidentParams{Signals: []string{cortex.SignalToolClaimedUnavailable}}); got.Total != 1 || got.Incidents[0].ID != claim.ID {
		t.Fatalf("signals filter: %+v", got)
	}
	if got, _ := e.Incidents(ctx, l, cortex.IncidentParams{Target: "linear"}); got.Total != 0 {
		t.Fatalf("linear has no incident: %+v", got)
	}
}

// The three TARGET forms (and their case) reach the same incident; its
// bundle shows the calls with the rows that prove them, and findings cite
// the MCP events.
func TestMCPInvestigateTargets(t *testing.T) {
	db := mcpStore(t)
	e := New(db)
	ctx := context.Background()
	l := mcpLens{}
	var id string
	for _, c := range []struct {
		p       cortex.IncidentParams
		matched string
	}{
		{cortex.IncidentParams{Target: "labby"}, "MCP server labby"},
		{cortex.IncidentParams{Target: "mcp__labby__search"}, "MCP tool labby/search"},
		{cortex.IncidentParams{Target: "labby/search"}, "MCP tool labby/search"},
		{cortex.IncidentParams{Target: "LABBY/Search"}, "MCP tool labby/search"},
		{cortex.IncidentParams{ToolName: "mcp__labby__search"}, "MCP tool labby/search"},
		{cortex.IncidentParams{MCPServer: "labby", MCPTool: "search"}, "MCP tool labby/search"},
	} {
		inv, err := e.Investigate(ctx, l, cortex.InvestigateParams{IncidentParams: c.p})
		if err != nil {
			t.Fatalf("%+v: %v", c.p, err)
		}
		if len(inv.Bundles) != 1 || inv.NoData || inv.NoIncident {
			t.Fatalf("%+v: %+v", c.p, inv)
		}
		b := inv.Bundles[0]
		if id == "" {
			id = b.Incident.ID
		}
		if b.Incident.ID != id {
			t.Fatalf("%+v: incident %s, want %s", c.p, b.Incident.ID, id)
		}
		p := c.p
		if err := l.prepare(&p); err != nil {
			t.Fatal(err)
		}
		if got := l.matched(ctx, db, &p); got != c.matched {
			t.Errorf("%+v: matched %q, want %q", c.p, got, c.matched)
		}
		if len(b.MCPEvents) != 2 || b.MCPEventsTruncated {
			t.Fatalf("mcp events: %+v", b.MCPEvents)
		}
		var evIDs []int64
		for _, ev := range b.MCPEvents {
			if ev.CallLogID == nil || ev.ResultLogID == nil || ev.MCPServer != "labby" || ev.ErrorText == "" {
				t.Fatalf("event without its proof rows: %+v", ev)
			}
			evIDs = append(evIDs, ev.ID)
		}
		// The other MCP calls of the session nearby, not the builtin one.
		for _, ev := range b.NearbyMCPEvents {
			if ev.MCPServer == "" || slices.Contains(evIDs, ev.ID) {
				t.Fatalf("nearby mcp event: %+v", ev)
			}
		}
		if len(b.NearbyMCPEvents) == 0 {
			t.Fatal("no nearby MCP calls")
		}
		m := findingOf(b.Findings, "mcp_timeout_or_rate_limit")
		if m == nil || !slices.Equal(m.MCPEventIDs, evIDs) || !strings.Contains(m.Hint, `the "search" tool of the "labby" MCP server`) {
			t.Fatalf("timeout finding: %+v", b.Findings.FailureModes)
		}
		if findingOf(b.Findings, "wrong_mcp_tool_selected") == nil {
			t.Fatalf("wrong tool finding: %+v", b.Findings.FailureModes)
		}
		// The builtin Bash failure (with "timed out" in it) is no MCP
		// evidence.
		for _, f := range b.Findings.FailureModes {
			for _, ev := range f.MCPEventIDs {
				if !slices.Contains(evIDs, ev) {
					t.Fatalf("finding %s cites event %d outside the incident", f.Category, ev)
				}
			}
		}
		if len(b.SignalAnchors) != len(b.Incident.AnchorLogIDs) {
			t.Fatalf("anchors %d for %v", len(b.SignalAnchors), b.Incident.AnchorLogIDs)
		}
	}
}

// A server with calls but no negative signal answers with its usage and
// most recent use; an unknown one with no data and the nearest names.
func TestMCPUsageAndNoData(t *testing.T) {
	db := mcpStore(t)
	e := New(db)
	ctx := context.Background()
	l := mcpLens{}
	inv := func(p cortex.IncidentParams) cortex.Investigation {
		t.Helper()
		out, err := e.Investigate(ctx, l, cortex.InvestigateParams{IncidentParams: p})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	got := inv(cortex.IncidentParams{Target: "linear"})
	if !got.NoIncident || got.NoData || len(got.Bundles) != 1 || got.Bundles[0].Incident.Label != "low" ||
		got.Bundles[0].Incident.MCPServer != "linear" || len(got.Bundles[0].MCPEvents) != 2 {
		t.Fatalf("linear usage: %+v", got)
	}
	if !strings.Contains(got.Message, `MCP server "linear" has 2 MCP calls in 1 sessions`) {
		t.Fatalf("message %q", got.Message)
	}
	// The most recent use of labby/search: the working call an hour later.
	got = inv(cortex.IncidentParams{Target: "labby/search", Signals: []string{cortex.SignalAuthFailure}})
	if !got.NoIncident || len(got.Bundles) != 1 || got.Bundles[0].Incident.EventCount != 1 {
		t.Fatalf("labby/search usage: %+v", got)
	}

	got = inv(cortex.IncidentParams{Target: "labyy"})
	hints := strings.Join(got.SuggestedFilters, "|")
	if !got.NoData || len(got.Bundles) != 0 || !strings.Contains(hints, `did you mean MCP server "labby"?`) ||
		!strings.Contains(hints, "cortex ai mcp-events --mcp-only") || !strings.Contains(got.Message, `MCP server "labyy"`) {
		t.Fatalf("no data: %+v", got)
	}
	got = inv(cortex.IncidentParams{Target: "mcp__labby__serch"})
	hints = strings.Join(got.SuggestedFilters, "|")
	if !got.NoData || !strings.Contains(hints, `did you mean MCP tool "labby/search"?`) || !strings.Contains(hints, "drop the tool") {
		t.Fatalf("no data for a tool: %+v", got)
	}
	p := cortex.IncidentParams{Target: "labyy"}
	if err := l.prepare(&p); err != nil || l.matched(ctx, db, &p) != "" {
		t.Fatalf("an unknown target matches nothing")
	}
	if _, err := e.Investigate(ctx, l, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{ToolName: "Bash"}}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Fatalf("builtin tool name: %v", err)
	}
}

func findingOf(f cortex.Findings, cat string) *cortex.Finding {
	for i := range f.FailureModes {
		if f.FailureModes[i].Category == cat {
			return &f.FailureModes[i]
		}
	}
	return nil
}

// TestMCPLabelledAndRealCorpus: the labelled Codex timeouts are one high
// incident; in the real corpus the only MCP incident is the Codex
// node_repl/js burst of three failures (one a CDP timeout) the agent
// worked past, and the Linear calls are usage.
func TestMCPLabelledAndRealCorpus(t *testing.T) {
	ctx := context.Background()
	db := indexed(t, testcorpus.Labelled(t))
	list, err := New(db).Incidents(ctx, mcpLens{}, cortex.IncidentParams{Target: "labby"})
	if err != nil || list.Total != 1 {
		t.Fatalf("labelled: %+v %v", list, err)
	}
	if inc := list.Incidents[0]; inc.Tool != cortex.ToolCodex || inc.EventCount != 3 || inc.Label != "high" ||
		inc.SignalCounts[cortex.SignalRepeatedFailure] != 3 || inc.SignalCounts[cortex.SignalTimeoutOrRateLimit] != 3 {
		t.Fatalf("labby: %+v", inc)
	}

	db = indexed(t, testcorpus.Real(t))
	e := New(db)
	list, err = e.Incidents(ctx, mcpLens{}, cortex.IncidentParams{})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != 1 {
		t.Fatalf("real corpus: %+v", list.Incidents)
	}
	inc := list.Incidents[0]
	// "playwright_wait_for_load_state does not support networkidle" is a
	// rejected value: the schema signal.
	if inc.MCPServer != "node_repl" || inc.MCPTool != "js" || inc.Label != "high" || inc.EventCount != 7 ||
		inc.SignalCounts[cortex.SignalRepeatedFailure] != 3 || inc.SignalCounts[cortex.SignalTimeoutOrRateLimit] != 1 ||
		inc.SignalCounts[cortex.SignalSchemaError] != 1 {
		t.Fatalf("node_repl: %+v", inc)
	}
	inv, err := e.Investigate(ctx, mcpLens{}, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Target: "linear-server"}})
	if err != nil || !inv.NoIncident || len(inv.Bundles) != 1 {
		t.Fatalf("linear-server: %+v %v", inv, err)
	}
}

// countingStore counts the MCP lens's reads of assistant prose.
type countingStore struct {
	*sqlite.DB
	all, claims int
}

func (s *countingStore) SessionAssistantRows(ctx context.Context, sc store.SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error) {
	s.all++
	return s.DB.SessionAssistantRows(ctx, sc, from, to, limit)
}

func (s *countingStore) SessionClaimRows(ctx context.Context, sc store.SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error) {
	s.claims++
	return s.DB.SessionClaimRows(ctx, sc, from, to, limit)
}

// The lens reads only the assistant rows whose stored claims say
// something when every stored reading is of its rules; with readings
// missing or of other rules (a store not yet upgraded, or opened
// read-only by a newer binary) it reads all of them and answers the same.
func TestMCPClaimsFromStoredReadings(t *testing.T) {
	ctx := context.Background()
	db := mcpStore(t)
	cs := &countingStore{DB: db}
	answer := func() string {
		e := New(cs)
		list, err := e.Incidents(ctx, mcpLens{}, cortex.IncidentParams{IncludeUsage: true})
		if err != nil {
			t.Fatal(err)
		}
		inv, err := e.Investigate(ctx, mcpLens{}, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Limit: 5}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal([]any{list, inv})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := answer()
	if !strings.Contains(want, cortex.SignalToolClaimedUnavailable) {
		t.Fatal("the fixture's claim is not found")
	}
	if cs.claims == 0 || cs.all != 0 {
		t.Fatalf("current readings: %d reads of claiming rows, %d of all assistant rows; want only the first", cs.claims, cs.all)
	}
	raw, err := sql.Open("sqlite", db.Path()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE logs SET claim = NULL, claim_version = NULL WHERE ai_role = 'assistant' AND id % 2 = 0;
		UPDATE logs SET claim = 0, claim_version = 1 WHERE ai_role = 'assistant' AND id % 2 = 1`); err != nil {
		t.Fatal(err)
	}
	if current, err := db.ClaimsCurrent(ctx, claim.Version); err != nil || current {
		t.Fatalf("stale readings reported current (%v)", err)
	}
	cs.all, cs.claims = 0, 0
	if got := answer(); got != want {
		t.Errorf("stale readings answer differently:\n got %s\nwant %s", got, want)
	}
	if cs.all == 0 || cs.claims != 0 {
		t.Fatalf("stale readings: %d reads of claiming rows, %d of all assistant rows; want only the second", cs.claims, cs.all)
	}
}
