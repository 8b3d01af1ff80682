package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
	"github.com/cortexhq/cortex/store"
)

// The reads of the session and row viewers.

// transcriptRowFilter leaves empty thinking rows out of transcripts.
const transcriptRowFilter = ` AND NOT (ai_role = 'thinking' AND message = '')`

// sessionWhere selects a session's transcript rows.
const sessionWhere = `ai_session_id = ? AND ai_tool = ? AND hostname = ?` + transcriptRowFilter

func scopeArgs(s store.SessionScope) []any { return []any{s.Session, string(s.Tool), s.Host} }

// FindSessions returns the sessions whose id is id, or else starts with it
// (at least 4 characters), narrowed by tool and host; at most 10, most
// recent first.
func (db *DB) FindSessions(ctx context.Context, id string, tool cortex.Tool, host string) ([]cortex.Session, error) {
	var w where
	if tool != "" {
		w.Add("ai_tool = ?", string(tool))
	}
	if host != "" {
		w.Add("hostname = ?", host)
	}
	find := func(cond string, args ...any) ([]cortex.Session, error) {
		rows, err := db.query(ctx, `SELECT `+sessionViewCols+` FROM ai_sessions WHERE `+cond+w.SQL()+
			` ORDER BY last_seen DESC, ai_session_id, ai_tool, hostname, store_no LIMIT 10`, append(args, w.Args...)...)
		return collect(rows, err, "sessions", scanSession)
	}
	out, err := find("ai_session_id = ?", id)
	if err != nil || len(out) > 0 || len(id) < 4 {
		return out, err
	}
	return find(`ai_session_id LIKE ? ESCAPE '\'`, likeEscape(id)+"%")
}

const transcriptCols = sqlpart.TranscriptCols

func scanTranscriptRow(rows pgx.Rows, maxBytes int) (cortex.TranscriptRow, error) {
	var sc sqlpart.TranscriptScan
	var meta *string
	if err := rows.Scan(sc.Dest(&meta)...); err != nil {
		return sc.R, err
	}
	return sc.Finish(decodeMeta(meta), maxBytes), nil
}

