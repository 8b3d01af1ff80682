package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// NewCmdShow builds `cortex show`: read one session or one row.
func NewCmdShow(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Read a session's transcript or one stored row",
		Long: `Reads what the evidence points at: a whole session rendered for reading (typed
prompts, assistant text, tool calls folded with their results, subagents, hooks, skill
use, the session's incidents), or one row with its events and original record.
Row ids are the ids in search hits, evidence bundles and transcripts. Times are local.`,
		Example: `  cortex show session 3b5a9bec
  cortex show row 5039 --detail`,
	}
	cmd.AddCommand(NewCmdShowSession(f, nil), NewCmdShowRow(f, nil))
	return cmd
}

// ShowSessionOptions are the flags of `cortex show session`.
type ShowSessionOptions struct {
	app.SessionShowParams
	JSON bool
}

// NewCmdShowSession builds `cortex show session ID`.
func NewCmdShowSession(f *Factory, runF func(context.Context, *ShowSessionOptions) error) *cobra.Command {
	opts := &ShowSessionOptions{}
	cmd := &cobra.Command{
		Use:   "session ID",
		Short: "Print a session's transcript for reading (or a page of it with --limit/--row)",
		Long: `Prints the session ID (or a unique prefix of it, at least 4 characters): typed prompts,
assistant text, tool calls folded with their results, subagent rows indented, hooks and
skill use, each row with its id (#123) and local time; the session's incidents first,
and the rows carrying their signals marked with ⚑.

Without --limit the whole session is printed; --limit, --row, --after-id and --before-id
read one page (--row: the page holding that row). Tool results, injected context and
thinking are shown as one line unless --detail. With --json the answer is the
session_show action's (one page; texts cut to 300 bytes unless --detail).`,
		Example: `  cortex show session 3b5a9bec
  cortex show session 3b5a9bec-34c4-48d5-9502-dd21f9e1e011 --row 5046 --limit 20
  cortex show session 3b5a9bec --json --limit 50`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Session = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return showSessionRun(cmd.Context(), f, opts)
		},
	}
	agentFlag(cmd, &opts.Agent)
	cmd.Flags().StringVar(&opts.Host, "host", "", "the session's host, when the id is on several")
	cmd.Flags().Int64Var(&opts.AfterID, "after-id", 0, "one page: the rows after this row id")
	cmd.Flags().Int64Var(&opts.BeforeID, "before-id", 0, "one page: the rows before this row id")
	cmd.Flags().Int64Var(&opts.Row, "row", 0, "one page holding this row id")
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, fmt.Sprintf("one page of this many rows (max %d; default: the whole session)", app.MaxTranscriptLimit))
	cmd.Flags().BoolVar(&opts.Detail, "detail", false, "print tool results, context and thinking in full")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the session_show answer as JSON")
	return cmd
}

func showSessionRun(ctx context.Context, f *Factory, opts *ShowSessionOptions) error {
	return withService(ctx, f, func(s *app.Service) error {
		if opts.JSON {
			res, err := s.ShowSession(ctx, opts.SessionShowParams)
			if err != nil {
				return err
			}
			return f.IO.WriteJSON(res)
		}
		p := opts.SessionShowParams
		p.Detail = true // the terminal view folds; it needs the whole texts to do so
		whole := p.Limit == 0 && p.AfterID == 0 && p.BeforeID == 0 && p.Row == 0
		if whole {
			p.Limit = app.MaxTranscriptLimit
		}
		w := &transcriptWriter{f: f, detail: opts.Detail, folded: map[int64]bool{}}
		for first := true; ; first = false {
			res, err := s.ShowSession(ctx, p)
			if err != nil {
				return err
			}
			if first {
				w.header(res)
			}
			w.rows(res.Rows)
			if !whole || !res.HasAfter {
				w.footer(res, whole)
				return nil
			}
			p.AfterID = res.NextAfterID
		}
	})
}

// transcriptWriter prints transcript pages; all transcript text goes
// through Safe or OneLine.
type transcriptWriter struct {
	f      *Factory
	detail bool
	// byID holds the rows of the current page; folded the results already
	// printed under their call.
	byID   map[int64]cortex.TranscriptRow
	folded map[int64]bool
	day    string
	agent  string
}

func localTime(ts string) time.Time {
	t, err := cortex.ParseTimestamp(ts)
	if err != nil {
		return time.Time{}
	}
	return t.Local()
}

