package postgres

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/fts"
	"github.com/cortexhq/cortex/internal/sqlpart"
	"github.com/cortexhq/cortex/store"
)

// The incident engine's reads (incident.Store), query for query those of
// the SQLite store.

// SkillCandidates returns the newest skill events matching f (at most
// f.Limit), newest first.
func (db *DB) SkillCandidates(ctx context.Context, f store.CandidateFilter) ([]store.SkillCandidate, error) {
	w := sqlpart.Candidate(f, "")
	switch {
	case len(f.Skills) > 0:
		w.Add("skill_name IN ("+marks(len(f.Skills))+")", anys(f.Skills)...)
	case f.Skill != "":
		w.Add("skill_name = ?", f.Skill)
	}
	if f.Plugin != "" {
		w.Add("skill_plugin = ?", f.Plugin)
	}
	rows, err := db.query(ctx, `SELECT id, log_id, skill_name, COALESCE(skill_plugin, ''), ai_tool, COALESCE(ai_project, ''),
		COALESCE(ai_session_id, ''), hostname, timestamp, event_kind FROM ai_skill_events WHERE true`+w.SQL()+
		` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.Args, f.Limit)...)
	return collect(rows, err, "skill events", func(rows pgx.Rows) (store.SkillCandidate, error) {
		var c store.SkillCandidate
		var tool, ts string
		err := rows.Scan(&c.ID, &c.LogID, &c.Skill, &c.Plugin, &tool, &c.Project, &c.Session, &c.Host, &ts, &c.Kind)
		c.Tool, c.Timestamp = cortex.Tool(tool), parseStoredTime(ts)
		return c, err
	})
}

// UserTextMatches returns the newest user-typed transcript rows whose text
// holds any of terms (each a phrase), at most f.Limit, newest first; the
// answer is always complete (a push indexes the rows it sends).
func (db *DB) UserTextMatches(ctx context.Context, terms []string, f store.CandidateFilter) ([]store.TextCandidate, bool, error) {
	var q fts.Query
	var alts []fts.Term
	for _, t := range terms {
		alts = append(alts, fts.Term{Text: t})
	}
	q.Groups = [][]fts.Term{alts}
	tq, err := db.tsQuery(ctx, q)
	if err != nil {
		return nil, false, err
	}
	w := sqlpart.Candidate(f, "l.")
	rows, err := db.query(ctx, `SELECT l.id, l.ai_tool, COALESCE(l.ai_project, ''), COALESCE(l.ai_session_id, ''), l.hostname,
		l.timestamp, l.message FROM logs l WHERE l.fts @@ ?::tsquery AND l.ai_role = 'user'`+w.SQL()+
		` ORDER BY l.timestamp DESC, l.id DESC LIMIT ?`, append(append([]any{tq}, w.Args...), f.Limit)...)
	out, err := collect(rows, err, "matching rows", func(rows pgx.Rows) (store.TextCandidate, error) {
		var c store.TextCandidate
		var tool, ts string
		err := rows.Scan(&c.ID, &tool, &c.Project, &c.Session, &c.Host, &ts, &c.Message)
		c.Tool, c.Timestamp = cortex.Tool(tool), parseStoredTime(ts)
		return c, err
	})
	// Pushed rows are searchable when they arrive: nothing is left out.
	return out, err == nil, err
}

const evidenceCols = `id, timestamp, COALESCE(ai_tool, ''), COALESCE(ai_session_id, ''), hostname, COALESCE(ai_role, ''),
	COALESCE(ai_kind, ''), COALESCE(ai_tool_name, ''), severity, is_error, COALESCE(app_name, ''), message`

func scanEvidence(rows pgx.Rows) (cortex.EvidenceRow, error) {
	var r cortex.EvidenceRow
	var tool, role, sev string
	var isErr int
	err := rows.Scan(&r.ID, &r.Timestamp, &tool, &r.SessionID, &r.Hostname, &role, &r.Kind, &r.ToolName, &sev, &isErr, &r.AppName, &r.Message)
	r.Tool, r.Role, r.Severity, r.IsError = cortex.Tool(tool), cortex.Role(role), cortex.Severity(sev), isErr == 1
	return r, err
}

func (db *DB) evidence(ctx context.Context, q string, args ...any) ([]cortex.EvidenceRow, error) {
	rows, err := db.query(ctx, q, args...)
	return collect(rows, err, "evidence rows", scanEvidence)
}

// SessionRowsBefore returns the last limit rows of a session before the
// row (t, id) (thinking excluded), in time order.
func (db *DB) SessionRowsBefore(ctx context.Context, s store.SessionScope, t time.Time, id int64, limit int) ([]cortex.EvidenceRow, error) {
	ts := cortex.FormatTime(t)
	rows, err := db.evidence(ctx, `SELECT `+evidenceCols+` FROM logs
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp <= ? AND NOT (timestamp = ? AND id >= ?)
		AND ai_role <> 'thinking' ORDER BY timestamp DESC, id DESC LIMIT ?`, s.Session, string(s.Tool), s.Host, ts, ts, id, limit)
	slices.Reverse(rows)
	return rows, err
}

// SessionRowsAfter returns the first limit rows of a session after the row
// (t, id) (thinking excluded), in time order.
func (db *DB) SessionRowsAfter(ctx context.Context, s store.SessionScope, t time.Time, id int64, limit int) ([]cortex.EvidenceRow, error) {
	ts := cortex.FormatTime(t)
	return db.evidence(ctx, `SELECT `+evidenceCols+` FROM logs
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND NOT (timestamp = ? AND id <= ?)
		AND ai_role <> 'thinking' ORDER BY timestamp, id LIMIT ?`, s.Session, string(s.Tool), s.Host, ts, ts, id, limit)
}

// RowsByID returns logs rows by id, in time order.
func (db *DB) RowsByID(ctx context.Context, ids []int64) ([]cortex.EvidenceRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return db.evidence(ctx, `SELECT `+evidenceCols+` FROM logs WHERE id = ANY(?) ORDER BY timestamp, id`, ids)
}

// NearbyLogs returns non-AI log rows of host (or of its short name, any
// case) in [from, to], in time order, at most limit; errorsOnly keeps error
// severity and worse.
func (db *DB) NearbyLogs(ctx context.Context, host string, from, to time.Time, errorsOnly bool, limit int) ([]cortex.EvidenceRow, error) {
	short, _, _ := strings.Cut(host, ".")
	q := `SELECT ` + evidenceCols + ` FROM logs WHERE ai_tool IS NULL AND timestamp >= ? AND timestamp <= ?
		AND (hostname = ? OR lower(hostname) = lower(?) OR hostname LIKE ? ESCAPE '\')`
	args := []any{cortex.FormatTime(from), cortex.FormatTime(to), host, short, likeEscape(short) + ".%"}
	if errorsOnly {
		sev := cortex.ErrorSeverities()
		q += ` AND severity IN (` + marks(len(sev)) + `)`
		for _, s := range sev {
			args = append(args, string(s))
		}
	}
	return db.evidence(ctx, q+` ORDER BY timestamp, id LIMIT ?`, append(args, limit)...)
}

const callCols = `id, call_log_id, result_log_id, timestamp, tool_name, COALESCE(mcp_server, ''),
	COALESCE(mcp_tool, ''), status, COALESCE(is_error, 0), exit_code, COALESCE(error_text, '')`

func scanCall(rows pgx.Rows, c *store.ToolCall, extra ...any) error {
	var ts string
	var isErr int
	err := rows.Scan(append([]any{&c.ID, &c.CallLogID, &c.ResultLogID, &ts, &c.ToolName, &c.MCPServer, &c.MCPTool, &c.Status,
		&isErr, &c.ExitCode, &c.ErrorText}, extra...)...)
	c.Timestamp, c.IsError = parseStoredTime(ts), isErr == 1
	return err
}

func (db *DB) calls(ctx context.Context, q string, args ...any) ([]store.ToolCall, error) {
	rows, err := db.query(ctx, q, args...)
	return collect(rows, err, "tool calls", func(rows pgx.Rows) (store.ToolCall, error) {
		var c store.ToolCall
		return c, scanCall(rows, &c)
	})
}

// SessionUserRows returns what the user typed in a session in [from, to],
// in time order, at most limit.
func (db *DB) SessionUserRows(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error) {
	return db.evidence(ctx, `SELECT `+evidenceCols+` FROM logs
		WHERE ai_session_id = ? AND ai_role = 'user' AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND timestamp <= ?
		ORDER BY timestamp, id LIMIT ?`, s.Session, string(s.Tool), s.Host, cortex.FormatTime(from), cortex.FormatTime(to), limit)
}

// SkillEventsByID returns skill events by id, in time order.
func (db *DB) SkillEventsByID(ctx context.Context, ids []int64) ([]cortex.SkillEventRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.query(ctx, `SELECT `+skillEventCols+` FROM ai_skill_events WHERE id = ANY(?) ORDER BY timestamp, id`, ids)
	return collect(rows, err, "skill events", scanSkillEvent)
}

const userActCols = `id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname,
	COALESCE(ai_agent_id, ''), timestamp, event_kind, text, COALESCE(call_id, ''), COALESCE(source, ''), metadata_json,
	COALESCE(voice, ''), COALESCE(voice_version, 0)`

// userActKeyCols are userActCols without the texts (empty in the result).
const userActKeyCols = `id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname,
	COALESCE(ai_agent_id, ''), timestamp, event_kind, '', '', '', NULL, '', 0`

func (db *DB) acts(ctx context.Context, q string, args ...any) ([]store.UserAct, error) {
	rows, err := db.query(ctx, q, args...)
	return collect(rows, err, "user events", func(rows pgx.Rows) (store.UserAct, error) {
		var a store.UserAct
		var tool, ts string
		var meta *string
		err := rows.Scan(&a.ID, &a.LogID, &tool, &a.Project, &a.Session, &a.Host, &a.Thread, &ts, &a.Kind, &a.Text,
			&a.CallID, &a.Source, &meta, &a.Voice, &a.VoiceVersion)
		a.Tool, a.Timestamp = cortex.Tool(tool), parseStoredTime(ts)
		if meta != nil {
			a.MetaJSON = *meta
		}
		return a, err
	})
}

// VoicesCurrent reports whether every user event's stored reading is of
// the given rules version (readings pushed by laptops with other rules,
// or not sent, are not).
func (db *DB) VoicesCurrent(ctx context.Context, version int) (bool, error) {
	var stale bool
	err := db.queryRow(ctx, `SELECT EXISTS(SELECT 1 FROM ai_user_events
		WHERE voice_version IS NULL OR voice_version < ? OR voice_version > ?)`, version, version).Scan(&stale)
	if err != nil {
		return false, queryFailed(err, "user events")
	}
	return !stale, nil
}

// UserActKeys returns the newest user events matching f (at most
// f.Limit), newest first, without their texts; with saying set, only
// interrupts, refusals and acts whose stored reading says something.
func (db *DB) UserActKeys(ctx context.Context, f store.CandidateFilter, saying bool) ([]store.UserAct, error) {
	w := sqlpart.Candidate(f, "")
	cond := `true`
	if saying {
		cond = `(event_kind IN ('interrupt', 'rejection') OR voice IS NOT NULL)`
	}
	return db.acts(ctx, `SELECT `+userActKeyCols+` FROM ai_user_events WHERE `+cond+w.SQL()+
		` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.Args, f.Limit)...)
}

// UserActCandidates returns the newest user events matching f (at most
// f.Limit), newest first, with their texts and readings.
func (db *DB) UserActCandidates(ctx context.Context, f store.CandidateFilter) ([]store.UserAct, error) {
	w := sqlpart.Candidate(f, "")
	return db.acts(ctx, `SELECT `+userActCols+` FROM ai_user_events WHERE true`+w.SQL()+
		` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.Args, f.Limit)...)
}

// SessionUserActs returns the user events of a session in [from, to] (a
// zero time leaves a side open), in time order, at most limit.
func (db *DB) SessionUserActs(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]store.UserAct, error) {
	q, args := sqlpart.SessionRange(`SELECT `+userActCols+` FROM ai_user_events WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ?`, s, from, to)
	return db.acts(ctx, q+` ORDER BY timestamp, id LIMIT ?`, append(args, limit)...)
}

