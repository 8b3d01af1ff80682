package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/fts"
	"github.com/cortexhq/cortex/internal/sqlpart"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/transcript"
)

// tsQuery renders a parsed search as a tsquery over the terms the SQLite
// store's index holds (fts.Indexer: tokens and their English stems): a
// term is the phrase of its terms (<->), a prefix the prefix of its one
// term (:*), alternatives are joined with |, groups with &. Every lexeme
// is quoted, so no input becomes tsquery syntax.
func (db *DB) tsQuery(ctx context.Context, q fts.Query) (string, error) {
	var texts []string
	for _, g := range q.Groups {
		for _, t := range g {
			texts = append(texts, t.Text)
		}
	}
	terms, err := db.words.Postings(ctx, texts)
	if err != nil {
		return "", cortex.WrapError(cortex.CodeInternal, err, "cannot read the search: %v", err)
	}
	var groups []string
	k := 0
	for _, g := range q.Groups {
		var alts []string
		for _, t := range g {
			ps := terms[k]
			k++
			if len(ps) == 0 {
				continue
			}
			parts := make([]string, len(ps))
			for i, p := range ps {
				parts[i] = lexeme(p.Term)
			}
			a := strings.Join(parts, " <-> ")
			if t.Prefix && len(ps) == 1 {
				a += ":*"
			}
			if len(ps) > 1 {
				// Or every adjacent pair, as a long text's index holds
				// them (see tsVector).
				pairs := make([]string, len(ps)-1)
				for i := range pairs {
					pairs[i] = lexeme(pairLexeme(ps[i].Term, ps[i+1].Term))
				}
				a = "(" + a + ") | (" + strings.Join(pairs, " & ") + ")"
			}
			alts = append(alts, "("+a+")")
		}
		if len(alts) == 0 {
			// A term without a token (only marks FTS5 drops) matches
			// nothing, as in FTS5.
			return "'' & !''", nil
		}
		groups = append(groups, "("+strings.Join(alts, " | ")+")")
	}
	return strings.Join(groups, " & "), nil
}

// lexeme quotes a token for tsvector and tsquery input (longer tokens are
// cut as the index cuts them).
func lexeme(tok string) string {
	return "'" + lexemeQuoter.Replace(cutToken(tok)) + "'"
}

