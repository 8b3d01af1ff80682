package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
)

const userActCols = `id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname,
	COALESCE(ai_agent_id, ''), timestamp, event_kind, text, COALESCE(call_id, ''), COALESCE(source, ''),
	COALESCE(metadata_json, ''), COALESCE(voice, ''), COALESCE(voice_version, 0)`

// userActKeyCols are userActCols without the texts (empty in the result).
const userActKeyCols = `id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname,
	COALESCE(ai_agent_id, ''), timestamp, event_kind, '', '', '', '', '', 0`

func collectActs(rows *sql.Rows, err error) ([]UserAct, error) {
	if err != nil {
		return nil, queryFailed(err, "user events")
	}
	defer rows.Close()
	var out []UserAct
	for rows.Next() {
		var a UserAct
		var tool, ts string
		if err := rows.Scan(&a.ID, &a.LogID, &tool, &a.Project, &a.Session, &a.Host, &a.Thread, &ts, &a.Kind, &a.Text,
			&a.CallID, &a.Source, &a.MetaJSON, &a.Voice, &a.VoiceVersion); err != nil {
			return nil, queryFailed(err, "user events")
		}
		a.Tool, a.Timestamp = cortex.Tool(tool), parseStoredTime(ts)
		out = append(out, a)
	}
	return out, rows.Err()
}

// VoicesCurrent reports whether every user event's stored reading is of
// the given rules version.
func (db *DB) VoicesCurrent(ctx context.Context, version int) (bool, error) {
	var stale int
	err := db.r.QueryRowContext(ctx, staleExistsSQL(`ai_user_events INDEXED BY idx_ai_user_events_voice_version`, "",
		"voice_version"), version, version).Scan(&stale)
	if err != nil {
		return false, queryFailed(err, "user events")
	}
	return stale == 0, nil
}

// UserActKeys returns the newest user events matching f (at most
// f.Limit), newest first, without their texts: the friction lens's
// candidate scan (which sessions to read, and when). With saying set, only
// interrupts, refusals and acts whose stored reading says something (valid
// when VoicesCurrent reports every reading is of the rules in use).
func (db *DB) UserActKeys(ctx context.Context, f CandidateFilter, saying bool) ([]UserAct, error) {
	w := candidateWhere(f, "")
	from := `ai_user_events INDEXED BY idx_ai_user_events_time WHERE 1=1`
	if saying {
		from = `ai_user_events INDEXED BY idx_ai_user_events_friction
			WHERE (event_kind IN ('interrupt', 'rejection') OR voice IS NOT NULL)`
	}
	return collectActs(db.query(ctx, `SELECT `+userActKeyCols+` FROM `+from+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`,
		append(w.args, f.Limit)...))
}

// UserActCandidates returns the newest user events matching f (at most
// f.Limit), newest first, with their texts and readings.
func (db *DB) UserActCandidates(ctx context.Context, f CandidateFilter) ([]UserAct, error) {
	w := candidateWhere(f, "")
	return collectActs(db.query(ctx, `SELECT `+userActCols+` FROM ai_user_events INDEXED BY idx_ai_user_events_time
		WHERE 1=1`+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.args, f.Limit)...))
}

// SessionUserActs returns the user events of a session in [from, to] (the
// zero time leaves a side open), in time order, at most limit.
func (db *DB) SessionUserActs(ctx context.Context, s SessionScope, from, to time.Time, limit int) ([]UserAct, error) {
	q, args := sqlpart.SessionRange(`SELECT `+userActCols+` FROM ai_user_events INDEXED BY idx_ai_user_events_session_time
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ?`, s, from, to)
	return collectActs(db.query(ctx, q+` ORDER BY timestamp, id LIMIT ?`, append(args, limit)...))
}

// UserActsByLogID returns the user events of the given rows.
func (db *DB) UserActsByLogID(ctx context.Context, logIDs []int64) ([]UserAct, error) {
	if len(logIDs) == 0 {
		return nil, nil
	}
	args := make([]any, len(logIDs))
	for i, id := range logIDs {
		args[i] = id
	}
	return collectActs(db.query(ctx, `SELECT `+userActCols+` FROM ai_user_events WHERE log_id IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(logIDs)), ",")+`) ORDER BY timestamp, id`, args...))
}

// SessionSkillEvents returns the skill events of a session in time order,
// at most limit.
func (db *DB) SessionSkillEvents(ctx context.Context, s SessionScope, limit int) ([]SessionSkill, error) {
	rows, err := db.query(ctx, `SELECT id, log_id, timestamp, skill_name, COALESCE(skill_plugin, ''), COALESCE(skill_path, ''),
		event_kind, COALESCE(ai_agent_id, ''), COALESCE(ai_project, ''), metadata_json FROM ai_skill_events
		INDEXED BY idx_ai_skill_events_session_time
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? ORDER BY timestamp, id LIMIT ?`,
		s.Session, string(s.Tool), s.Host, limit)
	if err != nil {
		return nil, queryFailed(err, "skill events")
	}
	defer rows.Close()
	var out []SessionSkill
	for rows.Next() {
		var e SessionSkill
		var ts string
		var meta sql.NullString
		if err := rows.Scan(&e.ID, &e.LogID, &ts, &e.Skill, &e.Plugin, &e.Path, &e.Kind, &e.Thread, &e.Project, &meta); err != nil {
			return nil, queryFailed(err, "skill events")
		}
		e.Timestamp, e.Meta = parseStoredTime(ts), decodeMeta(meta)
		out = append(out, e)
	}
	return out, rows.Err()
}

