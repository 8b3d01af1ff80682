package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
	"github.com/cortexhq/cortex/store"
)

// The reads of the session and row viewers: one session's rows in time
// order, page by page, and one row with everything known about it.

// transcriptRowFilter leaves empty thinking rows out of transcripts: the
// harness records that reasoning happened without its text.
// (A row whose text is read from its record, see texts.go, has a text.)
const transcriptRowFilter = ` AND NOT (ai_role = 'thinking' AND message = '')`

const sessionViewCols = `ai_tool, ai_session_id, hostname, COALESCE(ai_project, ''), first_seen, last_seen,
	rows, user_rows, assistant_rows, tool_calls, error_rows, subagent_rows, COALESCE(tool_version, ''), COALESCE(transcript_path, ''),
	COALESCE(title, ''), COALESCE(first_prompt, '')`

// scanSession reads a session row: its counters, its title and its
// duration (see store.SetTitle).
func scanSession(rows *sql.Rows) (cortex.Session, error) {
	var s cortex.Session
	var tool, title, prompt string
	err := rows.Scan(&tool, &s.SessionID, &s.Hostname, &s.Project, &s.FirstSeen, &s.LastSeen, &s.Rows, &s.UserRows,
		&s.AssistantRows, &s.ToolCalls, &s.ErrorRows, &s.SubagentRows, &s.ToolVersion, &s.TranscriptPath, &title, &prompt)
	s.Tool = cortex.Tool(tool)
	store.SetTitle(&s, title, prompt)
	return s, err
}

// maxSessionMatches bounds FindSessions.
const maxSessionMatches = 10

// FindSessions returns the sessions whose id is id, or else starts with
// it (a prefix of at least 4 characters), narrowed by tool and host when
// set; at most maxSessionMatches, most recent first.
func (db *DB) FindSessions(ctx context.Context, id string, tool cortex.Tool, host string) ([]cortex.Session, error) {
	var w where
	if tool != "" {
		w.add("ai_tool = ?", string(tool))
	}
	if host != "" {
		w.add("hostname = ?", host)
	}
	find := func(cond string, args ...any) ([]cortex.Session, error) {
		rows, err := db.r.QueryContext(ctx, `SELECT `+sessionViewCols+` FROM ai_sessions WHERE `+cond+w.sql()+
			` ORDER BY last_seen DESC LIMIT ?`, append(append(args, w.args...), maxSessionMatches)...)
		return collect(rows, err, "sessions", scanSession)
	}
	out, err := find("ai_session_id = ?", id)
	if err != nil || len(out) > 0 || len(id) < 4 {
		return out, err
	}
	return find(`ai_session_id LIKE ? ESCAPE '\'`, likeEscape(id)+"%")
}

// transcriptCols are sqlpart.TranscriptCols, then recordCols (see
// texts.go).
var transcriptCols = sqlpart.TranscriptCols + `, ` + recordCols("")

// scanTranscriptRows reads a page of transcript rows (transcriptCols),
// their texts cut to maxBytes.
func (db *DB) scanTranscriptRows(ctx context.Context, rows *sql.Rows, maxBytes int) ([]cortex.TranscriptRow, error) {
	type scanned struct {
		sc   sqlpart.TranscriptScan
		meta sql.NullString
	}
	all, err := collectTexts(ctx, db, rows, nil, "session rows", func(rows *sql.Rows, t *textScan) (scanned, int64, error) {
		var s scanned
		err := rows.Scan(append(s.sc.Dest(&s.meta), t.recordDest()...)...)
		t.msg = s.sc.R.Text
		return s, s.sc.R.ID, err
	}, func(s *scanned, text string) { s.sc.R.Text = text })
	if err != nil {
		return nil, err
	}
	out := make([]cortex.TranscriptRow, len(all))
	for i := range all {
		out[i] = all[i].sc.Finish(decodeMeta(all[i].meta), maxBytes)
	}
	return out, nil
}

