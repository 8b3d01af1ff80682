package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/transcript"
)

// Texts read from records: a transcript row whose text its raw record
// gives back (transcript.TextFromRecord: long texts, what the user typed
// excepted) stores an empty BLOB as its message — distinct from an empty
// text, and free — and its readers take the text from the record, which
// the store keeps anyway (in its block). The message column is NOT NULL
// since migration 0001, so the empty BLOB, not NULL, marks such a row;
// rows stored before, log lines and rows whose text the record does not
// give back keep their message. A reader selects textCols in place of
// message and hands the rows to a textReader, which reads the records
// block by block, each block decoded once per query.

// noText is the message of a row whose text is read from its record.
var noText = []byte{}

// textCols are what a reader of rows' texts (logs aliased p, "" or "l.")
// selects in place of message: the message, then recordCols.
func textCols(p string) string { return p + "message, " + recordCols(p) }

// recordCols are, for a row whose text is read from its record, the
// record's stored raw value, its agent and its tool's name (NULL
// otherwise).
func recordCols(p string) string {
	from := p + "message = x''"
	return "iif(" + from + ", " + p + "raw, NULL), iif(" + from + ", " + p + "ai_tool, NULL), iif(" +
		from + ", COALESCE(" + p + "ai_tool_name, ''), NULL)"
}

// textScan receives textCols (or recordCols, the message scanned by the
// caller into msg).
type textScan struct {
	msg  string
	ref  []byte
	tool sql.NullString
	name sql.NullString
}

func (s *textScan) dest() []any { return append([]any{&s.msg}, s.recordDest()...) }

func (s *textScan) recordDest() []any { return []any{&s.ref, &s.tool, &s.name} }

// fromRecord reports whether the row's text is read from its record.
func (s *textScan) fromRecord() bool { return s.tool.Valid }

// textFromRecord returns the text of a row of agent tool, named toolName,
// whose record is raw (as stored: a per-record frame or the record).
func (db *DB) textFromRecord(id int64, tool, toolName string, raw []byte) (string, error) {
	var t transcript.TextReader
	return db.readText(&t, id, tool, toolName, raw)
}

// readText is textFromRecord through t.
func (db *DB) readText(t *transcript.TextReader, id int64, tool, toolName string, raw []byte) (string, error) {
	rec, err := db.codec.Decode(raw)
	if err != nil {
		return "", fmt.Errorf("row %d: its record: %w", id, err)
	}
	text, ok := t.Text(cortex.Tool(tool), rec, toolName)
	if !ok {
		return "", fmt.Errorf("row %d: its record does not give its text back", id)
	}
	db.textReads.Add(1)
	return text, nil
}

// pendingText is a row of a query whose text is read from its record:
// the i-th result of the query.
type pendingText struct {
	i          int
	id         int64
	block      int64 // 0: not a reference into a block
	rec        int
	ref        []byte
	tool, name string
}

// textReader gathers the rows of one query whose texts are read from
// their records.
type textReader struct{ pending []pendingText }

// add returns the message of the i-th result of a query (row id, scanned
// into s), or "" and queues the row to be read from its record.
func (t *textReader) add(i int, id int64, s *textScan) string {
	if !s.fromRecord() {
		return s.msg
	}
	p := pendingText{i: i, id: id, ref: s.ref, tool: s.tool.String, name: s.name.String}
	if b, k, ok := rawcodec.ParseRef(s.ref); ok {
		p.block, p.rec = b, k
	}
	t.pending = append(t.pending, p)
	return ""
}

// readTexts sets the text of each queued row (set(i, text)), reading the
// records in block order, so the block cache decodes each block once. A
// block rewritten since its rows were read (purge, redact, a merge) is
// followed by reading those rows again.
func (db *DB) readTexts(ctx context.Context, t *textReader, set func(i int, text string)) error {
	p := t.pending
	var tr transcript.TextReader
	slices.SortFunc(p, func(a, b pendingText) int {
		return cmp.Or(cmp.Compare(a.block, b.block), cmp.Compare(a.rec, b.rec))
	})
	var last int64
	for _, r := range p {
		raw, err := db.sharedRaw(ctx, db.r, r.ref)
		var text string
		switch {
		case errors.Is(err, errBlockGone):
			text, err = db.rowText(ctx, r.id)
		case err == nil:
			if r.block != 0 && r.block != last {
				db.textBlocks.Add(1)
				last = r.block
			}
			text, err = db.readText(&tr, r.id, r.tool, r.name, raw)
		}
		if err != nil {
			return err
		}
		set(r.i, text)
	}
	t.pending = t.pending[:0]
	return nil
}

// text returns the text of row id scanned into s, whose stored raw value
// resolves to raw (nil: the row is gone): its message, or the text read
// from its record.
func (s *textScan) text(db *DB, t *transcript.TextReader, id int64, raw []byte) (string, error) {
	if !s.fromRecord() || raw == nil {
		return s.msg, nil
	}
	return db.readText(t, id, s.tool.String, s.name.String, raw)
}

// rowText reads the text of row id again ("" for a row deleted since).
func (db *DB) rowText(ctx context.Context, id int64) (string, error) {
	var s textScan
	err := db.r.QueryRowContext(ctx, `SELECT `+textCols("")+` FROM logs WHERE id = ?`, id).Scan(s.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read row %d again: %w", id, err)
	}
	if !s.fromRecord() {
		return s.msg, nil
	}
	raw, err := db.rowRaw(ctx, id, s.ref)
	if err != nil || raw == nil {
		return "", err
	}
	return db.textFromRecord(id, s.tool.String, s.name.String, raw)
}

// collectTexts is collect for rows with a text (scan receives textCols in
// s and returns the result's id), which set puts in place.
func collectTexts[T any](ctx context.Context, db *DB, rows *sql.Rows, err error, what string,
	scan func(rows *sql.Rows, s *textScan) (T, int64, error), set func(v *T, text string)) ([]T, error) {
	if err != nil {
		return nil, queryFailed(err, what)
	}
	defer rows.Close()
	var out []T
	var t textReader
	for rows.Next() {
		var s textScan
		v, id, err := scan(rows, &s)
		if err != nil {
			return nil, queryFailed(err, what)
		}
		set(&v, t.add(len(out), id, &s))
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, queryFailed(err, what)
	}
	rows.Close()
	if err := db.readTexts(ctx, &t, func(i int, text string) { set(&out[i], text) }); err != nil {
		return nil, queryFailed(err, what)
	}
	return out, nil
}

// TextReads returns how many row texts this process read from their
// records, and how many blocks it decoded to do so (for measurements).
func (db *DB) TextReads() (texts, blocks int64) {
	return db.textReads.Load(), db.textBlocks.Load()
}
