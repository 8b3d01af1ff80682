package incident

import (
	"slices"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

// Subject kinds of the skill lens: a skill, or a custom slash command
// (typed, not one of the agent's own, and no skill body came with it).
const (
	SubjectSkill   = "skill"
	SubjectCommand = "command"
)

// skillRun is one run of a skill (or custom command) in one agent thread:
// from its activation to the next prompt the user typed after its last
// sign of life (Claude tags every line while a skill is active, so a run
// spans the turns it is tagged in). Nothing outside that scope is charged
// to it; the user's next prompt after it is its reaction.
type skillRun struct {
	Name, Plugin string
	Kind         string // SubjectSkill or SubjectCommand
	Thread       string
	Start        time.Time // the first event
	LastLive     time.Time // the last activation or attribution
	// End is when the scope ends: the next typed prompt of the main
	// thread after LastLive (zero: the session had none).
	End time.Time
	// Events are the run's skill events (its members).
	Events []store.SessionSkill
	// Reaction is the index in the session's acts of the user's next typed
	// prompt after the run (-1: none).
	Reaction int
}

// activation reports whether a skill event kind starts a run (an explicit
// load); attribution continues one.
func activation(kind string) bool { return kind != cortex.SkillClaudeAttribution }

// innermost reports whether r is the most recently started of the runs of
// its thread that cover t: a skill loaded inside another skill's run takes
// the blame for what fails after it (ties: both).
func innermost(r *skillRun, runs []*skillRun, t time.Time) bool {
	for _, o := range runs {
		if o != r && o.Thread == r.Thread && o.covers(t) && o.Start.After(r.Start) && !o.Start.After(t) {
			return false
		}
	}
	return true
}

// canonicalNames maps the skill names of one session to one name per
// skill: an unqualified name ("commit-push-pr", announced "ce-work") that
// the session also shows plugin-qualified ("entire:commit-push-pr") takes
// the qualified name. known, when not nil, are the names the store saw
// loaded as skills: an announced name that is neither known nor loaded in
// the session maps to "" (not a skill).
func canonicalNames(evs []store.SessionSkill, known map[string]bool) map[string][2]string {
	qualified := map[string][]string{}
	loaded := map[string]bool{}
	plugin := map[string]string{}
	for _, e := range evs {
		if e.Kind != cortex.SkillCodexAnnounced {
			loaded[e.Skill] = true
		}
		if p, s, ok := strings.Cut(e.Skill, ":"); ok && p != "" && s != "" {
			if !slices.Contains(qualified[s], e.Skill) {
				qualified[s] = append(qualified[s], e.Skill)
			}
			plugin[e.Skill] = e.Plugin
		}
	}
	out := map[string][2]string{}
	for _, e := range evs {
		if _, ok := out[e.Skill]; ok {
			continue
		}
		name, plug := e.Skill, e.Plugin
		if !strings.Contains(name, ":") && len(qualified[name]) == 1 {
			name = qualified[name][0]
			plug = plugin[name]
		}
		out[e.Skill] = [2]string{name, plug}
	}
	for _, e := range evs {
		if e.Kind != cortex.SkillCodexAnnounced {
			continue
		}
		c := out[e.Skill][0]
		if !loaded[e.Skill] && !loaded[c] && (known == nil || !known[e.Skill] && !known[c]) {
			out[e.Skill] = [2]string{}
		}
	}
	return out
}

// buildRuns scopes a session's skill events (time order) into runs, given
// its acts (time order).
func buildRuns(evs []store.SessionSkill, acts []act, known map[string]bool) []*skillRun {
	names := canonicalNames(evs, known)
	// The main thread's typed prompts bound every run (a subagent works
	// within the turn that started it).
	var prompts []int
	for i, a := range acts {
		if a.Thread == "" && a.typed() {
			prompts = append(prompts, i)
		}
	}
	// promptBetween reports whether a main-thread prompt lies in (a, b).
	promptBetween := func(a, b time.Time) bool {
		for _, i := range prompts {
			if acts[i].At.After(a) && acts[i].At.Before(b) {
				return true
			}
		}
		return false
	}
	type key struct{ thread, name string }
	open := map[key]*skillRun{}
	var runs []*skillRun
	for _, e := range evs {
		n := names[e.Skill]
		if n[0] == "" || e.Kind == cortex.SkillClaudeInvoked {
			// Not a skill, or a re-injection after compaction (the harness
			// repeating what ran earlier, not a sign the skill is active).
			continue
		}
		k := key{e.Thread, n[0]}
		r := open[k]
		if r != nil && activation(e.Kind) && promptBetween(r.LastLive, e.Timestamp) {
			r = nil // activated again after the user moved on: a new run
		}
		if r == nil {
			r = &skillRun{Name: n[0], Plugin: n[1], Thread: e.Thread, Start: e.Timestamp, Reaction: -1}
			open[k] = r
			runs = append(runs, r)
		}
		r.Events = append(r.Events, e)
		r.LastLive = e.Timestamp
	}
	for _, r := range runs {
		r.Kind = SubjectCommand
		for _, e := range r.Events {
			if e.Kind != cortex.SkillClaudeCommand {
				r.Kind = SubjectSkill
				break
			}
		}
		for _, i := range prompts {
			if acts[i].At.After(r.LastLive) {
				r.End, r.Reaction = acts[i].At, i
				break
			}
		}
	}
	return runs
}

// covers reports whether t falls in the run's scope: from its start to its
// end (open when the session had no later prompt).
func (r *skillRun) covers(t time.Time) bool {
	return !t.Before(r.Start) && (r.End.IsZero() || t.Before(r.End))
}

// members returns the run's events as engine members.
func (r *skillRun) members(k groupKey) []member {
	out := make([]member, len(r.Events))
	for i, e := range r.Events {
		out[i] = member{ID: e.ID, LogID: e.LogID, At: e.Timestamp, Kind: e.Kind, Key: k}
	}
	return out
}