// UserActsByLogID returns the user events of the given rows.
func (db *DB) UserActsByLogID(ctx context.Context, logIDs []int64) ([]store.UserAct, error) {
	if len(logIDs) == 0 {
		return nil, nil
	}
	return db.acts(ctx, `SELECT `+userActCols+` FROM ai_user_events WHERE log_id = ANY(?) ORDER BY timestamp, id`, logIDs)
}

// KnownSkillNames returns the skill names the store saw loaded as a skill
// (any event but an announcement).
func (db *DB) KnownSkillNames(ctx context.Context) (map[string]bool, error) {
	rows, err := db.query(ctx, `SELECT DISTINCT skill_name FROM ai_skill_events WHERE event_kind <> ? LIMIT 100000`,
		cortex.SkillCodexAnnounced)
	names, err := collect(rows, err, "skills", func(rows pgx.Rows) (string, error) {
		var s string
		return s, rows.Scan(&s)
	})
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out, err
}

// SessionCalls returns the tool calls of a session in [from, to] (a zero
// time leaves a side open), in time order, at most limit, with their
// texts and stored facts.
func (db *DB) SessionCalls(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]store.SessionCall, error) {
	q, args := sqlpart.SessionRange(`SELECT `+callCols+`, call_id, COALESCE(ai_agent_id, ''), COALESCE(turn_id, ''),
		COALESCE(arguments_json, ''), COALESCE(output_preview, ''), COALESCE(result_timestamp, ''),
		COALESCE(class, ''), COALESCE(why, ''), COALESCE(op, ''), COALESCE(loads_skill, 0), COALESCE(facts_version, 0)
		FROM ai_mcp_events WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ?`, s, from, to)
	rows, err := db.query(ctx, q+` ORDER BY timestamp, id LIMIT ?`, append(args, limit)...)
	return collect(rows, err, "tool calls", func(rows pgx.Rows) (store.SessionCall, error) {
		var c store.SessionCall
		var rts string
		var loads int
		err := scanCall(rows, &c.ToolCall, &c.CallID, &c.Thread, &c.TurnID, &c.Arguments, &c.Output, &rts,
			&c.Class, &c.Why, &c.Op, &loads, &c.FactsVersion)
		c.LoadsSkill = loads == 1
		if rts != "" {
			c.ResultTimestamp = parseStoredTime(rts)
		}
		return c, err
	})
}

