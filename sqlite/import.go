package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/rawcodec"
)

// Import writes one ingest batch in one transaction; see ImportBatches.
func (db *DB) Import(ctx context.Context, b cortex.ImportBatch) (cortex.ImportResult, error) {
	res, err := db.ImportBatches(ctx, []cortex.ImportBatch{b})
	if err != nil {
		return cortex.ImportResult{}, err
	}
	return res[0], nil
}

// ImportBatches writes several ingest batches (of one or more files) in one
// transaction: for each batch the import-ledger claims, the new logs rows,
// rows whose content changed (last write wins), parse errors, unknown-type
// counts and the source's checkpoint; then the session rollups. Either
// everything commits or nothing does,
// so a checkpoint never runs ahead of its rows. Rows become searchable
// when the search indexer gets to them (see IndexSearch).
func (db *DB) ImportBatches(ctx context.Context, bs []cortex.ImportBatch) ([]cortex.ImportResult, error) {
	var res []cortex.ImportResult
	var stale map[int64]bool
	err := db.write(ctx, func(tx *sql.Tx) error {
		res = make([]cortex.ImportResult, len(bs))
		w, err := newImportTx(ctx, db, tx, db.now())
		if err != nil {
			return err
		}
		defer w.close()
		defer func() { stale = w.stale }()
		for i := range bs {
			if err := w.batch(&bs[i], &res[i]); err != nil {
				return err
			}
		}
		return w.finish()
	})
	db.blocks.drop(stale)
	if err != nil {
		var ce *cortex.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		path := ""
		if len(bs) > 0 {
			path = bs[0].Source.Path
		}
		if isConstraint(err) {
			// Bad data, not a bad store: the caller can go on with other files.
			return nil, cortex.WrapError(cortex.CodeInvalid, err, "records of %s were rejected by the store: %v", path, err)
		}
		return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot store records (%s): %v", path, err)
	}
	return res, nil
}

type sessionKey struct{ tool, session, host string }

type sessionAgg struct {
	project, first, last, version, path            string
	rows, user, assistant, calls, errors, subagent int64
	// prompt is the earliest typed prompt of the batch (at promptAt).
	prompt, promptAt string
}

// leafRow is a row that a session summary may name as its leaf message.
type leafRow struct{ tool, session, host string }

// pendingSummary is a session summary written in this transaction.
type pendingSummary struct {
	cortex.SessionSummary
	sourceID int64
	path     string
}

// maxPromptBytes bounds a session's stored first prompt (its title when
// it has no summary).
const maxPromptBytes = 200

// importTx is the state of one import transaction.
type importTx struct {
	db       *DB
	ctx      context.Context // without cancellation: see newImportTx
	tx       *sql.Tx
	now      string
	next     int64
	stmts    map[string]*sql.Stmt
	changed  []int64 // rows replaced in place: their search entries are redone
	sessions map[sessionKey]*sessionAgg
	counts   map[[2]string]int64
	// leaves are this transaction's Claude rows by uuid, summaries its
	// session summaries: finish attaches summaries to sessions.
	leaves    map[string]leafRow
	summaries []pendingSummary
	// blocks gathers the raw records of the new rows (see rawblocks.go);
	// stale are blocks holding records that changed rows no longer use.
	blocks blockWriter
	stale  map[int64]bool
}

// Rows per multi-row statement: one statement per row would spend more time
// in the driver than in SQLite.
const (
	claimChunk = 128
	insertRows = 32
)

const logsColumns = `(id, timestamp, hostname, facility, severity, app_name, message, raw,
	received_at, source, ai_tool, ai_project, ai_session_id, ai_transcript_path, ai_role, ai_kind, ai_tool_name,
	ai_agent_id, is_error, source_id, source_line, metadata_json, claim, claim_version)`

// transcriptPathOf is the transcript file of a logs row aliased l: rows
// stored since migration 0029 name it through source_id only (the path
// repeated on every row took 3% of the store).
const transcriptPathOf = `COALESCE(l.ai_transcript_path, (SELECT s.path FROM transcript_sources s WHERE s.id = l.source_id), '')`

