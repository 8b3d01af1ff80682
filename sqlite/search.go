package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"sync"

	sqlite3 "modernc.org/sqlite"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/fts"
	"github.com/cortexhq/cortex/transcript"
)

// The search index lives in a file of its own next to the database
// (SearchPath), written by a second writer behind the row writer: rows are
// stored at full speed and become searchable moments later, and the
// full-text work (decompressing records, reading every string of them,
// FTS5's tokenizing and segment merges) runs on another core. The file is
// derived: it holds the full-text index (search_fts, contentless: the text
// is the stored raw record's) and its state — the row watermark (every
// row with an id at or below it is indexed), the change watermark (the
// last entry of the database's search_changes applied), the identity of
// the database it indexes and the version of the text it indexes. A file
// of another database or of other text rules is rebuilt from scratch.
//
// Readers attach the file as "search", so one query reads rows and the
// index in one snapshot of each.

// SearchPath is the search file of the database at path.
func SearchPath(path string) string { return path + "-search" }

// searchSchema creates the search file's tables (idempotent).
const searchSchema = `CREATE TABLE IF NOT EXISTS search_state (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(text, content = '', contentless_delete = 1,
	tokenize = '` + fts.Tokenizer + `');`

// searchTextVersion is the version of what the index holds for a row (see
// searchText) and of how it is tokenized (English stems: "leaks" finds
// "leak"); a file indexed under another version is rebuilt.
const searchTextVersion = transcript.SearchTextVersion*1000 + 2

// searchState is the search file's state.
type searchState struct {
	rows, changes int64
	storeID       string
	version       int
}

// openSearch opens the search file for writing (creating it), checks that
// it indexes this database with this version's text, and rebuilds it
// otherwise.
func (db *DB) openSearch(ctx context.Context) error {
	sw, err := sql.Open("sqlite", SearchPath(db.path)+"?_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-8192)&_pragma=wal_autocheckpoint(16384)&_txlock=immediate")
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot open the search index %s", SearchPath(db.path))
	}
	sw.SetMaxOpenConns(1)
	sw.SetMaxIdleConns(1)
	sw.SetConnMaxLifetime(0)
	db.sw = sw
	// A new file returns the pages its merges free (see reclaimSearch);
	// on a file that has tables already this changes nothing.
	if _, err := sw.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot open the search index %s: %v", SearchPath(db.path), err)
	}
	var mode string
	if err := sw.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil || mode != "wal" {
		return cortex.Errorf(cortex.CodeUnavailable, "the search index %s cannot use WAL mode (%v)", SearchPath(db.path), err)
	}
	if _, err := sw.ExecContext(ctx, searchSchema); err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot prepare the search index %s: %v", SearchPath(db.path), err)
	}
	var id string
	if err := db.w.QueryRowContext(ctx, `SELECT value FROM store_meta WHERE key = 'id'`).Scan(&id); err != nil {
		return db.openErr(err)
	}
	st, err := db.searchState(ctx, sw)
	if err != nil {
		return err
	}
	if st.storeID != id || st.version != searchTextVersion {
		if err := db.resetSearch(ctx, id); err != nil {
			return err
		}
	}
	return db.configureSearch(ctx)
}