// oneID reads a single id (0 when there is no row).
func oneID(row pgx.Row, what string) (int64, error) {
	var id int64
	err := row.Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, queryFailed(err, what)
	}
	return id, nil
}

// FirstPrompt returns the id of a session's first typed prompt or command
// of the main thread (0: none).
func (db *DB) FirstPrompt(ctx context.Context, s store.SessionScope) (int64, error) {
	return oneID(db.queryRow(ctx, `SELECT id FROM ai_user_events
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND ai_agent_id IS NULL AND event_kind IN (?, ?)
		ORDER BY timestamp, id LIMIT 1`, s.Session, string(s.Tool), s.Host, cortex.UserPrompt, cortex.UserCommand), "user events")
}

// RawRecords returns the stored original records of rows, by id (rows
// pushed without their record are left out).
func (db *DB) RawRecords(ctx context.Context, ids []int64) (map[int64]store.StoredRaw, error) {
	out := map[int64]store.StoredRaw{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := db.query(ctx, `SELECT id, COALESCE(ai_tool, ''), COALESCE(ai_kind, ''), raw FROM logs WHERE id = ANY(?) AND raw IS NOT NULL`, ids)
	type rec struct {
		id int64
		r  store.StoredRaw
	}
	recs, err := collect(rows, err, "raw records", func(rows pgx.Rows) (rec, error) {
		var x rec
		var tool string
		err := rows.Scan(&x.id, &tool, &x.r.Kind, &x.r.Raw)
		x.r.Tool = cortex.Tool(tool)
		return x, err
	})
	for _, x := range recs {
		out[x.id] = x.r
	}
	return out, err
}

// ResultRows maps call rows to the rows of their results.
func (db *DB) ResultRows(ctx context.Context, s store.SessionScope, callLogIDs []int64) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(callLogIDs) == 0 {
		return out, nil
	}
	rows, err := db.query(ctx, `SELECT call_log_id, result_log_id FROM ai_mcp_events
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND result_log_id IS NOT NULL AND call_log_id = ANY(?)`,
		s.Session, string(s.Tool), s.Host, callLogIDs)
	pairs, err := collect(rows, err, "tool calls", func(rows pgx.Rows) ([2]int64, error) {
		var p [2]int64
		return p, rows.Scan(&p[0], &p[1])
	})
	for _, p := range pairs {
		out[p[0]] = p[1]
	}
	return out, err
}