// TranscriptRows returns a page of a session's rows in (timestamp, id)
// order (see sqlpart.TranscriptPage). Limit must be clamped.
func (db *DB) TranscriptRows(ctx context.Context, q cortex.TranscriptQuery) (cortex.TranscriptPage, error) {
	s := store.SessionScope{Tool: q.Tool, Session: q.Session, Host: q.Host}
	return sqlpart.TranscriptPage(q, sqlpart.TranscriptReads{
		Pivot: func(id int64) (string, bool, error) {
			var ts string
			err := db.queryRow(ctx, `SELECT timestamp FROM logs WHERE id = ? AND `+sessionWhere,
				append([]any{id}, scopeArgs(s)...)...).Scan(&ts)
			if errors.Is(err, pgx.ErrNoRows) {
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
			rows, err := db.query(ctx, `SELECT `+transcriptCols+` FROM logs WHERE `+sessionWhere+cond+order+` LIMIT ?`,
				append(append(scopeArgs(s), args...), limit)...)
			return collect(rows, err, "session rows", func(rows pgx.Rows) (cortex.TranscriptRow, error) {
				return scanTranscriptRow(rows, q.MaxBytes)
			})
		},
		Count: func(cond string, args []any) (int, error) {
			var n int
			if err := db.queryRow(ctx, `SELECT count(*) FROM logs WHERE `+sessionWhere+cond,
				append(scopeArgs(s), args...)...).Scan(&n); err != nil {
				return 0, queryFailed(err, "session rows")
			}
			return n, nil
		},
	})
}

// maxTranscriptEvents bounds each kind of TranscriptEvents.
const maxTranscriptEvents = 5000

// SessionEvents returns the tool calls, skill events and hook runs of a
// session in [from, to], in time order (each kind at most 5000).
func (db *DB) SessionEvents(ctx context.Context, s store.SessionScope, from, to time.Time) (store.TranscriptEvents, error) {
	var ev store.TranscriptEvents
	var err error
	if ev.Tools, err = db.SessionToolEvents(ctx, s, from, to, false, maxTranscriptEvents); err != nil {
		return ev, err
	}
	span := []any{s.Session, cortex.FormatTime(from), cortex.FormatTime(to), string(s.Tool), s.Host}
	const cond = ` WHERE ai_session_id = ? AND timestamp >= ? AND timestamp <= ? AND ai_tool = ? AND hostname = ?
		ORDER BY timestamp, id LIMIT ?`
	skills, err := listRows(ctx, db, "skill events", `SELECT `+skillEventCols+` FROM ai_skill_events`+cond, span,
		maxTranscriptEvents, scanSkillEvent, nil)
	if err != nil {
		return ev, err
	}
	ev.Skills = skills.Events
	rows, err := db.query(ctx, `SELECT `+hookEventCols+` FROM ai_hook_events`+cond, append(span, maxTranscriptEvents)...)
	ev.Hooks, err = collect(rows, err, "hook events", scanHookEvent)
	return ev, err
}

// Row returns one stored row with its extracted events and neighbours, its
// text cut to maxText bytes (0: whole), and its original record as pushed
// (rawcodec-encoded; none when pushed without records). An unknown id is a
// not-found error.
func (db *DB) Row(ctx context.Context, id int64, maxText int) (cortex.RowDetail, []byte, error) {
	var sc sqlpart.RowScan
	var meta *string
	err := db.queryRow(ctx, sqlpart.RowSelect, id).Scan(sc.Dest(&meta)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sc.R, nil, cortex.Errorf(cortex.CodeNotFound, "no row %d", id)
	}
	if err != nil {
		return sc.R, nil, queryFailed(err, "rows")
	}
	sc.Finish(decodeMeta(meta), maxText)
	r, raw := sc.R, sc.Raw
	if r.Tool == "" || r.SessionID == "" {
		return r, raw, nil
	}
	s := store.SessionScope{Tool: r.Tool, Session: r.SessionID, Host: r.Hostname}
	for _, q := range []struct {
		dst  *int64
		cond string
	}{
		{&r.PrevID, ` AND (timestamp < ? OR (timestamp = ? AND id < ?)) ORDER BY timestamp DESC, id DESC LIMIT 1`},
		{&r.NextID, ` AND (timestamp > ? OR (timestamp = ? AND id > ?)) ORDER BY timestamp, id LIMIT 1`},
	} {
		if *q.dst, err = oneID(db.queryRow(ctx, `SELECT id FROM logs WHERE `+sessionWhere+q.cond,
			append(scopeArgs(s), r.Timestamp, r.Timestamp, r.ID)...), "session rows"); err != nil {
			return r, nil, err
		}
	}
	sk, err := listRows(ctx, db, "skill events", `SELECT `+skillEventCols+` FROM ai_skill_events
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND log_id = ? ORDER BY id LIMIT ?`,
		append(scopeArgs(s), id), 100, scanSkillEvent, nil)
	if err != nil {
		return r, nil, err
	}
	r.SkillEvents = sk.Events
	te, err := listRows(ctx, db, "tool events", `SELECT `+toolEventCols+` FROM ai_mcp_events
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND (call_log_id = ? OR result_log_id = ?) ORDER BY id LIMIT ?`,
		append(scopeArgs(s), id, id), 100, scanToolEvent, nil)
	if err != nil {
		return r, nil, err
	}
	r.ToolEvents = te.Events
	he, err := listRows(ctx, db, "hook events", `SELECT `+hookEventCols+` FROM ai_hook_events WHERE log_id = ? ORDER BY id LIMIT ?`,
		[]any{id}, 100, scanHookEvent, nil)
	if err != nil {
		return r, nil, err
	}
	r.HookEvents = he.Events
	return r, raw, nil
}
