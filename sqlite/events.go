package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/toolcall"
)

// eventRow is the logs-row context every event of a record is stored with.
type eventRow struct {
	logID   int64
	tool    string
	project string
	session string
	host    string
	ts      string
	// thread is the agent thread (see Thread).
	thread string
}

func rowOf(id int64, host string, e *cortex.Entry) eventRow {
	return eventRow{logID: id, tool: string(e.Tool), project: e.Project, session: e.SessionID, host: host,
		ts: cortex.FormatTime(e.Timestamp), thread: Thread(e)}
}

// ThreadSidechain names the thread of an inline subagent that carries no
// agent id (Claude Code 1.0.x isSidechain records).
const ThreadSidechain = "sidechain"

// Thread is the agent thread of an entry as event rows store it in
// ai_agent_id: "" for the main thread, the subagent's id, or
// ThreadSidechain.
func Thread(e *cortex.Entry) string {
	switch {
	case e.AgentID != "":
		return e.AgentID
	case e.Sidechain:
		return ThreadSidechain
	}
	return ""
}

// pendingEvents collects a transaction's events; they are written in
// multi-row statements, in record order, before the full-text rows.
type pendingEvents struct {
	skills []skillRow
	tools  []toolRow
	hooks  []hookRow
	users  []userRow
	// replaced lists rows whose record changed: their skill and runtime
	// hook events are rewritten from the new version.
	replaced []int64
	// packer, when set, has packed the tool calls' previews.
	packer *textPacker
}

type skillRow struct {
	r eventRow
	e cortex.SkillEvent
}

type toolRow struct {
	r eventRow
	e cortex.ToolEvent
}

type hookRow struct {
	r eventRow
	e cortex.HookEvent
}

type userRow struct {
	r     eventRow
	index int
	e     cortex.UserEvent
}

func (p *pendingEvents) add(r eventRow, ev *cortex.Events) {
	for _, s := range ev.Skills {
		p.skills = append(p.skills, skillRow{r, s})
	}
	for _, t := range ev.Tools {
		p.tools = append(p.tools, toolRow{r, t})
	}
	for _, h := range ev.Hooks {
		p.hooks = append(p.hooks, hookRow{r, h})
	}
	for i, u := range ev.Users {
		p.users = append(p.users, userRow{r, i, u})
	}
}

// resolveSkillBodies names each Claude skill body after the Skill call
// that loaded it (source_tool_use_id): the body only shows the skill's
// folder ("marvin"), the call its full name ("marvin:marvin"), and one
// activation must not split into two skills. The call is looked up among
// the pending events, then among stored ones; the folder name is kept in
// metadata as body_name when it differs.
func (w *importTx) resolveSkillBodies(skills []skillRow) error {
	type callKey struct{ tool, host, session, id string }
	calls := map[callKey][2]string{}
	for _, s := range skills {
		if s.e.EventKind == cortex.SkillClaudeTool && s.e.Meta["tool_use_id"] != "" {
			calls[callKey{s.r.tool, s.r.host, s.r.session, s.e.Meta["tool_use_id"]}] = [2]string{s.e.SkillName, s.e.SkillPlugin}
		}
	}
	if err := w.resolveSlashBodies(skills); err != nil {
		return err
	}
	for i := range skills {
		s := &skills[i]
		src := s.e.Meta["source_tool_use_id"]
		if s.e.EventKind != cortex.SkillClaudeBody || src == "" {
			continue
		}
		name, ok := calls[callKey{s.r.tool, s.r.host, s.r.session, src}]
		if !ok {
			err := w.queryRow(`SELECT skill_name, COALESCE(skill_plugin, '') FROM ai_skill_events
				WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND event_kind = ?
				AND json_extract(metadata_json, '$.tool_use_id') = ? LIMIT 1`,
				s.r.session, s.r.tool, s.r.host, cortex.SkillClaudeTool, src).Scan(&name[0], &name[1])
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("resolve skill body: %w", err)
			}
		}
		if name[0] == s.e.SkillName && name[1] == s.e.SkillPlugin {
			continue
		}
		meta := maps.Clone(s.e.Meta)
		meta["body_name"] = s.e.SkillName
		s.e.Meta, s.e.SkillName, s.e.SkillPlugin = meta, name[0], name[1]
	}
	return nil
}

