package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

// Limits of `cortex logs`.
const (
	DefaultLogsLimit = 100
	MaxLogsLimit     = 10000
)

// LogsOptions are the flags of `cortex logs`.
type LogsOptions struct {
	Host     string
	App      string
	Severity string
	Source   string
	Since    string
	Until    string
	Limit    int
	Cursor   string
	JSON     bool
}

// NewCmdLogs builds `cortex logs`.
func NewCmdLogs(f *Factory, runF func(context.Context, *LogsOptions) error) *cobra.Command {
	opts := &LogsOptions{}
	cmd := &cobra.Command{
		Use:   "logs",
		Short: "List non-AI log rows (syslog, imported log files), newest first",
		Long: `Lists the log rows received by the syslog receiver (cortex syslog, cortex serve --syslog)
or imported with cortex ingest-logs: rows without an agent, which incident evidence
shows as nearby_logs / nearby_errors. cortex search finds them too.

--severity keeps that severity and worse (emerg, alert, crit, err, warning, notice,
info, debug; error, warn, fatal and numbers 0-7 are accepted). --source keeps rows
whose source starts with it: syslog, syslog:udp, syslog:tcp, file:/var/log/syslog.`,
		Example: `  cortex logs --since 1h
  cortex logs --host web1 --severity err --json
  cortex logs --app sshd --source file:/var/log/auth.log`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return logsRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Host, "host", "", "only this host")
	cmd.Flags().StringVar(&opts.App, "app", "", "only this app name (syslog APP-NAME / tag)")
	cmd.Flags().StringVar(&opts.Severity, "severity", "", "this severity and worse (err, warning, …)")
	cmd.Flags().StringVar(&opts.Source, "source", "", "only sources starting with this (syslog, file:/path)")
	cmd.Flags().StringVar(&opts.Since, "since", "", "logged since (30m, 7d, today, 2026-11-30, RFC 3339)")
	cmd.Flags().StringVar(&opts.Until, "until", "", "logged before")
	cmd.Flags().IntVar(&opts.Limit, "limit", DefaultLogsLimit, fmt.Sprintf("maximum rows (max %d)", MaxLogsLimit))
	cursorFlag(cmd, &opts.Cursor)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func logsRun(ctx context.Context, f *Factory, opts *LogsOptions) error {
	since, until, err := timeRange(f, opts.Since, opts.Until)
	if err != nil {
		return err
	}
	after, err := cortex.DecodeCursor(opts.Cursor)
	if err != nil {
		return err
	}
	p := store.LogParams{Host: opts.Host, App: opts.App, Source: opts.Source, Since: since, Until: until, After: after}
	if opts.Severity != "" {
		if p.Severity, err = cortex.ParseSeverity(opts.Severity); err != nil {
			return cortex.Errorf(cortex.CodeInvalid, "--severity: %s", cortex.ErrorMessage(err))
		}
	}
	limit, clamped, err := cortex.ClampLimit(opts.Limit, DefaultLogsLimit, MaxLogsLimit)
	if err != nil {
		return err
	}
	p.Limit = limit
	db, closeStore, err := f.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer closeStore()
	res, err := db.Logs(ctx, p)
	if err != nil {
		return err
	}
	res.LimitClampedTo = clamped
	if opts.JSON {
		return f.IO.WriteJSON(res)
	}
	if len(res.Logs) == 0 {
		f.IO.Printf("No log rows found. Receive syslog (cortex syslog) or import log files (cortex ingest-logs FILE).\n")
		return nil
	}
	t := newTable(f, column{name: "TIME"}, column{name: "HOST", max: 32, shrink: true}, column{name: "APP", max: 24, shrink: true},
		column{name: "SEVERITY", style: severityStyle}, column{name: "MESSAGE", max: 160, shrink: true})
	for _, e := range res.Logs {
		t.add(f.timeCell(e.Timestamp, true), e.Hostname, e.AppName, string(e.Severity), e.Message)
	}
	t.print()
	printMore(f, len(res.Logs), 0, res.Next)
	return nil
}
