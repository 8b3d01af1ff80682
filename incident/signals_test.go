package incident

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/sqlite"
)

func TestActivations(t *testing.T) {
	cases := []struct {
		kinds []string
		want  int
	}{
		{[]string{cortex.SkillClaudeTool, cortex.SkillClaudeBody, cortex.SkillClaudeAttribution, cortex.SkillClaudeAttribution}, 1},
		{[]string{cortex.SkillClaudeTool, cortex.SkillClaudeTool}, 2},
		{[]string{cortex.SkillClaudeCommand, cortex.SkillClaudeSlash}, 1},
		{[]string{cortex.SkillClaudeSlash, cortex.SkillClaudeBody}, 2},
		{[]string{cortex.SkillCodexBlock}, 1},
		{[]string{cortex.SkillCodexRead, cortex.SkillCodexAnnounced}, 1},
		{slices.Repeat([]string{cortex.SkillClaudeAttribution}, 76), 1},
	}
	for _, c := range cases {
		var evs []sqlite.SessionSkill
		for _, k := range c.kinds {
			evs = append(evs, sqlite.SessionSkill{Kind: k})
		}
		if got := activations(evs); got != c.want {
			t.Errorf("activations(%v) = %d, want %d", c.kinds, got, c.want)
		}
	}
}

// Severity is the cost to the user: a run the user stopped outranks runs
// whose tools failed, an unrecovered failure outranks a recovered one, and
// loading a skill many times adds nothing.
func TestSkillScoreOrder(t *testing.T) {
	stopped := skillScore(map[string]int{cortex.SignalUserStopped: 1}, 0, 0)
	corrected := skillScore(map[string]int{cortex.SignalUserCorrection: 1}, 0, 0)
	unrecovered := skillScore(map[string]int{cortex.SignalToolFailure: 2}, 2, 0)
	recovered := skillScore(map[string]int{cortex.SignalToolFailure: 2}, 0, 2)
	usage := skillScore(map[string]int{}, 0, 0)
	if !(stopped > corrected && corrected > unrecovered && unrecovered > recovered && recovered > usage && usage == 0) {
		t.Errorf("order: stopped %v, corrected %v, unrecovered %v, recovered %v, usage %v", stopped, corrected, unrecovered, recovered, usage)
	}
	// Four failures do not outrank one stop (the real corpus had two
	// stopped skills below four non-failures).
	if four := skillScore(map[string]int{cortex.SignalToolFailure: 4}, 4, 0); four > stopped+5 {
		t.Errorf("four unrecovered failures %v outrank a stop %v", four, stopped)
	}
	for _, c := range []struct {
		score float64
		want  string
	}{{14.99, "low"}, {15, "medium"}, {34.9, "medium"}, {35, "high"}, {59.9, "high"}, {60, "critical"}} {
		if got := skillLabel(c.score); got != c.want {
			t.Errorf("skillLabel(%v) = %s, want %s", c.score, got, c.want)
		}
	}
}

func TestAbuseScoreByIntensity(t *testing.T) {
	cases := []struct {
		count, intensity, terms int
		label                   string
	}{
		{1, 1, 1, "low"},      // "ah crap we still have merge issues?"
		{1, 2, 1, "medium"},   // "this is shit"
		{1, 4, 1, "high"},     // "what the fuck are you doing?!"
		{3, 5, 3, "critical"}, // a tirade aimed at the agent
	}
	prev := 0.0
	for _, c := range cases {
		got := abuseScore(c.count, c.intensity, c.terms)
		if abuseLabel(got) != c.label || got <= prev {
			t.Errorf("abuseScore(%d, %d, %d) = %v %s, want %s and above %v", c.count, c.intensity, c.terms, got, abuseLabel(got), c.label, prev)
		}
		prev = got
	}
}

func TestNormalizeTerms(t *testing.T) {
	got, err := NormalizeTerms([]string{" Damn ", "crap", "damn", ""})
	if err != nil || fmt.Sprint(got) != "[crap damn]" {
		t.Fatalf("got %v %v", got, err)
	}
	if got, _ := NormalizeTerms(nil); len(got) != 16 {
		t.Fatalf("defaults: %v", got)
	}
	for _, bad := range [][]string{{"a b"}, {`x" OR 1`}, {"é"}, {string(make([]byte, 65))},
		{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q"}} {
		if _, err := NormalizeTerms(bad); cortex.ErrorCode(err) != cortex.CodeInvalid {
			t.Errorf("NormalizeTerms(%q): %v, want invalid", bad, err)
		}
	}
}

func TestCutText(t *testing.T) {
	s, cut := cutText("héllo wörld", 2) // 'é' is two bytes: cut before it
	if s != "h… [cut 12 bytes]" || !cut {
		t.Fatalf("got %q %v", s, cut)
	}
	if s, cut := cutText("short", 10); s != "short" || cut {
		t.Fatalf("got %q %v", s, cut)
	}
}

func TestNearestNames(t *testing.T) {
	names := []string{"lavra:lavra-plan", "lavra:lavra-work", "verify", "golang-style", "deploy-helper"}
	got := nearestNames("lavra-plan", names, 5)
	if len(got) == 0 || got[0] != "lavra:lavra-plan" {
		t.Fatalf("got %v", got)
	}
	if got := nearestNames("verfy", names, 5); fmt.Sprint(got) != "[verify]" {
		t.Fatalf("got %v", got)
	}
	if got := nearestNames("zzzzzzzz", names, 5); len(got) != 0 {
		t.Fatalf("got %v", got)
	}
}
