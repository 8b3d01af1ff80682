package incident

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/findings"
	"github.com/cortexhq/cortex/phrase"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/voice"
)

// mcpLens finds MCP servers and tools that went wrong: calls that fail
// again and again, time out or hit a rate limit, are refused for auth,
// fail schema validation or name an unknown tool or server; users
// correcting the agent right after a call; and the agent claiming a tool
// is unavailable, or that a call failed, against the evidence. Only calls
// classified as MCP (mcp_server set) are candidates: builtin tools are
// context, never MCP incidents.
//
// A member is one MCP call; the subject is (server, tool). Failures are
// read from the stored outcome first (is_error, status, exit code); the
// error-class signals read the error text of the call's result only, never
// its arguments, the transcript or assistant prose.
type mcpLens struct{}

// Bounds of the per-session reads of the MCP lens.
const (
	sessionAssistantRowsCap = 2_000
	capMCPEvents            = 25
	capMCPNearby            = 25
)

func (mcpLens) Name() string   { return cortex.LensMCP }
func (mcpLens) prefix() string { return "mcp-inc-" }

func (mcpLens) signals() []string {
	return []string{cortex.SignalRepeatedFailure, cortex.SignalTimeoutOrRateLimit, cortex.SignalAuthFailure,
		cortex.SignalSchemaError, cortex.SignalUnknownToolOrServer, cortex.SignalCorrectionAfterCall,
		cortex.SignalToolClaimedUnavailable, cortex.SignalResultContradicted}
}

// prepare rejects the other lenses' parameters and parses the subject:
// Target and ToolName into MCPServer and MCPTool (see parseMCPTarget). The
// names are matched against the stored ones later (resolveMCP), when the
// store is at hand.
func (mcpLens) prepare(p *cortex.IncidentParams) error {
	switch {
	case len(p.Terms) > 0:
		return cortex.Errorf(cortex.CodeInvalid, "terms apply to the abuse lens only")
	case p.Skill != "" || p.Plugin != "":
		return cortex.Errorf(cortex.CodeInvalid, "skill and plugin apply to the skill lens only")
	case p.Hook != "" || p.HookEvent != "" || p.HookSource != "" || p.EvidenceKind != "":
		return cortex.Errorf(cortex.CodeInvalid, "hook, hook_event, hook_source and evidence_kind apply to the hook lens only")
	}
	p.MCPServer, p.MCPTool = strings.TrimSpace(p.MCPServer), strings.TrimSpace(p.MCPTool)
	if name := strings.TrimSpace(p.ToolName); name != "" {
		server, tool, ok := splitMCPName(name)
		if !ok {
			return cortex.Errorf(cortex.CodeInvalid, "tool_name %q is not an MCP tool name (mcp__<server>__<tool>); "+
				"builtin tools are never MCP incidents", name)
		}
		if err := mergeSubject(p, "tool_name", name, server, tool); err != nil {
			return err
		}
	}
	if target := strings.TrimSpace(p.Target); target != "" {
		server, tool := parseMCPTarget(target)
		if err := mergeSubject(p, "target", target, server, tool); err != nil {
			return err
		}
	}
	return nil
}

// parseMCPTarget reads what a user typed for `cortex assess mcp TARGET`:
// "mcp__labby__search" (the name the agent saw) is server labby, tool
// search; "labby/search" is the same; "mcp__labby" or "labby" is the
// server alone.
func parseMCPTarget(s string) (server, tool string) {
	if server, tool, ok := splitMCPName(s); ok {
		return server, tool
	}
	server, tool, _ = strings.Cut(s, "/")
	return strings.TrimSpace(server), strings.TrimSpace(tool)
}

// splitMCPName splits "mcp__<server>__<tool>" (prefix in any case) at the
// first "__" after the prefix, as the transcript parsers do; the tool may
// be missing ("mcp__labby").
func splitMCPName(name string) (server, tool string, ok bool) {
	if len(name) < len("mcp__") || !strings.EqualFold(name[:len("mcp__")], "mcp__") {
		return "", "", false
	}
	server, tool, _ = strings.Cut(name[len("mcp__"):], "__")
	return server, tool, server != ""
}

