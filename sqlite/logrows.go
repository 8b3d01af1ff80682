package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
)

// LogRow is one non-AI log row (a syslog message or a line of an imported
// log file) on its way into the store. It is stored with ai_tool NULL, so
// the incident engine's nearby_logs / nearby_errors see it.
type LogRow struct {
	// Timestamp is the message's own time, or its receipt time when it
	// states none (the row's metadata then says timestamp_estimated).
	Timestamp time.Time
	// ReceivedAt is when Cortex received the message (zero: the store's
	// clock at commit).
	ReceivedAt time.Time
	Hostname   string
	// Facility is the syslog facility keyword (kern, user, daemon,
	// local0 …), or "".
	Facility string
	// Severity is in the one vocabulary (empty: info).
	Severity cortex.Severity
	AppName  string
	// Message is the redacted, searchable text.
	Message string
	// Raw is the redacted original message or line, encoded by rawcodec.
	Raw []byte
	// Source names where the row came from: "syslog:udp", "syslog:tcp",
	// "file:<path>".
	Source string
	// Meta is the row's metadata_json ("" for none).
	Meta string
	// Malformed marks a message that could not be parsed: it is stored
	// whole as Message, with a parse-error note in Meta.
	Malformed bool
	// Key is the row's import-ledger key inside its file (file imports
	// only); Line its line number.
	Key  string
	Line int64
}

// LogBatch is one write transaction of a log-file import: rows of one file
// plus the checkpoint to store with them (see cortex.ImportBatch).
type LogBatch struct {
	// Source is the checkpoint after this batch; Source.Path is the key
	// ("file:<absolute path>"), Source.Kind the log format ("log:syslog",
	// "log:json", "log:journald-json").
	Source cortex.Source
	// Reset clears the source's parse errors: the file is re-read from
	// its start. Rewritten counts a detected rewrite.
	Reset     bool
	Rewritten bool
	Rows      []LogRow
}

// LogImportResult reports what a LogBatch did.
type LogImportResult struct {
	SourceID   int64
	Inserted   int64
	Duplicates int64
}

// Counter sources of the log receivers.
const (
	CounterSyslogUDP = "syslog:udp"
	CounterSyslogTCP = "syslog:tcp"
	CounterFile      = "file"
)

const logRowColumns = `(id, timestamp, hostname, facility, severity, app_name, message, raw, received_at, source,
	source_id, source_line, metadata_json)`

func logInsertSQL(n int) string {
	return `INSERT INTO logs` + logRowColumns + ` VALUES ` + repeatValues(n, "(?,?,?,?,?,?,?,?,?,?,?,?,?)")
}

func logClaimSQL(n int) string {
	return `INSERT INTO transcript_import_records(source_id, record_key, content_hash, log_id) VALUES ` +
		repeatValues(n, "(?,?,?,?)") + `
		ON CONFLICT(source_id, record_key) DO NOTHING
		RETURNING record_key, log_id`
}

// InsertLogs stores syslog rows (no import ledger: every message is a new
// row) with their full-text entries, and adds counters (deltas by source)
// to the receivers' totals, in one transaction. Rows may be empty to store
// counters alone. It returns the rows inserted.
func (db *DB) InsertLogs(ctx context.Context, rows []LogRow, counters []cortex.LogIngestCounters) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		n = 0
		w, err := newImportTx(ctx, db, tx, db.now())
		if err != nil {
			return err
		}
		defer w.close()
		ids := make([]int64, len(rows))
		for i := range rows {
			ids[i] = w.next
			w.next++
		}
		if err := w.insertLogRows(rows, ids, 0); err != nil {
			return err
		}
		n = int64(len(rows))
		if err := w.addCounters(counters); err != nil {
			return err
		}
		return w.finish()
	})
	if err != nil {
		return 0, logWriteErr(err, "syslog messages")
	}
	return n, nil
}

