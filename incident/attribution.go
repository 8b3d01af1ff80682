package incident

import (
	"context"
	"slices"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
	"github.com/cortexhq/cortex/store"
)

// Which skill a user's verdict is about, when several were active: the
// one the user named — in the words themselves, or in the prompt or
// command that started the turn ("marvin work") — or, for a stop, the one
// whose document spells out the step the user stopped ("git commit" in
// one skill's text and not the other's). When none can be told apart,
// the verdict is no skill's: the friction lens lists the skills active
// beside it.

// owners decides, for one session, which run a user's act is charged to.
type owners struct {
	ctx   context.Context
	db    Store
	scope store.SessionScope
	acts  []act
	calls []tcall
	// docs caches each run's document text (lower case; "" when none).
	docs map[*skillRun]*string
	err  error
}

// owns reports whether the act acts[i] is charged to run r, given the
// session's runs: always when no other run of its thread is active at it;
// else when r is the one the user named, or, for a stop, the one whose
// text spells the stopped step.
func (o *owners) owns(r *skillRun, runs []*skillRun, i int) bool {
	a := o.acts[i]
	var active []*skillRun
	for _, x := range runs {
		if x.Thread == r.Thread && (x.covers(a.At) || x.Reaction == i) {
			active = append(active, x)
		}
	}
	if len(active) <= 1 || !slices.Contains(active, r) {
		return true
	}
	if named := o.named(active, i); named != nil {
		return named == r
	}
	if a.Kind != cortex.UserInterrupt && a.Kind != cortex.UserRejection {
		return false
	}
	step := o.stoppedStep(i)
	if step == "" {
		return false
	}
	var match []*skillRun
	for _, x := range active {
		if strings.Contains(o.doc(x), step) {
			match = append(match, x)
		}
	}
	return len(match) == 1 && match[0] == r
}

// named returns the one active run the user named: in the act's words, or
// else in the typed act that started its turn (nil: none, or several).
func (o *owners) named(active []*skillRun, i int) *skillRun {
	texts := []string{o.acts[i].Text}
	for j := i - 1; j >= 0; j-- {
		if o.acts[j].typed() && o.acts[j].Thread == o.acts[i].Thread {
			texts = append(texts, o.acts[j].Text)
			break
		}
	}
	for _, t := range texts {
		var hit []*skillRun
		norm := phrase.Normalize(t)
		for _, x := range active {
			if namesSkill(norm, x.Name) {
				hit = append(hit, x)
			}
		}
		if len(hit) == 1 {
			return hit[0]
		}
		if len(hit) > 1 {
			return nil
		}
	}
	return nil
}

// namesSkill reports whether normalized text names a skill: its name or
// the part after "plugin:" as a word (at least 3 letters), or typed as a
// command ("/x", "$x").
func namesSkill(norm, name string) bool {
	short := strings.ToLower(name)
	if _, s, ok := strings.Cut(short, ":"); ok {
		short = s
	}
	if len(short) < 3 {
		return false
	}
	set := phrase.NewSet(short, strings.ToLower(name))
	return len(set.FindNormalized(norm)) > 0
}

// stoppedStep is the step a stop acts[i] cut short, as a skill's text
// would spell it: for a shell call its program and subcommand ("git
// commit"), else the tool's name — "" when there is no such call.
func (o *owners) stoppedStep(i int) string {
	a := o.acts[i]
	var step *tcall
	for k := range o.calls {
		c := &o.calls[k]
		if a.CallID != "" && c.CallID == a.CallID {
			step = c
			break
		}
		if c.Thread == a.Thread && !c.Timestamp.After(a.At) && !loadsSkill(*c) {
			step = c
		}
	}
	if step == nil {
		return ""
	}
	if shellTool(step.ToolName) {
		f := strings.Fields(strings.TrimPrefix(step.Op, step.ToolName+" "))
		if len(f) > 2 {
			f = f[:2]
		}
		return strings.ToLower(strings.Join(f, " "))
	}
	if step.MCPTool != "" {
		return strings.ToLower(step.MCPTool)
	}
	return strings.ToLower(step.ToolName)
}

// doc is a run's document text, lower case, read once ("" when no record
// shows it or reading it failed; the first error is kept).
func (o *owners) doc(r *skillRun) string {
	if d, ok := o.docs[r]; ok {
		return *d
	}
	text := ""
	if o.err == nil {
		d, err := skillDoc(o.ctx, o.db, o.scope, r)
		switch {
		case err != nil:
			o.err = err
		case d != nil:
			text = strings.ToLower(d.Text)
		}
	}
	o.docs[r] = &text
	return text
}