// mergeSubject sets the server and tool parsed from a parameter, refusing
// a contradiction with the explicit ones.
func mergeSubject(p *cortex.IncidentParams, param, value, server, tool string) error {
	if server != "" && tool != "" && p.MCPServer != "" && p.MCPTool != "" &&
		strings.EqualFold("mcp__"+server+"__"+tool, "mcp__"+p.MCPServer+"__"+p.MCPTool) {
		return nil // the same full name split elsewhere (see resolveMCP)
	}
	if server != "" && p.MCPServer != "" && !strings.EqualFold(server, p.MCPServer) {
		return cortex.Errorf(cortex.CodeInvalid, "%s %q names server %q but mcp_server is %q", param, value, server, p.MCPServer)
	}
	if tool != "" && p.MCPTool != "" && !strings.EqualFold(tool, p.MCPTool) {
		return cortex.Errorf(cortex.CodeInvalid, "%s %q names tool %q but mcp_tool is %q", param, value, tool, p.MCPTool)
	}
	if p.MCPServer == "" {
		p.MCPServer = server
	}
	if p.MCPTool == "" {
		p.MCPTool = tool
	}
	return nil
}

// resolveMCP matches the subject against the stored names, ignoring case:
// an exact match wins, else the first stored pair equal ignoring case,
// else the stored pair whose full name mcp__server__tool equals the
// subject's (a server name holding "__" splits differently). It rewrites
// p.MCPServer and p.MCPTool to the stored spelling and reports whether
// the subject names stored calls. It is idempotent.
func resolveMCP(ctx context.Context, db Store, p *cortex.IncidentParams) (bool, error) {
	if p.MCPServer == "" && p.MCPTool == "" {
		return true, nil
	}
	names, err := db.MCPNames(ctx)
	if err != nil {
		return false, err
	}
	match := func(eq func(a, b string) bool) (store.MCPName, bool) {
		for _, n := range names {
			if (p.MCPServer == "" || eq(n.Server, p.MCPServer)) && (p.MCPTool == "" || eq(n.Tool, p.MCPTool)) {
				return n, true
			}
		}
		return store.MCPName{}, false
	}
	n, ok := match(func(a, b string) bool { return a == b })
	if !ok {
		n, ok = match(strings.EqualFold)
	}
	if !ok && p.MCPServer != "" && p.MCPTool != "" {
		full := "mcp__" + p.MCPServer + "__" + p.MCPTool
		for _, c := range names {
			if strings.EqualFold("mcp__"+c.Server+"__"+c.Tool, full) {
				n, ok = c, true
				break
			}
		}
		if ok {
			p.MCPServer, p.MCPTool = n.Server, n.Tool
			return true, nil
		}
	}
	if !ok {
		return false, nil
	}
	if p.MCPServer != "" {
		p.MCPServer = n.Server
	}
	if p.MCPTool != "" {
		p.MCPTool = n.Tool
	}
	return true, nil
}

func mcpFilter(p *cortex.IncidentParams, limit int) store.MCPFilter {
	return store.MCPFilter{CandidateFilter: store.CandidateFilter{Tool: p.Tool, Project: p.Project, Session: p.Session,
		Host: p.Host, Since: p.Since, Until: p.Until, Limit: limit}, Server: p.MCPServer, MCPTool: p.MCPTool}
}

// candidates resolves the subject (rewriting p to the stored names, so
// that usage, suggestions and Matched see them) and lists the newest MCP
// calls. A member's kind is its call id: with its instant it identifies
// the call across re-indexing.
func (mcpLens) candidates(ctx context.Context, db Store, p *cortex.IncidentParams, capRows int) ([]member, int, bool, error) {
	if _, err := resolveMCP(ctx, db, p); err != nil {
		return nil, 0, false, err
	}
	cs, err := db.MCPCandidates(ctx, mcpFilter(p, capRows+1))
	if err != nil {
		return nil, 0, false, err
	}
	ms, n, truncated := toMembers(cs, capRows, func(c store.MCPCandidate) member {
		return member{ID: c.ID, LogID: c.LogID, At: c.Timestamp, Kind: c.CallID, Key: groupKey{
			Tool: c.Tool, Host: c.Host, Project: c.Project, Session: c.Session, Subject: [3]string{c.Server, c.MCPTool}}}
	})
	return ms, n, truncated, nil
}