// configureSearch sets FTS5's usermerge to searchMergeWidth (see
// mergeSearch) unless it is set: an open that finds it set writes
// nothing.
func (db *DB) configureSearch(ctx context.Context) error {
	var v int
	err := db.sw.QueryRowContext(ctx, `SELECT v FROM search_fts_config WHERE k = 'usermerge'`).Scan(&v)
	if err == nil && v == searchMergeWidth {
		return nil
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot read the search index's settings: %v", err)
	}
	err = db.searchWrite(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO search_fts(search_fts, rank) VALUES ('usermerge', ?)`, searchMergeWidth)
		return err
	})
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot configure the search index: %v", err)
	}
	return nil
}

// resetSearch empties the search index: every row is indexed again from
// the start. Changes queued so far are moot (every row is read afresh).
func (db *DB) resetSearch(ctx context.Context, storeID string) error {
	var lastChange int64
	if err := db.w.QueryRowContext(ctx, `SELECT COALESCE(max(seq), 0) FROM search_changes`).Scan(&lastChange); err != nil {
		return db.openErr(err)
	}
	err := db.searchWrite(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS search_fts`); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, searchSchema); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO search_fts(search_fts, rank) VALUES ('automerge', 16)`); err != nil {
			return err
		}
		return setSearchState(ctx, tx, searchState{rows: 0, changes: lastChange, storeID: storeID, version: searchTextVersion})
	})
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot reset the search index: %v", err)
	}
	db.log.Info("search index reset: every row is indexed again", "path", SearchPath(db.path))
	return db.incrementalSearchFile(ctx)
}

// incrementalSearchFile turns on incremental vacuum in a search file made
// before it was (see reclaimSearch). That takes a VACUUM, which rewrites
// the file: it runs only on an empty index (a reset), when the file holds
// next to nothing.
func (db *DB) incrementalSearchFile(ctx context.Context) error {
	var mode int
	if err := db.sw.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot read the search index's settings: %v", err)
	}
	if mode == searchAutoVacuum {
		return nil
	}
	if _, err := db.sw.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot configure the search index: %v", err)
	}
	if _, err := db.sw.ExecContext(ctx, `VACUUM`); err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot compact the emptied search index: %v", err)
	}
	return nil
}

// searchAutoVacuum is PRAGMA auto_vacuum's value for INCREMENTAL.
const searchAutoVacuum = 2

// Free pages a catch-up leaves in the search file are returned to the file
// system (reclaimSearch) when there are at least searchReclaimPages of
// them and they are at least 1/searchReclaimShare of the file: merging
// segments frees the pages of the segments merged, and a first index of
// an archive left a third of its file free.
const (
	searchReclaimPages = 2048
	searchReclaimShare = 4
)

// reclaimSearch returns the search file's free pages to the file system
// when they are many (see searchReclaimPages): an incremental vacuum moves
// the pages at the end of the file into the free ones and truncates it,
// in one transaction (a crash loses nothing), then a checkpoint shrinks
// the file on disk. A file made before incremental vacuum keeps its free
// pages for its next writes. It reports the bytes given back.
func (db *DB) reclaimSearch(ctx context.Context) (int64, error) {
	var mode, free, pages, size int64
	for _, q := range []struct {
		pragma string
		v      *int64
	}{{"auto_vacuum", &mode}, {"freelist_count", &free}, {"page_count", &pages}, {"page_size", &size}} {
		if err := db.sw.QueryRowContext(ctx, `PRAGMA `+q.pragma).Scan(q.v); err != nil {
			return 0, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read the search index's size: %v", err)
		}
	}
	least := int64(searchReclaimPages)
	if db.reclaimPages > 0 {
		least = db.reclaimPages
	}
	if mode != searchAutoVacuum || free < least || free*searchReclaimShare < pages {
		return 0, nil
	}
	// Each step of the pragma frees pages: it is read to its end (a
	// driver's Exec may step a statement only once).
	if err := drainPragma(ctx, db.sw, `PRAGMA incremental_vacuum`); err != nil {
		if ctx.Err() != nil {
			return 0, nil
		}
		return 0, cortex.WrapError(cortex.CodeUnavailable, err, "cannot compact the search index: %v", err)
	}
	_, _ = db.sw.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return free * size, nil
}

// drainPragma runs a pragma and reads all its rows.
func drainPragma(ctx context.Context, c *sql.DB, pragma string) error {
	rows, err := c.QueryContext(ctx, pragma)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return rows.Err()
}

func (db *DB) searchState(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (searchState, error) {
	return readSearchState(ctx, q, "search_state")
}

func readSearchState(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, table string) (searchState, error) {
	var st searchState
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM `+table)
	if err != nil {
		return st, queryFailed(err, "search index state")
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return st, queryFailed(err, "search index state")
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "rows":
			st.rows = n
		case "changes":
			st.changes = n
		case "store_id":
			st.storeID = v
		case "text_version":
			st.version = int(n)
		}
	}
	return st, rows.Err()
}

func setSearchState(ctx context.Context, tx *sql.Tx, st searchState) error {
	for k, v := range map[string]string{"rows": strconv.FormatInt(st.rows, 10), "changes": strconv.FormatInt(st.changes, 10),
		"store_id": st.storeID, "text_version": strconv.Itoa(st.version)} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO search_state(key, value) VALUES (?, ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			return err
		}
	}
	return nil
}

