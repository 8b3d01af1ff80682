package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// SignalsOptions are the flags of `cortex ai signals`.
type SignalsOptions struct {
	scopeFlags
	Labelled string
	JSON     bool
}

// NewCmdAISignals builds `cortex ai signals`.
func NewCmdAISignals(f *Factory, runF func(context.Context, *SignalsOptions) error) *cobra.Command {
	opts := &SignalsOptions{}
	cmd := &cobra.Command{
		Use:   "signals",
		Short: "How much to trust each signal: its lift on sessions that end badly",
		Long: `For every signal of every lens: how many sessions carry it (in an incident of its lens),
and how often those sessions end badly — the user stops, interrupts, refuses, reverts or
leaves right after a complaint — against the sessions without it. The lift is the ratio of
the two rates; a signal on fewer than 5 judged sessions gets no verdict. Signals of the
friction lens are read from the same acts as the ending, so their lift is partly by
construction; the skill, MCP and hook signals are the real test.

--labelled DIR also indexes a labelled corpus (a directory with expected.json, like
../shared/corpus/labelled) into a throwaway store and shows each signal's hits there:
found/expected, and false positives on cases that must have no incident.`,
		Example: `  cortex ai signals
  cortex ai signals --since 90d --tool claude
  cortex ai signals --labelled ../shared/corpus/labelled --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return signalsRun(cmd.Context(), f, opts)
		},
	}
	opts.scopeFlags.register(cmd)
	_ = cmd.Flags().MarkHidden("session")
	cmd.Flags().StringVar(&opts.Labelled, "labelled", "", "also compare with a labelled corpus (a directory with expected.json)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func signalsRun(ctx context.Context, f *Factory, opts *SignalsOptions) error {
	if opts.Session != "" {
		return cortex.Errorf(cortex.CodeInvalid, "a calibration compares sessions; --session does not apply")
	}
	since, until, err := opts.times(f)
	if err != nil {
		return err
	}
	p := cortex.CalibrationParams{Tool: cortex.Tool(opts.Agent), Project: opts.Project, Host: opts.Host, Since: since, Until: until}
	progress := func(s string) {
		if f.IO.StderrTTY {
			fmt.Fprintf(f.IO.ErrOut, "%s…\n", s)
		}
	}
	return withService(ctx, f, func(s *app.Service) error {
		cal, err := s.CalibrateSignals(ctx, p, opts.Labelled, progress)
		if err != nil {
			return err
		}
		if opts.JSON {
			return f.IO.WriteJSON(cal)
		}
		printSignals(f, cal)
		return nil
	})
}

func printSignals(f *Factory, cal cortex.SignalCalibration) {
	f.IO.Printf("%d sessions judged, %d ended badly (%.0f%%).\n", cal.Sessions, cal.BadEndSessions, 100*cal.BaseRate)
	f.IO.Printf("A bad end: %s.\n", cal.BadEnd)
	if cal.Truncated {
		f.IO.Printf("The scan was cut: the figures cover the newest part of the scope (narrow it with --since).\n")
	}
	if cal.Labelled != nil {
		f.IO.Printf("Labelled corpus %s: %d of %d cases as expected.\n", OneLine(cal.Labelled.Dir, 200), cal.Labelled.Passed, cal.Labelled.Cases)
	}
	f.IO.Printf("\n")
	tw := tabwriter.NewWriter(f.IO.Out, 0, 0, 2, ' ', 0)
	header := "LENS\tSIGNAL\tSESSIONS\tBAD END\tWITHOUT\tLIFT\tVERDICT"
	if cal.Labelled != nil {
		header += "\tLABELLED"
	}
	fmt.Fprintln(tw, header)
	for _, s := range cal.Signals {
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s\t%.2f\t%s", s.Lens, s.Signal, s.Sessions, share(s.BadEnd, s.Judged, s.Rate),
			fmt.Sprintf("%.0f%%", 100*s.RateWithout), s.Lift, s.Verdict)
		if s.Sessions == 0 {
			line = fmt.Sprintf("%s\t%s\t0\t-\t-\t-\t%s", s.Lens, s.Signal, s.Verdict)
		}
		if h := s.Labelled; h != nil {
			line += "\t" + labelledCell(*h)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

func share(k, n int, r float64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", k, n, 100*r)
}

func labelledCell(h cortex.LabelledHits) string {
	if h.Expected == 0 && h.FalsePositives == 0 && h.Extra == 0 {
		return "-"
	}
	s := fmt.Sprintf("%d/%d found", h.Found, h.Expected)
	if h.FalsePositives > 0 {
		s += fmt.Sprintf(", %d false", h.FalsePositives)
	}
	if h.Extra > 0 {
		s += fmt.Sprintf(", %d extra", h.Extra)
	}
	return s
}
