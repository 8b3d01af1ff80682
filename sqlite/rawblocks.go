package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/cortexhq/cortex/rawcodec"
)

// Raw records in blocks (migration 0029): a transcript write stores the
// raw records of its new rows compressed together, up to
// rawcodec.MaxBlockBytes per block, and each row's raw holds a reference
// into its block. Readers resolve references here; rows stored before
// blocks existed keep their per-record frames.

// rowQuerier runs a one-row query (the reader pool, or a transaction).
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// blockCacheSize is the decoded blocks kept: readers go through rows in id
// order (the search indexer, a session's transcript), so the last few
// blocks serve nearly every read.
const blockCacheSize = 8

// blockCache holds recently decoded blocks by id. Block ids are never
// reused and a block never changes under its id, so entries never go
// stale; a block rewritten without some records is dropped (drop) so the
// process does not keep them.
type blockCache struct {
	mu   sync.Mutex
	ids  [blockCacheSize]int64
	recs [blockCacheSize][][]byte
	next int
}

func (c *blockCache) get(id int64) ([][]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, b := range c.ids {
		if b == id && c.recs[i] != nil {
			return c.recs[i], true
		}
	}
	return nil, false
}

// drop forgets the given blocks: rewritten, their records may be ones
// that were purged or re-redacted, which this process must not keep.
func (c *blockCache) drop(ids map[int64]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, b := range c.ids {
		if ids[b] {
			c.ids[i], c.recs[i] = 0, nil
		}
	}
}

func (c *blockCache) put(id int64, recs [][]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids[c.next], c.recs[c.next] = id, recs
	c.next = (c.next + 1) % blockCacheSize
}

// block returns the decoded records of block id, read through q. Writers
// that rewrite blocks drop them from the cache after their commit (see
// rewriteBlocks).
func (db *DB) block(ctx context.Context, q rowQuerier, id int64) ([][]byte, error) {
	if recs, ok := db.blocks.get(id); ok {
		return recs, nil
	}
	var data []byte
	if err := q.QueryRowContext(ctx, `SELECT data FROM raw_blocks WHERE id = ?`, id).Scan(&data); err != nil {
		if err == sql.ErrNoRows {
			return nil, fmt.Errorf("raw block %d: %w", id, errBlockGone)
		}
		return nil, fmt.Errorf("read raw block %d: %w", id, err)
	}
	recs, err := db.codec.DecodeBlock(data)
	if err != nil {
		return nil, fmt.Errorf("raw block %d: %w", id, err)
	}
	db.blocks.put(id, recs)
	return recs, nil
}

// errBlockGone is a block that no longer exists: rewritten (purge,
// redact, a changed record, small blocks merged) after its row was read.
var errBlockGone = errors.New("the block is gone")

// rowRaw is resolveRaw for row id's stored raw value read through the
// reader pool: the block is read in another snapshot than the row, so a
// block rewritten in between (purge, redact, a changed record, a merge) is followed
// by reading the row again, once. A row deleted in between has no record
// (nil).
func (db *DB) rowRaw(ctx context.Context, id int64, stored []byte) ([]byte, error) {
	raw, err := db.resolveRaw(ctx, db.r, stored)
	if !errors.Is(err, errBlockGone) {
		return raw, err
	}
	if err := db.r.QueryRowContext(ctx, `SELECT raw FROM logs WHERE id = ?`, id).Scan(&stored); err != nil {
		if err == sql.ErrNoRows {
			return nil, nil
		}
		return nil, fmt.Errorf("read the raw record of row %d again: %w", id, err)
	}
	return db.resolveRaw(ctx, db.r, stored)
}

// resolveRaw returns a stored raw value in a per-record form that
// rawcodec's Decode reads: a reference into a block becomes (a copy of)
// the record itself; other values are returned as stored.
func (db *DB) resolveRaw(ctx context.Context, q rowQuerier, stored []byte) ([]byte, error) {
	r, err := db.sharedRaw(ctx, q, stored)
	if err != nil || !rawcodec.IsRef(stored) {
		return r, err
	}
	return bytes.Clone(r), nil
}

