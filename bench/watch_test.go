package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/sqlite"
)

// Watch measures a store it leaves as it found it: the appended records
// were each found by search, the idle watcher wrote nothing, and the
// bench session is gone afterwards.
func TestWatchLeavesTheStoreAsItFoundIt(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "w.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	root := testcorpus.Labelled(t)
	if _, err := ingest.Index(ctx, db, ingest.Options{Paths: []string{root}, Hostname: "h"}); err != nil {
		t.Fatal(err)
	}
	before, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Watch(ctx, db, WatchOptions{Roots: []string{root}, Appends: 3, Idle: 300 * time.Millisecond,
		Index: ingest.Options{Hostname: "h"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Appends != 3 || rep.AppendP50MS <= 0 || rep.AppendMaxMS < rep.AppendP95MS {
		t.Errorf("appends: %+v", rep)
	}
	if rep.StartFiles < 2 || rep.StartRecordBytes > 1024 {
		t.Errorf("the start pass should stat the indexed files and read only the bench record: %+v", rep)
	}
	if rep.IdleRowsAdded != 0 || rep.Purged != 4 {
		t.Errorf("idle rows %d, purged %d (want 0 and the 4 bench records)", rep.IdleRowsAdded, rep.Purged)
	}
	after, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Rows != before.Rows || after.Sessions != before.Sessions {
		t.Errorf("store changed: %d rows / %d sessions before, %d / %d after", before.Rows, before.Sessions, after.Rows, after.Sessions)
	}
	res, err := db.Search(ctx, cortex.SearchParams{Query: "cortexbench*", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 0 {
		t.Errorf("bench records still searchable: %+v", res.Hits)
	}
}