// sessionWhere selects a session's transcript rows.
const sessionWhere = `ai_session_id = ? AND ai_tool = ? AND hostname = ?` + transcriptRowFilter

// scopeArgs are the arguments of sessionWhere.
func scopeArgs(s SessionScope) []any { return []any{s.Session, string(s.Tool), s.Host} }

// TranscriptRows returns a page of a session's rows in (timestamp, id)
// order (see sqlpart.TranscriptPage). Limit must be clamped.
func (db *DB) TranscriptRows(ctx context.Context, q cortex.TranscriptQuery) (cortex.TranscriptPage, error) {
	s := SessionScope{Tool: q.Tool, Session: q.Session, Host: q.Host}
	const from = ` FROM logs INDEXED BY idx_logs_session_time WHERE ` + sessionWhere
	return sqlpart.TranscriptPage(q, sqlpart.TranscriptReads{
		Pivot: func(id int64) (string, bool, error) {
			var ts string
			err := db.r.QueryRowContext(ctx, `SELECT timestamp FROM logs WHERE id = ? AND `+sessionWhere,
				append([]any{id}, scopeArgs(s)...)...).Scan(&ts)
			if errors.Is(err, sql.ErrNoRows) {
				return "", false, nil
			}
			if err != nil {
				return "", false, queryFailed(err, "session rows")
			}
			return ts, true, nil
		},
		Rows: func(cond string, args []any, desc bool, limit int) ([]cortex.TranscriptRow, error) {
			order := ` ORDER BY timestamp, id`
			if desc {
				order = ` ORDER BY timestamp DESC, id DESC`
			}
			rows, err := db.r.QueryContext(ctx, `SELECT `+transcriptCols+from+cond+order+` LIMIT ?`,
				append(append(scopeArgs(s), args...), limit)...)
			if err != nil {
				return nil, queryFailed(err, "session rows")
			}
			return db.scanTranscriptRows(ctx, rows, q.MaxBytes)
		},
		Count: func(cond string, args []any) (int, error) {
			var n int
			if err := db.r.QueryRowContext(ctx, `SELECT count(*)`+from+cond, append(scopeArgs(s), args...)...).Scan(&n); err != nil {
				return 0, queryFailed(err, "session rows")
			}
			return n, nil
		},
	})
}

// maxTranscriptEvents bounds each kind of TranscriptEvents.
const maxTranscriptEvents = 5000

// SessionEvents returns the tool calls, skill events and hook runs of a
// session in [from, to], in time order (each kind at most
// maxTranscriptEvents).
func (db *DB) SessionEvents(ctx context.Context, s SessionScope, from, to time.Time) (TranscriptEvents, error) {
	var ev TranscriptEvents
	var err error
	if ev.Tools, err = db.SessionToolEvents(ctx, s, from, to, false, maxTranscriptEvents); err != nil {
		return ev, err
	}
	span := []any{s.Session, cortex.FormatTime(from), cortex.FormatTime(to), string(s.Tool), s.Host, maxTranscriptEvents}
	const cond = ` WHERE ai_session_id = ? AND timestamp >= ? AND timestamp <= ? AND ai_tool = ? AND hostname = ?
		ORDER BY timestamp, id LIMIT ?`
	skills, err := listRows(ctx, db.r, "skill events", `SELECT `+skillEventCols+` FROM ai_skill_events`+cond, span[:5],
		maxTranscriptEvents, scanSkillEvent, nil)
	if err != nil {
		return ev, err
	}
	ev.Skills = skills.Events
	rows, err := db.r.QueryContext(ctx, `SELECT `+hookEventCols+` FROM ai_hook_events`+cond, span...)
	ev.Hooks, err = collect(rows, err, "hook events", scanHookEvent)
	return ev, err
}