// sharedRaw is resolveRaw without the copy: the record may be the block
// cache's, which the caller must not change.
func (db *DB) sharedRaw(ctx context.Context, q rowQuerier, stored []byte) ([]byte, error) {
	if !rawcodec.IsRef(stored) {
		return stored, nil
	}
	id, i, ok := rawcodec.ParseRef(stored)
	if !ok {
		return nil, fmt.Errorf("malformed raw block reference %x", stored)
	}
	recs, err := db.block(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if i >= len(recs) {
		return nil, fmt.Errorf("raw block %d has %d records, a row references record %d", id, len(recs), i)
	}
	return recs[i], nil
}

// nextID is the id the next row of an AUTOINCREMENT table (logs,
// raw_blocks) written in tx gets: past both the largest id ever given and
// the largest present (the writer takes ids itself, so rows can reference
// one another before they are written).
func nextID(ctx context.Context, tx *sql.Tx, table string) (int64, error) {
	var id int64
	if err := tx.QueryRowContext(ctx, `SELECT max(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = '`+table+`'), 0),
		COALESCE((SELECT max(id) FROM `+table+`), 0)) + 1`).Scan(&id); err != nil {
		return 0, fmt.Errorf("next %s id: %w", table, err)
	}
	return id, nil
}

// blockIDs allocates block ids within one transaction (ids are taken by
// the writer, as row ids are, so rows can reference a block before it is
// written).
type blockIDs struct{ next int64 }

func (a *blockIDs) take(ctx context.Context, tx *sql.Tx) (int64, error) {
	if a.next == 0 {
		n, err := nextID(ctx, tx, "raw_blocks")
		if err != nil {
			return 0, err
		}
		a.next = n
	}
	a.next++
	return a.next - 1, nil
}

// insertBlock writes a block of recs (of source sid, 0 when unknown)
// covering rows first to last, compressing it on the caller's goroutine.
func (db *DB) insertBlock(ctx context.Context, tx *sql.Tx, id, sid, first, last int64, recs [][]byte) error {
	return storeBlock(ctx, tx, id, sid, recordBytes(recs), first, last, db.codec.EncodeBlock(nil, recs))
}

// recordBytes is the decoded size of recs (raw_blocks.bytes).
func recordBytes(recs [][]byte) int {
	size := 0
	for _, r := range recs {
		size += len(r)
	}
	return size
}

// storeBlock writes an encoded block of size bytes of records.
func storeBlock(ctx context.Context, tx *sql.Tx, id, sid int64, size int, first, last int64, data []byte) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO raw_blocks(id, source_id, bytes, first_log, last_log, data) VALUES (?, ?, ?, ?, ?, ?)`,
		id, sql.NullInt64{Int64: sid, Valid: sid != 0}, size, first, last, data); err != nil {
		return fmt.Errorf("store raw block %d: %w", id, err)
	}
	return nil
}

// blockWriter gathers the raw records of one write's new rows into blocks.
type blockWriter struct {
	ids   blockIDs
	id    int64 // the block being filled, of source sid
	sid   int64
	recs  [][]byte
	first int64 // row ids the block being filled covers
	last  int64
	size  int
	// comp compresses the full blocks (started by the first one).
	comp *compressor
}

// blockRef puts the raw record of new row logID (of source sid) in the
// current block (starting a new one when it is full) and returns the
// row's stored raw value.
func (w *importTx) blockRef(sid, logID int64, raw []byte) ([]byte, error) {
	b := &w.blocks
	if len(b.recs) > 0 && (b.size+len(raw) > rawcodec.MaxBlockBytes || b.sid != sid) {
		if err := w.flushBlock(); err != nil {
			return nil, err
		}
	}
	if len(b.recs) == 0 {
		id, err := b.ids.take(w.ctx, w.tx)
		if err != nil {
			return nil, err
		}
		b.id, b.sid, b.first = id, sid, logID
	}
	b.recs = append(b.recs, raw)
	b.size += len(raw)
	b.last = max(b.last, logID)
	return rawcodec.AppendRef(nil, b.id, len(b.recs)-1), nil
}

// flushBlock hands the block being filled to the compressor; it is
// stored later in the same transaction (see storeBlocks). Its records are
// the batches' own (or decoded copies), which outlive the transaction.
func (w *importTx) flushBlock() error {
	b := &w.blocks
	if len(b.recs) == 0 {
		return nil
	}
	if b.comp == nil {
		b.comp = newCompressor(w.db.codec)
	}
	// Bounded: with maxBlocksInFlight queued, the oldest is stored first.
	for len(b.comp.queue) >= maxBlocksInFlight {
		if err := w.storeOldest(); err != nil {
			return err
		}
	}
	b.comp.hand(&pendingBlock{id: b.id, sid: b.sid, first: b.first, last: b.last, size: b.size, recs: b.recs,
		done: make(chan struct{})})
	b.recs, b.size, b.first, b.last = nil, 0, 0, 0
	return w.storeBlocks(false)
}

// storeBlocks stores the compressed blocks, oldest first: those ready
// (wait false), or all of them, waiting for the compressor (wait true).
// Anything in the transaction that reads raw_blocks, and its commit, comes
// after storeBlocks(true).
func (w *importTx) storeBlocks(wait bool) error {
	for c := w.blocks.comp; c != nil && len(c.queue) > 0; {
		if !wait && !c.queue[0].ready() {
			return nil
		}
		if err := w.storeOldest(); err != nil {
			return err
		}
	}
	return nil
}

// storeOldest stores the oldest block handed to the compressor, waiting
// for it to be compressed.
func (w *importTx) storeOldest() error {
	c := w.blocks.comp
	p := c.queue[0]
	<-p.done
	c.queue[0] = nil
	c.queue = c.queue[1:]
	return storeBlock(w.ctx, w.tx, p.id, p.sid, p.size, p.first, p.last, p.data)
}

// maxBlocksInFlight bounds the blocks handed to the compressor and not
// yet stored. Their records are held by the batches being written anyway;
// each adds at most its encoded form and the compressor's input buffer
// (rawcodec.MaxBlockBytes).
const maxBlocksInFlight = 3

// pendingBlock is a block handed to the compressor: data is its encoded
// form once done is closed.
type pendingBlock struct {
	id, sid, first, last int64
	size                 int
	recs                 [][]byte
	data                 []byte
	done                 chan struct{}
}

func (p *pendingBlock) ready() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// compressor compresses the blocks of one import transaction on a
// goroutine of its own, so that the writer goes on with the next rows
// meanwhile; the writer stores them, in the order handed, in the same
// transaction (zstd compression of 1 MB blocks was a fifth of the
// writer's CPU). The codec's encoders are safe for concurrent use.
type compressor struct {
	enc    *rawcodec.BlockEncoder
	jobs   chan *pendingBlock
	quit   chan struct{}
	exited chan struct{}
	queue  []*pendingBlock // handed and not yet stored, oldest first
}

func newCompressor(codec *rawcodec.Codec) *compressor {
	c := &compressor{enc: codec.NewBlockEncoder(), jobs: make(chan *pendingBlock, maxBlocksInFlight),
		quit: make(chan struct{}), exited: make(chan struct{})}
	go c.run()
	return c
}

func (c *compressor) run() {
	defer close(c.exited)
	for p := range c.jobs {
		select {
		case <-c.quit:
			return
		default:
		}
		p.data = c.enc.Encode(nil, p.recs)
		p.recs = nil
		close(p.done)
	}
}

// hand queues p for compression. The queue holds fewer than
// maxBlocksInFlight blocks (see flushBlock), so this never blocks.
func (c *compressor) hand(p *pendingBlock) {
	c.queue = append(c.queue, p)
	c.jobs <- p
}

// small counts the queued blocks of source sid under smallBlockBytes.
func (c *compressor) small(sid int64) int {
	if c == nil {
		return 0
	}
	n := 0
	for _, p := range c.queue {
		if p.sid == sid && p.size < smallBlockBytes {
			n++
		}
	}
	return n
}

// stop ends the goroutine, dropping the blocks not stored (the
// transaction is over: stored, or rolled back with them), and waits for
// it to exit.
func (c *compressor) stop() {
	close(c.quit)
	close(c.jobs)
	<-c.exited
	c.queue = nil
}

// Small blocks: a file that grows a few records at a time (a live
// session under cortex watch) is written in small blocks, which compress
// little better than one frame per record. Once a source has
// compactBlocks blocks under smallBlockBytes, they are merged into one;
// a record is compressed again a bounded number of times before its
// block stops being small.
const (
	smallBlockBytes = 256 << 10
	compactBlocks   = 8
)

// compact merges the small blocks of source sid when there are enough of
// them: those stored and those still being compressed, so the merges are
// the ones that storing every block at once would make.
func (w *importTx) compact(sid int64) error {
	ids, err := w.smallBlocks(sid)
	if err != nil {
		return err
	}
	if len(ids)+w.blocks.comp.small(sid) < compactBlocks {
		return nil
	}
	// The blocks being compressed are stored first: the merge reads them.
	if err := w.storeBlocks(true); err != nil {
		return err
	}
	if ids, err = w.smallBlocks(sid); err != nil {
		return err
	}
	return w.db.rebuildBlocks(w.ctx, w.tx, ids, sid, &w.blocks.ids)
}

// smallBlocks returns the stored blocks of source sid under
// smallBlockBytes, in id order.
func (w *importTx) smallBlocks(sid int64) ([]int64, error) {
	// The bound is written out: idx_raw_blocks_small (migration 0029) is
	// used only for the same constant.
	rows, err := w.tx.QueryContext(w.ctx, `SELECT id FROM raw_blocks WHERE source_id = ? AND bytes < `+strconv.Itoa(smallBlockBytes)+
		` ORDER BY id`, sid)
	if err != nil {
		return nil, fmt.Errorf("small raw blocks: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("small raw blocks: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("small raw blocks: %w", err)
	}
	return ids, nil
}

// blocksOf adds to set the blocks that the rows ids reference.
func blocksOf(ctx context.Context, tx *sql.Tx, ids []any, set map[int64]bool) error {
	for len(ids) > 0 {
		n := min(len(ids), idChunk)
		rows, err := tx.QueryContext(ctx, `SELECT raw FROM logs WHERE id IN (`+marks(n)+`)`, ids[:n]...)
		if err != nil {
			return fmt.Errorf("read raw references: %w", err)
		}
		for rows.Next() {
			var raw []byte
			if err := rows.Scan(&raw); err != nil {
				rows.Close()
				return fmt.Errorf("read raw references: %w", err)
			}
			if id, _, ok := rawcodec.ParseRef(raw); ok {
				set[id] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read raw references: %w", err)
		}
		ids = ids[n:]
	}
	return nil
}

// rewriteBlocks rewrites each of the given blocks with only the records
// rows still reference, after rows were deleted (purge) or left their
// block (redact, a changed record): the records no row references are
// gone from the block. A rewritten block gets a new id (see blockCache)
// and its rows new references; a block no row references is deleted.
// With secure_delete on (purge, redact) the old blocks' bytes are
// overwritten. The caller drops set from the block cache once the
// transaction is over.
func (db *DB) rewriteBlocks(ctx context.Context, tx *sql.Tx, set map[int64]bool, ids *blockIDs) error {
	sorted := make([]int64, 0, len(set))
	for id := range set {
		sorted = append(sorted, id)
	}
	slices.Sort(sorted)
	for _, id := range sorted {
		var sid sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT source_id FROM raw_blocks WHERE id = ?`, id).Scan(&sid)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return fmt.Errorf("read raw block %d: %w", id, err)
		}
		if err := db.rebuildBlocks(ctx, tx, []int64{id}, sid.Int64, ids); err != nil {
			return err
		}
	}
	return nil
}