// searchWrite runs fn in one transaction of the search file's writer
// (retrying a file locked by another process, see retryBusy).
func (db *DB) searchWrite(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return retryBusy(ctx, db.sw, db.log, fn)
}

// readerConnector opens the reader pool's connections with the search
// file attached (when it exists: a store opened read-only before any
// write-open built it has no search index yet).
type readerConnector struct {
	drv *sqlite3.Driver
	dsn string
}

func (c readerConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c readerConnector) Driver() driver.Driver                        { return c.drv }

// newReaderConnector returns the connector of the reader pool; attach
// reports whether the search file is attached.
func newReaderConnector(dsn, path string) (readerConnector, bool) {
	drv := &sqlite3.Driver{}
	search := SearchPath(path)
	if _, err := os.Stat(search); err != nil {
		return readerConnector{drv: drv, dsn: dsn}, false
	}
	uri := "file:" + (&url.URL{Path: search}).EscapedPath()
	drv.RegisterConnectionHook(func(conn sqlite3.ExecQuerierContext, _ string) error {
		_, err := conn.ExecContext(context.Background(), `ATTACH DATABASE ? AS search`, []driver.NamedValue{{Ordinal: 1, Value: uri}})
		return err
	})
	return readerConnector{drv: drv, dsn: dsn}, true
}

// errNoSearch is returned by reads of the search index when the store has
// none yet.
func (db *DB) errNoSearch() error {
	return cortex.Errorf(cortex.CodeUnavailable, "the store %s has no search index yet; run `cortex index` (or `cortex watch`) to build it", db.path)
}

// SearchProgress reports the search indexer's work.
type SearchProgress struct {
	// Indexed counts rows added to the index, Reindexed rows indexed again
	// (their text changed), Removed rows taken out (deleted).
	Indexed, Reindexed, Removed int64
	// Bytes is the text indexed.
	Bytes int64
	// Batches counts the index's transactions.
	Batches int
	// Pending is how many rows are not yet searchable (see SearchLag).
	Pending int64
	// MergeSteps counts the merge transactions after the catch-up (see
	// mergeSearch) and Segments the index's segments after them (set when
	// the catch-up finished).
	MergeSteps, Segments int
	// Reclaimed is the bytes of free pages given back to the file system
	// after the catch-up (see reclaimSearch).
	Reclaimed int64
}

// searchBatchRows and searchBatchBytes bound one indexing transaction.
const (
	searchBatchRows  = 1000
	searchBatchBytes = 4 << 20
	searchChangesMax = 2000
)

// searchRow is a row to index.
type searchRow struct {
	id         int64
	transcript bool
	raw        []byte
	message    string
	gone       bool // deleted: only taken out of the index
	changed    bool // indexed before: taken out first
	text       []byte
}

// searchWork is what one indexing transaction does.
type searchWork struct {
	from     searchState
	to       int64 // the new row watermark
	changes  int64 // the new change watermark
	rows     []searchRow
	rawBytes int
}

// IndexSearch makes the rows stored so far searchable: it indexes every
// row above the watermark and applies the queued changes, in transactions
// of at most a few thousand rows (each commits its rows and the new
// watermarks together: a crash loses nothing and indexes nothing twice),
// until none is left or ctx ends. Texts are read on every CPU; one
// connection writes. Another process indexing the same store at the same
// time is harmless: a batch whose watermarks moved meanwhile is read again.
// progress, when set, is called after every batch.
func (db *DB) IndexSearch(ctx context.Context, progress func(SearchProgress)) (SearchProgress, error) {
	var p SearchProgress
	if db.sw == nil {
		return p, cortex.Errorf(cortex.CodeInvalid, "the database is open read-only")
	}
	db.searchMu.Lock()
	defer db.searchMu.Unlock()
	for {
		done, err := db.indexSearchPass(ctx, &p, progress)
		if err != nil {
			return p, err
		}
		if done {
			if err := db.compactSearch(ctx, &p); err != nil {
				return p, err
			}
			p.Reclaimed, err = db.reclaimSearch(ctx)
			return p, err
		}
		// Another indexer moved the watermarks: read again from them.
	}
}

