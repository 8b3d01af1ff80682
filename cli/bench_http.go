package cli

import (
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/bench"
)

// BenchHTTPOptions are the flags of `cortex bench http`.
type BenchHTTPOptions struct {
	Corpus         string
	Readers        int
	DurationAfter  time.Duration
	RequestTimeout time.Duration
	Workers        int
	DBPath         string // --bench-db: database to create ("" = temporary)
	Keep           bool
	JSON           bool
}

// NewCmdBenchHTTP builds `cortex bench http`.
func NewCmdBenchHTTP(f *Factory, runF func(context.Context, *BenchHTTPOptions) error) *cobra.Command {
	opts := &BenchHTTPOptions{}
	cmd := &cobra.Command{
		Use:   "http CORPUS",
		Short: "Index CORPUS while concurrent REST readers query it; report errors and latency percentiles",
		Long: `Indexes CORPUS into a fresh database while --readers clients query the REST API served
from the same store on a loopback listener (with a read token), until the ingest ends
(plus --duration-after). The readers cycle through a fixed weighted mix: status, search,
skill-incidents since 30d, skill-investigate of skills from the skills summary, the
skills summary, failed MCP/tool calls and abuse incidents. Every transport error and
every non-200 answer is an error. Reports the ingest throughput under load, requests/s,
errors (with the first bodies) and p50/p95/p99/max latency overall and per route.`,
		Example: `  cortex bench generate --size 1GB --out /tmp/corpus-1g
  cortex bench http /tmp/corpus-1g --readers 50
  cortex bench http /tmp/corpus-1g --duration-after 30s --json`,
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().IntVar(&opts.Readers, "readers", bench.DefaultHTTPReaders, "concurrent REST readers")
	cmd.Flags().DurationVar(&opts.DurationAfter, "duration-after", 0, "keep reading this long after the ingest ends")
	cmd.Flags().DurationVar(&opts.RequestTimeout, "timeout", bench.DefaultHTTPRequestTimeout, "per-request timeout (a timeout is an error)")
	cmd.Flags().IntVar(&opts.Workers, "workers", 0, "parallel parsers of the ingest (default: one per CPU but one)")
	cmd.Flags().StringVar(&opts.DBPath, "bench-db", "", "database to create (default: a temporary file, removed afterwards)")
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "keep the database")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		opts.Corpus = args[0]
		if opts.Readers <= 0 {
			return cortex.Errorf(cortex.CodeInvalid, "--readers must be positive, got %d", opts.Readers)
		}
		if opts.DurationAfter < 0 || opts.RequestTimeout <= 0 {
			return cortex.Errorf(cortex.CodeInvalid, "--duration-after must not be negative and --timeout must be positive")
		}
		if runF != nil {
			return runF(cmd.Context(), opts)
		}
		return benchHTTPRun(cmd.Context(), f, opts)
	}
	return cmd
}

func benchHTTPRun(ctx context.Context, f *Factory, opts *BenchHTTPOptions) error {
	dbPath, cleanup := opts.DBPath, func() {}
	if dbPath == "" {
		p, c, err := bench.TempDB()
		if err != nil {
			return err
		}
		dbPath, cleanup = p, c
	}
	if !opts.Keep {
		defer cleanup()
	}
	live := f.IO.StderrTTY && !opts.JSON
	rep, err := bench.HTTPLoad(ctx, bench.HTTPLoadOptions{Corpus: opts.Corpus, DBPath: dbPath, Readers: opts.Readers,
		DurationAfter: opts.DurationAfter, RequestTimeout: opts.RequestTimeout, Workers: opts.Workers, Now: f.Now,
		Progress: func(p bench.HTTPProgress) {
			if live {
				state := fmt.Sprintf("%d/%d files, %d/%d MB, %d rows", p.Ingest.FilesDone, p.Ingest.FilesTotal,
					p.Ingest.BytesDone>>20, p.Ingest.BytesTotal>>20, p.Ingest.Inserted)
				if p.IngestDone {
					state = "ingest done"
				}
				fmt.Fprintf(f.IO.ErrOut, "\r%s; %d requests, %d errors   ", state, p.Requests, p.Errors)
			}
		}})
	if live {
		fmt.Fprintln(f.IO.ErrOut)
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := f.IO.WriteJSON(rep); err != nil {
			return err
		}
	} else if err := printBenchHTTP(f, rep, opts.Keep, dbPath); err != nil {
		return err
	}
	if rep.Errors > 0 {
		return cortex.Errorf(cortex.CodeInternal, "%d of %d requests failed", rep.Errors, rep.Requests)
	}
	return nil
}

func printBenchHTTP(f *Factory, rep bench.HTTPLoadReport, keep bool, dbPath string) error {
	f.IO.Printf("corpus    %s: %.1f MB, %d files\n", rep.Corpus, float64(rep.CorpusBytes)/1e6, rep.Files)
	f.IO.Printf("ingest    %d records read, %d rows stored in %.2f s with %d readers: %.0f records/s, %.0f rows/s, %.1f MB/s\n",
		rep.Records, rep.Rows, rep.IngestSeconds, rep.Readers, rep.RecordsPerSec, rep.RowsPerSec, rep.MBPerSec)
	f.IO.Printf("requests  %d in %.2f s: %.0f/s, %d errors; %d skills investigated\n",
		rep.Requests, rep.Seconds, rep.RequestsPerSec, rep.Errors, rep.SkillsInvestigated)
	f.IO.Printf("memory    %s\n", peakRSS(rep.PeakRSSMB))
	f.IO.Printf("database  %.1f MB\n", float64(rep.DBBytes)/1e6)
	if keep {
		f.IO.Printf("kept      %s\n", dbPath)
	}
	w := tabwriter.NewWriter(f.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ROUTE\tREQUESTS\tERRORS\tP50 MS\tP95 MS\tP99 MS\tMAX MS")
	for _, r := range slices.Concat(rep.Routes, []bench.HTTPRouteLatency{rep.Overall}) {
		fmt.Fprintf(w, "%s\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\n", r.Route, r.Requests, r.Errors, r.P50MS, r.P95MS, r.P99MS, r.MaxMS)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, k := range rep.ErrorKinds {
		f.IO.Printf("errors    %d× %s status %d: %s\n", k.Count, k.Route, k.Status, Safe(k.Message))
	}
	for _, e := range rep.ErrorSamples {
		f.IO.Printf("first     %s at %.1f s after %.0f ms: status %d: %s\n", e.URL, e.AtSec, e.MS, e.Status, Safe(e.Body))
	}
	return nil
}