// Row returns one stored row with its extracted events and neighbours,
// its text cut to maxText bytes (0: whole), and its original record as
// stored (rawcodec-encoded). An unknown id is a not-found error.
func (db *DB) Row(ctx context.Context, id int64, maxText int) (cortex.RowDetail, []byte, error) {
	var sc sqlpart.RowScan
	var meta sql.NullString
	var fromRecord bool // its text is read from its record (see texts.go)
	err := db.r.QueryRowContext(ctx, `SELECT `+sqlpart.RowCols+`, message = x'' FROM logs WHERE id = ?`, id).
		Scan(append(sc.Dest(&meta), &fromRecord)...)
	if errors.Is(err, sql.ErrNoRows) {
		return sc.R, nil, cortex.Errorf(cortex.CodeNotFound, "no row %d", id)
	}
	if err != nil {
		return sc.R, nil, queryFailed(err, "rows")
	}
	raw, err := db.rowRaw(ctx, id, sc.Raw)
	if err == nil && fromRecord && raw != nil {
		sc.R.Text, err = db.textFromRecord(id, sc.Agent(), sc.R.ToolName, raw)
	}
	if err != nil {
		return sc.R, nil, queryFailed(err, "rows")
	}
	sc.Finish(decodeMeta(meta), maxText)
	r := sc.R
	if r.TranscriptPath == "" && r.Facility == "transcript" {
		if err := db.r.QueryRowContext(ctx, `SELECT `+transcriptPathOf+` FROM logs l WHERE l.id = ?`, id).Scan(&r.TranscriptPath); err != nil {
			return r, nil, queryFailed(err, "rows")
		}
	}
	if r.Tool == "" || r.SessionID == "" {
		return r, raw, nil
	}
	s := SessionScope{Tool: r.Tool, Session: r.SessionID, Host: r.Hostname}
	if err := db.neighbours(ctx, s, &r); err != nil {
		return r, nil, err
	}
	sk, err := listRows(ctx, db.r, "skill events", `SELECT `+skillEventCols+` FROM ai_skill_events
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND log_id = ? ORDER BY id LIMIT ?`,
		append(scopeArgs(s), id), 100, scanSkillEvent, nil)
	if err != nil {
		return r, nil, err
	}
	r.SkillEvents = sk.Events
	te, err := listRows(ctx, db.r, "tool events", `SELECT `+toolEventCols+` FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_session_time
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND (call_log_id = ? OR result_log_id = ?) ORDER BY id LIMIT ?`,
		append(scopeArgs(s), id, id), 100, db.scanToolEvent, nil)
	if err != nil {
		return r, nil, err
	}
	r.ToolEvents = te.Events
	he, err := listRows(ctx, db.r, "hook events", `SELECT `+hookEventCols+` FROM ai_hook_events WHERE log_id = ? ORDER BY id LIMIT ?`,
		[]any{id}, 100, scanHookEvent, nil)
	if err != nil {
		return r, nil, err
	}
	r.HookEvents = he.Events
	return r, raw, nil
}

// neighbours sets the previous and next transcript rows of r's session.
func (db *DB) neighbours(ctx context.Context, s SessionScope, r *cortex.RowDetail) error {
	for _, q := range []struct {
		dst  *int64
		cond string
	}{
		{&r.PrevID, ` AND (timestamp < ? OR (timestamp = ? AND id < ?)) ORDER BY timestamp DESC, id DESC LIMIT 1`},
		{&r.NextID, ` AND (timestamp > ? OR (timestamp = ? AND id > ?)) ORDER BY timestamp, id LIMIT 1`},
	} {
		err := db.r.QueryRowContext(ctx, `SELECT id FROM logs INDEXED BY idx_logs_session_time WHERE `+sessionWhere+q.cond,
			append(scopeArgs(s), r.Timestamp, r.Timestamp, r.ID)...).Scan(q.dst)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return queryFailed(err, "session rows")
		}
	}
	return nil
}
