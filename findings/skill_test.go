package findings

import (
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

func TestSkillCategoryOrder(t *testing.T) {
	want := []string{"skill_scope_mismatch", "missing_prerequisite_check", "wrong_source_of_truth",
		"overly_broad_research_loop", "tool_policy_mismatch", "missing_verification_step",
		"ambiguous_skill_trigger", "stale_or_conflicting_skill_instruction",
		"assistant_overexplained_simple_answer", "unknown"}
	if got := Skill().Categories(); !slices.Equal(got, want) {
		t.Fatalf("Skill().Categories() = %v, want %v", got, want)
	}
}

func TestSkillPositives(t *testing.T) {
	cases := []struct {
		cat  string
		row  cortex.EvidenceRow
		want string
	}{
		{catScope, row(1, cortex.RoleUser, "You stopped at the plan again."), "stopped at the plan"},
		{catScope, row(1, cortex.RoleUser, "I asked you to implement it."), "i asked you to implement"},
		{catScope, row(1, cortex.RoleUser, "That’s not what I asked."), "that's not what i asked"},
		{catScope, row(1, cortex.RoleUser, "You didn't need to touch the config."), "didn't need to touch"},
		{catPrerequisite, row(1, cortex.RoleToolResult, "sudo: a password is required"), "password is required"},
		{catPrerequisite, row(1, cortex.RoleToolResult, "fatal: not a git repository (or any of the parent directories): .git"), "not a git repository"},
		{catPrerequisite, logRow(1, "sshd: Permission denied for user deploy"), "permission denied"},
		{catPrerequisite, row(1, cortex.RoleUser, "You should have created an issue first."), "should have created an issue"},
		{catSource, row(1, cortex.RoleUser, "No, that's the wrong repo."), "wrong repo"},
		{catSource, row(1, cortex.RoleUser, "you're on the wrong branch"), "wrong branch"},
		{catSource, row(1, cortex.RoleUser, "That is stale data, check the live system."), "stale data"},
		{catSource, row(1, cortex.RoleUser, "You looked in the wrong directory."), "wrong directory"},
		{catLoop, row(1, cortex.RoleUser, "We wasted an hour on this."), "we wasted"},
		{catLoop, row(1, cortex.RoleUser, "You are going in circles."), "going in circles"},
		{catToolPolicy, row(1, cortex.RoleUser, "The skill says to use the deploy script."), "the skill says"},
		{catToolPolicy, row(1, cortex.RoleUser, "You used raw web instead of using axon."), "instead of using"},
		{catVerification, row(1, cortex.RoleUser, "You claimed success without running anything."), "claimed success without"},
		{catVerification, row(1, cortex.RoleUser, "You said you fixed it but it's still broken."), "still broken"},
		{catTrigger, row(1, cortex.RoleUser, "That's the wrong skill for this."), "wrong skill"},
		{catTrigger, row(1, cortex.RoleUser, "This shouldn't have triggered at all."), "shouldn't have triggered"},
		{catStale, row(1, cortex.RoleUser, "The skill doc is out of date."), "skill doc is out of date"},
		{catStale, row(1, cortex.RoleUser, "These are conflicting instructions."), "conflicting instructions"},
		{catOverexplain, row(1, cortex.RoleUser, "All you had to say was yes."), "all you had to say"},
		{catOverexplain, row(1, cortex.RoleUser, "Just answer the question."), "just answer the question"},
	}
	for _, c := range cases {
		b := skillBundle(c.row)
		checkPositive(t, Skill(), b, c.cat, c.want)
		m := mode(Skill().Derive(b), c.cat)
		if m == nil {
			continue
		}
		if !strings.Contains(m.Hint, `the "lavra:lavra-plan" skill`) {
			t.Errorf("%s: hint does not name the skill: %q", c.cat, m.Hint)
		}
	}
}

func TestSkillNegatives(t *testing.T) {
	cases := []struct {
		name string
		row  cortex.EvidenceRow
		not  string // "" = only unknown allowed
	}{
		{"user phrase only in tool output", row(1, cortex.RoleToolResult, "grep: wrong repo; we wasted; stopped at the plan"), ""},
		{"user phrase only in assistant text", row(1, cortex.RoleAssistant, "You said \"that's not what I asked\" and \"wrong repo\"."), ""},
		{"user phrase only in a skill body", row(1, cortex.RoleContext, "# lavra:lavra-plan\nIf the user says 'wrong repo' or 'you didn't need to', stop."), ""},
		{"technical phrase in a skill body", row(1, cortex.RoleContext, "If you see permission denied, ask for sudo."), ""},
		{"technical phrase in user text", row(1, cortex.RoleUser, "fix the permission denied error please"), catPrerequisite},
		{"unrelated wrong", row(1, cortex.RoleUser, "The total is wrong, and so is the wrongly named test."), ""},
		{"wrong repos is not wrong repo", row(1, cortex.RoleUser, "list the wrong repositories-like names: wrong repos"), ""},
		{"not foundation", row(1, cortex.RoleToolResult, "jq: command not foundation"), ""},
		{"plain usage", row(1, cortex.RoleUser, "Looks good, merge it."), ""},
	}
	for _, c := range cases {
		b := skillBundle(c.row)
		f := Skill().Derive(b)
		checkInvariants(t, Skill(), b, f)
		if c.not == "" {
			if got := cats(f); !slices.Equal(got, []string{CategoryUnknown}) {
				t.Errorf("%s: got %v, want only unknown", c.name, got)
			}
		} else if mode(f, c.not) != nil {
			t.Errorf("%s: unexpected %s", c.name, c.not)
		}
	}
}

// Every user-voiced phrase, placed in any row that is not user text, must
// not produce its category (unless a tool-voiced rule of the same
// category legitimately matches it); and every tool-voiced phrase placed
// in user, assistant or context text must not either.
func TestSpeakerAwarenessAllPhrases(t *testing.T) {
	for _, rs := range []*Rules{Abuse(), Skill()} {
		for _, ru := range rs.rules {
			if ru.phrases == nil {
				continue
			}
			var roles []cortex.Role
			switch ru.voices {
			case voiceUser:
				roles = []cortex.Role{cortex.RoleToolResult, cortex.RoleAssistant, cortex.RoleContext, cortex.RoleToolCall, cortex.RoleThinking, cortex.RoleHook, cortex.RoleSystem}
			case voiceTool:
				roles = []cortex.Role{cortex.RoleUser, cortex.RoleAssistant, cortex.RoleContext, cortex.RoleToolCall, cortex.RoleThinking}
			default:
				t.Fatalf("rule for %s reads voices %b", ru.category, ru.voices)
			}
			for _, p := range ru.phrases.Phrases() {
				if matchedByOtherVoice(rs, ru, p) {
					continue
				}
				var rows []cortex.EvidenceRow
				for i, role := range roles {
					rows = append(rows, row(int64(i+1), role, "note: "+p+" (quoted)"))
				}
				b := &cortex.Bundle{Incident: cortex.Incident{Lens: rs.Lens(), SkillName: "x"}, TranscriptAfter: rows}
				if ru.voices == voiceUser {
					// Also as a tool failure's error text.
					b.NearbyToolFailures = []cortex.ToolFailure{{EventID: 9, ErrorText: p}}
				}
				if m := mode(rs.Derive(b), ru.category); m != nil {
					t.Errorf("%s: phrase %q (voice %b) matched in the wrong speaker's text: %+v", rs.Lens(), p, ru.voices, m)
				}
			}
		}
	}
}

// matchedByOtherVoice reports whether another rule of the same category,
// reading another voice, also matches p.
func matchedByOtherVoice(rs *Rules, self rule, p string) bool {
	for _, o := range rs.rules {
		if o.category == self.category && o.voices != self.voices && len(o.find(p)) > 0 {
			return true
		}
	}
	return false
}

func TestSkillHintNamesTheSkill(t *testing.T) {
	cases := []struct {
		name, plugin, want string
	}{
		{"lavra:lavra-plan", "lavra", `Add a scope line to the "lavra:lavra-plan" skill: `},
		{"deploy-helper", "ops", `Add a scope line to the "ops:deploy-helper" skill: `},
		{"worktree", "", `Add a scope line to the "worktree" skill: `},
		{"", "", `Add a scope line to the skill: `},
		{"evil\x1b[31m\"; rm -rf /", "", `Add a scope line to the "evil[31m\"; rm -rf /" skill: `},
	}
	for _, c := range cases {
		b := skillBundle(row(1, cortex.RoleUser, "you stopped at the plan, secret-token-123"))
		b.Incident.SkillName, b.Incident.SkillPlugin = c.name, c.plugin
		f := Skill().Derive(b)
		m := mode(f, catScope)
		if m == nil || !strings.HasPrefix(m.Hint, c.want) {
			t.Errorf("skill %q/%q: hint %q, want prefix %q", c.name, c.plugin, m.Hint, c.want)
			continue
		}
		if strings.Contains(m.Hint, "secret-token") || strings.Contains(m.Why, "secret-token") {
			t.Errorf("transcript text leaked into hint or why: %+v", m)
		}
	}
	long := strings.Repeat("s", 500)
	b := skillBundle(row(1, cortex.RoleUser, "wrong repo"))
	b.Incident.SkillName = long
	if h := mode(Skill().Derive(b), catSource).Hint; len(h) > 600 {
		t.Errorf("long skill name not bounded: %d bytes", len(h))
	}
}

// The overlong-loop signal supports overly_broad_research_loop on its own,
// citing the incident's anchors present in the bundle, as one piece of
// evidence.
func TestSkillSignalSupport(t *testing.T) {
	b := skillBundle(row(9, cortex.RoleAssistant, "Searching again…"))
	b.Incident.SignalsPresent = []string{cortex.SignalOverlongLoop, cortex.SignalUserCorrection}
	b.Incident.AnchorLogIDs = []int64{7, 5, 99} // 99 is not in the bundle
	b.SignalAnchors = []cortex.EvidenceRow{row(5, cortex.RoleAssistant, "still looking"), row(7, cortex.RoleAssistant, "one more search")}
	f := Skill().Derive(b)
	checkInvariants(t, Skill(), b, f)
	m := mode(f, catLoop)
	if m == nil || !slices.Equal(m.EvidenceIDs, []int64{5, 7}) || m.Confidence != ConfidenceLow || m.Why != "signal overlong_loop_after_skill" {
		t.Fatalf("got %+v", f.FailureModes)
	}

	// With a phrase row too: two pieces of evidence.
	b.TranscriptAfter = append(b.TranscriptAfter, row(11, cortex.RoleUser, "we wasted a whole afternoon"))
	m = mode(Skill().Derive(b), catLoop)
	if m == nil || !slices.Equal(m.EvidenceIDs, []int64{5, 7, 11}) || m.Confidence != ConfidenceMedium ||
		m.Why != `matched "we wasted"; signal overlong_loop_after_skill` {
		t.Fatalf("got %+v", m)
	}

	// Signal counts work like SignalsPresent; anchors tagged with the
	// signal are preferred.
	b = skillBundle()
	b.Incident.SignalCounts = map[string]int{cortex.SignalOverlongLoop: 1}
	b.SignalAnchors = []cortex.EvidenceRow{row(5, cortex.RoleUser, "x"), row(6, cortex.RoleUser, "y")}
	b.SignalAnchors[1].Signals = []string{cortex.SignalOverlongLoop}
	if m := mode(Skill().Derive(b), catLoop); m == nil || !slices.Equal(m.EvidenceIDs, []int64{6}) {
		t.Fatalf("got %+v", m)
	}

	// No anchor in the bundle: nothing to cite, no finding.
	b = skillBundle()
	b.Incident.SignalsPresent = []string{cortex.SignalOverlongLoop}
	b.Incident.AnchorLogIDs = []int64{42}
	if got := cats(Skill().Derive(b)); !slices.Equal(got, []string{CategoryUnknown}) {
		t.Fatalf("got %v", got)
	}
}
