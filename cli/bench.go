package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/bench"
	"github.com/cortexhq/cortex/bench/gen"
	"github.com/cortexhq/cortex/ingest"
)

// NewCmdBench builds `cortex bench` (corpus generator and ingest benchmark).
func NewCmdBench(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Generate a synthetic corpus and measure ingest and queries",
		Long: `bench generate scales the real transcript corpus to any size (fresh ids, shifted
timestamps, same record shapes); bench ingest indexes a corpus into a fresh
database and reports records/s, MB/s, peak RSS and the cost of an unchanged re-scan;
bench queries times the incident queries on an existing database (p50/p95).`,
		Example: `  cortex bench generate --source ../shared/corpus/real --size 1GB --out /tmp/corpus-1g
  cortex bench ingest /tmp/corpus-1g --json
  cortex --db /tmp/big.db bench queries --runs 20`,
	}
	cmd.AddCommand(newCmdBenchGenerate(f), newCmdBenchIngest(f), newCmdBenchQueries(f), newCmdBenchWatch(f), NewCmdBenchHTTP(f, nil), newCmdBenchDetection(f))
	return cmd
}

func newCmdBenchGenerate(f *Factory) *cobra.Command {
	var source, out, size string
	var seed int64
	var days int
	var overwrite, asJSON bool
	cmd := &cobra.Command{
		Use:   "generate --out DIR --size SIZE",
		Short: "Write a synthetic corpus of SIZE bytes (e.g. 200MB, 1GB) built from real transcripts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := parseSize(size)
			if err != nil {
				return err
			}
			if out == "" {
				return cortex.Errorf(cortex.CodeInvalid, "--out is required")
			}
			if days < 1 {
				return cortex.Errorf(cortex.CodeInvalid, "--days must be at least 1, got %d", days)
			}
			start := time.Now()
			res, err := gen.Generate(cmd.Context(), gen.Options{SourceDir: source, OutDir: out, TargetBytes: n,
				Seed: seed, Now: f.Now(), Window: time.Duration(days) * 24 * time.Hour, Overwrite: overwrite, Progress: func(w int64) {
					if f.IO.StderrTTY && !asJSON {
						fmt.Fprintf(f.IO.ErrOut, "\rgenerated %d MB", w>>20)
					}
				}})
			if f.IO.StderrTTY && !asJSON {
				fmt.Fprintln(f.IO.ErrOut)
			}
			if err != nil {
				return cortex.WrapError(cortex.CodeInvalid, err, "generate: %v", err)
			}
			if asJSON {
				return f.IO.WriteJSON(res)
			}
			f.IO.Printf("Wrote %d files, %.1f MB, %d lines (%d copies) to %s in %s\n", res.Files, float64(res.Bytes)/1e6,
				res.Lines, res.Copies, out, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().StringVar(&source, "source", "../shared/corpus/real", "real corpus to scale")
	cmd.Flags().StringVar(&out, "out", "", "output folder (created)")
	cmd.Flags().StringVar(&size, "size", "1GB", "target size (KB, MB, GB)")
	cmd.Flags().Int64Var(&seed, "seed", 1, "random seed (same seed, same corpus)")
	cmd.Flags().IntVar(&days, "days", 90, "sessions end within this many days before now (1: a day's new transcripts, as a store receives them)")
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace an existing generated corpus in --out")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newCmdBenchIngest(f *Factory) *cobra.Command {
	var asJSON, keep, noEvents bool
	var workers int
	var dbPath string
	cmd := &cobra.Command{
		Use:   "ingest CORPUS",
		Short: "Index CORPUS into a fresh database and report throughput and memory",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			limitMemoryForIngest() // as cortex index does
			cleanup := func() {}
			if dbPath == "" {
				p, c, err := bench.TempDB()
				if err != nil {
					return err
				}
				dbPath, cleanup = p, c
			}
			if !keep {
				defer cleanup()
			}
			var last time.Time
			rep, err := bench.RunIngest(cmd.Context(), bench.IngestOptions{Corpus: args[0], DBPath: dbPath, Workers: workers, Rescan: true, NoEvents: noEvents,
				Progress: func(p ingest.Progress) {
					if f.IO.StderrTTY && !asJSON && time.Since(last) > 500*time.Millisecond {
						last = time.Now()
						fmt.Fprintf(f.IO.ErrOut, "\r%d/%d files, %d/%d MB, %d rows", p.FilesDone, p.FilesTotal, p.BytesDone>>20, p.BytesTotal>>20, p.Inserted)
					}
				}})
			if f.IO.StderrTTY && !asJSON {
				fmt.Fprintln(f.IO.ErrOut)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return f.IO.WriteJSON(rep)
			}
			f.IO.Printf("corpus    %s: %.1f MB, %d files\n", rep.Corpus, float64(rep.CorpusBytes)/1e6, rep.Files)
			f.IO.Printf("ingest    %d records read, %d rows stored in %.2f s: %.0f records/s, %.0f rows/s, %.1f MB/s\n",
				rep.Records, rep.Rows, rep.Seconds, rep.RecordsPerSec, rep.RowsPerSec, rep.MBPerSec)
			f.IO.Printf("memory    %s\n", peakRSS(rep.PeakRSSMB))
			f.IO.Printf("database  %.1f MB\n", float64(rep.DBBytes)/1e6)
			f.IO.Printf("re-scan   %d unchanged files in %.3f s\n", rep.RescanFiles, rep.RescanSeconds)
			if keep {
				f.IO.Printf("kept      %s\n", dbPath)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&workers, "workers", 0, "parallel parsers (default: one per CPU but one, which the writer keeps)")
	cmd.Flags().StringVar(&dbPath, "bench-db", "", "database to create (default: a temporary file, removed afterwards)")
	cmd.Flags().BoolVar(&keep, "keep", false, "keep the database")
	cmd.Flags().BoolVar(&noEvents, "no-events", false, "store rows only, without event extraction")
	return cmd
}

func newCmdBenchQueries(f *Factory) *cobra.Command {
	var asJSON bool
	var runs int
	var skill, cpuProfile string
	var only []string
	cmd := &cobra.Command{
		Use:   "queries",
		Short: "Time the incident queries on the database (p50/p95 over --runs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			return withService(ctx, f, func(s *app.Service) error {
				rep, err := bench.RunQueries(ctx, s, bench.QueryOptions{Runs: runs, Skill: skill, Now: f.Now(), Only: only})
				if err != nil {
					return err
				}
				if asJSON {
					return f.IO.WriteJSON(rep)
				}
				f.IO.Printf("database  %d rows, %d runs per query after one warm-up\n", rep.Rows, runs)
				w := tabwriter.NewWriter(f.IO.Out, 0, 0, 2, ' ', 0)
				fmt.Fprintln(w, "QUERY\tP50 MS\tP95 MS\tMAX MS\tRESULT")
				for _, q := range rep.Queries {
					fmt.Fprintf(w, "%s\t%.1f\t%.1f\t%.1f\t%s\n", q.Command, q.P50MS, q.P95MS, q.MaxMS, q.Result)
				}
				return w.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&runs, "runs", 10, "timed runs per query")
	cmd.Flags().StringVar(&skill, "skill", "", "skill to investigate (default: the skill of the top incident of the last 30 days)")
	cmd.Flags().StringSliceVar(&only, "only", nil, "only these queries (skill-incidents, skill-investigate, friction-incidents, friction-investigate, mcp-incidents, hook-incidents, incidents, abuse, mcp-investigate, hook-investigate, search-common, search-phrase, search-rank)")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (read it with go tool pprof)")
	return cmd
}

// startCPUProfile starts a CPU profile into path; stop ends it.
func startCPUProfile(path string) (stop func(), err error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeInvalid, err, "cpu profile: %v", err)
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		fh.Close()
		return nil, cortex.WrapError(cortex.CodeInternal, err, "cpu profile: %v", err)
	}
	return func() { pprof.StopCPUProfile(); fh.Close() }, nil
}

// parseSize parses "500MB", "1GB", "1024" (bytes).
func parseSize(s string) (int64, error) {
	v := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GB", 1 << 30}, {"G", 1 << 30}, {"MB", 1 << 20}, {"M", 1 << 20}, {"KB", 1 << 10}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSuffix(v, u.suffix), u.m
			break
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || n <= 0 {
		return 0, cortex.Errorf(cortex.CodeInvalid, "invalid size %q (use e.g. 500MB or 1GB)", s)
	}
	return int64(n * float64(mult)), nil
}

// peakRSS renders a peak RSS figure; 0 means the platform cannot measure it.
func peakRSS(mb float64) string {
	if mb == 0 {
		return "peak RSS not measured on this platform"
	}
	return fmt.Sprintf("peak RSS %.0f MB", mb)
}
