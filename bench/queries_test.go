package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/sqlite"
)

func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, c := range []struct {
		p    int
		want float64
	}{{50, 5}, {95, 10}, {100, 10}, {1, 1}} {
		if got := percentile(v, c.p); got != c.want {
			t.Errorf("p%d = %v, want %v", c.p, got, c.want)
		}
	}
	if percentile(nil, 50) != 0 || percentile([]float64{7}, 95) != 7 {
		t.Fatal("edge cases")
	}
}

func TestRunQueriesOnLabelledStore(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := ingest.Index(ctx, db, ingest.Options{Paths: []string{testcorpus.Labelled(t)}, Hostname: "h"}); err != nil {
		t.Fatal(err)
	}
	// The labelled sessions are from October 2026: "the last 30 days" of 2026-11-01.
	rep, err := RunQueries(ctx, app.New(db), QueryOptions{Runs: 2, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows == 0 || len(rep.Queries) != 15 {
		t.Fatalf("report: %+v", rep)
	}
	for _, q := range rep.Queries {
		if q.Runs != 2 || q.P50MS <= 0 || q.P95MS < q.P50MS || q.MaxMS < q.P95MS || q.Result == "" {
			t.Errorf("timing %+v", q)
		}
	}
	if rep.Queries[0].Result[:2] != "3 " {
		t.Errorf("skill-incidents over the labelled month: %s", rep.Queries[0].Result)
	}
}
