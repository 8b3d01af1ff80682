package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/internal/sqlpart"
	"github.com/cortexhq/cortex/store"
)

// Reads of many sessions at once (the skill and friction lenses read
// hundreds of sessions per answer): one query per read, each window a
// row of a VALUES list joined LATERAL to its rows.

// SessionsUserActs returns the user events of whole sessions, in time
// order, at most limit per session (the first ones).
func (db *DB) SessionsUserActs(ctx context.Context, scopes []store.SessionScope, limit int) (map[store.SessionScope][]store.UserAct, error) {
	out := make(map[store.SessionScope][]store.UserAct, len(scopes))
	if len(scopes) == 0 {
		return out, nil
	}
	acts, err := db.acts(ctx, `SELECT `+userActCols+` FROM ai_user_events WHERE ai_session_id = ANY(?)
		ORDER BY ai_session_id, timestamp, id`, store.SessionIDs(scopes))
	if err != nil {
		return nil, err
	}
	want := store.Wanted(scopes)
	for _, a := range acts {
		store.PerSession(out, want, store.SessionScope{Tool: a.Tool, Session: a.Session, Host: a.Host}, a, limit)
	}
	return out, nil
}

// SessionsSkillEvents returns the skill events of whole sessions, in time
// order, at most limit per session (the first ones), without their
// metadata (see SkillEventMeta).
func (db *DB) SessionsSkillEvents(ctx context.Context, scopes []store.SessionScope, limit int) (map[store.SessionScope][]store.SessionSkill, error) {
	out := make(map[store.SessionScope][]store.SessionSkill, len(scopes))
	if len(scopes) == 0 {
		return out, nil
	}
	type keyed struct {
		k store.SessionScope
		e store.SessionSkill
	}
	rows, err := db.query(ctx, `SELECT ai_tool, ai_session_id, hostname, id, log_id, timestamp, skill_name,
		COALESCE(skill_plugin, ''), COALESCE(skill_path, ''), event_kind, COALESCE(ai_agent_id, ''), COALESCE(ai_project, '')
		FROM ai_skill_events WHERE ai_session_id = ANY(?) ORDER BY ai_session_id, ai_tool, hostname, timestamp, id`,
		store.SessionIDs(scopes))
	evs, err := collect(rows, err, "skill events", func(rows pgx.Rows) (keyed, error) {
		var r keyed
		var tool, ts string
		err := rows.Scan(&tool, &r.k.Session, &r.k.Host, &r.e.ID, &r.e.LogID, &ts, &r.e.Skill, &r.e.Plugin, &r.e.Path,
			&r.e.Kind, &r.e.Thread, &r.e.Project)
		r.k.Tool, r.e.Timestamp = cortex.Tool(tool), parseStoredTime(ts)
		return r, err
	})
	if err != nil {
		return nil, err
	}
	want := store.Wanted(scopes)
	for _, r := range evs {
		store.PerSession(out, want, r.k, r.e, limit)
	}
	return out, nil
}

// SkillEventMeta returns a skill event's stored metadata (nil when none).
func (db *DB) SkillEventMeta(ctx context.Context, id int64) (map[string]string, error) {
	var meta *string
	if err := db.queryRow(ctx, `SELECT metadata_json FROM ai_skill_events WHERE id = ?`, id).Scan(&meta); err != nil {
		return nil, queryFailed(err, "skill events")
	}
	return decodeMeta(meta), nil
}

// windows are the bounds of call windows as query arguments (arrays, one
// element per window): its index, session, agent, host, time span (""
// and "\uffff" for open sides) and threads ("" for all, else the threads
// between unit separators).
func windows(ws []store.CallWindow) []any {
	n := len(ws)
	idx, sess, tool, host, from, to, threads := make([]int32, n), make([]string, n), make([]string, n), make([]string, n),
		make([]string, n), make([]string, n), make([]string, n)
	for i, w := range ws {
		idx[i], sess[i], tool[i], host[i] = int32(i), w.Scope.Session, string(w.Scope.Tool), w.Scope.Host
		from[i], to[i] = "", "\uffff" // after every stored time
		if !w.From.IsZero() {
			from[i] = cortex.FormatTime(w.From)
		}
		if !w.To.IsZero() {
			to[i] = cortex.FormatTime(w.To)
		}
		if len(w.Threads) > 0 {
			threads[i] = "\x1f" + strings.Join(w.Threads, "\x1f") + "\x1f"
		}
	}
	return []any{idx, sess, tool, host, from, to, threads}
}

// windowsFrom is the FROM clause of a read of many windows: its rows are
// w.i (the window) and the columns of the LATERAL subquery, which selects
// from the window's session (w.sess, w.tool, w.host) and time span
// (w.t0, w.t1).
const windowsFrom = ` FROM unnest(?::int[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
	AS w(i, sess, tool, host, t0, t1, threads) CROSS JOIN LATERAL `

