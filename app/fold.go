package app

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Fold is an MCP tool that serves several read actions, one per value of
// its selector parameter: `events kind=mcp` calls mcp_events, `skill
// view=health` calls skill_health. Every tool costs tokens in every agent
// session that lists it; actions that answer questions about the same
// thing, share most parameters and would be allowed or denied together
// cost less as one tool. REST and the CLI keep one route and one command
// per action.
//
// The tool's input schema is the union of its actions' listed parameters
// plus the selector; a call is checked against the chosen action's own
// parameters (a parameter of another view is unknown).
type Fold struct {
	// Tool is the MCP tool's name.
	Tool string
	// Param is the selector parameter, required on every call.
	Param string
	// Description is the tool's description: one line naming each view.
	Description string
	// Shared are the descriptions of parameters several views take with
	// different wording (the tool lists one).
	Shared map[string]string
	// Views are the values of Param and their actions, in listing order.
	Views []View
}

// View is one value of a fold's selector and the action it calls.
type View struct {
	Value  string
	Action string
}

// Values lists the selector's values in order.
func (f Fold) Values() []string {
	out := make([]string, len(f.Views))
	for i, v := range f.Views {
		out[i] = v.Value
	}
	return out
}

// Action returns the action a value of the selector calls.
func (f Fold) Action(value string) (Action, bool) {
	for _, v := range f.Views {
		if v.Value == value {
			a, err := ActionByName(v.Action)
			return a, err == nil
		}
	}
	return Action{}, false
}

// folds are the MCP tools that serve several actions.
var folds = []Fold{
	{
		Tool: "events", Param: "kind",
		Description: "Rows by kind, newest first: skill (loads and uses; summary: one per skill), mcp (tool and " +
			"MCP calls), hook (runs and configured hooks), abuse (user messages with abusive terms).",
		Shared: map[string]string{"limit": "50, max 500 (abuse: 20, max 100)"},
		Views:  []View{{"skill", "skill_events"}, {"mcp", "mcp_events"}, {"hook", "hook_events"}, {"abuse", "abuse"}},
	},
	{
		Tool: "skill", Param: "view",
		Description: "For skill authors: health (worst first, graded), versions (SKILL.md versions, runs, incidents; " +
			"diff), compare (did a change help), propose (SKILL.md edits as a diff), evals (from incidents).",
		Shared: map[string]string{"skill": "skill or plugin:skill (required but for health)"},
		Views: []View{{"health", "skill_health"}, {"versions", "skill_versions"}, {"compare", "skill_compare"},
			{"propose", "skill_propose"}, {"evals", "skill_evals"}},
	},
}

// Folds returns the MCP tools that serve several actions.
func Folds() []Fold { return folds }

// foldInto marks the registry's folded actions (see Action.Fold) and
// panics on a fold that would misdescribe them: a tool named like an
// action, an unknown or already served action, an action with a parameter
// named like the selector, or views that differ in scope or in writing (a
// client allows or denies the tool as a whole).
func foldInto(reg []Action) {
	for fi := range folds {
		f := &folds[fi]
		if slices.ContainsFunc(reg, func(a Action) bool { return a.Name == f.Tool }) {
			panic(fmt.Sprintf("fold %s: an action has that name", f.Tool))
		}
		var first *Action
		for _, v := range f.Views {
			i := slices.IndexFunc(reg, func(a Action) bool { return a.Name == v.Action })
			if i < 0 {
				panic(fmt.Sprintf("fold %s: no action %s", f.Tool, v.Action))
			}
			a := &reg[i]
			if !a.OnMCP() {
				panic(fmt.Sprintf("fold %s: %s is not an MCP tool of its own", f.Tool, a.Name))
			}
			if first == nil {
				first = a
			} else if a.Scope != first.Scope || (a.Cost == CostWrite) != (first.Cost == CostWrite) {
				panic(fmt.Sprintf("fold %s: %s and %s differ in scope or writing", f.Tool, first.Name, a.Name))
			}
			if a.schema.Properties[f.Param] != nil {
				panic(fmt.Sprintf("fold %s: %s has a parameter %s", f.Tool, a.Name, f.Param))
			}
			a.Fold, a.View = f, v.Value
		}
	}
}

// mcpCallString renders a tool and its fixed arguments as documentation
// ("skill view=health").
func mcpCallString(tool string, args map[string]any) string {
	var b strings.Builder
	b.WriteString(tool)
	for _, k := range slices.Sorted(maps.Keys(args)) {
		v := args[k]
		if list, ok := v.([]string); ok && len(list) == 1 {
			v = list[0]
		}
		fmt.Fprintf(&b, " %s=%v", k, v)
	}
	return b.String()
}