// KnownSkillNames returns the skill names the store saw loaded as a skill
// (any event but an announcement), to tell an announced name that is a
// skill from one that is not.
func (db *DB) KnownSkillNames(ctx context.Context) (map[string]bool, error) {
	rows, err := db.query(ctx, `SELECT DISTINCT skill_name FROM ai_skill_events INDEXED BY idx_ai_skill_events_skill_time
		WHERE event_kind <> ? LIMIT 100000`, cortex.SkillCodexAnnounced)
	if err != nil {
		return nil, queryFailed(err, "skills")
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, queryFailed(err, "skills")
		}
		out[s] = true
	}
	return out, rows.Err()
}

// SessionCalls returns the tool calls of a session in [from, to] (by call
// time; the zero time leaves a side open), in time order, at most limit,
// with their texts and stored facts.
func (db *DB) SessionCalls(ctx context.Context, s SessionScope, from, to time.Time, limit int) ([]SessionCall, error) {
	q, args := sqlpart.SessionRange(`SELECT `+callCols+`, call_id, COALESCE(ai_agent_id, ''), COALESCE(turn_id, ''),
		arguments_json, output_preview, COALESCE(result_timestamp, ''),
		COALESCE(class, ''), COALESCE(why, ''), COALESCE(op, ''), COALESCE(loads_skill, 0), COALESCE(facts_version, 0)
		FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_session_time
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ?`, s, from, to)
	rows, err := db.query(ctx, q+` ORDER BY timestamp, id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, queryFailed(err, "tool calls")
	}
	defer rows.Close()
	var out []SessionCall
	for rows.Next() {
		var c SessionCall
		var ts, rts string
		var callLog, resultLog, exit sql.NullInt64
		var isErr, loads int
		if err := rows.Scan(&c.ID, &callLog, &resultLog, &ts, &c.ToolName, &c.MCPServer, &c.MCPTool, &c.Status, &isErr, &exit,
			&c.ErrorText, &c.CallID, &c.Thread, &c.TurnID, db.packedText(&c.Arguments), db.packedText(&c.Output), &rts,
			&c.Class, &c.Why, &c.Op, &loads, &c.FactsVersion); err != nil {
			return nil, queryFailed(err, "tool calls")
		}
		c.Timestamp, c.IsError, c.LoadsSkill = parseStoredTime(ts), isErr == 1, loads == 1
		c.CallLogID, c.ResultLogID, c.ExitCode = ptrInt64(callLog), ptrInt64(resultLog), ptrInt64(exit)
		if rts != "" {
			c.ResultTimestamp = parseStoredTime(rts)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// packedCallCols are the columns SessionCallFactsMany reads of a call from
// the session's call index, packed in one JSON array (see
// unpackCallFacts): each column a reader fetches costs two calls into
// SQLite, each taking the connection's mutex, which cost more than the
// index scan itself.
const packedCallCols = `json_array(timestamp, tool_name, mcp_server, mcp_tool, is_error, call_id, ai_agent_id, result_timestamp,
	class, loads_skill, facts_version, call_log_id, result_log_id, op)`

// callParsers parse packedCallCols (one parser per goroutine at a time).
var callParsers fastjson.ParserPool

// unpackCallFacts reads packedCallCols into c.
func unpackCallFacts(packed string, c *SessionCall) error {
	p := callParsers.Get()
	defer callParsers.Put(p)
	v, err := p.Parse(packed)
	if err != nil {
		return fmt.Errorf("packed call facts: %w", err)
	}
	f := v.GetArray()
	if len(f) != 14 {
		return fmt.Errorf("packed call facts: %d fields", len(f))
	}
	str := func(i int) string { return string(f[i].GetStringBytes()) }
	num := func(i int) int64 { return f[i].GetInt64() }
	c.Timestamp = parseStoredTime(str(0))
	c.ToolName, c.MCPServer, c.MCPTool = str(1), str(2), str(3)
	c.IsError, c.CallID, c.Thread = num(4) == 1, str(5), str(6)
	if rts := str(7); rts != "" {
		c.ResultTimestamp = parseStoredTime(rts)
	}
	c.Class, c.LoadsSkill, c.FactsVersion, c.Op = str(8), num(9) == 1, int(num(10)), str(13)
	for i, p := range []**int64{&c.CallLogID, &c.ResultLogID} {
		if f[11+i].Type() == fastjson.TypeNumber {
			n := num(11 + i)
			*p = &n
		}
	}
	return nil
}

// FirstPrompt returns the id of a session's first typed prompt or command
// of the main thread (0: none).
func (db *DB) FirstPrompt(ctx context.Context, s SessionScope) (int64, error) {
	var id int64
	err := db.queryRow(ctx, `SELECT id FROM ai_user_events INDEXED BY idx_ai_user_events_session_time
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND ai_agent_id IS NULL AND event_kind IN (?, ?)
		ORDER BY timestamp, id LIMIT 1`, s.Session, string(s.Tool), s.Host, cortex.UserPrompt, cortex.UserCommand).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, queryFailed(err, "user events")
	}
	return id, nil
}

// RawRecords returns the stored original records of rows, by id (as
// stored: redacted, opaque blobs elided, see transcript.ElideBlobs).
func (db *DB) RawRecords(ctx context.Context, ids []int64) (map[int64]StoredRaw, error) {
	out := map[int64]StoredRaw{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := db.query(ctx, `SELECT id, COALESCE(ai_tool, ''), COALESCE(ai_kind, ''), raw FROM logs WHERE id IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`)`, args...)
	if err != nil {
		return nil, queryFailed(err, "raw records")
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var r StoredRaw
		var tool string
		if err := rows.Scan(&id, &tool, &r.Kind, &r.Raw); err != nil {
			return nil, queryFailed(err, "raw records")
		}
		raw, err := db.rowRaw(ctx, id, r.Raw)
		if err != nil {
			return nil, queryFailed(err, "raw records")
		}
		r.Raw = raw
		r.Tool = cortex.Tool(tool)
		out[id] = r
	}
	return out, rows.Err()
}