// compactSearch merges the index's segments after a catch-up: into one
// after a large catch-up, by level after a smaller one.
func (db *DB) compactSearch(ctx context.Context, p *SearchProgress) error {
	if p.Indexed+p.Reindexed >= searchOptimizeRows {
		p.Segments = 1
		return db.optimizeSearch(ctx)
	}
	if db.noSearchMerge {
		return nil
	}
	m, err := db.mergeSearch(ctx, searchMergeBudget(p.Batches))
	p.MergeSteps, p.Segments = m.Steps, m.Segments
	return err
}

// searchOptimizeRows is how many rows one catch-up must index (a rebuild,
// an upgrade, a first index of a large archive) for the index to be
// merged into one segment after it: a query then seeks one segment per
// term instead of a few dozen (a common word twice as fast). Smaller
// catch-ups merge segments of similar size (see mergeSearch).
const searchOptimizeRows = 500_000

// optimizeSearch merges the search index into one segment.
func (db *DB) optimizeSearch(ctx context.Context) error {
	err := db.searchWrite(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO search_fts(search_fts) VALUES ('optimize')`)
		return err
	})
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot merge the search index: %v", err)
	}
	_, _ = db.sw.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return nil
}

// indexSearchPass indexes batches until none is left (done) or another
// indexer moved the watermarks. The next batch is read and its texts are
// extracted while the previous one is written (two cores at work).
func (db *DB) indexSearchPass(ctx context.Context, p *SearchProgress, progress func(SearchProgress)) (bool, error) {
	type prepared struct {
		w   searchWork
		err error
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan prepared, 1)
	go func() {
		defer close(ch)
		var next *searchState
		for {
			w, err := db.searchWork(pctx, next)
			empty := err == nil && w.empty()
			if err == nil && !empty {
				db.searchTexts(w.rows)
			}
			select {
			case ch <- prepared{w, err}:
			case <-pctx.Done():
				return
			}
			if err != nil || empty {
				return
			}
			st := w.from
			st.rows, st.changes = w.to, w.changes
			next = &st
		}
	}()
	for pw := range ch {
		if pw.err != nil {
			return false, pw.err
		}
		if pw.w.empty() {
			p.Pending = 0
			return true, nil
		}
		ok, err := db.applySearch(ctx, pw.w, p)
		if err != nil || !ok {
			return false, err
		}
		p.Batches++
		if progress != nil {
			if p.Pending, _, err = db.SearchLag(ctx); err != nil {
				return false, err
			}
			progress(*p)
		}
	}
	return false, ctx.Err()
}

// empty reports whether a batch has nothing to do.
func (w *searchWork) empty() bool {
	return len(w.rows) == 0 && w.to == w.from.rows && w.changes == w.from.changes
}

// KickSearch makes the rows stored so far searchable in the background
// (for writers that do not wait for it, such as the syslog receiver): a
// catch-up starts unless one runs, and another follows it if kicked
// meanwhile. Close waits for it.
func (db *DB) KickSearch() {
	if db.sw == nil {
		return
	}
	db.kickMu.Lock()
	defer db.kickMu.Unlock()
	if db.kicking {
		db.kickAgain = true
		return
	}
	db.kicking = true
	db.kickWG.Add(1)
	go func() {
		defer db.kickWG.Done()
		for {
			if _, err := db.IndexSearch(db.kickCtx, nil); err != nil && db.kickCtx.Err() == nil {
				db.log.Warn("search index", "err", err)
			}
			db.kickMu.Lock()
			if !db.kickAgain || db.kickCtx.Err() != nil {
				db.kicking = false
				db.kickMu.Unlock()
				return
			}
			db.kickAgain = false
			db.kickMu.Unlock()
		}
	}()
}

// searchWork reads the next batch in one read transaction: the rows above
// the watermark and the queued changes of rows at or below it. from, when
// set, is the state the batch follows (the previous batch's, not yet
// written); else the index's own.
func (db *DB) searchWork(ctx context.Context, from *searchState) (searchWork, error) {
	var w searchWork
	conn, err := db.ir.Conn(ctx)
	if err != nil {
		return w, queryFailed(err, "rows to index")
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return w, queryFailed(err, "rows to index")
	}
	defer tx.Rollback()
	if from != nil {
		w.from = *from
	} else if w.from, err = readSearchState(ctx, tx, "search.search_state"); err != nil {
		return w, err
	}
	w.to, w.changes = w.from.rows, w.from.changes
	// Changes first: a row changed after this snapshot is queued after it.
	rows, err := tx.QueryContext(ctx, `SELECT c.seq, c.log_id, l.id IS NULL, COALESCE(l.facility = 'transcript', 0), l.raw,
		COALESCE(l.message, '') FROM search_changes c LEFT JOIN logs l ON l.id = c.log_id
		WHERE c.seq > ? ORDER BY c.seq LIMIT ?`, w.from.changes, searchChangesMax)
	if err != nil {
		return w, queryFailed(err, "changed rows")
	}
	seen := map[int64]int{}
	for rows.Next() {
		var r searchRow
		var seq int64
		if err := rows.Scan(&seq, &r.id, &r.gone, &r.transcript, &r.raw, &r.message); err != nil {
			rows.Close()
			return w, queryFailed(err, "changed rows")
		}
		w.changes = seq
		if r.id > w.from.rows {
			continue // not indexed yet: it is read as it is now
		}
		r.changed = true
		stored := len(r.raw) + len(r.message)
		if err := db.resolveSearchRaw(ctx, tx, &r); err != nil {
			rows.Close()
			return w, queryFailed(err, "changed rows")
		}
		if i, ok := seen[r.id]; ok {
			w.rows[i] = r // changed twice: what it holds now, once
			continue
		}
		seen[r.id] = len(w.rows)
		w.rows = append(w.rows, r)
		w.rawBytes += stored
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return w, queryFailed(err, "changed rows")
	}
	rows, err = tx.QueryContext(ctx, `SELECT id, COALESCE(facility = 'transcript', 0), raw, message FROM logs WHERE id > ? ORDER BY id LIMIT ?`,
		w.from.rows, searchBatchRows)
	if err != nil {
		return w, queryFailed(err, "rows to index")
	}
	defer rows.Close()
	for w.rawBytes < searchBatchBytes && rows.Next() {
		var r searchRow
		if err := rows.Scan(&r.id, &r.transcript, &r.raw, &r.message); err != nil {
			return w, queryFailed(err, "rows to index")
		}
		w.rawBytes += len(r.raw) + len(r.message)
		if err := db.resolveSearchRaw(ctx, tx, &r); err != nil {
			return w, queryFailed(err, "rows to index")
		}
		w.to = r.id
		w.rows = append(w.rows, r)
	}
	return w, rows.Err()
}

// searchTexts reads the text of every row to index, on every CPU.
func (db *DB) searchTexts(rows []searchRow) {
	workers := min(runtime.GOMAXPROCS(0), max(1, len(rows)/64))
	var wg sync.WaitGroup
	next := make(chan int, len(rows))
	for i := range rows {
		next <- i
	}
	close(next)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tr transcript.SearchTextReader
			for i := range next {
				r := &rows[i]
				if !r.gone {
					r.text = db.searchText(&tr, r)
				}
			}
		}()
	}
	wg.Wait()
}

// resolveSearchRaw replaces a transcript row's reference into a raw block
// by its record (read through q, the indexer's snapshot). Rows in id order
// share blocks: the block cache decodes each once.
func (db *DB) resolveSearchRaw(ctx context.Context, q rowQuerier, r *searchRow) error {
	if !r.transcript || r.gone {
		return nil
	}
	raw, err := db.sharedRaw(ctx, q, r.raw)
	if err != nil {
		return err
	}
	r.raw = raw
	return nil
}

// searchText is what the index holds for a row: every string of a
// transcript record (see transcript.SearchText), or a log line's message.
func (db *DB) searchText(tr *transcript.SearchTextReader, r *searchRow) []byte {
	var raw []byte
	if r.transcript {
		raw, _ = db.codec.Decode(r.raw)
	}
	return tr.RecordText(r.transcript, raw, r.message)
}

// applySearch writes a batch with its new watermarks, unless another
// indexer moved them since it was read (then it reports false).
func (db *DB) applySearch(ctx context.Context, w searchWork, p *SearchProgress) (bool, error) {
	moved := false
	var done SearchProgress
	err := db.searchWrite(ctx, func(tx *sql.Tx) error {
		done, moved = SearchProgress{}, false
		st, err := readSearchState(ctx, tx, "search_state")
		if err != nil {
			return err
		}
		if st.rows != w.from.rows || st.changes != w.from.changes || st.storeID != w.from.storeID {
			moved = true
			return nil
		}
		del, err := tx.PrepareContext(ctx, `DELETE FROM search_fts WHERE rowid = ?`)
		if err != nil {
			return err
		}
		defer del.Close()
		var ins []searchRow
		for _, r := range w.rows {
			if r.changed {
				if _, err := del.ExecContext(ctx, r.id); err != nil {
					return fmt.Errorf("unindex a changed row: %w", err)
				}
				if r.gone {
					done.Removed++
					continue
				}
				done.Reindexed++
			} else {
				done.Indexed++
			}
			if len(r.text) > 0 {
				ins = append(ins, r)
				done.Bytes += int64(len(r.text))
			}
		}
		// Full-text rows go last, one row per statement: FTS5 writes its
		// pending terms out as a new segment at every statement savepoint,
		// and only a statement that writes several rows opens one. Terms
		// then reach the disk at commit (or past FTS5's 1 MB hash), in a
		// few large segments instead of one per statement: rebuilding the
		// 1 GB corpus's index took 8% less CPU and gave a 10% smaller file
		// than with 64-row statements.
		// The statements run without ctx's cancellation (the driver would
		// start a watcher goroutine per statement); ctx is checked between
		// them.
		ins1, err := tx.PrepareContext(ctx, `INSERT INTO search_fts(rowid, text) VALUES (?, ?)`)
		if err != nil {
			return err
		}
		defer ins1.Close()
		quiet := context.WithoutCancel(ctx)
		for i, r := range ins {
			if i%256 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			if _, err := ins1.ExecContext(quiet, r.id, r.text); err != nil {
				return fmt.Errorf("index rows: %w", err)
			}
		}
		next := w.from
		next.rows, next.changes = w.to, w.changes
		return setSearchState(ctx, tx, next)
	})
	if err != nil {
		return false, cortex.WrapError(cortex.CodeUnavailable, err, "cannot write the search index: %v", err)
	}
	if moved {
		return false, nil
	}
	p.Indexed += done.Indexed
	p.Reindexed += done.Reindexed
	p.Removed += done.Removed
	p.Bytes += done.Bytes
	return true, nil
}

// searchLagExact is how many rows above the watermark SearchLag counts
// exactly; beyond it, it estimates from the row ids.
const searchLagExact = 2000

// SearchLag reports how many stored rows are not yet searchable (rows
// above the watermark and rows changed since they were indexed). Beyond a
// few thousand it is an estimate from the row ids (estimated is set): ids
// have gaps, so the estimate is an upper bound.
func (db *DB) SearchLag(ctx context.Context) (n int64, estimated bool, err error) {
	if !db.searchAttached {
		var total int64
		if err := db.r.QueryRowContext(ctx, `SELECT COALESCE(max(id), 0) FROM logs`).Scan(&total); err != nil {
			return 0, false, queryFailed(err, "rows")
		}
		return total, true, nil
	}
	conn, err := db.r.Conn(ctx)
	if err != nil {
		return 0, false, queryFailed(err, "search index state")
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, false, queryFailed(err, "search index state")
	}
	defer tx.Rollback()
	st, err := readSearchState(ctx, tx, "search.search_state")
	if err != nil {
		return 0, false, err
	}
	var above, changed, top int64
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM (SELECT 1 FROM logs WHERE id > ?1 LIMIT ?2)),
		(SELECT count(DISTINCT log_id) FROM search_changes WHERE seq > ?3 AND log_id <= ?1),
		(SELECT COALESCE(max(id), 0) FROM logs)`, st.rows, searchLagExact+1, st.changes).Scan(&above, &changed, &top); err != nil {
		return 0, false, queryFailed(err, "rows not yet searchable")
	}
	if above > searchLagExact {
		return top - st.rows + changed, true, nil
	}
	return above + changed, false, nil
}

