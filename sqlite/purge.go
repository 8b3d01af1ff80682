package sqlite

import (
	"context"
	"database/sql"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/transcript"
)

// PurgeSelector says which rows to purge: those of a session, of a
// transcript file, or whose text or raw record contains a literal.
// Exactly one of Session, Source and Match is set; Tool narrows Session
// and Match.
type PurgeSelector struct {
	Session string
	Source  string
	Tool    cortex.Tool
	// Match reports whether a row (its message and decompressed raw
	// record) is to be purged; it is asked of every row.
	Match func(message string, raw []byte) bool
	// KeepFile skips the rebuild of the files (Scrub) after the delete:
	// the rows are gone from every table and index, but their bytes may
	// remain in free pages. Only for data that is not sensitive, such as
	// a benchmark's own session on a store too large to rebuild for it.
	KeepFile bool
}

// PurgeResult reports a purge (in a dry run: what it would delete).
type PurgeResult struct {
	DryRun   bool  `json:"dry_run"`
	Rows     int64 `json:"rows"`
	Events   int64 `json:"events"`
	Sessions int64 `json:"sessions"`
	// SessionsRemoved lost all their rows.
	SessionsRemoved int64 `json:"sessions_removed"`
	ParseErrors     int64 `json:"parse_errors"`
	Scanned         int64 `json:"scanned_rows,omitempty"`
}

type purgeRow struct {
	id                     int64
	tool, role, sess, host string
}

// purgeChunk is the rows deleted per transaction.
const purgeChunk = 500

