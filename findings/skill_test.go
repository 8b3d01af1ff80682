package findings

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

func TestSkillCategoryOrder(t *testing.T) {
	want := []string{"skill_did_more_than_asked", "wrong_skill_triggered", "conflicts_with_user_instruction",
		"missing_authentication", "missing_repository_setup", "command_not_found", "shell_portability",
		"missing_dependency", "tool_rejects_documented_value", "timeout_or_rate_limit", "permission_denied",
		"http_error_from_script", "stale_file_state", "skill_scope_mismatch", "missing_prerequisite_check",
		"wrong_source_of_truth", "retry_loop", "overly_broad_research_loop", "tool_policy_mismatch", "missing_verification_step",
		"ambiguous_skill_trigger", "stale_or_conflicting_skill_instruction", "assistant_overexplained_simple_answer",
		"unknown"}
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
		{catScope, row(1, cortex.RoleUser, "You only planned it again."), "you only planned"},
		{catScope, row(1, cortex.RoleUser, "I asked you to implement it."), "i asked you to implement"},
		{catScope, row(1, cortex.RoleUser, "That’s not what I asked."), "that's not what i asked"},
		{catOverreach, row(1, cortex.RoleUser, "You didn't need to touch the config."), "didn't need to touch"},
		{catOverreach, row(1, cortex.RoleUser, "are you trying to test it visually in chrome? you can stop. unnecessary"), "you can stop"},
		{catOverreach, row(1, cortex.RoleUser, "no need to run tests browser test. I'll run them."), "no need to"},
		{catOverreach, row(1, cortex.RoleUser, "i didnt ask you to rewrite it"), "i didn't ask you to"},
		{catPolicy, row(1, cortex.RoleUser, "do not commit anything"), "do not commit"},
		{catSkillAuth, row(1, cortex.RoleToolResult, "dispatch requires login — run `entire login`"), "requires login"},
		{catRepoSetup, row(1, cortex.RoleToolResult, "could not find 'origin' remote: remote not found"), "could not find 'origin' remote"},
		{catNotFound, row(1, cortex.RoleToolResult, "/bin/bash: line 1: pytest: command not found"), "command not found"},
		{catShell, row(1, cortex.RoleToolResult, "(eval):2: no matches found: /repo/.claude/skills/*/SKILL.md"), "no matches found"},
		{catDependency, row(1, cortex.RoleToolResult, "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'playwright'"), "err_module_not_found"},
		{catSkillSchema, row(1, cortex.RoleToolResult, "playwright_wait_for_load_state does not support networkidle"), "does not support"},
		{catSkillTimeout, row(1, cortex.RoleToolResult, "page.goto: Timeout 30000ms exceeded."), "timeout"},
		{catSkillPermission, row(1, cortex.RoleToolResult, "sudo: a password is required"), "password is required"},
		{catSkillPermission, logRow(1, "sshd: Permission denied for user deploy"), "permission denied"},
		{catHTTP, row(1, cortex.RoleToolResult, "gh: Parent comment not found (HTTP 404)"), "http 404"},
		{catStaleFile, row(1, cortex.RoleToolResult, "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"), "file has not been read yet"},
		{catRepoSetup, row(1, cortex.RoleToolResult, "fatal: not a git repository (or any of the parent directories): .git"), "not a git repository"},
		{catPrerequisite, row(1, cortex.RoleUser, "You should have checked first."), "should have checked first"},
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
		{"technical phrase in user text", row(1, cortex.RoleUser, "fix the permission denied error please"), catSkillPermission},
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
		b := skillBundle(row(1, cortex.RoleUser, "i asked you to implement it, secret-token-123"))
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

// The overlong-loop signal alone is not a cause: a long run is not a
// failure. The same failing operation tried three times is a loop, citing
// each failure, naming the operation in the hint.
func TestSkillRetryLoop(t *testing.T) {
	b := skillBundle(row(9, cortex.RoleAssistant, "Searching again…"))
	b.Incident.SignalsPresent = []string{cortex.SignalOverlongLoop}
	b.Incident.AnchorLogIDs = []int64{5, 7}
	b.SignalAnchors = []cortex.EvidenceRow{row(5, cortex.RoleAssistant, "still looking"), row(7, cortex.RoleAssistant, "one more search")}
	b.Failures = []cortex.ToolFailure{}
	if got := cats(Skill().Derive(b)); !slices.Equal(got, []string{CategoryUnknown}) {
		t.Fatalf("overlong signal alone: got %v", got)
	}

	fail := func(ev, call, res int64, class, op, text string) cortex.ToolFailure {
		return cortex.ToolFailure{EventID: ev, CallLogID: ptr(call), ResultLogID: ptr(res), Class: class,
			Operation: op, Command: op + " --all", ErrorText: text, Line: text}
	}
	b.Failures = []cortex.ToolFailure{
		fail(1, 10, 11, "failed", "npx playwright", "browserType.launch: Executable doesn't exist"),
		fail(2, 12, 13, "failed", "npx playwright", "browserType.launch: Executable doesn't exist"),
		fail(3, 14, 15, "expected_probe", "npx playwright", "no such file"), // not the agent's failure
		fail(4, 16, 17, "failed", "npx playwright", "browserType.launch: Executable doesn't exist at /x"),
		fail(5, 18, 19, "failed", "ls", "ls: x: No such file or directory"),
	}
	f := Skill().Derive(b)
	checkInvariants(t, Skill(), b, f)
	m := mode(f, catRetry)
	if m == nil || !slices.Equal(m.MCPEventIDs, []int64{1, 2, 4}) || !slices.Equal(m.EvidenceIDs, []int64{11, 13, 17}) {
		t.Fatalf("got %+v", f.FailureModes)
	}
	if !strings.Contains(m.Why, "3 failed attempts at npx playwright") || !strings.Contains(m.Hint, "`npx playwright`") {
		t.Errorf("why %q hint %q", m.Why, m.Hint)
	}
	if m.Cause != "browserType.launch: Executable doesn't exist at /x" {
		t.Errorf("cause %q", m.Cause)
	}

	// Two attempts are not a loop.
	b.Failures = b.Failures[:2]
	if mode(Skill().Derive(b), catLoop) != nil {
		t.Fatal("two failures made a loop")
	}
}

// A reaction that redirects the agent right after a run that barely ran
// means the skill should not have triggered; after a long run it does not.
func TestSkillWrongTrigger(t *testing.T) {
	react := row(20, cortex.RoleUser, "No — I meant the staging config, not the prod one.")
	react.Reaction = true
	b := skillBundle()
	b.UserVoice = []cortex.EvidenceRow{react}
	b.RunCalls = 1
	b.Skill = &cortex.SkillDoc{Name: "deploy", Text: "---\nname: deploy\ndescription: Use when the user mentions config\n---\nRun deploy.sh"}
	f := Skill().Derive(b)
	checkInvariants(t, Skill(), b, f)
	m := mode(f, catWrongTrigger)
	if m == nil || !slices.Equal(m.EvidenceIDs, []int64{20}) || !containsQuoted(m.Why, "i meant") {
		t.Fatalf("got %+v", f.FailureModes)
	}
	if m.Cause != react.Message {
		t.Errorf("cause %q", m.Cause)
	}
	if len(m.SkillQuotes) != 1 || m.SkillQuotes[0].Line != 3 || m.SkillQuotes[0].Source != "skill_doc" {
		t.Errorf("quotes %+v", m.SkillQuotes)
	}

	// The same words after a run of many calls: not a trigger problem.
	b.RunCalls = 12
	if mode(Skill().Derive(b), catWrongTrigger) != nil {
		t.Fatal("long run read as a wrong trigger")
	}
	// Not a reaction (a message inside the run): not a verdict on the trigger.
	b.RunCalls = 1
	b.UserVoice[0].Reaction = false
	if mode(Skill().Derive(b), catWrongTrigger) != nil {
		t.Fatal("in-run message read as a wrong trigger")
	}
}

// A user's stop with a standing rule names the verb in the hint and quotes
// the skill lines and the skill's command output that tell the agent to do
// it.
func TestSkillPolicyQuotes(t *testing.T) {
	stop := row(30, cortex.RoleUser, "[Request interrupted by user]\nDon't commit, I review everything first.")
	b := skillBundle(stop)
	b.UserVoice = []cortex.EvidenceRow{stop}
	b.Skill = &cortex.SkillDoc{Name: "ship", Text: "# Ship\n\n1. Run the tests.\n2. Commit with a conventional message.\n3. Push."}
	b.SkillOutputs = []cortex.EvidenceRow{row(25, cortex.RoleToolResult, "Next: commit the plan file and push it")}
	f := Skill().Derive(b)
	checkInvariants(t, Skill(), b, f)
	m := mode(f, catPolicy)
	if m == nil || !slices.Equal(m.EvidenceIDs, []int64{30}) {
		t.Fatalf("got %+v", f.FailureModes)
	}
	if !strings.Contains(m.Hint, "not to `commit`") {
		t.Errorf("hint %q", m.Hint)
	}
	want := []cortex.SkillQuote{
		{Line: 4, Text: "2. Commit with a conventional message.", Source: "skill_doc"},
		{Line: 1, Text: "Next: commit the plan file and push it", Source: "command_output", LogID: 25},
	}
	if !reflect.DeepEqual(m.SkillQuotes, want) {
		t.Errorf("quotes %+v", m.SkillQuotes)
	}
	if m.Cause != "Don't commit, I review everything first." {
		t.Errorf("cause %q", m.Cause)
	}
}

// Failure causes read from the run's classified failures fill the hint
// with the failing command and program; a value that is not a plain word
// never reaches the hint. Error lines from ../shared/corpus/real: codex
// 019ea8fa… (entire dispatch, playwright, networkidle), claude 0953ba2a…
// (origin remote, repo:* glob), codex 019ed99c… (gh JSON field), claude
// 4e46a154… (gh api 404), claude d43002f0… (ERR_MODULE_NOT_FOUND); the
// bash/dash/zsh "not found" forms are the shells' own.
func TestSkillFailureCauses(t *testing.T) {
	for _, tc := range []struct {
		name, text, op, cat, hintHas string
	}{
		{"not logged in", "dispatch requires login — run `entire login`", "entire dispatch", catSkillAuth, "before `entire dispatch`"},
		{"no origin", "could not find 'origin' remote: remote not found", "entire search", catRepoSetup, "before `entire search`"},
		{"command not found", "zsh:1: command not found: marvin\nmarvin: command not found", "marvin check", catNotFound, "verify `marvin` is installed"},
		{"bash not found", "bash: line 1: rg: command not found", "rg -n x", catNotFound, "verify `rg` is installed"},
		{"dash not found", "sh: 1: jq: not found", "jq .", catNotFound, "verify `jq` is installed"},
		{"zsh glob", "(eval):1: no matches found: repo:*", "entire search", catShell, "zsh"},
		{"module", "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'playwright' imported from /private/tmp/l2-verify.mjs", "node l2-verify.mjs", catDependency, "Declare `playwright`"},
		{"rejected value", `Unknown JSON field: "closedByPullRequestsReferences"`, "gh issue", catSkillSchema, "rejected `closedByPullRequestsReferences`"},
		{"rejected option", "playwright_wait_for_load_state does not support networkidle", "mcp__node_repl__js", catSkillSchema, "rejected `networkidle`"},
		{"http", "gh: Parent comment not found (HTTP 404)", "gh api", catHTTP, "failed with `HTTP 404`"},
		{"injection", "error: unknown flag: $(curl evil)", "gh", catSkillSchema, "rejected a value or argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := skillBundle()
			b.Failures = []cortex.ToolFailure{{EventID: 7, CallLogID: ptr(70), ResultLogID: ptr(71), Class: "failed",
				Operation: tc.op, Command: tc.op, ErrorText: tc.text, Line: tc.text}}
			f := Skill().Derive(b)
			checkInvariants(t, Skill(), b, f)
			m := mode(f, tc.cat)
			if m == nil {
				t.Fatalf("want %s, got %v", tc.cat, cats(f))
			}
			if !strings.Contains(m.Hint, tc.hintHas) {
				t.Errorf("hint %q lacks %q", m.Hint, tc.hintHas)
			}
			if strings.Contains(m.Hint, "curl") {
				t.Errorf("unsafe value in hint %q", m.Hint)
			}
			if !slices.Equal(m.EvidenceIDs, []int64{70, 71}) || !slices.Equal(m.MCPEventIDs, []int64{7}) {
				t.Errorf("evidence %v events %v", m.EvidenceIDs, m.MCPEventIDs)
			}
		})
	}
	// A failure before the run or in other work nearby is not the run's:
	// with the run's own scope known (Failures non-nil), nearby failures
	// are not read.
	b := skillBundle()
	b.Failures = []cortex.ToolFailure{}
	b.NearbyToolFailures = []cortex.ToolFailure{{EventID: 7, ResultLogID: ptr(71), Class: "failed", Operation: "Edit",
		ErrorText: "<tool_use_error>File has been modified since read, either by the user or by a linter.</tool_use_error>"}}
	if got := cats(Skill().Derive(b)); !slices.Equal(got, []string{CategoryUnknown}) {
		t.Errorf("nearby failure outside the run: got %v", got)
	}
	b.Failures = nil // a bundle without a run scope reads them
	if got := cats(Skill().Derive(b)); !slices.Equal(got, []string{catStaleFile}) {
		t.Errorf("bundle without a run scope: got %v", got)
	}

	// A failure the agent did not cause (a sibling cancelled, a probe, a
	// rejection) is not the skill's.
	for _, class := range []string{"sibling_cancelled", "expected_probe", "user_rejected"} {
		b := skillBundle()
		b.Failures = []cortex.ToolFailure{{EventID: 7, ResultLogID: ptr(71), Class: class, Operation: "git push",
			ErrorText: "fatal: could not find 'origin' remote"}}
		if got := cats(Skill().Derive(b)); !slices.Equal(got, []string{CategoryUnknown}) {
			t.Errorf("%s: got %v", class, got)
		}
	}
}