// NextContextRow returns the first injected-context row of a session at or
// after (t, afterID), within limit, or 0.
func (db *DB) NextContextRow(ctx context.Context, s store.SessionScope, t time.Time, afterID int64, within time.Duration) (int64, error) {
	ts := cortex.FormatTime(t)
	return oneID(db.queryRow(ctx, `SELECT id FROM logs WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ?
		AND timestamp >= ? AND timestamp <= ? AND NOT (timestamp = ? AND id <= ?) AND ai_role = 'context' AND ai_kind = 'user:meta'
		ORDER BY timestamp, id LIMIT 1`, s.Session, string(s.Tool), s.Host, ts, cortex.FormatTime(t.Add(within)), ts, afterID), "rows")
}

// MCPCandidates returns the newest MCP calls matching f (at most f.Limit),
// newest first.
func (db *DB) MCPCandidates(ctx context.Context, f store.MCPFilter) ([]store.MCPCandidate, error) {
	w := sqlpart.MCP(f)
	rows, err := db.query(ctx, `SELECT id, COALESCE(call_log_id, result_log_id, 0), call_id, mcp_server,
		COALESCE(mcp_tool, ''), ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname, timestamp
		FROM ai_mcp_events WHERE true`+w.SQL()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.Args, f.Limit)...)
	return collect(rows, err, "MCP calls", func(rows pgx.Rows) (store.MCPCandidate, error) {
		var c store.MCPCandidate
		var tool, ts string
		err := rows.Scan(&c.ID, &c.LogID, &c.CallID, &c.Server, &c.MCPTool, &tool, &c.Project, &c.Session, &c.Host, &ts)
		c.Tool, c.Timestamp = cortex.Tool(tool), parseStoredTime(ts)
		return c, err
	})
}

