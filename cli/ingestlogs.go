package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/logimport"
)

// IngestLogsOptions are the flags of `cortex ingest-logs`.
type IngestLogsOptions struct {
	Paths  []string
	Format string
	Host   string
	Force  bool
	JSON   bool
}

// NewCmdIngestLogs builds `cortex ingest-logs`.
func NewCmdIngestLogs(f *Factory, runF func(context.Context, *IngestLogsOptions) error) *cobra.Command {
	opts := &IngestLogsOptions{}
	cmd := &cobra.Command{
		Use:   "ingest-logs FILE...",
		Short: "Import log files (syslog text, JSON lines, journalctl -o json) as non-AI log rows",
		Long: `Imports log files into the store as rows without an agent: they are searchable,
listed by cortex logs, and shown as nearby_logs / nearby_errors in incident evidence
of the same host.

Formats (--format, default auto: detected from the first lines):
  syslog         RFC 3164 / RFC 5424 lines, with or without <PRI> (/var/log/syslog)
  json           JSON lines; time, level, message, host and app are read from the
                 common field names (time/timestamp/@timestamp/ts, level/severity/lvl,
                 message/msg, host/hostname, app/service/logger …)
  journald-json  the output of journalctl -o json

Lines that name no host get --host (default: the configured hostname). Lines that do
not parse are stored whole with a parse-error note. Imports are checkpointed like
transcripts: unchanged files cost a stat, appended files resume, rewritten or rotated
files are re-read, and no line is ever stored twice. Secrets are redacted.`,
		Example: `  cortex ingest-logs /var/log/syslog /var/log/auth.log
  journalctl -o json --since today > journal.json && cortex ingest-logs journal.json
  cortex ingest-logs app.log --format json --host web1 --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return ingestLogsRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", logimport.FormatAuto, "auto, syslog, json or journald-json")
	cmd.Flags().StringVar(&opts.Host, "host", "", "hostname of lines that name none (default: the configured hostname)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "re-read every file from the start (never duplicates rows)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the summary as JSON")
	return cmd
}

func ingestLogsRun(ctx context.Context, f *Factory, opts *IngestLogsOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	host := opts.Host
	if host == "" {
		host = cfg.Hostname
	}
	if err := f.LocalOnly("cortex ingest-logs"); err != nil {
		return err
	}
	db, err := f.OpenDB(ctx, false)
	if err != nil {
		return err
	}
	defer db.Close()
	sum, err := logimport.Import(ctx, db, opts.Paths, logimport.Options{Format: opts.Format, Host: host, Force: opts.Force,
		Logger: f.Logger, Now: f.Now})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("canceled: the next run resumes from the stored checkpoints")
		}
		return err
	}
	if sum.Failed == len(sum.Files) {
		var msgs []string
		for _, r := range sum.Files {
			msgs = append(msgs, r.Path+": "+r.Error)
		}
		return cortex.Errorf(cortex.CodeNotFound, "no log file imported: %s", strings.Join(msgs, "; "))
	}
	if opts.JSON {
		return f.IO.WriteJSON(sum)
	}
	o := f.IO
	o.Printf("Imported into %s\n", db.Path())
	for _, r := range sum.Files {
		if r.Outcome == logimport.OutcomeFailed {
			fmt.Fprintf(o.ErrOut, "cortex: %s: %s\n", Safe(r.Path), Safe(r.Error))
			continue
		}
		o.Printf("  %s (%s, %s): %d lines, %d rows inserted, %d duplicates", Safe(r.Path), r.Format, r.Outcome, r.Lines,
			r.Inserted, r.Duplicates)
		if r.Malformed > 0 {
			o.Printf(", %d malformed (stored raw)", r.Malformed)
		}
		if r.Truncated > 0 {
			o.Printf(", %d cut to the line limit", r.Truncated)
		}
		if r.PendingBytes > 0 {
			o.Printf(", last line incomplete (left for the next import)")
		}
		o.Printf("\n")
	}
	o.Printf("  %d lines, %d rows inserted in %.1fs (%.0f lines/s)\n", sum.Lines, sum.Inserted, sum.ElapsedS, sum.LinesPerS)
	return nil
}
