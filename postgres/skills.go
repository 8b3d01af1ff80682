package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

// The skill lifecycle's reads (skill versions, health, compare, propose,
// evals), query for query those of the SQLite store.

const skillLoadCols = `id, log_id, timestamp, skill_name, COALESCE(skill_plugin, ''), COALESCE(skill_path, ''), event_kind,
	COALESCE(ai_agent_id, ''), COALESCE(ai_project, ''), metadata_json, ai_tool, hostname, COALESCE(ai_session_id, ''),
	COALESCE(body_sha256, '')`

// SkillLoads returns the loads of the named skills that showed a body, in
// time order, at most limit (the newest when more exist).
func (db *DB) SkillLoads(ctx context.Context, names []string, limit int) ([]store.SkillLoad, error) {
	if len(names) == 0 {
		return nil, nil
	}
	rows, err := db.query(ctx, `SELECT * FROM (SELECT `+skillLoadCols+` FROM ai_skill_events
		WHERE skill_name = ANY(?) AND body_sha256 IS NOT NULL AND body_sha256 <> ''
		ORDER BY timestamp DESC, id DESC LIMIT ?) AS newest ORDER BY timestamp, id`, names, limit)
	return collect(rows, err, "skill loads", func(rows pgx.Rows) (store.SkillLoad, error) {
		var l store.SkillLoad
		var ts, tool string
		var meta *string
		err := rows.Scan(&l.ID, &l.LogID, &ts, &l.Skill, &l.Plugin, &l.Path, &l.Kind, &l.Thread, &l.Project, &meta,
			&tool, &l.Host, &l.Session, &l.SHA256)
		l.Timestamp, l.Meta, l.Tool = parseStoredTime(ts), decodeMeta(meta), cortex.Tool(tool)
		return l, err
	})
}

// SkillEventBodies maps skill event ids to the body versions they showed
// (events without one are absent).
func (db *DB) SkillEventBodies(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.query(ctx, `SELECT id, body_sha256 FROM ai_skill_events
		WHERE id = ANY(?) AND body_sha256 IS NOT NULL AND body_sha256 <> ''`, ids)
	type eb struct {
		id  int64
		sha string
	}
	got, err := collect(rows, err, "skill bodies", func(rows pgx.Rows) (eb, error) {
		var e eb
		return e, rows.Scan(&e.id, &e.sha)
	})
	for _, e := range got {
		out[e.id] = e.sha
	}
	return out, err
}

// SkillBodies returns stored bodies by hash; withText false leaves Body
// empty (sizes only). A body several laptops sent is one version: its text
// is one that was sent (a laptop pushing without text sends sizes only),
// complete when any laptop saw it whole, first seen when the first did.
func (db *DB) SkillBodies(ctx context.Context, shas []string, withText bool) (map[string]store.SkillBody, error) {
	out := map[string]store.SkillBody{}
	if len(shas) == 0 {
		return out, nil
	}
	col := `''`
	if withText {
		col = `COALESCE(max(body) FILTER (WHERE body <> ''), '')`
	}
	rows, err := db.query(ctx, `SELECT sha256, `+col+`, max(bytes), max(lines), max(complete), min(first_seen)
		FROM ai_skill_bodies WHERE sha256 = ANY(?) GROUP BY sha256`, shas)
	got, err := collect(rows, err, "skill bodies", func(rows pgx.Rows) (store.SkillBody, error) {
		var b store.SkillBody
		var ts string
		var complete int
		err := rows.Scan(&b.SHA256, &b.Body, &b.Bytes, &b.Lines, &complete, &ts)
		b.Complete, b.FirstSeen = complete != 0, parseStoredTime(ts)
		return b, err
	})
	for _, b := range got {
		out[b.SHA256] = b
	}
	return out, err
}

// LastPrompt returns the last prompt or command the user typed in a
// session's main thread at or before t (ok false: none).
func (db *DB) LastPrompt(ctx context.Context, s store.SessionScope, t time.Time) (store.UserAct, bool, error) {
	acts, err := db.acts(ctx, `SELECT `+userActCols+` FROM ai_user_events
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND ai_agent_id IS NULL AND event_kind IN (?, ?)
		AND timestamp <= ? ORDER BY timestamp DESC, id DESC LIMIT 1`,
		s.Session, string(s.Tool), s.Host, cortex.UserPrompt, cortex.UserCommand, cortex.FormatTime(t))
	if err != nil || len(acts) == 0 {
		return store.UserAct{}, false, err
	}
	return acts[0], true, nil
}
