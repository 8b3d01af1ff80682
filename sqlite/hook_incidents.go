package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
)

// Reads of the hook lens of the incident engine. Runtime rows
// (evidence_kind runtime_transcript) are hook runs written into
// transcripts; configuration rows (config_inventory, trusted_hash_state)
// have no session and no log row and are never proof that a hook ran.

// hookSubject adds the hook subject filters of f; false when they can
// match nothing.
func hookSubject(f HookFilter, w *where) bool {
	p := sqlpart.Where{Conds: w.conds, Args: w.args}
	ok := sqlpart.HookSubject(f, &p)
	w.conds, w.args = p.Conds, p.Args
	return ok
}

func collectHookCandidates(rows *sql.Rows, err error) ([]HookCandidate, error) {
	if err != nil {
		return nil, queryFailed(err, "hook events")
	}
	defer rows.Close()
	var out []HookCandidate
	for rows.Next() {
		var sc sqlpart.HookCandidateScan
		var meta sql.NullString
		var exit, duration sql.NullInt64
		if err := rows.Scan(sc.Dest(&meta, &exit, &duration)...); err != nil {
			return nil, queryFailed(err, "hook events")
		}
		out = append(out, sc.Finish(parseStoredTime, decodeMeta(meta), ptrInt64(exit), ptrInt64(duration)))
	}
	return out, rows.Err()
}

// HookCandidates returns the newest runtime hook events (hook runs written
// into transcripts) matching f, at most f.Limit, newest first.
func (db *DB) HookCandidates(ctx context.Context, f HookFilter) ([]HookCandidate, error) {
	w := candidateWhere(f.CandidateFilter, "")
	if !hookSubject(f, &w) {
		return nil, nil
	}
	return collectHookCandidates(db.scan(ctx, `SELECT `+sqlpart.HookCandidateCols+` FROM ai_hook_events
		WHERE evidence_kind = 'runtime_transcript'`+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.args, f.Limit)...))
}

