package sqlite

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

// catchUps imports n small batches of records, each followed by a
// catch-up of the search index (as `cortex watch` does after an append),
// and returns the catch-ups' reports.
func catchUps(t *testing.T, db *DB, from, n int) []SearchProgress {
	t.Helper()
	return catchUpsOf(t, db, from, n, 4)
}

// catchUpsOf is catchUps with per records a catch-up.
func catchUpsOf(t *testing.T, db *DB, from, n, per int) []SearchProgress {
	t.Helper()
	words := []string{"kestrel", "error", "timeout", "heron", "build"}
	var out []SearchProgress
	for i := from; i < from+n; i++ {
		var recs []cortex.ImportRecord
		for j := range per {
			k := fmt.Sprintf("r%d-%d", i, j)
			text := fmt.Sprintf("%s %s step %d of run %d w%dx%d", words[(i+j)%len(words)], words[(i*j)%len(words)], j, i, i, j)
			recs = append(recs, rec(k, "", cortex.RoleUser, text, testNow.Add(-time.Duration(i*10+j)*time.Minute)))
		}
		if _, err := db.ImportBatches(context.Background(), []cortex.ImportBatch{batch(fmt.Sprintf("/t/s%d.jsonl", i), recs...)}); err != nil {
			t.Fatal(err)
		}
		p, err := db.IndexSearch(context.Background(), nil)
		if err != nil {
			t.Fatalf("catch-up %d: %v", i, err)
		}
		out = append(out, p)
	}
	return out
}

func segmentsOf(t *testing.T, db *DB) searchSegments {
	t.Helper()
	s, err := searchSegmentsOf(context.Background(), db.sw, "search_fts_data")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// searchAnswers is what the index answers for a few words: the matching
// rows, their bm25 order and scores, and Search's ranked and newest-first
// hits.
func searchAnswers(t *testing.T, db *DB) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, w := range []string{"kestrel", "error", "step", `"run 7"`, "heron OR build"} {
		out[w+"/rows"] = ids(t, db, `SELECT rowid FROM search.search_fts WHERE search_fts MATCH ? ORDER BY rowid`, w)
		out[w+"/rank"] = column[string](t, db, `SELECT rowid || ' ' || printf('%.12f', rank) FROM search.search_fts
			WHERE search_fts MATCH ? ORDER BY rank, rowid`, w)
		for _, rank := range []bool{false, true} {
			res, err := db.Search(context.Background(), cortex.SearchParams{Query: w, Limit: 25, Rank: rank})
			if err != nil {
				t.Fatal(err)
			}
			var hits []int64
			for _, h := range res.Hits {
				hits = append(hits, h.ID)
			}
			out[fmt.Sprintf("%s/search/%v", w, rank)] = hits
		}
	}
	return out
}

// Many small catch-ups keep the segment count bounded: after each, no
// level holds searchMergeWidth segments (FTS5's automerge alone lets 16
// pile up per level).
func TestSearchMergeBoundsSegments(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	steps, most := 0, 0
	for i := range 80 {
		p := catchUps(t, db, i, 1)[0]
		s := segmentsOf(t, db)
		if s.mergeable() {
			t.Fatalf("after catch-up %d the index has levels %v (merging %v), want fewer than %d segments a level",
				i, s.Levels, s.Merging, searchMergeWidth)
		}
		if p.Segments != s.Segments {
			t.Errorf("catch-up %d reports %d segments, the index has %d", i, p.Segments, s.Segments)
		}
		steps += p.MergeSteps
		most = max(most, s.Segments)
	}
	if most > 8 {
		t.Errorf("up to %d segments after 80 catch-ups of 4 rows, want at most 8", most)
	}
	if steps == 0 || steps > 80 {
		t.Errorf("%d merge steps over 80 catch-ups, want some and at most one a catch-up on average", steps)
	}
}

