package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex/app"
)

// RedactOptions are the flags of `cortex redact`.
type RedactOptions struct {
	Rescan bool
	DryRun bool
	JSON   bool
}

// NewCmdRedact builds `cortex redact --rescan`.
func NewCmdRedact(f *Factory, runF func(context.Context, *RedactOptions) error) *cobra.Command {
	opts := &RedactOptions{}
	cmd := &cobra.Command{
		Use:   "redact --rescan",
		Short: "Re-redact what is stored with the current secret rules",
		Long: `Applies the current secret rules to everything already stored: every row's raw record
(decompressed, redacted, recompressed; its import-ledger entry follows, so re-reading the file
does not store it again), its searchable text (re-indexed), and the other stored texts — tool-call
arguments and output previews, hook commands and output, parse errors, audited LLM errors.

Run it after upgrading Cortex (new rules) or when a secret format was missed. Each batch of rows is
one transaction: an interrupted run keeps its work, and the next run finds nothing left to do.
--dry-run counts what would change.`,
		Example: `  cortex redact --rescan --dry-run
  cortex redact --rescan --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !opts.Rescan {
				return usageError{fmt.Errorf("say what to do: --rescan")}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return redactRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Rescan, "rescan", false, "re-redact every stored row and text with the current rules")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "write nothing; report what would change")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func redactRun(ctx context.Context, f *Factory, opts *RedactOptions) error {
	if err := f.LocalOnly("cortex redact"); err != nil {
		return err
	}
	db, err := f.OpenExistingDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	progress, done, err := scanProgress(f, opts.JSON, nil)
	if err != nil {
		return err
	}
	res, err := f.NewService(db).Rescan(ctx, opts.DryRun, "cli", progress)
	done()
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.IO.WriteJSON(res)
	}
	verb := "redacted"
	if res.DryRun {
		verb = "would redact"
	}
	f.IO.Printf("Rescanned %d rows with %d rules: %s %d secrets in %d raw records and %d texts (re-indexed), and %d other stored values\n",
		res.Scanned, res.RulesActive, verb, res.Redactions, res.RawRecords, res.Messages, res.Values)
	return nil
}

// PurgeOptions are the flags of `cortex purge`.
type PurgeOptions struct {
	Session, Source, Match, Tool string
	DryRun, JSON                 bool
}

// NewCmdPurge builds `cortex purge`.
func NewCmdPurge(f *Factory, runF func(context.Context, *PurgeOptions) error) *cobra.Command {
	opts := &PurgeOptions{}
	cmd := &cobra.Command{
		Use:   "purge (--session ID | --source PATH | --match TEXT)",
		Short: "Delete stored rows of a session, a transcript file, or containing a text",
		Long: `Deletes rows with everything derived from them: their full-text entries, skill, tool-call
and hook events, and their share of the session and count rollups. Choose the rows by session
(--session, optionally --tool), by the transcript file they were read from (--source, the path as
indexed; its parse errors go too), or by a literal text in their searchable text or raw record
(--match, 8+ characters; scans every row).

What was imported stays claimed: indexing the unchanged file again does not bring the rows back
(records appended to it later are indexed as usual). Use --dry-run first: it counts what would be
deleted.`,
		Example: `  cortex purge --match 'hunter2-prod-password' --dry-run
  cortex purge --session 03eb5929-52b3-4b13-ada3-b93ae35806b8 --tool claude
  cortex purge --source ~/.codex/sessions/2026/11/30/rollout-….jsonl --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return purgeRun(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Session, "session", "", "delete the rows of this session id")
	fl.StringVar(&opts.Source, "source", "", "delete the rows read from this transcript file")
	fl.StringVar(&opts.Match, "match", "", "delete every row containing this literal text")
	fl.StringVar(&opts.Tool, "agent", "", "only rows of this agent: claude, codex or gemini (older name: --tool)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "delete nothing; count what would be deleted")
	fl.BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func purgeRun(ctx context.Context, f *Factory, opts *PurgeOptions) error {
	if err := f.LocalOnly("cortex purge"); err != nil {
		return err
	}
	db, err := f.OpenExistingDB(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	source := opts.Source
	if source != "" {
		// Sources are stored by absolute path, every link resolved (a
		// file already gone keeps the path as given).
		if abs, err := filepath.Abs(source); err == nil {
			source = abs
		}
		if real, err := filepath.EvalSymlinks(source); err == nil {
			source = real
		}
	}
	res, err := f.NewService(db).Purge(ctx, app.PurgeParams{Session: opts.Session, Source: source, Match: opts.Match,
		Tool: opts.Tool, DryRun: opts.DryRun})
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.IO.WriteJSON(res)
	}
	verb := "Deleted"
	if res.DryRun {
		verb = "Would delete"
	}
	f.IO.Printf("%s %d rows, %d events and %d parse errors of %d sessions (%d sessions left without rows)\n",
		verb, res.Rows, res.Events, res.ParseErrors, res.Sessions, res.SessionsRemoved)
	return nil
}

// scanProgress returns a progress callback for a row scan that counts on
// a terminal's stderr (nil otherwise), with the rate and, when total (if
// given) counts the rows to scan, the share done and the time left; and
// the function that ends its line.
func scanProgress(f *Factory, jsonOut bool, total func() (int64, error)) (func(int64), func(), error) {
	if !f.IO.StderrTTY || jsonOut {
		return nil, func() {}, nil
	}
	var n int64
	if total != nil {
		var err error
		if n, err = total(); err != nil {
			return nil, func() {}, err
		}
	}
	bar := newProgressLine(f.Now, n, "rows")
	return func(done int64) { fmt.Fprintf(f.IO.ErrOut, "\r%s", bar.line(done)) }, func() { fmt.Fprintln(f.IO.ErrOut) }, nil
}
