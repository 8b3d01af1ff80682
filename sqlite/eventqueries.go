package sqlite

import (
	"context"
	"database/sql"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
	"github.com/cortexhq/cortex/store"
)

func decodeMeta(s sql.NullString) map[string]string {
	if !s.Valid {
		return nil
	}
	return store.DecodeMeta(s.String)
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

// listRows runs a listing query (which must end in LIMIT ? with limit+1
// bound) and scans at most limit rows, reporting truncation; key, when
// set, gives the cursor of a row, and Next is then the cursor after the
// last row of a truncated page.
func listRows[T any](ctx context.Context, db *sql.DB, what, query string, args []any, limit int,
	scan func(*sql.Rows) (T, error), key func(T) cortex.Cursor) (cortex.EventList[T], error) {
	out := cortex.EventList[T]{Events: []T{}}
	rows, err := db.QueryContext(ctx, query, append(args, limit+1)...)
	if err != nil {
		return out, queryFailed(err, what)
	}
	defer rows.Close()
	for rows.Next() {
		if len(out.Events) == limit {
			out.Truncated = true
			break
		}
		v, err := scan(rows)
		if err != nil {
			return out, queryFailed(err, what)
		}
		out.Events = append(out.Events, v)
	}
	if err := rows.Err(); err != nil {
		return out, queryFailed(err, what)
	}
	out.Total = len(out.Events)
	if out.Truncated && key != nil && len(out.Events) > 0 {
		out.Next = key(out.Events[len(out.Events)-1]).Encode()
	}
	return out, nil
}

// SkillNamesMatching resolves a skill as typed to the stored names it
// stands for: itself and the plugin-qualified names whose skill part it is
// ("search" → "entire:search"), ignoring case. Empty when none is stored
// (and for no skill).
func (db *DB) SkillNamesMatching(ctx context.Context, skill string) ([]string, error) {
	if skill == "" {
		return nil, nil
	}
	names, err := db.SkillNames(ctx)
	if err != nil {
		return nil, err
	}
	return store.MatchSkillNames(names, skill), nil
}

// SkillEvents lists skill events, newest first. Limit must be clamped.
func (db *DB) SkillEvents(ctx context.Context, p cortex.SkillEventParams) (cortex.EventList[cortex.SkillEventRow], error) {
	names, err := db.SkillNamesMatching(ctx, p.Skill)
	if err != nil {
		return cortex.EventList[cortex.SkillEventRow]{}, err
	}
	w := part(sqlpart.SkillEvents(p.EventFilter, p.Skill, names, p.Plugin))
	return listRows(ctx, db.r, "skill events", `SELECT `+skillEventCols+` FROM ai_skill_events WHERE 1=1`+w.sql()+
		` ORDER BY timestamp DESC, id DESC LIMIT ?`, w.args, p.Limit, scanSkillEvent,
		func(r cortex.SkillEventRow) cortex.Cursor { return sqlpart.RowCursor(r.Timestamp, r.ID) })
}

const skillEventCols = `id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname,
	timestamp, skill_name, COALESCE(skill_plugin, ''), COALESCE(skill_path, ''), event_kind, evidence_kind, metadata_json`

func scanSkillEvent(rows *sql.Rows) (cortex.SkillEventRow, error) {
	var r cortex.SkillEventRow
	var tool string
	var meta sql.NullString
	err := rows.Scan(&r.ID, &r.LogID, &tool, &r.Project, &r.SessionID, &r.Hostname, &r.Timestamp, &r.SkillName,
		&r.SkillPlugin, &r.SkillPath, &r.EventKind, &r.EvidenceKind, &meta)
	r.Tool, r.Metadata = cortex.Tool(tool), decodeMeta(meta)
	return r, err
}

// SkillSummaries summarizes skill use per skill (events, sessions, agents,
// first and last seen), most recently used first. Limit must be clamped.
func (db *DB) SkillSummaries(ctx context.Context, p cortex.SkillEventParams) (cortex.EventList[cortex.SkillSummary], error) {
	names, err := db.SkillNamesMatching(ctx, p.Skill)
	if err != nil {
		return cortex.EventList[cortex.SkillSummary]{}, err
	}
	f := p.EventFilter
	f.After = nil // pages by skill (last use, name), not by event
	w := part(sqlpart.SkillEvents(f, p.Skill, names, p.Plugin))
	having, hargs := sqlpart.SkillSummariesAfter(p.After)
	args := append(w.args, hargs...)
	return listRows(ctx, db.r, "skills", `SELECT skill_name, COALESCE(max(skill_plugin), ''), count(*),
		count(DISTINCT ai_tool || ':' || COALESCE(ai_session_id, '')), group_concat(DISTINCT ai_tool), min(timestamp), max(timestamp)
		FROM ai_skill_events WHERE 1=1`+w.sql()+` GROUP BY skill_name`+having+` ORDER BY max(timestamp) DESC, skill_name DESC LIMIT ?`,
		args, p.Limit,
		func(rows *sql.Rows) (cortex.SkillSummary, error) {
			var s cortex.SkillSummary
			err := rows.Scan(&s.SkillName, &s.SkillPlugin, &s.Events, &s.Sessions, &s.Tools, &s.FirstSeen, &s.LastSeen)
			return s, err
		}, sqlpart.SkillSummaryCursor)
}

// ToolEvents lists tool calls (call and result merged), newest first.
// Limit must be clamped.
func (db *DB) ToolEvents(ctx context.Context, p cortex.ToolEventParams) (cortex.EventList[cortex.ToolEventRow], error) {
	w := part(sqlpart.ToolEvents(p))
	return listRows(ctx, db.r, "tool events", `SELECT `+toolEventCols+`
		FROM ai_mcp_events WHERE 1=1`+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, w.args, p.Limit, db.scanToolEvent,
		func(r cortex.ToolEventRow) cortex.Cursor { return sqlpart.RowCursor(r.Timestamp, r.ID) })
}

// HookEvents lists hook events, newest first. Hook matches hook_name or
// hook_event exactly. Limit must be clamped.
func (db *DB) HookEvents(ctx context.Context, p cortex.HookEventParams) (cortex.EventList[cortex.HookEventRow], error) {
	w := part(sqlpart.HookEvents(p))
	return listRows(ctx, db.r, "hook events", `SELECT id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''),
		hostname, timestamp, COALESCE(last_seen, ''), hook_event, COALESCE(hook_name, ''), COALESCE(hook_source, ''),
		COALESCE(hook_command, ''), status, exit_code, duration_ms, COALESCE(stdout_preview, ''), COALESCE(stderr_preview, ''),
		COALESCE(persisted_output_path, ''), COALESCE(trusted_hash, ''), evidence_kind, metadata_json
		FROM ai_hook_events WHERE 1=1`+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, w.args, p.Limit,
		func(rows *sql.Rows) (cortex.HookEventRow, error) {
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
		}, func(r cortex.HookEventRow) cortex.Cursor { return sqlpart.RowCursor(r.Timestamp, r.ID) })
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