// resolveSlashBodies names the body a slash command injected after the
// command the user typed: the body shows only the skill's folder
// ("commit-push-pr" in a plugin checkout), the command its full name
// ("/entire:commit-push-pr"). The command is the session's latest typed
// command before the body whose name is the folder name or ends in
// ":"+folder, among the pending events, then the stored ones.
func (w *importTx) resolveSlashBodies(skills []skillRow) error {
	for i := range skills {
		s := &skills[i]
		if s.e.EventKind != cortex.SkillClaudeSlash || s.e.SkillPlugin != "" {
			continue
		}
		name, plugin := "", ""
		for j := i - 1; j >= 0; j-- {
			c := skills[j]
			if c.e.EventKind == cortex.SkillClaudeCommand && c.r.session == s.r.session && c.r.tool == s.r.tool &&
				c.r.host == s.r.host && c.e.SkillPlugin != "" && strings.HasSuffix(c.e.SkillName, ":"+s.e.SkillName) {
				name, plugin = c.e.SkillName, c.e.SkillPlugin
				break
			}
		}
		if name == "" && s.r.session != "" {
			err := w.queryRow(`SELECT skill_name, COALESCE(skill_plugin, '') FROM ai_skill_events
				WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND event_kind = ? AND timestamp <= ?
				AND skill_plugin IS NOT NULL AND skill_name = skill_plugin || ':' || ?
				ORDER BY timestamp DESC LIMIT 1`,
				s.r.session, s.r.tool, s.r.host, cortex.SkillClaudeCommand, s.r.ts, s.e.SkillName).Scan(&name, &plugin)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("resolve slash skill body: %w", err)
			}
		}
		if name == "" {
			continue
		}
		meta := maps.Clone(s.e.Meta)
		if meta == nil {
			meta = map[string]string{}
		}
		meta["body_name"] = s.e.SkillName
		s.e.Meta, s.e.SkillName, s.e.SkillPlugin = meta, name, plugin
	}
	return nil
}

func (p *pendingEvents) empty() bool {
	return len(p.skills)+len(p.tools)+len(p.hooks)+len(p.users)+len(p.replaced) == 0
}

// metaJSON renders an event's extras with sorted keys ("" when none).
func metaJSON(m map[string]string) any {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(m[k])
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return string(append(b, '}'))
}

func nullInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullInt64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func nullBool(p *bool) any {
	if p == nil {
		return nil
	}
	return boolInt(*p)
}

const eventChunk = 64

func skillSQL(n int) string {
	return `INSERT OR IGNORE INTO ai_skill_events(log_id, ai_tool, ai_project, ai_session_id, hostname, timestamp,
		skill_name, skill_plugin, skill_path, event_kind, evidence_kind, metadata_json, ai_agent_id) VALUES ` +
		repeatValues(n, "(?,?,?,?,?,?,?,?,?,?,?,?,?)")
}

