package incident

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/sqlite"
)

// benchDB opens $CORTEX_BENCH_DB (a large generated store, read-only) or
// indexes the real corpus.
func benchDB(b *testing.B) *sqlite.DB {
	b.Helper()
	if path := os.Getenv("CORTEX_BENCH_DB"); path != "" {
		db, err := sqlite.Open(context.Background(), path, sqlite.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		return db
	}
	return indexed(b, testcorpus.Real(b))
}

// BenchmarkSkillIncidents lists skill incidents over the newest candidates
// (the last 30 days of a generated store: CORTEX_BENCH_DB=… go test -bench).
func BenchmarkSkillIncidents(b *testing.B) {
	db := benchDB(b)
	e := New(db)
	p := cortex.IncidentParams{}
	if os.Getenv("CORTEX_BENCH_DB") != "" {
		p.Since = time.Now().Add(-30 * 24 * time.Hour)
	}
	for b.Loop() {
		if _, err := e.Incidents(context.Background(), skillLens{}, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSkillInvestigate investigates the "run" skill (in the real
// corpus and every store generated from it).
func BenchmarkSkillInvestigate(b *testing.B) {
	db := benchDB(b)
	e := New(db)
	for b.Loop() {
		if _, err := e.Investigate(context.Background(), skillLens{},
			cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Skill: "run"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAbuseIncidents lists abuse incidents.
func BenchmarkAbuseIncidents(b *testing.B) {
	db := benchDB(b)
	e := New(db)
	for b.Loop() {
		if _, err := e.Incidents(context.Background(), abuseLens{}, cortex.IncidentParams{}); err != nil {
			b.Fatal(err)
		}
	}
}