// mcpCall is an MCP call as the detectors read it.
type mcpCall struct {
	ID    int64
	LogID int64 // result row, else call row
	At    time.Time
	// Failed: is_error, status error or a non-zero exit; Succeeded: status
	// success without an error flag. A pending, cancelled or unknown
	// outcome is neither.
	Failed    bool
	Succeeded bool
	// ErrorText is the result's error text (failed calls only).
	ErrorText string
}

func toMCPCall(c store.ToolCall) mcpCall {
	out := toCall(c)
	failed := c.IsError || c.Status == cortex.CallError || (c.ExitCode != nil && *c.ExitCode != 0)
	m := mcpCall{ID: c.ID, LogID: out.LogID, At: c.Timestamp, Failed: failed,
		Succeeded: !failed && c.Status == cortex.CallSuccess}
	if failed {
		m.ErrorText = c.ErrorText
	}
	return m
}

// mcpInput is what the MCP detectors read for one group: its calls' outcomes
// (by event id), the user and assistant rows of its session (chronological,
// covering window before its first call to window after its last), and
// every call of its server in the session (chronological).
type mcpInput struct {
	calls     map[int64]mcpCall
	users     []textRow
	assistant []textRow
	server    []mcpCall
}

// detect reads each session's members' outcomes and user rows once (over
// the span of all its groups) and each group's assistant rows, then runs
// the detectors per group. Every read goes through a narrow index.
func (mcpLens) detect(ctx context.Context, db Store, _ *cortex.IncidentParams, groups []*group, window time.Duration) error {
	// Assistant prose is read from the rows whose stored claims say
	// something, when every stored reading is of these rules; else all of
	// it (a store not yet upgraded), and the claims are read here.
	claims := db.SessionClaimRows
	if current, err := db.ClaimsCurrent(ctx, claim.Version); err != nil {
		return err
	} else if !current {
		claims = db.SessionAssistantRows
	}
	return eachSession(ctx, groups, func(ctx context.Context, sg []*group) error {
		var ids []int64
		for _, g := range sg {
			for _, m := range g.Members {
				ids = append(ids, m.ID)
			}
		}
		tcs, err := db.ToolCallsByID(ctx, ids)
		if err != nil {
			return err
		}
		calls := make(map[int64]mcpCall, len(tcs))
		for _, c := range tcs {
			calls[c.ID] = toMCPCall(c)
		}
		// Every call of each server in the session, from the members.
		byServer := map[string][]mcpCall{}
		for _, g := range sg {
			for _, m := range g.Members {
				if c, ok := calls[m.ID]; ok {
					byServer[g.Key.Subject[0]] = append(byServer[g.Key.Subject[0]], c)
				}
			}
		}
		for _, cs := range byServer {
			slices.SortFunc(cs, func(a, b mcpCall) int {
				if c := a.At.Compare(b.At); c != 0 {
					return c
				}
				return cmpInt64(a.ID, b.ID)
			})
		}
		k := sg[0].Key
		if k.Session == "" {
			for _, g := range sg {
				detectMCP(g, mcpInput{calls: calls, server: byServer[g.Key.Subject[0]]}, window)
			}
			return nil
		}
		// What the user typed, once for the session; assistant prose (far
		// more of it) per group.
		s := store.SessionScope{Tool: k.Tool, Session: k.Session, Host: k.Host}
		from, to := mcpSpan(sg[0], window)
		for _, g := range sg[1:] {
			f, t := mcpSpan(g, window)
			from, to = minTime(from, f), maxTime(to, t)
		}
		users, _, err := userTexts(ctx, db, s, from, to)
		if err != nil {
			return err
		}
		for i := range users { // every group matches tool-choice phrases in them
			users[i].Norm = normalized(users[i].Text)
		}
		assistant, err := mcpAssistantRows(ctx, claims, s, sg, byServer, window)
		if err != nil {
			return err
		}
		for _, g := range sg {
			in := mcpInput{calls: calls, users: users, server: byServer[g.Key.Subject[0]]}
			if serverAnswered(in.server) { // else no claim can contradict it
				in.assistant = assistant
				if assistant == nil { // more prose than one read holds: per group
					f, t := mcpSpan(g, window)
					rows, err := claims(ctx, s, f, t, sessionAssistantRowsCap)
					if err != nil {
						return err
					}
					in.assistant = mcpClaimRows(rows)
				}
			}
			detectMCP(g, in, window)
		}
		return nil
	})
}

