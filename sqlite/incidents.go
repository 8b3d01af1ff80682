package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
)

// candidateWhere is the condition of a candidate filter on columns named
// with prefix.
func candidateWhere(f CandidateFilter, prefix string) where {
	return part(sqlpart.Candidate(f, prefix))
}

// SkillCandidates returns the newest skill events matching f (at most
// f.Limit), newest first.
func (db *DB) SkillCandidates(ctx context.Context, f CandidateFilter) ([]SkillCandidate, error) {
	w := candidateWhere(f, "")
	switch {
	case len(f.Skills) > 0:
		args := make([]any, len(f.Skills))
		for i, n := range f.Skills {
			args[i] = n
		}
		w.add("skill_name IN ("+strings.TrimSuffix(strings.Repeat("?,", len(f.Skills)), ",")+")", args...)
	case f.Skill != "":
		w.add("skill_name = ?", f.Skill)
	}
	if f.Plugin != "" {
		w.add("skill_plugin = ?", f.Plugin)
	}
	rows, err := db.scan(ctx, `SELECT id, log_id, skill_name, COALESCE(skill_plugin, ''), ai_tool, COALESCE(ai_project, ''),
		COALESCE(ai_session_id, ''), hostname, timestamp, event_kind FROM ai_skill_events WHERE 1=1`+w.sql()+
		` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.args, f.Limit)...)
	if err != nil {
		return nil, queryFailed(err, "skill events")
	}
	defer rows.Close()
	var out []SkillCandidate
	for rows.Next() {
		var c SkillCandidate
		var tool, ts string
		if err := rows.Scan(&c.ID, &c.LogID, &c.Skill, &c.Plugin, &tool, &c.Project, &c.Session, &c.Host, &ts, &c.Kind); err != nil {
			return nil, queryFailed(err, "skill events")
		}
		c.Tool, c.Timestamp = cortex.Tool(tool), parseStoredTime(ts)
		out = append(out, c)
	}
	return out, rows.Err()
}

// UserTextMatches returns the newest user-typed transcript rows matching
// any of terms (each a phrase of the full-text index), at most f.Limit,
// newest first — and every user row the search index has not
// reached yet (the caller reads their words itself), when few are; when
// many are, it leaves them out and reports complete=false.
func (db *DB) UserTextMatches(ctx context.Context, terms []string, f CandidateFilter) (out []TextCandidate, complete bool, err error) {
	ftsExpr := termsQuery(terms)
	w := candidateWhere(f, "l.")
	cols := `SELECT l.id, l.ai_tool, COALESCE(l.ai_project, ''), COALESCE(l.ai_session_id, ''), l.hostname, l.timestamp, ` + textCols("l.")
	if !db.searchAttached {
		return nil, false, nil
	}
	mark, err := db.searchWatermark(ctx)
	if err != nil {
		return nil, false, err
	}
	pending, estimated, err := db.SearchLag(ctx)
	if err != nil {
		return nil, false, err
	}
	query := cols + ` FROM search.search_fts f JOIN logs l ON l.id = f.rowid WHERE search_fts MATCH ? AND l.ai_role = 'user'` + w.sql()
	args := append([]any{ftsExpr}, w.args...)
	complete = !estimated && pending <= searchLagExact
	if complete {
		query += ` UNION ALL ` + cols + ` FROM logs l WHERE l.id > ? AND l.ai_role = 'user'` + w.sql()
		args = append(append(args, mark), w.args...)
	}
	rows, err := db.scan(ctx, `SELECT * FROM (`+query+`) ORDER BY timestamp DESC, id DESC LIMIT ?`, append(args, f.Limit)...)
	out, err = collectTexts(ctx, db, rows, err, "matching rows", func(rows *sql.Rows, t *textScan) (TextCandidate, int64, error) {
		var c TextCandidate
		var tool, ts string
		err := rows.Scan(append([]any{&c.ID, &tool, &c.Project, &c.Session, &c.Host, &ts}, t.dest()...)...)
		c.Tool, c.Timestamp = cortex.Tool(tool), parseStoredTime(ts)
		return c, c.ID, err
	}, func(c *TextCandidate, text string) { c.Message = text })
	return out, complete, err
}

// termsQuery builds an FTS expression matching any of terms (each an FTS
// string, so no term can become syntax).
func termsQuery(terms []string) string {
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		parts = append(parts, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`)
	}
	return strings.Join(parts, " OR ")
}

var evidenceCols = `id, timestamp, COALESCE(ai_tool, ''), COALESCE(ai_session_id, ''), hostname, COALESCE(ai_role, ''),
	COALESCE(ai_kind, ''), COALESCE(ai_tool_name, ''), severity, is_error, COALESCE(app_name, ''), ` + textCols("")