func newImportTx(ctx context.Context, db *DB, tx *sql.Tx, now time.Time) (*importTx, error) {
	// Statements run without the caller's cancellation: the driver would
	// start a watcher goroutine per statement. The transaction itself still
	// rolls back when ctx ends, and callers check ctx between batches.
	w := &importTx{db: db, ctx: context.WithoutCancel(ctx), tx: tx, now: cortex.FormatTime(now), stmts: map[string]*sql.Stmt{},
		sessions: map[sessionKey]*sessionAgg{}, counts: map[[2]string]int64{}, leaves: map[string]leafRow{}}
	next, err := nextID(w.ctx, tx, "logs")
	if err != nil {
		return nil, err
	}
	w.next = next
	return w, nil
}

// close ends the transaction's work: its compressor (the blocks not
// stored go with a transaction that failed) and its statements.
func (w *importTx) close() {
	if w.blocks.comp != nil {
		w.blocks.comp.stop()
	}
	for _, s := range w.stmts {
		s.Close()
	}
}

// stmt returns the statement built by build for n rows (n is a power of
// two, see spans), bound to this transaction.
func (w *importTx) stmt(kind string, n int, build func(int) string) (*sql.Stmt, error) {
	return w.prepared(build(n))
}

// prepared returns a transaction-bound statement for query. Statements are
// prepared once per database (see stmtCache), not once per transaction.
func (w *importTx) prepared(query string) (*sql.Stmt, error) {
	if s, ok := w.stmts[query]; ok {
		return s, nil
	}
	s, err := w.db.stmts.bind(w.ctx, w.tx, query)
	if err != nil {
		return nil, err
	}
	w.stmts[query] = s
	return s, nil
}

// exec runs a statement through the statement cache.
func (w *importTx) exec(query string, args ...any) (sql.Result, error) {
	s, err := w.prepared(query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(w.ctx, args...)
}

// queryRow runs a one-row query through the statement cache.
func (w *importTx) queryRow(query string, args ...any) *sql.Row {
	s, err := w.prepared(query)
	if err != nil {
		return w.tx.QueryRowContext(w.ctx, query, args...)
	}
	return s.QueryRowContext(w.ctx, args...)
}

// spans cuts n rows into statement sizes: as many full chunks as fit, then
// the rest in descending powers of two, so that a handful of statement
// shapes (prepared once) serve every batch.
func spans(n, chunk int) [][2]int {
	var out [][2]int
	i := 0
	for ; n-i >= chunk; i += chunk {
		out = append(out, [2]int{i, i + chunk})
	}
	for size := chunk / 2; size >= 1; size /= 2 {
		if n-i >= size {
			out = append(out, [2]int{i, i + size})
			i += size
		}
	}
	return out
}

func repeatValues(n int, tuple string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(tuple)
	}
	return b.String()
}

func claimSQL(n int) string {
	return `INSERT INTO transcript_import_records(source_id, record_key, content_hash, log_id) VALUES ` +
		repeatValues(n, "(?,?,?,?)") + `
		ON CONFLICT(source_id, record_key) DO UPDATE SET content_hash = excluded.content_hash
		WHERE content_hash <> excluded.content_hash
		RETURNING record_key, log_id`
}