// ImportLogs writes log-file batches in one transaction: for each, the
// ledger claims (a line already stored is skipped), the new rows and the
// checkpoint; then the full-text entries and the "file"
// counters. Either everything commits or nothing does.
func (db *DB) ImportLogs(ctx context.Context, bs []LogBatch) ([]LogImportResult, error) {
	var res []LogImportResult
	err := db.write(ctx, func(tx *sql.Tx) error {
		res = make([]LogImportResult, len(bs))
		w, err := newImportTx(ctx, db, tx, db.now())
		if err != nil {
			return err
		}
		defer w.close()
		var c cortex.LogIngestCounters
		c.Source = CounterFile
		for i := range bs {
			if err := w.logBatch(&bs[i], &res[i]); err != nil {
				return err
			}
			c.Received += int64(len(bs[i].Rows))
			c.Stored += res[i].Inserted
			for j := range bs[i].Rows {
				if bs[i].Rows[j].Malformed {
					c.Malformed++
				}
			}
		}
		if err := w.addCounters([]cortex.LogIngestCounters{c}); err != nil {
			return err
		}
		return w.finish()
	})
	if err != nil {
		path := ""
		if len(bs) > 0 {
			path = bs[0].Source.Path
		}
		return nil, logWriteErr(err, path)
	}
	return res, nil
}

func logWriteErr(err error, what string) error {
	var ce *cortex.Error
	if errors.As(err, &ce) {
		return err
	}
	if isConstraint(err) {
		return cortex.WrapError(cortex.CodeInvalid, err, "log rows of %s were rejected by the store: %v", what, err)
	}
	return cortex.WrapError(cortex.CodeUnavailable, err, "cannot store log rows (%s): %v", what, err)
}

// logBatch writes one log-file batch: source, claims, rows and checkpoint.
func (w *importTx) logBatch(b *LogBatch, res *LogImportResult) error {
	src := &b.Source
	sid, err := w.registerSource(src)
	if err != nil {
		return err
	}
	res.SourceID = sid
	if b.Reset {
		if _, err := w.exec("DELETE FROM transcript_parse_errors WHERE source_id = ?", sid); err != nil {
			return fmt.Errorf("reset parse errors: %w", err)
		}
	}
	for _, sp := range spans(len(b.Rows), claimChunk) {
		rows := b.Rows[sp[0]:sp[1]]
		claim, err := w.stmt("logclaim", len(rows), logClaimSQL)
		if err != nil {
			return err
		}
		base := w.next
		w.next += int64(len(rows))
		args := make([]any, 0, 4*len(rows))
		for i := range rows {
			args = append(args, sid, rows[i].Key, rows[i].Key, base+int64(i))
		}
		got, err := claimed(w.ctx, claim, args)
		if err != nil {
			return err
		}
		var fresh []LogRow
		var ids []int64
		for i := range rows {
			if id, ok := got[rows[i].Key]; ok && id == base+int64(i) {
				fresh = append(fresh, rows[i])
				ids = append(ids, id)
			} else {
				res.Duplicates++
			}
		}
		if err := w.insertLogRows(fresh, ids, sid); err != nil {
			return err
		}
		res.Inserted += int64(len(fresh))
	}
	return w.storeCheckpoint(src, sid, res.Inserted, b.Rewritten)
}

// claimed runs a ledger claim and returns the ids of the keys it inserted.
func claimed(ctx context.Context, claim *sql.Stmt, args []any) (map[string]int64, error) {
	rows, err := claim.QueryContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("claim log lines: %w", err)
	}
	defer rows.Close()
	got := map[string]int64{}
	for rows.Next() {
		var key string
		var id int64
		if err := rows.Scan(&key, &id); err != nil {
			return nil, fmt.Errorf("claim log lines: %w", err)
		}
		got[key] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("claim log lines: %w", err)
	}
	return got, nil
}

// insertLogRows inserts rows with the given ids (sid is the file source,
// 0 for syslog); the search indexer reads their messages later.
func (w *importTx) insertLogRows(rows []LogRow, ids []int64, sid int64) error {
	for _, sp := range spans(len(rows), insertRows) {
		part := rows[sp[0]:sp[1]]
		ins, err := w.stmt("loginsert", len(part), logInsertSQL)
		if err != nil {
			return err
		}
		args := make([]any, 0, 13*len(part))
		for i := range part {
			r := &part[i]
			sev := r.Severity
			if sev == "" {
				sev = cortex.SevInfo
			}
			received := w.now
			if !r.ReceivedAt.IsZero() {
				received = cortex.FormatTime(r.ReceivedAt)
			}
			var source, line any
			if sid != 0 {
				source, line = sid, r.Line
			}
			args = append(args, ids[sp[0]+i], cortex.FormatTime(r.Timestamp), r.Hostname, nullStr(r.Facility), string(sev),
				nullStr(r.AppName), r.Message, r.Raw, received, r.Source, source, line, nullStr(r.Meta))
		}
		if _, err := ins.ExecContext(w.ctx, args...); err != nil {
			return fmt.Errorf("insert log rows: %w", err)
		}
	}
	return nil
}

