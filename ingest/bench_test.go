package ingest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cortexhq/cortex"
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

// discardStore is a store that keeps nothing: it measures the workers
// (reading, redaction, parsing, events, voices) without SQLite.
type discardStore struct{}

func (discardStore) Sources(context.Context) (map[string]cortex.Source, error) {
	return map[string]cortex.Source{}, nil
}

func (discardStore) CountKeys(context.Context, int64, string) (int64, error) { return 0, nil }

func (discardStore) ImportBatches(_ context.Context, bs []cortex.ImportBatch) ([]cortex.ImportResult, error) {
	out := make([]cortex.ImportResult, len(bs))
	for i, b := range bs {
		out[i] = cortex.ImportResult{SourceID: 1, Inserted: int64(len(b.Records))}
	}
	return out, nil
}

// BenchmarkWorkers reads the real corpus (or $CORTEX_BENCH_CORPUS) into a
// store that keeps nothing: the CPU the parser workers spend per record
// (workers=1), and how fast ingest could go with a store that cost
// nothing (workers=N, one per CPU).
func BenchmarkWorkers(b *testing.B) {
	corpus := realCorpus(b)
	if p := os.Getenv("CORTEX_BENCH_CORPUS"); p != "" {
		corpus = p
	}
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			var records, bytes int64
			for b.Loop() {
				sum, err := Index(context.Background(), discardStore{}, Options{Paths: []string{corpus}, Hostname: "bench", Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				records, bytes = sum.Records, sum.BytesRead
			}
			b.SetBytes(bytes)
			b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
