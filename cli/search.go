package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// SearchOptions are the flags of `cortex search`.
type SearchOptions struct {
	Query   string
	Tool    string
	Project string
	Session string
	Host    string
	Role    string
	Since   string
	Until   string
	Limit   int
	Rank    bool
	JSON    bool
}

// NewCmdSearch builds `cortex search`.
func NewCmdSearch(f *Factory, runF func(context.Context, *SearchOptions) error) *cobra.Command {
	opts := &SearchOptions{}
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Full-text search over transcripts (newest first)",
		Long: `Search stored transcript rows. All words must match; "quoted phrases" match
exactly; word* matches a prefix; OR between two terms matches either. Other
punctuation is taken literally, so queries like 'cargo-build' or 'it"s' are safe.
A query that starts with "-" goes after "--": cortex search -- --force`,
		Example: `  cortex search "permission denied"
  cortex search timeout OR "rate limit" --tool codex --since 7d
  cortex search apply_patch --session 019a93b9-f380-7600-98ff-940e6b99603c --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = strings.Join(args, " ")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return searchRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Tool, "tool", "", "only this agent: claude, codex or gemini")
	cmd.Flags().StringVar(&opts.Project, "project", "", "only this project (working directory)")
	cmd.Flags().StringVar(&opts.Session, "session", "", "only this session id")
	cmd.Flags().StringVar(&opts.Host, "host", "", "only rows of this host")
	cmd.Flags().StringVar(&opts.Role, "role", "", "only rows of this role: user, assistant, tool_call, tool_result, context, hook, system")
	cmd.Flags().StringVar(&opts.Since, "since", "", "newer than (30m, 7d, today, 2026-11-30, RFC 3339)")
	cmd.Flags().StringVar(&opts.Until, "until", "", "older than")
	cmd.Flags().IntVar(&opts.Limit, "limit", app.DefaultSearchLimit, fmt.Sprintf("maximum hits (max %d)", app.MaxSearchLimit))
	cmd.Flags().BoolVar(&opts.Rank, "rank", false, "order by relevance instead of newest first")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func searchRun(ctx context.Context, f *Factory, opts *SearchOptions) error {
	since, until, err := timeRange(f, opts.Since, opts.Until)
	if err != nil {
		return err
	}
	db, closeStore, err := f.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer closeStore()
	res, err := app.New(db).Search(ctx, cortex.SearchParams{
		Query: opts.Query, Tool: cortex.Tool(opts.Tool), Project: opts.Project, Session: opts.Session, Host: opts.Host,
		Role: cortex.Role(opts.Role), Since: since, Until: until, Limit: opts.Limit, Rank: opts.Rank,
	})
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.IO.WriteJSON(res)
	}
	if len(res.Hits) == 0 {
		f.IO.Printf("No matches for %s.\n", Safe(opts.Query))
		return nil
	}
	w := tabwriter.NewWriter(f.IO.Out, 0, 0, 2, ' ', 0)
	for _, h := range res.Hits {
		who := string(h.Role)
		if h.ToolName != "" {
			who += ":" + h.ToolName
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", h.Timestamp[:19], h.Tool, OneLine(who, 28), OneLine(shortSession(h.SessionID), 12))
		fmt.Fprintf(w, "  %s\n", OneLine(h.Snippet, 200))
	}
	w.Flush()
	if res.Truncated {
		f.IO.Printf("(showing the newest %d; use --limit or narrow with --since/--tool/--project)\n", len(res.Hits))
	}
	return nil
}

func shortSession(s string) string {
	if len(s) > 12 {
		return s[:8] + "…"
	}
	return s
}
