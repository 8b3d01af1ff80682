package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/transcript"
)

// RescanRow is a stored row as `cortex redact --rescan` reads it.
type RescanRow struct {
	ID         int64
	Raw        []byte // compressed as stored, or as-is (a record stored in a block)
	Message    string
	Role       string
	Transcript bool // a transcript row (raw is a JSON record)
	// FromRecord is set when Message was read from the record (see
	// texts.go): a changed record must keep it as its message.
	FromRecord bool
}

// RescanUpdate is a row whose redaction changed. A nil field is unchanged.
type RescanUpdate struct {
	ID  int64
	Raw []byte // compressed
	// ContentHash identifies the new raw record in the import ledger;
	// KeyHash, for records keyed by content ("h:…"), is the key's new
	// hash part (see transcript.ContentKey).
	ContentHash string
	KeyHash     string
	Message     *string
}

// RowsForRescan returns up to n rows with id > afterID, in id order.
func (db *DB) RowsForRescan(ctx context.Context, afterID int64, n int) ([]RescanRow, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, raw, `+textCols("")+`, COALESCE(ai_role, ''), facility = 'transcript'
		FROM logs WHERE id > ? ORDER BY id LIMIT ?`, afterID, n)
	if err != nil {
		return nil, queryFailed(err, "rows")
	}
	defer rows.Close()
	var out []RescanRow
	var texts transcript.TextReader
	for rows.Next() {
		var r RescanRow
		var t textScan
		if err := rows.Scan(append(append([]any{&r.ID, &r.Raw}, t.dest()...), &r.Role, &r.Transcript)...); err != nil {
			return nil, queryFailed(err, "rows")
		}
		raw, err := db.rowRaw(ctx, r.ID, r.Raw)
		if err != nil {
			return nil, queryFailed(err, "rows")
		}
		r.Raw, r.FromRecord = raw, t.fromRecord() && raw != nil
		if r.Message, err = t.text(db, &texts, r.ID, raw); err != nil {
			return nil, queryFailed(err, "rows")
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// ApplyRescan writes re-redacted rows in one transaction: raw records and
// their import-ledger entries (content hash; a content-keyed record's key
// follows its new content, so that a re-read of the file maps to it
// again) and messages; the rows are queued for the search index.
func (db *DB) ApplyRescan(ctx context.Context, ups []RescanUpdate) error {
	if len(ups) == 0 {
		return nil
	}
	blocks := map[int64]bool{}
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := secureDelete(ctx, tx, true); err != nil {
			return err
		}
		defer secureDelete(ctx, tx, false)
		// A re-redacted record leaves its block, which is rewritten
		// without the record's earlier bytes.
		var changed []any
		for _, u := range ups {
			if u.Raw != nil {
				changed = append(changed, u.ID)
			}
		}
		clear(blocks)
		if err := blocksOf(ctx, tx, changed, blocks); err != nil {
			return err
		}
		for _, u := range ups {
			if u.Raw != nil {
				if _, err := tx.ExecContext(ctx, `UPDATE logs SET raw = ? WHERE id = ?`, u.Raw, u.ID); err != nil {
					return err
				}
				if err := rekey(ctx, tx, u); err != nil {
					return err
				}
			}
			if u.Message != nil { // its claims are read again from the new text
				if _, err := tx.ExecContext(ctx, `UPDATE logs SET message = ?, claim_version = NULL WHERE id = ?`, *u.Message, u.ID); err != nil {
					return err
				}
			}
			if u.Raw != nil || u.Message != nil {
				// The search index reads the row again (before the files
				// are scrubbed: see Scrub).
				if _, err := tx.ExecContext(ctx, `INSERT INTO search_changes(log_id) VALUES (?)`, u.ID); err != nil {
					return err
				}
			}
		}
		return db.rewriteBlocks(ctx, tx, blocks, &blockIDs{})
	})
	db.blocks.drop(blocks)
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot write re-redacted rows: %v", err)
	}
	return nil
}

// vacuum rebuilds the file of conn (a pool of one connection) with its
// temporary copy in a file, not in memory: the connections keep
// temp_store=MEMORY for their sorts, but a copy of a 20 GB store does not
// fit in memory.
func vacuum(ctx context.Context, conn *sql.DB) error {
	if _, err := conn.ExecContext(ctx, `PRAGMA temp_store=FILE`); err != nil {
		return err
	}
	_, err := conn.ExecContext(ctx, `VACUUM`)
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA temp_store=MEMORY`); err == nil {
		err = rerr
	}
	return err
}

