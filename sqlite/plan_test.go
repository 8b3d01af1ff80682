package sqlite_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/incident"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/sqlite"
)

// fullScan is a plan line that reads a whole stored table: "SCAN logs",
// "SCAN l" (an alias), without an index. Walking an index in order ("SCAN
// logs USING INDEX …"), subqueries and the full-text index are fine.
var fullScan = regexp.MustCompile(`^SCAN (\w+)$`)

// realCorpusStore returns a store holding the real corpus (closed when
// the test ends), or skips the test when the corpus is absent.
func realCorpusStore(t *testing.T) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cortex.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := ingest.Index(ctx, db, ingest.Options{Paths: []string{testcorpus.Real(t)}, Hostname: "testhost"}); err != nil {
		t.Fatal(err)
	}
	return db
}

// Work-count gate: every read of every lens — candidate scans and the
// per-session reads, listings and investigations — uses an index; none
// scans a stored table whole. (Timings are noise on a shared machine; a
// plan is not.)
func TestLensReadsUseIndexes(t *testing.T) {
	ctx := context.Background()
	db := realCorpusStore(t)
	var mu sync.Mutex
	reads := map[string][]any{}
	sqlite.OnRead(db, func(q string, args []any) {
		mu.Lock()
		defer mu.Unlock()
		reads[q] = args
	})
	e := incident.New(db)
	for name, l := range incident.Lenses() {
		for _, p := range []cortex.IncidentParams{{Limit: 20}, {Limit: 20, Tool: cortex.ToolClaude, Project: "/x"}} {
			if _, err := e.Incidents(ctx, l, p); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if _, err := e.Investigate(ctx, l, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Limit: 2}}); err != nil &&
			cortex.ErrorCode(err) != cortex.CodeNotFound {
			t.Fatalf("%s investigate: %v", name, err)
		}
	}
	// The gate sees a full scan when there is one.
	if plan, err := sqlite.Explain(db, `SELECT id FROM logs WHERE message = ?`, []any{"x"}); err != nil ||
		len(plan) != 1 || !fullScan.MatchString(plan[0]) {
		t.Fatalf("a full scan is not recognized: %v %v", plan, err)
	}
	if len(reads) < 10 {
		t.Fatalf("only %d distinct reads seen", len(reads))
	}
	for q, args := range reads {
		plan, err := sqlite.Explain(db, q, args)
		if err != nil {
			t.Fatalf("explain %s: %v", q, err)
		}
		for _, line := range plan {
			if fullScan.MatchString(line) {
				t.Errorf("a lens read scans a table whole (%s):\n%s\nplan: %s", line, strings.Join(strings.Fields(q), " "),
					strings.Join(plan, "; "))
			}
		}
	}
	t.Logf("%d distinct lens reads, every one by index", len(reads))
}