// assistantReader reads a session's assistant rows in a span (all of them,
// or those whose stored claims say something).
type assistantReader func(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error)

// mcpAssistantRows reads the session's assistant prose that could claim
// something about a server (see mcpClaimRows) once, over the spans of the
// groups whose server answered a call. It returns nil, and the caller reads
// per group, when the span holds more rows than one read returns.
func mcpAssistantRows(ctx context.Context, read assistantReader, s store.SessionScope, sg []*group, byServer map[string][]mcpCall, window time.Duration) ([]textRow, error) {
	var from, to time.Time
	for _, g := range sg {
		if !serverAnswered(byServer[g.Key.Subject[0]]) {
			continue
		}
		f, t := mcpSpan(g, window)
		if from.IsZero() {
			from, to = f, t
		}
		from, to = minTime(from, f), maxTime(to, t)
	}
	if from.IsZero() {
		return []textRow{}, nil
	}
	rows, err := read(ctx, s, from, to, sessionAssistantRowsCap)
	if err != nil || len(rows) >= sessionAssistantRowsCap {
		return nil, err
	}
	return mcpClaimRows(rows), nil
}

// mcpClaimRows keeps the assistant rows whose words make a claim (the
// server is unavailable, a call failed), normalized once.
func mcpClaimRows(rows []cortex.EvidenceRow) []textRow {
	out := make([]textRow, 0, 8)
	for _, r := range rows {
		plain := phrase.Normalize(r.Message)
		if claim.ReadNormalized(plain)&claim.Tool == 0 {
			continue
		}
		at, _ := cortex.ParseTimestamp(r.Timestamp)
		out = append(out, textRow{ID: r.ID, At: at, Text: r.Message, Plain: plain})
	}
	return out
}

// serverAnswered reports whether a call to the server succeeded: only then
// can the agent's claims (the server is unavailable, a call failed) be
// against the evidence.
func serverAnswered(server []mcpCall) bool {
	return slices.ContainsFunc(server, func(c mcpCall) bool { return c.Succeeded })
}

// mcpSpan is the span of a group's session read: window before its first
// call (an agent may claim a tool is missing before finding it) to window
// after its last.
func mcpSpan(g *group, window time.Duration) (time.Time, time.Time) {
	return g.First.Add(-window), g.Last.Add(window)
}

// The phrase sets of the MCP lens: the correction phrases match what the
// user typed; the claim phrases (package claim) match assistant prose (a
// sentence that also names the server or tool). The error classes are the
// MCP findings' phrases (findings.MCPErrorSignals), matched in the error
// text of a failed call's result only.
var (
	// mcpCorrectionPhrases add tool-choice corrections to the skill
	// lens's correction phrases.
	mcpCorrectionPhrases = phrase.NewSet(
		"wrong tool", "not the right tool", "you used the wrong", "that's the wrong", "that is the wrong",
		"wrong server", "wrong mcp", "don't use that tool", "do not use that tool", "why did you use",
		"use the other tool", "misread the result", "misread the output", "misinterpreted",
	)
)

