package sqlite

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

// mcpCallEvent is the call side of a tool call named name (MCP when server is
// set).
func mcpCallEvent(id, name, server, tool string) cortex.Events {
	return cortex.Events{Tools: []cortex.ToolEvent{{CallID: id, ToolName: name, MCPServer: server, MCPTool: tool,
		EventKind: cortex.ToolClaudeUse, HasCall: true, ArgumentsJSON: `{"q":"x"}`}}}
}

// mcpFixture stores two Claude sessions: in sess-1 two labby/search calls
// (one failed), a labby/fetch call, a linear/get_issue call, a builtin
// Bash call, user and assistant text; in sess-2 one labby/search call.
func mcpFixture(t *testing.T) (*DB, map[string]int64) {
	t.Helper()
	db, _ := openTestDB(t)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	recs := []cortex.ImportRecord{
		rec("u1", "", cortex.RoleUser, "search the docs", at(0)),
		withEvents(rec("c1", "", cortex.RoleToolCall, "mcp__labby__search", at(1)), mcpCallEvent("A", "mcp__labby__search", "labby", "search")),
		withEvents(rec("r1", "", cortex.RoleToolResult, "timed out", at(2)), resultEvent("A", cortex.CallError, true, "request timed out")),
		withEvents(rec("c2", "", cortex.RoleToolCall, "mcp__labby__search", at(3)), mcpCallEvent("B", "mcp__labby__search", "labby", "search")),
		withEvents(rec("r2", "", cortex.RoleToolResult, "ok", at(4)), resultEvent("B", cortex.CallSuccess, false, "3 hits")),
		withEvents(rec("c3", "", cortex.RoleToolCall, "mcp__labby__fetch", at(5)), mcpCallEvent("C", "mcp__labby__fetch", "labby", "fetch")),
		withEvents(rec("c4", "", cortex.RoleToolCall, "mcp__linear__get_issue", at(6)), mcpCallEvent("D", "mcp__linear__get_issue", "linear", "get_issue")),
		withEvents(rec("c5", "", cortex.RoleToolCall, "Bash ls", at(7)), mcpCallEvent("E", "Bash", "", "")),
		withEvents(rec("r5", "", cortex.RoleToolResult, "boom", at(8)), resultEvent("E", cortex.CallError, true, "boom")),
		rec("a1", "", cortex.RoleAssistant, "The labby tool is unavailable.", at(9)),
		rec("t1", "", cortex.RoleThinking, "labby is unavailable?", at(9)),
		rec("a2", "", cortex.RoleAssistant, "Done.", at(30)),
	}
	other := rec("c6", "", cortex.RoleToolCall, "mcp__labby__search", at(20))
	other.Entry.SessionID = "sess-2"
	other = withEvents(other, mcpCallEvent("F", "mcp__labby__search", "labby", "search"))
	mustImport(t, db, batch("/t/s.jsonl", recs...), batch("/t/s2.jsonl", other))
	id := map[string]int64{}
	for _, k := range []string{"c1", "r1", "c2", "r2", "c3", "c4", "c5", "a1", "a2"} {
		id[k] = logID(t, db, "/t/s.jsonl", k)
	}
	id["c6"] = logID(t, db, "/t/s2.jsonl", "c6")
	for _, c := range []string{"A", "B", "C", "D", "E", "F"} {
		id["ev"+c] = ids(t, db, `SELECT id FROM ai_mcp_events WHERE call_id = ?`, c)[0]
	}
	return db, id
}