// ResultRows maps call rows to the rows of their results (tool calls whose
// call row is one of callLogIDs and whose result is stored).
func (db *DB) ResultRows(ctx context.Context, s SessionScope, callLogIDs []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(callLogIDs) == 0 {
		return out, nil
	}
	args := []any{s.Session, string(s.Tool), s.Host}
	for _, id := range callLogIDs {
		args = append(args, id)
	}
	rows, err := db.query(ctx, `SELECT call_log_id, result_log_id FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_session_time
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND result_log_id IS NOT NULL AND call_log_id IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(callLogIDs)), ",")+`)`, args...)
	if err != nil {
		return nil, queryFailed(err, "tool calls")
	}
	defer rows.Close()
	for rows.Next() {
		var c, r int64
		if err := rows.Scan(&c, &r); err != nil {
			return nil, queryFailed(err, "tool calls")
		}
		out[c] = r
	}
	return out, rows.Err()
}

// NextContextRow returns the first injected-context row (role context) of
// a session at or after (t, afterID), within limit, or 0: the body Claude
// Code expands a custom command into follows the command.
func (db *DB) NextContextRow(ctx context.Context, s SessionScope, t time.Time, afterID int64, within time.Duration) (int64, error) {
	var id int64
	ts := cortex.FormatTime(t)
	err := db.queryRow(ctx, `SELECT id FROM logs WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ?
		AND timestamp >= ? AND timestamp <= ? AND NOT (timestamp = ? AND id <= ?) AND ai_role = 'context' AND ai_kind = 'user:meta'
		ORDER BY timestamp, id LIMIT 1`, s.Session, string(s.Tool), s.Host, ts, cortex.FormatTime(t.Add(within)), ts, afterID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, queryFailed(err, "rows")
	}
	return id, nil
}

// StaleVoices returns up to limit user events after id whose stored
// reading is not of the given rules version, by id: what RefreshVoices
// reads again.
func (db *DB) StaleVoices(ctx context.Context, version int, after int64, limit int) ([]UserAct, error) {
	// The version index finds the stale events (NULL and other versions
	// sort apart from the current one: see staleIDsSQL); they are then
	// read in id order (a scan in id order reads every event when none is
	// stale).
	return collectActs(db.query(ctx, `SELECT `+userActCols+` FROM ai_user_events WHERE id IN (`+
		staleIDsSQL(`ai_user_events INDEXED BY idx_ai_user_events_voice_version`, "", "voice_version")+`) ORDER BY id`,
		staleIDsArgs(version, after, limit)...))
}

// VoiceReading is a user event's reading to store.
type VoiceReading struct {
	ID      int64
	Voice   string
	Version int
}

// SetVoices stores readings of user events, in one transaction.
func (db *DB) SetVoices(ctx context.Context, readings []VoiceReading) error {
	if len(readings) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `UPDATE ai_user_events SET voice = ?, voice_version = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range readings {
			var v any
			if r.Voice != "" {
				v = r.Voice
			}
			if _, err := st.ExecContext(ctx, v, r.Version, r.ID); err != nil {
				return fmt.Errorf("store voice reading: %w", err)
			}
		}
		return nil
	})
}
