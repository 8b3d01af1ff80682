// Package sqlpart builds the WHERE conditions both stores put in their
// queries for the same filters — with ? placeholders, which the PostgreSQL
// store numbers — so a filter means the same rows on SQLite and on
// PostgreSQL by construction.
package sqlpart

import (
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

// Where accumulates SQL conditions and their arguments.
type Where struct {
	Conds []string
	Args  []any
}

// Add adds a condition with its arguments.
func (w *Where) Add(cond string, args ...any) {
	w.Conds = append(w.Conds, cond)
	w.Args = append(w.Args, args...)
}

// SQL returns the conditions as " AND c1 AND c2" ("" when none).
func (w Where) SQL() string {
	if len(w.Conds) == 0 {
		return ""
	}
	return " AND " + strings.Join(w.Conds, " AND ")
}

// SessionRange appends to q (whose first three placeholders are a
// session's id, agent and host) an optional time range, and returns the
// arguments: a zero time leaves that side open.
func SessionRange(q string, s store.SessionScope, from, to time.Time) (string, []any) {
	args := []any{s.Session, string(s.Tool), s.Host}
	if !from.IsZero() {
		q += ` AND timestamp >= ?`
		args = append(args, cortex.FormatTime(from))
	}
	if !to.IsZero() {
		q += ` AND timestamp <= ?`
		args = append(args, cortex.FormatTime(to))
	}
	return q, args
}

// Marks returns n comma-separated placeholders.
func Marks(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// In adds "col IN (…)" over vals.
func (w *Where) In(col string, vals []string) {
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	w.Add(col+" IN ("+Marks(len(vals))+")", args...)
}

// scope adds the agent, project, session, host and time filters shared
// by candidate scans and event listings, on columns named with prefix.
func (w *Where) scope(tool cortex.Tool, project, session, host, prefix string, since, until time.Time) {
	if tool != "" {
		w.Add(prefix+"ai_tool = ?", string(tool))
	}
	if project != "" {
		w.Add(prefix+"ai_project = ?", project)
	}
	if session != "" {
		w.Add(prefix+"ai_session_id = ?", session)
	}
	if host != "" {
		w.Add(prefix+"hostname = ?", host)
	}
	if !since.IsZero() {
		w.Add(prefix+"timestamp >= ?", cortex.FormatTime(since))
	}
	if !until.IsZero() {
		w.Add(prefix+"timestamp < ?", cortex.FormatTime(until))
	}
}

// Candidate is the condition of a candidate scan's common filter, on
// columns named with prefix ("" or "l.").
func Candidate(f store.CandidateFilter, prefix string) Where {
	var w Where
	w.scope(f.Tool, f.Project, f.Session, f.Host, prefix, f.Since, f.Until)
	return w
}

// Event is the condition of an event listing's common filter, continued
// after its cursor (listings ordered by timestamp and id, newest first).
func Event(f cortex.EventFilter) Where {
	var w Where
	w.scope(f.Tool, f.Project, f.Session, f.Host, "", f.Since, f.Until)
	w.After(f.After, "timestamp", "id")
	return w
}

// After continues a listing ordered by (timeCol, idCol) descending after
// the cursor's position: keyset paging, so rows written meanwhile (the
// watcher adds the newest) neither repeat nor shift a page. A cursor with
// a text key (Key) compares idCol as text. A nil or empty cursor adds
// nothing.
func (w *Where) After(c *cortex.Cursor, timeCol, idCol string) {
	if c == nil || (c.Time == "" && c.Key == "" && c.ID == 0) {
		return
	}
	var id any = c.ID
	if c.Key != "" {
		id = c.Key
	}
	w.Add("("+timeCol+", "+idCol+") < (?, ?)", c.Time, id)
}

// RowCursor is the cursor after a row of a listing ordered by time and
// numeric id (see After).
func RowCursor(timestamp string, id int64) cortex.Cursor {
	return cortex.Cursor{Time: timestamp, ID: id}
}

// SkillSummariesAfter is the HAVING condition (" HAVING …", or "") that
// continues a listing of skill summaries (grouped by skill_name, ordered by
// last use and name, newest first) after its cursor, with its arguments.
func SkillSummariesAfter(c *cortex.Cursor) (string, []any) {
	if c == nil {
		return "", nil
	}
	return ` HAVING (max(timestamp), skill_name) < (?, ?)`, []any{c.Time, c.Key}
}

// SkillSummaryCursor is the cursor after a skill summary.
func SkillSummaryCursor(s cortex.SkillSummary) cortex.Cursor {
	return cortex.Cursor{Time: s.LastSeen, Key: s.SkillName}
}

// MCP is the condition of an MCP candidate scan or usage count: MCP calls
// only (mcp_server set), of the subject when named.
func MCP(f store.MCPFilter) Where {
	w := Candidate(f.CandidateFilter, "")
	w.Add("mcp_server IS NOT NULL")
	if f.Server != "" {
		w.Add("mcp_server = ?", f.Server)
	}
	if f.MCPTool != "" {
		w.Add("mcp_tool = ?", f.MCPTool)
	}
	return w
}

// HookSubject adds the hook subject of f; false when it can match nothing.
func HookSubject(f store.HookFilter, w *Where) bool {
	if f.MatchesNothing() {
		return false
	}
	if f.Events != nil {
		w.In("hook_event", f.Events)
	}
	if f.Names != nil {
		w.In("hook_name", f.Names)
	}
	if f.Source != "" {
		w.Add("hook_source = ?", f.Source)
	}
	return true
}

// HookConfig is the condition of a scan of configured hooks: a project's
// configuration or a user-level one (no project), configured during the
// range (first seen before Until, last seen at or after Since), of the
// evidence kind (both configuration kinds by default) and subject; false
// when it can match nothing. A configuration row has no session.
func HookConfig(f store.HookFilter) (Where, bool) {
	var w Where
	if f.Tool != "" {
		w.Add("ai_tool = ?", string(f.Tool))
	}
	if f.Project != "" {
		w.Add("(ai_project = ? OR ai_project IS NULL)", f.Project)
	}
	if f.Host != "" {
		w.Add("hostname = ?", f.Host)
	}
	if !f.Since.IsZero() {
		w.Add("COALESCE(last_seen, timestamp) >= ?", cortex.FormatTime(f.Since))
	}
	if !f.Until.IsZero() {
		w.Add("timestamp < ?", cortex.FormatTime(f.Until))
	}
	if f.EvidenceKind == "" {
		w.Add("evidence_kind IN (?, ?)", cortex.EvidenceConfig, cortex.EvidenceTrust)
	} else {
		w.Add("evidence_kind = ?", f.EvidenceKind)
	}
	return w, HookSubject(f, &w)
}

// SessionsBetween is the condition of a SessionFilter on ai_sessions.
func SessionsBetween(f store.SessionFilter) Where {
	var w Where
	w.Add("ai_tool = ?", string(f.Tool))
	w.Add("hostname = ?", f.Host)
	w.Add("last_seen > ?", cortex.FormatTime(f.After))
	w.Add("last_seen < ?", cortex.FormatTime(f.Before))
	w.Add("first_seen > ?", cortex.FormatTime(f.After))
	if f.Project != "" {
		w.Add("ai_project = ?", f.Project)
	}
	if f.Session != "" {
		w.Add("ai_session_id = ?", f.Session)
	}
	if !f.Since.IsZero() {
		w.Add("last_seen >= ?", cortex.FormatTime(f.Since))
	}
	if !f.Until.IsZero() {
		w.Add("first_seen < ?", cortex.FormatTime(f.Until))
	}
	return w
}

// Logs is the condition of a non-AI log listing (ai_tool IS NULL is the
// caller's).
func Logs(p store.LogParams) (Where, error) {
	var w Where
	if p.Host != "" {
		w.Add("hostname = ?", p.Host)
	}
	if p.App != "" {
		w.Add("app_name = ?", p.App)
	}
	if p.Severity != "" {
		var sevs []string
		for _, s := range cortex.Severities() {
			if s.AtLeast(p.Severity) {
				sevs = append(sevs, string(s))
			}
		}
		if len(sevs) == 0 {
			return w, cortex.Errorf(cortex.CodeInvalid, "unknown severity %q", p.Severity)
		}
		w.In("severity", sevs)
	}
	if p.Source != "" {
		w.Add("source >= ? AND source < ?", p.Source, p.Source+"\U0010FFFF")
	}
	if !p.Since.IsZero() {
		w.Add("timestamp >= ?", cortex.FormatTime(p.Since))
	}
	if !p.Until.IsZero() {
		w.Add("timestamp < ?", cortex.FormatTime(p.Until))
	}
	w.After(p.After, "timestamp", "id")
	return w, nil
}

// Search is the condition of a full-text search's filters, on logs
// columns named with prefix (the match itself is the store's).
func Search(p cortex.SearchParams, prefix string) Where {
	var w Where
	w.scope(p.Tool, p.Project, p.Session, p.Host, prefix, p.Since, p.Until)
	if p.Role != "" {
		w.Add(prefix+"ai_role = ?", string(p.Role))
	}
	if !p.Rank {
		w.After(p.After, prefix+"timestamp", prefix+"id")
	}
	return w
}

// SearchOffset is where a ranked search's page starts (a relevance
// ranking pages by offset; a newest-first search by keyset, see Search).
func SearchOffset(p cortex.SearchParams) int {
	if p.Rank {
		return p.After.OffsetOf()
	}
	return 0
}

// SearchNext is the cursor after the last hit of a truncated search page
// that started at offset ("" on the last page).
func SearchNext(p cortex.SearchParams, res cortex.SearchResult, offset int) string {
	if !res.Truncated || len(res.Hits) == 0 {
		return ""
	}
	if p.Rank {
		return cortex.Cursor{Offset: offset + len(res.Hits)}.Encode()
	}
	last := res.Hits[len(res.Hits)-1]
	return RowCursor(last.Timestamp, last.ID).Encode()
}

// Sessions is the condition of a session listing on ai_sessions: active
// since Since (last seen), started before Until (first seen).
func Sessions(p cortex.SessionParams) Where {
	var w Where
	w.scope(p.Tool, p.Project, "", p.Host, "", time.Time{}, time.Time{})
	if !p.Since.IsZero() {
		w.Add("last_seen >= ?", cortex.FormatTime(p.Since))
	}
	if !p.Until.IsZero() {
		w.Add("first_seen < ?", cortex.FormatTime(p.Until))
	}
	if c := p.After; c != nil {
		session, rest, _ := strings.Cut(c.Key, "\n")
		tool, host, _ := strings.Cut(rest, "\n")
		w.Add("(last_seen, ai_session_id, ai_tool, hostname) < (?, ?, ?, ?)", c.Time, session, tool, host)
	}
	return w
}

// SessionsOrder is the order of a session listing (its cursor's order).
const SessionsOrder = ` ORDER BY last_seen DESC, ai_session_id DESC, ai_tool DESC, hostname DESC`

// SessionCursor is the cursor after a session of a listing.
func SessionCursor(s cortex.Session) cortex.Cursor {
	return cortex.Cursor{Time: s.LastSeen, Key: s.SessionID + "\n" + string(s.Tool) + "\n" + s.Hostname}
}

// Invocations is the condition of an LLM audit listing, continued after
// its cursor (ordered by start time and id, newest first).
func Invocations(p cortex.InvocationParams) Where {
	var w Where
	if !p.Since.IsZero() {
		w.Add("started_at >= ?", cortex.FormatTime(p.Since))
	}
	if p.Action != "" {
		w.Add("action = ?", p.Action)
	}
	if p.Status != "" {
		w.Add("status = ?", p.Status)
	}
	if c := p.After; c != nil {
		w.Add("(started_at, id) < (?, ?)", c.Time, c.Key)
	}
	return w
}

// InvocationCursor is the cursor after an audited invocation.
func InvocationCursor(inv cortex.Invocation) cortex.Cursor {
	return cortex.Cursor{Time: cortex.FormatTime(inv.StartedAt), Key: inv.ID}
}

// UsageSums is the select list of a token usage read grouped by model (and
// whatever precedes it): the model, its responses and its tokens of each
// kind, summed as integers on both stores. UsageDest scans what follows
// the model.
const UsageSums = `model, count(*), CAST(sum(input_tokens) AS BIGINT), CAST(sum(output_tokens) AS BIGINT),
	CAST(sum(cache_read_tokens) AS BIGINT), CAST(sum(cache_write_tokens) AS BIGINT), CAST(sum(reasoning_tokens) AS BIGINT)`

// UsageDest are the scan destinations of UsageSums after the model.
func UsageDest(c *cortex.TokenCounts) []any {
	return []any{&c.Responses, &c.Input, &c.Output, &c.CacheRead, &c.CacheWrite, &c.Reasoning}
}

// UsageChunk bounds the sessions of one SessionUsage query.
const UsageChunk = 500

// SessionUsage is the query of the token usage of sessions, per session
// and model, for the distinct ids of a chunk of at most UsageChunk
// sessions; the caller keeps the (agent, session, host) keys it asked for.
func SessionUsage(ids []string) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return `SELECT ai_tool, ai_session_id, hostname, ` + UsageSums + ` FROM ai_token_usage WHERE ai_session_id IN (` +
		Marks(len(ids)) + `) GROUP BY ai_tool, ai_session_id, hostname, model`, args
}

// CallNameCols are the columns of a tool call (as both stores scan them:
// id, call and result rows, time, tool, MCP server and tool, status,
// failure, exit code, error text) that a session's call index holds:
// the status, exit code and error text are left empty.
const CallNameCols = `id, call_log_id, result_log_id, timestamp, tool_name, COALESCE(mcp_server, ''),
	COALESCE(mcp_tool, ''), '', COALESCE(is_error, 0), CAST(NULL AS bigint), ''`

// SessionIDs are the distinct session ids of sessions, in order.
func SessionIDs(sessions []cortex.Session) []string {
	return store.Distinct(sessions, func(s cortex.Session) string { return s.SessionID })
}

// UsageBetween is the query of one session's token usage per model
// between two stored times (inclusive).
func UsageBetween(s store.SessionScope, from, to string) (string, []any) {
	return `SELECT ` + UsageSums + ` FROM ai_token_usage WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ?
		AND timestamp >= ? AND timestamp <= ? GROUP BY model`, []any{s.Session, string(s.Tool), s.Host, from, to}
}

// RecentSessionIDs is the query of the ids of the most recently active
// sessions whose id starts with prefix (shell completion), at most limit.
func RecentSessionIDs(prefix string, limit int) (string, []any) {
	return `SELECT ai_session_id FROM ai_sessions WHERE ai_session_id >= ? AND ai_session_id < ?
		GROUP BY ai_session_id ORDER BY max(last_seen) DESC, ai_session_id LIMIT ?`, []any{prefix, prefix + "\U0010FFFF", limit}
}