func insertSQL(n int) string {
	return `INSERT INTO logs` + logsColumns + ` VALUES ` + repeatValues(n, "(?,?,?,'transcript',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
}

// batch writes one batch's rows, errors, counters and checkpoint.
func (w *importTx) batch(b *cortex.ImportBatch, res *cortex.ImportResult) error {
	src := &b.Source
	sid, err := w.registerSource(src)
	if err != nil {
		return err
	}
	res.SourceID = sid
	if b.Reset {
		if _, err := w.exec("DELETE FROM transcript_parse_errors WHERE source_id = ?", sid); err != nil {
			return err
		}
		if _, err := w.exec("DELETE FROM transcript_unknown_types WHERE source_id = ?", sid); err != nil {
			return err
		}
	}
	recs := lastWriteWins(b.Records, res)
	events := pendingEvents{packer: w.db.startPacking(recs)}
	for _, sp := range spans(len(recs), claimChunk) {
		if err := w.records(b, sid, recs[sp[0]:sp[1]], res, &events); err != nil {
			return err
		}
	}
	// Events go in the same transaction as their rows (and, like the rows,
	// before any full-text entry: see finish).
	if !events.empty() {
		c, err := w.writeEvents(&events, nil)
		if err != nil {
			return err
		}
		res.Events.Add(c)
	}
	// A block holds records of one file only; a file written a few
	// records at a time has its small blocks merged.
	if err := w.flushBlock(); err != nil {
		return err
	}
	if res.Inserted > 0 {
		if err := w.compact(sid); err != nil {
			return err
		}
	}
	if err := w.usage(b); err != nil {
		return err
	}
	for _, sm := range b.Summaries {
		w.summaries = append(w.summaries, pendingSummary{SessionSummary: sm, sourceID: sid, path: src.Path})
	}
	for _, pe := range b.ParseErrors {
		if _, err := w.exec(`INSERT INTO transcript_parse_errors(source_id, line_no, byte_offset, error, preview, seen_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(source_id, line_no, error) DO UPDATE SET seen_at = excluded.seen_at, preview = excluded.preview`,
			sid, pe.Line, pe.Offset, pe.Error, pe.Preview, w.now); err != nil {
			return fmt.Errorf("record parse error: %w", err)
		}
	}
	for _, u := range b.Unknown {
		if _, err := w.exec(`INSERT INTO transcript_unknown_types(source_id, ai_tool, tool_version, record_type, count)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT(source_id, tool_version, record_type) DO UPDATE SET count = count + excluded.count`,
			sid, string(src.Tool), u.Version, u.Type, u.Count); err != nil {
			return fmt.Errorf("count unknown types: %w", err)
		}
	}
	return w.storeCheckpoint(src, sid, res.Inserted, b.Rewritten)
}

// registerSource inserts (or finds) a source by path and returns its id.
// A source that moved (MovedFrom) keeps its id, takes the new path, and
// its rows and session rollups follow.
func (w *importTx) registerSource(src *cortex.Source) (int64, error) {
	if src.MovedFrom != "" && src.ID != 0 && src.MovedFrom != src.Path {
		return src.ID, w.moveSource(src)
	}
	var sid int64
	if err := w.queryRow(`INSERT INTO transcript_sources(path, kind, ai_tool, first_indexed_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT(path) DO UPDATE SET kind = excluded.kind, ai_tool = excluded.ai_tool
		RETURNING id`, src.Path, src.Kind, nullStr(string(src.Tool)), w.now).Scan(&sid); err != nil {
		return 0, fmt.Errorf("register source %s: %w", src.Path, err)
	}
	return sid, nil
}

// moveSource gives a source its new path. The rows read from it are found
// through the import ledger (keyed by source), not by scanning logs.
func (w *importTx) moveSource(src *cortex.Source) error {
	res, err := w.exec(`UPDATE transcript_sources SET path = ?, kind = ?, ai_tool = ? WHERE id = ? AND path <> ?`,
		src.Path, src.Kind, nullStr(string(src.Tool)), src.ID, src.Path)
	if err != nil {
		return fmt.Errorf("move source %s to %s: %w", src.MovedFrom, src.Path, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err // moved by an earlier batch of this read
	}
	// Rows stored since migration 0029 name their file through source_id
	// only; older rows also hold the path.
	if _, err := w.exec(`UPDATE logs SET ai_transcript_path = ?
		WHERE id IN (SELECT log_id FROM transcript_import_records WHERE source_id = ?) AND ai_transcript_path IS NOT NULL`,
		src.Path, src.ID); err != nil {
		return fmt.Errorf("move the rows of %s: %w", src.MovedFrom, err)
	}
	if _, err := w.exec(`UPDATE ai_sessions SET transcript_path = ? WHERE transcript_path = ?`, src.Path, src.MovedFrom); err != nil {
		return fmt.Errorf("move the sessions of %s: %w", src.MovedFrom, err)
	}
	return nil
}

// storeCheckpoint records where a source was read up to, and what the
// batch added.
func (w *importTx) storeCheckpoint(src *cortex.Source, sid, inserted int64, rewritten bool) error {
	if _, err := w.exec(`UPDATE transcript_sources SET
		size = ?, mtime_ns = ?, prefix_hash = ?, anchor_hash = ?, last_offset = ?, last_line = ?,
		pending_bytes = ?, complete = ?, records = records + ?, rewrites = rewrites + ?,
		last_indexed_at = ?, last_error = ?, head_hash = COALESCE(?, head_hash)
		WHERE id = ?`,
		src.Size, src.ModTimeNS, nullStr(src.PrefixHash), nullStr(src.AnchorHash), src.Offset, src.Line,
		src.PendingBytes, boolInt(src.Complete), inserted, boolInt(rewritten),
		w.now, nullStr(src.LastError), nullStr(src.HeadHash), sid); err != nil {
		return fmt.Errorf("store checkpoint: %w", err)
	}
	// The parser's state apart (migration 0031): scans read every
	// checkpoint, and only resumed reads the state.
	if len(src.ParserState) == 0 {
		_, err := w.exec(`DELETE FROM transcript_parser_states WHERE source_id = ?`, sid)
		if err != nil {
			return fmt.Errorf("store checkpoint: %w", err)
		}
		return nil
	}
	if _, err := w.exec(`INSERT INTO transcript_parser_states(source_id, state) VALUES (?, ?)
		ON CONFLICT(source_id) DO UPDATE SET state = excluded.state`, sid, string(src.ParserState)); err != nil {
		return fmt.Errorf("store checkpoint: %w", err)
	}
	return nil
}

// lastWriteWins drops records of a batch whose key appears again later in
// the same batch (the later version is what a fresh read would keep), so
// keys within one multi-row statement are unique.
func lastWriteWins(recs []cortex.ImportRecord, res *cortex.ImportResult) []cortex.ImportRecord {
	last := make(map[string]int, len(recs))
	for i := range recs {
		last[recs[i].Entry.RecordKey] = i
	}
	if len(last) == len(recs) {
		return recs
	}
	out := make([]cortex.ImportRecord, 0, len(last))
	for i := range recs {
		if last[recs[i].Entry.RecordKey] == i {
			out = append(out, recs[i])
		} else {
			res.Duplicates++
		}
	}
	return out
}

// records claims a chunk of records (unique keys) in the ledger, inserts
// the new ones and updates the changed ones.
func (w *importTx) records(b *cortex.ImportBatch, sid int64, recs []cortex.ImportRecord, res *cortex.ImportResult, ev *pendingEvents) error {
	ctx := w.ctx
	claim, err := w.stmt("claim", len(recs), claimSQL)
	if err != nil {
		return err
	}
	// Each record gets a provisional row id; the ledger returns it for
	// records it inserted and the stored id for records whose content
	// changed. Duplicates return nothing (their provisional id stays unused:
	// row ids may have gaps).
	args := make([]any, 0, 4*len(recs))
	base := w.next
	for i := range recs {
		args = append(args, sid, recs[i].Entry.RecordKey, recs[i].ContentHash, base+int64(i))
	}
	w.next += int64(len(recs))
	rows, err := claim.QueryContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("claim records: %w", err)
	}
	got := make(map[string]int64, len(recs))
	for rows.Next() {
		var key string
		var id int64
		if err := rows.Scan(&key, &id); err != nil {
			rows.Close()
			return fmt.Errorf("claim records: %w", err)
		}
		got[key] = id
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("claim records: %w", err)
	}
	var fresh []int
	for i := range recs {
		r := &recs[i]
		id, ok := got[r.Entry.RecordKey]
		switch {
		case !ok:
			res.Duplicates++
		case id == base+int64(i):
			fresh = append(fresh, i)
		default:
			old, err := w.updateRow(id, r)
			if err != nil {
				return err
			}
			w.account(b, &old, -1)
			w.account(b, &r.Entry, +1)
			ev.replaced = append(ev.replaced, id)
			ev.add(rowOf(id, b.Hostname, &r.Entry), &r.Events)
			w.changed = append(w.changed, id)
			res.Updated++
		}
	}
	for _, sp := range spans(len(fresh), insertRows) {
		part := fresh[sp[0]:sp[1]]
		ins, err := w.stmt("insert", len(part), insertSQL)
		if err != nil {
			return err
		}
		args := make([]any, 0, 23*len(part))
		for _, i := range part {
			r := &recs[i]
			e := &r.Entry
			plain, err := w.db.codec.Decode(r.Raw)
			if err != nil {
				return fmt.Errorf("raw record of line %d: %w", r.Line, err)
			}
			ref, err := w.blockRef(sid, base+int64(i), plain)
			if err != nil {
				return err
			}
			kinds, version := claimOf(r)
			var text any = e.Text
			if r.TextFromRecord {
				text = noText // read from the record (see texts.go)
			}
			args = append(args, base+int64(i), cortex.FormatTime(e.Timestamp), b.Hostname, string(e.Severity),
				string(e.Tool)+"-transcript", text, ref, w.now, b.SourceTag, string(e.Tool), nullStr(e.Project),
				nullStr(e.SessionID), nil, string(e.Role), e.Kind, nullStr(e.ToolName), nullStr(e.AgentID),
				boolInt(e.IsError), sid, r.Line, nullStr(r.Meta), kinds, version)
		}
		if _, err := ins.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("insert rows: %w", err)
		}
	}
	for _, i := range fresh {
		e := &recs[i].Entry
		ev.add(rowOf(base+int64(i), b.Hostname, e), &recs[i].Events)
		w.account(b, e, +1)
		res.Inserted++
	}
	return nil
}