// searchWatermark returns the search index's row watermark as readers see
// it.
func (db *DB) searchWatermark(ctx context.Context) (int64, error) {
	if !db.searchAttached {
		return 0, db.errNoSearch()
	}
	var v string
	err := db.r.QueryRowContext(ctx, `SELECT value FROM search.search_state WHERE key = 'rows'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, queryFailed(err, "search index state")
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n, nil
}

// PruneSearchChanges drops the queued changes the search index has
// applied.
func (db *DB) PruneSearchChanges(ctx context.Context) error {
	if db.sw == nil {
		return nil
	}
	st, err := db.searchState(ctx, db.sw)
	if err != nil {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM search_changes WHERE seq <= ?`, st.changes)
		return err
	})
}

// The search index's merge policy. Every transaction of the search writer
// leaves its new terms in a segment of their own, and a query for a word
// seeks every segment: a common word, which Search checks row by row
// along the time index, pays that seek per row, so twenty segments make
// it several times slower than one. A catch-up of searchOptimizeRows or
// more merges the index into one segment (optimize); after a smaller one,
// mergeSearch merges segments of similar size in bounded steps (FTS5's
// incremental 'merge' at usermerge searchMergeWidth): each level of the
// index (FTS5 groups segments by size) keeps fewer than searchMergeWidth
// segments, the large segment of the last optimize is rewritten only once
// segments of its size have piled up beside it, and each row is rewritten
// about once per level (a few times over a store's life) instead of every
// segment being rewritten at every catch-up.
const (
	// searchMergeWidth is FTS5's usermerge: a level is merged into one
	// segment once it holds this many.
	searchMergeWidth = 4
	// searchMergePages bounds one merge step (one transaction of the
	// search writer): the leaf pages (about 4 KB each) it writes.
	searchMergePages = 512
)

