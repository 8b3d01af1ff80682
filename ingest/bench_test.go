package ingest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/sqlite"
)

// realCorpus locates the shared real-transcript corpus, or skips.
func realCorpus(tb testing.TB) string { return testcorpus.Real(tb) }

func BenchmarkIndexRealCorpus(b *testing.B) {
	corpus := realCorpus(b)
	if p := os.Getenv("CORTEX_BENCH_CORPUS"); p != "" {
		corpus = p
	}
	var bytes int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		db, err := sqlite.Open(context.Background(), filepath.Join(dir, "c.db"), sqlite.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		sum, err := Index(context.Background(), db, Options{Paths: []string{corpus}, Hostname: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		bytes = sum.BytesRead
		b.ReportMetric(float64(sum.Records)/b.Elapsed().Seconds()*float64(i+1)/float64(i+1), "records/s")
		db.Close()
		b.StartTimer()
	}
	b.SetBytes(bytes)
}