// Detector thresholds of the MCP lens.
const (
	// repeatedMCPFailures is how many failed calls make repeated_call_failure
	// (in a streak, or ending the group unrecovered).
	repeatedMCPFailures = 2
)

// mcpErrorClasses maps a failed call's error text to its error-class signals.
func mcpErrorClasses(text string) []string { return findings.MCPErrorSignals(text) }

// detectMCP runs the MCP detectors on g: it sets the group's signals,
// anchors and call count.
//
//   - repeated_call_failure: at least two failed calls, either in a streak
//     (no success between them) or with the last one never followed by a
//     success of the tool in the group. Failures spread over many
//     successful calls (a REPL-like tool running buggy code now and then)
//     are normal work. One anchor per failed call (its result row).
//   - timeout_or_rate_limit, auth_or_permission_failure,
//     schema_or_validation_error, unknown_tool_or_server: the error text of
//     failed calls, when the failures count (repeated, one never recovered,
//     or one followed by a user correction): a lone failure that a later
//     call of the tool recovered is normal work.
//   - user_correction_after_tool_call: the user's next message after a
//     call of the group (no other user message between) is a correction.
//   - tool_claimed_unavailable: an assistant sentence says the server or
//     tool (named in it) is unavailable, while the server had a successful
//     call in the session and no failed call in the window before the
//     claim (a claim after failures is a fair report).
//   - tool_result_contradicted: an assistant sentence naming the server or
//     tool says it failed right after a successful call (before the next
//     call of the server, within the window).
func detectMCP(g *group, in mcpInput, window time.Duration) {
	from, to := signalWindow(g, window)
	g.SignalEnd = to
	g.EventCount = len(g.Members)
	g.Signals = map[string]int{}

	var calls []mcpCall
	for _, m := range g.Members {
		if c, ok := in.calls[m.ID]; ok {
			calls = append(calls, c)
		} else {
			calls = append(calls, mcpCall{ID: m.ID, LogID: m.LogID, At: m.At})
		}
	}

	// Corrections: the user's next message after a call. After a failed
	// call it answers the failure; after a successful one it is charged to
	// the tool only when it is about it (names the server or tool).
	names := mcpSubjectNames(g.Key)
	var corrections []time.Time
	for i, r := range in.users {
		if !within(r.At, from, to) {
			continue
		}
		choice := len(mcpCorrectionPhrases.FindNormalized(r.norm())) > 0
		if !choice && !r.corrects() {
			continue
		}
		prev := -1
		for j, c := range calls {
			if c.At.Before(r.At) {
				prev = j
			}
		}
		if prev < 0 {
			continue
		}
		if i > 0 && in.users[i-1].At.After(calls[prev].At) {
			continue // the user spoke in between: not a reaction to the call
		}
		if !calls[prev].Failed && !choice && !r.mentions(names) {
			continue // after a success, a correction about something else
		}
		g.addAnchor(r.ID, r.At, cortex.SignalCorrectionAfterCall, "")
		corrections = append(corrections, r.At)
	}

	// Failures.
	var failed []mcpCall
	streak, longest, unrecovered := 0, 0, false
	for _, c := range calls {
		switch {
		case c.Failed:
			failed = append(failed, c)
			streak++
			longest = max(longest, streak)
			unrecovered = true
		case c.Succeeded:
			streak, unrecovered = 0, false
		}
	}
	repeated := len(failed) >= repeatedMCPFailures && (longest >= repeatedMCPFailures || unrecovered)
	counts := repeated || unrecovered
	for _, f := range failed {
		for _, t := range corrections {
			if t.After(f.At) {
				counts = true
			}
		}
	}
	for _, f := range failed {
		if repeated {
			g.addAnchor(f.LogID, f.At, cortex.SignalRepeatedFailure, "")
		}
		if counts {
			for _, s := range mcpErrorClasses(f.ErrorText) {
				g.addAnchor(f.LogID, f.At, s, "")
			}
		}
	}

	// Claims against the evidence.
	if len(in.assistant) == 0 {
		return
	}
	serverOK := serverAnswered(in.server)
	cFrom, cTo := mcpSpan(g, window)
	for _, r := range in.assistant {
		if !within(r.At, cFrom, cTo) || !serverOK {
			continue
		}
		if !mcpClaims(r, names, claim.Phrases(claim.Unavailable)) {
			continue
		}
		if slices.ContainsFunc(in.server, func(c mcpCall) bool { return c.Failed && within(c.At, r.At.Add(-window), r.At) }) {
			continue
		}
		g.addAnchor(r.ID, r.At, cortex.SignalToolClaimedUnavailable, "")
	}
	seen := map[int64]bool{}
	for _, c := range calls {
		if !c.Succeeded {
			continue
		}
		end := c.At.Add(window)
		for _, o := range in.server {
			if o.At.After(c.At) {
				end = minTime(end, o.At)
				break
			}
		}
		for _, r := range in.assistant {
			if !r.At.After(c.At) || r.At.After(end) || seen[r.ID] {
				continue
			}
			if mcpClaims(r, names, claim.Phrases(claim.Failure)) {
				seen[r.ID] = true
				g.addAnchor(r.ID, r.At, cortex.SignalResultContradicted, "")
			}
		}
	}
}

