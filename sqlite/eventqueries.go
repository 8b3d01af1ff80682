package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/cortexhq/cortex"
)

// common adds the shared event filters.
func (w *where) common(f cortex.EventFilter) {
	if f.Tool != "" {
		w.add("ai_tool = ?", string(f.Tool))
	}
	if f.Project != "" {
		w.add("ai_project = ?", f.Project)
	}
	if f.Session != "" {
		w.add("ai_session_id = ?", f.Session)
	}
	if f.Host != "" {
		w.add("hostname = ?", f.Host)
	}
	if !f.Since.IsZero() {
		w.add("timestamp >= ?", cortex.FormatTime(f.Since))
	}
	if !f.Until.IsZero() {
		w.add("timestamp < ?", cortex.FormatTime(f.Until))
	}
}

func decodeMeta(s sql.NullString) map[string]string {
	if !s.Valid || s.String == "" {
		return nil
	}
	var raw map[string]any
	if json.Unmarshal([]byte(s.String), &raw) != nil {
		return nil
	}
	m := make(map[string]string, len(raw))
	for k, v := range raw {
		switch x := v.(type) {
		case string:
			m[k] = x
		default:
			b, _ := json.Marshal(x)
			m[k] = string(b)
		}
	}
	return m
}

func ptrInt64(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

func queryFailed(err error, what string) error {
	return cortex.WrapError(cortex.CodeUnavailable, err, "cannot list %s: %v", what, err)
}

// SkillEvents lists skill events, newest first. Limit must be clamped.
func (db *DB) SkillEvents(ctx context.Context, p cortex.SkillEventParams) (cortex.EventList[cortex.SkillEventRow], error) {
	out := cortex.EventList[cortex.SkillEventRow]{Events: []cortex.SkillEventRow{}}
	var w where
	w.common(p.EventFilter)
	if p.Skill != "" {
		w.add("skill_name = ?", p.Skill)
	}
	if p.Plugin != "" {
		w.add("skill_plugin = ?", p.Plugin)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname,
		timestamp, skill_name, COALESCE(skill_plugin, ''), COALESCE(skill_path, ''), event_kind, evidence_kind, metadata_json
		FROM ai_skill_events WHERE 1=1`+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.args, p.Limit+1)...)
	if err != nil {
		return out, queryFailed(err, "skill events")
	}
	defer rows.Close()
	for rows.Next() {
		var r cortex.SkillEventRow
		var tool string
		var meta sql.NullString
		if err := rows.Scan(&r.ID, &r.LogID, &tool, &r.Project, &r.SessionID, &r.Hostname, &r.Timestamp, &r.SkillName,
			&r.SkillPlugin, &r.SkillPath, &r.EventKind, &r.EvidenceKind, &meta); err != nil {
			return out, queryFailed(err, "skill events")
		}
		if len(out.Events) == p.Limit {
			out.Truncated = true
			break
		}
		r.Tool, r.Metadata = cortex.Tool(tool), decodeMeta(meta)
		out.Events = append(out.Events, r)
	}
	if err := rows.Err(); err != nil {
		return out, queryFailed(err, "skill events")
	}
	out.Total = len(out.Events)
	return out, nil
}

// SkillSummaries summarizes skill use per skill (events, sessions, agents,
// first and last seen), most recently used first. Limit must be clamped.
func (db *DB) SkillSummaries(ctx context.Context, p cortex.SkillEventParams) (cortex.EventList[cortex.SkillSummary], error) {
	out := cortex.EventList[cortex.SkillSummary]{Events: []cortex.SkillSummary{}}
	var w where
	w.common(p.EventFilter)
	if p.Skill != "" {
		w.add("skill_name = ?", p.Skill)
	}
	if p.Plugin != "" {
		w.add("skill_plugin = ?", p.Plugin)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT skill_name, COALESCE(max(skill_plugin), ''), count(*),
		count(DISTINCT ai_tool || ':' || COALESCE(ai_session_id, '')), group_concat(DISTINCT ai_tool), min(timestamp), max(timestamp)
		FROM ai_skill_events WHERE 1=1`+w.sql()+` GROUP BY skill_name ORDER BY max(timestamp) DESC, skill_name LIMIT ?`,
		append(w.args, p.Limit+1)...)
	if err != nil {
		return out, queryFailed(err, "skills")
	}
	defer rows.Close()
	for rows.Next() {
		var s cortex.SkillSummary
		if err := rows.Scan(&s.SkillName, &s.SkillPlugin, &s.Events, &s.Sessions, &s.Tools, &s.FirstSeen, &s.LastSeen); err != nil {
			return out, queryFailed(err, "skills")
		}
		if len(out.Events) == p.Limit {
			out.Truncated = true
			break
		}
		out.Events = append(out.Events, s)
	}
	if err := rows.Err(); err != nil {
		return out, queryFailed(err, "skills")
	}
	out.Total = len(out.Events)
	return out, nil
}

// ToolEvents lists tool calls (call and result merged), newest first.
// Limit must be clamped.
func (db *DB) ToolEvents(ctx context.Context, p cortex.ToolEventParams) (cortex.EventList[cortex.ToolEventRow], error) {
	out := cortex.EventList[cortex.ToolEventRow]{Events: []cortex.ToolEventRow{}}
	var w where
	w.common(p.EventFilter)
	if p.ToolName != "" {
		w.add("tool_name = ?", p.ToolName)
	}
	if p.MCPServer != "" {
		w.add("mcp_server = ?", p.MCPServer)
	}
	if p.MCPTool != "" {
		w.add("mcp_tool = ?", p.MCPTool)
	}
	if p.OnlyMCP {
		w.add("mcp_server IS NOT NULL")
	}
	if p.ErrorsOnly {
		w.add("(is_error = 1 OR status = 'error')")
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, call_log_id, result_log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''),
		hostname, timestamp, COALESCE(call_timestamp, ''), COALESCE(result_timestamp, ''), COALESCE(turn_id, ''), call_id, tool_name,
		COALESCE(mcp_server, ''), COALESCE(mcp_tool, ''), event_kind, COALESCE(result_kind, ''), status, duration_ms, is_error,
		exit_code, COALESCE(arguments_json, ''), COALESCE(output_preview, ''), COALESCE(error_text, ''), metadata_json
		FROM ai_mcp_events WHERE 1=1`+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.args, p.Limit+1)...)
	if err != nil {
		return out, queryFailed(err, "tool events")
	}
	defer rows.Close()
	for rows.Next() {
		var r cortex.ToolEventRow
		var tool string
		var callLog, resultLog, duration, isErr, exit sql.NullInt64
		var meta sql.NullString
		if err := rows.Scan(&r.ID, &callLog, &resultLog, &tool, &r.Project, &r.SessionID, &r.Hostname, &r.Timestamp,
			&r.CallTimestamp, &r.ResultTimestamp, &r.TurnID, &r.CallID, &r.ToolName, &r.MCPServer, &r.MCPTool, &r.EventKind,
			&r.ResultKind, &r.Status, &duration, &isErr, &exit, &r.ArgumentsJSON, &r.OutputPreview, &r.ErrorText, &meta); err != nil {
			return out, queryFailed(err, "tool events")
		}
		if len(out.Events) == p.Limit {
			out.Truncated = true
			break
		}
		r.Tool, r.Metadata = cortex.Tool(tool), decodeMeta(meta)
		r.CallLogID, r.ResultLogID, r.DurationMS, r.ExitCode = ptrInt64(callLog), ptrInt64(resultLog), ptrInt64(duration), ptrInt64(exit)
		if isErr.Valid {
			b := isErr.Int64 == 1
			r.IsError = &b
		}
		out.Events = append(out.Events, r)
	}
	if err := rows.Err(); err != nil {
		return out, queryFailed(err, "tool events")
	}
	out.Total = len(out.Events)
	return out, nil
}

// HookEvents lists hook events, newest first. Hook matches hook_name or
// hook_event exactly. Limit must be clamped.
func (db *DB) HookEvents(ctx context.Context, p cortex.HookEventParams) (cortex.EventList[cortex.HookEventRow], error) {
	out := cortex.EventList[cortex.HookEventRow]{Events: []cortex.HookEventRow{}}
	var w where
	w.common(p.EventFilter)
	if p.Hook != "" {
		w.add("(hook_name = ? OR hook_event = ?)", p.Hook, p.Hook)
	}
	if p.HookEvent != "" {
		w.add("hook_event = ?", p.HookEvent)
	}
	if p.HookSource != "" {
		w.add("hook_source = ?", p.HookSource)
	}
	if p.Status != "" {
		w.add("status = ?", p.Status)
	}
	if p.EvidenceKind != "" {
		w.add("evidence_kind = ?", p.EvidenceKind)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname,
		timestamp, COALESCE(last_seen, ''), hook_event, COALESCE(hook_name, ''), COALESCE(hook_source, ''), COALESCE(hook_command, ''),
		status, exit_code, duration_ms, COALESCE(stdout_preview, ''), COALESCE(stderr_preview, ''), COALESCE(persisted_output_path, ''),
		COALESCE(trusted_hash, ''), evidence_kind, metadata_json
		FROM ai_hook_events WHERE 1=1`+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.args, p.Limit+1)...)
	if err != nil {
		return out, queryFailed(err, "hook events")
	}
	defer rows.Close()
	for rows.Next() {
		var r cortex.HookEventRow
		var tool string
		var logID, exit, duration sql.NullInt64
		var meta sql.NullString
		if err := rows.Scan(&r.ID, &logID, &tool, &r.Project, &r.SessionID, &r.Hostname, &r.Timestamp, &r.LastSeen, &r.HookEvent,
			&r.HookName, &r.HookSource, &r.HookCommand, &r.Status, &exit, &duration, &r.StdoutPreview, &r.StderrPreview,
			&r.PersistedOutputPath, &r.TrustedHash, &r.EvidenceKind, &meta); err != nil {
			return out, queryFailed(err, "hook events")
		}
		if len(out.Events) == p.Limit {
			out.Truncated = true
			break
		}
		r.Tool, r.Metadata = cortex.Tool(tool), decodeMeta(meta)
		r.LogID, r.ExitCode, r.DurationMS = ptrInt64(logID), ptrInt64(exit), ptrInt64(duration)
		out.Events = append(out.Events, r)
	}
	if err := rows.Err(); err != nil {
		return out, queryFailed(err, "hook events")
	}
	out.Total = len(out.Events)
	return out, nil
}

// Projects lists the distinct projects of stored sessions (local paths
// only; e.g. to find project-level hook configuration).
func (db *DB) Projects(ctx context.Context) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT DISTINCT ai_project FROM ai_sessions WHERE ai_project LIKE '/%' ORDER BY ai_project`)
	if err != nil {
		return nil, queryFailed(err, "projects")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, queryFailed(err, "projects")
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
