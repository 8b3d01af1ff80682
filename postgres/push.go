package postgres

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/fts"
	"github.com/cortexhq/cortex/store"
)

// The receiving side of cortex push.

// idShift places a pushing store's rows: row id = store_no << idShift +
// the row's id in that store.
const idShift = 40

// maxLocalID is the largest row id a pushing store may have.
const maxLocalID = 1<<idShift - 1

// Marks are what a pushing store has sent: the largest row id of each
// table and the last change.
type Marks struct {
	Tables map[string]int64
	Change int64
}

// Clone returns a copy of m.
func (m Marks) Clone() Marks {
	c := Marks{Tables: make(map[string]int64, len(m.Tables)), Change: m.Change}
	for k, v := range m.Tables {
		c.Tables[k] = v
	}
	return c
}

// markColumns are the push_stores columns of the tables' marks.
var markColumns = map[string]string{"logs": "logs_done", "ai_skill_events": "skill_done", "ai_mcp_events": "mcp_done",
	"ai_hook_events": "hook_done", "ai_user_events": "user_done", "ai_token_usage": "usage_done"}

// Pusher is a pushing store as the team store knows it.
type Pusher struct {
	StoreNo int
	// Content is the level its rows were sent with ("" before its first
	// push).
	Content store.Content
	Marks   Marks
}

// TeamID returns the team store's identity.
func (db *DB) TeamID(ctx context.Context) (string, error) {
	var id string
	if err := db.queryRow(ctx, `SELECT value FROM cortex_meta WHERE key = 'store_id'`).Scan(&id); err != nil {
		return "", db.failed(err, "read the store identity")
	}
	return id, nil
}

