package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

func TestMixSequence(t *testing.T) {
	seq := mixSequence()
	count := map[string]int{}
	for _, r := range seq {
		count[r]++
	}
	if len(seq) != 14 || count[RouteStatus] != 3 || count[RouteSkillInvestigate] != 1 || len(count) != len(HTTPRoutes()) {
		t.Fatalf("mix %v", seq)
	}
	if seq[0] != RouteStatus || seq[1] != RouteSearch || seq[7] != RouteStatus {
		t.Errorf("not interleaved: %v", seq)
	}
}

func TestHTTPLoadSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ticks int
	rep, err := HTTPLoad(ctx, HTTPLoadOptions{
		Corpus: testcorpus.Labelled(t), DBPath: filepath.Join(t.TempDir(), "c.db"), Readers: 8,
		// The ingest of the labelled corpus takes a fraction of a second:
		// keep reading so that every route is exercised on the full store.
		DurationAfter: 1500 * time.Millisecond,
		// The labelled sessions are from October 2026.
		Now:      func() time.Time { return time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) },
		Progress: func(HTTPProgress) { ticks++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.ErrorSamples {
		t.Logf("error: %+v", e)
	}
	if rep.Errors != 0 || len(rep.ErrorKinds) != 0 {
		t.Fatalf("%d errors: %+v", rep.Errors, rep.ErrorKinds)
	}
	if rep.Records == 0 || rep.Rows == 0 || rep.Files == 0 || rep.RecordsPerSec <= 0 || rep.DBBytes == 0 {
		t.Errorf("ingest: %+v", rep)
	}
	if rep.Requests == 0 || rep.RequestsPerSec <= 0 || rep.Overall.P95MS <= 0 || rep.Overall.P99MS < rep.Overall.P95MS ||
		rep.Overall.MaxMS < rep.Overall.P99MS {
		t.Errorf("overall: %+v (%d requests)", rep.Overall, rep.Requests)
	}
	if len(rep.Routes) != len(HTTPRoutes()) {
		t.Fatalf("routes: %+v", rep.Routes)
	}
	var sum int64
	for i, r := range rep.Routes {
		sum += r.Requests
		if r.Requests == 0 || r.P95MS <= 0 || r.P50MS > r.P95MS {
			t.Errorf("route %+v", r)
		}
		if i > 0 && r.P95MS > rep.Routes[i-1].P95MS {
			t.Errorf("routes not sorted by p95: %+v", rep.Routes)
		}
	}
	if sum != rep.Requests {
		t.Errorf("route requests sum to %d, want %d", sum, rep.Requests)
	}
	if rep.SkillsInvestigated == 0 {
		t.Error("no skill from the skills summary was investigated")
	}
	if ticks == 0 {
		t.Error("no progress reported")
	}
	t.Logf("%d requests in %.2f s (%.0f/s), p50 %.1f ms, p95 %.1f ms, %d skills investigated",
		rep.Requests, rep.Seconds, rep.RequestsPerSec, rep.Overall.P50MS, rep.Overall.P95MS, rep.SkillsInvestigated)
}