// mcpSubjectNames is the set of names a sentence may use for the group's
// server or tool.
func mcpSubjectNames(k groupKey) *phrase.Set {
	server, tool := k.Subject[0], k.Subject[1]
	names := []string{server}
	if tool != "" {
		names = append(names, tool, server+"/"+tool, "mcp__"+server+"__"+tool)
	}
	return phrase.NewSet(names...)
}

// mcpClaims reports whether one sentence of text (quotations and code blanked)
// both names the subject and holds a phrase of set.
func mcpClaims(r textRow, names, set *phrase.Set) bool {
	text := r.Text
	// Most assistant rows name neither the server nor an unavailability:
	// decide that on the raw text before the costly quote blanking (which
	// only removes text, so it can only remove matches).
	if raw := r.plain(); len(set.FindNormalized(raw)) == 0 || len(names.FindNormalized(raw)) == 0 {
		return false
	}
	norm := phrase.Normalize(voice.Unquoted(text))
	if len(set.FindNormalized(norm)) == 0 || len(names.FindNormalized(norm)) == 0 {
		return false
	}
	for _, s := range mcpSentences(norm) {
		if len(set.FindNormalized(s)) > 0 && len(names.FindNormalized(s)) > 0 {
			return true
		}
	}
	return false
}

// mcpSentences splits normalized text at line breaks and sentence ends.
func mcpSentences(norm string) []string {
	return strings.FieldsFunc(strings.NewReplacer(". ", "\n", "! ", "\n", "? ", "\n", "; ", "\n").Replace(norm),
		func(r rune) bool { return r == '\n' })
}

// isIncident: a group without a negative signal is usage, listed only on
// request (or when asked for by id).
func (mcpLens) isIncident(g *group, p *cortex.IncidentParams) bool {
	return len(g.present()) > 0 || p.IncludeUsage || p.IncidentID != ""
}

// Score weights of the MCP lens: per counted signal (each capped), plus
// a bonus per distinct signal.
const (
	weightMCPFailure      = 4 // per failed call of repeated_call_failure, at most 6
	weightMCPTimeout      = 5 // per timed-out or rate-limited call, at most 5
	weightMCPAuth         = 8 // per auth failure, at most 3
	weightMCPSchema       = 6 // per schema failure, at most 3
	weightMCPUnknown      = 8 // per unknown tool/server failure, at most 3
	weightMCPCorrection   = 15
	weightMCPClaim        = 10 // per claim against the evidence, at most 2 of each kind
	weightMCPVariety      = 5
	capMCPFailures        = 6
	capMCPTimeouts        = 5
	capMCPClassFailures   = 3
	capMCPCorrections     = 3
	capMCPClaimsPerSignal = 2
)