// readWindows runs a read of n windows whose rows start with the window's
// index (w.i) and scans the rest of each row with scan.
func readWindows[T any](ctx context.Context, db *DB, n int, q string, args []any, what string,
	scan func(pgx.Rows, *T, *int) error) ([][]T, error) {
	out := make([][]T, n)
	if n == 0 {
		return out, nil
	}
	type windowed struct {
		w int
		v T
	}
	rows, err := db.query(ctx, q, args...)
	got, err := collect(rows, err, what, func(rows pgx.Rows) (windowed, error) {
		var r windowed
		return r, scan(rows, &r.v, &r.w)
	})
	if err != nil {
		return nil, err
	}
	for _, r := range got {
		out[r.w] = append(out[r.w], r.v)
	}
	return out, nil
}

// SessionCallFactsMany returns the calls of many windows (at most limit
// each, the first ones), in time order, with their stored facts and no
// texts, status or exit code (see CallTextsByID).
func (db *DB) SessionCallFactsMany(ctx context.Context, ws []store.CallWindow, limit int) ([][]store.SessionCall, error) {
	return readWindows(ctx, db, len(ws), `SELECT w.i, c.id, c.call_log_id, c.result_log_id, c.timestamp, c.tool_name,
		COALESCE(c.mcp_server, ''), COALESCE(c.mcp_tool, ''), COALESCE(c.is_error, 0), c.call_id, COALESCE(c.ai_agent_id, ''),
		COALESCE(c.result_timestamp, ''), COALESCE(c.class, ''), COALESCE(c.loads_skill, 0), COALESCE(c.facts_version, 0),
		COALESCE(c.op, '')`+windowsFrom+`(SELECT * FROM ai_mcp_events
		WHERE ai_session_id = w.sess AND ai_tool = w.tool AND hostname = w.host AND timestamp >= w.t0 AND timestamp <= w.t1
		AND (w.threads = '' OR strpos(w.threads, chr(31) || COALESCE(ai_agent_id, '') || chr(31)) > 0)
		ORDER BY timestamp, id LIMIT ?) c ORDER BY w.i, c.timestamp, c.id`, append(windows(ws), limit), "tool calls",
		func(rows pgx.Rows, c *store.SessionCall, w *int) error {
			var ts, rts string
			var isErr, loads int
			err := rows.Scan(w, &c.ID, &c.CallLogID, &c.ResultLogID, &ts, &c.ToolName, &c.MCPServer, &c.MCPTool,
				&isErr, &c.CallID, &c.Thread, &rts, &c.Class, &loads, &c.FactsVersion, &c.Op)
			c.Timestamp, c.IsError, c.LoadsSkill = parseStoredTime(ts), isErr == 1, loads == 1
			if rts != "" {
				c.ResultTimestamp = parseStoredTime(rts)
			}
			return err
		})
}

// SessionHookRunsMany returns the runtime hook runs of many windows (a
// window's threads are ignored) whose status is not success or that
// exited non-zero, in time order, at most limit per window (the first).
func (db *DB) SessionHookRunsMany(ctx context.Context, ws []store.CallWindow, limit int) ([][]store.HookRun, error) {
	return readWindows(ctx, db, len(ws), `SELECT w.i, h.id, COALESCE(h.log_id, 0), h.timestamp, h.hook_event,
		COALESCE(h.hook_name, ''), h.status, h.exit_code`+windowsFrom+`(SELECT * FROM ai_hook_events
		WHERE ai_session_id = w.sess AND ai_tool = w.tool AND hostname = w.host AND timestamp >= w.t0 AND timestamp <= w.t1
		AND evidence_kind = 'runtime_transcript' AND (status <> 'success' OR COALESCE(exit_code, 0) <> 0)
		ORDER BY timestamp, id LIMIT ?) h ORDER BY w.i, h.timestamp, h.id`, append(windows(ws), limit), "hook events",
		func(rows pgx.Rows, h *store.HookRun, w *int) error {
			var ts string
			err := rows.Scan(w, &h.ID, &h.LogID, &ts, &h.Event, &h.Name, &h.Status, &h.ExitCode)
			h.Timestamp = parseStoredTime(ts)
			return err
		})
}

// SessionCallNames returns the tool calls of a session in [from, to], in
// time order, at most limit: which call, when, which tool and whether it
// failed — no status, exit code or text.
func (db *DB) SessionCallNames(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]store.ToolCall, error) {
	return db.calls(ctx, `SELECT `+sqlpart.CallNameCols+` FROM ai_mcp_events
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND timestamp <= ?
		ORDER BY timestamp, id LIMIT ?`, s.Session, string(s.Tool), s.Host, cortex.FormatTime(from), cortex.FormatTime(to), limit)
}

