package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	Cursor  string
	JSON    bool
}

// NewCmdSearch builds `cortex search`.
func NewCmdSearch(f *Factory, runF func(context.Context, *SearchOptions) error) *cobra.Command {
	opts := &SearchOptions{}
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Full-text search over transcripts (newest first)",
		Long: `Search stored transcript rows. All words must match; "quoted phrases" match
exactly; word* matches a prefix; OR between two terms matches either. An argument
that contains a space is a phrase (the shell removed its quotes): cortex search
timeout OR "rate limit" finds "timeout" or the phrase "rate limit". Other
punctuation is taken literally, so queries like 'cargo-build' or 'it"s' are safe.
A query that starts with "-" goes after "--": cortex search -- --force

Matches are highlighted on a terminal. When nothing matches inside --since/--until,
the answer says when the newest match outside the range is and how new the stored
data is.`,
		Example: `  cortex search "permission denied"
  cortex search timeout OR "rate limit" --tool codex --since 7d
  cortex search apply_patch --session 019a93b9-f380-7600-98ff-940e6b99603c --json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Query = queryFromArgs(args)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return searchRun(cmd.Context(), f, opts)
		},
	}
	agentFlag(cmd, &opts.Tool)
	cmd.Flags().StringVar(&opts.Project, "project", "", "only this project (working directory)")
	cmd.Flags().StringVar(&opts.Session, "session", "", "only this session id")
	cmd.Flags().StringVar(&opts.Host, "host", "", "only rows of this host")
	cmd.Flags().StringVar(&opts.Role, "role", "", "only rows of this role: user, assistant, tool_call, tool_result, context, hook, system")
	cmd.Flags().StringVar(&opts.Since, "since", "", "newer than (30m, 7d, today, 2026-11-30, RFC 3339)")
	cmd.Flags().StringVar(&opts.Until, "until", "", "older than")
	cmd.Flags().IntVar(&opts.Limit, "limit", app.DefaultSearchLimit, fmt.Sprintf("maximum hits (max %d)", app.MaxSearchLimit))
	cmd.Flags().BoolVar(&opts.Rank, "rank", false, "order by relevance instead of newest first")
	cursorFlag(cmd, &opts.Cursor)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func searchRun(ctx context.Context, f *Factory, opts *SearchOptions) error {
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
	res, err := app.New(db).Search(ctx, cortex.SearchParams{
		Query: opts.Query, Tool: cortex.Tool(opts.Tool), Project: opts.Project, Session: opts.Session, Host: opts.Host,
		Role: cortex.Role(opts.Role), Since: since, Until: until, Limit: opts.Limit, Rank: opts.Rank, After: after,
	})
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.IO.WriteJSON(res)
	}
	defer func() {
		if res.NotYetSearchable > 0 {
			f.IO.Printf("(%s not yet searchable: the search index is behind the stored rows; cortex status shows it)\n",
				notYetSearchable(res.NotYetSearchable, res.NotYetSearchableEstimated))
		}
	}()
	if len(res.Hits) == 0 {
		f.IO.Printf("No matches for %s.\n", Safe(opts.Query))
		if res.NewestMatchOutsideRange != "" {
			f.IO.Printf("Older matches exist: the newest is from %s; widen --since (or drop it).\n",
				f.timeCell(res.NewestMatchOutsideRange, false))
		}
		if res.NewestRow != "" {
			f.IO.Printf("The newest stored row is from %s (%s ago); run cortex index to add newer transcripts.\n",
				f.timeCell(res.NewestRow, false), ago(f, res.NewestRow))
		}
		return nil
	}
	w := max(f.IO.TerminalWidth(), 0)
	for _, h := range res.Hits {
		who := string(h.Role)
		if h.ToolName != "" {
			who += ":" + h.ToolName
		}
		head := fmt.Sprintf("%s  %s  %s  %s  row %d", f.timeCell(h.Timestamp, true), h.Tool, OneLine(who, 28), OneLine(shortSession(h.SessionID), 12), h.ID)
		f.IO.Printf("%s\n", f.IO.Bold(head))
		f.IO.Printf("  %s\n", highlight(f, h.Snippet, h.Highlights, w-2))
	}
	printMore(f, len(res.Hits), 0, res.Next)
	if res.RankWindow > 0 {
		f.IO.Printf("(ranked among the newest %d matches)\n", res.RankWindow)
	}
	f.IO.Printf("(open a row with: cortex show row ID)\n")
	return nil
}

// queryFromArgs joins the search arguments into one query. The shell has
// already removed the quotes of `cortex search timeout OR "rate limit"`,
// so an argument that contains a space was a phrase and is quoted again;
// a double quote inside it cannot be part of a phrase and becomes a
// space.
func queryFromArgs(args []string) string {
	parts := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(strings.TrimSpace(a), " \t\n") && !(strings.HasPrefix(a, `"`) && strings.HasSuffix(a, `"`)) {
			a = `"` + strings.ReplaceAll(a, `"`, " ") + `"`
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}

// highlight renders a snippet on one line, cut to width display columns
// (0: no cut), with the matched ranges in bold yellow on a colour
// terminal.
func highlight(f *Factory, snippet string, ranges [][2]int, width int) string {
	flat := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '\n' || r == '\t' || r == '\r' {
				return ' '
			}
			return r
		}, Safe(s))
	}
	if !f.IO.Color() || len(ranges) == 0 {
		s := flat(snippet)
		if width > 0 {
			s = cutWidth(s, width)
		}
		return s
	}
	var b strings.Builder
	used, pos := 0, 0
	emit := func(s string, hl bool) bool {
		s = flat(s)
		if width > 0 && used+widthOf(s) > width {
			s = cutWidth(s, width-used)
		}
		used += widthOf(s)
		if hl {
			b.WriteString(ansi("1;33", s))
		} else {
			b.WriteString(s)
		}
		return width == 0 || used < width
	}
	for _, r := range ranges {
		if r[0] < pos || r[1] > len(snippet) || r[0] >= r[1] {
			continue
		}
		if !emit(snippet[pos:r[0]], false) || !emit(snippet[r[0]:r[1]], true) {
			return b.String()
		}
		pos = r[1]
	}
	emit(snippet[pos:], false)
	return b.String()
}

// ago is how long ago a stored time was, roughly ("3 days").
func ago(f *Factory, stored string) string {
	t, err := cortex.ParseTimestamp(stored)
	if err != nil {
		return "?"
	}
	d := f.Now().Sub(t)
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%d minutes", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hours", int(d.Hours()))
	}
	return fmt.Sprintf("%d days", int(d.Hours()/24))
}

func shortSession(s string) string {
	if len(s) > 12 {
		return s[:8] + "…"
	}
	return s
}