// MCPUsage counts the MCP calls matching f, their sessions and the failed
// ones.
func (db *DB) MCPUsage(ctx context.Context, f store.MCPFilter) (store.MCPUsage, error) {
	w := sqlpart.MCP(f)
	var u store.MCPUsage
	err := db.queryRow(ctx, `SELECT count(*),
		count(DISTINCT ai_tool || chr(31) || hostname || chr(31) || COALESCE(ai_session_id, '')),
		count(*) FILTER (WHERE is_error = 1 OR status = 'error' OR COALESCE(exit_code, 0) <> 0)
		FROM ai_mcp_events WHERE true`+w.SQL(), w.Args...).Scan(&u.Calls, &u.Sessions, &u.Failed)
	if err != nil {
		return store.MCPUsage{}, queryFailed(err, "MCP calls")
	}
	return u, nil
}

// MCPNames returns the distinct stored MCP server and tool pairs, sorted.
func (db *DB) MCPNames(ctx context.Context) ([]store.MCPName, error) {
	rows, err := db.query(ctx, `SELECT DISTINCT mcp_server, COALESCE(mcp_tool, '') FROM ai_mcp_events
		WHERE mcp_server IS NOT NULL ORDER BY 1, 2 LIMIT 10000`)
	return collect(rows, err, "MCP servers", func(rows pgx.Rows) (store.MCPName, error) {
		var n store.MCPName
		return n, rows.Scan(&n.Server, &n.Tool)
	})
}