// mcpScore is min(failures,6)*4 + min(timeouts,5)*5 + min(auth,3)*8 +
// min(schema,3)*6 + min(unknown,3)*8 + min(corrections,3)*15 +
// min(unavailable claims,2)*10 + min(contradictions,2)*10 + distinct
// signals*5. Three timed-out calls the agent gave up on score
// 4*3 + 5*3 + 2*5 = 37 (high); three failures the agent worked past, one a
// timeout, 4*3 + 5 + 2*5 = 27 (medium); two plain failures 13 and a lone
// unrecovered timeout 10 (low).
func mcpScore(s map[string]int) float64 {
	variety := 0
	for _, n := range s {
		if n > 0 {
			variety++
		}
	}
	return float64(min(s[cortex.SignalRepeatedFailure], capMCPFailures)*weightMCPFailure +
		min(s[cortex.SignalTimeoutOrRateLimit], capMCPTimeouts)*weightMCPTimeout +
		min(s[cortex.SignalAuthFailure], capMCPClassFailures)*weightMCPAuth +
		min(s[cortex.SignalSchemaError], capMCPClassFailures)*weightMCPSchema +
		min(s[cortex.SignalUnknownToolOrServer], capMCPClassFailures)*weightMCPUnknown +
		min(s[cortex.SignalCorrectionAfterCall], capMCPCorrections)*weightMCPCorrection +
		min(s[cortex.SignalToolClaimedUnavailable], capMCPClaimsPerSignal)*weightMCPClaim +
		min(s[cortex.SignalResultContradicted], capMCPClaimsPerSignal)*weightMCPClaim +
		variety*weightMCPVariety)
}

func (mcpLens) score(g *group) float64 { return mcpScore(g.Signals) }

// label: < 15 low, < 35 medium, < 60 high, else critical (as the skill
// lens).
func (mcpLens) label(score float64) string { return skillLabel(score) }

func (mcpLens) subject(k groupKey, inc *cortex.Incident) {
	inc.MCPServer, inc.MCPTool = k.Subject[0], k.Subject[1]
}

// extras adds the group's calls (the first 25, chronological), each with
// the call row proving it happened and the result row proving how it
// ended, and the session's other MCP calls in the correlation window (the
// first 25).
func (mcpLens) extras(ctx context.Context, db Store, g *group, b *cortex.Bundle) error {
	ids := make([]int64, 0, min(len(g.Members), capMCPEvents))
	own := make(map[int64]bool, len(g.Members))
	for _, m := range g.Members {
		own[m.ID] = true
		if len(ids) == capMCPEvents {
			b.MCPEventsTruncated = true
			continue
		}
		ids = append(ids, m.ID)
	}
	evs, err := db.ToolEventsByID(ctx, ids)
	if err != nil {
		return err
	}
	b.MCPEvents = evs
	if b.MCPEvents == nil {
		b.MCPEvents = []cortex.ToolEventRow{}
	}
	b.NearbyMCPEvents = []cortex.ToolEventRow{}
	if g.Key.Session == "" {
		return nil
	}
	corr := time.Duration(b.CorrelationWindowMinutes) * time.Minute
	first, last := g.span()
	s := store.SessionScope{Tool: g.Key.Tool, Session: g.Key.Session, Host: g.Key.Host}
	calls, err := db.SessionMCPCalls(ctx, s, first.Add(-corr), maxTime(last, g.SignalEnd).Add(corr), sessionToolCallsCap)
	if err != nil {
		return err
	}
	var near []int64
	for _, c := range calls {
		if own[c.ID] {
			continue
		}
		if len(near) == capMCPNearby {
			b.NearbyMCPEventsTruncated = true
			break
		}
		near = append(near, c.ID)
	}
	if len(near) > 0 {
		if b.NearbyMCPEvents, err = db.ToolEventsByID(ctx, near); err != nil {
			return err
		}
	}
	return nil
}

func (mcpLens) subjectFirst(p *cortex.IncidentParams) bool {
	return p.MCPServer != "" || p.MCPTool != "" || p.ToolName != "" || p.Target != ""
}

