package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/fts"
	"github.com/cortexhq/cortex/internal/sqlpart"
	"github.com/cortexhq/cortex/transcript"
)

// where accumulates SQL conditions and their arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// part converts conditions built by sqlpart (shared with the PostgreSQL
// store).
func part(p sqlpart.Where) where { return where{conds: p.Conds, args: p.Args} }

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " AND " + strings.Join(w.conds, " AND ")
}

// searchProbe is the match count above which Search walks rows in time
// order, asking the index about each, instead of sorting every match.
const searchProbe = 20000

// rankWindow bounds --rank: relevance orders the newest rankWindow matches
// (by row id), so a common word is ranked in bounded time.
const rankWindow = 10000

// Search runs a full-text search over the search index (the full text of
// every record). limit must already be clamped. Rows the index has not
// reached yet are counted in NotYetSearchable, not searched.
func (db *DB) Search(ctx context.Context, p cortex.SearchParams) (cortex.SearchResult, error) {
	res := cortex.SearchResult{Query: p.Query, Hits: []cortex.SearchHit{}}
	q, _, err := BuildFTSQuery(p.Query)
	if err != nil {
		return res, err
	}
	res.FTSQuery = q
	failed := func(err error) (cortex.SearchResult, error) {
		return res, cortex.WrapError(cortex.CodeUnavailable, err, "search failed: %v", err)
	}
	if res.NotYetSearchable, res.NotYetSearchableEstimated, err = db.SearchLag(ctx); err != nil {
		return res, err
	}
	if !db.searchAttached {
		return res, nil // no index yet: nothing is searchable
	}
	w := part(sqlpart.Search(p, "l."))
	offset := sqlpart.SearchOffset(p)
	const cols = `SELECT l.id, l.timestamp, COALESCE(l.ai_tool, ''), COALESCE(l.ai_project, ''), COALESCE(l.ai_session_id, ''),
		COALESCE(l.ai_role, ''), COALESCE(l.ai_kind, ''), COALESCE(l.ai_tool_name, ''), l.hostname, l.severity, l.is_error,
		` + transcriptPathOf + `, COALESCE(l.source_line, 0)`
	var query string
	var args []any
	switch {
	case p.Rank:
		// Relevance among the newest rankWindow matches: bm25 reads every
		// match's positions, which a common word makes slow.
		var floor int64
		err := db.r.QueryRowContext(ctx, `SELECT rowid FROM search.search_fts WHERE search_fts MATCH ? ORDER BY rowid DESC
			LIMIT 1 OFFSET ?`, q, rankWindow).Scan(&floor)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return failed(err)
		default:
			res.RankWindow = rankWindow
		}
		query = cols + ` FROM search.search_fts f JOIN logs l ON l.id = f.rowid WHERE search_fts MATCH ? AND f.rowid > ?` +
			w.sql() + ` ORDER BY f.rank, l.id DESC LIMIT ?`
		args = append(append([]any{q, floor}, w.args...), p.Limit+1)
	default:
		var n int
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT rowid FROM search.search_fts WHERE search_fts MATCH ? LIMIT ?)`,
			q, searchProbe).Scan(&n); err != nil {
			return failed(err)
		}
		if n < searchProbe {
			// Few matches: read them from the index and sort them.
			query = cols + ` FROM search.search_fts f JOIN logs l ON l.id = f.rowid WHERE search_fts MATCH ?` + w.sql() +
				` ORDER BY l.timestamp DESC, l.id DESC LIMIT ?`
			args = append(append([]any{q}, w.args...), p.Limit+1)
			break
		}
		// Many matches (a common word): walk the rows newest first along
		// a time index and ask the index about each row, stopping at the
		// limit; sorting hundreds of thousands of matches would dominate.
		idx := "idx_logs_timestamp"
		if p.Session != "" {
			idx = "idx_logs_session_time"
		}
		query = cols + ` FROM logs l INDEXED BY ` + idx + ` WHERE 1=1` + w.sql() +
			` AND EXISTS (SELECT 1 FROM search.search_fts WHERE search_fts MATCH ? AND rowid = l.id)
			ORDER BY l.timestamp DESC, l.id DESC LIMIT ?`
		args = append(append(w.args, q), p.Limit+1)
	}
	query += ` OFFSET ?`
	args = append(args, offset)
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return failed(err)
	}
	defer rows.Close()
	for rows.Next() {
		var h cortex.SearchHit
		var tool, role, sev string
		var isErr int
		if err := rows.Scan(&h.ID, &h.Timestamp, &tool, &h.Project, &h.SessionID, &role, &h.Kind, &h.ToolName,
			&h.Hostname, &sev, &isErr, &h.TranscriptPath, &h.Line); err != nil {
			return failed(err)
		}
		if len(res.Hits) == p.Limit {
			res.Truncated = true
			break
		}
		h.Tool, h.Role, h.Severity, h.IsError = cortex.Tool(tool), cortex.Role(role), cortex.Severity(sev), isErr == 1
		res.Hits = append(res.Hits, h)
	}
	if err := rows.Err(); err != nil {
		return failed(err)
	}
	rows.Close()
	if err := db.snippets(ctx, res.Hits, p.Query); err != nil {
		return res, err
	}
	res.Total = len(res.Hits)
	res.Next = sqlpart.SearchNext(p, res, offset)
	return res, nil
}

// snippets sets each hit's snippet: an excerpt of its full text (what the
// index holds for it) around the first match, with the matched words'
// ranges.
func (db *DB) snippets(ctx context.Context, hits []cortex.SearchHit, query string) error {
	if len(hits) == 0 {
		return nil
	}
	args := make([]any, len(hits))
	for i, h := range hits {
		args[i] = h.ID
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, COALESCE(facility = 'transcript', 0), raw, message FROM logs WHERE id IN `+inList(len(hits)), args...)
	if err != nil {
		return queryFailed(err, "rows")
	}
	texts := map[int64]string{}
	var tr transcript.SearchTextReader
	for rows.Next() {
		var r searchRow
		if err := rows.Scan(&r.id, &r.transcript, &r.raw, &r.message); err != nil {
			rows.Close()
			return queryFailed(err, "rows")
		}
		if r.transcript {
			raw, err := db.rowRaw(ctx, r.id, r.raw)
			if err != nil {
				rows.Close()
				return queryFailed(err, "rows")
			}
			r.raw = raw
		}
		texts[r.id] = string(db.searchText(&tr, &r))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return queryFailed(err, "rows")
	}
	q, err := fts.Parse(query)
	if err != nil {
		return err
	}
	for i := range hits {
		hits[i].Snippet, hits[i].Highlights = fts.Excerpt(texts[hits[i].ID], q, 200)
	}
	return nil
}

