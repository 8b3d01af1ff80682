package lifecycle

import (
	"fmt"
	"math"

	"github.com/cortexhq/cortex/stats"
)

// Verdicts of a comparison.
const (
	VerdictBetter        = "better"
	VerdictWorse         = "worse"
	VerdictNotEnoughRuns = "not_enough_runs"
	VerdictNoDifference  = "no_difference"
)

// Significance is the p-value below which a difference counts.
const Significance = 0.05

// minRunsNoDifference is how many runs each side needs before equal rates
// are reported as no difference rather than too few runs.
const minRunsNoDifference = 20

// Side is one side of a comparison: which runs, and their incident rate
// with its 95% Wilson interval.
type Side struct {
	// Label says how the side was chosen ("v1 3f2a…", "before
	// 2026-06-01").
	Label string `json:"label"`
	// Version is set when the side is one version.
	Version   string         `json:"version,omitempty"`
	From      string         `json:"from,omitempty"`
	To        string         `json:"to,omitempty"`
	Runs      int            `json:"runs"`
	Incidents int            `json:"incidents"`
	Rate      float64        `json:"incident_rate"`
	CI        stats.Interval `json:"incident_rate_ci95"`
	Friction  int            `json:"friction_incidents"`
}

// Comparison answers "did my change help?".
type Comparison struct {
	Skill  string `json:"skill"`
	Before Side   `json:"before"`
	After  Side   `json:"after"`
	// PValue is Fisher's exact test (two-sided) of the incident counts.
	PValue  float64 `json:"p_value"`
	Verdict string  `json:"verdict"`
	// RunsNeeded estimates how many more runs (both sides together) a
	// test needs to tell the rates apart, when the verdict is
	// not_enough_runs (0 when no estimate is possible).
	RunsNeeded int    `json:"runs_needed,omitempty"`
	Message    string `json:"message"`
	// Diff is the unified diff between the two versions when both sides
	// are versions with stored bodies.
	Diff string `json:"diff,omitempty"`
}

// NewSide summarizes the runs of one side.
func NewSide(label string, runs []Run) Side {
	s := Summarize(runs)
	return Side{Label: label, Runs: s.Runs, Incidents: s.Incidents, Rate: s.IncidentRate, CI: s.IncidentRateCI,
		Friction: s.Friction}
}

// Compare compares the incident rates of two sides and gives a verdict
// that never claims more than the numbers show: better or worse only when
// Fisher's exact test finds the difference significant (p < 0.05); no
// difference only when each side has at least 20 runs and the test finds
// none; otherwise not enough runs, with about how many more a test would
// need to see the observed difference with 80% power and with the exact
// test itself (or, with equal rates so far, a
// halving of the incident rate; with no incidents at all, a rise to 20%).
func Compare(skill string, before, after Side) Comparison {
	c := Comparison{Skill: skill, Before: before, After: after, PValue: 1}
	nb, na := before.Runs, after.Runs
	if nb == 0 || na == 0 {
		c.Verdict = VerdictNotEnoughRuns
		side := "after"
		if nb == 0 {
			side = "before"
		}
		c.Message = fmt.Sprintf("no runs %s the change yet: nothing to compare", side)
		return c
	}
	c.PValue = stats.FisherExact(before.Incidents, nb-before.Incidents, after.Incidents, na-after.Incidents)
	c.PValue = math.Round(c.PValue*1e6) / 1e6
	pb, pa := float64(before.Incidents)/float64(nb), float64(after.Incidents)/float64(na)
	rates := fmt.Sprintf("%s of runs had an incident before (%d/%d), %s after (%d/%d)", pct(pb), before.Incidents, nb,
		pct(pa), after.Incidents, na)
	if c.PValue < Significance {
		c.Verdict = VerdictWorse
		if pa < pb {
			c.Verdict = VerdictBetter
		}
		c.Message = fmt.Sprintf("%s: %s; Fisher's exact test p = %.4f", c.Verdict, rates, c.PValue)
		return c
	}
	target := pa
	switch {
	case pa != pb:
	case pb > 0:
		target = pb / 2
	default:
		target = 0.2
	}
	need := stats.SampleSize(pb, target)
	need = max(need, stats.ExactMinimum(pb, target, need+100))
	more := max(0, need-nb) + max(0, need-na)
	if pa == pb && nb >= minRunsNoDifference && na >= minRunsNoDifference || pa != pb && more == 0 {
		c.Verdict = VerdictNoDifference
		c.Message = fmt.Sprintf("no significant difference: %s; Fisher's exact test p = %.4f", rates, c.PValue)
		return c
	}
	c.Verdict, c.RunsNeeded = VerdictNotEnoughRuns, more
	what := "the difference seen so far"
	if pa == pb {
		what = fmt.Sprintf("a change from %s to %s", pct(pb), pct(target))
	}
	c.Message = fmt.Sprintf("not enough runs yet (about %d more needed, %d per side, to tell %s at p < 0.05 with 80%% power): %s; p = %.4f",
		more, need, what, rates, c.PValue)
	return c
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", x*100) }
