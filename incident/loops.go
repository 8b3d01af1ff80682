package incident

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/cortexhq/cortex/toolcall"
)

// Retry loops: the agent doing the same failing thing again and again,
// whether or not the user says anything. Found per agent thread, from the
// calls' stored facts (class, operation, failure line) alone.

// Loop thresholds.
const (
	// loopSame is how many failed attempts of one operation, none of it
	// succeeding between, make a loop — and how many of one failure line,
	// whatever the calls.
	loopSame = 3
	// loopStretch is how many failed calls in a row, with no call
	// succeeding between, make a loop.
	loopStretch = 5
	// loopGap is how many calls may succeed between two repeats of one
	// failure line in a loop (a look at the file between two edits).
	loopGap = 2
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

// batch is how close calls of one thread are to be one attempt: the
// calls an agent makes in parallel from one message fail together, once.
const batch = time.Second

func threadLoops(calls []tcall) []retryLoop {
	var out []retryLoop
	taken := map[int64]bool{}
	// The same operation failing, none of it succeeding between; failures
	// of one batch count once.
	open := map[string][]tcall{}
	attempts := map[string]int{}
	flush := func(op string) {
		fs := open[op]
		n := attempts[op]
		delete(open, op)
		delete(attempts, op)
		if n >= loopSame {
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
			fs := open[c.Op]
			if len(fs) == 0 || c.Timestamp.Sub(fs[len(fs)-1].Timestamp) > batch {
				attempts[c.Op]++
			}
			open[c.Op] = append(fs, c)
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
	// The same failure again and again whatever the call (an edit, then a
	// write, then a multi-edit of one file, each refused the same way),
	// with at most a couple of calls succeeding between.
	type streak struct {
		calls    []tcall
		attempts int
		okSince  int
	}
	byWhy := map[string]*streak{}
	var whys []string
	end2 := func(w string) {
		st := byWhy[w]
		delete(byWhy, w)
		if st == nil || st.attempts < loopSame || !slices.ContainsFunc(st.calls, func(c tcall) bool { return !taken[c.ID] }) {
			return
		}
		out = append(out, retryLoop{Op: st.calls[0].Op, Calls: st.calls})
		for _, c := range st.calls {
			taken[c.ID] = true
		}
	}
	for _, c := range calls {
		switch {
		case neutral(c):
		case c.failure():
			w := failureLine(c.Why)
			if w == "" {
				continue
			}
			st := byWhy[w]
			if st == nil {
				st = &streak{}
				byWhy[w] = st
				whys = append(whys, w)
			}
			if len(st.calls) == 0 || c.Timestamp.Sub(st.calls[len(st.calls)-1].Timestamp) > batch {
				st.attempts++
			}
			st.calls, st.okSince = append(st.calls, c), 0
		default:
			for w, st := range byWhy {
				if st.okSince++; st.okSince > loopGap {
					end2(w)
				}
			}
		}
	}
	for _, w := range whys {
		end2(w)
	}
	// A stretch of failed attempts with nothing succeeding between.
	var run []tcall
	n := 0
	end := func() {
		if n >= loopStretch && slices.ContainsFunc(run, func(c tcall) bool { return !taken[c.ID] }) {
			out = append(out, retryLoop{Calls: run})
		}
		run, n = nil, 0
	}
	for _, c := range calls {
		switch {
		case neutral(c):
		case c.failure():
			if len(run) == 0 || c.Timestamp.Sub(run[len(run)-1].Timestamp) > batch {
				n++
			}
			run = append(run, c)
		default:
			end()
		}
	}
	end()
	slices.SortFunc(out, func(a, b retryLoop) int { return a.Calls[0].Timestamp.Compare(b.Calls[0].Timestamp) })
	return out
}

// loopTexts reads the failure lines of the failed calls of threads that
// failed loopSame times or more: the call index stores no failure line,
// and a loop is the same one again and again. It reads the stored lines
// only (derived with the calls' facts), not the calls' texts; a call whose
// facts are of other rules keeps its line empty until they are derived
// again.
func loopTexts(ctx context.Context, db Store, calls []tcall) error {
	fails := map[string]int{}
	for _, c := range calls {
		if c.failure() {
			fails[c.Thread]++
		}
	}
	var ids []int64
	for _, c := range calls {
		if c.failure() && fails[c.Thread] >= loopSame && c.Why == "" && !c.texts {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	whys, err := db.CallWhysByID(ctx, ids)
	if err != nil {
		return err
	}
	for i := range calls {
		c := &calls[i]
		if w, ok := whys[c.ID]; ok && c.Why == "" && c.FactsVersion == toolcall.Version {
			c.Why = w
		}
	}
	return nil
}

// failureLine is a failure line as loops compare them: lower case, digits
// as 0, white space folded, at most 160 bytes.
func failureLine(why string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(strings.TrimSpace(why)) {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case unicode.IsDigit(r):
			r = '0'
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
		if b.Len() >= 160 {
			break
		}
	}
	return b.String()
}