func TestMCPCandidatesAreMCPOnly(t *testing.T) {
	db, id := mcpFixture(t)
	ctx := context.Background()
	evIDs := func(cs []MCPCandidate) []int64 {
		var out []int64
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	all, err := db.MCPCandidates(ctx, MCPFilter{CandidateFilter: CandidateFilter{Limit: 100}})
	if err != nil {
		t.Fatal(err)
	}
	// Newest first; the builtin Bash call is never a candidate.
	if want := []int64{id["evF"], id["evD"], id["evC"], id["evB"], id["evA"]}; !slices.Equal(evIDs(all), want) {
		t.Fatalf("candidates %v, want %v", evIDs(all), want)
	}
	a := all[len(all)-1]
	if a.LogID != id["c1"] || a.CallID != "A" || a.Server != "labby" || a.MCPTool != "search" || a.Session != "sess-1" ||
		a.Host != "host-a" || a.Tool != cortex.ToolClaude || a.Project != "/home/u/proj" || !a.Timestamp.Equal(t0.Add(time.Minute)) {
		t.Fatalf("candidate fields: %+v", a)
	}
	for _, c := range []struct {
		f    MCPFilter
		want []int64
	}{
		{MCPFilter{Server: "labby"}, []int64{id["evF"], id["evC"], id["evB"], id["evA"]}},
		{MCPFilter{Server: "labby", MCPTool: "search"}, []int64{id["evF"], id["evB"], id["evA"]}},
		{MCPFilter{MCPTool: "get_issue"}, []int64{id["evD"]}},
		{MCPFilter{Server: "Labby"}, nil}, // exact: resolve names first
		{MCPFilter{CandidateFilter: CandidateFilter{Session: "sess-2"}}, []int64{id["evF"]}},
		{MCPFilter{CandidateFilter: CandidateFilter{Since: t0.Add(3 * time.Minute), Until: t0.Add(6 * time.Minute)}}, []int64{id["evC"], id["evB"]}},
		{MCPFilter{CandidateFilter: CandidateFilter{Limit: 2}}, []int64{id["evF"], id["evD"]}},
	} {
		if c.f.Limit == 0 {
			c.f.Limit = 100
		}
		got, err := db.MCPCandidates(ctx, c.f)
		if err != nil || !slices.Equal(evIDs(got), c.want) {
			t.Errorf("%+v: %v %v, want %v", c.f, evIDs(got), err, c.want)
		}
	}
}

func TestMCPUsageAndNames(t *testing.T) {
	db, _ := mcpFixture(t)
	ctx := context.Background()
	for _, c := range []struct {
		f    MCPFilter
		want MCPUsage
	}{
		{MCPFilter{}, MCPUsage{Calls: 5, Sessions: 2, Failed: 1}},
		{MCPFilter{Server: "labby"}, MCPUsage{Calls: 4, Sessions: 2, Failed: 1}},
		{MCPFilter{Server: "labby", MCPTool: "fetch"}, MCPUsage{Calls: 1, Sessions: 1}},
		{MCPFilter{Server: "nope"}, MCPUsage{}},
	} {
		got, err := db.MCPUsage(ctx, c.f)
		if err != nil || got != c.want {
			t.Errorf("%+v: %+v %v, want %+v", c.f, got, err, c.want)
		}
	}
	names, err := db.MCPNames(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []MCPName{{Server: "labby", Tool: "fetch"}, {Server: "labby", Tool: "search"}, {Server: "linear", Tool: "get_issue"}}
	if !slices.Equal(names, want) {
		t.Fatalf("names %v, want %v", names, want)
	}
}

func TestToolCallsAndEventsByID(t *testing.T) {
	db, id := mcpFixture(t)
	ctx := context.Background()
	calls, err := db.ToolCallsByID(ctx, []int64{id["evC"], id["evA"], id["evE"], 999999})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || calls[0].ID != id["evA"] || calls[1].ID != id["evC"] || calls[2].ID != id["evE"] {
		t.Fatalf("calls %+v", calls)
	}
	if a := calls[0]; !a.IsError || a.Status != cortex.CallError || a.ErrorText != "request timed out" ||
		*a.CallLogID != id["c1"] || *a.ResultLogID != id["r1"] || a.MCPServer != "labby" {
		t.Fatalf("call A: %+v", a)
	}
	if c := calls[1]; c.ResultLogID != nil || c.Status != cortex.CallPending {
		t.Fatalf("pending call C: %+v", c)
	}
	evs, err := db.ToolEventsByID(ctx, []int64{id["evB"], id["evA"]})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].ID != id["evA"] || evs[1].ID != id["evB"] {
		t.Fatalf("events %+v", evs)
	}
	a, b := evs[0], evs[1]
	if *a.CallLogID != id["c1"] || *a.ResultLogID != id["r1"] || a.IsError == nil || !*a.IsError || a.ErrorText != "request timed out" ||
		a.CallID != "A" || a.ToolName != "mcp__labby__search" || a.SessionID != "sess-1" || a.ArgumentsJSON != `{"q":"x"}` {
		t.Fatalf("event A: %+v", a)
	}
	if b.OutputPreview != "3 hits" || b.IsError == nil || *b.IsError || b.Status != cortex.CallSuccess {
		t.Fatalf("event B: %+v", b)
	}
	if got, err := db.ToolEventsByID(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("no ids: %v %v", got, err)
	}
}

// More ids than one IN list holds are read in chunks.
func TestToolEventsByIDChunks(t *testing.T) {
	db, _ := openTestDB(t)
	var recs []cortex.ImportRecord
	n := idChunk + 7
	for i := range n {
		k := fmt.Sprintf("c%d", i)
		recs = append(recs, withEvents(rec(k, "", cortex.RoleToolCall, k, t0.Add(time.Duration(n-i)*time.Second)),
			mcpCallEvent(k, "mcp__s__t", "s", "t")))
	}
	mustImport(t, db, batch("/t/many.jsonl", recs...))
	all := ids(t, db, `SELECT id FROM ai_mcp_events`)
	evs, err := db.ToolEventsByID(context.Background(), all)
	if err != nil || len(evs) != n {
		t.Fatalf("%d events, %v", len(evs), err)
	}
	for i := 1; i < len(evs); i++ {
		if evs[i].Timestamp < evs[i-1].Timestamp {
			t.Fatal("not in time order")
		}
	}
	calls, err := db.ToolCallsByID(context.Background(), all)
	if err != nil || len(calls) != n || !calls[0].Timestamp.Before(calls[n-1].Timestamp) {
		t.Fatalf("%d calls, %v", len(calls), err)
	}
}

func TestSessionMCPCallsAndAssistantRows(t *testing.T) {
	db, id := mcpFixture(t)
	ctx := context.Background()
	s := SessionScope{Tool: cortex.ToolClaude, Session: "sess-1", Host: "host-a"}
	calls, err := db.SessionMCPCalls(ctx, s, t0, t0.Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, c := range calls {
		got = append(got, c.ID)
	}
	// MCP only (no Bash), this session only, in time order.
	if want := []int64{id["evA"], id["evB"], id["evC"], id["evD"]}; !slices.Equal(got, want) {
		t.Fatalf("session MCP calls %v, want %v", got, want)
	}
	if calls, _ := db.SessionMCPCalls(ctx, s, t0.Add(2*time.Minute), t0.Add(5*time.Minute), 1); len(calls) != 1 || calls[0].ID != id["evB"] {
		t.Fatalf("range and limit: %+v", calls)
	}
	rows, err := db.SessionAssistantRows(ctx, s, t0, t0.Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	// Assistant text only: no thinking, tool calls or results.
	if got := evidenceIDs(rows); !slices.Equal(got, []int64{id["a1"], id["a2"]}) {
		t.Fatalf("assistant rows %v", got)
	}
	if rows, _ := db.SessionAssistantRows(ctx, s, t0, t0.Add(10*time.Minute), 100); len(rows) != 1 || rows[0].ID != id["a1"] {
		t.Fatalf("range: %+v", rows)
	}
	other := SessionScope{Tool: cortex.ToolClaude, Session: "sess-1", Host: "host-b"}
	if rows, _ := db.SessionAssistantRows(ctx, other, t0, t0.Add(time.Hour), 100); len(rows) != 0 {
		t.Fatalf("other host: %+v", rows)
	}
}