// Merging changes no answer: the same rows match, with the same bm25
// scores, and Search returns the same hits, before and after.
func TestSearchMergeKeepsAnswers(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	db.noSearchMerge = true
	catchUps(t, db, 0, 60)
	before := segmentsOf(t, db)
	if !before.mergeable() {
		t.Fatalf("without the policy 60 catch-ups left levels %v, want a level to merge", before.Levels)
	}
	want := searchAnswers(t, db)

	db.noSearchMerge = false
	p, err := db.IndexSearch(context.Background(), nil) // nothing new: only the merge
	if err != nil {
		t.Fatal(err)
	}
	after := segmentsOf(t, db)
	if p.MergeSteps == 0 || after.mergeable() || after.Segments >= before.Segments {
		t.Fatalf("merge: %d steps, segments %d -> %d (levels %v)", p.MergeSteps, before.Segments, after.Segments, after.Levels)
	}
	if got := searchAnswers(t, db); !reflect.DeepEqual(got, want) {
		for k := range want {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Errorf("%s after the merge: %v, want %v", k, got[k], want[k])
			}
		}
	}
	// A catch-up with nothing to merge writes nothing.
	p, err = db.IndexSearch(context.Background(), nil)
	if err != nil || p.MergeSteps != 0 {
		t.Fatalf("second catch-up: %d merge steps, %v", p.MergeSteps, err)
	}
}

// A merge yields to rows waiting to be indexed, and a cancelled one loses
// nothing: an unfinished merge is finished by a later catch-up.
func TestSearchMergeYieldsAndResumes(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	db.noSearchMerge = true
	// Catch-ups of a few pages each, and merge steps of one page: a merge
	// takes many steps.
	catchUpsOf(t, db, 0, 12, 150)
	want := searchAnswers(t, db)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if m, err := db.mergeSearch(ctx, 100); err != nil || m.Steps != 0 {
		t.Fatalf("cancelled merge: %d steps, %v", m.Steps, err)
	}
	// New rows wait: one step, then the merge stops.
	db.mergePages = 1
	if _, err := db.ImportBatches(context.Background(), []cortex.ImportBatch{batch("/t/late.jsonl",
		rec("late", "", cortex.RoleUser, "kestrel arrives late", testNow))}); err != nil {
		t.Fatal(err)
	}
	m, err := db.mergeSearch(context.Background(), 100)
	if err != nil || m.Steps != 1 {
		t.Fatalf("merge with rows waiting: %d steps, %v; want 1", m.Steps, err)
	}
	if s := segmentsOf(t, db); !s.mergeable() || s.Merging[0] == 0 {
		t.Fatalf("one step merged everything (levels %v, merging %v); the test needs more pages", s.Levels, s.Merging)
	}
	if got := searchAnswers(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("answers changed by a partial merge")
	}
	// A catch-up merges within its budget (one transaction: 4 steps of one
	// page here); the next ones go on where it stopped.
	db.noSearchMerge = false
	p, err := db.IndexSearch(context.Background(), nil)
	if err != nil || p.Indexed != 1 || p.MergeSteps != searchMergeBudget(1) || !segmentsOf(t, db).mergeable() {
		t.Fatalf("catch-up after: indexed %d, %d merge steps (budget %d), %v", p.Indexed, p.MergeSteps, searchMergeBudget(1), err)
	}
	for i := 0; segmentsOf(t, db).mergeable(); i++ {
		if i == 1000 {
			t.Fatal("the merge never finishes")
		}
		if p, err = db.IndexSearch(context.Background(), nil); err != nil || p.MergeSteps == 0 || p.MergeSteps > searchMergeBudget(0) {
			t.Fatalf("catch-up %d with nothing new: %d merge steps, %v", i, p.MergeSteps, err)
		}
	}
	if got := ftsMatch(t, db, "late"); len(got) != 1 {
		t.Errorf("the late row: %v", got)
	}
}

