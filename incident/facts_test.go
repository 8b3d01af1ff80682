package incident

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/sqlite"
)

// A store whose calls carry no facts, or facts of other rules (migrated,
// or opened read-only after an upgrade), answers exactly like one whose
// facts are current: the lenses derive the stale facts from the calls'
// texts as they read them.
func TestStaleCallFactsGiveTheSameIncidents(t *testing.T) {
	root := testcorpus.Real(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cortex.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := ingest.Index(ctx, db, ingest.Options{Paths: []string{root}, Hostname: "testhost"}); err != nil {
		t.Fatal(err)
	}
	answer := func() string {
		e := New(db)
		var out []any
		for _, l := range []Lens{skillLens{}, frictionLens{}} {
			list, err := e.Incidents(ctx, l, cortex.IncidentParams{Limit: 100, IncludeUsage: l.Name() == cortex.LensSkill})
			if err != nil {
				t.Fatal(err)
			}
			inv, err := e.Investigate(ctx, l, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Limit: 5}, MaxBytes: 4096})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, list, inv)
		}
		b, err := json.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := answer()
	raw, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var failures int
	if err := raw.QueryRow(`SELECT count(*) FROM ai_mcp_events WHERE class IN ('failed', 'failed_in_output')`).Scan(&failures); err != nil || failures == 0 {
		t.Fatalf("%d failed calls in the corpus (%v)", failures, err)
	}
	if _, err := raw.Exec(`UPDATE ai_mcp_events SET class = NULL, why = NULL, op = NULL, loads_skill = NULL, facts_version = NULL
		WHERE id % 3 = 0; UPDATE ai_mcp_events SET class = 'ok', why = NULL, op = 'x', loads_skill = 1, facts_version = 1 WHERE id % 3 = 1`); err != nil {
		t.Fatal(err)
	}
	if got := answer(); got != want {
		t.Error("incidents and bundles from stale call facts differ from those of current facts")
	}
}