// addCounters adds counter deltas to the receivers' totals.
func (w *importTx) addCounters(cs []cortex.LogIngestCounters) error {
	for _, c := range cs {
		if c.Zero() {
			continue
		}
		if _, err := w.exec(`INSERT INTO log_ingest_counters(source, received, stored, dropped, malformed, oversized,
			kernel_drops, first_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT(source) DO UPDATE SET received = received + excluded.received, stored = stored + excluded.stored,
			dropped = dropped + excluded.dropped, malformed = malformed + excluded.malformed,
			oversized = oversized + excluded.oversized, kernel_drops = kernel_drops + excluded.kernel_drops,
			updated_at = excluded.updated_at`,
			c.Source, c.Received, c.Stored, c.Dropped, c.Malformed, c.Oversized, c.KernelDrops, w.now, w.now); err != nil {
			return fmt.Errorf("update log counters: %w", err)
		}
	}
	return nil
}

// LogIngestCounters returns the receivers' accumulated counters by source.
func (db *DB) LogIngestCounters(ctx context.Context) ([]cortex.LogIngestCounters, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT source, received, stored, dropped, malformed, oversized, kernel_drops,
		first_at, updated_at FROM log_ingest_counters ORDER BY source`)
	if err != nil {
		return nil, queryFailed(err, "log counters")
	}
	defer rows.Close()
	out := []cortex.LogIngestCounters{}
	for rows.Next() {
		var c cortex.LogIngestCounters
		if err := rows.Scan(&c.Source, &c.Received, &c.Stored, &c.Dropped, &c.Malformed, &c.Oversized, &c.KernelDrops,
			&c.FirstAt, &c.UpdatedAt); err != nil {
			return nil, queryFailed(err, "log counters")
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, queryFailed(err, "log counters")
	}
	return out, nil
}

// LogKeyCounts counts, for each base key, the ledger keys "<base>#n" of a
// source: how many identical lines an appended file already stored (so a
// resumed read numbers the next one after them).
func (db *DB) LogKeyCounts(ctx context.Context, sourceID int64, bases []string) (map[string]int64, error) {
	out := make(map[string]int64, len(bases))
	if len(bases) == 0 {
		return out, nil
	}
	list, err := json.Marshal(bases)
	if err != nil {
		return nil, fmt.Errorf("encode keys: %w", err)
	}
	// '#' + 1 = '$': the keys "<base>#…" sort in [base#, base$).
	rows, err := db.r.QueryContext(ctx, `SELECT k.value, (SELECT count(*) FROM transcript_import_records
		WHERE source_id = ? AND record_key >= k.value || '#' AND record_key < k.value || '$')
		FROM json_each(?) k`, sourceID, string(list))
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read import ledger: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read import ledger: %v", err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read import ledger: %v", err)
	}
	return out, nil
}

// Logs lists non-AI log rows, newest first.
func (db *DB) Logs(ctx context.Context, p LogParams) (LogList, error) {
	out := LogList{Logs: []LogEntry{}}
	p2, err := sqlpart.Logs(p)
	if err != nil {
		return out, err
	}
	w := part(p2)
	rows, err := db.r.QueryContext(ctx, `SELECT id, timestamp, hostname, COALESCE(facility, ''), severity,
		COALESCE(app_name, ''), message, source, received_at, metadata_json
		FROM logs WHERE ai_tool IS NULL`+w.sql()+` ORDER BY timestamp DESC, id DESC LIMIT ?`, append(w.args, p.Limit+1)...)
	if err != nil {
		return out, queryFailed(err, "logs")
	}
	defer rows.Close()
	for rows.Next() {
		if len(out.Logs) == p.Limit {
			out.Truncated = true
			break
		}
		var e LogEntry
		var sev string
		var meta sql.NullString
		if err := rows.Scan(&e.ID, &e.Timestamp, &e.Hostname, &e.Facility, &sev, &e.AppName, &e.Message, &e.Source,
			&e.ReceivedAt, &meta); err != nil {
			return out, queryFailed(err, "logs")
		}
		e.Severity, e.Metadata = cortex.Severity(sev), decodeMeta(meta)
		out.Logs = append(out.Logs, e)
	}
	if err := rows.Err(); err != nil {
		return out, queryFailed(err, "logs")
	}
	out.Total = len(out.Logs)
	if out.Truncated && len(out.Logs) > 0 {
		last := out.Logs[len(out.Logs)-1]
		out.Next = sqlpart.RowCursor(last.Timestamp, last.ID).Encode()
	}
	return out, nil
}