// account adds (sign +1) or removes (sign -1, a replaced row) a row in the
// rollups: row counts by tool and role, and the session's counters. A
// session's first/last seen only ever widen.
func (w *importTx) account(b *cortex.ImportBatch, e *cortex.Entry, sign int64) {
	w.counts[[2]string{string(e.Tool), string(e.Role)}] += sign
	if e.SessionID == "" {
		return
	}
	k := sessionKey{string(e.Tool), e.SessionID, b.Hostname}
	a := w.sessions[k]
	ts := cortex.FormatTime(e.Timestamp)
	if a == nil {
		a = &sessionAgg{first: ts, last: ts}
		w.sessions[k] = a
	}
	if sign > 0 {
		if uuid, ok := strings.CutPrefix(e.RecordKey, "u:"); ok {
			w.leaves[uuid] = leafRow{string(e.Tool), e.SessionID, b.Hostname}
		}
		if e.Role == cortex.RoleUser && !e.Sidechain && strings.TrimSpace(e.Text) != "" && (a.promptAt == "" || ts < a.promptAt) {
			a.prompt, a.promptAt = cortex.CutUTF8(strings.Join(strings.Fields(e.Text), " "), maxPromptBytes), ts
		}
		a.first, a.last = min(a.first, ts), max(a.last, ts)
		if e.Project != "" {
			a.project = e.Project
		}
		if e.ToolVersion != "" {
			a.version = e.ToolVersion
		}
		if !e.Sidechain || a.path == "" {
			a.path = b.Source.Path
		}
	}
	a.rows += sign
	switch e.Role {
	case cortex.RoleUser:
		a.user += sign
	case cortex.RoleAssistant:
		a.assistant += sign
	case cortex.RoleToolCall:
		a.calls += sign
	}
	if e.IsError {
		a.errors += sign
	}
	if e.Sidechain {
		a.subagent += sign
	}
}

