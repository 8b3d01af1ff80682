package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/store"
)

// blockRecords builds n records of one file whose raw JSON is about size
// bytes (a seeded pseudo-random text, so blocks do not shrink to nothing);
// record i's raw holds the word "rawonly<i>x", which its text does not.
func blockRecords(n, size int) []cortex.ImportRecord {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"alpha", "beta", "gamma", "delta", "build", "test", "error", "file", "path", "go"}
	out := make([]cortex.ImportRecord, n)
	for i := range out {
		var b strings.Builder
		for b.Len() < size {
			b.WriteString(words[rng.IntN(len(words))])
			fmt.Fprintf(&b, "%d ", rng.IntN(100000))
		}
		r := rec(fmt.Sprintf("u:%04d", i), "", cortex.RoleUser, fmt.Sprintf("text %d", i), testNow.Add(time.Duration(i)*time.Second))
		r.Raw = []byte(fmt.Sprintf(`{"k":"u:%04d","body":"rawonly%dx %s"}`, i, i, b.String()))
		r.Line = int64(i + 1)
		out[i] = r
	}
	return out
}

// storedRaws returns every stored raw value and every block's records:
// all the bytes of raw records the file holds.
func storedRaws(t *testing.T, db *DB) [][]byte {
	t.Helper()
	ctx := context.Background()
	var out [][]byte
	rows, err := db.r.QueryContext(ctx, `SELECT data FROM raw_blocks`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			t.Fatal(err)
		}
		recs, err := db.codec.DecodeBlock(data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recs...)
	}
	raws, err := db.r.QueryContext(ctx, `SELECT raw FROM logs WHERE raw IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer raws.Close()
	for raws.Next() {
		var raw []byte
		if err := raws.Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if d, err := db.codec.Decode(raw); err == nil {
			out = append(out, d)
		}
	}
	return out
}

func holds(raws [][]byte, s string) bool {
	for _, r := range raws {
		if bytes.Contains(r, []byte(s)) {
			return true
		}
	}
	return false
}

// readAll reads row id's raw record through every reader of raw records
// and fails unless each returns want.
func readAll(t *testing.T, db *DB, id int64, want []byte) {
	t.Helper()
	ctx := context.Background()
	dec := func(what string, b []byte) {
		t.Helper()
		got, err := db.codec.Decode(b)
		if err != nil {
			t.Fatalf("%s of row %d: %v", what, id, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s of row %d = %.60q, want %.60q", what, id, got, want)
		}
	}
	_, raw, err := db.Row(ctx, id, 1000)
	if err != nil {
		t.Fatal(err)
	}
	dec("Row", raw)
	m, err := db.RawRecords(ctx, []int64{id})
	if err != nil {
		t.Fatal(err)
	}
	dec("RawRecords", m[id].Raw)
	recs, err := db.TranscriptRecords(ctx, id-1, time.Time{}, nil, 1)
	if err != nil || len(recs) != 1 || recs[0].ID != id {
		t.Fatalf("TranscriptRecords: %v %v", recs, err)
	}
	dec("TranscriptRecords", recs[0].Raw)
	rs, err := db.RowsForRescan(ctx, id-1, 1)
	if err != nil || len(rs) != 1 {
		t.Fatalf("RowsForRescan: %v %v", rs, err)
	}
	dec("RowsForRescan", rs[0].Raw)
	logs := store.PushTables[0]
	ex, err := db.ExportRows(ctx, logs, id-1, id, 1)
	if err != nil || len(ex) != 1 {
		t.Fatalf("ExportRows: %v %v", ex, err)
	}
	dec("ExportRows", ex[0][logs.Index("raw")].([]byte))
	ex, err = db.ExportRowsByID(ctx, logs, []int64{id})
	if err != nil || len(ex) != 1 {
		t.Fatalf("ExportRowsByID: %v %v", ex, err)
	}
	dec("ExportRowsByID", ex[0][logs.Index("raw")].([]byte))
}

func TestRawBlocksEveryReader(t *testing.T) {
	db, path := openTestDB(t)
	// 600 records of ~4 KB: several blocks of one write.
	recs := blockRecords(600, 4000)
	mustImport(t, db, batch("/t/a.jsonl", recs...))
	if n := count(t, db, `SELECT count(*) FROM raw_blocks`); n < 2 || n > 4 {
		t.Fatalf("%d blocks for 2.4 MB of records, want 2 to 4", n)
	}
	if n := count(t, db, `SELECT count(*) FROM logs WHERE substr(raw, 1, 1) = x'ff'`); n != 600 {
		t.Fatalf("%d rows reference a block, want 600", n)
	}
	// A row stored before blocks existed: its own zstd frame.
	legacy := logID(t, db, "/t/a.jsonl", "u:0005")
	if _, err := rawConn(t, path).Exec(`UPDATE logs SET raw = ? WHERE id = ?`, db.codec.Encode(nil, recs[5].Raw), legacy); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 5, 299, 599} {
		readAll(t, db, logID(t, db, "/t/a.jsonl", recs[i].Entry.RecordKey), recs[i].Raw)
	}
	// The search index read every record from its block: a word only in
	// the raw record finds its row.
	for _, i := range []int{0, 5, 599} {
		got := searchIDs(t, db, cortex.SearchParams{Query: fmt.Sprintf("rawonly%dx", i)})
		if want := logID(t, db, "/t/a.jsonl", recs[i].Entry.RecordKey); len(got) != 1 || got[0] != want {
			t.Errorf("search for record %d's raw word found %v, want [%d]", i, got, want)
		}
	}
	// Together they are smaller than one frame per record.
	var perRecord, blocks int64
	for _, r := range recs {
		perRecord += int64(len(db.codec.Encode(nil, r.Raw)))
	}
	blocks = count(t, db, `SELECT sum(length(data)) FROM raw_blocks`)
	if blocks >= perRecord {
		t.Errorf("blocks take %d bytes, per-record frames %d", blocks, perRecord)
	}
}

func TestRawBlockCorruptIsAnError(t *testing.T) {
	db, path := openTestDB(t)
	recs := blockRecords(3, 200)
	mustImport(t, db, batch("/t/a.jsonl", recs...))
	if _, err := rawConn(t, path).Exec(`UPDATE raw_blocks SET data = x'28b52ffd0102030405'`); err != nil {
		t.Fatal(err)
	}
	// A fresh reader (this one has the block cached, as it was indexed).
	ro, err := Open(context.Background(), path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, _, err = ro.Row(context.Background(), logID(t, db, "/t/a.jsonl", "u:0001"), 1000)
	if err == nil || !strings.Contains(err.Error(), "corrupt raw block") {
		t.Fatalf("a corrupt block read as %v, want a corrupt-block error", err)
	}
}

func TestPurgeRewritesRawBlocks(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	recs := blockRecords(40, 300)
	recs[7].Raw = []byte(`{"k":"u:0007","token":"purgeme-SECRET-7"}`)
	mustImport(t, db, batch("/t/a.jsonl", recs...), batch("/t/b.jsonl", blockRecords(5, 300)...))
	if !holds(storedRaws(t, db), "purgeme-SECRET-7") {
		t.Fatal("the record to purge is not stored")
	}
	res, err := db.Purge(ctx, PurgeSelector{Match: func(_ string, raw []byte) bool {
		return bytes.Contains(raw, []byte("purgeme-SECRET"))
	}}, db.codec.Decode, false)
	if err != nil || res.Rows != 1 {
		t.Fatalf("Purge: %+v %v", res, err)
	}
	if holds(storedRaws(t, db), "purgeme-SECRET-7") {
		t.Fatal("the purged record's bytes are still in a block")
	}
	// The other rows of its block read as before.
	for _, i := range []int{0, 6, 8, 39} {
		readAll(t, db, logID(t, db, "/t/a.jsonl", recs[i].Entry.RecordKey), recs[i].Raw)
	}
	// A file purged whole leaves no block behind.
	before := count(t, db, `SELECT count(*) FROM raw_blocks`)
	if _, err := db.Purge(ctx, PurgeSelector{Source: "/t/b.jsonl"}, db.codec.Decode, false); err != nil {
		t.Fatal(err)
	}
	if after := count(t, db, `SELECT count(*) FROM raw_blocks`); after != before-1 {
		t.Fatalf("%d blocks after purging a file of one block, want %d", after, before-1)
	}
}

func TestRescanRewritesRawBlocks(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	recs := blockRecords(20, 300)
	recs[3].Raw = []byte(`{"k":"u:0003","token":"sk-live-LEAKED3"}`)
	mustImport(t, db, batch("/t/a.jsonl", recs...))
	id := logID(t, db, "/t/a.jsonl", "u:0003")
	fixed := []byte(`{"k":"u:0003","token":"[REDACTED]"}`)
	if err := db.ApplyRescan(ctx, []RescanUpdate{{ID: id, Raw: db.codec.Encode(nil, fixed)}}); err != nil {
		t.Fatal(err)
	}
	if holds(storedRaws(t, db), "sk-live-LEAKED3") {
		t.Fatal("the re-redacted secret is still in a block")
	}
	// The redacted row is pushed again, not the rows of its rewritten block.
	if got := ids(t, db, `SELECT row_id FROM push_changes WHERE tbl = 'logs'`); len(got) != 1 || got[0] != id {
		t.Errorf("rows queued for push: %v, want [%d]", got, id)
	}
	readAll(t, db, id, fixed)
	for _, i := range []int{0, 2, 4, 19} {
		readAll(t, db, logID(t, db, "/t/a.jsonl", recs[i].Entry.RecordKey), recs[i].Raw)
	}
}

func TestChangedRecordLeavesItsBlock(t *testing.T) {
	db, _ := openTestDB(t)
	recs := blockRecords(10, 300)
	recs[4].Raw = []byte(`{"k":"u:0004","v":"first-version-4"}`)
	mustImport(t, db, batch("/t/a.jsonl", recs...))
	changed := recs[4]
	changed.Raw = []byte(`{"k":"u:0004","v":"second-version-4"}`)
	changed.ContentHash = "h-changed"
	if res := mustImport(t, db, batch("/t/a.jsonl", changed)); res[0].Updated != 1 {
		t.Fatalf("re-import updated %d rows, want 1", res[0].Updated)
	}
	raws := storedRaws(t, db)
	if holds(raws, "first-version-4") || !holds(raws, "second-version-4") {
		t.Fatal("the changed record's earlier version is still stored, or its new one is not")
	}
	readAll(t, db, logID(t, db, "/t/a.jsonl", "u:0004"), changed.Raw)
	readAll(t, db, logID(t, db, "/t/a.jsonl", "u:0005"), recs[5].Raw)
}

func TestTranscriptPathFromSource(t *testing.T) {
	db, path := openTestDB(t)
	ctx := context.Background()
	recs := blockRecords(3, 100)
	mustImport(t, db, batch("/t/a.jsonl", recs...))
	if n := count(t, db, `SELECT count(*) FROM logs WHERE ai_transcript_path IS NOT NULL`); n != 0 {
		t.Fatalf("%d new rows repeat their transcript path", n)
	}
	id := logID(t, db, "/t/a.jsonl", "u:0001")
	// A row stored before migration 0029 holds its own path.
	legacy := logID(t, db, "/t/a.jsonl", "u:0002")
	if _, err := rawConn(t, path).Exec(`UPDATE logs SET ai_transcript_path = '/old/a.jsonl' WHERE id = ?`, legacy); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id   int64
		want string
	}{{id, "/t/a.jsonl"}, {legacy, "/old/a.jsonl"}} {
		r, _, err := db.Row(ctx, c.id, 100)
		if err != nil || r.TranscriptPath != c.want {
			t.Errorf("Row(%d).TranscriptPath = %q (%v), want %q", c.id, r.TranscriptPath, err, c.want)
		}
		logs := store.PushTables[0]
		ex, err := db.ExportRowsByID(ctx, logs, []int64{c.id})
		if err != nil || len(ex) != 1 || ex[0][logs.Index("ai_transcript_path")] != c.want {
			t.Errorf("exported path of row %d: %v (%v), want %q", c.id, ex, err, c.want)
		}
	}
	hits := searchIDs(t, db, cortex.SearchParams{Query: "rawonly1x"})
	if len(hits) != 1 || hits[0] != id {
		t.Fatalf("search: %v", hits)
	}
	res, err := db.Search(ctx, cortex.SearchParams{Query: "rawonly1x", Limit: 10})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].TranscriptPath != "/t/a.jsonl" {
		t.Fatalf("search hit path: %+v %v", res.Hits, err)
	}
}

// A reader that read a row before its block was rewritten (here: a purge
// of another row of the block) reads the row again instead of failing.
func TestRowRawFollowsARewrittenBlock(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	recs := blockRecords(10, 300)
	mustImport(t, db, batch("/t/a.jsonl", recs...))
	id := logID(t, db, "/t/a.jsonl", "u:0004")
	var stored []byte
	if err := db.r.QueryRowContext(ctx, `SELECT raw FROM logs WHERE id = ?`, id).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Purge(ctx, PurgeSelector{Match: func(_ string, raw []byte) bool {
		return bytes.Contains(raw, []byte("rawonly3x"))
	}}, db.codec.Decode, false); err != nil {
		t.Fatal(err)
	}
	if _, err := db.resolveRaw(ctx, db.r, stored); !errors.Is(err, errBlockGone) {
		t.Fatalf("the old reference resolved (%v): the block was not rewritten", err)
	}
	got, err := db.rowRaw(ctx, id, stored)
	if err != nil || !bytes.Equal(got, recs[4].Raw) {
		t.Fatalf("rowRaw after the rewrite = %.40q, %v", got, err)
	}
	gone := logID(t, db, "/t/a.jsonl", "u:0005")
	if _, err := db.Purge(ctx, PurgeSelector{Match: func(_ string, raw []byte) bool {
		return bytes.Contains(raw, []byte("rawonly5x"))
	}}, db.codec.Decode, false); err != nil {
		t.Fatal(err)
	}
	if got, err := db.rowRaw(ctx, gone, stored); err != nil || got != nil {
		t.Fatalf("a purged row's record = %.40q, %v; want none", got, err)
	}
}

// A file that grows a record at a time (a live session) has its small
// blocks merged: few blocks, every record read back, smaller than one
// frame per record.
func TestSmallBlocksAreMerged(t *testing.T) {
	db, _ := openTestDB(t)
	recs := blockRecords(40, 2000)
	for _, r := range recs {
		mustImport(t, db, batch("/t/live.jsonl", r))
	}
	mustImport(t, db, batch("/t/other.jsonl", blockRecords(1, 100)...))
	// Rows moved to a merged block hold the same records: nothing to push.
	if n := count(t, db, `SELECT count(*) FROM push_changes WHERE tbl = 'logs'`); n != 0 {
		t.Errorf("merging blocks queued %d rows for push", n)
	}
	if n := count(t, db, `SELECT count(*) FROM raw_blocks WHERE source_id = (SELECT id FROM transcript_sources WHERE path = '/t/live.jsonl')`); n >= compactBlocks {
		t.Fatalf("%d blocks for 40 single-record writes, want fewer than %d", n, compactBlocks)
	}
	if n := count(t, db, `SELECT count(*) FROM raw_blocks`); n < 2 {
		t.Fatalf("%d blocks: the other file's record was merged into the live file's", n)
	}
	for i := range recs {
		readAll(t, db, logID(t, db, "/t/live.jsonl", recs[i].Entry.RecordKey), recs[i].Raw)
	}
	var perRecord int64
	for _, r := range recs {
		perRecord += int64(len(db.codec.Encode(nil, r.Raw)))
	}
	blocks := count(t, db, `SELECT sum(length(data)) FROM raw_blocks`)
	if blocks >= perRecord {
		t.Errorf("blocks take %d bytes, per-record frames %d", blocks, perRecord)
	}
	var plan string
	if err := db.r.QueryRow(`EXPLAIN QUERY PLAN SELECT id FROM raw_blocks WHERE source_id = 1 AND bytes < `+
		fmt.Sprint(smallBlockBytes)+` ORDER BY id`).Scan(new(int), new(int), new(int), &plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "idx_raw_blocks_small") {
		t.Errorf("small blocks are found by %q, not the partial index", plan)
	}
}

// compressorsRunning counts the goroutines compressing raw blocks.
func compressorsRunning() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "sqlite.(*compressor).run(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// noCompressorLeft fails if a compressor goroutine outlives its
// transaction. stop waits for the goroutine's exit signal, closed by its
// deferred call: the goroutine may still be on its way out (its frame in
// a stack dump) for a moment after, so this allows it a second.
func noCompressorLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		n := compressorsRunning()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d block compressors still running after the transaction", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Blocks handed to the compressor go with their transaction: a batch that
// fails after several blocks of the transaction were handed over stores
// none of them, and leaves no goroutine behind.
func TestFailedImportStoresNoBlock(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	if _, err := db.w.ExecContext(ctx, `CREATE TRIGGER fail_import BEFORE INSERT ON transcript_parse_errors
		BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
		t.Fatal(err)
	}
	recs := blockRecords(600, 4000) // several blocks
	bad := batch("/t/b.jsonl", blockRecords(3, 100)...)
	bad.ParseErrors = []cortex.ParseError{{Line: 9, Error: "bad json"}}
	_, err := db.ImportBatches(ctx, []cortex.ImportBatch{batch("/t/a.jsonl", recs...), bad})
	if err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("ImportBatches = %v, want the injected failure", err)
	}
	noCompressorLeft(t)
	for _, table := range []string{"logs", "raw_blocks", "transcript_sources"} {
		if n := count(t, db, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("%d %s rows stored by a failed import", n, table)
		}
	}
	if _, err := db.w.ExecContext(ctx, `DROP TRIGGER fail_import`); err != nil {
		t.Fatal(err)
	}
	mustImport(t, db, batch("/t/a.jsonl", recs...), bad)
	noCompressorLeft(t)
	for _, i := range []int{0, 300, 599} {
		readAll(t, db, logID(t, db, "/t/a.jsonl", recs[i].Entry.RecordKey), recs[i].Raw)
	}
}

