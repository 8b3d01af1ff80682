package incident

import "slices"

// Retry loops: the agent doing the same failing thing again and again,
// whether or not the user says anything. Found per agent thread, from the
// calls' stored facts (class, operation, failure line) alone.

// Loop thresholds.
const (
	// loopSame is how many failures of one operation with the same
	// failure line, none of that operation succeeding between, make a
	// loop (no progress: the same error each time).
	loopSame = 3
	// loopRepeats is how many failures of one operation, none of it
	// succeeding between, make a loop whatever the failure lines say.
	loopRepeats = 5
	// loopStretch is how many failed calls in a row, with no call
	// succeeding between, make a loop.
	loopStretch = 5
)

// retryLoop is one loop: the failed calls it is made of (in time order)
// and the operation repeated ("" for a stretch of failures of several).
type retryLoop struct {
	Op    string
	Calls []tcall
}

// retryLoops finds the loops in calls (time order, any threads; a loop is
// within one thread). Probes, refusals, sibling cancellations and calls
// that only load a skill neither count nor break a loop; a success of the
// operation (or, for a stretch, any success) ends it.
func retryLoops(calls []tcall) []retryLoop {
	byThread := map[string][]tcall{}
	var threads []string
	for _, c := range calls {
		if _, ok := byThread[c.Thread]; !ok {
			threads = append(threads, c.Thread)
		}
		byThread[c.Thread] = append(byThread[c.Thread], c)
	}
	var out []retryLoop
	for _, th := range threads {
		out = append(out, threadLoops(byThread[th])...)
	}
	return out
}

// neutral reports whether a call neither fails nor succeeds for loop
// purposes.
func neutral(c tcall) bool {
	return c.LoadsSkill || !c.failure() && c.Class != classOK
}

func threadLoops(calls []tcall) []retryLoop {
	var out []retryLoop
	taken := map[int64]bool{}
	// The same operation failing, none of it succeeding between.
	open := map[string][]tcall{}
	flush := func(op string) {
		fs := open[op]
		delete(open, op)
		if len(fs) >= loopRepeats || sameFailures(fs) >= loopSame {
			out = append(out, retryLoop{Op: op, Calls: fs})
			for _, f := range fs {
				taken[f.ID] = true
			}
		}
	}
	for _, c := range calls {
		switch {
		case neutral(c):
		case c.failure():
			open[c.Op] = append(open[c.Op], c)
		default:
			flush(c.Op)
		}
	}
	ops := make([]string, 0, len(open))
	for op := range open {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	for _, op := range ops {
		flush(op)
	}
	// A stretch of failures with nothing succeeding between.
	var run []tcall
	end := func() {
		if len(run) >= loopStretch && slices.ContainsFunc(run, func(c tcall) bool { return !taken[c.ID] }) {
			out = append(out, retryLoop{Calls: run})
		}
		run = nil
	}
	for _, c := range calls {
		switch {
		case neutral(c):
		case c.failure():
			run = append(run, c)
		default:
			end()
		}
	}
	end()
	slices.SortFunc(out, func(a, b retryLoop) int { return a.Calls[0].Timestamp.Compare(b.Calls[0].Timestamp) })
	return out
}

// sameFailures is the largest number of failures in fs with one failure
// line (an empty line counts as its own).
func sameFailures(fs []tcall) int {
	n := map[string]int{}
	best := 0
	for _, f := range fs {
		n[f.Why]++
		best = max(best, n[f.Why])
	}
	return best
}