func (w *transcriptWriter) header(res cortex.SessionTranscript) {
	s := res.Session
	io := w.f.IO
	agent := string(s.Tool)
	if s.ToolVersion != "" {
		agent += " " + OneLine(s.ToolVersion, 40)
	}
	io.Printf("Session %s · %s · host %s\n", OneLine(s.SessionID, 0), agent, OneLine(s.Hostname, 60))
	if s.Project != "" {
		io.Printf("Project %s\n", OneLine(s.Project, 0))
	}
	first, last := localTime(s.FirstSeen), localTime(s.LastSeen)
	io.Printf("%s → %s (%s), %d rows: %d typed prompts, %d assistant, %d tool calls, %d errors\n",
		first.Format("2006-01-02 15:04"), last.Format("2006-01-02 15:04"), first.Format("MST"), res.RowsTotal, s.UserRows,
		s.AssistantRows, s.ToolCalls, s.ErrorRows)
	if len(res.Incidents) > 0 {
		io.Printf("Incidents (⚑ marks their rows):\n")
		for _, inc := range res.Incidents {
			io.Printf("  %s  %-6s %-8s %3.0f  %s  rows %s\n", inc.ID, inc.Lens, strings.ToUpper(inc.Label), inc.Score,
				OneLine(inc.Subject, 50), idList(inc.AnchorLogIDs, 6))
		}
	}
	if res.IncidentsError != "" {
		io.Printf("(incidents incomplete: %s)\n", OneLine(res.IncidentsError, 200))
	}
	if res.Offset > 0 {
		io.Printf("… %d earlier rows (--before-id %d)\n", res.Offset, res.Rows[0].ID)
	}
}

func idList(ids []int64, max int) string {
	var parts []string
	for i, id := range ids {
		if i == max {
			parts = append(parts, fmt.Sprintf("+%d", len(ids)-max))
			break
		}
		parts = append(parts, "#"+strconv.FormatInt(id, 10))
	}
	return strings.Join(parts, " ")
}

func (w *transcriptWriter) footer(res cortex.SessionTranscript, whole bool) {
	if res.HasAfter && !whole {
		w.f.IO.Printf("… more rows (--after-id %d)\n", res.NextAfterID)
	}
}

func (w *transcriptWriter) rows(rows []cortex.TranscriptRow) {
	w.byID = make(map[int64]cortex.TranscriptRow, len(rows))
	for _, r := range rows {
		w.byID[r.ID] = r
	}
	for _, r := range rows {
		if w.folded[r.ID] {
			continue
		}
		w.row(r)
	}
}

func (w *transcriptWriter) row(r cortex.TranscriptRow) {
	io := w.f.IO
	t := localTime(r.Timestamp)
	if day := t.Format("Monday 2006-01-02"); day != w.day {
		w.day = day
		io.Printf("\n── %s\n", day)
	}
	indent := ""
	if r.AgentID != "" {
		indent = "    "
		if r.AgentID != w.agent {
			io.Printf("%s┌ subagent %s\n", indent, OneLine(r.AgentID, 40))
		}
	}
	w.agent = r.AgentID
	mark := ""
	if len(r.Incidents) > 0 {
		mark = " ⚑ " + strings.Join(r.Incidents, " ")
	}
	if len(r.Skills) > 0 {
		mark += " [skill " + OneLine(strings.Join(r.Skills, ", "), 80) + "]"
	}
	head := fmt.Sprintf("%s%s #%d ", indent, t.Format("15:04:05"), r.ID)
	body := indent + "  "
	switch r.Role {
	case cortex.RoleUser:
		io.Printf("\n%s▶ USER%s\n%s\n", head, mark, indentText(Safe(r.Text), body))
	case cortex.RoleAssistant:
		model := ""
		if r.Model != "" {
			model = " (" + OneLine(r.Model, 40) + ")"
		}
		io.Printf("%sassistant%s%s\n%s\n", head, model, mark, indentText(Safe(r.Text), body))
	case cortex.RoleToolCall:
		io.Printf("%s⚙ %s%s\n", head, OneLine(r.Text, 160), mark)
		if r.Call != nil && r.Call.ResultLogID != nil {
			if res, ok := w.byID[*r.Call.ResultLogID]; ok && res.ID != r.ID {
				w.folded[res.ID] = true
				w.result(body, res, r.Call)
			}
		}
	case cortex.RoleToolResult:
		w.result(indent+"  ", r, r.Call)
	default:
		label := string(r.Role)
		if r.Kind != "" {
			label += " " + r.Kind
		}
		if len(r.Hooks) > 0 {
			label += " [" + strings.Join(r.Hooks, ", ") + "]"
		}
		if w.detail {
			io.Printf("%s%s%s\n%s\n", head, OneLine(label, 80), mark, indentText(Safe(r.Text), body))
		} else {
			io.Printf("%s%s%s: %s\n", head, OneLine(label, 80), mark, OneLine(r.Text, 120))
		}
	}
}

// result prints a tool result under its call: status, time, first line
// (whole with --detail).
func (w *transcriptWriter) result(indent string, r cortex.TranscriptRow, call *cortex.TranscriptCall) {
	status := "result"
	if call != nil {
		status = call.Status
		if call.ExitCode != nil && *call.ExitCode != 0 {
			status += fmt.Sprintf(" exit %d", *call.ExitCode)
		}
		if call.DurationMS != nil {
			status += fmt.Sprintf(" %.1fs", float64(*call.DurationMS)/1000)
		}
	}
	if r.IsError && !strings.Contains(status, "error") {
		status += " error"
	}
	mark := ""
	if len(r.Incidents) > 0 {
		mark = " ⚑ " + strings.Join(r.Incidents, " ")
	}
	if w.detail {
		w.f.IO.Printf("%s↳ #%d %s%s\n%s\n", indent, r.ID, status, mark, indentText(Safe(r.Text), indent+"  "))
		return
	}
	w.f.IO.Printf("%s↳ #%d %s%s: %s\n", indent, r.ID, status, mark, OneLine(r.Text, 140))
}