func TestParseSearchSegments(t *testing.T) {
	t.Parallel()
	for _, rec := range [][]byte{nil, {0, 0, 0}, {0, 0, 0, 1, 0xff}, {0, 0, 0, 1, 2, 1, 0}} {
		if _, err := parseSearchSegments(rec); err == nil {
			t.Errorf("%x parsed", rec)
		}
	}
	// V1: 2 levels, 3 segments; level 0 (no merge) segments 5 (pages
	// 1-2) and 6 (1-1); level 1 merging 1 of segment 4 (1-300).
	v1 := []byte{0, 0, 0, 1, 2, 3, 9, 0, 2, 5, 1, 2, 6, 1, 1, 1, 1, 4, 1, 0x82, 0x2c}
	s, err := parseSearchSegments(v1)
	if err != nil || s.Segments != 3 || !reflect.DeepEqual(s.Levels, []int{2, 1}) || !reflect.DeepEqual(s.Merging, []int{0, 1}) ||
		!reflect.DeepEqual(s.Leaves, []int64{3, 300}) {
		t.Errorf("v1: %+v, %v", s, err)
	}
}

// searchFilePages returns the search file's auto_vacuum mode, free pages
// and pages.
func searchFilePages(t *testing.T, db *DB) (mode, free, pages int64) {
	t.Helper()
	for _, q := range []struct {
		pragma string
		v      *int64
	}{{"auto_vacuum", &mode}, {"freelist_count", &free}, {"page_count", &pages}} {
		if err := db.sw.QueryRow(`PRAGMA ` + q.pragma).Scan(q.v); err != nil {
			t.Fatal(err)
		}
	}
	return mode, free, pages
}

// A catch-up whose merges left many free pages gives them back to the file
// system, and the index answers as before; one that left few keeps them
// for its next writes.
func TestSearchReclaimsFreePages(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	if mode, _, _ := searchFilePages(t, db); mode != searchAutoVacuum {
		t.Fatalf("a new search file has auto_vacuum %d, want %d (incremental)", mode, searchAutoVacuum)
	}
	db.noSearchMerge = true
	db.reclaimPages = 1 << 40 // nothing is reclaimed yet
	catchUpsOf(t, db, 0, 40, 40)
	if err := db.optimizeSearch(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, free, pages := searchFilePages(t, db)
	if free < 8 || free*searchReclaimShare < pages {
		t.Fatalf("optimize left %d free pages of %d, want a quarter or more", free, pages)
	}
	want := searchAnswers(t, db)

	db.reclaimPages = free + 1 // too few: kept
	p, err := db.IndexSearch(context.Background(), nil)
	if err != nil || p.Reclaimed != 0 {
		t.Fatalf("catch-up below the bound reclaimed %d bytes, %v", p.Reclaimed, err)
	}
	db.reclaimPages = 8
	p, err = db.IndexSearch(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, freeAfter, pagesAfter := searchFilePages(t, db)
	if freeAfter != 0 || pagesAfter != pages-free || p.Reclaimed != free*4096 {
		t.Fatalf("after reclaiming: %d free of %d pages (was %d of %d), reported %d bytes", freeAfter, pagesAfter, free, pages, p.Reclaimed)
	}
	if got := searchAnswers(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("answers changed by reclaiming:\n got %v\nwant %v", got, want)
	}
}

// A search file made without incremental vacuum gets it when its index is
// reset (rebuilt from scratch), when the file holds next to nothing.
func TestSearchResetTurnsOnIncrementalVacuum(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	catchUpsOf(t, db, 0, 3, 5)
	for _, q := range []string{`PRAGMA auto_vacuum = NONE`, `VACUUM`} {
		if _, err := db.sw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if mode, _, _ := searchFilePages(t, db); mode != 0 {
		t.Fatalf("auto_vacuum %d after turning it off", mode)
	}
	var id string
	if err := db.w.QueryRow(`SELECT value FROM store_meta WHERE key = 'id'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if err := db.resetSearch(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if mode, _, _ := searchFilePages(t, db); mode != searchAutoVacuum {
		t.Fatalf("auto_vacuum %d after a reset, want %d", mode, searchAutoVacuum)
	}
	if _, err := db.IndexSearch(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(searchAnswers(t, db)["error/rows"].([]int64)); n == 0 {
		t.Error("no row found for error after the rebuild")
	}
}
