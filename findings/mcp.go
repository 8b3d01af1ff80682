package findings

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
)

// MCP categories, in output order.
const (
	catWrongTool         = "wrong_mcp_tool_selected"
	catServerUnavailable = "mcp_server_unavailable"
	catMCPAuth           = "mcp_auth_or_permission_failure"
	catSchema            = "mcp_schema_mismatch"
	catMCPTimeout        = "mcp_timeout_or_rate_limit"
	catMisread           = "mcp_result_misinterpreted"
	catDiscovery         = "missing_mcp_discovery_step"
	catSurface           = "tool_surface_confusion"
)

// MCP returns the rule set of the MCP lens: the error text of the
// incident's own MCP calls (never a builtin tool's failure, never prose)
// mapped to server, auth, schema, timeout and tool-surface failures; what
// the user typed mapped to tool-choice, result-reading and discovery
// mistakes; and the lens's signals. Each hint aims at the layer to change
// (the server and its configuration, the tool's description and schema,
// or the agent's instructions) and names the server or tool.
func MCP() *Rules { return mcpRules }

var mcpRules = buildMCP()

func buildMCP() *Rules {
	cats := []category{
		{catWrongTool, "Tool descriptions: sharpen the description of {subject} and of the tools it is confused with — say what each is for and what it is not for, and name the right tool for the other case; if the agent keeps choosing wrongly, add a tool-choice line to the agent instructions (CLAUDE.md / AGENTS.md)."},
		{catServerUnavailable, "Server: check that {subject} is running and connected before relying on it (its launch command, `claude mcp list` / `codex mcp list`), fix the server or its configuration, and tell the agent to report an unavailable server once instead of retrying it."},
		{catMCPAuth, "Server configuration: fix the credentials of {subject} (token, scopes, expiry, OAuth login) where the MCP server is configured, and tell the agent to stop and report an auth failure instead of retrying it unchanged."},
		{catSchema, "Tool schema and description: document the parameters of {subject} — required fields, types, allowed values — with one concrete example call, so that calls validate the first time; make the server's validation error name the bad field."},
		{catMCPTimeout, "Server and agent: give {subject} an explicit timeout and a retry-with-backoff policy (or raise its limit), prefer a narrower or cheaper call, and tell the agent to stop after two timeouts or rate-limit errors and report instead of retrying."},
		{catMisread, "Agent instructions: after calling {subject}, restate what the result actually shows (quote the field or line relied on) before acting on it or reporting it; treat an empty or error result as such, not as success."},
		{catDiscovery, "Agent instructions: discover before assuming — list or search the available MCP tools (ToolSearch, /mcp, the server's list tool) and check for {subject} before saying a tool is unavailable or working around it."},
		{catSurface, "Tool surface: document the exact names the agent must call for {subject} (mcp__<server>__<tool>), remove or rename overlapping or stale tools, and add a discovery step before calling a tool by a guessed name."},
		{CategoryUnknown, "No deterministic signature matched; review the calls to {subject} and the transcript manually before changing anything."},
	}
	mcpErr := func(cat string, phrases ...string) rule {
		return rule{category: cat, voices: voiceMCP, phrases: phrase.NewSet(phrases...)}
	}
	user := func(cat string, phrases ...string) rule {
		return rule{category: cat, voices: voiceUser, phrases: phrase.NewSet(phrases...)}
	}
	rules := []rule{
		user(catWrongTool, "wrong tool", "not the right tool", "you used the wrong", "that's the wrong tool",
			"that is the wrong tool", "should have used the", "use the other tool", "don't use that tool",
			"do not use that tool", "why did you use", "wrong mcp tool"),
		mcpErr(catServerUnavailable, "server unavailable", "server not found", "server is not running",
			"mcp server error", "not connected", "disconnected", "connection closed", "connection refused",
			"econnrefused", "connection reset", "failed to connect", "could not connect", "unknown server",
			"no such server", "service unavailable", "server not initialized", "transport closed"),
		user(catServerUnavailable, "server is down", "mcp server is down", "restart the mcp server",
			"reconnect the mcp server", "the server is not running", "the mcp isn't running", "the mcp is not running"),
		mcpErr(catMCPAuth, "unauthorized", "unauthorised", "forbidden", "permission denied", "access denied",
			"authentication failed", "authentication required", "auth failed", "invalid token",
			"invalid credentials", "token expired", "expired token", "token has expired", "not authorized",
			"not authenticated", "insufficient scope", "insufficient permissions", "invalid api key",
			"missing api key", "http 401", "http 403", "status 401", "status 403", "401 unauthorized",
			"403 forbidden", "login required", "not logged in"),
		mcpErr(catSchema, "schema validation", "does not match schema", "validation error", "validation failed",
			"invalid parameters", "invalid params", "invalid_params", "invalidparams", "invalid arguments",
			"invalid argument", "inputvalidationerror", "input validation error",
			"missing required", "required parameter", "required property", "invalid_type",
			"unexpected argument", "field required", "unrecognized key", "unrecognized_keys",
			"additional properties", "expected string", "expected number", "expected object",
			"expected array", "expected boolean", "-32602", "does not support", "is not supported", "unsupported value",
			"unsupported parameter", "unsupported argument", "invalid enum value", "expected one of"),
		// No bare "timeout": error text quoting code or options ("timeout:
		// 5000") would match it.
		mcpErr(catMCPTimeout, "timed out", "timeout exceeded", "timeout expired", "timeout error", "timeouterror",
			"request timeout", "read timeout", "connect timeout", "gateway timeout", "deadline exceeded",
			"etimedout", "rate limit",
			"rate limited", "rate-limited", "ratelimited", "too many requests", "http 429", "status 429",
			"error 429", "quota exceeded", "resource exhausted", "resource_exhausted", "throttled"),
		user(catMisread, "misread the result", "misread the output", "you misread", "misinterpreted",
			"that's not what it says", "that is not what it says", "that's not what the result",
			"that is not what the result", "the result says", "the output says", "the result shows",
			"the output shows", "read the result again", "read the output again", "it didn't fail",
			"it did not fail", "it did work", "it did succeed"),
		{category: catMisread, signals: []string{cortex.SignalResultContradicted}},
		user(catDiscovery, "should have checked", "should have searched", "didn't check available tools",
			"did not check available tools", "check the available tools", "list the tools",
			"list the available tools", "search for the tool", "use toolsearch", "you do have access",
			"you have access to the", "the tool exists", "the tool is available", "the mcp is connected",
			"the mcp server is connected"),
		{category: catDiscovery, signals: []string{cortex.SignalToolClaimedUnavailable}},
		mcpErr(catSurface, "unknown tool", "tool not found", "no such tool", "no such tool available",
			"tool not available", "method not found", "unknown method", "-32601", "not a valid tool",
			"tool does not exist", "invalid tool"),
		user(catSurface, "wrong server", "wrong mcp server", "that tool doesn't exist", "that tool does not exist",
			"there is no such tool", "no such tool"),
	}
	r := newRules("mcp", cats, rules)
	r.subject = mcpSubject
	r.lensFactor = mcpFactor
	r.noAnchors = "no negative signal anchors captured"
	return r
}