func indentText(s, indent string) string {
	s = strings.TrimRight(s, "\n ")
	if s == "" {
		return indent + "(no text)"
	}
	return indent + strings.ReplaceAll(s, "\n", "\n"+indent)
}

// ShowRowOptions are the flags of `cortex show row`.
type ShowRowOptions struct {
	app.RowShowParams
	JSON bool
}

// NewCmdShowRow builds `cortex show row ID`.
func NewCmdShowRow(f *Factory, runF func(context.Context, *ShowRowOptions) error) *cobra.Command {
	opts := &ShowRowOptions{}
	cmd := &cobra.Command{
		Use:   "row ID",
		Short: "Print one stored row: text, metadata, events, neighbours (and its original record with --detail)",
		Example: `  cortex show row 5039
  cortex show row 5039 --detail
  cortex show row 5039 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil || id <= 0 {
				return usageError{fmt.Errorf("row id must be a positive number, got %q", args[0])}
			}
			opts.ID = id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return showRowRun(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Detail, "detail", false, "the whole text and the original (redacted) record")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the row_show answer as JSON")
	return cmd
}

func showRowRun(ctx context.Context, f *Factory, opts *ShowRowOptions) error {
	return withService(ctx, f, func(s *app.Service) error {
		r, err := s.ShowRow(ctx, opts.RowShowParams)
		if err != nil {
			return err
		}
		if opts.JSON {
			return f.IO.WriteJSON(r)
		}
		printRow(f, r)
		return nil
	})
}

func printRow(f *Factory, r cortex.RowDetail) {
	io := f.IO
	t := localTime(r.Timestamp)
	what := string(r.Role)
	if r.ToolName != "" {
		what += " " + r.ToolName
	}
	if r.Tool == "" {
		what = "log " + OneLine(r.AppName, 40)
	}
	io.Printf("Row %d · %s · %s · %s (%s)\n", r.ID, OneLine(string(r.Tool), 10), OneLine(what, 80), t.Format("2006-01-02 15:04:05"),
		t.Format("MST"))
	if r.SessionID != "" {
		io.Printf("Session %s · host %s\n", OneLine(r.SessionID, 0), OneLine(r.Hostname, 60))
	} else {
		io.Printf("Host %s · source %s\n", OneLine(r.Hostname, 60), OneLine(r.Source, 80))
	}
	if r.TranscriptPath != "" {
		io.Printf("File %s:%d\n", OneLine(r.TranscriptPath, 0), r.Line)
	}
	io.Printf("Kind %s · severity %s", OneLine(r.Kind, 60), r.Severity)
	if r.IsError {
		io.Printf(" · error")
	}
	if r.AgentID != "" {
		io.Printf(" · subagent %s", OneLine(r.AgentID, 40))
	}
	io.Printf("\n")
	for _, e := range r.ToolEvents {
		exit := ""
		if e.ExitCode != nil {
			exit = fmt.Sprintf(" exit %d", *e.ExitCode)
		}
		io.Printf("Tool call %s: %s%s (call #%s, result #%s)\n", OneLine(e.ToolName, 80), e.Status, exit, optID(e.CallLogID),
			optID(e.ResultLogID))
	}
	for _, e := range r.SkillEvents {
		io.Printf("Skill %s: %s\n", OneLine(e.SkillName, 80), OneLine(e.EventKind, 40))
	}
	for _, e := range r.HookEvents {
		io.Printf("Hook %s %s: %s\n", OneLine(e.HookEvent, 40), OneLine(e.HookName, 60), OneLine(e.Status, 20))
	}
	if r.PrevID != 0 || r.NextID != 0 {
		io.Printf("Previous #%d · next #%d in the session\n", r.PrevID, r.NextID)
	}
	io.Printf("\n%s\n", Safe(r.Text))
	if r.TextTruncated {
		io.Printf("… (%d of %d bytes; --detail for all)\n", len(r.Text), r.TextBytes)
	}
	if r.Raw != "" {
		io.Printf("\nOriginal record (%d bytes, redacted):\n", r.RawBytes)
		var out bytes.Buffer
		if json.Indent(&out, []byte(r.Raw), "", "  ") == nil {
			io.Printf("%s\n", Safe(out.String()))
		} else {
			io.Printf("%s\n", Safe(r.Raw))
		}
		if r.RawTruncated {
			io.Printf("… (cut at %d bytes)\n", len(r.Raw))
		}
	}
}

func optID(p *int64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatInt(*p, 10)
}
