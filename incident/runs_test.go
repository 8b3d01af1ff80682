package incident

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/voice"
)

func sec(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func skillEv(id int64, s int, name, kind string) sqlite.SessionSkill {
	plugin, _, _ := strings.Cut(name, ":")
	if !strings.Contains(name, ":") {
		plugin = ""
	}
	return sqlite.SessionSkill{ID: id, LogID: id, Timestamp: sec(s), Skill: name, Plugin: plugin, Kind: kind}
}

func userAct(id int64, s int, kind, text string) act {
	a := act{ID: id, LogID: 100 + id, At: sec(s), Kind: kind, Text: text}
	if text != "" {
		a.Norm = voice.Normalize(text)
		a.Reading = voice.ReadNormalized(a.Norm, nil)
	}
	return a
}

// The shape of claude a88641f6 (entireio-skills 7c/daf836fa0f): the user
// types "marvin work", marvin loads skill-creator inside its run, Claude
// tags lines for both for six minutes across turns, the user interrupts
// and types "do not commit anything". Then /entire:commit-push-pr with a
// body that only shows its folder.
func TestBuildRunsScopes(t *testing.T) {
	evs := []sqlite.SessionSkill{
		skillEv(1, 10, "marvin:marvin", cortex.SkillClaudeTool),
		skillEv(2, 13, "marvin:marvin", cortex.SkillClaudeBody),
		skillEv(3, 15, "marvin:marvin", cortex.SkillClaudeAttribution),
		skillEv(4, 28, "skill-creator:skill-creator", cortex.SkillClaudeTool),
		skillEv(5, 30, "skill-creator:skill-creator", cortex.SkillClaudeAttribution),
		skillEv(6, 200, "marvin:marvin", cortex.SkillClaudeAttribution), // after the user's second prompt
		skillEv(7, 400, "skill-creator:skill-creator", cortex.SkillClaudeAttribution),
		skillEv(8, 900, "entire:commit-push-pr", cortex.SkillClaudeCommand),
		skillEv(9, 901, "commit-push-pr", cortex.SkillClaudeSlash),
		skillEv(10, 925, "entire:commit-push-pr", cortex.SkillClaudeAttribution),
		skillEv(11, 1200, "marvin:marvin", cortex.SkillClaudeInvoked), // re-injection after compaction
	}
	acts := []act{
		userAct(1, 0, cortex.UserPrompt, "marvin work"),
		userAct(2, 100, cortex.UserPrompt, "keep going"),
		userAct(3, 409, cortex.UserInterrupt, ""),
		userAct(4, 414, cortex.UserPrompt, "do not commit anything"),
		userAct(5, 900, cortex.UserCommand, "/entire:commit-push-pr"),
		userAct(6, 1000, cortex.UserPrompt, "thanks"),
	}
	runs := buildRuns(evs, acts, nil)
	got := map[string]*skillRun{}
	var names []string
	for _, r := range runs {
		got[r.Name] = r
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"marvin:marvin", "skill-creator:skill-creator", "entire:commit-push-pr"}) {
		t.Fatalf("runs %v", names)
	}
	m := got["marvin:marvin"]
	// Tagged across the second prompt, the run ends at the prompt after its
	// last tagged line; the re-injection after compaction is not a sign of
	// life.
	if !m.Start.Equal(sec(10)) || !m.LastLive.Equal(sec(200)) || !m.End.Equal(sec(414)) || acts[m.Reaction].ID != 4 || len(m.Events) != 4 {
		t.Errorf("marvin: start %v last %v end %v reaction %d events %d", m.Start, m.LastLive, m.End, m.Reaction, len(m.Events))
	}
	if !m.covers(sec(409)) || m.covers(sec(414)) {
		t.Error("the interrupt is in scope, the reaction after it")
	}
	// The body that showed only its folder is the typed command's skill.
	c := got["entire:commit-push-pr"]
	if len(c.Events) != 3 || c.Kind != SubjectSkill || acts[c.Reaction].ID != 6 {
		t.Errorf("commit-push-pr: %+v", c)
	}
	// The innermost run takes the blame for what fails inside it.
	sc := got["skill-creator:skill-creator"]
	if innermost(m, runs, sec(300)) || !innermost(sc, runs, sec(300)) || !innermost(m, runs, sec(20)) {
		t.Error("innermost")
	}
}

