package incident

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
)

func skillGroup(kinds ...string) *group {
	g := &group{Key: groupKey{Tool: cortex.ToolClaude, Session: "s", Subject: [3]string{"sk"}}, First: t0, Last: t0}
	for i, k := range kinds {
		g.Members = append(g.Members, member{ID: int64(i + 1), At: t0, Kind: k})
	}
	if len(g.Members) == 0 {
		g.Members = []member{{ID: 1, At: t0, Kind: cortex.SkillClaudeTool}}
	}
	return g
}

func user(id int64, at time.Duration, text string) textRow {
	return textRow{ID: id, At: t0.Add(at), Text: text}
}

// input builds what the lens reads from the store for g: spec lists tool
// calls ("name:ok" or "name:fail"), one minute apart from t0+1m; the call
// count, the failures and the recovery of a lone failure follow the store
// queries' rules for g's window.
func input(g *group, window time.Duration, users []textRow, spec ...string) (skillInput, int) {
	in := skillInput{users: users, recovered: map[int64]bool{}}
	calls := 0
	from, to := signalWindow(g, window)
	type c struct {
		call
		ok bool
	}
	var all []c
	for i, sp := range spec {
		name, res, _ := strings.Cut(sp, ":")
		all = append(all, c{call{ID: int64(100 + i), LogID: int64(1000 + i), At: t0.Add(time.Duration(i+1) * time.Minute), Name: name}, res == "ok"})
	}
	var lone []c
	for _, x := range all {
		if within(x.At, from, to) {
			calls++
			if !x.ok {
				lone = append(lone, x)
			}
		}
		if !x.ok {
			in.failed = append(in.failed, x.call)
		}
	}
	if len(lone) == 1 {
		for _, x := range all {
			if x.ok && x.Name == lone[0].Name && x.At.After(lone[0].At) && !x.At.After(to) {
				in.recovered[lone[0].ID] = true
			}
		}
	}
	return in, calls
}

