package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/transcript"
)

// The reads and writes of cortex push on the pushing (local) store: rows
// by id in the tables it copies, the change log (migrations 0022 to 0024),
// the session rollups, and which team stores received which changes.

// StoreID returns this store's identity (made by migration 0022).
func (db *DB) StoreID(ctx context.Context) (string, error) {
	var id string
	if err := db.r.QueryRowContext(ctx, `SELECT value FROM store_info WHERE key = 'store_id'`).Scan(&id); err != nil {
		return "", queryFailed(err, "store identity")
	}
	return id, nil
}

func pushTable(t store.Table) error {
	if !slices.ContainsFunc(store.PushTables, func(p store.Table) bool { return p.Name == t.Name }) {
		return cortex.Errorf(cortex.CodeInternal, "table %q is not pushed", t.Name)
	}
	return nil
}

func scanAny(rows *sql.Rows, n int) ([][]any, error) {
	var out [][]any
	for rows.Next() {
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// exportColumns lists t's columns, NULL for those in skip. A logs row's
// transcript path comes from its source when the row does not repeat it
// (see transcriptPathOf): the team store receives it on every row.
func exportColumns(t store.Table, skip []string) string {
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = c
		switch {
		case slices.Contains(skip, c):
			cols[i] = "NULL"
		case t.Name == "logs" && c == "ai_transcript_path":
			cols[i] = `COALESCE(ai_transcript_path, (SELECT s.path FROM transcript_sources s WHERE s.id = logs.source_id))`
		}
	}
	return strings.Join(cols, ", ")
}

// ExportRows returns at most limit rows of t with id > afterID and id <=
// upTo, in id order, each as its columns' values (int64, float64, string,
// []byte or nil; NULL for the columns in skip, which are not read).
func (db *DB) ExportRows(ctx context.Context, t store.Table, afterID, upTo int64, limit int, skip ...string) ([][]any, error) {
	if err := pushTable(t); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+exportColumns(t, skip)+` FROM `+t.Name+
		` WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`, afterID, upTo, limit)
	if err != nil {
		return nil, queryFailed(err, t.Name)
	}
	defer rows.Close()
	out, err := scanAny(rows, len(t.Columns))
	if err != nil {
		return nil, queryFailed(err, t.Name)
	}
	if err := db.exportDecoded(ctx, t, out); err != nil {
		return nil, err
	}
	return out, nil
}

// exportDecoded gives exported rows what their stored values say: packed
// texts decoded (see packText), raw records per record (see exportRaw).
func (db *DB) exportDecoded(ctx context.Context, t store.Table, rows [][]any) error {
	for _, c := range packedColumns[t.Name] {
		i := t.Index(c)
		if i < 0 {
			continue
		}
		for _, r := range rows {
			if r[i] == nil {
				continue
			}
			s, err := unpackText(db.codec, r[i])
			if err != nil {
				return queryFailed(err, t.Name)
			}
			r[i] = s
		}
	}
	return db.exportRaw(ctx, t, rows)
}

// exportRaw gives the rows of a table with a raw column their records as
// a per-record value (a zstd frame or the record as-is), in place of a
// reference into a block: a team store receives records one by one.
//
// A logs row whose text is read from its record (see texts.go) gets its
// text as its message: a team store keeps its messages.
func (db *DB) exportRaw(ctx context.Context, t store.Table, rows [][]any) error {
	if t.Raw == "" {
		return nil
	}
	col, idCol := t.Index(t.Raw), t.Index("id")
	msg := -1
	if t.Name == "logs" {
		msg = t.Index("message")
	}
	tool, name := t.Index("ai_tool"), t.Index("ai_tool_name")
	var texts transcript.TextReader
	for _, r := range rows {
		id, _ := r[idCol].(int64)
		b, _ := r[col].([]byte)
		rec := b // the row's record, per record
		if rawcodec.IsRef(b) {
			var err error
			if rec, err = db.rowRaw(ctx, id, b); err != nil {
				return queryFailed(err, t.Name)
			}
			r[col] = nil // purged since the row was read
			if rec != nil {
				r[col] = db.codec.Encode(nil, rec)
			}
		}
		if m, ok := exportValue(r, msg).([]byte); !ok || len(m) != 0 {
			continue // not a text read from its record
		}
		var text string
		var err error
		switch {
		case b == nil: // the record is not exported: read it for the text
			text, err = db.rowText(ctx, id)
		case rec != nil:
			text, err = db.readText(&texts, id, exportString(r, tool), exportString(r, name), rec)
		}
		if err != nil {
			return queryFailed(err, t.Name)
		}
		r[msg] = text
	}
	return nil
}

// exportValue is column i of an exported row (nil when i < 0).
func exportValue(r []any, i int) any {
	if i < 0 {
		return nil
	}
	return r[i]
}