func scanEvidence(rows *sql.Rows, t *textScan) (cortex.EvidenceRow, int64, error) {
	var r cortex.EvidenceRow
	var tool, role, sev string
	var isErr int
	err := rows.Scan(append([]any{&r.ID, &r.Timestamp, &tool, &r.SessionID, &r.Hostname, &role, &r.Kind, &r.ToolName, &sev, &isErr,
		&r.AppName}, t.dest()...)...)
	r.Tool, r.Role, r.Severity, r.IsError = cortex.Tool(tool), cortex.Role(role), cortex.Severity(sev), isErr == 1
	return r, r.ID, err
}

// evidence returns a reader of evidence rows (a query's result), their
// texts included (see texts.go).
func (db *DB) evidence(ctx context.Context) func(*sql.Rows, error) ([]cortex.EvidenceRow, error) {
	return func(rows *sql.Rows, err error) ([]cortex.EvidenceRow, error) {
		return collectTexts(ctx, db, rows, err, "evidence rows", scanEvidence, func(r *cortex.EvidenceRow, text string) { r.Message = text })
	}
}

// SessionRowsBefore returns the last limit rows of a session before the
// row (t, id) in (timestamp, id) order (thinking excluded), in time order.
// An id of 0 means "before t".
func (db *DB) SessionRowsBefore(ctx context.Context, s SessionScope, t time.Time, id int64, limit int) ([]cortex.EvidenceRow, error) {
	ts := cortex.FormatTime(t)
	rows, err := db.evidence(ctx)(db.r.QueryContext(ctx, `SELECT `+evidenceCols+` FROM logs
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp <= ? AND NOT (timestamp = ? AND id >= ?)
		AND ai_role <> 'thinking' ORDER BY timestamp DESC, id DESC LIMIT ?`, s.Session, string(s.Tool), s.Host, ts, ts, id, limit))
	slices.Reverse(rows)
	return rows, err
}

// SessionRowsAfter returns the first limit rows of a session after the row
// (t, id) in (timestamp, id) order (thinking excluded), in time order. An
// id of math.MaxInt64 means "after t".
func (db *DB) SessionRowsAfter(ctx context.Context, s SessionScope, t time.Time, id int64, limit int) ([]cortex.EvidenceRow, error) {
	ts := cortex.FormatTime(t)
	return db.evidence(ctx)(db.r.QueryContext(ctx, `SELECT `+evidenceCols+` FROM logs
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND NOT (timestamp = ? AND id <= ?)
		AND ai_role <> 'thinking' ORDER BY timestamp, id LIMIT ?`, s.Session, string(s.Tool), s.Host, ts, ts, id, limit))
}