// NewestRow is the time of the newest stored row ("" for an empty store).
func (db *DB) NewestRow(ctx context.Context) (string, error) {
	var t sql.NullString
	if err := db.r.QueryRowContext(ctx, `SELECT max(timestamp) FROM logs`).Scan(&t); err != nil {
		return "", cortex.WrapError(cortex.CodeUnavailable, err, "cannot read the store: %v", err)
	}
	return t.String, nil
}

// Sessions lists sessions, most recently active first. limit must already
// be clamped.
func (db *DB) Sessions(ctx context.Context, p cortex.SessionParams) (cortex.SessionList, error) {
	out := cortex.SessionList{Sessions: []cortex.Session{}}
	w := part(sqlpart.Sessions(p))
	rows, err := db.r.QueryContext(ctx, `SELECT `+sessionViewCols+` FROM ai_sessions WHERE 1=1`+w.sql()+sqlpart.SessionsOrder+` LIMIT ?`,
		append(w.args, p.Limit+1)...)
	if err != nil {
		return out, cortex.WrapError(cortex.CodeUnavailable, err, "cannot list sessions: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return out, cortex.WrapError(cortex.CodeUnavailable, err, "cannot list sessions")
		}
		if len(out.Sessions) == p.Limit {
			out.Truncated = true
			break
		}
		out.Sessions = append(out.Sessions, s)
	}
	out.Total = len(out.Sessions)
	if out.Truncated && len(out.Sessions) > 0 {
		last := out.Sessions[len(out.Sessions)-1]
		out.Next = sqlpart.SessionCursor(last).Encode()
	}
	return out, rows.Err()
}