// mcpErrorSignals maps the categories read from MCP error text to the MCP
// lens's signals, in the lens's order. The error-class signals have no
// signal rule of their own: the text that raised the signal is the
// evidence, and counting the signal again would double it.
var mcpErrorSignals = []struct{ category, signal string }{
	{catMCPTimeout, cortex.SignalTimeoutOrRateLimit},
	{catMCPAuth, cortex.SignalAuthFailure},
	{catSchema, cortex.SignalSchemaError},
	{catServerUnavailable, cortex.SignalUnknownToolOrServer},
	{catSurface, cortex.SignalUnknownToolOrServer},
}

// MCPErrorSignals returns the MCP lens signals (timeout_or_rate_limit,
// auth_or_permission_failure, schema_or_validation_error,
// unknown_tool_or_server, in that order) that the error text of a failed
// MCP call's result carries. The MCP lens detects its error classes with
// it, so that signals and findings read the same phrases.
func MCPErrorSignals(errorText string) []string {
	norm := phrase.Normalize(errorText)
	if norm == "" {
		return nil
	}
	var out []string
	for _, m := range mcpErrorSignals {
		if slices.Contains(out, m.signal) {
			continue
		}
		for i := range mcpRules.rules {
			ru := &mcpRules.rules[i]
			if ru.category == m.category && ru.voices&voiceMCP != 0 && len(ru.find(norm)) > 0 {
				out = append(out, m.signal)
				break
			}
		}
	}
	return out
}

// mcpSubject renders the incident's subject for hints: `the "search" tool
// of the "labby" MCP server`, `the "labby" MCP server`, `the "search" MCP
// tool`, else "the MCP server". Names are cleaned, bounded and quoted.
func mcpSubject(inc *cortex.Incident) string {
	q := func(s string) string {
		s = clean(s)
		if r := []rune(s); len(r) > maxSubjectRunes {
			s = string(r[:maxSubjectRunes]) + "…"
		}
		return strconv.Quote(s)
	}
	server, tool := clean(inc.MCPServer), clean(inc.MCPTool)
	switch {
	case server != "" && tool != "":
		return "the " + q(tool) + " tool of the " + q(server) + " MCP server"
	case server != "":
		return "the " + q(server) + " MCP server"
	case tool != "":
		return "the " + q(tool) + " MCP tool"
	}
	return "the MCP server"
}

// mcpFactor: two or more of the incident's own calls failed, citing their
// result and call rows (and naming their MCP event ids).
func mcpFactor(b *cortex.Bundle) (cortex.Factor, bool) {
	logs, events := map[int64]bool{}, map[int64]bool{}
	for _, ev := range b.MCPEvents {
		failed := (ev.IsError != nil && *ev.IsError) || ev.Status == cortex.CallError || (ev.ExitCode != nil && *ev.ExitCode != 0)
		if !failed {
			continue
		}
		events[ev.ID] = true
		for _, id := range []*int64{ev.ResultLogID, ev.CallLogID} {
			if id != nil {
				logs[*id] = true
			}
		}
	}
	if len(events) < toolFailureThreshold {
		return cortex.Factor{}, false
	}
	return cortex.Factor{
		Factor: fmt.Sprintf("repeated MCP call failures: %d of %d calls to %s failed (mcp events %s)",
			len(events), len(b.MCPEvents), mcpSubject(&b.Incident), idList(sortedIDs(events))),
		EvidenceIDs: sortedIDs(logs),
	}, true
}
