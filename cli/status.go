package cli

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// StatusOptions are the flags of `cortex status`.
type StatusOptions struct {
	JSON bool
}

// NewCmdStatus builds `cortex status`.
func NewCmdStatus(f *Factory, runF func(context.Context, *StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{}
	cmd := &cobra.Command{
		Use:     "status",
		Short:   "Show the store: size, rows by agent and role, sources, parse errors",
		Example: "  cortex status\n  cortex status --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return statusRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func statusRun(ctx context.Context, f *Factory, opts *StatusOptions) error {
	db, closeStore, err := f.OpenStore(ctx, false)
	if err != nil {
		return err
	}
	defer closeStore()
	st, err := app.New(db).Status(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.IO.WriteJSON(st)
	}
	o := f.IO
	o.Printf("Database  %s (%.1f MB, WAL %.1f MB, schema v%d)\n", st.DBPath, float64(st.DBBytes)/1e6, float64(st.WALBytes)/1e6, st.SchemaVersion)
	o.Printf("Rows      %d in %d sessions", st.Rows, st.Sessions)
	if st.Oldest != "" {
		o.Printf(", %s … %s", st.Oldest[:10], st.Newest[:10])
	}
	o.Printf("\n")
	for _, tool := range sortedKeys(st.RowsByTool) {
		o.Printf("  %-8s %d rows:", tool, st.RowsByTool[tool])
		roles := st.RowsByRole[tool]
		for _, r := range sortedKeys(roles) {
			o.Printf(" %s %d", r, roles[r])
		}
		o.Printf("\n")
	}
	o.Printf("Search    %s\n", searchStatusLine(st.Search))
	o.Printf("Sources   %d files", st.Sources.Files)
	for _, k := range sortedKeys(st.Sources.ByKind) {
		o.Printf(", %d %s", st.Sources.ByKind[k], k)
	}
	o.Printf("\n")
	if st.LogRows > 0 || len(st.LogIngest) > 0 {
		o.Printf("Logs      %d non-AI rows", st.LogRows)
		for _, c := range st.LogIngest {
			o.Printf("; %s: %d received, %d stored, %d dropped, %d malformed", c.Source, c.Received, c.Stored,
				c.Dropped+c.KernelDrops, c.Malformed)
		}
		o.Printf("\n")
	}
	if st.LastIndexedAt != "" {
		o.Printf("Indexed   last at %s\n", st.LastIndexedAt)
	}
	if st.Sources.Pending > 0 {
		o.Printf("Pending   %d files end with an incomplete record (left for the next index run)\n", st.Sources.Pending)
	}
	if st.ParseErrors > 0 {
		o.Printf("Errors    %d parse errors; newest:\n", st.ParseErrors)
		for _, e := range st.RecentErrors {
			o.Printf("  %s:%d: %s\n", Safe(e.Path), e.Line, OneLine(e.Error, 160))
		}
	}
	if len(st.UnknownTypes) > 0 {
		o.Printf("Unknown record types (skipped and counted):\n")
		for _, u := range st.UnknownTypes {
			v := u.Version
			if v == "" {
				v = "unknown version"
			}
			o.Printf("  %s %s: %s ×%d\n", u.Tool, v, OneLine(u.Type, 80), u.Count)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// searchStatusLine describes the search index's state in one line.
func searchStatusLine(s cortex.SearchStatus) string {
	if !s.Built {
		return "no index yet (cortex index or cortex watch builds it)"
	}
	size := fmt.Sprintf("%.1f MB", float64(s.Bytes)/1e6)
	switch {
	case s.Segments == 1:
		size += " in 1 segment"
	case s.Segments > 1:
		size += fmt.Sprintf(" in %d segments", s.Segments)
	}
	if s.NotYetSearchable == 0 {
		return size + ", every row searchable"
	}
	return fmt.Sprintf("%s, %s not yet searchable (indexed behind the row writer by index, watch and serve)",
		size, notYetSearchable(s.NotYetSearchable, s.Estimated))
}

// notYetSearchable renders a count of rows the search index has not
// reached ("about" when it is an estimate).
func notYetSearchable(n int64, estimated bool) string {
	rows := "rows"
	if n == 1 {
		rows = "row"
	}
	if estimated {
		return fmt.Sprintf("about %d %s", n, rows)
	}
	return fmt.Sprintf("%d %s", n, rows)
}