func TestSkillDetectors(t *testing.T) {
	w := 10 * time.Minute
	abuse := phrase.NewSet(defaultAbuseTerms...)
	many := make([]string, 16)
	for i := range many {
		many[i] = "Bash:ok"
	}
	cases := []struct {
		name  string
		users []textRow
		calls []string
		want  map[string]int
	}{
		{"plain usage", []textRow{user(1, time.Minute, "Great, thanks! That is exactly what I needed.")}, []string{"Bash:ok"}, map[string]int{}},
		{"correction", []textRow{user(1, time.Minute, "That's not what I asked. I asked you to implement it, not to write a plan. You stopped at the plan again.")},
			nil, map[string]int{cortex.SignalUserCorrection: 1, cortex.SignalIgnoredPolicy: 1}},
		{"typographic apostrophe", []textRow{user(1, time.Minute, "That’s not what I asked")}, nil, map[string]int{cortex.SignalUserCorrection: 1}},
		{"scope", []textRow{user(1, time.Minute, "No, that's the wrong repo. I said the web repo.")}, nil,
			map[string]int{cortex.SignalUserCorrection: 1, cortex.SignalScopeConfusion: 1}},
		{"word boundary: wrong repository name is not 'wrong repo'", []textRow{user(1, time.Minute, "the wrong repos list is long")}, nil, map[string]int{}},
		{"before the skill does not count", []textRow{user(1, -time.Minute, "That's not what I asked")}, nil, map[string]int{}},
		{"after the window does not count", []textRow{user(1, w+time.Second, "That's not what I asked")}, nil, map[string]int{}},
		{"at the window end counts", []textRow{user(1, w, "That's not what I asked")}, nil, map[string]int{cortex.SignalUserCorrection: 1}},
		{"one failure recovered is normal work", nil, []string{"Bash:fail", "Bash:ok"}, map[string]int{}},
		{"one failure never recovered", nil, []string{"Bash:fail", "Edit:ok"}, map[string]int{cortex.SignalToolFailure: 1}},
		{"two failures", nil, []string{"Bash:fail", "Bash:ok", "Bash:fail", "Bash:ok"}, map[string]int{cortex.SignalToolFailure: 2}},
		{"one failure then a correction", []textRow{user(1, 5*time.Minute, "stop, you broke it")}, []string{"Bash:fail", "Bash:ok"},
			map[string]int{cortex.SignalToolFailure: 1, cortex.SignalUserCorrection: 1}},
		{"a correction before the failure does not make it a signal", []textRow{user(1, 30*time.Second, "no, that's not it")},
			[]string{"Bash:fail", "Bash:ok"}, map[string]int{cortex.SignalUserCorrection: 1}},
		{"many calls without frustration is work", nil, many, map[string]int{}},
		{"many calls and a correction is a loop", []textRow{user(1, 17*time.Minute, "we wasted an hour")}, many,
			map[string]int{cortex.SignalUserCorrection: 1, cortex.SignalOverlongLoop: 1}},
		{"many calls and an abuse term is a loop", []textRow{user(1, 17*time.Minute, "this is shit")}, many,
			map[string]int{cortex.SignalOverlongLoop: 1}},
		{"ignored instruction", []textRow{user(1, time.Minute, "You claimed success without verification")}, nil,
			map[string]int{cortex.SignalIgnoredPolicy: 1}},
		{"quoted code words are not signals", []textRow{user(1, time.Minute, `return errors.New("wrong input") and log "not found"`)}, nil, map[string]int{}},
		{"a quoted correction phrase is not the user's voice", []textRow{user(1, time.Minute, `make the error say "that's not what i asked" and add a test`)}, nil, map[string]int{}},
		{"code spans and fences are blanked", []textRow{user(1, time.Minute, "rename `wrong_repo` and\n```\nthis is wrong\n```\nthanks")}, nil, map[string]int{}},
		{"an unbalanced quote blanks nothing", []textRow{user(1, time.Minute, `he said "no, that's the wrong repo`)}, nil,
			map[string]int{cortex.SignalUserCorrection: 1, cortex.SignalScopeConfusion: 1}},
		{"text after a quotation still counts", []textRow{user(1, time.Minute, `you wrote "done". That's not what I asked`)}, nil,
			map[string]int{cortex.SignalUserCorrection: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := skillGroup()
			g.Last = t0.Add(7 * time.Minute) // window ends at t0+17m
			if c.name == "after the window does not count" || c.name == "at the window end counts" {
				g.Last = t0
			}
			in, n := input(g, w, c.users, c.calls...)
			markOverlong(g, n, detectSkill(g, in, w, abuse))
			got := map[string]int{}
			for k, v := range g.Signals {
				if v > 0 {
					got[k] = v
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("signals %v, want %v", got, c.want)
			}
			for _, a := range g.Anchors {
				if len(a.Signals) == 0 {
					t.Fatalf("anchor %d without signal", a.LogID)
				}
			}
		})
	}
}

func TestToolFailureAnchorsAreResultRows(t *testing.T) {
	g := skillGroup()
	in, _ := input(g, 10*time.Minute, nil, "Bash:fail", "Bash:fail")
	detectSkill(g, in, 10*time.Minute, nil)
	var ids []int64
	for _, a := range g.Anchors {
		ids = append(ids, a.LogID)
	}
	if fmt.Sprint(ids) != "[1000 1001]" {
		t.Fatalf("anchors %v", ids)
	}
}

func TestUnquoted(t *testing.T) {
	cases := []struct{ in, want string }{
		{`log "not found" here`, `log             here`},
		{"a `b` c", "a     c"},
		{"x ```\ny\n``` z", "x    \n \n    z"},
		{`unbalanced " quote`, `unbalanced " quote`},
		{"two\n\"lines\nquote\"", "two\n\"lines\nquote\""},
		{"curly “that's wrong” done", "curly " + strings.Repeat(" ", len("“that's wrong”")) + " done"},
		{"no quotes", "no quotes"},
		{"```never closed", "               "},
	}
	for _, c := range cases {
		if got := unquoted(c.in); got != c.want {
			t.Errorf("unquoted(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzUnquoted(f *testing.F) {
	for _, s := range []string{`a "b" c`, "```x```", "“q”", `"`, "`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := unquoted(s)
		if len(got) != len(s) {
			t.Fatalf("length changed: %q -> %q", s, got)
		}
		if strings.Count(got, "\n") != strings.Count(s, "\n") {
			t.Fatalf("lines changed: %q -> %q", s, got)
		}
	})
}

func TestActivations(t *testing.T) {
	cases := []struct {
		kinds []string
		want  int
	}{
		{[]string{cortex.SkillClaudeTool, cortex.SkillClaudeBody, cortex.SkillClaudeAttribution, cortex.SkillClaudeAttribution}, 1},
		{[]string{cortex.SkillClaudeTool, cortex.SkillClaudeTool}, 2},
		{[]string{cortex.SkillClaudeSlash, cortex.SkillClaudeBody}, 1},
		{[]string{cortex.SkillCodexBlock}, 1},
		{[]string{cortex.SkillClaudeBody, cortex.SkillClaudeBody}, 2},
		{slices.Repeat([]string{cortex.SkillClaudeAttribution}, 76), 1},
		{[]string{cortex.SkillClaudeInvoked}, 1},
	}
	for _, c := range cases {
		if got := activations(skillGroup(c.kinds...).Members); got != c.want {
			t.Errorf("activations(%v) = %d, want %d", c.kinds, got, c.want)
		}
	}
}

func TestSkillScoreAndLabels(t *testing.T) {
	cases := []struct {
		acts  int
		s     map[string]int
		score float64
		label string
	}{
		{1, nil, 2, "low"},
		{76, nil, 152, "critical"}, // why activations, not attributed lines, feed the score
		{1, map[string]int{cortex.SignalUserCorrection: 1}, 2 + 15 + 5, "medium"},
		{1, map[string]int{cortex.SignalUserCorrection: 1, cortex.SignalIgnoredPolicy: 1}, 2 + 15 + 12 + 10, "high"},
		{1, map[string]int{cortex.SignalToolFailure: 2, cortex.SignalUserCorrection: 1, cortex.SignalIgnoredPolicy: 1}, 2 + 16 + 15 + 12 + 15, "critical"},
		{1, map[string]int{cortex.SignalScopeConfusion: 1, cortex.SignalToolFailure: 2, cortex.SignalUserCorrection: 1}, 2 + 12 + 16 + 15 + 15, "critical"},
		{1, map[string]int{cortex.SignalOverlongLoop: 1, cortex.SignalUserCorrection: 0}, 2 + 10 + 5, "medium"},
	}
	for _, c := range cases {
		got := skillScore(c.acts, c.s)
		if got != c.score || skillLabel(got) != c.label {
			t.Errorf("score(%d, %v) = %v %s, want %v %s", c.acts, c.s, got, skillLabel(got), c.score, c.label)
		}
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

func TestAbuseScoreAndLabels(t *testing.T) {
	cases := []struct {
		count int
		dur   time.Duration
		terms int
		score float64
		label string
	}{
		{1, 0, 1, 10 + 2 + 1, "low"},
		{2, time.Second, 1, 20 + 4 + 1, "medium"}, // duration floored at a minute
		{2, 4 * time.Minute, 2, 20 + 1 + 2, "medium"},
		{3, 2 * time.Minute, 2, 30 + 3 + 2, "high"},
		{5, 10 * time.Minute, 3, 50 + 1 + 3, "critical"},
	}
	for _, c := range cases {
		got := abuseScore(c.count, c.dur, c.terms)
		if got != c.score || abuseLabel(got) != c.label {
			t.Errorf("abuseScore(%d, %v, %d) = %v %s, want %v %s", c.count, c.dur, c.terms, got, abuseLabel(got), c.score, c.label)
		}
	}
	for _, c := range []struct {
		score float64
		want  string
	}{{14.9, "low"}, {15, "medium"}, {29.9, "medium"}, {30, "high"}, {49.9, "high"}, {50, "critical"}} {
		if got := abuseLabel(c.score); got != c.want {
			t.Errorf("abuseLabel(%v) = %s, want %s", c.score, got, c.want)
		}
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
