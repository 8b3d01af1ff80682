package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/lifecycle"
)

// newSkillLifecycleCmds builds the commands that close the loop for skill
// authors: skill-versions, skill-health, skill-compare, skill-propose and
// skill-evals.
func newSkillLifecycleCmds(f *Factory) []*cobra.Command {
	return []*cobra.Command{NewCmdAISkillVersions(f, nil), NewCmdAISkillHealth(f, nil), NewCmdAISkillCompare(f, nil),
		NewCmdAISkillPropose(f, nil), NewCmdAISkillEvals(f, nil)}
}

// registerScope registers the scope flags into an action's scope params
// (the same fields as scopeFlags).
func registerScope(cmd *cobra.Command, sc *app.ScopeParams) { (*scopeFlags)(sc).register(cmd) }

// SkillVersionsOptions are the flags of `cortex ai skill-versions`.
type SkillVersionsOptions struct {
	app.SkillVersionsParams
	JSON bool
}

// NewCmdAISkillVersions builds `cortex ai skill-versions SKILL`.
func NewCmdAISkillVersions(f *Factory, runF func(context.Context, *SkillVersionsOptions) error) *cobra.Command {
	opts := &SkillVersionsOptions{}
	cmd := &cobra.Command{
		Use:   "skill-versions SKILL",
		Short: "A skill's versions (the SKILL.md body its runs loaded), with a diff between two",
		Long: `Lists the versions of a skill: each distinct SKILL.md body its loads showed (Claude skill and
slash-command bodies, invoked_skills re-injections, custom command expansions, Codex <skill>
blocks and SKILL.md reads), identified by the SHA-256 of the body without front matter and
without the arguments of the run. For each: first and last seen, loads, runs, incidents,
sessions and agents. --diff prints the unified diff between the last two versions (or
--from/--to: a hash prefix of 4+ hex digits, or v1, v2 … by first appearance).`,
		Example: `  cortex ai skill-versions verify
  cortex ai skill-versions marvin:marvin --diff
  cortex ai skill-versions verify --from v1 --to v2 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Skill = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return showResult(cmd.Context(), f, opts.JSON, func(s *app.Service) (app.SkillVersionList, error) {
				return s.SkillVersions(cmd.Context(), opts.SkillVersionsParams)
			}, func(res app.SkillVersionList) { printVersions(f, res) })
		},
	}
	registerScope(cmd, &opts.ScopeParams)
	cmd.Flags().BoolVar(&opts.Diff, "diff", false, "print the unified diff between the last two versions")
	cmd.Flags().StringVar(&opts.From, "from", "", "diff from this version (hash prefix or vN)")
	cmd.Flags().StringVar(&opts.To, "to", "", "diff to this version (default: the newest)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func printVersions(f *Factory, res app.SkillVersionList) {
	f.IO.Printf("%s: %d version(s)", Safe(res.Skill), len(res.Versions))
	if res.UnknownVersionRuns > 0 {
		f.IO.Printf("; %d run(s) of unknown version (no load showed the body)", res.UnknownVersionRuns)
	}
	f.IO.Printf("\n\n")
	tw := tabwriter.NewWriter(f.IO.Out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tFIRST SEEN\tLAST SEEN\tLOADS\tRUNS\tINCIDENTS\tSESSIONS\tAGENTS\tLINES")
	for _, v := range res.Versions {
		lines := fmt.Sprint(v.Lines)
		if !v.Complete {
			lines += " (partial)"
		}
		fmt.Fprintf(tw, "v%d %s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\n", v.Ordinal, v.Short, short16(v.FirstSeen), short16(v.LastSeen),
			v.Loads, v.Runs, v.Incidents, v.Sessions, strings.Join(v.Agents, ","), lines)
	}
	tw.Flush()
	if res.Message != "" {
		f.IO.Printf("\n%s\n", res.Message)
	}
	if res.Diff != nil {
		note := ""
		if res.Diff.Partial {
			note = " (a body is known only in part: lines past the read are missing, not removed)"
		}
		f.IO.Printf("\nDiff %s → %s%s:\n\n", res.Diff.From, res.Diff.To, note)
		if res.Diff.Diff == "" {
			f.IO.Printf("(identical bodies)\n")
		}
		f.IO.Printf("%s", Safe(res.Diff.Diff))
	}
}

func short16(ts string) string {
	if len(ts) >= 16 {
		return ts[:16]
	}
	return ts
}

// SkillHealthOptions are the flags of `cortex ai skill-health`.
type SkillHealthOptions struct {
	app.SkillHealthParams
	JSON bool
}

// NewCmdAISkillHealth builds `cortex ai skill-health [SKILL]`.
func NewCmdAISkillHealth(f *Factory, runF func(context.Context, *SkillHealthOptions) error) *cobra.Command {
	opts := &SkillHealthOptions{}
	cmd := &cobra.Command{
		Use:   "skill-health [SKILL]",
		Short: "Health of every skill (or one), per version, worst first, with a grade",
		Long: `Per skill and per version: runs, sessions, agents, incidents and friction per run (the
user's own pushback charged to the skill), the incident rate with its 95% Wilson interval,
the top finding categories of its worst incidents, a weekly trend and a grade:

  ` + app.GradeFormula + `

Sorted worst first. Runs are skill-lens groups, incident or not (see docs/skills.md).`,
		Example: `  cortex ai skill-health
  cortex ai skill-health verify
  cortex ai skill-health --since 30d --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Skill = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return showResult(cmd.Context(), f, opts.JSON, func(s *app.Service) (app.SkillHealthReport, error) {
				return s.SkillHealth(cmd.Context(), opts.SkillHealthParams)
			}, func(res app.SkillHealthReport) { printHealth(f, res, opts.Skill != "") })
		},
	}
	registerScope(cmd, &opts.ScopeParams)
	cmd.Flags().IntVar(&opts.Limit, "limit", app.DefaultHealthLimit, fmt.Sprintf("maximum skills (max %d)", app.MaxHealthLimit))
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func grade(s lifecycle.Stats) string {
	if s.Provisional {
		return s.Grade + "?"
	}
	return s.Grade
}

func printHealth(f *Factory, res app.SkillHealthReport, one bool) {
	if len(res.Skills) == 0 {
		f.IO.Printf("No skill runs match these filters.\n")
		return
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "GRADE\tSCORE\tSKILL\tRUNS\tINCIDENTS\tRATE (95% CI)\tFRICTION/RUN\tVERSIONS\tTOP FINDING")
	for _, h := range res.Skills {
		top := "-"
		if len(h.TopFindings) > 0 {
			top = h.TopFindings[0].Category
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%d\t%d\t%.0f%% (%.0f–%.0f%%)\t%.2f\t%d\t%s\n", grade(h.Stats), h.Score, OneLine(h.Skill, 48), h.Runs,
			h.Incidents, h.IncidentRate*100, h.IncidentRateCI.Low*100, h.IncidentRateCI.High*100, h.FrictionPerRun, len(h.Versions), top)
	}
	tw.Flush()
	if res.Truncated {
		f.IO.Printf("(%d of %d skills; --limit for more)\n", len(res.Skills), res.Total)
	}
	f.IO.Printf("\nGrade: %s (? = provisional).\n", app.GradeFormula)
	if !one {
		return
	}
	for _, h := range res.Skills {
		f.IO.Printf("\n%s — agents %s, %s … %s, %d session(s)\n", Safe(h.Skill), strings.Join(h.Agents, ", "),
			short16(h.FirstSeen), short16(h.LastSeen), h.Sessions)
		if len(h.Versions) > 0 {
			f.IO.Printf("\nVersions:\n")
			for _, v := range h.Versions {
				f.IO.Printf("  v%d %s  %s %.0f  runs %d  incidents %d  friction/run %.2f\n", v.Ordinal, v.Short, grade(v.Stats), v.Score,
					v.Runs, v.Incidents, v.FrictionPerRun)
			}
			if h.UnknownVersionRuns > 0 {
				f.IO.Printf("  (%d run(s) of unknown version)\n", h.UnknownVersionRuns)
			}
		}
		if len(h.TopFindings) > 0 {
			f.IO.Printf("\nFindings (from %d incident(s)):\n", h.FindingsFrom)
			for _, c := range h.TopFindings {
				f.IO.Printf("  %-40s %d\n", c.Category, c.Incidents)
			}
		}
		f.IO.Printf("\nWeekly:\n")
		for _, w := range h.Weekly {
			f.IO.Printf("  %s  runs %d  incidents %d\n", w.Week, w.Runs, w.Incidents)
		}
	}
}

// SkillCompareOptions are the flags of `cortex ai skill-compare`.
type SkillCompareOptions struct {
	app.SkillCompareParams
	JSON bool
}

// NewCmdAISkillCompare builds `cortex ai skill-compare SKILL`.
func NewCmdAISkillCompare(f *Factory, runF func(context.Context, *SkillCompareOptions) error) *cobra.Command {
	opts := &SkillCompareOptions{}
	cmd := &cobra.Command{
		Use:   "skill-compare SKILL",
		Short: "Did my fix help? Incident rates before and after a change, with exact statistics",
		Long: `Compares the incident rate of a skill's runs before and after a change: two versions (default
the last two; --before/--after take a hash prefix or vN) or a date (runs before it against runs
from it on). Each side gets its 95% Wilson interval; Fisher's exact test gives the p-value. The
verdict is better or worse only when p < 0.05; no_difference only with 20+ runs a side;
otherwise not_enough_runs, with about how many more runs a test would need.`,
		Example: `  cortex ai skill-compare verify
  cortex ai skill-compare marvin:marvin --before v1 --after v2
  cortex ai skill-compare entire:search --before 2026-06-01 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Skill = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return showResult(cmd.Context(), f, opts.JSON, func(s *app.Service) (lifecycle.Comparison, error) {
				return s.SkillCompare(cmd.Context(), opts.SkillCompareParams)
			}, func(res lifecycle.Comparison) {
				for _, sd := range []struct {
					name string
					s    lifecycle.Side
				}{{"before", res.Before}, {"after", res.After}} {
					f.IO.Printf("%-7s %-28s runs %3d  incidents %3d  rate %3.0f%%  95%% CI %3.0f–%3.0f%%\n", sd.name, OneLine(sd.s.Label, 28),
						sd.s.Runs, sd.s.Incidents, sd.s.Rate*100, sd.s.CI.Low*100, sd.s.CI.High*100)
				}
				f.IO.Printf("\nverdict: %s\n%s\n", res.Verdict, res.Message)
			})
		},
	}
	registerScope(cmd, &opts.ScopeParams)
	cmd.Flags().StringVar(&opts.Before, "before", "", "the before side: a version (hash prefix or vN) or a date")
	cmd.Flags().StringVar(&opts.After, "after", "", "the after side: a version or a date")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// SkillProposeOptions are the flags of `cortex ai skill-propose`.
type SkillProposeOptions struct {
	app.SkillProposeParams
	PrintPrompt bool
	JSON        bool
}

// NewCmdAISkillPropose builds `cortex ai skill-propose SKILL`.
func NewCmdAISkillPropose(f *Factory, runF func(context.Context, *SkillProposeOptions) error) *cobra.Command {
	opts := &SkillProposeOptions{}
	cmd := &cobra.Command{
		Use:   "skill-propose SKILL",
		Short: "Small, evidence-linked edits to a skill's SKILL.md as a unified diff",
		Long: `Finds the skill's SKILL.md on this machine (the path its loads showed — Claude's "Base
directory for this skill", the file Codex read — then the plugin caches and ~/.claude/skills,
~/.codex/skills, ~/.agents/skills; or --file) and prints a unified diff of small edits derived
from the deterministic findings of its worst incidents: one instruction per finding category,
placed after the line the finding quotes, else in the file's rules section, else in a new
"## Guardrails" section. Each hunk header names its finding categories and incident ids.

--llm asks the local LLM through the guarded, audited runner instead, and uses its diff only if
it applies cleanly to the current file and is small; --print-prompt prints that prompt and runs
nothing. Nothing is written unless --write (which refuses when the file changed meanwhile).
The output applies with patch -p1 or git apply from the skill's folder.`,
		Example: `  cortex ai skill-propose using-entire
  cortex ai skill-propose entire:search --file ~/src/skills/search/SKILL.md > search.patch
  cortex ai skill-propose verify --llm
  cortex ai skill-propose verify --print-prompt`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Skill = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return skillProposeRun(cmd.Context(), f, opts)
		},
	}
	registerScope(cmd, &opts.ScopeParams)
	cmd.Flags().StringVar(&opts.File, "file", "", "the SKILL.md to change (default: found from the transcripts and the agents' folders)")
	cmd.Flags().BoolVar(&opts.LLM, "llm", false, "ask the local LLM for the proposal (guarded, audited; used only if it applies cleanly)")
	cmd.Flags().StringVar(&opts.Model, "model", "", "model for --llm (default: the configured one)")
	cmd.Flags().BoolVar(&opts.Write, "write", false, "write the proposal to the file")
	cmd.Flags().BoolVar(&opts.PrintPrompt, "print-prompt", false, "print the whole LLM prompt and run nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func skillProposeRun(ctx context.Context, f *Factory, opts *SkillProposeOptions) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	db, closeStore, err := f.OpenStore(ctx, opts.LLM) // the LLM audit is written
	if err != nil {
		return err
	}
	defer closeStore()
	s := f.NewService(db)
	if opts.PrintPrompt {
		prompt, err := s.SkillProposePrompt(ctx, opts.SkillProposeParams)
		if err != nil {
			return err
		}
		f.IO.Printf("%s", Safe(prompt))
		return nil
	}
	if opts.LLM {
		if err := s.EnableLLM(ctx, cfg.LLM, f.Provider); err != nil {
			return err
		}
	}
	res, err := s.SkillPropose(ctx, app.Caller{Surface: cortex.SurfaceCLI}, opts.SkillProposeParams)
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.IO.WriteJSON(res)
	}
	f.IO.Printf("# cortex ai skill-propose %s: %s\n", Safe(res.Skill), Safe(res.File))
	f.IO.Printf("# %d finding(s) of %d incident(s); %s proposal\n", res.Findings, res.Incidents, res.Source)
	if res.LLM != nil {
		switch {
		case res.LLM.Accepted:
			f.IO.Printf("# LLM proposal accepted (audited as %s)\n", res.LLM.InvocationID)
		case res.LLM.Error != "":
			f.IO.Printf("# LLM proposal failed (%s): %s; the deterministic proposal follows\n", res.LLM.InvocationID, OneLine(res.LLM.Error, 200))
		default:
			f.IO.Printf("# LLM proposal rejected (%s): %s; the deterministic proposal follows\n", res.LLM.InvocationID, OneLine(res.LLM.Rejected, 200))
		}
	}
	for _, h := range res.Hunks {
		f.IO.Printf("# + after line %d (%s): %s — %s\n", h.AfterLine, h.Anchor, strings.Join(h.Categories, ", "), strings.Join(h.IncidentIDs, ", "))
	}
	for _, sk := range res.Skipped {
		f.IO.Printf("# skipped %s (%s): %s\n", sk.Category, strings.Join(sk.IncidentIDs, ", "), sk.Reason)
	}
	if res.Diff == "" {
		f.IO.Printf("# nothing to change\n")
		return nil
	}
	f.IO.Printf("%s", Safe(res.Diff))
	if res.Written {
		fmt.Fprintf(f.IO.ErrOut, "wrote %s\n", Safe(res.File))
	}
	return nil
}