// searchMergeBudget bounds the merge steps after a catch-up of batches
// indexing transactions: a few more than its own segments need on
// average (one to three steps per six transactions were measured), so
// that merging keeps pace, while a rare cascade (a level of large
// segments reaching searchMergeWidth) is spread over several catch-ups
// instead of delaying one: a `watch` append's catch-up (one transaction)
// merges for at most 4 steps, tens of milliseconds each on a 5M-row store.
func searchMergeBudget(batches int) int { return 2 + 2*batches }

// searchSegments describes the search index's segments, read from FTS5's
// structure record (see fts5_index.c: a 4-byte cookie, a V2 marker, then
// varints: levels, segments, write counter; per level the segments in an
// unfinished merge and the segments; per segment its id, first and last
// leaf page and, in V2, five more counters).
type searchSegments struct {
	// Segments counts every segment.
	Segments int
	// Levels holds the segment count of each level and Merging the
	// segments of each level that an unfinished merge reads.
	Levels, Merging []int
	// Leaves holds each level's leaf pages.
	Leaves []int64
}

// mergeable reports whether a merge step would do work: a level holds
// searchMergeWidth segments or a merge is unfinished.
func (s searchSegments) mergeable() bool {
	for i, n := range s.Levels {
		if n >= searchMergeWidth || s.Merging[i] > 0 {
			return true
		}
	}
	return false
}

