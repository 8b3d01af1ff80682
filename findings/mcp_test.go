package findings

import (
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

// mcpBundle is an MCP-lens bundle for the labby/search tool whose own
// calls are evs and whose transcript after is rows.
func mcpBundle(evs []cortex.ToolEventRow, rows ...cortex.EvidenceRow) *cortex.Bundle {
	return &cortex.Bundle{
		Incident:        cortex.Incident{ID: "mcp-inc-1", Lens: cortex.LensMCP, MCPServer: "labby", MCPTool: "search", EventCount: len(evs)},
		MCPEvents:       evs,
		TranscriptAfter: rows,
	}
}

// mcpFailed is a failed call of labby/search (event id; call row 100+id,
// result row 200+id) with the result's error text.
func mcpFailed(id int64, text string) cortex.ToolEventRow {
	yes := true
	return cortex.ToolEventRow{ID: id, CallLogID: ptr(100 + id), ResultLogID: ptr(200 + id), Tool: cortex.ToolCodex,
		ToolName: "mcp__labby__search", MCPServer: "labby", MCPTool: "search", Status: cortex.CallError, IsError: &yes, ErrorText: text}
}

// mcpOK is a successful call of labby/search.
func mcpOK(id int64) cortex.ToolEventRow {
	no := false
	return cortex.ToolEventRow{ID: id, CallLogID: ptr(100 + id), ResultLogID: ptr(200 + id), Tool: cortex.ToolCodex,
		ToolName: "mcp__labby__search", MCPServer: "labby", MCPTool: "search", Status: cortex.CallSuccess, IsError: &no,
		OutputPreview: "timed out waiting? no: 3 hits"}
}

func TestMCPCategoryOrder(t *testing.T) {
	want := []string{"wrong_mcp_tool_selected", "mcp_server_unavailable", "mcp_auth_or_permission_failure",
		"mcp_schema_mismatch", "mcp_timeout_or_rate_limit", "mcp_result_misinterpreted",
		"missing_mcp_discovery_step", "tool_surface_confusion", "unknown"}
	if got := MCP().Categories(); !slices.Equal(got, want) {
		t.Fatalf("MCP().Categories() = %v, want %v", got, want)
	}
	if MCP().Lens() != cortex.LensMCP || ForLens(cortex.LensMCP) != MCP() {
		t.Fatal("ForLens(mcp) is not the MCP rule set")
	}
}

// Every category but unknown has a rule; every rule reads user text or
// MCP error text (never generic tool output) or is a signal rule.
func TestMCPRuleTable(t *testing.T) {
	rs := MCP()
	used := map[string]bool{}
	for _, ru := range rs.rules {
		used[ru.category] = true
		switch {
		case ru.phrases != nil:
			if ru.voices != voiceUser && ru.voices != voiceMCP {
				t.Errorf("%s: rule reads voices %b", ru.category, ru.voices)
			}
			for _, p := range ru.phrases.Phrases() {
				if strings.TrimSpace(p) == "" {
					t.Errorf("%s: empty phrase", ru.category)
				}
			}
		case len(ru.signals) == 0:
			t.Errorf("%s: rule without phrases or signals", ru.category)
		}
	}
	for _, c := range rs.Categories() {
		if c != CategoryUnknown && !used[c] {
			t.Errorf("category %s has no rule", c)
		}
	}
}

// An MCP call's error text yields its category, citing the MCP event and
// its call and result rows, with a hint naming the server and tool.
func TestMCPErrorTextPositives(t *testing.T) {
	cases := []struct {
		cat, text, want string
	}{
		{catServerUnavailable, "MCP error -32000: Connection closed", "connection closed"},
		{catServerUnavailable, "Error: MCP server \"labby\" is not connected", "not connected"},
		{catServerUnavailable, "connect ECONNREFUSED 127.0.0.1:8080", "econnrefused"},
		{catServerUnavailable, "transport disconnected", "disconnected"},
		{catMCPAuth, "HTTP 401 Unauthorized: invalid token", "invalid token"},
		{catMCPAuth, "403 Forbidden", "403 forbidden"},
		{catMCPAuth, "Not logged in. Run `labby login` to authenticate.", "not logged in"},
		{catSchema, `MCP error -32602: Invalid arguments for tool search: [{"code":"invalid_type","expected":"string"}]`, "invalid arguments"},
		{catSchema, "1 validation error for searchArguments\nquery\n  Field required [type=missing]", "validation error"},
		{catSchema, "InputValidationError: The required parameter `query` is missing", "inputvalidationerror"},
		{catSchema, `Error: the "format" option does not support "webp"; use png or jpeg`, "does not support"},
		{catSchema, "Invalid enum value. Expected 'asc' | 'desc', received 'up'", "invalid enum value"},
		{catMCPTimeout, "tool call failed: request timed out after 30s", "timed out"},
		{catMCPTimeout, "rate limit exceeded, retry later", "rate limit"},
		{catMCPTimeout, "429 Too Many Requests", "too many requests"},
		{catMCPTimeout, "context deadline exceeded", "deadline exceeded"},
		{catSurface, "<tool_use_error>Error: No such tool available: mcp__labby__serch</tool_use_error>", "no such tool available"},
		{catSurface, "MCP error -32601: Method not found", "method not found"},
		{catSurface, "Unknown tool: serch", "unknown tool"},
	}
	for _, c := range cases {
		b := mcpBundle([]cortex.ToolEventRow{mcpFailed(7, c.text)})
		f := MCP().Derive(b)
		checkInvariants(t, MCP(), b, f)
		m := mode(f, c.cat)
		if m == nil {
			t.Errorf("%q: want %s, got %v", c.text, c.cat, cats(f))
			continue
		}
		if !slices.Equal(m.MCPEventIDs, []int64{7}) || !slices.Equal(m.EvidenceIDs, []int64{107, 207}) || m.Confidence != ConfidenceLow {
			t.Errorf("%q: events %v evidence %v confidence %s", c.text, m.MCPEventIDs, m.EvidenceIDs, m.Confidence)
		}
		if !containsQuoted(m.Why, c.want) {
			t.Errorf("%q: Why %q does not name %q", c.text, m.Why, c.want)
		}
		if !strings.Contains(m.Hint, `the "search" tool of the "labby" MCP server`) {
			t.Errorf("%s: hint does not name the subject: %q", c.cat, m.Hint)
		}
	}
}

// What the user typed yields the user-voiced categories.
func TestMCPUserTextPositives(t *testing.T) {
	cases := []struct {
		cat, text, want string
	}{
		{catWrongTool, "That's the wrong tool, use the fetch tool.", "that's the wrong tool"},
		{catWrongTool, "You should have used the linear server.", "should have used the"},
		{catServerUnavailable, "The MCP server is down, restart it.", "mcp server is down"},
		{catMisread, "You misread the result: it has three hits.", "misread the result"},
		{catMisread, "No, the output says the job passed.", "the output says"},
		{catDiscovery, "You should have checked the available tools first.", "should have checked"},
		{catDiscovery, "You do have access to labby, use ToolSearch.", "you do have access"},
		{catSurface, "There is no such tool, it's called fetch.", "there is no such tool"},
		{catSurface, "Wrong server: that's on linear.", "wrong server"},
	}
	for _, c := range cases {
		b := mcpBundle(nil, row(1, cortex.RoleUser, c.text))
		checkPositive(t, MCP(), b, c.cat, c.want)
		if m := mode(MCP().Derive(b), c.cat); m != nil && !strings.Contains(m.Hint, `"labby" MCP server`) {
			t.Errorf("%s: hint does not name the server: %q", c.cat, m.Hint)
		}
	}
}

// MCP error-text rules read the incident's own MCP calls only: not a
// builtin tool's failure, not tool output rows, not prose; user rules read
// only what the user typed.
func TestMCPNegatives(t *testing.T) {
	cases := []struct {
		name string
		b    *cortex.Bundle
	}{
		{"timeout in a builtin tool failure", func() *cortex.Bundle {
			b := mcpBundle(nil)
			b.NearbyToolFailures = []cortex.ToolFailure{{EventID: 9, ResultLogID: ptr(9), ToolName: "Bash", ErrorText: "curl: operation timed out; permission denied"}}
			return b
		}()},
		{"error text in a tool result row", mcpBundle(nil, row(1, cortex.RoleToolResult, "request timed out; unauthorized; validation error; unknown tool"))},
		{"error text in a non-AI log", mcpBundle(nil, logRow(1, "nginx: upstream timed out, connection refused"))},
		{"error text in assistant prose", mcpBundle(nil, row(1, cortex.RoleAssistant, "The labby search timed out and is not connected."))},
		{"error text in user text", mcpBundle(nil, row(1, cortex.RoleUser, "why did it say timed out and unauthorized?"))},
		{"user phrase in tool output", mcpBundle(nil, row(1, cortex.RoleToolResult, "wrong tool; misread the result; should have checked"))},
		{"user phrase in assistant prose", mcpBundle(nil, row(1, cortex.RoleAssistant, "I used the wrong tool; I should have checked."))},
		{"user phrase in an MCP call's error text", mcpBundle([]cortex.ToolEventRow{mcpFailed(3, "wrong tool; you misread the result")})},
		{"success output is not error text", mcpBundle([]cortex.ToolEventRow{mcpOK(3)})},
		{"bare timeout option", mcpBundle([]cortex.ToolEventRow{mcpFailed(3, `TypeError: x is undefined (options: {"timeout": 500})`)})},
		{"not foundation", mcpBundle([]cortex.ToolEventRow{mcpFailed(3, "server not foundation-ready; tool not founded")})},
		{"plain usage", mcpBundle([]cortex.ToolEventRow{mcpOK(1), mcpOK(2)}, row(5, cortex.RoleUser, "Thanks, that works."))},
	}
	for _, c := range cases {
		f := MCP().Derive(c.b)
		checkInvariants(t, MCP(), c.b, f)
		if got := cats(f); !slices.Equal(got, []string{CategoryUnknown}) {
			t.Errorf("%s: got %v, want only unknown", c.name, got)
		}
	}
}

// Every MCP error phrase matches only as MCP error text, and every user
// phrase only as user text (unless a rule of the same category and the
// other voice legitimately matches it).
func TestMCPSpeakerAwarenessAllPhrases(t *testing.T) {
	rs := MCP()
	for _, ru := range rs.rules {
		if ru.phrases == nil {
			continue
		}
		for _, p := range ru.phrases.Phrases() {
			if matchedByOtherVoice(rs, ru, p) {
				continue
			}
			text := "note: " + p + " (quoted)"
			var b *cortex.Bundle
			switch ru.voices {
			case voiceMCP:
				b = mcpBundle(nil)
				for i, role := range []cortex.Role{cortex.RoleUser, cortex.RoleAssistant, cortex.RoleContext,
					cortex.RoleToolCall, cortex.RoleThinking, cortex.RoleToolResult, cortex.RoleHook, cortex.RoleSystem} {
					b.TranscriptAfter = append(b.TranscriptAfter, row(int64(i+1), role, text))
				}
				b.NearbyLogs = []cortex.EvidenceRow{logRow(50, text)}
				b.NearbyToolFailures = []cortex.ToolFailure{{EventID: 9, ErrorText: text}}
			case voiceUser:
				b = mcpBundle([]cortex.ToolEventRow{mcpFailed(9, text)})
				for i, role := range []cortex.Role{cortex.RoleToolResult, cortex.RoleAssistant, cortex.RoleContext,
					cortex.RoleToolCall, cortex.RoleThinking, cortex.RoleHook, cortex.RoleSystem} {
					b.TranscriptAfter = append(b.TranscriptAfter, row(int64(i+1), role, text))
				}
			default:
				t.Fatalf("rule for %s reads voices %b", ru.category, ru.voices)
			}
			if m := mode(rs.Derive(b), ru.category); m != nil {
				t.Errorf("phrase %q (voice %b) matched in the wrong speaker's text: %+v", p, ru.voices, m)
			}
			// And in its own voice it matches.
			var own *cortex.Bundle
			if ru.voices == voiceMCP {
				own = mcpBundle([]cortex.ToolEventRow{mcpFailed(9, text)})
			} else {
				own = mcpBundle(nil, row(1, cortex.RoleUser, text))
			}
			if mode(rs.Derive(own), ru.category) == nil {
				t.Errorf("phrase %q does not match in its own voice", p)
			}
		}
	}
}

// Confidence counts distinct failed calls; a call seen both as a tool
// failure and as an MCP event counts once.
func TestMCPConfidenceAndDedup(t *testing.T) {
	evs := []cortex.ToolEventRow{mcpFailed(1, "request timed out"), mcpOK(2), mcpFailed(3, "rate limit exceeded"), mcpFailed(4, "timed out")}
	b := mcpBundle(evs)
	f := MCP().Derive(b)
	checkInvariants(t, MCP(), b, f)
	m := mode(f, catMCPTimeout)
	if m == nil || m.Confidence != ConfidenceHigh || !slices.Equal(m.MCPEventIDs, []int64{1, 3, 4}) ||
		!slices.Equal(m.EvidenceIDs, []int64{101, 103, 104, 201, 203, 204}) {
		t.Fatalf("got %+v", f.FailureModes)
	}
	one := mcpBundle([]cortex.ToolEventRow{mcpFailed(1, "request timed out"), mcpFailed(1, "request timed out")})
	one.NearbyToolFailures = []cortex.ToolFailure{{EventID: 1, CallLogID: ptr(101), ResultLogID: ptr(201), ErrorText: "request timed out"}}
	if m := mode(MCP().Derive(one), catMCPTimeout); m == nil || m.Confidence != ConfidenceLow || !slices.Equal(m.MCPEventIDs, []int64{1}) {
		t.Fatalf("dedup: %+v", m)
	}
	// A row matched by a user rule and the event are two pieces of evidence.
	two := mcpBundle([]cortex.ToolEventRow{mcpFailed(1, "Unknown tool: serch")}, row(5, cortex.RoleUser, "there is no such tool"))
	if m := mode(MCP().Derive(two), catSurface); m == nil || m.Confidence != ConfidenceMedium ||
		!slices.Equal(m.EvidenceIDs, []int64{5, 101, 201}) || !slices.Equal(m.MCPEventIDs, []int64{1}) {
		t.Fatalf("two voices: %+v", m)
	}
}

// The claim signals support their categories on their own, citing the
// anchors tagged with them.
func TestMCPSignalSupport(t *testing.T) {
	for _, c := range []struct {
		signal, cat string
	}{
		{cortex.SignalToolClaimedUnavailable, catDiscovery},
		{cortex.SignalResultContradicted, catMisread},
	} {
		b := mcpBundle([]cortex.ToolEventRow{mcpOK(1)})
		b.Incident.SignalsPresent = []string{c.signal}
		b.SignalAnchors = []cortex.EvidenceRow{row(5, cortex.RoleAssistant, "The labby tool is unavailable."), row(6, cortex.RoleUser, "x")}
		b.SignalAnchors[0].Signals = []string{c.signal}
		f := MCP().Derive(b)
		checkInvariants(t, MCP(), b, f)
		m := mode(f, c.cat)
		if m == nil || !slices.Equal(m.EvidenceIDs, []int64{5}) || m.Why != "signal "+c.signal || m.Confidence != ConfidenceLow {
			t.Errorf("%s: got %+v", c.signal, f.FailureModes)
		}
	}
	// The error-class signals have no rule of their own: the error text is
	// the evidence (no double count), and without it nothing is claimed.
	b := mcpBundle(nil)
	b.Incident.SignalsPresent = []string{cortex.SignalTimeoutOrRateLimit, cortex.SignalAuthFailure, cortex.SignalSchemaError,
		cortex.SignalUnknownToolOrServer, cortex.SignalRepeatedFailure, cortex.SignalCorrectionAfterCall}
	b.SignalAnchors = []cortex.EvidenceRow{row(5, cortex.RoleToolResult, "x")}
	if got := cats(MCP().Derive(b)); !slices.Equal(got, []string{CategoryUnknown}) {
		t.Fatalf("error-class signals alone: %v", got)
	}
}

func TestMCPFactor(t *testing.T) {
	b := mcpBundle([]cortex.ToolEventRow{mcpFailed(1, "boom"), mcpOK(2), mcpFailed(3, "bang")})
	f := MCP().Derive(b)
	checkInvariants(t, MCP(), b, f)
	if len(f.Factors) == 0 {
		t.Fatal("no factor")
	}
	want := cortex.Factor{Factor: `repeated MCP call failures: 2 of 3 calls to the "search" tool of the "labby" MCP server failed (mcp events 1, 3)`,
		EvidenceIDs: []int64{101, 103, 201, 203}}
	if got := f.Factors[0]; got.Factor != want.Factor || !slices.Equal(got.EvidenceIDs, want.EvidenceIDs) {
		t.Fatalf("got %+v", got)
	}
	// One failure: no factor.
	if f := MCP().Derive(mcpBundle([]cortex.ToolEventRow{mcpFailed(1, "boom"), mcpOK(2)})); len(f.Factors) != 0 {
		t.Fatalf("one failure: %+v", f.Factors)
	}
	// The open question names the MCP anchors.
	if q := MCP().Derive(mcpBundle(nil)).OpenQuestions; !slices.Contains(q, "no negative signal anchors captured") {
		t.Fatalf("questions %v", q)
	}
}

func TestMCPSubject(t *testing.T) {
	for _, c := range []struct {
		server, tool, want string
	}{
		{"labby", "search", `the "search" tool of the "labby" MCP server`},
		{"labby", "", `the "labby" MCP server`},
		{"", "search", `the "search" MCP tool`},
		{"", "", "the MCP server"},
		{"evil\x1b[31m", "x\"; rm", `the "x\"; rm" tool of the "evil[31m" MCP server`},
	} {
		if got := mcpSubject(&cortex.Incident{MCPServer: c.server, MCPTool: c.tool}); got != c.want {
			t.Errorf("%q/%q: %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	long := mcpSubject(&cortex.Incident{MCPServer: strings.Repeat("s", 500), MCPTool: strings.Repeat("t", 500)})
	if len(long) > 300 {
		t.Errorf("long names not bounded: %d bytes", len(long))
	}
}

func TestMCPErrorSignals(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"TypeError: document.createElement is not a function", nil},
		{"tool call failed: request timed out after 30s", []string{cortex.SignalTimeoutOrRateLimit}},
		{"rate limit exceeded, retry later", []string{cortex.SignalTimeoutOrRateLimit}},
		{"401 Unauthorized", []string{cortex.SignalAuthFailure}},
		{"MCP error -32602: Invalid arguments", []string{cortex.SignalSchemaError}},
		{"No such tool available: mcp__labby__x", []string{cortex.SignalUnknownToolOrServer}},
		{"server disconnected", []string{cortex.SignalUnknownToolOrServer}},
		{"not connected; then timed out; then forbidden", []string{cortex.SignalTimeoutOrRateLimit, cortex.SignalAuthFailure, cortex.SignalUnknownToolOrServer}},
		{"the connection is timeoutish and unauthorizedly", nil},
	} {
		if got := MCPErrorSignals(c.text); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.text, got, c.want)
		}
	}
}