// ToolCallsByID returns tool calls by id, in time order.
func (db *DB) ToolCallsByID(ctx context.Context, ids []int64) ([]store.ToolCall, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return db.calls(ctx, `SELECT `+callCols+` FROM ai_mcp_events WHERE id = ANY(?) ORDER BY timestamp, id`, ids)
}

// SessionMCPCalls returns the MCP calls of a session in [from, to], in time
// order, at most limit.
func (db *DB) SessionMCPCalls(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]store.ToolCall, error) {
	return db.calls(ctx, `SELECT `+callCols+` FROM ai_mcp_events
		WHERE ai_session_id = ? AND timestamp >= ? AND timestamp <= ? AND ai_tool = ? AND hostname = ?
		AND mcp_server IS NOT NULL ORDER BY timestamp, id LIMIT ?`,
		s.Session, cortex.FormatTime(from), cortex.FormatTime(to), string(s.Tool), s.Host, limit)
}

// SessionAssistantRows returns the assistant text of a session in [from,
// to], in time order, at most limit.
func (db *DB) SessionAssistantRows(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error) {
	return db.evidence(ctx, `SELECT `+evidenceCols+` FROM logs
		WHERE ai_session_id = ? AND timestamp >= ? AND timestamp <= ? AND ai_role = 'assistant' AND ai_tool = ? AND hostname = ?
		ORDER BY timestamp, id LIMIT ?`, s.Session, cortex.FormatTime(from), cortex.FormatTime(to), string(s.Tool), s.Host, limit)
}

// SessionClaimRows returns the assistant rows of a session in [from, to]
// whose stored claims say something about tools (claim.Tool), in time
// order, at most limit.
func (db *DB) SessionClaimRows(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error) {
	return db.evidence(ctx, `SELECT `+evidenceCols+` FROM logs
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND timestamp <= ? AND claim > 0
		AND (claim & ?) > 0 AND ai_role = 'assistant' ORDER BY timestamp, id LIMIT ?`,
		s.Session, string(s.Tool), s.Host, cortex.FormatTime(from), cortex.FormatTime(to), int(claim.Tool), limit)
}

// ClaimsCurrent reports whether every assistant row's stored claims were
// read by the given rules version.
func (db *DB) ClaimsCurrent(ctx context.Context, version int) (bool, error) {
	var stale bool
	err := db.queryRow(ctx, `SELECT EXISTS(SELECT 1 FROM logs
		WHERE ai_role IN ('assistant', 'thinking') AND (claim_version IS NULL OR claim_version < ? OR claim_version > ?))`, version, version).Scan(&stale)
	if err != nil {
		return false, queryFailed(err, "rows")
	}
	return !stale, nil
}

// ToolEventsByID returns stored tool calls by id, in time order.
func (db *DB) ToolEventsByID(ctx context.Context, ids []int64) ([]cortex.ToolEventRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.query(ctx, `SELECT `+toolEventCols+` FROM ai_mcp_events WHERE id = ANY(?) ORDER BY timestamp, id`, ids)
	return collect(rows, err, "tool events", scanToolEvent)
}

func (db *DB) hookCandidates(ctx context.Context, q string, args ...any) ([]store.HookCandidate, error) {
	rows, err := db.query(ctx, q, args...)
	return collect(rows, err, "hook events", func(rows pgx.Rows) (store.HookCandidate, error) {
		var sc sqlpart.HookCandidateScan
		var meta *string
		var exit, duration *int64
		err := rows.Scan(sc.Dest(&meta, &exit, &duration)...)
		return sc.Finish(parseStoredTime, decodeMeta(meta), exit, duration), err
	})
}

