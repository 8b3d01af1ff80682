package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
)

// BodyKinds are the skill event kinds that show (or point at) a skill
// body: the events the skill-body pass resolves.
var BodyKinds = []string{cortex.SkillClaudeBody, cortex.SkillClaudeSlash, cortex.SkillClaudeInvoked,
	cortex.SkillCodexBlock, cortex.SkillCodexRead, cortex.SkillClaudeCommand}

const skillLoadCols = `id, log_id, timestamp, skill_name, COALESCE(skill_plugin, ''), COALESCE(skill_path, ''), event_kind,
	COALESCE(ai_agent_id, ''), COALESCE(ai_project, ''), metadata_json, ai_tool, hostname, COALESCE(ai_session_id, ''),
	COALESCE(body_sha256, '')`

func scanSkillLoads(rows *sql.Rows) ([]SkillLoad, error) {
	defer rows.Close()
	var out []SkillLoad
	for rows.Next() {
		var l SkillLoad
		var ts, tool string
		var meta sql.NullString
		if err := rows.Scan(&l.ID, &l.LogID, &ts, &l.Skill, &l.Plugin, &l.Path, &l.Kind, &l.Thread, &l.Project, &meta,
			&tool, &l.Host, &l.Session, &l.SHA256); err != nil {
			return nil, queryFailed(err, "skill loads")
		}
		l.Timestamp, l.Meta, l.Tool = parseStoredTime(ts), decodeMeta(meta), cortex.Tool(tool)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, queryFailed(err, "skill loads")
	}
	return out, nil
}

// PendingSkillLoads returns up to limit body-showing skill events with id
// > afterID in id order: those the skill-body pass has not looked at yet,
// or with all every one of them (to recompute).
func (db *DB) PendingSkillLoads(ctx context.Context, afterID int64, limit int, all bool) ([]SkillLoad, error) {
	// The kinds are written out (constants): the planner uses the partial
	// index only when its condition is visible in the query.
	kinds := `'` + strings.Join(BodyKinds, `', '`) + `'`
	q := `SELECT ` + skillLoadCols + ` FROM ai_skill_events INDEXED BY idx_ai_skill_events_body_pending
		WHERE body_sha256 IS NULL AND event_kind IN (` + kinds + `) AND id > ? ORDER BY id LIMIT ?`
	if all {
		q = `SELECT ` + skillLoadCols + ` FROM ai_skill_events WHERE event_kind IN (` + kinds + `) AND id > ? ORDER BY id LIMIT ?`
	}
	rows, err := db.query(ctx, q, afterID, limit)
	if err != nil {
		return nil, queryFailed(err, "skill loads")
	}
	return scanSkillLoads(rows)
}

// SkillLoads returns the loads of the named skills that showed a body, in
// time order, at most limit (the newest when more exist).
func (db *DB) SkillLoads(ctx context.Context, names []string, limit int) ([]SkillLoad, error) {
	if len(names) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(names)+1)
	for _, n := range names {
		args = append(args, n)
	}
	rows, err := db.query(ctx, `SELECT * FROM (SELECT `+skillLoadCols+` FROM ai_skill_events
		INDEXED BY idx_ai_skill_events_skill_body
		WHERE skill_name IN (`+marks(len(names))+`) AND body_sha256 IS NOT NULL AND body_sha256 <> ''
		ORDER BY timestamp DESC, id DESC LIMIT ?) ORDER BY timestamp, id`, append(args, limit)...)
	if err != nil {
		return nil, queryFailed(err, "skill loads")
	}
	return scanSkillLoads(rows)
}

// SkillEventBodies maps skill event ids to the body versions they showed
// (events without one are absent).
func (db *DB) SkillEventBodies(ctx context.Context, ids []int64) (map[int64]string, error) {
	type eb struct {
		id  int64
		sha string
	}
	rows, err := readByIDs(ctx, db.r, "skill bodies", `SELECT id, COALESCE(body_sha256, '') FROM ai_skill_events`, ids,
		func(r *sql.Rows) (eb, error) {
			var e eb
			return e, r.Scan(&e.id, &e.sha)
		}, func(e eb) (string, int64) { return "", e.id })
	out := make(map[int64]string, len(rows))
	for _, e := range rows {
		if e.sha != "" {
			out[e.id] = e.sha
		}
	}
	return out, err
}

