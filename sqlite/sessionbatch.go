package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
	"golang.org/x/sync/errgroup"
)

// Reads of many sessions at once: the incident engine's skill and
// friction lenses read hundreds of sessions per answer, and a query's own
// cost (binding, stepping into it, the pool) is as large as reading a
// small session's rows. Sessions are read in chunks of a few statement
// shapes (see spans), each chunk one query.

// sessionBatch is the most sessions (or windows) one query reads.
const sessionBatch = 64

// inList returns "(?,?,…)" for n values.
func inList(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
}

// sessionChunks returns the distinct session ids of scopes as query
// arguments, in chunks of statement sizes (at most batch each).
func sessionChunks(scopes []SessionScope, batch int) [][]any {
	var ids []any
	for _, id := range store.SessionIDs(scopes) {
		ids = append(ids, id)
	}
	var out [][]any
	for _, sp := range spans(len(ids), batch) {
		out = append(out, ids[sp[0]:sp[1]])
	}
	return out
}

// eachChunk runs read(ctx, i) for every i in [0, n) on up to db.readPar
// goroutines, each query on a reader connection of its own: the chunks of
// a batched read are independent, and on a store of millions of rows
// reading them is most of a lens's time. The first error cancels the rest.
func (db *DB) eachChunk(ctx context.Context, n int, read func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(db.readPar)
	for i := range n {
		g.Go(func() error { return read(gctx, i) })
	}
	return g.Wait()
}