// rebuildBlocks replaces the blocks ids (of source sid) by new blocks
// holding, in order, the records rows still reference, up to
// rawcodec.MaxBlockBytes each, and points those rows at them.
func (db *DB) rebuildBlocks(ctx context.Context, tx *sql.Tx, ids []int64, sid int64, alloc *blockIDs) error {
	type live struct {
		row int64
		rec []byte
	}
	var keep []live
	for _, id := range ids {
		var first, last int64
		var data []byte
		err := tx.QueryRowContext(ctx, `SELECT first_log, last_log, data FROM raw_blocks WHERE id = ?`, id).Scan(&first, &last, &data)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return fmt.Errorf("read raw block %d: %w", id, err)
		}
		recs, err := db.codec.DecodeBlock(data)
		if err != nil {
			return fmt.Errorf("raw block %d: %w", id, err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, raw FROM logs WHERE id BETWEEN ? AND ? ORDER BY id`, first, last)
		if err != nil {
			return fmt.Errorf("rows of raw block %d: %w", id, err)
		}
		for rows.Next() {
			var row int64
			var raw []byte
			if err := rows.Scan(&row, &raw); err != nil {
				rows.Close()
				return fmt.Errorf("rows of raw block %d: %w", id, err)
			}
			if b, i, ok := rawcodec.ParseRef(raw); ok && b == id && i < len(recs) {
				keep = append(keep, live{row, recs[i]})
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("rows of raw block %d: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM raw_blocks WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete raw block %d: %w", id, err)
		}
	}
	for len(keep) > 0 {
		n, size := 0, 0
		for n < len(keep) && (n == 0 || size+len(keep[n].rec) <= rawcodec.MaxBlockBytes) {
			size += len(keep[n].rec)
			n++
		}
		part := keep[:n]
		id, err := alloc.take(ctx, tx)
		if err != nil {
			return err
		}
		recs := make([][]byte, n)
		first, last := part[0].row, part[0].row
		for k, l := range part {
			recs[k] = l.rec
			first, last = min(first, l.row), max(last, l.row)
		}
		if err := db.insertBlock(ctx, tx, id, sid, first, last, recs); err != nil {
			return err
		}
		for k, l := range part {
			if _, err := tx.ExecContext(ctx, `UPDATE logs SET raw = ? WHERE id = ?`, rawcodec.AppendRef(nil, id, k), l.row); err != nil {
				return fmt.Errorf("point row %d at raw block %d: %w", l.row, id, err)
			}
		}
		keep = keep[n:]
	}
	return nil
}