// describe names the subject: `MCP tool "labby/search"`, `MCP server
// "labby"`, `MCP tool "search"` (any server).
func (mcpLens) describe(p *cortex.IncidentParams) string {
	server, tool := p.MCPServer, p.MCPTool
	if server == "" && tool == "" {
		if p.Target != "" {
			server, tool = parseMCPTarget(p.Target)
		} else if p.ToolName != "" {
			server, tool, _ = splitMCPName(p.ToolName)
		}
	}
	switch {
	case server != "" && tool != "":
		return fmt.Sprintf("MCP tool %q", server+"/"+tool)
	case server != "":
		return fmt.Sprintf("MCP server %q", server)
	case tool != "":
		return fmt.Sprintf("MCP tool %q", tool)
	}
	return "the selection"
}

// matched says what the subject resolved to among the stored MCP calls
// ("MCP server labby", "MCP tool labby/search"), or "" when it names none
// (for Investigation.Matched).
func (l mcpLens) matched(ctx context.Context, db Store, p *cortex.IncidentParams) string {
	if !l.subjectFirst(p) {
		return ""
	}
	q := *p
	if ok, err := resolveMCP(ctx, db, &q); err != nil || !ok {
		return ""
	}
	switch {
	case q.MCPServer != "" && q.MCPTool != "":
		return "MCP tool " + q.MCPServer + "/" + q.MCPTool
	case q.MCPServer != "":
		return "MCP server " + q.MCPServer
	}
	return "MCP tool " + q.MCPTool + " (any server)"
}

// usage counts the subject's MCP calls and sessions in the range.
func (mcpLens) usage(ctx context.Context, db Store, p *cortex.IncidentParams) (usageReport, error) {
	if _, err := resolveMCP(ctx, db, p); err != nil {
		return usageReport{}, err
	}
	u, err := db.MCPUsage(ctx, mcpFilter(p, 0))
	if err != nil {
		return usageReport{}, err
	}
	return usageReport{Events: u.Calls, Sessions: u.Sessions, Noun: "MCP calls"}, nil
}

func (l mcpLens) suggest(ctx context.Context, db Store, p *cortex.IncidentParams) (string, []string) {
	var out []string
	if _, err := resolveMCP(ctx, db, p); err == nil && (p.MCPServer != "" || p.MCPTool != "") {
		if p.MCPServer != "" && p.MCPTool != "" {
			out = append(out, "drop the tool and filter by server only")
		}
		if names, err := db.MCPNames(ctx); err == nil {
			out = append(out, nearestMCP(p.MCPServer, p.MCPTool, names)...)
		}
	}
	out = append(out, "list MCP calls: cortex ai mcp-events --mcp-only")
	return fmt.Sprintf("no MCP calls match %s with these filters", l.describe(p)), out
}

// nearestMCP suggests stored servers near the server asked for and stored
// server/tool names near the tool asked for.
func nearestMCP(server, tool string, names []store.MCPName) []string {
	var out []string
	if server != "" && !slices.ContainsFunc(names, func(n store.MCPName) bool { return n.Server == server }) {
		var servers []string
		for _, n := range names {
			if len(servers) == 0 || servers[len(servers)-1] != n.Server {
				servers = append(servers, n.Server)
			}
		}
		for _, s := range nearestNames(server, servers, 5) {
			out = append(out, fmt.Sprintf("did you mean MCP server %q?", s))
		}
	}
	if tool != "" {
		var tools []string
		want := tool
		if server != "" {
			want = server + "/" + tool
		}
		for _, n := range names {
			if n.Tool == "" {
				continue
			}
			if server == "" {
				tools = append(tools, n.Tool)
			} else {
				tools = append(tools, n.Server+"/"+n.Tool)
			}
		}
		slices.Sort(tools)
		for _, t := range nearestNames(want, slices.Compact(tools), 5) {
			out = append(out, fmt.Sprintf("did you mean MCP tool %q?", t))
		}
	}
	return out
}