// CallTextsByID returns the texts of tool calls, by event id.
func (db *DB) CallTextsByID(ctx context.Context, ids []int64) (map[int64]store.CallTexts, error) {
	out := make(map[int64]store.CallTexts, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	type withID struct {
		id int64
		t  store.CallTexts
	}
	rows, err := db.query(ctx, `SELECT id, status, exit_code, COALESCE(arguments_json, ''), COALESCE(output_preview, ''),
		COALESCE(error_text, ''), COALESCE(why, '') FROM ai_mcp_events WHERE id = ANY(?)`, ids)
	got, err := collect(rows, err, "tool calls", func(rows pgx.Rows) (withID, error) {
		var r withID
		err := rows.Scan(&r.id, &r.t.Status, &r.t.ExitCode, &r.t.Arguments, &r.t.Output, &r.t.ErrorText, &r.t.Why)
		return r, err
	})
	for _, r := range got {
		out[r.id] = r.t
	}
	return out, err
}

// CallWhysByID returns the failure lines (the why derived with the calls'
// facts) of tool calls, by event id: a call without one is left out. It
// reads no argument or output text.
func (db *DB) CallWhysByID(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	type withID struct {
		id  int64
		why string
	}
	rows, err := db.query(ctx, `SELECT id, why FROM ai_mcp_events WHERE why IS NOT NULL AND why <> '' AND id = ANY(?)`, ids)
	got, err := collect(rows, err, "tool calls", func(rows pgx.Rows) (withID, error) {
		var r withID
		err := rows.Scan(&r.id, &r.why)
		return r, err
	})
	for _, r := range got {
		out[r.id] = r.why
	}
	return out, err
}

// SessionClaimsMany returns, for many windows, the assistant rows whose
// stored claims hold a kind about the dialogue (claim.Dialogue), in time
// order, at most limit per window (the first): no texts.
func (db *DB) SessionClaimsMany(ctx context.Context, ws []store.CallWindow, limit int) ([][]store.ClaimRow, error) {
	return readWindows(ctx, db, len(ws), `SELECT w.i, l.id, l.timestamp, COALESCE(l.ai_agent_id, ''), l.claim`+windowsFrom+
		`(SELECT id, timestamp, ai_agent_id, claim FROM logs
		WHERE ai_session_id = w.sess AND ai_tool = w.tool AND hostname = w.host AND timestamp >= w.t0 AND timestamp <= w.t1
		AND claim > 0 AND (claim & ?) > 0 AND ai_role IN ('assistant', 'thinking')
		ORDER BY timestamp, id LIMIT ?) l ORDER BY w.i, l.timestamp, l.id`, append(windows(ws), int(claim.Dialogue), limit), "claims",
		func(rows pgx.Rows, c *store.ClaimRow, w *int) error {
			var ts string
			err := rows.Scan(w, &c.LogID, &ts, &c.Thread, &c.Kinds)
			c.Timestamp = parseStoredTime(ts)
			return err
		})
}

// FailedCallSessions returns the sessions with at least min failed calls
// (is_error) in f's range and scope, each with its first and last failure
// there, the one with the newest failure first, at most f.Limit.
func (db *DB) FailedCallSessions(ctx context.Context, f store.CandidateFilter, min int) ([]store.FailedSpan, error) {
	w := sqlpart.Candidate(f, "")
	rows, err := db.query(ctx, `SELECT ai_tool, hostname, ai_session_id, min(timestamp), max(timestamp) FROM ai_mcp_events
		WHERE is_error = 1 AND ai_session_id IS NOT NULL`+w.SQL()+`
		GROUP BY ai_tool, hostname, ai_session_id HAVING count(*) >= ? ORDER BY max(timestamp) DESC LIMIT ?`,
		append(w.Args, min, f.Limit)...)
	return collect(rows, err, "tool calls", func(rows pgx.Rows) (store.FailedSpan, error) {
		var s store.FailedSpan
		var tool, first, last string
		err := rows.Scan(&tool, &s.Host, &s.Session, &first, &last)
		s.Tool, s.First, s.Last = cortex.Tool(tool), parseStoredTime(first), parseStoredTime(last)
		return s, err
	})
}

// ConcessionSessions returns the sessions in f's range and scope where the
// agent conceded a mistake or granted the user a point (claim.Admission,
// claim.Agreement), the newest first, at most f.Limit.
func (db *DB) ConcessionSessions(ctx context.Context, f store.CandidateFilter) ([]store.SessionScope, error) {
	w := sqlpart.Candidate(f, "")
	rows, err := db.query(ctx, `SELECT ai_tool, hostname, ai_session_id FROM logs
		WHERE (claim & 100) > 0 AND ai_session_id IS NOT NULL`+w.SQL()+`
		GROUP BY ai_tool, hostname, ai_session_id ORDER BY max(timestamp) DESC LIMIT ?`, append(w.Args, f.Limit)...)
	return collect(rows, err, "sessions", func(rows pgx.Rows) (store.SessionScope, error) {
		var s store.SessionScope
		var tool string
		err := rows.Scan(&tool, &s.Host, &s.Session)
		s.Tool = cortex.Tool(tool)
		return s, err
	})
}