// An import whose context ends part-way stores all of its rows and
// blocks or none, and leaves no goroutine behind.
func TestCanceledImportStoresAllOrNothing(t *testing.T) {
	db, _ := openTestDB(t)
	recs := blockRecords(150, 4000)
	for i, delay := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 80 * time.Millisecond, 300 * time.Millisecond} {
		path := fmt.Sprintf("/t/%d.jsonl", i)
		var bs []cortex.ImportBatch
		for k := 0; k < 8; k++ { // 8 files of 600 KB in one transaction
			bs = append(bs, batch(fmt.Sprintf("%s.%d", path, k), recs...))
		}
		before := count(t, db, `SELECT count(*) FROM logs`)
		blocks := count(t, db, `SELECT count(*) FROM raw_blocks`)
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			time.Sleep(delay)
			cancel()
		}()
		_, err := db.ImportBatches(ctx, bs)
		<-stopped
		noCompressorLeft(t)
		rows := count(t, db, `SELECT count(*) FROM logs`) - before
		newBlocks := count(t, db, `SELECT count(*) FROM raw_blocks`) - blocks
		switch {
		case err != nil && (rows != 0 || newBlocks != 0):
			t.Fatalf("canceled after %v (%v): %d rows and %d blocks stored", delay, err, rows, newBlocks)
		case err == nil && (rows != int64(len(bs)*len(recs)) || newBlocks < int64(len(bs))):
			t.Fatalf("import after %v: %d rows and %d blocks stored, want %d rows in at least %d blocks",
				delay, rows, newBlocks, len(bs)*len(recs), len(bs))
		}
		t.Logf("canceled after %v: %v", delay, err)
	}
	// The store still takes writes.
	mustImport(t, db, batch("/t/after.jsonl", recs[:3]...))
	readAll(t, db, logID(t, db, "/t/after.jsonl", recs[2].Entry.RecordKey), recs[2].Raw)
}