// readSessions reads the rows of whole sessions, a chunk of session ids
// per statement (read), the chunks side by side (eachChunk), and keeps
// the first limit rows of each wanted scope; split gives a row's session
// and what is kept of it. read returns a chunk's rows in time order.
func readSessions[T, V any](ctx context.Context, db *DB, scopes []SessionScope, limit int,
	read func(ctx context.Context, ids []any) ([]T, error), split func(T) (SessionScope, V)) (map[SessionScope][]V, error) {
	chunks := sessionChunks(scopes, db.batch)
	got := make([][]T, len(chunks))
	err := db.eachChunk(ctx, len(chunks), func(ctx context.Context, i int) error {
		var err error
		got[i], err = read(ctx, chunks[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	want := store.Wanted(scopes)
	out := make(map[SessionScope][]V, len(scopes))
	for _, rs := range got {
		for _, r := range rs {
			k, v := split(r)
			store.PerSession(out, want, k, v, limit)
		}
	}
	return out, nil
}

// SessionsUserActs returns the user events of whole sessions, in time
// order, at most limit per session (the first ones).
func (db *DB) SessionsUserActs(ctx context.Context, scopes []SessionScope, limit int) (map[SessionScope][]UserAct, error) {
	return readSessions(ctx, db, scopes, limit, func(ctx context.Context, ids []any) ([]UserAct, error) {
		return collectActs(db.query(ctx, `SELECT `+userActCols+` FROM ai_user_events INDEXED BY idx_ai_user_events_session_time
			WHERE ai_session_id IN `+inList(len(ids))+` ORDER BY ai_session_id, timestamp, id`, ids...))
	}, func(a UserAct) (SessionScope, UserAct) {
		return SessionScope{Tool: a.Tool, Session: a.Session, Host: a.Host}, a
	})
}

// SessionsSkillEvents returns the skill events of whole sessions, in time
// order, at most limit per session (the first ones), without their
// metadata (see SkillEventMeta).
func (db *DB) SessionsSkillEvents(ctx context.Context, scopes []SessionScope, limit int) (map[SessionScope][]SessionSkill, error) {
	type scoped struct {
		k SessionScope
		e SessionSkill
	}
	return readSessions(ctx, db, scopes, limit, func(ctx context.Context, ids []any) ([]scoped, error) {
		rows, err := db.query(ctx, `SELECT ai_tool, ai_session_id, hostname, id, log_id, timestamp, skill_name,
			COALESCE(skill_plugin, ''), COALESCE(skill_path, ''), event_kind, COALESCE(ai_agent_id, ''), COALESCE(ai_project, '')
			FROM ai_skill_events INDEXED BY idx_ai_skill_events_session_time
			WHERE ai_session_id IN `+inList(len(ids))+` ORDER BY ai_session_id, ai_tool, hostname, timestamp, id`, ids...)
		if err != nil {
			return nil, queryFailed(err, "skill events")
		}
		defer rows.Close()
		var out []scoped
		for rows.Next() {
			var r scoped
			var tool, ts string
			if err := rows.Scan(&tool, &r.k.Session, &r.k.Host, &r.e.ID, &r.e.LogID, &ts, &r.e.Skill, &r.e.Plugin, &r.e.Path,
				&r.e.Kind, &r.e.Thread, &r.e.Project); err != nil {
				return nil, queryFailed(err, "skill events")
			}
			r.k.Tool = cortex.Tool(tool)
			r.e.Timestamp = parseStoredTime(ts)
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			return nil, queryFailed(err, "skill events")
		}
		return out, nil
	}, func(r scoped) (SessionScope, SessionSkill) { return r.k, r.e })
}

// SkillEventMeta returns a skill event's stored metadata (nil when none).
func (db *DB) SkillEventMeta(ctx context.Context, id int64) (map[string]string, error) {
	var meta sql.NullString
	if err := db.queryRow(ctx, `SELECT metadata_json FROM ai_skill_events WHERE id = ?`, id).Scan(&meta); err != nil {
		return nil, queryFailed(err, "skill events")
	}
	return decodeMeta(meta), nil
}

// windowsSQL reads n windows, each with one (a SELECT of the window's
// rows, tagged "? AS w" with its index), in window and time order, at
// most limit rows per window. The limit is written into the statement: a
// bound LIMIT inside a compound statement's subqueries makes SQLite
// prepare the statement again at every run (it marks the parameter as one
// the plan depends on).
func windowsSQL(n, limit int, one string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString(`SELECT * FROM (` + one + ` ORDER BY timestamp, id LIMIT ` + strconv.Itoa(limit) + `)`)
	}
	return b.String()
}

// callWindowSQL is one window of SessionCallFactsMany: its calls'
// packedCallCols from the session's call index. Threads come as one
// unit-separated list ("" for all threads).
const callWindowSQL = `SELECT ? AS w, id, ` + packedCallCols + `
	FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_session_time
	WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND timestamp <= ?
	AND (? = '' OR instr(?, char(31) || COALESCE(ai_agent_id, '') || char(31)) > 0)`

// sortWindow puts a window's rows in time order (the statement reads them
// so; this only makes it certain).
func sortWindow[T any](xs []T, key func(T) (time.Time, int64)) {
	slices.SortStableFunc(xs, func(a, b T) int {
		ta, ia := key(a)
		tb, ib := key(b)
		if c := ta.Compare(tb); c != 0 {
			return c
		}
		return cmp.Compare(ia, ib)
	})
}

// readWindows reads many windows, a chunk of them per statement (one: a
// window's SELECT, see windowsSQL), the chunks side by side (eachChunk):
// each window's rows in time order, at most limit. args gives a window's
// arguments after its index; scan reads a row's window index and value.
func readWindows[T any](ctx context.Context, db *DB, ws []CallWindow, limit int, one, what string,
	args func(CallWindow) []any, scan func(*sql.Rows) (int, T, error), key func(T) (time.Time, int64)) ([][]T, error) {
	out := make([][]T, len(ws))
	sps := spans(len(ws), max(1, db.batch/2))
	err := db.eachChunk(ctx, len(sps), func(ctx context.Context, i int) error {
		sp := sps[i]
		var all []any
		for j, w := range ws[sp[0]:sp[1]] {
			all = append(append(all, sp[0]+j), args(w)...)
		}
		rows, err := db.query(ctx, windowsSQL(sp[1]-sp[0], limit, one), all...)
		if err != nil {
			return queryFailed(err, what)
		}
		defer rows.Close()
		for rows.Next() {
			w, x, err := scan(rows)
			if err != nil {
				return queryFailed(err, what)
			}
			if w < sp[0] || w >= sp[1] {
				return queryFailed(fmt.Errorf("window %d out of its chunk", w), what)
			}
			out[w] = append(out[w], x)
		}
		if err := rows.Err(); err != nil {
			return queryFailed(err, what)
		}
		for _, xs := range out[sp[0]:sp[1]] {
			sortWindow(xs, key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SessionCallFactsMany returns the calls of many windows (at most limit
// each, the first ones), in time order, from the session's call index
// alone: no texts, status or exit code, and no failure line (the lenses
// classify calls by their stored facts and read texts only for the calls
// they show, see CallTextsByID, or whose facts are of other rules).
func (db *DB) SessionCallFactsMany(ctx context.Context, ws []CallWindow, limit int) ([][]SessionCall, error) {
	return readWindows(ctx, db, ws, limit, callWindowSQL, "tool calls", func(w CallWindow) []any {
		from, to := "", "\xff"
		if !w.From.IsZero() {
			from = cortex.FormatTime(w.From)
		}
		if !w.To.IsZero() {
			to = cortex.FormatTime(w.To)
		}
		threads := ""
		if len(w.Threads) > 0 {
			threads = "\x1f" + strings.Join(w.Threads, "\x1f") + "\x1f"
		}
		return []any{w.Scope.Session, string(w.Scope.Tool), w.Scope.Host, from, to, threads, threads}
	}, func(rows *sql.Rows) (int, SessionCall, error) {
		var w int
		var c SessionCall
		var packed string
		if err := rows.Scan(&w, &c.ID, &packed); err != nil {
			return 0, c, err
		}
		return w, c, unpackCallFacts(packed, &c)
	}, func(c SessionCall) (time.Time, int64) { return c.Timestamp, c.ID })
}

// hookWindowSQL is one window of SessionHookRunsMany.
const hookWindowSQL = `SELECT ? AS w, id, COALESCE(log_id, 0), timestamp, hook_event, COALESCE(hook_name, ''),
	status, exit_code FROM ai_hook_events INDEXED BY idx_ai_hook_events_session_time
	WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND timestamp <= ?
	AND evidence_kind = 'runtime_transcript' AND (status <> 'success' OR COALESCE(exit_code, 0) <> 0)`

// SessionHookRunsMany returns the runtime hook runs of many windows (a
// window's threads are ignored) whose status is not success or that
// exited non-zero, in time order, at most limit per window (the first).
func (db *DB) SessionHookRunsMany(ctx context.Context, ws []CallWindow, limit int) ([][]HookRun, error) {
	return readWindows(ctx, db, ws, limit, hookWindowSQL, "hook events", func(w CallWindow) []any {
		return []any{w.Scope.Session, string(w.Scope.Tool), w.Scope.Host, cortex.FormatTime(w.From), cortex.FormatTime(w.To)}
	}, func(rows *sql.Rows) (int, HookRun, error) {
		var w int
		var h HookRun
		var ts string
		var exit sql.NullInt64
		err := rows.Scan(&w, &h.ID, &h.LogID, &ts, &h.Event, &h.Name, &h.Status, &exit)
		h.Timestamp, h.ExitCode = parseStoredTime(ts), ptrInt64(exit)
		return w, h, err
	}, func(h HookRun) (time.Time, int64) { return h.Timestamp, h.ID })
}