// Register returns the pushing store storeID (a laptop's store identity),
// registering it on its first push.
func (db *DB) Register(ctx context.Context, storeID, hostname string) (Pusher, error) {
	now := cortex.FormatTime(db.now())
	var p Pusher
	// Looked up first: an identity is spent by every insert attempt, even
	// one that conflicts.
	var n int
	if err := db.pool.QueryRow(ctx, `SELECT count(*) FROM push_stores WHERE store_id = $1`, storeID).Scan(&n); err != nil {
		return p, db.failed(err, "read the pushing stores")
	}
	if n > 0 {
		return db.pusher(ctx, db.pool, storeID, false)
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO push_stores(store_id, hostname, content, first_push_at, last_push_at)
		VALUES ($1, $2, '', $3, $3) ON CONFLICT (store_id) DO NOTHING`, storeID, hostname, now)
	if err != nil {
		var pe interface{ SQLState() string }
		if errors.As(err, &pe) && pe.SQLState() == "23514" {
			return p, cortex.Errorf(cortex.CodeUnavailable, "PostgreSQL store %s: too many pushing stores (8191)", db.name)
		}
		return p, db.failed(err, "register this store")
	}
	return db.pusher(ctx, db.pool, storeID, false)
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (db *DB) pusher(ctx context.Context, q querier, storeID string, lock bool) (Pusher, error) {
	p := Pusher{Marks: Marks{Tables: map[string]int64{}}}
	var content string
	cols := make([]string, len(store.PushTables))
	marks := make([]int64, len(store.PushTables))
	dest := []any{&p.StoreNo, &content, &p.Marks.Change}
	for i, t := range store.PushTables {
		cols[i] = markColumns[t.Name]
		dest = append(dest, &marks[i])
	}
	sql := `SELECT store_no, content, change_done, ` + strings.Join(cols, ", ") + ` FROM push_stores WHERE store_id = $1`
	if lock {
		sql += ` FOR UPDATE`
	}
	if err := q.QueryRow(ctx, sql, storeID).Scan(dest...); err != nil {
		return p, db.failed(err, "read this store's push marks")
	}
	p.Content = store.Content(content)
	for i, t := range store.PushTables {
		p.Marks.Tables[t.Name] = marks[i]
	}
	return p, nil
}

// Batch is one transaction of a push: rows of one table with ids above its
// mark (in the pushing store's numbering, content already applied), rows
// that changed or went away, the session rollups they touch, and the marks
// after it.
type Batch struct {
	StoreID string
	// From are the marks the batch continues: if the store's marks moved
	// (another push of the same store ran), Apply fails with ErrMoved.
	From Marks
	To   Marks
	// Content is the level of the rows; Reset says the store's rows were
	// sent with another level and are being sent again (existing rows are
	// replaced).
	Content store.Content
	Reset   bool
	Table   *store.Table
	Rows    [][]any
	// Changed are current rows of tables (replacing the sent ones);
	// Deleted ids of rows that are gone.
	Changed  map[string][][]any
	Deleted  map[string][]int64
	Sessions [][]any
	// RemovedSessions are sessions of the store that lost all their rows.
	RemovedSessions []store.SessionScope
	// Bodies are skill bodies the batch's skill events show (content
	// already applied), filed under the store.
	Bodies   []store.SkillBody
	Snapshot *store.PushSnapshot
}

// BatchResult counts what a batch changed, by table.
type BatchResult struct {
	Inserted map[string]int64
	Updated  map[string]int64
	Deleted  map[string]int64
}

// ErrMoved reports that another push of the same store moved its marks.
var ErrMoved = errors.New("the store's push marks moved (another push of it is running)")

// Apply writes a batch in one transaction, with the store's marks: a
// killed push leaves the store as it was before the batch or after it.
func (db *DB) Apply(ctx context.Context, b Batch) (BatchResult, error) {
	res := BatchResult{Inserted: map[string]int64{}, Updated: map[string]int64{}, Deleted: map[string]int64{}}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		p, err := db.pusher(ctx, tx, b.StoreID, true)
		if err != nil {
			return err
		}
		if !sameMarks(p.Marks, b.From) {
			return ErrMoved
		}
		base := int64(p.StoreNo) << idShift
		if b.Table != nil && len(b.Rows) > 0 {
			rows, err := db.placeRows(ctx, *b.Table, b.Rows, base)
			if err != nil {
				return err
			}
			if b.Reset {
				ins, upd, err := db.upsert(ctx, tx, *b.Table, rows)
				if err != nil {
					return err
				}
				res.Inserted[b.Table.Name] += ins
				res.Updated[b.Table.Name] += upd
			} else {
				n, err := copyRows(ctx, tx, b.Table.Name, pgColumns(*b.Table), rows)
				if err != nil {
					return fmt.Errorf("copy %s: %w", b.Table.Name, err)
				}
				res.Inserted[b.Table.Name] += n
			}
		}
		for _, t := range store.PushTables {
			if ids := b.Deleted[t.Name]; len(ids) > 0 {
				placed := make([]int64, len(ids))
				for i, id := range ids {
					placed[i] = base + id
				}
				tag, err := tx.Exec(ctx, `DELETE FROM `+t.Name+` WHERE id = ANY($1)`, placed)
				if err != nil {
					return fmt.Errorf("delete %s: %w", t.Name, err)
				}
				res.Deleted[t.Name] += tag.RowsAffected()
			}
			if rows := b.Changed[t.Name]; len(rows) > 0 {
				placed, err := db.placeRows(ctx, t, rows, base)
				if err != nil {
					return err
				}
				ins, upd, err := db.upsert(ctx, tx, t, placed)
				if err != nil {
					return err
				}
				res.Inserted[t.Name] += ins
				res.Updated[t.Name] += upd
			}
		}
		for _, k := range b.RemovedSessions {
			tag, err := tx.Exec(ctx, `DELETE FROM ai_sessions WHERE store_no = $1 AND ai_tool = $2 AND ai_session_id = $3 AND hostname = $4`,
				p.StoreNo, string(k.Tool), k.Session, k.Host)
			if err != nil {
				return fmt.Errorf("delete a session: %w", err)
			}
			res.Deleted["ai_sessions"] += tag.RowsAffected()
		}
		if len(b.Sessions) > 0 {
			n, err := upsertSessions(ctx, tx, p.StoreNo, b.Sessions)
			if err != nil {
				return err
			}
			res.Updated["ai_sessions"] += n
		}
		if len(b.Bodies) > 0 {
			ins, upd, err := upsertBodies(ctx, tx, p.StoreNo, b.Bodies)
			if err != nil {
				return err
			}
			res.Inserted[SkillBodiesTable] += ins
			res.Updated[SkillBodiesTable] += upd
		}
		if b.Snapshot != nil {
			// The last batch of a push: bodies no event of the store shows
			// anymore (purged, or held at a content level since changed)
			// go, as the events that showed them did.
			tag, err := tx.Exec(ctx, `DELETE FROM ai_skill_bodies b WHERE store_no = $1 AND NOT EXISTS (SELECT 1 FROM ai_skill_events e
				WHERE e.body_sha256 = b.sha256 AND e.id >> $2 = $1)`, p.StoreNo, idShift)
			if err != nil {
				return fmt.Errorf("delete unused skill bodies: %w", err)
			}
			res.Deleted[SkillBodiesTable] += tag.RowsAffected()
		}
		return db.setMarks(ctx, tx, p.StoreNo, b)
	})
	return res, err
}

func sameMarks(a, b Marks) bool {
	if a.Change != b.Change {
		return false
	}
	for _, t := range store.PushTables {
		if a.Tables[t.Name] != b.Tables[t.Name] {
			return false
		}
	}
	return true
}

func (db *DB) setMarks(ctx context.Context, tx pgx.Tx, storeNo int, b Batch) error {
	set := []string{"content = $2", "last_push_at = $3", "change_done = $4"}
	args := []any{storeNo, string(b.Content), cortex.FormatTime(db.now()), b.To.Change}
	for _, t := range store.PushTables {
		args = append(args, b.To.Tables[t.Name])
		set = append(set, fmt.Sprintf("%s = $%d", markColumns[t.Name], len(args)))
	}
	if b.Snapshot != nil {
		snap, err := json.Marshal(b.Snapshot)
		if err != nil {
			return err
		}
		args = append(args, string(snap))
		set = append(set, fmt.Sprintf("snapshot = $%d", len(args)))
	}
	_, err := tx.Exec(ctx, `UPDATE push_stores SET `+strings.Join(set, ", ")+` WHERE store_no = $1`, args...)
	return err
}

// pgColumns are the team store's columns of a pushed table (logs adds its
// word index, in place of its derived search text).
func pgColumns(t store.Table) []string {
	if t.Name == "logs" {
		return append(slices.Clip(t.Columns), "fts")
	}
	return t.Columns
}

// placeRows renumbers the pushing store's row ids (base + id) and, for
// logs, puts in place of the search text the push derived (see
// store.Table.Derived) its word index: the terms and positions the SQLite
// store's search file indexes it by (fts.Indexer), as a tsvector literal,
// or NULL for a row without words.
func (db *DB) placeRows(ctx context.Context, t store.Table, rows [][]any, base int64) ([][]any, error) {
	idCols := make([]int, 0, len(t.IDs))
	for _, c := range t.IDs {
		idCols = append(idCols, t.Index(c))
	}
	width := len(t.Columns) + len(t.Derived)
	out := make([][]any, len(rows))
	for i, r := range rows {
		if len(r) != width {
			return nil, fmt.Errorf("%s row with %d values for %d columns", t.Name, len(r), width)
		}
		row := slices.Clone(r)
		for _, c := range idCols {
			switch v := row[c].(type) {
			case nil:
			case int64:
				if v <= 0 || v > maxLocalID {
					return nil, cortex.Errorf(cortex.CodeInvalid, "%s: row id %d out of range", t.Name, v)
				}
				row[c] = base + v
			default:
				return nil, fmt.Errorf("%s.%s: id of type %T", t.Name, t.Columns[c], v)
			}
		}
		out[i] = row
	}
	if t.Name != "logs" {
		return out, nil
	}
	texts := make([]string, len(out))
	for i, r := range out {
		texts[i], _ = r[len(t.Columns)].(string)
	}
	postings, err := db.words.Postings(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, r := range out {
		r[len(t.Columns)] = nil
		if len(postings[i]) > 0 {
			r[len(t.Columns)] = tsVector(postings[i])
		}
	}
	return out, nil
}

// maxPositions and maxPosition are PostgreSQL's bounds on a lexeme's
// positions in a tsvector (later ones are dropped, larger ones clamped, as
// to_tsvector does).
const (
	maxPositions = 256
	maxPosition  = 1<<14 - 1
)

// maxVector bounds a tsvector literal (PostgreSQL's bound on a tsvector
// is 1 MB): the words of a longer text past it are not indexed.
const maxVector = 900_000

// tsVector returns the tsvector literal of a text's terms with their
// positions (1-based, as FTS5 counts them from 0). A tsvector keeps at
// most maxPositions positions of a term, none past maxPosition: when a
// long text loses positions, its adjacent term pairs are added as
// lexemes of their own ("a b", without positions), which phrase queries
// also match (see tsQuery), so a phrase in a long text is still found.
func tsVector(ps []fts.Posting) string {
	pos := map[string][]int{}
	var order []string
	size, partial := 0, false
	for _, p := range ps {
		tok := cutToken(p.Term)
		have, seen := pos[tok]
		n := p.Position + 1
		if n > maxPosition || len(have) >= maxPositions {
			partial = true
			if seen {
				continue
			}
			n = min(n, maxPosition)
		}
		if len(have) > 0 && have[len(have)-1] == n {
			continue
		}
		need := 6
		if !seen {
			need += len(tok) + 8
		}
		if size += need; size > maxVector {
			partial = true
			break
		}
		if !seen {
			order = append(order, tok)
		}
		pos[tok] = append(have, n)
	}
	var b strings.Builder
	for i, tok := range order {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(lexeme(tok))
		b.WriteByte(':')
		for j, p := range pos[tok] {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
		}
	}
	if partial {
		pairs := map[string]bool{}
		for i := 1; i < len(ps) && size < maxVector; i++ {
			if ps[i].Position != ps[i-1].Position+1 {
				continue
			}
			pair := pairLexeme(ps[i-1].Term, ps[i].Term)
			if _, ok := pos[pair]; ok || pairs[pair] {
				continue
			}
			pairs[pair] = true
			size += len(pair) + 4
			b.WriteByte(' ')
			b.WriteString(lexeme(pair))
		}
	}
	return b.String()
}

// pairLexeme is the lexeme of two adjacent terms (a space never is in a
// term).
func pairLexeme(a, b string) string { return cutToken(a + " " + b) }

// copyRows copies rows into table with COPY (text format).
func copyRows(ctx context.Context, tx pgx.Tx, table string, cols []string, rows [][]any) (int64, error) {
	var buf bytes.Buffer
	for _, r := range rows {
		for i, v := range r {
			if i > 0 {
				buf.WriteByte('\t')
			}
			writeCopyValue(&buf, v, cols[i] == "raw")
		}
		buf.WriteByte('\n')
	}
	tag, err := tx.Conn().PgConn().CopyFrom(ctx, &buf, `COPY `+table+` (`+strings.Join(cols, ", ")+`) FROM STDIN`)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// writeCopyValue writes one value in COPY's text format: \N for NULL,
// bytea as hex, text with backslash escapes. Text PostgreSQL cannot hold
// (NUL bytes, invalid UTF-8) is written with U+FFFD instead.
func writeCopyValue(buf *bytes.Buffer, v any, bytea bool) {
	switch x := v.(type) {
	case nil:
		buf.WriteString(`\N`)
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case float64:
		buf.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case bool:
		if x {
			buf.WriteString("1")
		} else {
			buf.WriteString("0")
		}
	case []byte:
		if bytea {
			buf.WriteString(`\\x`)
			buf.WriteString(hex.EncodeToString(x))
			return
		}
		writeCopyText(buf, string(x))
	case string:
		if bytea {
			buf.WriteString(`\\x`)
			buf.WriteString(hex.EncodeToString([]byte(x)))
			return
		}
		writeCopyText(buf, x)
	default:
		writeCopyText(buf, fmt.Sprint(x))
	}
}

// validText is s as PostgreSQL can hold it: invalid UTF-8 and NUL bytes
// written as U+FFFD.
func validText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return s
}

func writeCopyText(buf *bytes.Buffer, s string) {
	s = validText(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			buf.WriteString(`\\`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			buf.WriteByte(c)
		}
	}
}

// upsert writes rows (already placed) into t, replacing rows with the same
// id, and counts the inserted and updated ones.
func (db *DB) upsert(ctx context.Context, tx pgx.Tx, t store.Table, rows [][]any) (inserted, updated int64, err error) {
	cols := pgColumns(t)
	tmp := "push_" + t.Name
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS `+tmp+` (LIKE `+t.Name+`) ON COMMIT DELETE ROWS`); err != nil {
		return 0, 0, err
	}
	if _, err := copyRows(ctx, tx, tmp, cols, rows); err != nil {
		return 0, 0, fmt.Errorf("copy %s: %w", t.Name, err)
	}
	set := make([]string, 0, len(cols)-1)
	for _, c := range cols[1:] {
		set = append(set, c+" = excluded."+c)
	}
	// xmax = 0 marks a row the statement inserted (not one it updated).
	r, err := tx.Query(ctx, `INSERT INTO `+t.Name+` (`+strings.Join(cols, ", ")+`) SELECT `+strings.Join(cols, ", ")+` FROM `+tmp+
		` ORDER BY id ON CONFLICT (id) DO UPDATE SET `+strings.Join(set, ", ")+` RETURNING xmax = 0`)
	if err != nil {
		return 0, 0, fmt.Errorf("upsert %s: %w", t.Name, err)
	}
	flags, err := pgx.CollectRows(r, pgx.RowTo[bool])
	if err != nil {
		return 0, 0, fmt.Errorf("upsert %s: %w", t.Name, err)
	}
	for _, ins := range flags {
		if ins {
			inserted++
		} else {
			updated++
		}
	}
	_, err = tx.Exec(ctx, `TRUNCATE `+tmp)
	return inserted, updated, err
}

