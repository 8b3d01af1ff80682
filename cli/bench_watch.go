package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/bench"
	"github.com/cortexhq/cortex/ingest"
)

// newCmdBenchWatch builds `cortex bench watch`.
func newCmdBenchWatch(f *Factory) *cobra.Command {
	var asJSON bool
	var appends int
	var idle time.Duration
	var cpuProfile string
	cmd := &cobra.Command{
		Use:   "watch [ROOT...]",
		Short: "Time the watcher on the database: its start, append-to-searchable, idle CPU",
		Long: `Runs the watcher on the database (--db) and measures three things: its first
full pass over ROOT... (transcripts already indexed are only stat'ed), the time
from appending a record to a transcript until cortex search finds it (over
--appends records, p50/p95/max), and the CPU it uses while nothing changes
(over --idle). The records are appended to a short Claude session in a
temporary folder; that session is purged from the database at the end.`,
		Example: `  cortex --db /tmp/big.db bench watch
  cortex bench watch ~/.claude/projects --appends 50 --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if appends <= 0 || idle <= 0 {
				return usageError{fmt.Errorf("invalid argument: --appends and --idle must be positive")}
			}
			ctx := cmd.Context()
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			roots := make([]string, 0, len(args))
			for _, a := range args {
				abs, err := filepath.Abs(a)
				if err != nil {
					return cortex.WrapError(cortex.CodeInvalid, err, "invalid path %q", a)
				}
				roots = append(roots, abs)
			}
			db, err := f.OpenDB(ctx, false)
			if err != nil {
				return err
			}
			defer db.Close()
			rep, err := bench.Watch(ctx, db, bench.WatchOptions{
				Roots: roots, Appends: appends, Idle: idle,
				Index: ingest.Options{Home: cfg.Home, Hostname: cfg.Hostname, Workers: cfg.Index.Workers, Logger: f.Logger},
			})
			if err != nil {
				return err
			}
			if asJSON {
				return f.IO.WriteJSON(rep)
			}
			f.IO.Printf("database            %d rows\n", rep.StoreRows)
			f.IO.Printf("start               %.2f s (first full pass: %d files, %d record bytes read)\n", rep.StartSeconds, rep.StartFiles, rep.StartRecordBytes)
			f.IO.Printf("append→searchable   p50 %.0f ms, p95 %.0f ms, max %.0f ms (%d records)\n", rep.AppendP50MS, rep.AppendP95MS, rep.AppendMaxMS, rep.Appends)
			f.IO.Printf("idle                %.1f%% CPU over %.0f s (%d passes, %d rows written)\n", rep.IdleCPUPct, rep.IdleSeconds, rep.IdlePasses, rep.IdleRowsAdded)
			f.IO.Printf("cleanup             %d bench rows purged\n", rep.Purged)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&appends, "appends", bench.DefaultWatchAppends, "records appended one at a time")
	cmd.Flags().DurationVar(&idle, "idle", bench.DefaultWatchIdle, "how long the idle watcher's CPU is measured")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (read it with go tool pprof)")
	return cmd
}