// exportString is column i of an exported row as a string ("" for NULL).
func exportString(r []any, i int) string {
	switch v := exportValue(r, i).(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// ExportRowsByID returns the rows of t with the given ids (unknown ids are
// skipped), in id order (NULL for the columns in skip).
func (db *DB) ExportRowsByID(ctx context.Context, t store.Table, ids []int64, skip ...string) ([][]any, error) {
	if err := pushTable(t); err != nil {
		return nil, err
	}
	var out [][]any
	for len(ids) > 0 {
		n := min(len(ids), idChunk)
		rows, err := db.r.QueryContext(ctx, `SELECT `+exportColumns(t, skip)+` FROM `+t.Name+
			` WHERE id IN (`+marks(n)+`) ORDER BY id`, idArgs(ids[:n])...)
		if err != nil {
			return nil, queryFailed(err, t.Name)
		}
		part, err := scanAny(rows, len(t.Columns))
		rows.Close()
		if err != nil {
			return nil, queryFailed(err, t.Name)
		}
		if err := db.exportDecoded(ctx, t, part); err != nil {
			return nil, err
		}
		out = append(out, part...)
		ids = ids[n:]
	}
	return out, nil
}

// MaxIDs returns the largest row id of each pushed table, and the newest
// change.
func (db *DB) MaxIDs(ctx context.Context) (map[string]int64, int64, error) {
	out := map[string]int64{}
	for _, t := range store.PushTables {
		var n int64
		if err := db.r.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM `+t.Name).Scan(&n); err != nil {
			return nil, 0, queryFailed(err, t.Name)
		}
		out[t.Name] = n
	}
	var seq int64
	if err := db.r.QueryRowContext(ctx, `SELECT COALESCE(max(seq), 0) FROM push_changes`).Scan(&seq); err != nil {
		return nil, 0, queryFailed(err, "changes")
	}
	return out, seq, nil
}

// Changes returns at most limit changes with afterSeq < seq <= upTo, in
// order.
func (db *DB) Changes(ctx context.Context, afterSeq, upTo int64, limit int) ([]store.Change, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT seq, tbl, row_id, COALESCE(ai_tool, ''), COALESCE(ai_session_id, ''),
		COALESCE(hostname, '') FROM push_changes WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`, afterSeq, upTo, limit)
	return collect(rows, err, "changes", func(rows *sql.Rows) (store.Change, error) {
		var c store.Change
		var tool string
		err := rows.Scan(&c.Seq, &c.Table, &c.ID, &tool, &c.Session.Session, &c.Session.Host)
		c.Session.Tool = cortex.Tool(tool)
		return c, err
	})
}

// ExportSessions returns the rollup rows (store.SessionColumns) of the
// given sessions.
func (db *DB) ExportSessions(ctx context.Context, keys []store.SessionScope) ([][]any, error) {
	var out [][]any
	for len(keys) > 0 {
		n := min(len(keys), idChunk/3)
		var cond []string
		var args []any
		for _, k := range keys[:n] {
			cond = append(cond, "(ai_tool = ? AND ai_session_id = ? AND hostname = ?)")
			args = append(args, string(k.Tool), k.Session, k.Host)
		}
		rows, err := db.r.QueryContext(ctx, `SELECT `+strings.Join(store.SessionColumns, ", ")+` FROM ai_sessions WHERE `+
			strings.Join(cond, " OR "), args...)
		if err != nil {
			return nil, queryFailed(err, "sessions")
		}
		part, err := scanAny(rows, len(store.SessionColumns))
		rows.Close()
		if err != nil {
			return nil, queryFailed(err, "sessions")
		}
		out = append(out, part...)
		keys = keys[n:]
	}
	return out, nil
}

// PushSnapshot returns what a push sends about this store as a whole.
func (db *DB) PushSnapshot(ctx context.Context) (store.PushSnapshot, error) {
	st, err := db.Status(ctx)
	if err != nil {
		return store.PushSnapshot{}, err
	}
	return store.PushSnapshot{Sources: st.Sources, ParseErrors: st.ParseErrors, RecentErrors: st.RecentErrors,
		UnknownTypes: st.UnknownTypes, LastIndexedAt: st.LastIndexedAt, LogIngest: st.LogIngest}, nil
}

// MarkPushed records that the team store target has received the changes
// up to seq, and prunes the changes every known team store has received.
func (db *DB) MarkPushed(ctx context.Context, target string, seq int64) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO push_targets(target, change_seq, pushed_at) VALUES (?, ?, ?)
			ON CONFLICT(target) DO UPDATE SET change_seq = max(change_seq, excluded.change_seq), pushed_at = excluded.pushed_at`,
			target, seq, cortex.FormatTime(db.now())); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM push_changes WHERE seq <= (SELECT min(change_seq) FROM push_targets)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("record the push: %w", err)
	}
	return nil
}
