package findings

import (
	"strconv"
	"strings"

	"github.com/cortexhq/cortex"
)

// Friction returns the rule set of the friction lens: the user's verdicts
// (their words in the incident and their reaction right after it) and the
// causes the agent's failed calls nearby show, with the skill lens's
// categories and hints, aimed at what the friction was charged to (a
// skill, a command, an MCP tool, a hook) or, when nothing was active, at
// the agent's own instructions.
func Friction() *Rules { return frictionRules }

var frictionRules = buildFriction()

func buildFriction() *Rules {
	cats, rules := skillTable()
	r := newRules(cortex.LensFriction, cats, rules)
	r.subject = frictionSubject
	r.noAnchors = "no friction anchors captured"
	r.rows = skillRows
	return r
}

// maxCharged bounds the subjects a friction hint names.
const maxCharged = 3

// frictionSubject names what a friction incident was charged to for
// hints: `the "verify" skill`, `the "/deploy" command`, `the "js" tool of
// the "node_repl" MCP server`… (several joined with "or"); with nothing
// charged, the agent's instructions.
func frictionSubject(inc *cortex.Incident) string {
	var parts []string
	for i, a := range inc.AttributedTo {
		if i == maxCharged {
			break
		}
		name := clean(a.Name)
		if r := []rune(name); len(r) > maxSubjectRunes {
			name = string(r[:maxSubjectRunes]) + "…"
		}
		if name == "" {
			continue
		}
		switch a.Kind {
		case "command":
			parts = append(parts, "the "+strconv.Quote("/"+strings.TrimPrefix(name, "/"))+" command")
		case "mcp":
			parts = append(parts, "the "+strconv.Quote(name)+" MCP tool")
		case "hook":
			parts = append(parts, "the "+strconv.Quote(name)+" hook")
		default:
			parts = append(parts, "the "+strconv.Quote(name)+" skill")
		}
	}
	if len(parts) == 0 {
		return "the agent's instructions (CLAUDE.md, AGENTS.md or GEMINI.md)"
	}
	return strings.Join(parts, " or ")
}