// Status describes the store.
func (db *DB) Status(ctx context.Context) (cortex.Status, error) {
	st := cortex.Status{DBPath: db.path, SchemaVersion: SchemaVersion(), RowsByTool: map[string]int64{},
		RowsByRole: map[string]map[string]int64{}, RecentErrors: []cortex.SourceError{}, UnknownTypes: []cortex.UnknownTypeCount{},
		LogIngest: []cortex.LogIngestCounters{}}
	st.Sources.ByKind = map[string]int64{}
	if fi, err := os.Stat(db.path); err == nil {
		st.DBBytes = fi.Size()
	}
	if fi, err := os.Stat(db.path + "-wal"); err == nil {
		st.WALBytes = fi.Size()
	}
	st.Search.Path, st.Search.Built = SearchPath(db.path), db.searchAttached
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(SearchPath(db.path) + suffix); err == nil {
			st.Search.Bytes += fi.Size()
		}
	}
	var err error
	if st.Search.NotYetSearchable, st.Search.Estimated, err = db.SearchLag(ctx); err != nil {
		return st, err
	}
	if db.searchAttached {
		// A structure record this code cannot read leaves the count out.
		if st.Search.Segments, _, err = db.SearchSegments(ctx); err != nil && !errors.Is(err, errSearchStructure) {
			return st, err
		}
	}
	fail := func(err error) (cortex.Status, error) {
		return st, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read status: %v", err)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT ai_tool, ai_role, rows FROM log_counts`)
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		var tool, role string
		var n int64
		if err := rows.Scan(&tool, &role, &n); err != nil {
			rows.Close()
			return fail(err)
		}
		st.RowsByTool[tool] += n
		if st.RowsByRole[tool] == nil {
			st.RowsByRole[tool] = map[string]int64{}
		}
		st.RowsByRole[tool][role] = n
	}
	rows.Close()
	for _, n := range st.RowsByTool {
		st.Rows += n
	}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM ai_sessions`).Scan(&st.Sessions); err != nil {
		return fail(err)
	}
	var oldest, newest sql.NullString
	if err := db.r.QueryRowContext(ctx, `SELECT (SELECT min(timestamp) FROM logs), (SELECT max(timestamp) FROM logs)`).Scan(&oldest, &newest); err != nil {
		return fail(err)
	}
	st.Oldest, st.Newest = oldest.String, newest.String
	rows, err = db.r.QueryContext(ctx, `SELECT kind, count(*), sum(pending_bytes > 0),
		sum(last_error IS NOT NULL OR id IN (SELECT source_id FROM transcript_parse_errors)), sum(rewrites)
		FROM transcript_sources GROUP BY kind`)
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		var kind string
		var n, pending, errs, rewrites int64
		if err := rows.Scan(&kind, &n, &pending, &errs, &rewrites); err != nil {
			rows.Close()
			return fail(err)
		}
		st.Sources.ByKind[kind] = n
		st.Sources.Files += n
		st.Sources.Pending += pending
		if kind != "unsupported" {
			st.Sources.WithErrors += errs
		}
		st.Sources.Rewrites += rewrites
	}
	rows.Close()
	var last sql.NullString
	if err := db.r.QueryRowContext(ctx, `SELECT max(last_indexed_at) FROM transcript_sources`).Scan(&last); err != nil {
		return fail(err)
	}
	st.LastIndexedAt = last.String
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM transcript_parse_errors`).Scan(&st.ParseErrors); err != nil {
		return fail(err)
	}
	rows, err = db.r.QueryContext(ctx, `SELECT s.path, e.line_no, e.error, e.preview, e.seen_at
		FROM transcript_parse_errors e JOIN transcript_sources s ON s.id = e.source_id
		ORDER BY e.seen_at DESC, e.id DESC LIMIT 10`)
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		var e cortex.SourceError
		if err := rows.Scan(&e.Path, &e.Line, &e.Error, &e.Preview, &e.SeenAt); err != nil {
			rows.Close()
			return fail(err)
		}
		st.RecentErrors = append(st.RecentErrors, e)
	}
	rows.Close()
	rows, err = db.r.QueryContext(ctx, `SELECT ai_tool, tool_version, record_type, sum(count) FROM transcript_unknown_types
		GROUP BY ai_tool, tool_version, record_type ORDER BY sum(count) DESC, ai_tool, tool_version, record_type LIMIT 100`)
	if err != nil {
		return fail(err)
	}
	defer rows.Close()
	for rows.Next() {
		var u cortex.UnknownTypeCount
		var tool string
		if err := rows.Scan(&tool, &u.Version, &u.Type, &u.Count); err != nil {
			return fail(err)
		}
		u.Tool = cortex.Tool(tool)
		st.UnknownTypes = append(st.UnknownTypes, u)
	}
	if err := rows.Err(); err != nil {
		return fail(err)
	}
	if st.LogIngest, err = db.LogIngestCounters(ctx); err != nil {
		return st, err
	}
	for _, c := range st.LogIngest {
		st.LogRows += c.Stored
	}
	return st, nil
}