// SkillEvalsOptions are the flags of `cortex ai skill-evals`.
type SkillEvalsOptions struct {
	app.SkillEvalsParams
	JSON bool
}

// NewCmdAISkillEvals builds `cortex ai skill-evals SKILL`.
func NewCmdAISkillEvals(f *Factory, runF func(context.Context, *SkillEvalsOptions) error) *cobra.Command {
	opts := &SkillEvalsOptions{}
	cmd := &cobra.Command{
		Use:   "skill-evals SKILL",
		Short: "Evals from a skill's incidents, in Anthropic skill-creator's evals.json format",
		Long: `Turns the skill's incidents into evals: the prompt the user really typed, the expected output
and verifiable expectations from the user's own correction and the findings. Wrong-skill
triggers become trigger evals (query, should_trigger: false); runs that went well,
should_trigger: true ones. Prints evals.json; --out DIR writes DIR/evals/evals.json,
DIR/evals/trigger_evals.json and DIR/evals/provenance.json (which incident each came from);
--json prints all three.`,
		Example: `  cortex ai skill-evals verify
  cortex ai skill-evals using-entire --out ~/.codex/skills/using-entire`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Skill = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return withService(cmd.Context(), f, func(s *app.Service) error {
				res, err := s.SkillEvals(cmd.Context(), app.Caller{Surface: cortex.SurfaceCLI}, opts.SkillEvalsParams)
				if err != nil {
					return err
				}
				switch {
				case opts.JSON:
					return f.IO.WriteJSON(res)
				case len(res.Written) > 0:
					for _, w := range res.Written {
						f.IO.Printf("wrote %s\n", Safe(w))
					}
					f.IO.Printf("%d eval(s), %d trigger eval(s); %d incident(s) without a prompt skipped\n", len(res.EvalSet.Evals),
						len(res.TriggerEvals), res.Skipped)
					return nil
				}
				return f.IO.WriteJSON(res.EvalSet)
			})
		},
	}
	registerScope(cmd, &opts.ScopeParams)
	cmd.Flags().StringVar(&opts.Out, "out", "", "write DIR/evals/evals.json (and trigger_evals.json, provenance.json)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print evals.json, the trigger evals and the provenance as one JSON object")
	return cmd
}
