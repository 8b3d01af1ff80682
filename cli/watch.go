package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/watch"
)

// WatchOptions are the flags of `cortex watch`.
type WatchOptions struct {
	Paths    []string
	Debounce time.Duration
	Rescan   time.Duration
	JSON     bool
}

// NewCmdWatch builds `cortex watch`. runF replaces the run function in tests.
func NewCmdWatch(f *Factory, runF func(context.Context, *WatchOptions) error) *cobra.Command {
	opts := &WatchOptions{}
	cmd := &cobra.Command{
		Use:   "watch [PATH...]",
		Short: "Keep the store current: index transcripts as the agents write them",
		Long: `Watch indexes transcripts continuously. It first indexes everything (like
cortex index), then ingests each change within about a second: a line an agent
appends is searchable almost at once. A full rescan every --rescan catches
anything the file notifications missed.

Without PATH it watches the same folders as cortex index (the [index] paths of the
config, else ~/.claude/projects, ~/.codex/sessions, ~/.codex/archived_sessions and
~/.gemini/tmp); folders that do not exist yet are picked up when they are created.

A database locked by another process is retried with backoff; watch only stops on
Ctrl-C (or SIGTERM), with exit status 0.`,
		Example: `  cortex watch
  cortex watch ~/work/transcripts --debounce 500ms
  cortex watch --json > ingest.log`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if opts.Debounce < 0 || opts.Rescan < 0 {
				return usageError{fmt.Errorf("invalid argument: --debounce and --rescan must not be negative")}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return watchRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().DurationVar(&opts.Debounce, "debounce", watch.DefaultDebounce, "quiet time after a change before it is ingested")
	cmd.Flags().DurationVar(&opts.Rescan, "rescan", watch.DefaultRescan, "interval of full rescans (a safety net for missed changes)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print one JSON line per ingest pass")
	return cmd
}

// watchOptions builds the watcher's options for paths (empty: the folders
// `cortex index` reads by default) from the configuration. Callers set
// Debounce, Rescan and OnIngest.
func watchOptions(f *Factory, paths []string) (watch.Options, error) {
	cfg, err := f.Config()
	if err != nil {
		return watch.Options{}, err
	}
	roots := append([]string(nil), paths...)
	if len(roots) == 0 {
		roots = append(roots, cfg.Index.Paths...)
	}
	if len(roots) == 0 {
		for _, r := range ingest.DefaultRoots(cfg.Home) {
			roots = append(roots, r.Path)
		}
	}
	for i, p := range roots {
		abs, err := filepath.Abs(p)
		if err != nil {
			return watch.Options{}, cortex.WrapError(cortex.CodeInvalid, err, "invalid path %q", p)
		}
		roots[i] = abs
	}
	return watch.Options{
		Roots: roots,
		Index: ingest.Options{
			Home: cfg.Home, Hostname: cfg.Hostname, Workers: cfg.Index.Workers,
			Logger: f.Logger, Now: f.Now,
		},
		Logger: f.Logger,
	}, nil
}

func watchRun(ctx context.Context, f *Factory, opts *WatchOptions) error {
	limitMemoryForIngest()
	wopts, err := watchOptions(f, opts.Paths)
	if err != nil {
		return err
	}
	wopts.Debounce, wopts.Rescan = opts.Debounce, opts.Rescan
	if err := f.LocalOnly("cortex watch"); err != nil {
		return err
	}
	db, err := f.OpenDB(ctx, false)
	if err != nil {
		return err
	}
	defer db.Close()

	now := f.Now
	if now == nil {
		now = time.Now
	}
	var passes, inserted int64
	wopts.OnIngest = func(r watch.Report) {
		passes++
		inserted += r.Summary.Inserted
		if opts.JSON {
			printWatchJSON(f, now(), r)
			return
		}
		printWatchLine(f, now(), r)
	}
	// The startup line goes to stderr under --json, so stdout stays one
	// JSON object per line.
	out := f.IO.Out
	if opts.JSON {
		out = f.IO.ErrOut
	}
	var waiting []string
	for _, r := range wopts.Roots {
		if _, err := os.Stat(r); err != nil {
			waiting = append(waiting, r)
		}
	}
	fmt.Fprintf(out, "Watching %d %s for transcripts into %s (Ctrl-C to stop)\n", len(wopts.Roots), watchPlural(len(wopts.Roots), "path", "paths"), Safe(db.Path()))
	for _, r := range wopts.Roots {
		note := ""
		for _, w := range waiting {
			if w == r {
				note = "  (not there yet: picked up when created)"
			}
		}
		fmt.Fprintf(out, "  %s%s\n", Safe(r), note)
	}
	if err := watch.Run(ctx, db, wopts); err != nil {
		return err
	}
	if !opts.JSON {
		f.IO.Printf("Stopped after %d ingest %s, %d rows stored.\n", passes, watchPlural(int(passes), "pass", "passes"), inserted)
	}
	return nil
}

// watchLine is the --json output of one ingest pass.
type watchLine struct {
	Time      string  `json:"time"`
	Full      bool    `json:"full_scan"`
	Paths     int     `json:"paths"`
	FilesRead int     `json:"files_read"`
	Records   int64   `json:"records"`
	Rows      int64   `json:"rows"`
	Updated   int64   `json:"rows_updated"`
	Errors    int     `json:"errors"`
	Error     string  `json:"error,omitempty"`
	Took      float64 `json:"took"`
}

func printWatchJSON(f *Factory, t time.Time, r watch.Report) {
	l := watchLine{
		Time: cortex.FormatTime(t), Full: r.Full, Paths: len(r.Paths),
		FilesRead: r.Summary.FilesRead + r.Summary.FilesResumed,
		Records:   r.Summary.Records, Rows: r.Summary.Inserted, Updated: r.Summary.Updated,
		Errors: len(r.Summary.Errors), Took: float64(r.Took.Milliseconds()) / 1000,
	}
	if r.Err != nil {
		l.Errors++
		l.Error = cortex.ErrorMessage(r.Err)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return
	}
	_, _ = f.IO.Out.Write(append(b, '\n'))
}

// printWatchLine prints a pass that stored something (failures are logged
// as warnings by the watcher).
func printWatchLine(f *Factory, t time.Time, r watch.Report) {
	s := r.Summary
	if s.Inserted == 0 && s.Updated == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s +%d %s", t.Local().Format("15:04:05"), s.Inserted, watchPlural(int(s.Inserted), "row", "rows"))
	if s.Updated > 0 {
		fmt.Fprintf(&b, " (%d updated)", s.Updated)
	}
	files := s.FilesRead + s.FilesResumed
	fmt.Fprintf(&b, " from %d %s (%.2fs", files, watchPlural(files, "file", "files"), r.Took.Seconds())
	if r.Full {
		b.WriteString(", full scan")
	}
	b.WriteString(")\n")
	f.IO.Printf("%s", b.String())
}

func watchPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
