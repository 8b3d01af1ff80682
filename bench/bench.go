// Package bench drives Cortex's performance measurements: generating a
// synthetic corpus from the real one (package gen) and timing ingest into a
// fresh store, including peak memory and the cost of an unchanged re-scan.
package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/sqlite"
)

// IngestOptions configures RunIngest.
type IngestOptions struct {
	Corpus   string // folder to index
	DBPath   string // database to create (must not exist)
	Workers  int
	Rescan   bool // also time an unchanged re-scan
	NoEvents bool // store rows only (measures what event extraction costs)
	Progress func(ingest.Progress)
}

// IngestReport is what RunIngest measured.
type IngestReport struct {
	Corpus        string         `json:"corpus"`
	CorpusBytes   int64          `json:"corpus_bytes"`
	Files         int            `json:"files"`
	Records       int64          `json:"records"`
	Rows          int64          `json:"rows_inserted"`
	Seconds       float64        `json:"seconds"`
	RecordsPerSec float64        `json:"records_per_sec"`
	RowsPerSec    float64        `json:"rows_per_sec"`
	MBPerSec      float64        `json:"mb_per_sec"`
	PeakRSSMB     float64        `json:"peak_rss_mb"`
	DBBytes       int64          `json:"db_bytes"`
	RescanSeconds float64        `json:"rescan_seconds,omitempty"`
	RescanFiles   int            `json:"rescan_files_unchanged,omitempty"`
	Summary       ingest.Summary `json:"summary"`
}

// RunIngest indexes a corpus into a new database and reports throughput.
func RunIngest(ctx context.Context, o IngestOptions) (IngestReport, error) {
	rep := IngestReport{Corpus: o.Corpus}
	if _, err := os.Stat(o.DBPath); err == nil {
		return rep, fmt.Errorf("database %s already exists; bench needs a fresh one", o.DBPath)
	}
	db, err := sqlite.Open(ctx, o.DBPath, sqlite.Options{})
	if err != nil {
		return rep, err
	}
	defer db.Close()
	host, _ := os.Hostname()
	start := time.Now()
	sum, err := ingest.Index(ctx, db, ingest.Options{Paths: []string{o.Corpus}, Hostname: host, Workers: o.Workers,
		Progress: o.Progress, NoEvents: o.NoEvents})
	if err != nil {
		return rep, err
	}
	el := time.Since(start)
	rep.Summary = sum
	rep.CorpusBytes = sum.BytesRead
	rep.Files = sum.FilesRead + sum.FilesResumed
	rep.Records = sum.Records
	rep.Rows = sum.Inserted
	rep.Seconds = el.Seconds()
	rep.RecordsPerSec = float64(sum.Records) / el.Seconds()
	rep.RowsPerSec = float64(sum.Inserted) / el.Seconds()
	rep.MBPerSec = float64(sum.BytesRead) / 1e6 / el.Seconds()
	rep.PeakRSSMB = PeakRSSMB()
	if o.Rescan {
		start = time.Now()
		again, err := ingest.Index(ctx, db, ingest.Options{Paths: []string{o.Corpus}, Hostname: host, Workers: o.Workers})
		if err != nil {
			return rep, err
		}
		rep.RescanSeconds = time.Since(start).Seconds()
		rep.RescanFiles = again.FilesUnchanged
		if again.Inserted != 0 {
			return rep, fmt.Errorf("re-scan inserted %d rows; expected 0", again.Inserted)
		}
	}
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(o.DBPath + suffix); err == nil {
			rep.DBBytes += fi.Size()
		}
	}
	return rep, nil
}

// TempDB returns a fresh database path in a new temporary folder.
func TempDB() (string, func(), error) {
	dir, err := os.MkdirTemp("", "cortex-bench-")
	if err != nil {
		return "", nil, err
	}
	return filepath.Join(dir, "bench.db"), func() { os.RemoveAll(dir) }, nil
}
