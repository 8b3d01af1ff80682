package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
)

// The reads of the MCP lens of the incident engine. They see only tool
// calls classified as MCP (mcp_server set): builtin tools are context,
// never MCP candidates.

// mcpWhere is the condition of an MCP filter.
func mcpWhere(f MCPFilter) where { return part(sqlpart.MCP(f)) }

// MCPCandidates returns the newest MCP calls matching f (at most f.Limit),
// newest first.
func (db *DB) MCPCandidates(ctx context.Context, f MCPFilter) ([]MCPCandidate, error) {
	w := mcpWhere(f)
	rows, err := db.scan(ctx, `SELECT id, COALESCE(call_log_id, result_log_id, 0), call_id, mcp_server,
		COALESCE(mcp_tool, ''), ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname, timestamp
		FROM ai_mcp_events WHERE 1=1`+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.args, f.Limit)...)
	if err != nil {
		return nil, queryFailed(err, "MCP calls")
	}
	defer rows.Close()
	var out []MCPCandidate
	for rows.Next() {
		var c MCPCandidate
		var tool, ts string
		if err := rows.Scan(&c.ID, &c.LogID, &c.CallID, &c.Server, &c.MCPTool, &tool, &c.Project, &c.Session, &c.Host, &ts); err != nil {
			return nil, queryFailed(err, "MCP calls")
		}
		c.Tool, c.Timestamp = cortex.Tool(tool), parseStoredTime(ts)
		out = append(out, c)
	}
	return out, rows.Err()
}

// MCPUsage counts the MCP calls matching f (its Limit is ignored), their
// sessions and the failed ones.
func (db *DB) MCPUsage(ctx context.Context, f MCPFilter) (MCPUsage, error) {
	w := mcpWhere(f)
	var u MCPUsage
	err := db.r.QueryRowContext(ctx, `SELECT count(*),
		count(DISTINCT ai_tool || char(31) || hostname || char(31) || COALESCE(ai_session_id, '')),
		COALESCE(sum(is_error = 1 OR status = 'error' OR COALESCE(exit_code, 0) <> 0), 0)
		FROM ai_mcp_events WHERE 1=1`+w.sql(), w.args...).Scan(&u.Calls, &u.Sessions, &u.Failed)
	if err != nil {
		return MCPUsage{}, queryFailed(err, "MCP calls")
	}
	return u, nil
}

// maxMCPNames bounds MCPNames.
const maxMCPNames = 10_000

