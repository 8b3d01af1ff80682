package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/postgres"
	"github.com/cortexhq/cortex/push"
	"github.com/cortexhq/cortex/store"
)

// PushOptions are the flags of `cortex push`.
type PushOptions struct {
	URL      string
	Content  string
	Watch    bool
	Interval time.Duration
	JSON     bool
	// BatchRows bounds the rows of one transaction (hidden; tests).
	BatchRows int
}

// DefaultPushInterval is the pause between two pushes of push --watch.
const DefaultPushInterval = 30 * time.Second

// NewCmdPush builds `cortex push`.
func NewCmdPush(f *Factory, runF func(context.Context, *PushOptions) error) *cobra.Command {
	opts := &PushOptions{}
	cmd := &cobra.Command{
		Use:   "push",
		Short: "Send this machine's store to a team's PostgreSQL store",
		Long: `Push sends the local store — sessions, rows, skill, tool-call, hook and user
events — to a team's PostgreSQL store, where cortex serve --store (and every read
command with --store) shows the team's incidents with the same actions as on a laptop.

The URL comes from --url, [push] url or CORTEX_PUSH_URL (postgres://user:pass@host/db,
libpq parameters such as sslmode allowed). The first push creates the schema.

Only what is new since the last push is sent, plus rows that changed (a record its
agent rewrote, a tool call completed later) or went away: a second push sends
nothing. Each transaction carries this store's marks, so a push killed at any point
resumes where it stopped, and many laptops can push at once.

--content (or [push] content) sets how much text leaves the machine:
  full      everything stored, original records included (secrets were redacted at ingest)
  redacted  the texts redacted again with this version's rules, no original records
  none      no text: counts, ids, names, statuses and timestamps only
Changing the level sends every row again at the new level.

--watch pushes again every --interval (next to cortex watch); failures are retried
with backoff and never stop it. Ctrl-C stops it after the transaction in flight.

--json prints {"inserted":{table:n},"updated":…,"deleted":…,"rows","rows_per_second",…}
(one line per push with --watch).`,
		Example: `  cortex push --url postgres://cortex:change-me@db.example.com:5432/cortex
  cortex push --content none --json
  cortex push --watch --interval 1m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Interval <= 0 {
				return usageError{fmt.Errorf("invalid argument: --interval must be positive")}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return pushRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.URL, "url", "", "the team store (default [push] url, CORTEX_PUSH_URL)")
	cmd.Flags().StringVar(&opts.Content, "content", "", "how much text to send: full, redacted or none (default [push] content, full)")
	cmd.Flags().BoolVar(&opts.Watch, "watch", false, "push again every --interval until stopped")
	cmd.Flags().DurationVar(&opts.Interval, "interval", DefaultPushInterval, "pause between pushes with --watch")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the counts as JSON")
	cmd.Flags().IntVar(&opts.BatchRows, "batch-rows", push.DefaultBatchRows, "rows per transaction")
	_ = cmd.Flags().MarkHidden("batch-rows")
	return cmd
}

func pushRun(ctx context.Context, f *Factory, opts *PushOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if err := f.LocalOnly("cortex push"); err != nil {
		return err
	}
	url := cfg.Push.URL
	if opts.URL != "" {
		url = opts.URL
	}
	if url == "" {
		return cortex.Errorf(cortex.CodeInvalid, "no team store: give --url postgres://… (or [push] url, CORTEX_PUSH_URL)")
	}
	if !postgres.IsURL(url) {
		return cortex.Errorf(cortex.CodeInvalid, "--url must be a postgres:// URL")
	}
	content := store.Content(cfg.Push.Content)
	if opts.Content != "" {
		content = store.Content(opts.Content)
	}
	if !content.Valid() {
		return cortex.Errorf(cortex.CodeInvalid, "--content must be full, redacted or none, got %q", content)
	}
	local, err := f.OpenExistingDB(ctx)
	if err != nil {
		return err
	}
	defer local.Close()
	popts := push.Options{Content: content, Hostname: cfg.Hostname, BatchRows: opts.BatchRows}
	if f.IO.StderrTTY && !opts.JSON && !opts.Watch {
		popts.Progress = func(p push.Progress) {
			fmt.Fprintf(f.IO.ErrOut, "\r%-16s %d / %d rows   ", p.Table, p.Sent, p.Total)
		}
	}
	once := func() (push.Result, error) {
		team, err := postgres.Open(ctx, url, postgres.Options{Migrate: true, Logger: f.Logger, Now: f.Now, MaxConns: 2})
		if err != nil {
			return push.Result{}, err
		}
		defer team.Close()
		res, err := push.Run(ctx, local, team, popts)
		if popts.Progress != nil {
			fmt.Fprint(f.IO.ErrOut, "\r\033[K")
		}
		return res, err
	}
	if !opts.Watch {
		res, err := once()
		if err != nil {
			return err
		}
		return printPush(f, opts, res)
	}
	backoff := time.Duration(0)
	for {
		res, err := once()
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			backoff = min(max(2*backoff, 5*time.Second), 5*time.Minute)
			f.Logger.Warn("push failed; retrying", "err", cortex.ErrorMessage(err), "in", backoff)
			if !opts.JSON {
				fmt.Fprintf(f.IO.ErrOut, "cortex push: %s (retrying in %s)\n", Safe(cortex.ErrorMessage(err)), backoff)
			}
		default:
			backoff = 0
			if res.Rows > 0 || opts.JSON {
				if err := printPush(f, opts, res); err != nil {
					return err
				}
			}
		}
		wait := opts.Interval
		if backoff > 0 {
			wait = backoff + time.Duration(rand.Int64N(int64(backoff/4)+1))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

func printPush(f *Factory, opts *PushOptions, res push.Result) error {
	if opts.JSON {
		return f.IO.WriteJSON(res)
	}
	o := f.IO
	when := time.Now().Format("15:04:05")
	if res.Rows == 0 {
		o.Printf("%s pushed nothing new to %s (store %d, content %s)\n", when, res.Store, res.StoreNo, res.Content)
		return nil
	}
	o.Printf("%s pushed %d rows to %s in %.1fs (%.0f rows/s; store %d, content %s)\n", when, res.Rows, res.Store, res.Seconds,
		res.RowsPerSec, res.StoreNo, res.Content)
	if res.Reset {
		o.Printf("  the content level changed: every row was sent again\n")
	}
	names := make([]string, 0, len(res.Inserted))
	for k := range res.Inserted {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if res.Inserted[k]+res.Updated[k]+res.Deleted[k] > 0 {
			o.Printf("  %-16s %d new, %d changed, %d deleted\n", k, res.Inserted[k], res.Updated[k], res.Deleted[k])
		}
	}
	return nil
}