// HookConfigRows returns configured hooks (config_inventory and
// trusted_hash_state rows) matching f, at most f.Limit, newest first. A
// configuration row has no session: f.Session is ignored. It matches a
// project when it is that project's configuration or a user-level one (no
// project), and a time range when it was configured during it (first seen
// before Until, last seen at or after Since).
func (db *DB) HookConfigRows(ctx context.Context, f HookFilter) ([]HookCandidate, error) {
	p, ok := sqlpart.HookConfig(f)
	if !ok {
		return nil, nil
	}
	w := part(p)
	// Through the evidence-kind index: configuration rows are few, and the
	// planner's statistics may predate them.
	return collectHookCandidates(db.r.QueryContext(ctx, `SELECT `+sqlpart.HookCandidateCols+` FROM ai_hook_events
		INDEXED BY idx_ai_hook_events_evidence_time WHERE log_id IS NULL`+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`,
		append(w.args, f.Limit)...))
}

// HookNames returns the distinct stored (hook_event, hook_name) pairs of
// runtime and configuration rows (for name resolution and "did you
// mean"), from the index alone.
func (db *DB) HookNames(ctx context.Context) ([]HookName, error) {
	rows, err := db.query(ctx, `SELECT DISTINCT hook_event, COALESCE(hook_name, '') FROM ai_hook_events
		INDEXED BY idx_ai_hook_events_hook_time ORDER BY 1, 2 LIMIT 10000`)
	if err != nil {
		return nil, queryFailed(err, "hook names")
	}
	defer rows.Close()
	var out []HookName
	for rows.Next() {
		var n HookName
		if err := rows.Scan(&n.Event, &n.Name); err != nil {
			return nil, queryFailed(err, "hook names")
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

const hookEventCols = `id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''),
	hostname, timestamp, COALESCE(last_seen, ''), hook_event, COALESCE(hook_name, ''), COALESCE(hook_source, ''),
	COALESCE(hook_command, ''), status, exit_code, duration_ms, COALESCE(stdout_preview, ''), COALESCE(stderr_preview, ''),
	COALESCE(persisted_output_path, ''), COALESCE(trusted_hash, ''), evidence_kind, metadata_json`

func scanHookEvent(rows *sql.Rows) (cortex.HookEventRow, error) {
	var r cortex.HookEventRow
	var tool string
	var logID, exit, duration sql.NullInt64
	var meta sql.NullString
	err := rows.Scan(&r.ID, &logID, &tool, &r.Project, &r.SessionID, &r.Hostname, &r.Timestamp, &r.LastSeen, &r.HookEvent,
		&r.HookName, &r.HookSource, &r.HookCommand, &r.Status, &exit, &duration, &r.StdoutPreview, &r.StderrPreview,
		&r.PersistedOutputPath, &r.TrustedHash, &r.EvidenceKind, &meta)
	r.Tool, r.Metadata = cortex.Tool(tool), decodeMeta(meta)
	r.LogID, r.ExitCode, r.DurationMS = ptrInt64(logID), ptrInt64(exit), ptrInt64(duration)
	return r, err
}

// HookEventsByID returns hook events (runtime or configuration) by id, in
// time order; unknown ids are skipped.
func (db *DB) HookEventsByID(ctx context.Context, ids []int64) ([]cortex.HookEventRow, error) {
	return readByIDs(ctx, db.r, "hook events", `SELECT `+hookEventCols+` FROM ai_hook_events`, ids, scanHookEvent,
		func(r cortex.HookEventRow) (string, int64) { return r.Timestamp, r.ID })
}

// SessionHookRecords returns the distinct kinds of runtime hook records of
// a session (through the session index), at most 1000.
func (db *DB) SessionHookRecords(ctx context.Context, s SessionScope) ([]HookRecord, error) {
	rows, err := db.query(ctx, `SELECT DISTINCT hook_event, COALESCE(hook_name, ''),
		CASE WHEN json_extract(metadata_json, '$.attachment_type') IS NOT NULL THEN json_extract(metadata_json, '$.attachment_type')
			WHEN json_extract(metadata_json, '$.phase') = 'started' THEN 'hook_progress'
			WHEN json_extract(metadata_json, '$.hook_count') IS NOT NULL THEN 'stop_hook_summary'
			ELSE '' END
		FROM ai_hook_events INDEXED BY idx_ai_hook_events_session_time
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND evidence_kind = 'runtime_transcript' LIMIT 1000`,
		s.Session, string(s.Tool), s.Host)
	if err != nil {
		return nil, queryFailed(err, "hook events")
	}
	defer rows.Close()
	var out []HookRecord
	for rows.Next() {
		var r HookRecord
		if err := rows.Scan(&r.Event, &r.Name, &r.Kind); err != nil {
			return nil, queryFailed(err, "hook events")
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// HookCommandRuns returns, per session and hook name, the runtime events of
// a hook command (exact command text) for one agent, host and hook event,
// at most limit spans.
func (db *DB) HookCommandRuns(ctx context.Context, tool cortex.Tool, host, event, command string, limit int) ([]HookRunSpan, error) {
	rows, err := db.query(ctx, `SELECT COALESCE(ai_session_id, ''), COALESCE(ai_project, ''), COALESCE(hook_name, ''),
		min(timestamp), max(timestamp), count(*) FROM ai_hook_events INDEXED BY idx_ai_hook_events_hook_time
		WHERE hook_event = ? AND evidence_kind = 'runtime_transcript' AND ai_tool = ? AND hostname = ? AND hook_command = ?
		GROUP BY 1, 2, 3 ORDER BY 4 LIMIT ?`, event, string(tool), host, command, limit)
	if err != nil {
		return nil, queryFailed(err, "hook runs")
	}
	defer rows.Close()
	var out []HookRunSpan
	for rows.Next() {
		var r HookRunSpan
		var first, last string
		if err := rows.Scan(&r.Session, &r.Project, &r.Name, &first, &last, &r.Runs); err != nil {
			return nil, queryFailed(err, "hook runs")
		}
		r.First, r.Last = parseStoredTime(first), parseStoredTime(last)
		out = append(out, r)
	}
	return out, rows.Err()
}

// SessionsBetween returns the sessions of f, oldest first, at most
// f.Limit.
func (db *DB) SessionsBetween(ctx context.Context, f SessionFilter) ([]SessionSpan, error) {
	w := part(sqlpart.SessionsBetween(f))
	rows, err := db.r.QueryContext(ctx, `SELECT ai_session_id, COALESCE(ai_project, ''), first_seen, last_seen FROM ai_sessions
		WHERE 1=1`+w.sql()+` ORDER BY first_seen, ai_session_id LIMIT ?`, append(w.args, f.Limit)...)
	if err != nil {
		return nil, queryFailed(err, "sessions")
	}
	defer rows.Close()
	var out []SessionSpan
	for rows.Next() {
		var s SessionSpan
		var first, last string
		if err := rows.Scan(&s.Session, &s.Project, &first, &last); err != nil {
			return nil, queryFailed(err, "sessions")
		}
		s.First, s.Last = parseStoredTime(first), parseStoredTime(last)
		out = append(out, s)
	}
	return out, rows.Err()
}

const hookToolEventCols = `id, call_log_id, result_log_id, ai_tool, COALESCE(ai_project, ''),
	COALESCE(ai_session_id, ''), hostname, timestamp, COALESCE(call_timestamp, ''), COALESCE(result_timestamp, ''),
	COALESCE(turn_id, ''), call_id, tool_name, COALESCE(mcp_server, ''), COALESCE(mcp_tool, ''), event_kind,
	COALESCE(result_kind, ''), status, duration_ms, is_error, exit_code, arguments_json, output_preview,
	COALESCE(error_text, ''), metadata_json`

// SessionToolEvents returns the tool calls of a session in [from, to] (only
// those classified MCP when mcpOnly), in time order, at most limit.
func (db *DB) SessionToolEvents(ctx context.Context, s SessionScope, from, to time.Time, mcpOnly bool, limit int) ([]cortex.ToolEventRow, error) {
	q := `SELECT ` + hookToolEventCols + ` FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_session_time
		WHERE ai_session_id = ? AND timestamp >= ? AND timestamp <= ? AND ai_tool = ? AND hostname = ?`
	if mcpOnly {
		q += ` AND mcp_server IS NOT NULL`
	}
	rows, err := db.query(ctx, q+` ORDER BY timestamp, id LIMIT ?`, s.Session, cortex.FormatTime(from), cortex.FormatTime(to),
		string(s.Tool), s.Host, limit)
	if err != nil {
		return nil, queryFailed(err, "tool calls")
	}
	defer rows.Close()
	var out []cortex.ToolEventRow
	for rows.Next() {
		var r cortex.ToolEventRow
		var tool string
		var callLog, resultLog, duration, isErr, exit sql.NullInt64
		var meta sql.NullString
		if err := rows.Scan(&r.ID, &callLog, &resultLog, &tool, &r.Project, &r.SessionID, &r.Hostname, &r.Timestamp,
			&r.CallTimestamp, &r.ResultTimestamp, &r.TurnID, &r.CallID, &r.ToolName, &r.MCPServer, &r.MCPTool, &r.EventKind,
			&r.ResultKind, &r.Status, &duration, &isErr, &exit, db.packedText(&r.ArgumentsJSON), db.packedText(&r.OutputPreview),
			&r.ErrorText, &meta); err != nil {
			return nil, queryFailed(err, "tool calls")
		}
		r.Tool, r.Metadata = cortex.Tool(tool), decodeMeta(meta)
		r.CallLogID, r.ResultLogID, r.DurationMS, r.ExitCode = ptrInt64(callLog), ptrInt64(resultLog), ptrInt64(duration), ptrInt64(exit)
		if isErr.Valid {
			b := isErr.Int64 == 1
			r.IsError = &b
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// hookOutputKinds are runtime records that carry a run's output, not a run.
const hookOutputKinds = `'hook_additional_context', 'hook_system_message', 'async_hook_response'`

// HookUsage counts the runtime runs and configuration rows of f. The
// configuration rows follow HookConfigRows (f.Session excludes them).
func (db *DB) HookUsage(ctx context.Context, f HookFilter) (HookUsage, error) {
	var u HookUsage
	w := candidateWhere(f.CandidateFilter, "")
	if !hookSubject(f, &w) {
		return u, nil
	}
	if f.EvidenceKind == "" || f.EvidenceKind == cortex.EvidenceRuntime {
		err := db.r.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT ai_tool || '/' || hostname || '/' || COALESCE(ai_session_id, ''))
			FROM ai_hook_events WHERE evidence_kind = 'runtime_transcript'`+w.sql()+`
			AND COALESCE(json_extract(metadata_json, '$.attachment_type'), '') NOT IN (`+hookOutputKinds+`)`, w.args...).Scan(&u.Runs, &u.Sessions)
		if err != nil {
			return u, queryFailed(err, "hook runs")
		}
	}
	if f.Session != "" || f.EvidenceKind == cortex.EvidenceRuntime {
		return u, nil
	}
	f.Limit = 1000
	rows, err := db.HookConfigRows(ctx, f)
	if err != nil {
		return u, err
	}
	u.AddConfig(rows)
	return u, nil
}