// rekey updates the ledger entry of a re-redacted row.
func rekey(ctx context.Context, tx *sql.Tx, u RescanUpdate) error {
	var sid sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT source_id FROM logs WHERE id = ?`, u.ID).Scan(&sid); err != nil || !sid.Valid {
		return err
	}
	var key string
	err := tx.QueryRowContext(ctx, `SELECT record_key FROM transcript_import_records WHERE source_id = ? AND log_id = ?`,
		sid.Int64, u.ID).Scan(&key)
	if err == sql.ErrNoRows {
		return nil
	}
	if err != nil {
		return err
	}
	newKey := key
	if strings.HasPrefix(key, "h:") && u.KeyHash != "" {
		// h:<hash>#<n>: the first free occurrence of the new hash.
		for n := 1; ; n++ {
			newKey = u.KeyHash + "#" + strconv.Itoa(n)
			var exists int
			err := tx.QueryRowContext(ctx, `SELECT 1 FROM transcript_import_records WHERE source_id = ? AND record_key = ?`,
				sid.Int64, newKey).Scan(&exists)
			if err == sql.ErrNoRows || newKey == key {
				break
			}
			if err != nil {
				return err
			}
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE transcript_import_records SET record_key = ?, content_hash = ? WHERE source_id = ? AND record_key = ?`,
		newKey, u.ContentHash, sid.Int64, key)
	return err
}

// redactedColumns are the stored free texts outside logs that come from
// transcripts or errors: event previews and arguments, hook commands,
// parse errors, audited LLM errors, source errors.
var redactedColumns = []struct{ table, key, column string }{
	{"ai_mcp_events", "id", "arguments_json"}, {"ai_mcp_events", "id", "output_preview"}, {"ai_mcp_events", "id", "error_text"},
	{"ai_mcp_events", "id", "why"}, {"ai_mcp_events", "id", "op"},
	{"ai_hook_events", "id", "hook_command"}, {"ai_hook_events", "id", "stdout_preview"}, {"ai_hook_events", "id", "stderr_preview"},
	{"ai_skill_events", "id", "metadata_json"}, {"ai_user_events", "id", "text"}, {"ai_user_events", "id", "metadata_json"},
	{"transcript_parse_errors", "id", "error"}, {"transcript_parse_errors", "id", "preview"},
	{"llm_invocations", "rowid", "error"}, {"transcript_sources", "id", "last_error"},
}