// errSearchStructure reports a structure record this code cannot read.
var errSearchStructure = errors.New("unreadable search index structure record")

// parseSearchSegments decodes FTS5's structure record.
func parseSearchSegments(rec []byte) (searchSegments, error) {
	var s searchSegments
	if len(rec) < 4 {
		return s, errSearchStructure
	}
	b := rec[4:]
	v2 := len(b) >= 4 && b[0] == 0xff && b[1] == 0 && b[2] == 0 && b[3] == 1
	if v2 {
		b = b[4:]
	}
	bad := false
	next := func() int64 {
		v, n := sqliteVarint(b)
		if n == 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return int64(v)
	}
	levels := next()
	total := next()
	next() // write counter
	if bad || levels < 0 || levels > 64 {
		return s, errSearchStructure
	}
	perSeg := 3
	if v2 {
		perSeg = 8
	}
	for range levels {
		merging, n := next(), next()
		if bad || n < 0 || n > 1<<20 {
			return s, errSearchStructure
		}
		var leaves int64
		for range n {
			var f [8]int64
			for k := range perSeg {
				f[k] = next()
			}
			leaves += f[2] - f[1] + 1
		}
		s.Levels = append(s.Levels, int(n))
		s.Merging = append(s.Merging, int(merging))
		s.Leaves = append(s.Leaves, leaves)
		s.Segments += int(n)
	}
	if bad || int64(s.Segments) != total {
		return s, errSearchStructure
	}
	return s, nil
}