// RowsByID returns logs rows by id, in time order.
func (db *DB) RowsByID(ctx context.Context, ids []int64) ([]cortex.EvidenceRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return db.evidence(ctx)(db.r.QueryContext(ctx, `SELECT `+evidenceCols+` FROM logs WHERE id IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`) ORDER BY timestamp, id`, args...))
}

// NearbyLogs returns non-AI log rows of host in [from, to], in time order,
// at most limit; errorsOnly keeps error severity and worse.
//
// A host matches by its short name too: transcripts carry the agent
// machine's hostname ("vm") while a syslog sender may write its FQDN
// ("vm.example.com"), or the other way round; rows of any host whose
// first label equals host's (case-insensitive) are the same machine.
func (db *DB) NearbyLogs(ctx context.Context, host string, from, to time.Time, errorsOnly bool, limit int) ([]cortex.EvidenceRow, error) {
	short, _, _ := strings.Cut(host, ".")
	q := `SELECT ` + evidenceCols + ` FROM logs WHERE ai_tool IS NULL AND timestamp >= ? AND timestamp <= ?
		AND (hostname = ? OR hostname = ? COLLATE NOCASE OR hostname LIKE ? ESCAPE '\')`
	args := []any{cortex.FormatTime(from), cortex.FormatTime(to), host, short, likeEscape(short) + ".%"}
	if errorsOnly {
		sev := cortex.ErrorSeverities()
		q += ` AND severity IN (` + strings.TrimSuffix(strings.Repeat("?,", len(sev)), ",") + `)`
		for _, s := range sev {
			args = append(args, string(s))
		}
	}
	return db.evidence(ctx)(db.r.QueryContext(ctx, q+` ORDER BY timestamp, id LIMIT ?`, append(args, limit)...))
}

// SessionCallNames returns the tool calls of a session in [from, to], in
// time order, at most limit, from the session's call index alone: which
// call, when, which tool and whether it failed — no status, exit code or
// text.
func (db *DB) SessionCallNames(ctx context.Context, s SessionScope, from, to time.Time, limit int) ([]ToolCall, error) {
	return collectCalls(db.query(ctx, `SELECT `+sqlpart.CallNameCols+` FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_session_time
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND timestamp <= ?
		ORDER BY timestamp, id LIMIT ?`, s.Session, string(s.Tool), s.Host, cortex.FormatTime(from), cortex.FormatTime(to), limit))
}

const callCols = `id, call_log_id, result_log_id, timestamp, tool_name, COALESCE(mcp_server, ''),
	COALESCE(mcp_tool, ''), status, COALESCE(is_error, 0), exit_code, COALESCE(error_text, '')`

func collectCalls(rows *sql.Rows, err error) ([]ToolCall, error) {
	if err != nil {
		return nil, queryFailed(err, "tool calls")
	}
	defer rows.Close()
	var out []ToolCall
	for rows.Next() {
		var c ToolCall
		var ts string
		var callLog, resultLog, exit sql.NullInt64
		var isErr int
		if err := rows.Scan(&c.ID, &callLog, &resultLog, &ts, &c.ToolName, &c.MCPServer, &c.MCPTool, &c.Status, &isErr, &exit, &c.ErrorText); err != nil {
			return nil, queryFailed(err, "tool calls")
		}
		c.Timestamp, c.IsError = parseStoredTime(ts), isErr == 1
		c.CallLogID, c.ResultLogID, c.ExitCode = ptrInt64(callLog), ptrInt64(resultLog), ptrInt64(exit)
		out = append(out, c)
	}
	return out, rows.Err()
}

// SessionUserRows returns what the user typed in a session in [from, to],
// in time order, at most limit (through the user-rows index).
func (db *DB) SessionUserRows(ctx context.Context, s SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error) {
	return db.evidence(ctx)(db.query(ctx, `SELECT `+evidenceCols+` FROM logs INDEXED BY idx_logs_user_session_time
		WHERE ai_session_id = ? AND ai_role = 'user' AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND timestamp <= ?
		ORDER BY timestamp, id LIMIT ?`, s.Session, string(s.Tool), s.Host, cortex.FormatTime(from), cortex.FormatTime(to), limit))
}

// SessionFailedCalls returns the failed tool calls (is_error) of a session
// in [from, to], in time order, at most limit.
func (db *DB) SessionFailedCalls(ctx context.Context, s SessionScope, from, to time.Time, limit int) ([]ToolCall, error) {
	return collectCalls(db.query(ctx, `SELECT `+callCols+` FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_session_errors
		WHERE ai_session_id = ? AND is_error = 1 AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND timestamp <= ?
		ORDER BY timestamp, id LIMIT ?`, s.Session, string(s.Tool), s.Host, cortex.FormatTime(from), cortex.FormatTime(to), limit))
}

// CountSessionCalls counts the tool calls of a session in [from, to]
// (from the index alone).
func (db *DB) CountSessionCalls(ctx context.Context, s SessionScope, from, to time.Time) (int, error) {
	var n int
	err := db.queryRow(ctx, `SELECT count(*) FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_session_time
		WHERE ai_session_id = ? AND timestamp >= ? AND timestamp <= ? AND ai_tool = ? AND hostname = ?`,
		s.Session, cortex.FormatTime(from), cortex.FormatTime(to), string(s.Tool), s.Host).Scan(&n)
	if err != nil {
		return 0, queryFailed(err, "tool calls")
	}
	return n, nil
}

// CallSucceededAfter reports whether a call of the named tool succeeded in
// the session in (after, until].
func (db *DB) CallSucceededAfter(ctx context.Context, s SessionScope, tool string, after, until time.Time) (bool, error) {
	var one int
	err := db.queryRow(ctx, `SELECT 1 FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_session_time
		WHERE ai_session_id = ? AND timestamp > ? AND timestamp <= ? AND ai_tool = ? AND hostname = ?
		AND tool_name = ? AND COALESCE(is_error, 0) = 0 AND status = 'success' LIMIT 1`,
		s.Session, cortex.FormatTime(after), cortex.FormatTime(until), string(s.Tool), s.Host, tool).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, queryFailed(err, "tool calls")
	}
	return true, nil
}

// SkillEventsByID returns skill events by id, in time order.
func (db *DB) SkillEventsByID(ctx context.Context, ids []int64) ([]cortex.SkillEventRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	res, err := listRows(ctx, db.r, "skill events", `SELECT `+skillEventCols+` FROM ai_skill_events WHERE id IN (`+strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`) ORDER BY timestamp, id LIMIT ?`,
		args, len(ids), scanSkillEvent, nil)
	return res.Events, err
}

// SkillNames returns the distinct skill names (for "did you mean").
func (db *DB) SkillNames(ctx context.Context) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT DISTINCT skill_name FROM ai_skill_events ORDER BY skill_name LIMIT 10000`)
	if err != nil {
		return nil, queryFailed(err, "skills")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, queryFailed(err, "skills")
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// likeEscape escapes the LIKE wildcards of s (with backslash as escape).
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