func TestBuildRunsNewRunAfterTheUserMovesOn(t *testing.T) {
	evs := []sqlite.SessionSkill{
		skillEv(1, 10, "verify", cortex.SkillClaudeTool),
		skillEv(2, 60, "verify", cortex.SkillClaudeTool),  // same turn: same run
		skillEv(3, 500, "verify", cortex.SkillClaudeTool), // after a new prompt: a new run
		skillEv(4, 520, "orchestrator", cortex.SkillClaudeCommand),
	}
	acts := []act{userAct(1, 0, cortex.UserPrompt, "check it"), userAct(2, 300, cortex.UserPrompt, "now the other page"),
		userAct(3, 520, cortex.UserCommand, "/orchestrator update CLAUDE.md")}
	runs := buildRuns(evs, acts, nil)
	if len(runs) != 3 || len(runs[0].Events) != 2 || !runs[0].End.Equal(sec(300)) || runs[1].Name != "verify" ||
		!runs[1].Start.Equal(sec(500)) || runs[2].Kind != SubjectCommand {
		t.Fatalf("runs: %+v", runs)
	}
}

func TestCanonicalNames(t *testing.T) {
	evs := []sqlite.SessionSkill{
		skillEv(1, 0, "ce-work", cortex.SkillCodexAnnounced),
		skillEv(2, 1, "compound-engineering:ce-work", cortex.SkillCodexRead),
		skillEv(3, 2, "getByRole", cortex.SkillCodexAnnounced),
		skillEv(4, 3, "worktree", cortex.SkillCodexAnnounced),
	}
	got := canonicalNames(evs, map[string]bool{"worktree": true})
	if got["ce-work"][0] != "compound-engineering:ce-work" || got["getByRole"][0] != "" || got["worktree"][0] != "worktree" {
		t.Errorf("canonical names %v", got)
	}
	// Two plugins share a skill name: the unqualified one stays itself.
	evs = append(evs, skillEv(5, 4, "other:ce-work", cortex.SkillCodexRead))
	if got := canonicalNames(evs, map[string]bool{"ce-work": true}); got["ce-work"][0] != "ce-work" {
		t.Errorf("ambiguous: %v", got)
	}
}

func TestFrictionSignalsInContext(t *testing.T) {
	acts := []act{
		userAct(1, 0, cortex.UserPrompt, "that's not what i asked last time, redo the docs"), // first prompt: answers nothing
		userAct(2, 5, cortex.UserInterrupt, ""),                                              // 5 s after it, nothing done: a change of mind
		userAct(3, 10, cortex.UserPrompt, "redo the docs for the cli"),
		userAct(4, 200, cortex.UserInterrupt, ""),
		userAct(5, 205, cortex.UserPrompt, "do not commit anything"), // the interrupt's reason
		userAct(6, 300, cortex.UserRejection, "I'll run the tests myself"),
		userAct(7, 400, cortex.UserPrompt, "uh its a little too complicated"),
		userAct(8, 450, cortex.UserPrompt, "run an agent that creates a color file inside docs"),
		userAct(9, 460, cortex.UserPrompt, "run an agent that creates a color file inside docs"),
		userAct(10, 500, cortex.UserPrompt, "no, then it's good"),
	}
	calls := []tcall{{SessionCall: sqlite.SessionCall{ToolCall: sqlite.ToolCall{Timestamp: sec(100), ToolName: "Bash"}}}}
	got := map[int64][]string{}
	for _, h := range frictionSignals(acts, calls) {
		got[acts[h.index].ID] = h.signals
	}
	want := map[int64][]string{
		4: {cortex.SignalInterrupt},
		5: {cortex.SignalCorrection},
		6: {cortex.SignalRejection, cortex.SignalStop},
		7: {cortex.SignalDissatisfied},
		9: {cortex.SignalRepeatedRequest},
	}
	if len(got) != len(want) {
		t.Errorf("friction acts %v, want %v", got, want)
	}
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			t.Errorf("act %d: %v, want %v", id, got[id], w)
		}
	}
}

func TestReask(t *testing.T) {
	a := func(text string) act { return userAct(1, 0, cortex.UserPrompt, text) }
	cases := []struct {
		x, y string
		want bool
	}{
		{"run an agent that creates a color file inside docs, choose your color", "run an agent that creates a color file inside docs, choose your color", true},
		{"lets pick back up and start thinking about level 2", "lets pick back up and start thinking about level 2.", true},
		{"commit", "commit", false}, // too short to be a re-ask
		{"fix the login page header spacing please now", "fix the login page footer spacing please now", true},
		{"fix the login page", "add a test for the signup form", false},
	}
	for _, c := range cases {
		if got := reask(a(c.y), a(c.x)); got != c.want {
			t.Errorf("reask(%q, %q) = %v, want %v", c.y, c.x, got, c.want)
		}
	}
}