// sqliteVarint decodes an SQLite varint (big-endian, 7 bits a byte, the
// ninth byte whole); n is 0 when b is too short.
func sqliteVarint(b []byte) (v uint64, n int) {
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return v, 9
}

// searchSegmentsOf reads the search index's structure through q.
func searchSegmentsOf(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, table string) (searchSegments, error) {
	var rec []byte
	err := q.QueryRowContext(ctx, `SELECT block FROM `+table+` WHERE id = 10`).Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return searchSegments{}, nil // nothing indexed yet
	}
	if err != nil {
		return searchSegments{}, queryFailed(err, "search index structure")
	}
	return parseSearchSegments(rec)
}

// SearchSegments reports how many segments the search index has (a query
// for a common word seeks each) and, per level, how many.
func (db *DB) SearchSegments(ctx context.Context) (total int, levels []int, err error) {
	if !db.searchAttached {
		return 0, nil, db.errNoSearch()
	}
	s, err := searchSegmentsOf(ctx, db.r, "search.search_fts_data")
	return s.Segments, s.Levels, err
}

// SearchMerge reports the merge work after a catch-up.
type SearchMerge struct {
	// Steps counts merge transactions; Segments is the segment count
	// after them.
	Steps, Segments int
}

// mergeSearch merges the search index's segments after a catch-up (see
// searchMergeWidth), one bounded step per transaction, until no level
// needs a merge or maxSteps steps ran. It stops early, leaving the
// unfinished merge to the next catch-up (FTS5 records it in the index),
// when ctx ends or when new rows or changes wait to be indexed: making
// them searchable comes first (a step holds the search writer for tens of
// milliseconds).
func (db *DB) mergeSearch(ctx context.Context, maxSteps int) (SearchMerge, error) {
	var m SearchMerge
	pages := searchMergePages
	if db.mergePages > 0 {
		pages = db.mergePages
	}
	for {
		if ctx.Err() != nil {
			return m, nil
		}
		s, err := searchSegmentsOf(ctx, db.sw, "search_fts_data")
		switch {
		case errors.Is(err, errSearchStructure):
			// A structure record of another FTS5 version: merge until
			// FTS5 finds nothing to merge (the step below tells), the
			// segment count unknown.
			m.Segments = 0
		case err != nil:
			return m, err
		default:
			m.Segments = s.Segments
			if !s.mergeable() {
				return m, nil
			}
		}
		if m.Steps >= maxSteps {
			return m, nil
		}
		if m.Steps > 0 {
			if behind, err := db.searchBehind(ctx); err != nil || behind {
				return m, err
			}
		}
		worked := false
		err = db.searchWrite(ctx, func(tx *sql.Tx) error {
			var before, after int64
			if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&before); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO search_fts(search_fts, rank) VALUES ('merge', ?)`, pages); err != nil {
				return err
			}
			if err := tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&after); err != nil {
				return err
			}
			worked = after-before >= 2 // FTS5 counts a no-op merge as one change at most
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return m, nil // cancelled: the step rolled back, nothing is lost
			}
			return m, cortex.WrapError(cortex.CodeUnavailable, err, "cannot merge the search index: %v", err)
		}
		if !worked {
			return m, nil
		}
		m.Steps++
	}
}

// searchBehind reports whether rows or changes wait to be indexed.
func (db *DB) searchBehind(ctx context.Context) (bool, error) {
	st, err := db.searchState(ctx, db.sw)
	if err != nil {
		return false, err
	}
	var behind bool
	err = db.ir.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM logs WHERE id > ?) OR EXISTS (SELECT 1 FROM search_changes WHERE seq > ?)`,
		st.rows, st.changes).Scan(&behind)
	if err != nil {
		return false, queryFailed(err, "rows to index")
	}
	return behind, nil
}