// finish queues the replaced rows for the search index (see search.go),
// writes the rollups and stores the blocks still being compressed.
func (w *importTx) finish() error {
	if err := w.flushBlock(); err != nil {
		return err
	}
	if len(w.stale) > 0 {
		// The blocks to rewrite may be ones of this transaction.
		if err := w.storeBlocks(true); err != nil {
			return err
		}
		if err := w.db.rewriteBlocks(w.ctx, w.tx, w.stale, &w.blocks.ids); err != nil {
			return err
		}
	}
	for _, id := range w.changed {
		if _, err := w.exec(`INSERT INTO search_changes(log_id) VALUES (?)`, id); err != nil {
			return fmt.Errorf("queue a changed row for search: %w", err)
		}
	}
	for k, a := range w.sessions {
		if _, err := w.exec(`INSERT INTO ai_sessions(ai_tool, ai_session_id, hostname, ai_project, first_seen, last_seen,
			rows, user_rows, assistant_rows, tool_calls, error_rows, subagent_rows, tool_version, transcript_path,
			first_prompt, first_prompt_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(ai_tool, ai_session_id, hostname) DO UPDATE SET
				first_prompt = CASE WHEN excluded.first_prompt_at IS NOT NULL AND (first_prompt_at IS NULL OR excluded.first_prompt_at < first_prompt_at)
					THEN excluded.first_prompt ELSE first_prompt END,
				first_prompt_at = CASE WHEN excluded.first_prompt_at IS NOT NULL AND (first_prompt_at IS NULL OR excluded.first_prompt_at < first_prompt_at)
					THEN excluded.first_prompt_at ELSE first_prompt_at END,
				ai_project = COALESCE(excluded.ai_project, ai_project),
				first_seen = min(first_seen, excluded.first_seen),
				last_seen = max(last_seen, excluded.last_seen),
				rows = rows + excluded.rows, user_rows = user_rows + excluded.user_rows,
				assistant_rows = assistant_rows + excluded.assistant_rows, tool_calls = tool_calls + excluded.tool_calls,
				error_rows = error_rows + excluded.error_rows, subagent_rows = subagent_rows + excluded.subagent_rows,
				tool_version = COALESCE(excluded.tool_version, tool_version),
				transcript_path = CASE WHEN excluded.subagent_rows = excluded.rows THEN transcript_path ELSE excluded.transcript_path END`,
			k.tool, k.session, k.host, nullStr(a.project), a.first, a.last, a.rows, a.user, a.assistant, a.calls,
			a.errors, a.subagent, nullStr(a.version), a.path, nullStr(a.prompt), nullStr(a.promptAt)); err != nil {
			return fmt.Errorf("update session rollup: %w", err)
		}
	}
	if err := w.attachSummaries(); err != nil {
		return fmt.Errorf("attach session summaries: %w", err)
	}
	for k, n := range w.counts {
		if _, err := w.exec(`INSERT INTO log_counts(ai_tool, ai_role, rows) VALUES (?, ?, ?)
			ON CONFLICT(ai_tool, ai_role) DO UPDATE SET rows = rows + excluded.rows`, k[0], k[1], n); err != nil {
			return fmt.Errorf("update counts: %w", err)
		}
	}
	// Last, so the rollups above overlap the compression of the last
	// blocks; they commit with their rows.
	return w.storeBlocks(true)
}