var lexemeQuoter = strings.NewReplacer(`\`, `\\`, `'`, `''`)

// maxLexeme is PostgreSQL's bound on a lexeme (2047 bytes), less room.
const maxLexeme = 2000

// cutToken cuts a token to maxLexeme bytes at a rune boundary. A query
// token (at most fts.MaxQueryBytes) is never cut, so a cut token still
// matches every prefix a query can ask for.
func cutToken(tok string) string {
	if len(tok) <= maxLexeme {
		return tok
	}
	return cortex.CutUTF8(tok, maxLexeme)
}

const searchCols = `SELECT l.id, l.timestamp, COALESCE(l.ai_tool, ''), COALESCE(l.ai_project, ''), COALESCE(l.ai_session_id, ''),
	COALESCE(l.ai_role, ''), COALESCE(l.ai_kind, ''), COALESCE(l.ai_tool_name, ''), l.hostname, l.severity, l.is_error,
	COALESCE(l.ai_transcript_path, ''), COALESCE(l.source_line, 0)`

// Search runs a full-text search. limit must already be clamped. Hits are
// the rows the SQLite store finds (the index holds FTS5's tokens); ranked
// search orders them by ts_rank_cd instead of FTS5's bm25.
func (db *DB) Search(ctx context.Context, p cortex.SearchParams) (cortex.SearchResult, error) {
	res := cortex.SearchResult{Query: p.Query, Hits: []cortex.SearchHit{}}
	parsed, err := fts.Parse(p.Query)
	if err != nil {
		return res, err
	}
	q, err := db.tsQuery(ctx, parsed)
	if err != nil {
		return res, err
	}
	res.FTSQuery = q
	w := sqlpart.Search(p, "l.")
	offset := sqlpart.SearchOffset(p)
	order := ` ORDER BY l.timestamp DESC, l.id DESC`
	if p.Rank {
		order = ` ORDER BY ts_rank_cd(l.fts, ?::tsquery) DESC, l.id DESC`
	}
	args := append([]any{q}, w.Args...)
	if p.Rank {
		args = append(args, q)
	}
	rows, err := db.query(ctx, searchCols+` FROM logs l WHERE l.fts @@ ?::tsquery`+w.SQL()+order+` LIMIT ? OFFSET ?`,
		append(args, p.Limit+1, offset)...)
	hits, err := collect(rows, err, "search hits", func(rows pgx.Rows) (cortex.SearchHit, error) {
		var h cortex.SearchHit
		var tool, role, sev string
		var isErr int
		err := rows.Scan(&h.ID, &h.Timestamp, &tool, &h.Project, &h.SessionID, &role, &h.Kind, &h.ToolName,
			&h.Hostname, &sev, &isErr, &h.TranscriptPath, &h.Line)
		h.Tool, h.Role, h.Severity, h.IsError = cortex.Tool(tool), cortex.Role(role), cortex.Severity(sev), isErr == 1
		return h, err
	})
	if err != nil {
		return res, cortex.WrapError(cortex.CodeUnavailable, err, "search failed: %v", cortex.ErrorMessage(err))
	}
	if len(hits) > p.Limit {
		hits, res.Truncated = hits[:p.Limit], true
	}
	if err := db.snippets(ctx, hits, parsed); err != nil {
		return res, err
	}
	res.Hits = append(res.Hits, hits...)
	res.Total = len(res.Hits)
	res.Next = sqlpart.SearchNext(p, res, offset)
	return res, nil
}

// snippets sets each hit's snippet: an excerpt of its full text (its
// record's, when the push sent records; else its message) around the
// first match, with the matched words' ranges.
func (db *DB) snippets(ctx context.Context, hits []cortex.SearchHit, q fts.Query) error {
	if len(hits) == 0 {
		return nil
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	type text struct {
		id   int64
		text []byte
	}
	rows, err := db.query(ctx, `SELECT id, COALESCE(facility = 'transcript', false), raw, message FROM logs WHERE id = ANY(?)`, ids)
	texts, err := collect(rows, err, "rows", func(rows pgx.Rows) (text, error) {
		var t text
		var transcriptRow bool
		var raw []byte
		var msg string
		if err := rows.Scan(&t.id, &transcriptRow, &raw, &msg); err != nil {
			return t, err
		}
		var rec []byte
		if transcriptRow && len(raw) > 0 {
			rec, _ = db.codec.Decode(raw)
		}
		t.text = transcript.RecordSearchText(transcriptRow, rec, msg)
		return t, nil
	})
	if err != nil {
		return err
	}
	byID := make(map[int64][]byte, len(texts))
	for _, t := range texts {
		byID[t.id] = t.text
	}
	for i := range hits {
		hits[i].Snippet, hits[i].Highlights = fts.Excerpt(string(byID[hits[i].ID]), q, 200)
	}
	return nil
}

// NewestRow is the time of the newest stored row ("" for an empty store).
func (db *DB) NewestRow(ctx context.Context) (string, error) {
	var t *string
	if err := db.queryRow(ctx, `SELECT max(timestamp) FROM logs`).Scan(&t); err != nil {
		return "", cortex.WrapError(cortex.CodeUnavailable, err, "cannot read the store: %v", cortex.ErrorMessage(err))
	}
	if t == nil {
		return "", nil
	}
	return *t, nil
}

const sessionViewCols = `ai_tool, ai_session_id, hostname, COALESCE(ai_project, ''), first_seen, last_seen,
	rows, user_rows, assistant_rows, tool_calls, error_rows, subagent_rows, COALESCE(tool_version, ''), COALESCE(transcript_path, ''),
	COALESCE(title, ''), COALESCE(first_prompt, '')`

// scanSession reads a session row: its counters, its title and its
// duration (see store.SetTitle).
func scanSession(rows pgx.Rows) (cortex.Session, error) {
	var s cortex.Session
	var tool, title, prompt string
	err := rows.Scan(&tool, &s.SessionID, &s.Hostname, &s.Project, &s.FirstSeen, &s.LastSeen, &s.Rows, &s.UserRows,
		&s.AssistantRows, &s.ToolCalls, &s.ErrorRows, &s.SubagentRows, &s.ToolVersion, &s.TranscriptPath, &title, &prompt)
	s.Tool = cortex.Tool(tool)
	store.SetTitle(&s, title, prompt)
	return s, err
}

// Sessions lists sessions, most recently active first. limit must already
// be clamped.
func (db *DB) Sessions(ctx context.Context, p cortex.SessionParams) (cortex.SessionList, error) {
	out := cortex.SessionList{Sessions: []cortex.Session{}}
	w := sqlpart.Sessions(p)
	// store_no last: two pushing stores of one host (a store made anew)
	// may hold the same session.
	rows, err := db.query(ctx, `SELECT `+sessionViewCols+` FROM ai_sessions WHERE true`+w.SQL()+sqlpart.SessionsOrder+
		`, store_no LIMIT ?`, append(w.Args, p.Limit+1)...)
	all, err := collect(rows, err, "sessions", scanSession)
	if err != nil {
		return out, err
	}
	if len(all) > p.Limit {
		all, out.Truncated = all[:p.Limit], true
	}
	out.Sessions = append(out.Sessions, all...)
	out.Total = len(out.Sessions)
	if out.Truncated {
		out.Next = sqlpart.SessionCursor(out.Sessions[len(out.Sessions)-1]).Encode()
	}
	return out, nil
}

// Status describes the team store: rows and sessions of every pushing
// store, and their sources, parse errors, unknown types and log receivers
// as of their last push.
func (db *DB) Status(ctx context.Context) (cortex.Status, error) {
	st := cortex.Status{DBPath: db.name, SchemaVersion: SchemaVersion(), RowsByTool: map[string]int64{},
		RowsByRole: map[string]map[string]int64{}, RecentErrors: []cortex.SourceError{}, UnknownTypes: []cortex.UnknownTypeCount{},
		LogIngest: []cortex.LogIngestCounters{}}
	st.Sources.ByKind = map[string]int64{}
	fail := func(err error) (cortex.Status, error) {
		return st, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read status: %v", err)
	}
	if err := db.queryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&st.DBBytes); err != nil {
		return fail(err)
	}
	// A push indexes the rows it sends: every row is searchable.
	st.Search.Path, st.Search.Built = "logs.fts", true
	if err := db.queryRow(ctx, `SELECT pg_relation_size('logs_fts')`).Scan(&st.Search.Bytes); err != nil {
		return fail(err)
	}
	rows, err := db.query(ctx, `SELECT ai_tool, ai_role, sum(rows)::bigint FROM log_counts GROUP BY 1, 2 HAVING sum(rows) <> 0`)
	counts, err := collect(rows, err, "row counts", func(rows pgx.Rows) ([3]any, error) {
		var tool, role string
		var n int64
		err := rows.Scan(&tool, &role, &n)
		return [3]any{tool, role, n}, err
	})
	if err != nil {
		return fail(err)
	}
	for _, c := range counts {
		tool, role, n := c[0].(string), c[1].(string), c[2].(int64)
		st.RowsByTool[tool] += n
		if st.RowsByRole[tool] == nil {
			st.RowsByRole[tool] = map[string]int64{}
		}
		st.RowsByRole[tool][role] = n
		st.Rows += n
	}
	if err := db.queryRow(ctx, `SELECT count(*) FROM ai_sessions`).Scan(&st.Sessions); err != nil {
		return fail(err)
	}
	var oldest, newest *string
	if err := db.queryRow(ctx, `SELECT (SELECT min(timestamp) FROM logs), (SELECT max(timestamp) FROM logs)`).Scan(&oldest, &newest); err != nil {
		return fail(err)
	}
	if oldest != nil {
		st.Oldest, st.Newest = *oldest, *newest
	}
	rows, err = db.query(ctx, `SELECT snapshot FROM push_stores WHERE snapshot IS NOT NULL ORDER BY store_no`)
	snaps, err := collect(rows, err, "pushing stores", func(rows pgx.Rows) (store.PushSnapshot, error) {
		var s string
		var snap store.PushSnapshot
		if err := rows.Scan(&s); err != nil {
			return snap, err
		}
		return snap, json.Unmarshal([]byte(s), &snap)
	})
	if err != nil {
		return fail(err)
	}
	mergeSnapshots(&st, snaps)
	return st, nil
}

// mergeSnapshots adds the pushing stores' snapshots to a status: counts
// summed, the newest ten parse errors, unknown types summed (largest
// first, at most 100), log receivers summed by source.
func mergeSnapshots(st *cortex.Status, snaps []store.PushSnapshot) {
	unknown := map[[3]string]int64{}
	ingest := map[string]*cortex.LogIngestCounters{}
	for _, s := range snaps {
		for k, n := range s.Sources.ByKind {
			st.Sources.ByKind[k] += n
		}
		st.Sources.Files += s.Sources.Files
		st.Sources.Pending += s.Sources.Pending
		st.Sources.WithErrors += s.Sources.WithErrors
		st.Sources.Rewrites += s.Sources.Rewrites
		st.ParseErrors += s.ParseErrors
		st.RecentErrors = append(st.RecentErrors, s.RecentErrors...)
		for _, u := range s.UnknownTypes {
			unknown[[3]string{string(u.Tool), u.Version, u.Type}] += u.Count
		}
		if s.LastIndexedAt > st.LastIndexedAt {
			st.LastIndexedAt = s.LastIndexedAt
		}
		for _, c := range s.LogIngest {
			m := ingest[c.Source]
			if m == nil {
				m = &cortex.LogIngestCounters{Source: c.Source, FirstAt: c.FirstAt}
				ingest[c.Source] = m
			}
			m.Add(c)
			if c.FirstAt < m.FirstAt {
				m.FirstAt = c.FirstAt
			}
			if c.UpdatedAt > m.UpdatedAt {
				m.UpdatedAt = c.UpdatedAt
			}
		}
	}
	slices.SortStableFunc(st.RecentErrors, func(a, b cortex.SourceError) int { return strings.Compare(b.SeenAt, a.SeenAt) })
	st.RecentErrors = st.RecentErrors[:min(len(st.RecentErrors), 10)]
	for k, n := range unknown {
		st.UnknownTypes = append(st.UnknownTypes, cortex.UnknownTypeCount{Tool: cortex.Tool(k[0]), Version: k[1], Type: k[2], Count: n})
	}
	slices.SortFunc(st.UnknownTypes, func(a, b cortex.UnknownTypeCount) int {
		if a.Count != b.Count {
			return int(b.Count - a.Count)
		}
		return strings.Compare(string(a.Tool)+"\x00"+a.Version+"\x00"+a.Type, string(b.Tool)+"\x00"+b.Version+"\x00"+b.Type)
	})
	st.UnknownTypes = st.UnknownTypes[:min(len(st.UnknownTypes), 100)]
	for _, c := range ingest {
		st.LogIngest = append(st.LogIngest, *c)
		st.LogRows += c.Stored
	}
	slices.SortFunc(st.LogIngest, func(a, b cortex.LogIngestCounters) int { return strings.Compare(a.Source, b.Source) })
}

func decodeMeta(s *string) map[string]string {
	if s == nil {
		return nil
	}
	return store.DecodeMeta(*s)
}

// SkillNames returns the distinct skill names (for "did you mean").
func (db *DB) SkillNames(ctx context.Context) ([]string, error) {
	rows, err := db.query(ctx, `SELECT DISTINCT skill_name FROM ai_skill_events ORDER BY skill_name LIMIT 10000`)
	return collect(rows, err, "skills", func(rows pgx.Rows) (string, error) {
		var s string
		return s, rows.Scan(&s)
	})
}

// SkillNamesMatching resolves a skill as typed to the stored names it
// stands for (see store.MatchSkillNames; none for no skill).
func (db *DB) SkillNamesMatching(ctx context.Context, skill string) ([]string, error) {
	if skill == "" {
		return nil, nil
	}
	names, err := db.SkillNames(ctx)
	if err != nil {
		return nil, err
	}
	return store.MatchSkillNames(names, skill), nil
}

const skillEventCols = `id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname,
	timestamp, skill_name, COALESCE(skill_plugin, ''), COALESCE(skill_path, ''), event_kind, evidence_kind, metadata_json`

func scanSkillEvent(rows pgx.Rows) (cortex.SkillEventRow, error) {
	var r cortex.SkillEventRow
	var tool string
	var meta *string
	err := rows.Scan(&r.ID, &r.LogID, &tool, &r.Project, &r.SessionID, &r.Hostname, &r.Timestamp, &r.SkillName,
		&r.SkillPlugin, &r.SkillPath, &r.EventKind, &r.EvidenceKind, &meta)
	r.Tool, r.Metadata = cortex.Tool(tool), decodeMeta(meta)
	return r, err
}

// SkillEvents lists skill events, newest first. Limit must be clamped.
func (db *DB) SkillEvents(ctx context.Context, p cortex.SkillEventParams) (cortex.EventList[cortex.SkillEventRow], error) {
	names, err := db.SkillNamesMatching(ctx, p.Skill)
	if err != nil {
		return cortex.EventList[cortex.SkillEventRow]{}, err
	}
	w := sqlpart.SkillEvents(p.EventFilter, p.Skill, names, p.Plugin)
	return listRows(ctx, db, "skill events", `SELECT `+skillEventCols+` FROM ai_skill_events WHERE true`+w.SQL()+
		` ORDER BY timestamp DESC, id DESC LIMIT ?`, w.Args, p.Limit, scanSkillEvent,
		func(r cortex.SkillEventRow) cortex.Cursor { return sqlpart.RowCursor(r.Timestamp, r.ID) })
}

// SkillSummaries summarizes skill use per skill, most recently used first.
// Limit must be clamped.
func (db *DB) SkillSummaries(ctx context.Context, p cortex.SkillEventParams) (cortex.EventList[cortex.SkillSummary], error) {
	names, err := db.SkillNamesMatching(ctx, p.Skill)
	if err != nil {
		return cortex.EventList[cortex.SkillSummary]{}, err
	}
	f := p.EventFilter
	f.After = nil // pages by skill (last use, name), not by event
	w := sqlpart.SkillEvents(f, p.Skill, names, p.Plugin)
	having, hargs := sqlpart.SkillSummariesAfter(p.After)
	// The agents in first-seen order, as SQLite's group_concat(DISTINCT)
	// lists them when it reads the rows in time order.
	return listRows(ctx, db, "skills", `SELECT skill_name, COALESCE(max(skill_plugin), ''), count(*),
		count(DISTINCT ai_tool || ':' || COALESCE(ai_session_id, '')), string_agg(DISTINCT ai_tool, ','), min(timestamp), max(timestamp)
		FROM ai_skill_events WHERE true`+w.SQL()+` GROUP BY skill_name`+having+` ORDER BY max(timestamp) DESC, skill_name DESC LIMIT ?`,
		append(w.Args, hargs...), p.Limit,
		func(rows pgx.Rows) (cortex.SkillSummary, error) {
			var s cortex.SkillSummary
			err := rows.Scan(&s.SkillName, &s.SkillPlugin, &s.Events, &s.Sessions, &s.Tools, &s.FirstSeen, &s.LastSeen)
			return s, err
		}, sqlpart.SkillSummaryCursor)
}

const toolEventCols = `id, call_log_id, result_log_id, ai_tool, COALESCE(ai_project, ''),
	COALESCE(ai_session_id, ''), hostname, timestamp, COALESCE(call_timestamp, ''), COALESCE(result_timestamp, ''),
	COALESCE(turn_id, ''), call_id, tool_name, COALESCE(mcp_server, ''), COALESCE(mcp_tool, ''), event_kind,
	COALESCE(result_kind, ''), status, duration_ms, is_error, exit_code, COALESCE(arguments_json, ''),
	COALESCE(output_preview, ''), COALESCE(error_text, ''), metadata_json`

func scanToolEvent(rows pgx.Rows) (cortex.ToolEventRow, error) {
	var r cortex.ToolEventRow
	var tool string
	var isErr *int64
	var meta *string
	err := rows.Scan(&r.ID, &r.CallLogID, &r.ResultLogID, &tool, &r.Project, &r.SessionID, &r.Hostname, &r.Timestamp,
		&r.CallTimestamp, &r.ResultTimestamp, &r.TurnID, &r.CallID, &r.ToolName, &r.MCPServer, &r.MCPTool, &r.EventKind,
		&r.ResultKind, &r.Status, &r.DurationMS, &isErr, &r.ExitCode, &r.ArgumentsJSON, &r.OutputPreview, &r.ErrorText, &meta)
	r.Tool, r.Metadata = cortex.Tool(tool), decodeMeta(meta)
	if isErr != nil {
		b := *isErr == 1
		r.IsError = &b
	}
	return r, err
}

// ToolEvents lists tool calls (call and result merged), newest first.
// Limit must be clamped.
func (db *DB) ToolEvents(ctx context.Context, p cortex.ToolEventParams) (cortex.EventList[cortex.ToolEventRow], error) {
	w := sqlpart.ToolEvents(p)
	return listRows(ctx, db, "tool events", `SELECT `+toolEventCols+` FROM ai_mcp_events WHERE true`+w.SQL()+
		` ORDER BY timestamp DESC, id DESC LIMIT ?`, w.Args, p.Limit, scanToolEvent,
		func(r cortex.ToolEventRow) cortex.Cursor { return sqlpart.RowCursor(r.Timestamp, r.ID) })
}

const hookEventCols = `id, log_id, ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''),
	hostname, timestamp, COALESCE(last_seen, ''), hook_event, COALESCE(hook_name, ''), COALESCE(hook_source, ''),
	COALESCE(hook_command, ''), status, exit_code, duration_ms, COALESCE(stdout_preview, ''), COALESCE(stderr_preview, ''),
	COALESCE(persisted_output_path, ''), COALESCE(trusted_hash, ''), evidence_kind, metadata_json`

func scanHookEvent(rows pgx.Rows) (cortex.HookEventRow, error) {
	var r cortex.HookEventRow
	var tool string
	var meta *string
	err := rows.Scan(&r.ID, &r.LogID, &tool, &r.Project, &r.SessionID, &r.Hostname, &r.Timestamp, &r.LastSeen, &r.HookEvent,
		&r.HookName, &r.HookSource, &r.HookCommand, &r.Status, &r.ExitCode, &r.DurationMS, &r.StdoutPreview, &r.StderrPreview,
		&r.PersistedOutputPath, &r.TrustedHash, &r.EvidenceKind, &meta)
	r.Tool, r.Metadata = cortex.Tool(tool), decodeMeta(meta)
	return r, err
}

// HookEvents lists hook events, newest first. Limit must be clamped.
func (db *DB) HookEvents(ctx context.Context, p cortex.HookEventParams) (cortex.EventList[cortex.HookEventRow], error) {
	w := sqlpart.HookEvents(p)
	return listRows(ctx, db, "hook events", `SELECT `+hookEventCols+` FROM ai_hook_events WHERE true`+w.SQL()+
		` ORDER BY timestamp DESC, id DESC LIMIT ?`, w.Args, p.Limit, scanHookEvent,
		func(r cortex.HookEventRow) cortex.Cursor { return sqlpart.RowCursor(r.Timestamp, r.ID) })
}

// Logs lists non-AI log rows, newest first.
func (db *DB) Logs(ctx context.Context, p store.LogParams) (store.LogList, error) {
	out := store.LogList{Logs: []store.LogEntry{}}
	w, err := sqlpart.Logs(p)
	if err != nil {
		return out, err
	}
	rows, err := db.query(ctx, `SELECT id, timestamp, hostname, COALESCE(facility, ''), severity,
		COALESCE(app_name, ''), message, source, received_at, metadata_json
		FROM logs WHERE ai_tool IS NULL`+w.SQL()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.Args, p.Limit+1)...)
	all, err := collect(rows, err, "logs", func(rows pgx.Rows) (store.LogEntry, error) {
		var e store.LogEntry
		var sev string
		var meta *string
		err := rows.Scan(&e.ID, &e.Timestamp, &e.Hostname, &e.Facility, &sev, &e.AppName, &e.Message, &e.Source, &e.ReceivedAt, &meta)
		e.Severity, e.Metadata = cortex.Severity(sev), decodeMeta(meta)
		return e, err
	})
	if err != nil {
		return out, err
	}
	if len(all) > p.Limit {
		all, out.Truncated = all[:p.Limit], true
	}
	out.Logs = append(out.Logs, all...)
	out.Total = len(out.Logs)
	if out.Truncated {
		last := out.Logs[len(out.Logs)-1]
		out.Next = sqlpart.RowCursor(last.Timestamp, last.ID).Encode()
	}
	return out, nil
}
