package findings

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
)

// Skill categories, in output order.
const (
	catScope        = "skill_scope_mismatch"
	catPrerequisite = "missing_prerequisite_check"
	catSource       = "wrong_source_of_truth"
	catLoop         = "overly_broad_research_loop"
	catToolPolicy   = "tool_policy_mismatch"
	catVerification = "missing_verification_step"
	catTrigger      = "ambiguous_skill_trigger"
	catStale        = "stale_or_conflicting_skill_instruction"
	catOverexplain  = "assistant_overexplained_simple_answer"
)

// Skill returns the rule set of the skill lens: user-voiced corrections
// mapped to skill-document failure modes, tool failures showing a missing
// prerequisite check, and the overlong-loop signal. Hints name the
// incident's skill and say what to change in the skill document.
func Skill() *Rules { return skillRules }

var skillRules = buildSkill()

func buildSkill() *Rules {
	cats := []category{
		{catScope, "Add a scope line to {subject}: say what it covers and what it must not do (for example: `plans only; when the user asks to implement, implement` or `changes only the files the procedure names`), and tell the agent to do only what the user asked."},
		{catPrerequisite, "Add a prerequisites step to {subject}: before acting, check permissions and credentials (sudo, tokens), required tools and that the working directory is the right git repository; stop and report a missing one instead of retrying or working around it."},
		{catSource, "Name the canonical source of truth in {subject} (repository, branch, directory, live system versus cache) and require the agent to confirm it (for example with pwd and git remote -v) before changing anything."},
		{catLoop, "Add an anti-loop rule to {subject}: after two failed searches or attempts, summarize the current evidence and switch strategy or ask the user."},
		{catToolPolicy, "Add an explicit tool-policy line near the top of {subject}: name the required tool, script or transport and forbid substitutes (for example: deploy only with the deploy script, never edit config by hand)."},
		{catVerification, "Add a verification checklist item to {subject}: run the tests or check the live repo/runtime state and quote that evidence before claiming success."},
		{catTrigger, "Narrow the trigger description of {subject}: list the requests it is for and add a trigger-boundary note naming requests it must not handle."},
		{catStale, "Review {subject} for stale or conflicting instructions: update or remove the outdated step and say which source wins when instructions conflict."},
		{catOverexplain, "Add a conciseness note to {subject}: answer direct or yes/no questions first in one or two sentences and expand only when asked."},
		{CategoryUnknown, "No deterministic signature matched; review the transcript manually before changing {subject}."},
	}
	user := func(cat string, phrases ...string) rule {
		return rule{category: cat, voices: voiceUser, phrases: phrase.NewSet(phrases...)}
	}
	rules := []rule{
		// Unrequested work ("you didn't need to touch the config") is a
		// scope problem, not over-explaining.
		user(catScope, "out of scope", "not what this skill is for", "that's not what i asked",
			"that is not what i asked", "not what i asked for", "stopped at the plan", "stopped at plan",
			"i asked you to implement", "not to write a plan", "i didn't ask for a plan",
			"i did not ask for a plan", "i didn't ask you to", "i did not ask you to",
			"you didn't need to", "you did not need to", "didn't need to touch", "did not need to touch"),
		user(catPrerequisite, "should have created a bead", "should have created an issue",
			"should have checked first", "without checking first", "you didn't check whether",
			"you did not check whether"),
		// A tool failing for a missing permission, credential, tool or
		// repository is a prerequisite the skill should have checked.
		{category: catPrerequisite, voices: voiceTool, phrases: phrase.NewSet(
			"permission denied", "access denied", "operation not permitted", "password is required",
			"authentication required", "authentication failed", "not logged in", "unauthorized",
			"must be run as root", "not a git repository", "command not found",
			"executable file not found", "is not installed",
		)},
		user(catSource, "wrong source of truth", "wrong source", "stale data", "memory-vs-live",
			"memory vs live", "not the live", "outdated data", "cached data"),
		user(catSource, "wrong repo", "wrong repository", "wrong branch", "wrong directory",
			"wrong folder", "wrong checkout", "wrong worktree", "wrong file", "wrong environment",
			"wrong database", "wrong place"),
		user(catLoop, "going in circles", "going round in circles", "going around in circles",
			"we wasted", "you wasted", "wasting time", "stop searching", "stop researching",
			"enough research", "rabbit hole"),
		{category: catLoop, signals: []string{cortex.SignalOverlongLoop}},
		// "The skill says …" means the agent did not follow the skill's
		// stated procedure or tool: a tool-policy problem.
		user(catToolPolicy, "wrong transport", "wrong source for this call", "instead of using",
			"the skill says", "the skill said", "the skill tells you", "the skill told you",
			"you were supposed to use", "you should have used", "wrong tool"),
		user(catVerification, "without any verification", "without verification", "claimed success without",
			"you didn't verify", "you did not verify", "you didn't test", "you did not test",
			"didn't run the tests", "did not run the tests", "you said you fixed", "you said it was fixed",
			"still broken", "test still fails", "tests still fail"),
		user(catTrigger, "wrong skill", "not the right skill", "shouldn't have triggered",
			"should not have triggered", "shouldn't have used the skill", "should not have used the skill",
			"didn't ask for the skill", "did not ask for the skill", "don't use that skill", "do not use that skill"),
		user(catStale, "stale instruction", "stale instructions", "conflicting instruction",
			"conflicting instructions", "outdated skill", "skill doc is wrong", "skill doc is out of date",
			"skill is out of date", "skill is outdated", "the skill is wrong", "instructions are outdated",
			"instructions contradict"),
		user(catOverexplain, "all you had to say", "all i wanted was", "just answer the question",
			"a simple yes or no", "a yes or no question", "too verbose", "way too long", "tl;dr",
			"you didn't need to explain", "no need to explain"),
	}
	r := newRules("skill", cats, rules)
	r.subject = skillSubject
	r.lensFactor = skillFactor
	r.noAnchors = "no negative signal anchors captured"
	return r
}

// maxSubjectRunes bounds the skill name quoted in hints.
const maxSubjectRunes = 120

// skillSubject renders `the "plugin:name" skill` for hints: the plugin is
// prefixed unless the name already carries it; non-printable characters
// are dropped, the name is bounded and quoted. Without a name: "the
// skill".
func skillSubject(inc *cortex.Incident) string {
	name := clean(inc.SkillName)
	if name == "" {
		return "the skill"
	}
	if p := clean(inc.SkillPlugin); p != "" && !strings.HasPrefix(name, p+":") {
		name = p + ":" + name
	}
	if r := []rune(name); len(r) > maxSubjectRunes {
		name = string(r[:maxSubjectRunes]) + "…"
	}
	return "the " + strconv.Quote(name) + " skill"
}

// clean drops non-printable characters and trims space.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}