// Purge deletes the selected rows with everything derived from them —
// full-text entries, skill, tool-call and hook events — and corrects the
// session and count rollups, purgeChunk rows per transaction. The import
// ledger keeps its claims, so an unchanged transcript does not bring the
// rows back; a purged source keeps its checkpoint for the same reason.
// decode decompresses raw records for Match.
func (db *DB) Purge(ctx context.Context, sel PurgeSelector, decode func([]byte) ([]byte, error), dryRun bool) (PurgeResult, error) {
	res := PurgeResult{DryRun: dryRun}
	rows, sourceID, err := db.purgeRows(ctx, sel, decode, &res)
	if err != nil {
		return res, err
	}
	res.Rows = int64(len(rows))
	sessions := map[[3]string]bool{}
	for _, r := range rows {
		if r.sess != "" {
			sessions[[3]string{r.tool, r.sess, r.host}] = true
		}
	}
	res.Sessions = int64(len(sessions))
	if sourceID > 0 {
		if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM transcript_parse_errors WHERE source_id = ?`, sourceID).Scan(&res.ParseErrors); err != nil {
			return res, queryFailed(err, "parse errors")
		}
	}
	if dryRun {
		for len(rows) > 0 {
			n := min(len(rows), idChunk)
			var k int64
			ids := idArgs(purgeIDs(rows[:n]))
			q := `SELECT (SELECT count(*) FROM ai_skill_events WHERE log_id IN (` + marks(n) + `)) +
				(SELECT count(*) FROM ai_hook_events WHERE log_id IN (` + marks(n) + `)) +
				(SELECT count(*) FROM ai_user_events WHERE log_id IN (` + marks(n) + `)) +
				(SELECT count(*) FROM ai_mcp_events WHERE call_log_id IN (` + marks(n) + `) OR result_log_id IN (` + marks(n) + `))`
			if err := db.r.QueryRowContext(ctx, q, append(append(append(append(ids, ids...), ids...), ids...), ids...)...).Scan(&k); err != nil {
				return res, queryFailed(err, "events")
			}
			res.Events += k
			rows = rows[n:]
		}
		return res, nil
	}
	for len(rows) > 0 {
		n := min(len(rows), purgeChunk)
		part := rows[:n]
		blocks := map[int64]bool{}
		err := db.write(ctx, func(tx *sql.Tx) error {
			if err := secureDelete(ctx, tx, true); err != nil {
				return err
			}
			defer secureDelete(ctx, tx, false)
			ids := idArgs(purgeIDs(part))
			in := `(` + marks(n) + `)`
			// The search index takes them out (before the files are
			// scrubbed: see Scrub).
			for _, p := range part {
				if _, err := tx.ExecContext(ctx, `INSERT INTO search_changes(log_id) VALUES (?)`, p.id); err != nil {
					return err
				}
			}
			for _, table := range []string{"ai_skill_events", "ai_hook_events", "ai_user_events"} {
				r, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE log_id IN `+in, ids...)
				if err != nil {
					return err
				}
				k, _ := r.RowsAffected()
				res.Events += k
			}
			r, err := tx.ExecContext(ctx, `DELETE FROM ai_mcp_events WHERE call_log_id IN `+in+` OR result_log_id IN `+in, append(ids, ids...)...)
			if err != nil {
				return err
			}
			k, _ := r.RowsAffected()
			res.Events += k
			counts := map[[2]string]int64{}
			for _, p := range part {
				counts[[2]string{p.tool, p.role}]++
			}
			for c, k := range counts {
				if _, err := tx.ExecContext(ctx, `UPDATE log_counts SET rows = max(0, rows - ?) WHERE ai_tool = ? AND ai_role = ?`, k, c[0], c[1]); err != nil {
					return err
				}
			}
			// The blocks that hold the rows' raw records are rewritten
			// without them.
			clear(blocks)
			if err := blocksOf(ctx, tx, ids, blocks); err != nil {
				return err
			}
			if _, err = tx.ExecContext(ctx, `DELETE FROM logs WHERE id IN `+in, ids...); err != nil {
				return err
			}
			return db.rewriteBlocks(ctx, tx, blocks, &blockIDs{})
		})
		db.blocks.drop(blocks)
		if err != nil {
			return res, cortex.WrapError(cortex.CodeUnavailable, err, "cannot purge rows: %v", err)
		}
		rows = rows[n:]
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		if err := secureDelete(ctx, tx, true); err != nil {
			return err
		}
		defer secureDelete(ctx, tx, false)
		if err := purgeSummaries(ctx, tx, sel, sourceID, sessions); err != nil {
			return err
		}
		for s := range sessions {
			removed, err := recountSession(ctx, tx, s)
			if err != nil {
				return err
			}
			if removed {
				res.SessionsRemoved++
			}
		}
		if sourceID > 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM transcript_parse_errors WHERE source_id = ?`, sourceID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return res, cortex.WrapError(cortex.CodeUnavailable, err, "cannot update the session rollups: %v", err)
	}
	if sel.KeepFile {
		return res, nil
	}
	return res, db.Scrub(ctx)
}

func purgeIDs(rows []purgeRow) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.id
	}
	return ids
}

// purgeRows finds the rows a selector names.
func (db *DB) purgeRows(ctx context.Context, sel PurgeSelector, decode func([]byte) ([]byte, error), res *PurgeResult) ([]purgeRow, int64, error) {
	const cols = `l.id, COALESCE(l.ai_tool, ''), COALESCE(l.ai_role, ''), COALESCE(l.ai_session_id, ''), l.hostname`
	scan := func(rs *sql.Rows) (purgeRow, error) {
		var r purgeRow
		err := rs.Scan(&r.id, &r.tool, &r.role, &r.sess, &r.host)
		return r, err
	}
	var out []purgeRow
	collect := func(q string, args ...any) error {
		rs, err := db.r.QueryContext(ctx, q, args...)
		if err != nil {
			return queryFailed(err, "rows")
		}
		defer rs.Close()
		for rs.Next() {
			r, err := scan(rs)
			if err != nil {
				return queryFailed(err, "rows")
			}
			out = append(out, r)
		}
		return rs.Err()
	}
	switch {
	case sel.Session != "":
		q := `SELECT ` + cols + ` FROM logs l WHERE l.ai_session_id = ?`
		args := []any{sel.Session}
		if sel.Tool != "" {
			q += ` AND l.ai_tool = ?`
			args = append(args, string(sel.Tool))
		}
		return out, 0, collect(q+` ORDER BY l.id`, args...)
	case sel.Source != "":
		var sid int64
		err := db.r.QueryRowContext(ctx, `SELECT id FROM transcript_sources WHERE path = ?`, sel.Source).Scan(&sid)
		if err == sql.ErrNoRows {
			return nil, 0, cortex.Errorf(cortex.CodeNotFound, "no indexed transcript at %s (see cortex status)", sel.Source)
		}
		if err != nil {
			return nil, 0, queryFailed(err, "sources")
		}
		err = collect(`SELECT `+cols+` FROM transcript_import_records r JOIN logs l ON l.id = r.log_id WHERE r.source_id = ? ORDER BY l.id`, sid)
		return out, sid, err
	case sel.Match != nil:
		var after int64
		var texts transcript.TextReader
		for {
			rs, err := db.r.QueryContext(ctx, `SELECT `+cols+`, `+textCols("l.")+`, l.raw FROM logs l WHERE l.id > ? ORDER BY l.id LIMIT 2000`, after)
			if err != nil {
				return nil, 0, queryFailed(err, "rows")
			}
			n := 0
			for rs.Next() {
				var r purgeRow
				var t textScan
				var raw []byte
				if err := rs.Scan(append(append([]any{&r.id, &r.tool, &r.role, &r.sess, &r.host}, t.dest()...), &raw)...); err != nil {
					rs.Close()
					return nil, 0, queryFailed(err, "rows")
				}
				n++
				after = r.id
				res.Scanned++
				if sel.Tool != "" && r.tool != string(sel.Tool) {
					continue
				}
				if r, err := db.rowRaw(ctx, r.id, raw); err == nil {
					raw = r
				} else {
					rs.Close()
					return nil, 0, queryFailed(err, "rows")
				}
				if len(raw) > 0 && decode != nil {
					if d, err := decode(raw); err == nil {
						raw = d
					}
				}
				msg, err := t.text(db, &texts, r.id, raw)
				if err != nil {
					rs.Close()
					return nil, 0, queryFailed(err, "rows")
				}
				if sel.Match(msg, raw) {
					out = append(out, r)
				}
			}
			err = rs.Err()
			rs.Close()
			if err != nil {
				return nil, 0, queryFailed(err, "rows")
			}
			if n < 2000 {
				return out, 0, nil
			}
		}
	}
	return nil, 0, cortex.Errorf(cortex.CodeInvalid, "purge needs a session, a source or a match")
}

// recountSession recomputes a session's rollup from its remaining rows, or
// deletes it when none are left.
func recountSession(ctx context.Context, tx *sql.Tx, s [3]string) (removed bool, err error) {
	var rows, user, assistant, calls, errs, sub int64
	var first, last sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT count(*), COALESCE(sum(ai_role = 'user'), 0), COALESCE(sum(ai_role = 'assistant'), 0),
		COALESCE(sum(ai_role = 'tool_call'), 0), COALESCE(sum(is_error), 0),
		COALESCE(sum(json_extract(metadata_json, '$.sidechain') IS NOT NULL), 0), min(timestamp), max(timestamp)
		FROM logs WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ?`, s[1], s[0], s[2]).
		Scan(&rows, &user, &assistant, &calls, &errs, &sub, &first, &last)
	if err != nil {
		return false, err
	}
	if rows == 0 {
		for _, table := range []string{"ai_sessions", "ai_token_usage", "ai_session_summaries"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE ai_tool = ? AND ai_session_id = ? AND hostname = ?`, s[0], s[1], s[2]); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	// The first prompt and the title may have been purged: take them again
	// from what is left (what the user typed keeps its message: see
	// transcript.TextFromRecord).
	var prompt, promptAt, title sql.NullString
	err = tx.QueryRowContext(ctx, `SELECT message, timestamp FROM logs WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ?
		AND ai_role = 'user' AND json_extract(metadata_json, '$.sidechain') IS NULL AND trim(message) <> ''
		ORDER BY timestamp, id LIMIT 1`, s[1], s[0], s[2]).Scan(&prompt, &promptAt)
	if err != nil && err != sql.ErrNoRows {
		return false, err
	}
	if prompt.Valid {
		prompt.String = cortex.CutUTF8(strings.Join(strings.Fields(prompt.String), " "), maxPromptBytes)
	}
	err = tx.QueryRowContext(ctx, `SELECT summary FROM ai_session_summaries WHERE ai_tool = ? AND ai_session_id = ? AND hostname = ?
		ORDER BY seen_at DESC LIMIT 1`, s[0], s[1], s[2]).Scan(&title)
	if err != nil && err != sql.ErrNoRows {
		return false, err
	}
	_, err = tx.ExecContext(ctx, `UPDATE ai_sessions SET rows = ?, user_rows = ?, assistant_rows = ?, tool_calls = ?, error_rows = ?,
		subagent_rows = ?, first_seen = ?, last_seen = ?, first_prompt = ?, first_prompt_at = ?, title = ?
		WHERE ai_tool = ? AND ai_session_id = ? AND hostname = ?`,
		rows, user, assistant, calls, errs, sub, first.String, last.String, prompt, promptAt, title, s[0], s[1], s[2])
	return false, err
}

// purgeSummaries deletes the session summaries a purge names — those read
// from a purged transcript file, or whose text matches — and adds the
// sessions they titled to sessions, so their titles are taken again.
func purgeSummaries(ctx context.Context, tx *sql.Tx, sel PurgeSelector, sourceID int64, sessions map[[3]string]bool) error {
	if sourceID == 0 && sel.Match == nil {
		return nil // a session's summaries go with it (recountSession)
	}
	rs, err := tx.QueryContext(ctx, `SELECT leaf_uuid, summary, source_id, COALESCE(ai_tool, ''), COALESCE(ai_session_id, ''),
		COALESCE(hostname, '') FROM ai_session_summaries`)
	if err != nil {
		return err
	}
	var leaves []string
	for rs.Next() {
		var leaf, text string
		var src sql.NullInt64
		var k [3]string
		if err := rs.Scan(&leaf, &text, &src, &k[0], &k[1], &k[2]); err != nil {
			rs.Close()
			return err
		}
		if (sourceID > 0 && src.Int64 == sourceID) || (sel.Match != nil && (sel.Tool == "" || k[0] == string(sel.Tool)) && sel.Match(text, nil)) {
			leaves = append(leaves, leaf)
			if k[1] != "" {
				sessions[k] = true
			}
		}
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return err
	}
	for _, leaf := range leaves {
		if _, err := tx.ExecContext(ctx, `DELETE FROM ai_session_summaries WHERE leaf_uuid = ?`, leaf); err != nil {
			return err
		}
	}
	return nil
}
