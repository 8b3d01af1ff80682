package cli

import (
	"context"
	"fmt"
	"strings"

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
	Cursor  string
	JSON    bool
}

// NewCmdSessions builds `cortex sessions`.
func NewCmdSessions(f *Factory, runF func(context.Context, *SessionsOptions) error) *cobra.Command {
	opts := &SessionsOptions{}
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List agent sessions: title, duration, tokens and cost, models (most recent first)",
		Long: `Lists agent sessions, most recently active first: the title (the agent's summary of the
conversation, else the first prompt typed), duration, the token usage of every model
response (input, output, cache reads and writes; Claude's repeated streaming lines and
Codex's repeated token_count events counted once) with an estimated cost from the price
table (cortex config shows it; "+" means some models have no price, "?" that none has),
the models, project and row counts. --json has the usage per model.`,
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
	agentFlag(cmd, &opts.Tool)
	cmd.Flags().StringVar(&opts.Project, "project", "", "only this project")
	cmd.Flags().StringVar(&opts.Host, "host", "", "only this host")
	cmd.Flags().StringVar(&opts.Since, "since", "", "active since (30m, 7d, today, 2026-11-30, RFC 3339)")
	cmd.Flags().StringVar(&opts.Until, "until", "", "started before")
	cmd.Flags().IntVar(&opts.Limit, "limit", app.DefaultSessionsLimit, fmt.Sprintf("maximum sessions (max %d)", app.MaxSessionsLimit))
	cursorFlag(cmd, &opts.Cursor)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func sessionsRun(ctx context.Context, f *Factory, opts *SessionsOptions) error {
	since, until, err := timeRange(f, opts.Since, opts.Until)
	if err != nil {
		return err
	}
	after, err := cortex.DecodeCursor(opts.Cursor)
	if err != nil {
		return err
	}
	db, closeStore, err := f.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer closeStore()
	res, err := f.NewService(db).Sessions(ctx, cortex.SessionParams{Tool: cortex.Tool(opts.Tool), Project: opts.Project,
		Host: opts.Host, Since: since, Until: until, Limit: opts.Limit, After: after})
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
	t := newTable(f, column{name: "LAST SEEN"}, column{name: "AGENT"}, column{name: "SESSION"},
		column{name: "TITLE", max: 60, shrink: true}, column{name: "DURATION"}, column{name: "TOKENS"}, column{name: "COST"},
		column{name: "MODELS", max: 40, shrink: true}, column{name: "PROJECT", max: 48, shrink: true}, column{name: "ROWS"},
		column{name: "ERRORS"})
	for _, s := range res.Sessions {
		t.add(f.timeCell(s.LastSeen, false), string(s.Tool), shortSession(s.SessionID), s.Title, durationCell(s.DurationSecs),
			tokensCell(s.Usage), costCell(s.Usage), strings.Join(s.Models, ","), s.Project, fmt.Sprint(s.Rows), fmt.Sprint(s.ErrorRows))
	}
	t.print()
	printMore(f, len(res.Sessions), 0, res.Next)
	return nil
}
