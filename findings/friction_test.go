package findings

import (
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

func frictionBundle(charged []cortex.Attribution, rows ...cortex.EvidenceRow) *cortex.Bundle {
	return &cortex.Bundle{
		Incident:  cortex.Incident{Lens: cortex.LensFriction, AttributedTo: charged},
		UserVoice: rows,
	}
}

// Friction findings read the user's words with the skill lens's verdicts
// and aim the hint at what the friction was charged to. Excerpts from
// ../shared/corpus/real (claude a88641f6…, codex 019ec66b…, claude
// d43002f0…).
func TestFrictionFindings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		charged []cortex.Attribution
		text    string
		cat     string
		hint    string
	}{
		{"standing instruction, two skills", []cortex.Attribution{{Kind: "skill", Name: "marvin:marvin"}, {Kind: "skill", Name: "skill-creator:skill-creator"}},
			"do not commit anything", catPolicy, `Make the "marvin:marvin" skill or the "skill-creator:skill-creator" skill follow`},
		{"did more than asked", []cortex.Attribution{{Kind: "skill", Name: "using-entire"}},
			"i didnt ask you to rewrite it", catOverreach, `the "using-entire" skill`},
		{"charged to nothing", nil, "no need to run tests browser test. I'll run them.", catOverreach,
			"the agent's instructions (CLAUDE.md, AGENTS.md or GEMINI.md)"},
		{"a command", []cortex.Attribution{{Kind: "command", Name: "deploy"}}, "don't push", catPolicy, `the "/deploy" command`},
		{"an MCP tool", []cortex.Attribution{{Kind: "mcp", Name: "labby/search"}}, "you were supposed to use the cache", catToolPolicy,
			`the "labby/search" MCP tool`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := frictionBundle(tc.charged, row(10, cortex.RoleUser, tc.text))
			r := ForLens(cortex.LensFriction)
			f := r.Derive(b)
			checkInvariants(t, r, b, f)
			m := mode(f, tc.cat)
			if m == nil {
				t.Fatalf("want %s, got %v", tc.cat, cats(f))
			}
			if !strings.Contains(m.Hint, tc.hint) || !slices.Equal(m.EvidenceIDs, []int64{10}) || m.Cause != tc.text {
				t.Errorf("got %+v", m)
			}
		})
	}
	// A rejection without words, or a task that names a state, is no
	// verdict: unknown.
	for _, text := range []string{"[Request interrupted by user]",
		"okay, fix is pushed, let's update from parent branch; there's a merge conflict"} {
		b := frictionBundle(nil, row(10, cortex.RoleUser, text))
		if got := cats(Friction().Derive(b)); !slices.Equal(got, []string{CategoryUnknown}) {
			t.Errorf("%q: got %v", text, got)
		}
	}
}