// RedactColumns applies fix to the stored free texts outside logs (see
// redactedColumns, and the session titles, first prompts and summaries),
// in chunks of one transaction each, and returns how many values changed
// (in a dry run: would change).
func (db *DB) RedactColumns(ctx context.Context, fix func(string) (string, bool), dryRun bool) (int64, error) {
	changed, err := db.redactSessionTexts(ctx, fix, dryRun)
	if err != nil {
		return changed, err
	}
	const chunk = 1000
	for _, c := range redactedColumns {
		isPacked := packed(c.table, c.column)
		var after int64
		for {
			rows, err := db.r.QueryContext(ctx, fmt.Sprintf(`SELECT %s, %s FROM %s WHERE %s > ? AND %s IS NOT NULL ORDER BY %s LIMIT ?`,
				c.key, c.column, c.table, c.key, c.column, c.key), after, chunk)
			if err != nil {
				return changed, queryFailed(err, c.table)
			}
			type upd struct {
				id  int64
				val string
			}
			var ups []upd
			n := 0
			for rows.Next() {
				var id int64
				var v string
				var dst any = &v
				if isPacked {
					dst = db.packedText(&v)
				}
				if err := rows.Scan(&id, dst); err != nil {
					rows.Close()
					return changed, queryFailed(err, c.table)
				}
				n++
				after = id
				if nv, ok := fix(v); ok {
					ups = append(ups, upd{id, nv})
				}
			}
			err = rows.Err()
			rows.Close()
			if err != nil {
				return changed, queryFailed(err, c.table)
			}
			changed += int64(len(ups))
			if len(ups) > 0 && !dryRun {
				err := db.write(ctx, func(tx *sql.Tx) error {
					if err := secureDelete(ctx, tx, true); err != nil {
						return err
					}
					defer secureDelete(ctx, tx, false)
					set := c.column + " = ?"
					if c.table == "ai_mcp_events" && c.column != "why" && c.column != "op" {
						set += ", facts_version = NULL" // derived from the old text: derived again
					}
					for _, u := range ups {
						var val any = u.val
						if isPacked {
							val = db.packText(u.val)
						}
						if _, err := tx.ExecContext(ctx, fmt.Sprintf(`UPDATE %s SET %s WHERE %s = ?`, c.table, set, c.key), val, u.id); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					return changed, cortex.WrapError(cortex.CodeUnavailable, err, "cannot re-redact %s.%s: %v", c.table, c.column, err)
				}
			}
			if n < chunk {
				break
			}
		}
	}
	return changed, nil
}

// sessionTexts are the texts keyed by text (tables without an integer
// key): the sessions' titles and first prompts, the summaries titles come
// from. A session row's key is its rowid-less primary key, so these are
// rewritten by value: every row holding the old text gets the new one.
var sessionTexts = []struct{ table, column string }{
	{"ai_sessions", "title"}, {"ai_sessions", "first_prompt"}, {"ai_session_summaries", "summary"},
}

// redactSessionTexts applies fix to sessionTexts (one transaction per
// column; there is one value per session at most).
func (db *DB) redactSessionTexts(ctx context.Context, fix func(string) (string, bool), dryRun bool) (int64, error) {
	var changed int64
	for _, c := range sessionTexts {
		rows, err := db.r.QueryContext(ctx, fmt.Sprintf(`SELECT DISTINCT %s FROM %s WHERE %s IS NOT NULL`, c.column, c.table, c.column))
		if err != nil {
			return changed, queryFailed(err, c.table)
		}
		ups := map[string]string{}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return changed, queryFailed(err, c.table)
			}
			if nv, ok := fix(v); ok {
				ups[v] = nv
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return changed, queryFailed(err, c.table)
		}
		changed += int64(len(ups))
		if len(ups) == 0 || dryRun {
			continue
		}
		err = db.write(ctx, func(tx *sql.Tx) error {
			if err := secureDelete(ctx, tx, true); err != nil {
				return err
			}
			defer secureDelete(ctx, tx, false)
			for old, nv := range ups {
				if _, err := tx.ExecContext(ctx, fmt.Sprintf(`UPDATE %s SET %s = ? WHERE %s = ?`, c.table, c.column, c.column), nv, old); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return changed, cortex.WrapError(cortex.CodeUnavailable, err, "cannot re-redact %s.%s: %v", c.table, c.column, err)
		}
	}
	return changed, nil
}

// secureDelete turns SQLite's secure_delete on (or off) on the writer
// connection: content deleted or overwritten while it is on is zeroed in
// the file, not left in free pages.
func secureDelete(ctx context.Context, tx *sql.Tx, on bool) error {
	v := "OFF"
	if on {
		v = "ON"
	}
	_, err := tx.ExecContext(ctx, "PRAGMA secure_delete = "+v)
	return err
}

// Scrub makes deletions and rewrites final in the files: the search index
// applies the queued changes (deleted rows leave it, rewritten rows are
// indexed again) and is merged into fresh segments (terms of deleted or
// rewritten rows disappear from it) with secure_delete on; both files are
// rebuilt (VACUUM) so that no free or unused space still holds old
// content, and their write-ahead logs are checkpointed and truncated so
// that no old page image survives there. Maintenance (purge, rescan) calls
// it last; it needs free disk space of the database's size when it
// rebuilds.
func (db *DB) Scrub(ctx context.Context) error {
	if _, err := db.IndexSearch(ctx, nil); err != nil {
		return err
	}
	err := db.searchWrite(ctx, func(tx *sql.Tx) error {
		if err := secureDelete(ctx, tx, true); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO search_fts(search_fts) VALUES ('optimize')`); err != nil {
			return err
		}
		return secureDelete(ctx, tx, false)
	})
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot compact the search index: %v", err)
	}
	if err := db.PruneSearchChanges(ctx); err != nil {
		return err
	}
	db.searchMu.Lock()
	defer db.searchMu.Unlock()
	for _, c := range []struct {
		conn *sql.DB
		name string
	}{{db.sw, "search index"}, {db.w, "database"}} {
		if c.conn == db.w {
			db.wmu.Lock()
		}
		// Pages freed earlier (by ingest's own index merges, say) and the
		// unused space of live pages still hold what they held: the file
		// is rebuilt from the live content only.
		err := vacuum(ctx, c.conn)
		if err == nil {
			_, err = c.conn.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
		}
		if c.conn == db.w {
			db.wmu.Unlock()
		}
		if err != nil {
			return cortex.WrapError(cortex.CodeUnavailable, err, "cannot rebuild the %s file (VACUUM) and checkpoint it: %v", c.name, err)
		}
	}
	return nil
}