func userSQL(n int) string {
	return `INSERT OR IGNORE INTO ai_user_events(log_id, event_index, ai_tool, ai_project, ai_session_id, hostname,
		ai_agent_id, timestamp, event_kind, text, call_id, source, metadata_json, voice, voice_version) VALUES ` +
		repeatValues(n, "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
}

func hookSQL(n int) string {
	return `INSERT OR IGNORE INTO ai_hook_events(log_id, event_index, ai_tool, ai_project, ai_session_id, hostname, timestamp,
		hook_event, hook_name, hook_source, hook_command, status, exit_code, duration_ms, stdout_preview, stderr_preview,
		persisted_output_path, trusted_hash, evidence_kind, metadata_json) VALUES ` + repeatValues(n, "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
}

// toolSQL merges each side of a call into the call's row. duration_ms is
// the time between the call's record and the result's record (left empty
// when one record carries both, as Gemini's do). The call side
// names the tool and proves the call; the result side sets the outcome. A
// later definitive status (success, error, cancelled) replaces an earlier
// one; "unknown" only replaces "pending"; "pending" never replaces anything.
// Every other field keeps its value unless the new event knows it.
func toolSQL(n int) string {
	return `INSERT INTO ai_mcp_events(call_log_id, result_log_id, ai_tool, ai_project, ai_session_id, hostname, timestamp,
		call_timestamp, result_timestamp, turn_id, call_id, tool_name, mcp_server, mcp_tool, event_kind, result_kind, status,
		duration_ms, is_error, exit_code, arguments_json, output_preview, error_text, metadata_json, ai_agent_id,
		class, why, op, loads_skill, facts_version)
		VALUES ` + repeatValues(n, "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)") + `
		ON CONFLICT(ai_tool, hostname, COALESCE(ai_session_id, ''), call_id) DO UPDATE SET
			call_log_id = COALESCE(excluded.call_log_id, call_log_id),
			result_log_id = COALESCE(excluded.result_log_id, result_log_id),
			ai_project = COALESCE(ai_project, excluded.ai_project),
			timestamp = COALESCE(excluded.call_timestamp, call_timestamp, timestamp),
			call_timestamp = COALESCE(excluded.call_timestamp, call_timestamp),
			result_timestamp = COALESCE(excluded.result_timestamp, result_timestamp),
			turn_id = COALESCE(excluded.turn_id, turn_id),
			tool_name = CASE WHEN excluded.tool_name <> '' THEN excluded.tool_name ELSE tool_name END,
			mcp_server = COALESCE(excluded.mcp_server, mcp_server),
			mcp_tool = COALESCE(excluded.mcp_tool, mcp_tool),
			event_kind = CASE WHEN excluded.call_log_id IS NOT NULL THEN excluded.event_kind ELSE event_kind END,
			result_kind = COALESCE(excluded.result_kind, result_kind),
			status = CASE
				WHEN excluded.status IN ('success', 'error', 'cancelled') THEN excluded.status
				WHEN excluded.status = 'unknown' AND status = 'pending' THEN 'unknown'
				ELSE status END,
			duration_ms = CASE
				WHEN COALESCE(excluded.call_timestamp, call_timestamp) IS NOT NULL
				 AND COALESCE(excluded.result_timestamp, result_timestamp) IS NOT NULL
				 AND COALESCE(excluded.call_log_id, call_log_id) <> COALESCE(excluded.result_log_id, result_log_id)
				THEN CAST(round((julianday(COALESCE(excluded.result_timestamp, result_timestamp))
					- julianday(COALESCE(excluded.call_timestamp, call_timestamp))) * 86400000) AS INTEGER)
				ELSE duration_ms END,
			is_error = COALESCE(excluded.is_error, is_error),
			exit_code = COALESCE(excluded.exit_code, exit_code),
			arguments_json = COALESCE(excluded.arguments_json, arguments_json),
			output_preview = COALESCE(excluded.output_preview, output_preview),
			error_text = COALESCE(excluded.error_text, error_text),
			metadata_json = CASE WHEN excluded.metadata_json IS NULL THEN metadata_json
				WHEN metadata_json IS NULL THEN excluded.metadata_json
				ELSE json_patch(metadata_json, excluded.metadata_json) END,
			ai_agent_id = CASE WHEN excluded.call_log_id IS NOT NULL THEN excluded.ai_agent_id ELSE ai_agent_id END,
			class = excluded.class, why = excluded.why, op = excluded.op, loads_skill = excluded.loads_skill,
			facts_version = CASE WHEN ` + factsKept + ` THEN excluded.facts_version END
		RETURNING id, ai_tool || char(31) || hostname || char(31) || COALESCE(ai_session_id, '') || char(31) || call_id,
			facts_version IS NULL`
}

// factsKept holds, in toolSQL's DO UPDATE, when the merged row has exactly
// the inputs the new side's facts were derived from (the new side knows
// every input the stored row knows, or the stored row does not know it
// either): the facts stay valid. Otherwise they are derived again from the
// merged row before the transaction ends (see refreshFacts).
const factsKept = `(excluded.tool_name <> '' OR tool_name = '')
	AND (excluded.status IN ('success', 'error', 'cancelled') OR excluded.status = status
		OR excluded.status = 'unknown' AND status = 'pending')
	AND (excluded.is_error IS NOT NULL OR is_error IS NULL) AND (excluded.exit_code IS NOT NULL OR exit_code IS NULL)
	AND (excluded.arguments_json IS NOT NULL OR arguments_json IS NULL)
	AND (excluded.output_preview IS NOT NULL OR output_preview IS NULL)
	AND (excluded.error_text IS NOT NULL OR error_text IS NULL)`

// writeEvents stores the collected events and counts new rows: tool-call
// ids above the table's largest id before the statement are new rows, the
// others merged into an existing call. dryKeys, when not nil, carries the
// call keys a dry run (whose transactions roll back) already counted as new
// in earlier batches, so they count as merged again, as in a real run.
func (w *importTx) writeEvents(p *pendingEvents, dryKeys map[string]bool) (cortex.EventCounts, error) {
	var c cortex.EventCounts
	ctx := w.ctx
	for _, id := range p.replaced {
		if _, err := w.exec(`DELETE FROM ai_skill_events WHERE log_id = ?`, id); err != nil {
			return c, fmt.Errorf("replace skill events: %w", err)
		}
		if _, err := w.exec(`DELETE FROM ai_hook_events WHERE log_id = ?`, id); err != nil {
			return c, fmt.Errorf("replace hook events: %w", err)
		}
		if _, err := w.exec(`DELETE FROM ai_user_events WHERE log_id = ?`, id); err != nil {
			return c, fmt.Errorf("replace user events: %w", err)
		}
	}
	if err := w.resolveSkillBodies(p.skills); err != nil {
		return c, err
	}
	for _, sp := range spans(len(p.skills), eventChunk) {
		part := p.skills[sp[0]:sp[1]]
		st, err := w.stmt("skill", len(part), skillSQL)
		if err != nil {
			return c, err
		}
		args := make([]any, 0, 12*len(part))
		for _, s := range part {
			args = append(args, s.r.logID, s.r.tool, nullStr(s.r.project), nullStr(s.r.session), s.r.host, s.r.ts,
				s.e.SkillName, nullStr(s.e.SkillPlugin), nullStr(s.e.SkillPath), s.e.EventKind, s.e.EvidenceKind, metaJSON(s.e.Meta),
				nullStr(s.r.thread))
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return c, fmt.Errorf("store skill events: %w", err)
		}
		n, _ := res.RowsAffected()
		c.Skills += n
		c.Duplicates += int64(len(part)) - n
	}
	for _, sp := range spans(len(p.users), eventChunk) {
		part := p.users[sp[0]:sp[1]]
		st, err := w.stmt("user", len(part), userSQL)
		if err != nil {
			return c, err
		}
		args := make([]any, 0, 15*len(part))
		for _, u := range part {
			var version any
			if u.e.VoiceVersion != 0 {
				version = u.e.VoiceVersion
			}
			args = append(args, u.r.logID, u.index, u.r.tool, nullStr(u.r.project), nullStr(u.r.session), u.r.host,
				nullStr(u.r.thread), u.r.ts, u.e.Kind, u.e.Text, nullStr(u.e.CallID), nullStr(u.e.Source), metaJSON(u.e.Meta),
				nullStr(u.e.Voice), version)
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return c, fmt.Errorf("store user events: %w", err)
		}
		n, _ := res.RowsAffected()
		c.Users += n
		c.Duplicates += int64(len(part)) - n
	}
	for _, sp := range spans(len(p.hooks), eventChunk) {
		part := p.hooks[sp[0]:sp[1]]
		st, err := w.stmt("hook", len(part), hookSQL)
		if err != nil {
			return c, err
		}
		args := make([]any, 0, 20*len(part))
		for _, h := range part {
			args = append(args, hookArgs(h.r, &h.e)...)
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return c, fmt.Errorf("store hook events: %w", err)
		}
		n, _ := res.RowsAffected()
		c.Hooks += n
		c.Duplicates += int64(len(part)) - n
	}
	if len(p.tools) == 0 {
		return c, nil
	}
	var maxID int64
	if err := w.tx.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM ai_mcp_events`).Scan(&maxID); err != nil {
		return c, fmt.Errorf("store tool events: %w", err)
	}
	tools := foldTools(p.tools)
	var restale []int64
	for _, sp := range spans(len(tools), eventChunk) {
		part := tools[sp[0]:sp[1]]
		st, err := w.stmt("tool", len(part), toolSQL)
		if err != nil {
			return c, err
		}
		args := make([]any, 0, 30*len(part))
		for j := range part {
			args = append(args, part[j].sqlArgs(w.db, p.packer)...)
			c.Merged += int64(part[j].merged)
		}
		rows, err := st.QueryContext(ctx, args...)
		if err != nil {
			return c, fmt.Errorf("store tool events: %w", err)
		}
		fresh := map[int64]bool{}
		returned := 0
		for rows.Next() {
			var id int64
			var key string
			var stale bool
			if err := rows.Scan(&id, &key, &stale); err != nil {
				rows.Close()
				return c, fmt.Errorf("store tool events: %w", err)
			}
			returned++
			if stale {
				restale = append(restale, id)
			}
			if id > maxID && !fresh[id] {
				if dryKeys != nil && dryKeys[key] {
					maxID = max(maxID, id) // created earlier in the dry run
					continue
				}
				fresh[id] = true
				if dryKeys != nil {
					dryKeys[key] = true
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return c, fmt.Errorf("store tool events: %w", err)
		}
		for id := range fresh {
			maxID = max(maxID, id)
		}
		c.Tools += int64(len(fresh))
		c.Merged += int64(returned - len(fresh))
	}
	if err := w.refreshFacts(restale); err != nil {
		return c, err
	}
	return c, nil
}

// refreshFacts derives again the facts of calls whose merge with a side
// stored earlier changed what they were derived from.
func (w *importTx) refreshFacts(ids []int64) error {
	for len(ids) > 0 {
		part := ids[:min(len(ids), eventChunk)]
		ids = ids[len(part):]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := w.tx.QueryContext(w.ctx, `SELECT id, `+factsInputCols+` FROM ai_mcp_events WHERE id IN (`+
			strings.TrimSuffix(strings.Repeat("?,", len(part)), ",")+`)`, args...)
		if err != nil {
			return fmt.Errorf("derive call facts: %w", err)
		}
		var fs []CallFacts
		for rows.Next() {
			var f CallFacts
			var c toolcall.Call
			if err := w.db.scanFactsInput(rows, &f.ID, &c); err != nil {
				rows.Close()
				return fmt.Errorf("derive call facts: %w", err)
			}
			f.Facts, f.Version = toolcall.Read(c), toolcall.Version
			fs = append(fs, f)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("derive call facts: %w", err)
		}
		for _, f := range fs {
			if _, err := w.exec(setFactsSQL, factsArgs(f)...); err != nil {
				return fmt.Errorf("store call facts: %w", err)
			}
		}
	}
	return nil
}

func hookArgs(r eventRow, h *cortex.HookEvent) []any {
	var logID any
	if r.logID != 0 {
		logID = r.logID
	}
	return []any{logID, h.Index, r.tool, nullStr(r.project), nullStr(r.session), r.host, r.ts,
		h.HookEvent, nullStr(h.HookName), nullStr(h.HookSource), nullStr(h.Command), h.Status, nullInt(h.ExitCode),
		nullInt64(h.DurationMS), nullStr(h.StdoutPreview), nullStr(h.StderrPreview), nullStr(h.PersistedOutputPath),
		nullStr(h.TrustedHash), h.EvidenceKind, metaJSON(h.Meta)}
}

// toolVals is one tool-call row to upsert: an event's side(s) of a call,
// possibly several events of one transaction merged in Go first (half the
// statements: a call and its result usually share a transaction).
type toolVals struct {
	callLog, resultLog                  *int64
	tool, project, session, host, ts    string
	thread                              string
	callTS, resultTS, turn, resultKind  *string
	callID, toolName, eventKind, status string
	server, mcpTool, args, out, errText *string
	duration                            *int64
	isErr                               *bool
	exit                                *int
	meta                                map[string]string
	merged                              int // events folded into this row
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toolValsOf(r eventRow, t *cortex.ToolEvent) toolVals {
	v := toolVals{tool: r.tool, project: r.project, session: r.session, host: r.host, ts: r.ts, thread: r.thread, turn: strp(t.TurnID),
		callID: t.CallID, toolName: t.ToolName, server: strp(t.MCPServer), mcpTool: strp(t.MCPTool), eventKind: t.EventKind,
		status: t.Status, isErr: t.IsError, exit: t.ExitCode, args: strp(t.ArgumentsJSON), out: strp(t.OutputPreview),
		errText: strp(t.ErrorText), meta: t.Meta}
	id, ts := r.logID, r.ts
	if t.HasCall {
		v.callLog, v.callTS = &id, &ts
	}
	if t.HasResult {
		v.resultLog, v.resultTS, v.resultKind = &id, &ts, strp(t.EventKind)
	}
	switch {
	case v.status == "" && t.HasResult:
		v.status = cortex.CallUnknown
	case v.status == "":
		v.status = cortex.CallPending
	}
	if t.HasCall && t.HasResult {
		if d, err := strconv.ParseInt(t.Meta["duration_ms"], 10, 64); err == nil {
			v.duration = &d
		}
	}
	return v
}

func firstp[T any](b, a *T) *T {
	if b != nil {
		return b
	}
	return a
}

// merge folds b (which arrived after a) into a with exactly the rules of
// toolSQL's DO UPDATE (tests compare the two paths).
func (a *toolVals) merge(b *toolVals) {
	if a.project == "" {
		a.project = b.project
	}
	switch {
	case b.callTS != nil:
		a.ts = *b.callTS
	case a.callTS != nil:
		a.ts = *a.callTS
	}
	if b.callLog != nil {
		a.eventKind, a.thread = b.eventKind, b.thread
	}
	callLog, resultLog := firstp(b.callLog, a.callLog), firstp(b.resultLog, a.resultLog)
	callTS, resultTS := firstp(b.callTS, a.callTS), firstp(b.resultTS, a.resultTS)
	if callTS != nil && resultTS != nil && *callLog != *resultLog {
		d := durationMS(*callTS, *resultTS)
		a.duration = &d
	}
	a.callLog, a.resultLog, a.callTS, a.resultTS = callLog, resultLog, callTS, resultTS
	a.turn, a.resultKind = firstp(b.turn, a.turn), firstp(b.resultKind, a.resultKind)
	if b.toolName != "" {
		a.toolName = b.toolName
	}
	a.server, a.mcpTool = firstp(b.server, a.server), firstp(b.mcpTool, a.mcpTool)
	switch {
	case b.status == cortex.CallSuccess || b.status == cortex.CallError || b.status == cortex.CallCancelled:
		a.status = b.status
	case b.status == cortex.CallUnknown && a.status == cortex.CallPending:
		a.status = cortex.CallUnknown
	}
	a.isErr, a.exit = firstp(b.isErr, a.isErr), firstp(b.exit, a.exit)
	a.args, a.out, a.errText = firstp(b.args, a.args), firstp(b.out, a.out), firstp(b.errText, a.errText)
	if len(b.meta) > 0 {
		m := make(map[string]string, len(a.meta)+len(b.meta))
		for k, v := range a.meta {
			m[k] = v
		}
		for k, v := range b.meta {
			m[k] = v
		}
		a.meta = m
	}
	a.merged += 1 + b.merged
}

// durationMS is the whole milliseconds from a to b, rounded as the SQL
// path does (julianday difference × 86400000).
func durationMS(a, b string) int64 {
	ta, tb := parseStoredTime(a), parseStoredTime(b)
	return int64(math.Round(float64(tb.Sub(ta)) / float64(time.Millisecond)))
}

func anyp[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func (v *toolVals) sqlArgs(db *DB, pk *textPacker) []any {
	f := v.facts()
	return []any{anyp(v.callLog), anyp(v.resultLog), v.tool, nullStr(v.project), nullStr(v.session), v.host, v.ts,
		anyp(v.callTS), anyp(v.resultTS), anyp(v.turn), v.callID, v.toolName, anyp(v.server), anyp(v.mcpTool), v.eventKind,
		anyp(v.resultKind), v.status, anyp(v.duration), nullBool(v.isErr), nullInt(v.exit), pk.pack(db, v.args), pk.pack(db, v.out),
		anyp(v.errText), metaJSON(v.meta), nullStr(v.thread), f.Class, nullStr(f.Why), f.Op, boolInt(f.LoadsSkill),
		toolcall.Version}
}

// facts derives the call's facts from what this row carries.
func (v *toolVals) facts() toolcall.Facts {
	c := toolcall.Call{ToolName: v.toolName, Status: v.status, IsError: v.isErr != nil && *v.isErr}
	if v.exit != nil {
		e := int64(*v.exit)
		c.ExitCode = &e
	}
	if v.args != nil {
		c.Arguments = *v.args
	}
	if v.out != nil {
		c.Output = *v.out
	}
	if v.errText != nil {
		c.ErrorText = *v.errText
	}
	return toolcall.Read(c)
}

// foldTools merges the events of one call seen in the same transaction, in
// order, keeping the order of first appearance.
func foldTools(rows []toolRow) []toolVals {
	out := make([]toolVals, 0, len(rows))
	at := make(map[[4]string]int, len(rows))
	for i := range rows {
		v := toolValsOf(rows[i].r, &rows[i].e)
		k := [4]string{v.tool, v.host, v.session, v.callID}
		if j, ok := at[k]; ok {
			out[j].merge(&v)
			continue
		}
		at[k] = len(out)
		out = append(out, v)
	}
	return out
}

// EventRecord is a stored record's events with the row context they belong
// to (backfill rebuilds these from logs rows).
type EventRecord struct {
	LogID    int64
	Hostname string
	Entry    cortex.Entry
	Events   cortex.Events
}

// DryRun is the state of a dry run across batches: the tool calls it has
// counted as new so far.
type DryRun struct{ keys map[string]bool }

// NewDryRun starts a dry run.
func NewDryRun() *DryRun { return &DryRun{keys: map[string]bool{}} }

// StoreEvents writes events of stored records in one transaction. With a
// dry run (dry != nil) the transaction is rolled back: the counts say
// exactly what would have been written, and nothing is.
func (db *DB) StoreEvents(ctx context.Context, recs []EventRecord, dry *DryRun) (cortex.EventCounts, error) {
	dryRun := dry != nil
	var counts cortex.EventCounts
	errDryRun := fmt.Errorf("dry run")
	err := db.write(ctx, func(tx *sql.Tx) error {
		w, err := newImportTx(ctx, db, tx, db.now())
		if err != nil {
			return err
		}
		defer w.close()
		var p pendingEvents
		for i := range recs {
			p.add(rowOf(recs[i].LogID, recs[i].Hostname, &recs[i].Entry), &recs[i].Events)
		}
		var keys map[string]bool
		if dryRun {
			keys = dry.keys
		}
		counts, err = w.writeEvents(&p, keys)
		if err != nil {
			return err
		}
		if dryRun {
			return errDryRun
		}
		return nil
	})
	if err == errDryRun {
		return counts, nil
	}
	if err != nil {
		return cortex.EventCounts{}, cortex.WrapError(cortex.CodeUnavailable, err, "cannot store events: %v", err)
	}
	return counts, nil
}

// StoreConfigHooks records configured hooks (no session, no log row): new
// ones are inserted with timestamp = seen, known ones get last_seen = seen.
func (db *DB) StoreConfigHooks(ctx context.Context, host string, seen time.Time, hooks []ConfigHook) (inserted, refreshed int64, err error) {
	ts := cortex.FormatTime(seen)
	err = db.write(ctx, func(tx *sql.Tx) error {
		inserted, refreshed = 0, 0
		st, err := tx.PrepareContext(ctx, `INSERT INTO ai_hook_events(log_id, event_index, ai_tool, ai_project, ai_session_id,
			hostname, timestamp, hook_event, hook_name, hook_source, hook_command, status, exit_code, duration_ms,
			stdout_preview, stderr_preview, persisted_output_path, trusted_hash, evidence_kind, metadata_json, last_seen)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT(ai_tool, hostname, COALESCE(ai_project, ''), COALESCE(hook_source, ''), hook_event, COALESCE(hook_name, ''),
				COALESCE(hook_command, ''), COALESCE(trusted_hash, ''), evidence_kind) WHERE log_id IS NULL
			DO UPDATE SET last_seen = excluded.last_seen, metadata_json = excluded.metadata_json, event_index = excluded.event_index
			RETURNING id`)
		if err != nil {
			return err
		}
		defer st.Close()
		// A row id above every id before it is a new row; a lower one an
		// existing row refreshed.
		var newest int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM ai_hook_events`).Scan(&newest); err != nil {
			return err
		}
		for _, h := range hooks {
			var id int64
			at := ts
			if !h.Configured.IsZero() {
				at = cortex.FormatTime(h.Configured)
			}
			args := append(hookArgs(eventRow{tool: string(h.Tool), project: h.Project, host: host, ts: at}, &h.Hook), ts)
			if err := st.QueryRowContext(ctx, args...).Scan(&id); err != nil {
				return fmt.Errorf("store configured hook: %w", err)
			}
			if id > newest {
				inserted++
				newest = id
			} else {
				refreshed++
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, cortex.WrapError(cortex.CodeUnavailable, err, "cannot store configured hooks: %v", err)
	}
	return inserted, refreshed, nil
}

// ConfigHook is a configured hook to record. Project is set for
// project-level configuration files.
type ConfigHook struct {
	Tool    cortex.Tool
	Project string
	Hook    cortex.HookEvent
	// Configured is when the hook's file was last changed: the time shown
	// for it (the collection time is its last_seen). Zero: seen.
	Configured time.Time
}

// CountTranscriptRecords counts the transcript rows a backfill from
// afterID (and since, and of roles when given) would scan: the total of
// its progress.
func (db *DB) CountTranscriptRecords(ctx context.Context, afterID int64, since time.Time, roles []cortex.Role) (int64, error) {
	where, args := transcriptRecordsWhere(afterID, since, roles)
	var n int64
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM logs WHERE `+where, args...).Scan(&n); err != nil {
		return 0, cortex.WrapError(cortex.CodeUnavailable, err, "cannot count stored records: %v", err)
	}
	return n, nil
}

// transcriptRecordsWhere selects the transcript rows after afterID (and
// from since, and of roles, when given): the rows a backfill scans.
func transcriptRecordsWhere(afterID int64, since time.Time, roles []cortex.Role) (string, []any) {
	q := `id > ? AND ai_tool IS NOT NULL`
	args := []any{afterID}
	if !since.IsZero() {
		q += ` AND timestamp >= ?`
		args = append(args, cortex.FormatTime(since))
	}
	if len(roles) > 0 {
		q += ` AND ai_role IN (` + strings.TrimSuffix(strings.Repeat("?,", len(roles)), ",") + `)`
		for _, r := range roles {
			args = append(args, string(r))
		}
	}
	return q, args
}

// StoredRecord is a logs row with what event extraction needs: the row
// context and the raw record as stored (compressed by rawcodec).
type StoredRecord struct {
	ID       int64
	Hostname string
	Entry    cortex.Entry
	Raw      []byte
}

// TranscriptRecords returns up to limit transcript rows with id > afterID
// (and timestamp >= since when set, and a role in roles when given), in id
// order — the keyset scan of a backfill. It reads through the reader pool
// and holds no write lock.
func (db *DB) TranscriptRecords(ctx context.Context, afterID int64, since time.Time, roles []cortex.Role, limit int) ([]StoredRecord, error) {
	q := `SELECT id, hostname, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), timestamp,
		COALESCE(ai_role, ''), COALESCE(ai_kind, ''), COALESCE(json_extract(metadata_json, '$.turn_id'), ''),
		COALESCE(ai_agent_id, ''), COALESCE(json_extract(metadata_json, '$.sidechain'), 0), raw
		FROM logs WHERE `
	where, args := transcriptRecordsWhere(afterID, since, roles)
	q += where + ` ORDER BY id LIMIT ?`
	args = append(args, limit)
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read stored records: %v", err)
	}
	defer rows.Close()
	var out []StoredRecord
	for rows.Next() {
		var r StoredRecord
		var tool, role, ts, turn string
		var sidechain int
		if err := rows.Scan(&r.ID, &r.Hostname, &tool, &r.Entry.Project, &r.Entry.SessionID, &ts, &role, &r.Entry.Kind, &turn,
			&r.Entry.AgentID, &sidechain, &r.Raw); err != nil {
			return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read stored records: %v", err)
		}
		var err error
		if r.Raw, err = db.rowRaw(ctx, r.ID, r.Raw); err != nil {
			return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read stored records: %v", err)
		}
		r.Entry.Tool, r.Entry.Role = cortex.Tool(tool), cortex.Role(role)
		r.Entry.Timestamp = parseStoredTime(ts)
		r.Entry.Sidechain = sidechain == 1
		if turn != "" {
			r.Entry.Meta = map[string]string{"turn_id": turn}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// PendingBackfills lists the event kinds a migration asked to backfill
// (rows stored before their extractor existed).
func (db *DB) PendingBackfills(ctx context.Context) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT kind FROM pending_backfills ORDER BY kind`)
	if err != nil {
		return nil, queryFailed(err, "pending backfills")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, queryFailed(err, "pending backfills")
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// ClearPendingBackfill records that a complete backfill of kind ran.
func (db *DB) ClearPendingBackfill(ctx context.Context, kind string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM pending_backfills WHERE kind = ?`, kind)
		return err
	})
}

// AcquireLock takes the named single-flight lock for a maintenance job
// (e.g. a backfill) across processes. A lock held by a process that no
// longer runs on this host, or older than staleAfter, is taken over. The
// returned function releases it.
func (db *DB) AcquireLock(ctx context.Context, name, holder string, pid int, host string, alive func(pid int) bool, staleAfter time.Duration) (func(), error) {
	now := db.now()
	var busy *cortex.Error
	err := db.write(ctx, func(tx *sql.Tx) error {
		var h, at, lhost string
		var lpid int
		err := tx.QueryRowContext(ctx, `SELECT holder, pid, hostname, acquired_at FROM maintenance_locks WHERE name = ?`, name).Scan(&h, &lpid, &lhost, &at)
		switch {
		case err == sql.ErrNoRows:
		case err != nil:
			return err
		default:
			stale := now.Sub(parseStoredTime(at)) > staleAfter || (lhost == host && !alive(lpid))
			if !stale {
				busy = cortex.Errorf(cortex.CodeBusy, "%s is already running (%s, pid %d on %s since %s); try again when it ends", name, h, lpid, lhost, at)
				return nil
			}
		}
		_, err = tx.ExecContext(ctx, `INSERT OR REPLACE INTO maintenance_locks(name, holder, pid, hostname, acquired_at) VALUES (?, ?, ?, ?, ?)`,
			name, holder, pid, host, cortex.FormatTime(now))
		return err
	})
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot take the %s lock: %v", name, err)
	}
	if busy != nil {
		return nil, busy
	}
	return func() {
		_ = db.write(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
			_, err := tx.ExecContext(context.WithoutCancel(ctx), `DELETE FROM maintenance_locks WHERE name = ? AND pid = ? AND hostname = ?`, name, pid, host)
			return err
		})
	}, nil
}
