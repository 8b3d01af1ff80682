package cli

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/bench/detection"
)

func newCmdBenchDetection(f *Factory) *cobra.Command {
	var asJSON, list bool
	var corpora []string
	var dbPath string
	cmd := &cobra.Command{
		Use:   "detection --labels FILE --corpus NAME=ROOT [--corpus NAME=ROOT…]",
		Short: "Score every lens against labelled transcripts: precision, recall, decisive words shown",
		Long: `bench detection indexes labelled corpora into a fresh database, lists every lens's
incidents in each reviewed file's sessions, investigates each one and compares them
with the labels (JSON Lines; the format is in docs/incidents.md, "Measuring detection").
It prints precision (true incidents / incidents), recall (labelled moments found /
labelled moments) and how often the label's decisive user line is in the incident's
default answer — per corpus, per source repository and per lens — and, with --list,
every false incident, every miss and every decisive line not shown, to read against
the transcript lines.`,
		Example: `  cortex bench detection --labels testdata/corpus/labels-real.jsonl --corpus real=../shared/corpus/real
  cortex bench detection --labels a.jsonl --labels b.jsonl --corpus real=../shared/corpus/real --corpus collected=/data/corpus --list
  cortex bench detection --labels labels.jsonl --corpus mine=$HOME/.claude/projects --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, _ := cmd.Flags().GetStringArray("labels")
			if len(paths) == 0 {
				return cortex.Errorf(cortex.CodeInvalid, "--labels is required")
			}
			var labels []detection.Label
			for _, p := range paths {
				fh, err := os.Open(p)
				if err != nil {
					return cortex.WrapError(cortex.CodeInvalid, err, "labels: %v", err)
				}
				ls, err := detection.ReadLabels(fh, p)
				fh.Close()
				if err != nil {
					return err
				}
				labels = append(labels, ls...)
			}
			if len(corpora) == 0 {
				return cortex.Errorf(cortex.CodeInvalid, "--corpus NAME=ROOT is required (NAME is the labels' corpus)")
			}
			var cs []detection.Corpus
			for _, c := range corpora {
				name, root, ok := strings.Cut(c, "=")
				if !ok || name == "" || root == "" {
					return cortex.Errorf(cortex.CodeInvalid, "--corpus %q: use NAME=ROOT", c)
				}
				cs = append(cs, detection.Corpus{Name: name, Root: root})
			}
			res, err := detection.Run(cmd.Context(), detection.Options{Corpora: cs, Labels: labels, DBPath: dbPath,
				Progress: func(s string) {
					if f.IO.StderrTTY && !asJSON {
						fmt.Fprintf(f.IO.ErrOut, "\r\033[K%s", s)
					}
				}})
			if f.IO.StderrTTY && !asJSON {
				fmt.Fprint(f.IO.ErrOut, "\r\033[K")
			}
			if err != nil {
				return err
			}
			if asJSON {
				if !list {
					res.Incidents = nil
				}
				return f.IO.WriteJSON(res)
			}
			return printDetection(f, res, list)
		},
	}
	cmd.Flags().StringArray("labels", nil, "labels file (JSON Lines; repeatable)")
	cmd.Flags().StringArrayVar(&corpora, "corpus", nil, "a labelled corpus as NAME=ROOT (repeatable)")
	cmd.Flags().StringVar(&dbPath, "bench-db", "", "database to create (default: a temporary file, removed afterwards)")
	cmd.Flags().BoolVar(&list, "list", false, "also list false incidents, misses and decisive lines not shown")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printDetection(f *Factory, res detection.Result, list bool) error {
	w := tabwriter.NewWriter(f.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SCOPE\tLENS\tINCIDENTS\tTRUE\tPRECISION\tLABELLED\tFOUND\tRECALL\tDECISIVE SHOWN")
	row := func(scope, lens string, c detection.Counts) {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%.2f\t%d\t%d\t%.2f\t%d/%d\n", scope, lens, c.Incidents, c.True, c.Precision(),
			c.Positives, c.Found, c.Recall(), c.Shown, c.Decisive)
	}
	scopes := func(kind string, ss []detection.Scope) {
		for _, s := range ss {
			row(kind+" "+s.Name, "all", s.All)
			for _, l := range detection.Lenses {
				if c, ok := s.Lenses[l]; ok && (c.Incidents > 0 || c.Positives > 0) {
					row("", l, c)
				}
			}
		}
	}
	scopes("corpus", res.Corpora)
	scopes("repo", res.Repos)
	if err := w.Flush(); err != nil {
		return err
	}
	if res.Unscored > 0 {
		f.IO.Printf("%d incidents in files without a review record were not scored\n", res.Unscored)
	}
	for _, u := range res.Unreviewed {
		f.IO.Printf("labelled but not reviewed: %s\n", u)
	}
	if !list {
		return nil
	}
	f.IO.Printf("\nFalse incidents (%d):\n", len(res.False))
	for _, fi := range res.False {
		o := fi.Incident
		f.IO.Printf("  %s %s %s lines %v %v", o.Lens, o.Subject, o.File, o.Lines, o.Signals)
		if fi.Negative != nil {
			f.IO.Printf(" — labelled not an incident: %s", fi.Negative.Why)
		}
		f.IO.Printf("\n")
	}
	f.IO.Printf("\nMisses (%d):\n", len(res.Misses))
	for _, m := range res.Misses {
		l := m.Label
		f.IO.Printf("  %s %s %s lines %v (%s): %s", l.Lens, l.Subject, l.File, l.Lines, l.Kind, l.Why)
		if m.Other != "" {
			f.IO.Printf(" [found by %s]", m.Other)
		}
		f.IO.Printf("\n")
	}
	f.IO.Printf("\nDecisive line not shown (%d):\n", len(res.DecisiveMissing))
	for _, l := range res.DecisiveMissing {
		f.IO.Printf("  %s %s %s line %d: %s\n", l.Lens, l.Subject, l.File, *l.DecisiveLine, l.Why)
	}
	return nil
}
