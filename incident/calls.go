package incident

import (
	"context"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/toolcall"
)

// Classes of a tool call's outcome (see package toolcall). Only failed
// (and, weaker, failedInOutput) calls are failures of the agent's work.
const (
	classOK             = toolcall.ClassOK
	classFailed         = toolcall.ClassFailed
	classProbe          = toolcall.ClassProbe
	classSibling        = toolcall.ClassSibling
	classRejected       = toolcall.ClassRejected
	classClarify        = toolcall.ClassClarify
	classFailedInOutput = toolcall.ClassFailedInOutput
	classCancelled      = toolcall.ClassCancelled
	classUnknown        = toolcall.ClassUnknown
)

// tcall is a tool call of a session with its classified outcome: its
// stored facts (class, operation, failure line), the user's refusal of it,
// the failure that cancelled it and whether it was recovered.
type tcall struct {
	store.SessionCall
	// Cause is the failed call that cancelled a sibling (its event id).
	Cause int64
	// Recovered is set when the same operation later succeeded in the
	// same thread.
	Recovered bool
	// texts is set when the call's texts, status and exit code were read.
	texts bool
}

// loadsSkill reports whether a call only loads a skill (the Skill tool, or
// a command printing a SKILL.md): not work the user could react to.
func loadsSkill(c tcall) bool { return c.LoadsSkill }

// failure reports whether the call is a failure of the agent's work.
func (c tcall) failure() bool { return toolcall.Failure(c.Class) }

// shellTools reports whether a tool runs a command line.
func shellTool(name string) bool { return toolcall.IsShell(name) }

// command returns the command line of a shell call's arguments.
func command(args string) string { return toolcall.Command(args) }

// programs returns the programs of a command line (see toolcall.Programs).
func programs(cmdline string) []string { return toolcall.Programs(cmdline) }

// classifyCalls classifies every call of a read: facts stored under other
// rules (or none) are derived from the call's texts (withTexts must have
// read them), a call the user refused or answered in words is theirs,
// a sibling cancellation names its cause, and a failure whose operation
// later succeeded in the same thread is recovered. Acts are the session's
// user events (rejections and clarifications name the calls they refused).
func classifyCalls(calls []store.SessionCall, texts bool, acts []act) []tcall {
	refused := map[string]string{}
	for _, a := range acts {
		if a.CallID != "" && (a.Kind == cortex.UserRejection || a.Kind == cortex.UserClarify) {
			refused[a.CallID] = a.Kind
		}
	}
	out := make([]tcall, len(calls))
	for i, c := range calls {
		out[i].SessionCall, out[i].texts = c, texts
		if c.FactsVersion != toolcall.Version {
			out[i].Facts = toolcall.Read(c.Input())
			out[i].FactsVersion = toolcall.Version
		}
		switch refused[c.CallID] {
		case cortex.UserRejection:
			out[i].Class, out[i].Why = classRejected, ""
		case cortex.UserClarify:
			out[i].Class, out[i].Why = classClarify, ""
		}
	}
	// A sibling cancellation names its cause: the failed call of the same
	// tool just before it (Claude runs parallel calls of one message).
	for i := range out {
		if out[i].Class != classSibling {
			continue
		}
		for j := i - 1; j >= 0 && out[i].Timestamp.Sub(out[j].Timestamp) <= time.Minute; j-- {
			if out[j].failure() && out[j].Thread == out[i].Thread {
				out[i].Cause = out[j].ID
				break
			}
		}
	}
	// Recovered: the same operation succeeded later in the same thread.
	for i := range out {
		if !out[i].failure() {
			continue
		}
		for j := i + 1; j < len(out); j++ {
			if out[j].Thread == out[i].Thread && out[j].Op == out[i].Op && out[j].Class == classOK {
				out[i].Recovered = true
				break
			}
		}
	}
	return out
}

// classifyRead classifies calls read from the call index (facts, no
// texts); the texts of calls whose facts are of other rules are read
// first, to derive them.
func classifyRead(ctx context.Context, db Store, cs []store.SessionCall, acts []act) ([]tcall, error) {
	var stale []int64
	for _, c := range cs {
		if c.FactsVersion != toolcall.Version {
			stale = append(stale, c.ID)
		}
	}
	if len(stale) > 0 {
		ts, err := db.CallTextsByID(ctx, stale)
		if err != nil {
			return nil, err
		}
		for i := range cs {
			if t, ok := ts[cs[i].ID]; ok {
				setTexts(&cs[i], t)
			}
		}
	}
	return classifyCalls(cs, false, acts), nil
}

// setTexts gives a call read from the index its texts and outcome.
func setTexts(c *store.SessionCall, t store.CallTexts) {
	c.Status, c.ExitCode, c.Arguments, c.Output, c.ErrorText = t.Status, t.ExitCode, t.Arguments, t.Output, t.ErrorText
	if c.Why == "" && c.FactsVersion == toolcall.Version {
		c.Why = t.Why
	}
}

// withTexts reads the texts of the calls pick selects that were read
// without them (for bundles: failures, a skill's own commands).
func withTexts(ctx context.Context, db Store, calls []tcall, pick func(tcall) bool) error {
	var ids []int64
	for _, c := range calls {
		if !c.texts && pick(c) {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ts, err := db.CallTextsByID(ctx, ids)
	if err != nil {
		return err
	}
	for i := range calls {
		c := &calls[i]
		t, ok := ts[c.ID]
		if !ok || c.texts {
			continue
		}
		why := c.Why
		setTexts(&c.SessionCall, t)
		if c.Class == classRejected || c.Class == classClarify {
			c.Why = why // the user's refusal shows no failure line
		}
		c.texts = true
	}
	return nil
}
