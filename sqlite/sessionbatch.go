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
	if n <= 1 || db.readPar <= 1 {
		for i := range n {
			if err := read(ctx, i); err != nil {
				return err
			}
		}
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(db.readPar)
	for i := range n {
		g.Go(func() error { return read(gctx, i) })
	}
	return g.Wait()
}

// SessionsUserActs returns the user events of whole sessions, in time
// order, at most limit per session (the first ones).
func (db *DB) SessionsUserActs(ctx context.Context, scopes []SessionScope, limit int) (map[SessionScope][]UserAct, error) {
	chunks := sessionChunks(scopes, db.batch)
	got := make([][]UserAct, len(chunks))
	err := db.eachChunk(ctx, len(chunks), func(ctx context.Context, i int) error {
		var err error
		got[i], err = collectActs(db.query(ctx, `SELECT `+userActCols+` FROM ai_user_events INDEXED BY idx_ai_user_events_session_time
			WHERE ai_session_id IN `+inList(len(chunks[i]))+` ORDER BY ai_session_id, timestamp, id`, chunks[i]...))
		return err
	})
	if err != nil {
		return nil, err
	}
	want := store.Wanted(scopes)
	out := make(map[SessionScope][]UserAct, len(scopes))
	for _, acts := range got {
		for _, a := range acts {
			k := SessionScope{Tool: a.Tool, Session: a.Session, Host: a.Host}
			store.PerSession(out, want, k, a, limit)
		}
	}
	return out, nil
}

// SessionsSkillEvents returns the skill events of whole sessions, in time
// order, at most limit per session (the first ones), without their
// metadata (see SkillEventMeta).
func (db *DB) SessionsSkillEvents(ctx context.Context, scopes []SessionScope, limit int) (map[SessionScope][]SessionSkill, error) {
	type scoped struct {
		k SessionScope
		e SessionSkill
	}
	chunks := sessionChunks(scopes, db.batch)
	got := make([][]scoped, len(chunks))
	err := db.eachChunk(ctx, len(chunks), func(ctx context.Context, i int) error {
		rows, err := db.query(ctx, `SELECT ai_tool, ai_session_id, hostname, id, log_id, timestamp, skill_name,
			COALESCE(skill_plugin, ''), COALESCE(skill_path, ''), event_kind, COALESCE(ai_agent_id, ''), COALESCE(ai_project, '')
			FROM ai_skill_events INDEXED BY idx_ai_skill_events_session_time
			WHERE ai_session_id IN `+inList(len(chunks[i]))+` ORDER BY ai_session_id, ai_tool, hostname, timestamp, id`, chunks[i]...)
		if err != nil {
			return queryFailed(err, "skill events")
		}
		defer rows.Close()
		for rows.Next() {
			var r scoped
			var tool, ts string
			if err := rows.Scan(&tool, &r.k.Session, &r.k.Host, &r.e.ID, &r.e.LogID, &ts, &r.e.Skill, &r.e.Plugin, &r.e.Path,
				&r.e.Kind, &r.e.Thread, &r.e.Project); err != nil {
				return queryFailed(err, "skill events")
			}
			r.k.Tool = cortex.Tool(tool)
			r.e.Timestamp = parseStoredTime(ts)
			got[i] = append(got[i], r)
		}
		if err := rows.Err(); err != nil {
			return queryFailed(err, "skill events")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	want := store.Wanted(scopes)
	out := make(map[SessionScope][]SessionSkill, len(scopes))
	for _, rs := range got {
		for _, r := range rs {
			store.PerSession(out, want, r.k, r.e, limit)
		}
	}
	return out, nil
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

// SessionCallFactsMany returns the calls of many windows (at most limit
// each, the first ones), in time order, from the session's call index
// alone: no texts, status or exit code, and no failure line (the lenses
// classify calls by their stored facts and read texts only for the calls
// they show, see CallTextsByID, or whose facts are of other rules).
func (db *DB) SessionCallFactsMany(ctx context.Context, ws []CallWindow, limit int) ([][]SessionCall, error) {
	out := make([][]SessionCall, len(ws))
	sps := spans(len(ws), max(1, db.batch/2))
	err := db.eachChunk(ctx, len(sps), func(ctx context.Context, i int) error {
		sp := sps[i]
		part := ws[sp[0]:sp[1]]
		args := make([]any, 0, 8*len(part))
		for i, w := range part {
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
			args = append(args, sp[0]+i, w.Scope.Session, string(w.Scope.Tool), w.Scope.Host, from, to, threads, threads)
		}
		rows, err := db.query(ctx, windowsSQL(len(part), limit, callWindowSQL), args...)
		if err != nil {
			return queryFailed(err, "tool calls")
		}
		defer rows.Close()
		for rows.Next() {
			var w int
			var c SessionCall
			var packed string
			if err := rows.Scan(&w, &c.ID, &packed); err != nil {
				return queryFailed(err, "tool calls")
			}
			if w < sp[0] || w >= sp[1] {
				return queryFailed(fmt.Errorf("window %d out of its chunk", w), "tool calls")
			}
			if err := unpackCallFacts(packed, &c); err != nil {
				return queryFailed(err, "tool calls")
			}
			out[w] = append(out[w], c)
		}
		if err := rows.Err(); err != nil {
			return queryFailed(err, "tool calls")
		}
		for _, cs := range out[sp[0]:sp[1]] {
			sortWindow(cs, func(c SessionCall) (time.Time, int64) { return c.Timestamp, c.ID })
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
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
	out := make([][]HookRun, len(ws))
	sps := spans(len(ws), max(1, db.batch/2))
	err := db.eachChunk(ctx, len(sps), func(ctx context.Context, i int) error {
		sp := sps[i]
		part := ws[sp[0]:sp[1]]
		args := make([]any, 0, 6*len(part))
		for i, w := range part {
			args = append(args, sp[0]+i, w.Scope.Session, string(w.Scope.Tool), w.Scope.Host,
				cortex.FormatTime(w.From), cortex.FormatTime(w.To))
		}
		rows, err := db.query(ctx, windowsSQL(len(part), limit, hookWindowSQL), args...)
		if err != nil {
			return queryFailed(err, "hook events")
		}
		defer rows.Close()
		for rows.Next() {
			var w int
			var h HookRun
			var ts string
			var exit sql.NullInt64
			if err := rows.Scan(&w, &h.ID, &h.LogID, &ts, &h.Event, &h.Name, &h.Status, &exit); err != nil {
				return queryFailed(err, "hook events")
			}
			if w < sp[0] || w >= sp[1] {
				return queryFailed(fmt.Errorf("window %d out of its chunk", w), "hook events")
			}
			h.Timestamp, h.ExitCode = parseStoredTime(ts), ptrInt64(exit)
			out[w] = append(out[w], h)
		}
		if err := rows.Err(); err != nil {
			return queryFailed(err, "hook events")
		}
		for _, hs := range out[sp[0]:sp[1]] {
			sortWindow(hs, func(h HookRun) (time.Time, int64) { return h.Timestamp, h.ID })
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
