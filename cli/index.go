package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/ingest"
)

// IndexOptions are the flags of `cortex index`.
type IndexOptions struct {
	Paths    []string
	Since    string
	Force    bool
	JSON     bool
	Workers  int
	NoEvents bool
}

// NewCmdIndex builds `cortex index`. runF replaces the run function in tests.
func NewCmdIndex(f *Factory, runF func(context.Context, *IndexOptions) error) *cobra.Command {
	opts := &IndexOptions{}
	cmd := &cobra.Command{
		Use:   "index [PATH...]",
		Short: "Index transcripts into the store (default: the agents' own folders)",
		Long: `Index reads Claude Code, Codex and Gemini CLI transcripts into the database.

Without PATH it reads ~/.claude/projects, ~/.codex/sessions, ~/.codex/archived_sessions
and ~/.gemini/tmp (missing folders are skipped). PATH may be files or folders; the
format of each file is detected from its content.

Indexing is idempotent: unchanged files cost one stat, appended files resume from
their checkpoint, rewritten files are re-read, and no record is ever stored twice.`,
		Example: `  cortex index
  cortex index ~/work/transcripts --since 7d
  cortex index session.jsonl --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return indexRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Since, "since", "", "only files modified since (30m, 7d, today, 2026-11-30, RFC 3339)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "re-read every file from the start (never duplicates rows)")
	cmd.Flags().IntVar(&opts.Workers, "workers", 0, "parallel file parsers (default: one per CPU but one, which the writer keeps)")
	cmd.Flags().BoolVar(&opts.NoEvents, "no-events", false, "store rows only; extract skill/tool/hook events later with `cortex ai backfill --all`")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the summary as JSON")
	return cmd
}

func indexRun(ctx context.Context, f *Factory, opts *IndexOptions) error {
	limitMemoryForIngest()
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	since, err := timeFlag(f, "since", opts.Since)
	if err != nil {
		return err
	}
	if err := f.LocalOnly("cortex index"); err != nil {
		return err
	}
	db, err := f.OpenDB(ctx, false)
	if err != nil {
		return err
	}
	defer db.Close()
	paths := opts.Paths
	if len(paths) == 0 {
		paths = cfg.Index.Paths
	}
	workers := opts.Workers
	if workers == 0 {
		workers = cfg.Index.Workers
	}
	io := f.IO
	var bar *progressbar.ProgressBar
	iopts := ingest.Options{
		Paths: paths, Home: cfg.Home, Since: since, Force: opts.Force, Hostname: cfg.Hostname,
		Workers: workers, Logger: f.Logger, Now: f.Now, NoEvents: opts.NoEvents,
	}
	if io.StderrTTY && !opts.JSON {
		iopts.Progress = func(p ingest.Progress) {
			if bar == nil {
				if p.BytesTotal == 0 {
					return
				}
				bar = progressbar.NewOptions64(p.BytesTotal,
					progressbar.OptionSetWriter(io.ErrOut),
					progressbar.OptionSetDescription("indexing"),
					progressbar.OptionShowBytes(true),
					progressbar.OptionShowCount(),
					progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionClearOnFinish(),
					progressbar.OptionSetWidth(30))
			}
			_ = bar.Set64(p.BytesDone)
			bar.Describe(fmt.Sprintf("indexing %d/%d files, %d rows", p.FilesDone, p.FilesTotal, p.Inserted))
		}
	}
	sum, err := ingest.Index(ctx, db, iopts)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	// The default folders come with the agents' hook configuration: keep its
	// inventory current too (explicit paths are transcripts only).
	var hooks *app.HookConfigResult
	if len(opts.Paths) == 0 && len(cfg.Index.Paths) == 0 && !sum.Canceled {
		svc := app.New(db)
		svc.Now = f.Now
		res, err := svc.CollectHookConfig(ctx, cfg.Home, cfg.Hostname)
		if err != nil {
			return err
		}
		hooks = &res
	}
	if opts.JSON {
		if err := io.WriteJSON(struct {
			ingest.Summary
			HookConfig *app.HookConfigResult `json:"hook_config,omitempty"`
		}{sum, hooks}); err != nil {
			return err
		}
		// The summary's errors list the failures; only the exit code is
		// still to come.
		return reported(sum.Failure())
	}
	printIndexSummary(f, db.Path(), sum)
	if hooks != nil && len(hooks.Files) > 0 {
		f.IO.Printf("  hook config: %d configured hooks in %d files (%d new)\n", hooks.Hooks, len(hooks.Files), hooks.Inserted)
	}
	if sum.Canceled {
		return fmt.Errorf("canceled: the next run resumes from the stored checkpoints")
	}
	// Everything readable was indexed; failures (listed above) still fail
	// the run, so scripts notice.
	return sum.Failure()
}

func printIndexSummary(f *Factory, dbPath string, s ingest.Summary) {
	o := f.IO
	if len(s.Roots) == 0 && len(s.Missing) == 0 {
		o.Printf("No transcript folders found (looked for ~/.claude/projects, ~/.codex/sessions, ~/.codex/archived_sessions, ~/.gemini/tmp).\nPass a path: cortex index PATH\n")
		return
	}
	o.Printf("Indexed into %s\n", dbPath)
	if b := s.Backfilled; b != nil {
		if len(b.Kinds) > 0 {
			o.Printf("  backfill: %s events extracted from %d stored rows (%d user, %d skill, %d tool-call, %d hook)\n",
				strings.Join(b.Kinds, ", "), b.Scanned, b.Events.Users, b.Events.Skills, b.Events.Tools, b.Events.Hooks)
		}
		if b.VoicesRead > 0 || b.CallFactsDerived > 0 || b.ClaimsRead > 0 {
			o.Printf("  upgrade: %d user acts read again, %d tool calls classified again, %d assistant messages read again for claims by this version's rules\n",
				b.VoicesRead, b.CallFactsDerived, b.ClaimsRead)
		}
	}
	o.Printf("  files:   %d seen, %d read, %d resumed, %d rewritten, %d unchanged", s.FilesSeen, s.FilesRead-s.FilesRewritten, s.FilesResumed, s.FilesRewritten, s.FilesUnchanged)
	if s.FilesMoved > 0 {
		o.Printf(", %d moved or renamed", s.FilesMoved)
	}
	if s.FilesOlder > 0 {
		o.Printf(", %d older than --since", s.FilesOlder)
	}
	if s.FilesUnsupported > 0 {
		o.Printf(", %d not transcripts", s.FilesUnsupported)
	}
	if s.FilesEmpty > 0 {
		o.Printf(", %d empty", s.FilesEmpty)
	}
	if s.FilesFailed > 0 {
		o.Printf(", %d failed", s.FilesFailed)
	}
	o.Printf("\n")
	o.Printf("  records: %d read, %d rows inserted, %d updated, %d duplicates skipped\n", s.Records, s.Inserted, s.Updated, s.Duplicates)
	o.Printf("  events:  %d skill, %d tool-call, %d hook, %d user\n", s.Events.Skills, s.Events.Tools, s.Events.Hooks, s.Events.Users)
	if len(s.Skipped) > 0 {
		keys := make([]string, 0, len(s.Skipped))
		for k := range s.Skipped {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%d %s", s.Skipped[k], k))
		}
		o.Printf("  not stored: %s\n", strings.Join(parts, ", "))
	}
	if s.ParseErrors > 0 || s.Warnings > 0 || s.UnknownTypes > 0 || s.PendingFiles > 0 {
		o.Printf("  problems: %d parse errors, %d warnings, %d records of unknown type, %d files with an incomplete last record (see `cortex status`)\n",
			s.ParseErrors, s.Warnings, s.UnknownTypes, s.PendingFiles)
	}
	if s.BlobBytesNotStored > 0 {
		o.Printf("  blobs:   %.1f MB of base64 images, signatures and encrypted reasoning not stored\n", float64(s.BlobBytesNotStored)/1e6)
	}
	o.Printf("  %.1f MB in %s: %.0f records/s, %.0f rows/s, %.1f MB/s\n", float64(s.BytesRead)/1e6, time.Duration(s.Elapsed).Round(time.Millisecond), s.RecordsPerS, s.RowsPerS, s.MBPerS)
	for _, m := range s.Missing {
		fmt.Fprintf(o.ErrOut, "cortex: warning: %s does not exist\n", Safe(m))
	}
	for i, e := range s.Errors {
		if i == 10 {
			fmt.Fprintf(o.ErrOut, "cortex: … and %d more file errors (use --json for all)\n", len(s.Errors)-10)
			break
		}
		fmt.Fprintf(o.ErrOut, "cortex: %s: %s\n", Safe(e.Path), Safe(e.Error))
	}
}