// MCPNames returns the distinct stored MCP server and tool pairs, sorted
// (to resolve what a user typed and for "did you mean").
func (db *DB) MCPNames(ctx context.Context) ([]MCPName, error) {
	rows, err := db.query(ctx, `SELECT DISTINCT mcp_server, COALESCE(mcp_tool, '') FROM ai_mcp_events
		WHERE mcp_server IS NOT NULL ORDER BY 1, 2 LIMIT ?`, maxMCPNames)
	if err != nil {
		return nil, queryFailed(err, "MCP servers")
	}
	defer rows.Close()
	var out []MCPName
	for rows.Next() {
		var n MCPName
		if err := rows.Scan(&n.Server, &n.Tool); err != nil {
			return nil, queryFailed(err, "MCP servers")
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// ToolCallsByID returns tool calls by ai_mcp_events id, in time order.
func (db *DB) ToolCallsByID(ctx context.Context, ids []int64) ([]ToolCall, error) {
	var out []ToolCall
	for len(ids) > 0 {
		n := min(len(ids), idChunk)
		calls, err := collectCalls(db.r.QueryContext(ctx, `SELECT `+callCols+` FROM ai_mcp_events WHERE id IN (`+
			marks(n)+`)`, idArgs(ids[:n])...))
		if err != nil {
			return nil, err
		}
		out = append(out, calls...)
		ids = ids[n:]
	}
	sortMCPCalls(out)
	return out, nil
}

func sortMCPCalls(cs []ToolCall) {
	slices.SortFunc(cs, func(a, b ToolCall) int {
		if c := a.Timestamp.Compare(b.Timestamp); c != 0 {
			return c
		}
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
}

// SessionMCPCalls returns the MCP calls of a session in [from, to], in time
// order, at most limit.
func (db *DB) SessionMCPCalls(ctx context.Context, s SessionScope, from, to time.Time, limit int) ([]ToolCall, error) {
	return collectCalls(db.query(ctx, `SELECT `+callCols+` FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_session_time
		WHERE ai_session_id = ? AND timestamp >= ? AND timestamp <= ? AND ai_tool = ? AND hostname = ?
		AND mcp_server IS NOT NULL ORDER BY timestamp, id LIMIT ?`,
		s.Session, cortex.FormatTime(from), cortex.FormatTime(to), string(s.Tool), s.Host, limit))
}

// SessionAssistantRows returns the assistant text of a session in [from,
// to] (role assistant: no tool calls, results or thinking), in time order,
// at most limit.
func (db *DB) SessionAssistantRows(ctx context.Context, s SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error) {
	return db.evidence(ctx)(db.query(ctx, `SELECT `+evidenceCols+` FROM logs INDEXED BY idx_logs_session_time
		WHERE ai_session_id = ? AND timestamp >= ? AND timestamp <= ? AND ai_role = 'assistant' AND ai_tool = ? AND hostname = ?
		ORDER BY timestamp, id LIMIT ?`, s.Session, cortex.FormatTime(from), cortex.FormatTime(to), string(s.Tool), s.Host, limit))
}

const toolEventCols = `id, call_log_id, result_log_id, ai_tool, COALESCE(ai_project, ''),
	COALESCE(ai_session_id, ''), hostname, timestamp, COALESCE(call_timestamp, ''), COALESCE(result_timestamp, ''),
	COALESCE(turn_id, ''), call_id, tool_name, COALESCE(mcp_server, ''), COALESCE(mcp_tool, ''), event_kind,
	COALESCE(result_kind, ''), status, duration_ms, is_error, exit_code, arguments_json, output_preview,
	COALESCE(error_text, ''), metadata_json`

func (db *DB) scanToolEvent(rows *sql.Rows) (cortex.ToolEventRow, error) {
	var r cortex.ToolEventRow
	var tool string
	var callLog, resultLog, duration, isErr, exit sql.NullInt64
	var meta sql.NullString
	err := rows.Scan(&r.ID, &callLog, &resultLog, &tool, &r.Project, &r.SessionID, &r.Hostname, &r.Timestamp,
		&r.CallTimestamp, &r.ResultTimestamp, &r.TurnID, &r.CallID, &r.ToolName, &r.MCPServer, &r.MCPTool, &r.EventKind,
		&r.ResultKind, &r.Status, &duration, &isErr, &exit, db.packedText(&r.ArgumentsJSON), db.packedText(&r.OutputPreview),
		&r.ErrorText, &meta)
	r.Tool, r.Metadata = cortex.Tool(tool), decodeMeta(meta)
	r.CallLogID, r.ResultLogID, r.DurationMS, r.ExitCode = ptrInt64(callLog), ptrInt64(resultLog), ptrInt64(duration), ptrInt64(exit)
	if isErr.Valid {
		b := isErr.Int64 == 1
		r.IsError = &b
	}
	return r, err
}

// ToolEventsByID returns stored tool calls (call and result merged) by id,
// in time order.
func (db *DB) ToolEventsByID(ctx context.Context, ids []int64) ([]cortex.ToolEventRow, error) {
	return readByIDs(ctx, db.r, "tool events", `SELECT `+toolEventCols+` FROM ai_mcp_events`, ids, db.scanToolEvent,
		func(r cortex.ToolEventRow) (string, int64) { return r.Timestamp, r.ID })
}
