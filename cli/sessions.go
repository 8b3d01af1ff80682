package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// SessionsOptions are the flags of `cortex sessions`.
type SessionsOptions struct {
	Tool    string
	Project string
	Host    string
	Since   string
	Until   string
	Limit   int
	JSON    bool
}

// NewCmdSessions builds `cortex sessions`.
func NewCmdSessions(f *Factory, runF func(context.Context, *SessionsOptions) error) *cobra.Command {
	opts := &SessionsOptions{}
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List agent sessions with their row counts (most recent first)",
		Example: `  cortex sessions
  cortex sessions --tool claude --since 7d
  cortex sessions --project /home/me/work/api --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return sessionsRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Tool, "tool", "", "only this agent: claude, codex or gemini")
	cmd.Flags().StringVar(&opts.Project, "project", "", "only this project")
	cmd.Flags().StringVar(&opts.Host, "host", "", "only this host")
	cmd.Flags().StringVar(&opts.Since, "since", "", "active since (30m, 7d, today, 2026-11-30, RFC 3339)")
	cmd.Flags().StringVar(&opts.Until, "until", "", "started before")
	cmd.Flags().IntVar(&opts.Limit, "limit", app.DefaultSessionsLimit, fmt.Sprintf("maximum sessions (max %d)", app.MaxSessionsLimit))
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func sessionsRun(ctx context.Context, f *Factory, opts *SessionsOptions) error {
	since, until, err := timeRange(f, opts.Since, opts.Until)
	if err != nil {
		return err
	}
	db, closeStore, err := f.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer closeStore()
	res, err := app.New(db).Sessions(ctx, cortex.SessionParams{Tool: cortex.Tool(opts.Tool), Project: opts.Project,
		Host: opts.Host, Since: since, Until: until, Limit: opts.Limit})
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.IO.WriteJSON(res)
	}
	if len(res.Sessions) == 0 {
		f.IO.Printf("No sessions found. Index some transcripts first: cortex index\n")
		return nil
	}
	w := tabwriter.NewWriter(f.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "LAST SEEN\tTOOL\tSESSION\tPROJECT\tROWS\tUSER\tTOOLS\tERRORS\n")
	for _, s := range res.Sessions {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", s.LastSeen[:16], s.Tool, OneLine(s.SessionID, 36),
			OneLine(s.Project, 48), s.Rows, s.UserRows, s.ToolCalls, s.ErrorRows)
	}
	w.Flush()
	if res.Truncated {
		f.IO.Printf("(showing %d; use --limit for more)\n", len(res.Sessions))
	}
	return nil
}