// HookCandidates returns the newest runtime hook events matching f, at most
// f.Limit, newest first.
func (db *DB) HookCandidates(ctx context.Context, f store.HookFilter) ([]store.HookCandidate, error) {
	w := sqlpart.Candidate(f.CandidateFilter, "")
	if !sqlpart.HookSubject(f, &w) {
		return nil, nil
	}
	return db.hookCandidates(ctx, `SELECT `+sqlpart.HookCandidateCols+` FROM ai_hook_events
		WHERE evidence_kind = 'runtime_transcript'`+w.SQL()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.Args, f.Limit)...)
}

// HookConfigRows returns configured hooks matching f, at most f.Limit,
// newest first (see the SQLite store's HookConfigRows).
func (db *DB) HookConfigRows(ctx context.Context, f store.HookFilter) ([]store.HookCandidate, error) {
	w, ok := sqlpart.HookConfig(f)
	if !ok {
		return nil, nil
	}
	return db.hookCandidates(ctx, `SELECT `+sqlpart.HookCandidateCols+` FROM ai_hook_events WHERE log_id IS NULL`+w.SQL()+
		` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.Args, f.Limit)...)
}

// HookNames returns the distinct stored (hook_event, hook_name) pairs.
func (db *DB) HookNames(ctx context.Context) ([]store.HookName, error) {
	rows, err := db.query(ctx, `SELECT DISTINCT hook_event, COALESCE(hook_name, '') FROM ai_hook_events ORDER BY 1, 2 LIMIT 10000`)
	return collect(rows, err, "hook names", func(rows pgx.Rows) (store.HookName, error) {
		var n store.HookName
		return n, rows.Scan(&n.Event, &n.Name)
	})
}

// HookEventsByID returns hook events by id, in time order.
func (db *DB) HookEventsByID(ctx context.Context, ids []int64) ([]cortex.HookEventRow, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.query(ctx, `SELECT `+hookEventCols+` FROM ai_hook_events WHERE id = ANY(?) ORDER BY timestamp, id`, ids)
	return collect(rows, err, "hook events", scanHookEvent)
}

// metaField reads a key of metadata_json as text, as SQLite's json_extract
// does (NULL when absent or not JSON).
func metaField(key string) string {
	return `(CASE WHEN metadata_json IS NOT NULL AND metadata_json LIKE '{%' THEN metadata_json::jsonb ->> '` + key + `' END)`
}

// SessionHookRecords returns the distinct kinds of runtime hook records of
// a session, at most 1000.
func (db *DB) SessionHookRecords(ctx context.Context, s store.SessionScope) ([]store.HookRecord, error) {
	rows, err := db.query(ctx, `SELECT DISTINCT hook_event, COALESCE(hook_name, ''),
		CASE WHEN `+metaField("attachment_type")+` IS NOT NULL THEN `+metaField("attachment_type")+`
			WHEN `+metaField("phase")+` = 'started' THEN 'hook_progress'
			WHEN `+metaField("hook_count")+` IS NOT NULL THEN 'stop_hook_summary'
			ELSE '' END
		FROM ai_hook_events
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND evidence_kind = 'runtime_transcript' LIMIT 1000`,
		s.Session, string(s.Tool), s.Host)
	return collect(rows, err, "hook events", func(rows pgx.Rows) (store.HookRecord, error) {
		var r store.HookRecord
		return r, rows.Scan(&r.Event, &r.Name, &r.Kind)
	})
}

// HookCommandRuns returns, per session and hook name, the runtime events of
// a hook command for one agent, host and hook event, at most limit spans.
func (db *DB) HookCommandRuns(ctx context.Context, tool cortex.Tool, host, event, command string, limit int) ([]store.HookRunSpan, error) {
	rows, err := db.query(ctx, `SELECT COALESCE(ai_session_id, ''), COALESCE(ai_project, ''), COALESCE(hook_name, ''),
		min(timestamp), max(timestamp), count(*) FROM ai_hook_events
		WHERE hook_event = ? AND evidence_kind = 'runtime_transcript' AND ai_tool = ? AND hostname = ? AND hook_command = ?
		GROUP BY 1, 2, 3 ORDER BY 4, 1, 2, 3 LIMIT ?`, event, string(tool), host, command, limit)
	return collect(rows, err, "hook runs", func(rows pgx.Rows) (store.HookRunSpan, error) {
		var r store.HookRunSpan
		var first, last string
		err := rows.Scan(&r.Session, &r.Project, &r.Name, &first, &last, &r.Runs)
		r.First, r.Last = parseStoredTime(first), parseStoredTime(last)
		return r, err
	})
}

// SessionsBetween returns the sessions of f, oldest first, at most
// f.Limit.
func (db *DB) SessionsBetween(ctx context.Context, f store.SessionFilter) ([]store.SessionSpan, error) {
	w := sqlpart.SessionsBetween(f)
	rows, err := db.query(ctx, `SELECT ai_session_id, COALESCE(ai_project, ''), first_seen, last_seen FROM ai_sessions
		WHERE true`+w.SQL()+` ORDER BY first_seen, ai_session_id, store_no LIMIT ?`, append(w.Args, f.Limit)...)
	return collect(rows, err, "sessions", func(rows pgx.Rows) (store.SessionSpan, error) {
		var s store.SessionSpan
		var first, last string
		err := rows.Scan(&s.Session, &s.Project, &first, &last)
		s.First, s.Last = parseStoredTime(first), parseStoredTime(last)
		return s, err
	})
}

// SessionToolEvents returns the tool calls of a session in [from, to] (only
// those classified MCP when mcpOnly), in time order, at most limit.
func (db *DB) SessionToolEvents(ctx context.Context, s store.SessionScope, from, to time.Time, mcpOnly bool, limit int) ([]cortex.ToolEventRow, error) {
	q := `SELECT ` + toolEventCols + ` FROM ai_mcp_events
		WHERE ai_session_id = ? AND timestamp >= ? AND timestamp <= ? AND ai_tool = ? AND hostname = ?`
	if mcpOnly {
		q += ` AND mcp_server IS NOT NULL`
	}
	rows, err := db.query(ctx, q+` ORDER BY timestamp, id LIMIT ?`, s.Session, cortex.FormatTime(from), cortex.FormatTime(to),
		string(s.Tool), s.Host, limit)
	return collect(rows, err, "tool calls", scanToolEvent)
}

// hookOutputKinds are runtime records that carry a run's output, not a run.
const hookOutputKinds = `'hook_additional_context', 'hook_system_message', 'async_hook_response'`

// HookUsage counts the runtime runs and configuration rows of f.
func (db *DB) HookUsage(ctx context.Context, f store.HookFilter) (store.HookUsage, error) {
	var u store.HookUsage
	w := sqlpart.Candidate(f.CandidateFilter, "")
	if !sqlpart.HookSubject(f, &w) {
		return u, nil
	}
	if f.EvidenceKind == "" || f.EvidenceKind == cortex.EvidenceRuntime {
		err := db.queryRow(ctx, `SELECT count(*), count(DISTINCT ai_tool || '/' || hostname || '/' || COALESCE(ai_session_id, ''))
			FROM ai_hook_events WHERE evidence_kind = 'runtime_transcript'`+w.SQL()+`
			AND COALESCE(`+metaField("attachment_type")+`, '') NOT IN (`+hookOutputKinds+`)`, w.Args...).Scan(&u.Runs, &u.Sessions)
		if err != nil {
			return u, queryFailed(err, "hook runs")
		}
	}
	if f.Session != "" || f.EvidenceKind == cortex.EvidenceRuntime {
		return u, nil
	}
	f.Limit = 1000
	rows, err := db.HookConfigRows(ctx, f)
	if err != nil {
		return u, err
	}
	u.AddConfig(rows)
	return u, nil
}