// Small blocks of one source are merged within a transaction as they
// were when every block was stored at once: some of them are still being
// compressed when the merge is due.
func TestSmallBlocksMergedInOneTransaction(t *testing.T) {
	db, _ := openTestDB(t)
	recs := blockRecords(40, 2000)
	var bs []cortex.ImportBatch
	for _, r := range recs {
		bs = append(bs, batch("/t/live.jsonl", r))
	}
	mustImport(t, db, bs...)
	noCompressorLeft(t)
	// Blocks 1-8 (a record each) merge into block 9 at the 8th batch;
	// blocks 9-16 into 17 at the 15th; and so on: 41 holds 36 records,
	// 42-45 one each.
	want := map[int64]int{41: 36, 42: 1, 43: 1, 44: 1, 45: 1}
	got := map[int64]int{}
	for _, raw := range column[[]byte](t, db, `SELECT raw FROM logs`) {
		id, _, ok := rawcodec.ParseRef(raw)
		if !ok {
			t.Fatalf("a row's raw %.20q is no block reference", raw)
		}
		got[id]++
	}
	if !maps.Equal(got, want) {
		t.Fatalf("rows by block = %v, want %v", got, want)
	}
	if n := count(t, db, `SELECT count(*) FROM raw_blocks`); n != int64(len(want)) {
		t.Fatalf("%d blocks stored, want %d", n, len(want))
	}
	for i := range recs {
		readAll(t, db, logID(t, db, "/t/live.jsonl", recs[i].Entry.RecordKey), recs[i].Raw)
	}
}