// SkillBodies returns stored bodies by hash; withText false leaves Body
// empty (sizes only).
func (db *DB) SkillBodies(ctx context.Context, shas []string, withText bool) (map[string]SkillBody, error) {
	out := map[string]SkillBody{}
	if len(shas) == 0 {
		return out, nil
	}
	args := make([]any, len(shas))
	for i, s := range shas {
		args[i] = s
	}
	col := `''`
	if withText {
		col = `body`
	}
	rows, err := db.query(ctx, `SELECT sha256, `+col+`, bytes, lines, complete, first_seen FROM ai_skill_bodies
		WHERE sha256 IN (`+marks(len(shas))+`)`, args...)
	if err != nil {
		return nil, queryFailed(err, "skill bodies")
	}
	defer rows.Close()
	for rows.Next() {
		var b SkillBody
		var ts string
		if err := rows.Scan(&b.SHA256, &b.Body, &b.Bytes, &b.Lines, &b.Complete, &ts); err != nil {
			return nil, queryFailed(err, "skill bodies")
		}
		b.FirstSeen = parseStoredTime(ts)
		out[b.SHA256] = b
	}
	return out, rows.Err()
}

// CallResult is the result row and stored arguments of a tool call.
type CallResult struct {
	ResultLogID int64
	Arguments   string
}

// CallResults maps call rows of a session to their results and arguments
// (calls without a stored result are absent).
func (db *DB) CallResults(ctx context.Context, s SessionScope, callLogIDs []int64) (map[int64]CallResult, error) {
	out := map[int64]CallResult{}
	if len(callLogIDs) == 0 {
		return out, nil
	}
	args := []any{s.Session, string(s.Tool), s.Host}
	for _, id := range callLogIDs {
		args = append(args, id)
	}
	rows, err := db.query(ctx, `SELECT call_log_id, result_log_id, arguments_json FROM ai_mcp_events
		INDEXED BY idx_ai_mcp_events_session_time
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND result_log_id IS NOT NULL AND call_log_id IN (`+
		marks(len(callLogIDs))+`)`, args...)
	if err != nil {
		return nil, queryFailed(err, "tool calls")
	}
	defer rows.Close()
	for rows.Next() {
		var c int64
		var r CallResult
		if err := rows.Scan(&c, &r.ResultLogID, db.packedText(&r.Arguments)); err != nil {
			return nil, queryFailed(err, "tool calls")
		}
		out[c] = r
	}
	return out, rows.Err()
}

// SkillBodyUpdate records what a load event showed: a body (SHA256 and
// Body set) or none (both empty).
type SkillBodyUpdate struct {
	EventID  int64
	SHA256   string
	Body     string
	Complete bool
	Seen     time.Time
}

// StoreSkillBodies writes the skill-body pass's results in one
// transaction: bodies deduplicated by hash (a body once seen whole stays
// complete), each event's version.
func (db *DB) StoreSkillBodies(ctx context.Context, ups []SkillBodyUpdate) error {
	if len(ups) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		body, err := tx.PrepareContext(ctx, `INSERT INTO ai_skill_bodies(sha256, body, bytes, lines, complete, first_seen)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(sha256) DO UPDATE SET complete = max(complete, excluded.complete),
			first_seen = min(first_seen, excluded.first_seen)`)
		if err != nil {
			return err
		}
		defer body.Close()
		ev, err := tx.PrepareContext(ctx, `UPDATE ai_skill_events SET body_sha256 = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer ev.Close()
		for _, u := range ups {
			if u.SHA256 != "" {
				if _, err := body.ExecContext(ctx, u.SHA256, u.Body, len(u.Body), strings.Count(u.Body, "\n")+1, u.Complete,
					cortex.FormatTime(u.Seen)); err != nil {
					return err
				}
			}
			if _, err := ev.ExecContext(ctx, u.SHA256, u.EventID); err != nil {
				return err
			}
		}
		return nil
	})
}

// LastPrompt returns the last prompt or command the user typed in a
// session's main thread at or before t (ok false: none).
func (db *DB) LastPrompt(ctx context.Context, s SessionScope, t time.Time) (UserAct, bool, error) {
	acts, err := collectActs(db.query(ctx, `SELECT `+userActCols+` FROM ai_user_events
		INDEXED BY idx_ai_user_events_session_time
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND ai_agent_id IS NULL AND event_kind IN (?, ?)
		AND timestamp <= ? ORDER BY timestamp DESC, id DESC LIMIT 1`,
		s.Session, string(s.Tool), s.Host, cortex.UserPrompt, cortex.UserCommand, cortex.FormatTime(t)))
	if err != nil || len(acts) == 0 {
		return UserAct{}, false, err
	}
	return acts[0], true, nil
}