// SessionsOfRows returns the sessions the given rows of a pushing store
// (ids in its numbering) belong to on the team store.
func (db *DB) SessionsOfRows(ctx context.Context, storeNo int, ids []int64) ([]store.SessionScope, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	placed := make([]int64, len(ids))
	for i, id := range ids {
		placed[i] = int64(storeNo)<<idShift + id
	}
	rows, err := db.pool.Query(ctx, `SELECT DISTINCT ai_tool, ai_session_id, hostname FROM logs
		WHERE id = ANY($1) AND ai_tool IS NOT NULL AND ai_session_id IS NOT NULL ORDER BY 1, 2, 3`, placed)
	return collect(rows, err, "sessions", func(rows pgx.Rows) (store.SessionScope, error) {
		var k store.SessionScope
		var tool string
		err := rows.Scan(&tool, &k.Session, &k.Host)
		k.Tool = cortex.Tool(tool)
		return k, err
	})
}

// SkillBodiesTable names the skill bodies in push counts.
const SkillBodiesTable = "ai_skill_bodies"

// HeldBodies returns the skill bodies among shas that the team store holds
// for a pushing store (sizes and flags, no text).
func (db *DB) HeldBodies(ctx context.Context, storeNo int, shas []string) (map[string]store.SkillBody, error) {
	out := map[string]store.SkillBody{}
	if len(shas) == 0 {
		return out, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT sha256, bytes, lines, complete, first_seen FROM ai_skill_bodies
		WHERE store_no = $1 AND sha256 = ANY($2)`, storeNo, shas)
	got, err := collect(rows, err, "skill bodies", func(rows pgx.Rows) (store.SkillBody, error) {
		var b store.SkillBody
		var complete int
		var ts string
		err := rows.Scan(&b.SHA256, &b.Bytes, &b.Lines, &complete, &ts)
		b.Complete, b.FirstSeen = complete != 0, parseStoredTime(ts)
		return b, err
	})
	for _, b := range got {
		out[b.SHA256] = b
	}
	return out, err
}

// upsertBodies writes skill bodies of a pushing store, replacing the ones
// it sent before, and counts the inserted and updated ones.
func upsertBodies(ctx context.Context, tx pgx.Tx, storeNo int, bodies []store.SkillBody) (inserted, updated int64, err error) {
	bodies = slices.Clone(bodies)
	slices.SortFunc(bodies, func(a, b store.SkillBody) int { return strings.Compare(a.SHA256, b.SHA256) })
	n := len(bodies)
	shas, texts, firsts := make([]string, n), make([]string, n), make([]string, n)
	sizes, lines, complete := make([]int64, n), make([]int64, n), make([]int32, n)
	for i, b := range bodies {
		shas[i], texts[i], firsts[i] = b.SHA256, validText(b.Body), cortex.FormatTime(b.FirstSeen)
		sizes[i], lines[i] = int64(b.Bytes), int64(b.Lines)
		if b.Complete {
			complete[i] = 1
		}
	}
	r, err := tx.Query(ctx, `INSERT INTO ai_skill_bodies(sha256, store_no, body, bytes, lines, complete, first_seen)
		SELECT s, $1, b, n, l, c, f FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::integer[], $7::text[])
			AS u(s, b, n, l, c, f)
		ON CONFLICT (sha256, store_no) DO UPDATE SET body = excluded.body, bytes = excluded.bytes, lines = excluded.lines,
			complete = excluded.complete, first_seen = excluded.first_seen
		RETURNING xmax = 0`, storeNo, shas, texts, sizes, lines, complete, firsts)
	if err != nil {
		return 0, 0, fmt.Errorf("upsert skill bodies: %w", err)
	}
	flags, err := pgx.CollectRows(r, pgx.RowTo[bool])
	if err != nil {
		return 0, 0, fmt.Errorf("upsert skill bodies: %w", err)
	}
	for _, ins := range flags {
		if ins {
			inserted++
		} else {
			updated++
		}
	}
	return inserted, updated, nil
}

// upsertSessions replaces the session rollups of a pushing store.
func upsertSessions(ctx context.Context, tx pgx.Tx, storeNo int, rows [][]any) (int64, error) {
	cols := append([]string{"store_no"}, store.SessionColumns...)
	// A session's rollup once (the last sent): an upsert may not touch a
	// row twice.
	type key struct{ tool, session, host any }
	last := map[key]int{}
	for i, r := range rows {
		last[key{r[0], r[1], r[2]}] = i
	}
	placed := make([][]any, 0, len(last))
	for i, r := range rows {
		if last[key{r[0], r[1], r[2]}] == i {
			placed = append(placed, append([]any{int64(storeNo)}, r...))
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TEMP TABLE IF NOT EXISTS push_sessions (LIKE ai_sessions) ON COMMIT DELETE ROWS`); err != nil {
		return 0, err
	}
	if _, err := copyRows(ctx, tx, "push_sessions", cols, placed); err != nil {
		return 0, fmt.Errorf("copy sessions: %w", err)
	}
	set := make([]string, 0, len(cols))
	for _, c := range cols[4:] {
		set = append(set, c+" = excluded."+c)
	}
	tag, err := tx.Exec(ctx, `INSERT INTO ai_sessions (`+strings.Join(cols, ", ")+`) SELECT `+strings.Join(cols, ", ")+
		` FROM push_sessions ORDER BY 1, 2, 3, 4 ON CONFLICT (store_no, ai_tool, ai_session_id, hostname) DO UPDATE SET `+strings.Join(set, ", "))
	if err != nil {
		return 0, fmt.Errorf("upsert sessions: %w", err)
	}
	_, err = tx.Exec(ctx, `TRUNCATE push_sessions`)
	return tag.RowsAffected(), err
}