// updateRow replaces a stored row whose record changed (last write wins).
// The new record is stored on its own (a row's block is written with the
// rows of its write); the caller re-indexes its text.
func (w *importTx) updateRow(id int64, r *cortex.ImportRecord) (cortex.Entry, error) {
	ctx, tx := w.ctx, w.tx
	e := &r.Entry
	kinds, version := claimOf(r)
	plain, err := w.db.codec.Decode(r.Raw)
	if err != nil {
		return cortex.Entry{}, fmt.Errorf("raw record of line %d: %w", r.Line, err)
	}
	raw := w.db.codec.Encode(nil, plain)
	// The replaced row, to take it out of the rollups.
	var old cortex.Entry
	var tool, role, ts string
	var project, session sql.NullString
	var isErr, sidechain int
	var oldRaw []byte
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(ai_tool, ''), COALESCE(ai_role, ''), timestamp, ai_project, ai_session_id,
		is_error, COALESCE(json_extract(metadata_json, '$.sidechain'), 0), raw FROM logs WHERE id = ?`, id).Scan(
		&tool, &role, &ts, &project, &session, &isErr, &sidechain, &oldRaw); err != nil {
		return old, fmt.Errorf("read changed row: %w", err)
	}
	if b, _, ok := rawcodec.ParseRef(oldRaw); ok {
		// The earlier record stays in its block until finish rewrites it.
		if w.stale == nil {
			w.stale = map[int64]bool{}
		}
		w.stale[b] = true
	}
	old = cortex.Entry{Tool: cortex.Tool(tool), Role: cortex.Role(role), Timestamp: parseStoredTime(ts), Project: project.String,
		SessionID: session.String, IsError: isErr == 1, Sidechain: sidechain == 1}
	if _, err := tx.ExecContext(ctx, `UPDATE logs SET timestamp = ?, severity = ?, message = ?, raw = ?, ai_project = ?,
		ai_session_id = ?, ai_role = ?, ai_kind = ?, ai_tool_name = ?, ai_agent_id = ?, is_error = ?, source_line = ?,
		metadata_json = ?, claim = ?, claim_version = ? WHERE id = ?`,
		cortex.FormatTime(e.Timestamp), string(e.Severity), e.Text, raw, nullStr(e.Project), nullStr(e.SessionID),
		string(e.Role), e.Kind, nullStr(e.ToolName), nullStr(e.AgentID), boolInt(e.IsError), r.Line, nullStr(r.Meta),
		kinds, version, id); err != nil {
		return old, fmt.Errorf("update changed row: %w", err)
	}
	return old, nil
}

// claimOf is what a row stores of its text's claims (package claim): for
// an assistant row its kinds (read here unless the caller read them) and
// the rules' version; nothing for other rows.
func claimOf(r *cortex.ImportRecord) (kinds, version any) {
	if !claim.Applies(string(r.Entry.Role)) {
		return nil, nil
	}
	if !r.ClaimsRead {
		r.Claims, r.ClaimsRead = claim.Of(string(r.Entry.Role), r.Entry.Text), true
	}
	return int64(r.Claims), int64(claim.Version)
}

func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Source returns the checkpoint stored for path, or ok=false.
func (db *DB) Source(ctx context.Context, path string) (cortex.Source, bool, error) {
	row := db.r.QueryRowContext(ctx, `SELECT id, path, kind, COALESCE(ai_tool, ''), size, mtime_ns, COALESCE(prefix_hash, ''),
		COALESCE(anchor_hash, ''), last_offset, last_line,
		COALESCE((SELECT state FROM transcript_parser_states p WHERE p.source_id = transcript_sources.id), ''), pending_bytes, complete, records, rewrites,
		COALESCE(first_indexed_at, ''), COALESCE(last_indexed_at, ''), COALESCE(last_error, ''), COALESCE(head_hash, '')
		FROM transcript_sources WHERE path = ?`, path)
	s, err := scanSource(row)
	if errors.Is(err, sql.ErrNoRows) {
		return cortex.Source{}, false, nil
	}
	if err != nil {
		return cortex.Source{}, false, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read checkpoint of %s", path)
	}
	return s, true, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanSource(row scanner) (cortex.Source, error) {
	var s cortex.Source
	var tool, state, first, last string
	var complete int
	err := row.Scan(&s.ID, &s.Path, &s.Kind, &tool, &s.Size, &s.ModTimeNS, &s.PrefixHash, &s.AnchorHash, &s.Offset, &s.Line,
		&state, &s.PendingBytes, &complete, &s.Records, &s.Rewrites, &first, &last, &s.LastError, &s.HeadHash)
	if err != nil {
		return s, err
	}
	s.Tool = cortex.Tool(tool)
	s.Complete = complete == 1
	if state != "" {
		s.ParserState = []byte(state)
	}
	s.FirstIndexedAt = parseStoredTime(first)
	s.LastIndexedAt = parseStoredTime(last)
	return s, nil
}

// Sources returns every source's checkpoint keyed by path (for the
// stat-only unchanged-file check of a whole scan). ParserState is read for
// unsupported files only (what sniffed them): a parser's state can be
// large (70 MB over 37,000 transcripts; kept apart, migration 0031), and only the few files a scan
// resumes need it (read with Source).
func (db *DB) Sources(ctx context.Context) (map[string]cortex.Source, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, path, kind, COALESCE(ai_tool, ''), size, mtime_ns, COALESCE(prefix_hash, ''),
		COALESCE(anchor_hash, ''), last_offset, last_line,
		CASE WHEN kind = 'unsupported' THEN COALESCE((SELECT state FROM transcript_parser_states p WHERE p.source_id = transcript_sources.id), '') ELSE '' END,
		pending_bytes, complete, records, rewrites,
		COALESCE(first_indexed_at, ''), COALESCE(last_indexed_at, ''), COALESCE(last_error, ''), COALESCE(head_hash, '')
		FROM transcript_sources`)
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read checkpoints")
	}
	defer rows.Close()
	out := map[string]cortex.Source{}
	for rows.Next() {
		s, err := scanSource(rows)
		if err != nil {
			return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read checkpoints")
		}
		out[s.Path] = s
	}
	return out, rows.Err()
}

// CountKeys counts ledger keys of a source that start with prefix (used to
// number repeated identical records when an append resumes).
func (db *DB) CountKeys(ctx context.Context, sourceID int64, prefix string) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM transcript_import_records
		WHERE source_id = ? AND record_key >= ? AND record_key < ?`, sourceID, prefix, prefix+"\xff").Scan(&n)
	if err != nil {
		return 0, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read import ledger")
	}
	return n, nil
}

// MarkSource stores a checkpoint without records (unsupported or empty
// files, read errors), so unchanged files cost a stat on the next scan.
func (db *DB) MarkSource(ctx context.Context, s cortex.Source) error {
	_, err := db.Import(ctx, cortex.ImportBatch{Source: s})
	return err
}
