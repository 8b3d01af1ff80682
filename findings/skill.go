package findings

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
	uservoice "github.com/cortexhq/cortex/voice"
)

// Skill categories, in output order: what the user's verdict says the
// skill did wrong, then the causes its failed tool calls show, then the
// older user-voiced modes.
const (
	catOverreach       = "skill_did_more_than_asked"
	catWrongTrigger    = "wrong_skill_triggered"
	catPolicy          = "conflicts_with_user_instruction"
	catSkillAuth       = "missing_authentication"
	catRepoSetup       = "missing_repository_setup"
	catNotFound        = "command_not_found"
	catShell           = "shell_portability"
	catDependency      = "missing_dependency"
	catSkillSchema     = "tool_rejects_documented_value"
	catSkillTimeout    = "timeout_or_rate_limit"
	catSkillPermission = "permission_denied"
	catHTTP            = "http_error_from_script"
	catStaleFile       = "stale_file_state"
	catScope           = "skill_scope_mismatch"
	catPrerequisite    = "missing_prerequisite_check"
	catSource          = "wrong_source_of_truth"
	catLoop            = "overly_broad_research_loop"
	catRetry           = "retry_loop"
	catToolPolicy      = "tool_policy_mismatch"
	catVerification    = "missing_verification_step"
	catTrigger         = "ambiguous_skill_trigger"
	catStale           = "stale_or_conflicting_skill_instruction"
	catOverexplain     = "assistant_overexplained_simple_answer"
)

// Skill returns the rule set of the skill lens: the user's verdicts on a
// run mapped to what the skill document should change, and the causes its
// failed tool calls show — each with a hint for that cause, naming the
// failing command where the evidence names one, and quoting the lines of
// the skill document it is about when the document is stored.
func Skill() *Rules { return skillRules }

var skillRules = buildSkill()

// Extractors of hint values from error text.
var (
	reModule = regexp.MustCompile(`(?:Cannot find (?:module|package) ['"]([^'"\s]+)['"]|No module named ['"]?([A-Za-z0-9_.-]+)|Module not found:? ['"]?([A-Za-z0-9@/_.-]+)|Cannot find module ['"]?([A-Za-z0-9@/_.-]+))`)
	reHTTP   = regexp.MustCompile(`(?i)(?:HTTP[ /]?(?:1\.[01] )?|status(?: code)?:? ?"?)([45]\d\d)\b`)
	reValue  = regexp.MustCompile(`(?i)(?:does not support|unsupported|invalid value|unknown (?:json )?field|unrecognized (?:flag|option|argument)|unknown (?:flag|option))[: ]+['"]?([A-Za-z0-9_.:-]+)`)
	reValue2 = regexp.MustCompile(`(?i)([A-Za-z0-9_.:-]+)['"]? is not (?:supported|allowed|a valid)`)
	reValue3 = regexp.MustCompile("(?i)(?:required )?(?:parameter|argument|field|option) [`'\"]?([A-Za-z0-9_.:-]+)[`'\"]? is (?:missing|required)")
	reVerb   = regexp.MustCompile(`(?i)\b(?:do not|don't|dont|never)\s+([a-z]+)`)
	// reCmdNF finds the missing program of a "command not found" error:
	// zsh's "command not found: X", then bash's "X: command not found"
	// and dash's "X: not found" (after a "sh: 1:" prefix).
	reDashNF = regexp.MustCompile(`\bsh: \d+: [A-Za-z0-9_.+-]+: not found`)
	reCmdNF  = regexp.MustCompile(`command not found: ([A-Za-z0-9_.+-]+)|(?:^|[\s:])([A-Za-z_.+-][A-Za-z0-9_.+-]*): (?:command )?not found`)
)

// shells are the names that prefix a shell's own error messages.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "fish": true, "env": true}

func firstGroup(m []string) string {
	for _, g := range m[1:] {
		if g != "" {
			return g
		}
	}
	return ""
}

func buildSkill() *Rules {
	cats, rules := skillTable()
	r := newRules("skill", cats, rules)
	r.subject = skillSubject
	r.lensFactor = skillFactor
	r.noAnchors = "no negative signal anchors captured"
	r.rows = skillRows
	r.failures = skillFailures
	r.quotes = skillQuotes
	r.evidence = skillEvidence
	return r
}

// skillTable is the skill lens's category table and rules (the friction
// lens reads the same verdicts and causes).
func skillTable() ([]category, []rule) {
	cats := []category{
		{catOverreach, "Make the optional steps of {subject} opt-in: the user stopped it as unneeded. Run only the step the user asked for; ask before extra verification (browser or full test runs), commits, pushes or follow-up work, and say how to skip them."},
		{catWrongTrigger, "Narrow when {subject} triggers: the user redirected the agent right after it loaded. Make its description name the requests it is for, add the requests it is not for, and have it confirm the target before acting when the request is ambiguous."},
		{catPolicy, "Make {subject} follow the user's standing instructions: the user stopped it and said not to {verb}. Find the step that tells the agent to {verb} (in the skill or in what its command prints; quoted below when the transcript shows it) and make it conditional — check the user's instructions or ask first."},
		{catSkillAuth, "Add a preflight to {subject}: before {command}, check that {program} is logged in (its auth status or login check) and, when it is not, tell the user to log in instead of running the command and retrying."},
		{catRepoSetup, "Add a preflight to {subject}: before {command}, check the repository setup it needs (a git repository, the `origin` remote, an upstream branch, the tool's config) and say how to set it up when it is missing, instead of failing on it."},
		{catNotFound, "Add a prerequisites check to {subject}: verify {program} is installed (`command -v`) before using it, and give the install command or an absolute path; do not assume it is on the agent's PATH."},
		{catShell, "Make the shell snippets of {subject} portable: zsh (the macOS default) stops on a glob that matches nothing (`no matches found`) — guard globs (a `find` call, `2>/dev/null` inside `sh -c`, or `setopt nullglob`), quote patterns, and avoid GNU-only flags that BSD tools reject."},
		{catDependency, "Declare {dep} as a prerequisite of {subject}: check it is installed (for example `npm ls`, `pip show` or an import check) before the step that needs it, and say how to install it instead of failing on it."},
		{catSkillSchema, "Align {subject} with what the tool accepts: the tool rejected {value}, which the skill's instructions lead the agent to use. Document the values the tool really accepts (quoted below where the document names the rejected one) or drop the option."},
		{catSkillTimeout, "Give the slow step of {subject} an explicit timeout and a readiness check (wait for a specific element, port or log line rather than an idle network), retry at most once with backoff, and tell the agent what to report when it still times out."},
		{catSkillPermission, "Add a permissions check to {subject}: name the paths and privileges each step needs, check them before acting, and never work around a denial with sudo or another location without asking the user."},
		{catHTTP, "Handle the HTTP error in what {subject} runs: the request failed with {code}. Check that the target exists (the ids, branch, comment or URL it writes to) before calling, and make the script print an actionable error instead of the raw response."},
		{catStaleFile, "Tell {subject} to read a file right before editing it and to re-read it after any other agent, formatter or the user may have changed it; do not let parallel subagents edit the same file."},
		{catScope, "Add a scope line to {subject}: say what it covers and what it must not do (for example: `plans only; when the user asks to implement, implement` or `changes only the files the procedure names`), and tell the agent to do only what the user asked."},
		{catPrerequisite, "Add a prerequisites step to {subject}: before acting, check permissions and credentials, required tools and that the working directory is the right git repository; stop and report a missing one instead of retrying or working around it."},
		{catSource, "Name the canonical source of truth in {subject} (repository, branch, directory, live system versus cache) and require the agent to confirm it (for example with pwd and git remote -v) before changing anything."},
		{catRetry, "Add an anti-loop rule to {subject}: the agent ran {command} again and again while it kept failing the same way. After two failed attempts at the same step, stop, summarize the error and switch strategy or ask the user; where the skill knows the step's usual failure, say what to do about it."},
		{catLoop, "Bound the research of {subject}: the user said the agent went round in circles. Say how much to look before acting (the files or sources to read first), when to stop searching, and to ask the user when the first look finds nothing."},
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
	tool := func(cat string, phrases ...string) rule {
		return rule{category: cat, voices: voiceTool, phrases: phrase.NewSet(phrases...)}
	}
	rules := []rule{
		// The user's verdicts (their own words, in the run or right after).
		user(catOverreach, "unnecessary", "not necessary", "no need to", "no need for", "you can stop",
			"i'll run them", "i'll run it", "i will run them", "i'll run the tests", "i'll do it myself",
			"you didn't need to", "you did not need to", "didn't need to touch", "did not need to touch",
			"i didn't ask you to", "i did not ask you to", "i didn't ask for", "i did not ask for"),
		{category: catPolicy, voices: voiceUser, phrases: phrase.NewSet("do not commit", "don't commit", "dont commit",
			"do not push", "don't push", "dont push", "never commit", "never push", "do not merge", "don't merge",
			"do not deploy", "don't deploy", "do not delete", "don't delete", "do not make any changes",
			"don't make any changes", "dont make any changes", "do not change", "don't change", "do not run", "don't run"),
			extract: func(text string) map[string]string {
				if m := reVerb.FindStringSubmatch(text); m != nil {
					return map[string]string{"verb": strings.ToLower(m[1])}
				}
				return nil
			}},
		// The causes failed tool calls show (tool voice: the error text).
		tool(catSkillAuth, "requires login", "not logged in", "login required", "please log in",
			"please login", "to re-authenticate", "re-authenticate", "authentication required", "authentication failed",
			"unauthorized", "401 unauthorized", "token expired", "invalid token", "bad credentials", "not authenticated",
			"run gh auth login", "gh auth login"),
		tool(catRepoSetup, "could not find 'origin' remote", "remote not found", "no such remote", "not a git repository",
			"does not appear to be a git repository", "no upstream", "has no upstream branch", "does not have any commits yet",
			"no configuration file", "not configured", "no such ref"),
		{category: catNotFound, voices: voiceTool, phrases: phrase.NewSet("command not found", "executable file not found",
			"is not installed", "is not recognized as an internal or external command", "not found in path"),
			extra: func(norm string) []string {
				// dash (Debian's /bin/sh): "sh: 1: jq: not found".
				if reDashNF.MatchString(norm) {
					return []string{"sh: not found"}
				}
				return nil
			},
			extract: func(text string) map[string]string {
				for _, m := range reCmdNF.FindAllStringSubmatch(text, -1) {
					if p := firstGroup(m); !shells[p] {
						return map[string]string{"program": p}
					}
				}
				return nil
			}},
		tool(catShell, "no matches found", "bad substitution", "unmatched '", "unmatched \"",
			"syntax error near unexpected token", "bad flag in substitute command", "illegal option",
			"unknown primary or operator", "command rejected because it could not be parsed safely", "parse error near"),
		{category: catDependency, voices: voiceTool, phrases: phrase.NewSet("err_module_not_found", "cannot find module",
			"cannot find package", "modulenotfounderror", "no module named", "module not found", "could not resolve dependency",
			"importerror"),
			extract: func(text string) map[string]string {
				if m := reModule.FindStringSubmatch(text); m != nil {
					return map[string]string{"dep": firstGroup(m)}
				}
				return nil
			}},
		{category: catSkillSchema, voices: voiceTool, phrases: phrase.NewSet("does not support", "invalid value", "unknown json field",
			"unrecognized flag", "unrecognized option", "unknown flag", "unknown option", "inputvalidationerror",
			"is missing", "expected one of", "is not supported", "invalid argument", "invalid arguments", "unexpected argument"),
			extract: func(text string) map[string]string {
				if m := reValue.FindStringSubmatch(text); m != nil {
					return map[string]string{"value": m[1]}
				}
				for _, re := range []*regexp.Regexp{reValue2, reValue3} {
					if m := re.FindStringSubmatch(text); m != nil {
						return map[string]string{"value": m[1]}
					}
				}
				return nil
			}},
		tool(catSkillTimeout, "timed out", "timeout", "deadline exceeded", "rate limit", "rate limited", "too many requests",
			"http 429", "status code 429", "no capacity available", "exhausted your capacity"),
		tool(catSkillPermission, "permission denied", "eacces", "operation not permitted", "access denied",
			"must be run as root", "password is required", "must be within one of the workspace directories",
			"read-only file system"),
		{category: catHTTP, voices: voiceTool, phrases: phrase.NewSet("http 400", "http 401", "http 403", "http 404",
			"http 409", "http 422", "http 500", "http 502", "http 503", "not found (http 404)",
			"request failed with status code", "status code 404", "status code 403", "status code 500"),
			extract: func(text string) map[string]string {
				if m := reHTTP.FindStringSubmatch(text); m != nil {
					return map[string]string{"code": "HTTP " + m[1]}
				}
				return nil
			}},
		tool(catStaleFile, "file has been modified since read", "file has not been read yet", "string to replace not found",
			"apply_patch verification failed", "failed to find expected lines", "found 2 matches of the string to replace",
			"modified since it was last read", "expected 2 occurrences but found 1"),

		// The older user-voiced modes.
		user(catScope, "out of scope", "not what this skill is for", "that's not what i asked",
			"that is not what i asked", "not what i asked for", "i asked you to implement", "asked you to implement",
			"not to write a plan", "i didn't ask for a plan", "i did not ask for a plan", "only a plan", "just a plan",
			"instead of implementing", "you only planned"),
		user(catPrerequisite, "should have checked first", "without checking first", "you didn't check whether",
			"you did not check whether", "you didn't check if", "you did not check if",
			// A state the user meets again is a verdict; naming one ("there's
			// a merge conflict", as a task) is not.
			"still have merge conflicts", "still has merge conflicts", "still have conflicts", "still has conflicts",
			"you left uncommitted changes", "you didn't check for conflicts", "you did not check for conflicts"),
		user(catSource, "wrong source of truth", "wrong source", "stale data", "outdated data", "cached data",
			"out of date data", "old data", "the old version"),
		user(catSource, "wrong repo", "wrong repository", "wrong branch", "wrong directory",
			"wrong folder", "wrong checkout", "wrong worktree", "wrong file", "wrong environment",
			"wrong database", "wrong place"),
		user(catLoop, "going in circles", "going round in circles", "going around in circles",
			"we wasted", "you wasted", "wasting time", "stop searching", "stop researching",
			"enough research", "rabbit hole"),
		user(catToolPolicy, "instead of using",
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
	return cats, rules
}

// skillRows are the rows the skill rules read: the signal anchors and the
// user's acts in the run and their reaction right after it (not the
// transcript around the run: what other work printed is not the run's
// evidence), plus the corrections nearby and the non-AI logs. The run's
// failed calls are read from its own scope (Bundle.Failures) when the
// bundle has them.
func skillRows(b *cortex.Bundle) []*cortex.EvidenceRow {
	groups := [][]cortex.EvidenceRow{b.SignalAnchors, b.UserVoice, b.NearbyUserCorrections, b.NearbyLogs, b.NearbyErrors}
	if len(b.UserVoice) == 0 && b.Skill == nil && b.Failures == nil {
		// A bundle from before the user voice existed: read it as before.
		groups = append(groups, b.TranscriptBefore, b.TranscriptAfter)
	}
	return distinctRows(groups...)
}

// skillFailures are the failures the skill rules read: the agent's own
// failures in the run's scope when the bundle has them (what failed
// before the skill loaded or in other work nearby is not the skill's),
// else those nearby (a bundle from before runs had a scope).
func skillFailures(b *cortex.Bundle) []*cortex.ToolFailure {
	if b.Failures == nil {
		return agentFailures(b)
	}
	var out []*cortex.ToolFailure
	for i := range b.Failures {
		if agentsOwn(b.Failures[i].Class) {
			out = append(out, &b.Failures[i])
		}
	}
	return out
}

// Thresholds of the skill lens's own evidence.
const (
	// triggerCalls: a run that made at most this many tool calls before
	// the user redirected the agent barely ran: the skill should not have
	// triggered.
	triggerCalls = 3
	// retries: the same failing operation this many times is a loop.
	retries = 3
)

// redirectPhrases are a reaction that sends the agent elsewhere.
var redirectPhrases = phrase.NewSet("i meant", "what i meant", "not that", "not this", "wrong skill",
	"that's not what i asked", "that is not what i asked", "not what i asked for", "i was talking about",
	"i'm talking about", "i am talking about", "i was asking about")

// skillEvidence derives findings from a skill run's own collections: a
// reaction that redirects the agent right after a run that barely ran
// (the skill triggered where it should not have), and the same failing
// operation tried again and again (a loop the skill should stop).
func skillEvidence(b *cortex.Bundle) []lensHit {
	var out []lensHit
	if b.Skill != nil || b.Failures != nil || b.RunCalls > 0 {
		for _, r := range b.UserVoice {
			if !r.Reaction || r.Role != cortex.RoleUser || b.RunCalls > triggerCalls {
				continue
			}
			norm := uservoice.Normalize(r.Message)
			var labels []string
			for _, m := range redirectPhrases.FindNormalized(norm) {
				labels = append(labels, m.Phrase)
			}
			if len(labels) > 0 {
				out = append(out, lensHit{category: catWrongTrigger, rows: []int64{r.ID},
					labels: append(labels, strconv.Itoa(b.RunCalls)+" tool calls before it"), cause: lineWith(r.Message, labels)})
			}
		}
	}
	byOp := map[string][]*cortex.ToolFailure{}
	var ops []string
	for i := range b.Failures {
		f := &b.Failures[i]
		if f.Operation == "" || !agentsOwn(f.Class) {
			continue
		}
		if byOp[f.Operation] == nil {
			ops = append(ops, f.Operation)
		}
		byOp[f.Operation] = append(byOp[f.Operation], f)
	}
	for _, op := range ops {
		fs := byOp[op]
		if len(fs) < retries {
			continue
		}
		h := lensHit{category: catRetry, labels: []string{fmt.Sprintf("%d failed attempts at %s", len(fs), safeValue(op))},
			vars: map[string]string{"command": op}, cause: fs[len(fs)-1].Line}
		for _, f := range fs {
			h.events = append(h.events, f.EventID)
			for _, id := range []*int64{f.ResultLogID, f.CallLogID} {
				if id != nil {
					h.rows = append(h.rows, *id)
					break
				}
			}
		}
		out = append(out, h)
	}
	return out
}

// maxQuotes bounds the skill lines a finding quotes.
const maxQuotes = 3

// quoteWords are words that point at a category's instructions in a
// skill document beyond the values the evidence named.
var quoteWords = map[string][]string{
	catOverreach:    {"test", "tests", "browser", "screenshot", "verify", "commit", "push", "always"},
	catShell:        {"*", "glob", "for f in", "while"},
	catSkillAuth:    {"login", "auth"},
	catRepoSetup:    {"remote", "origin", "repo"},
	catWrongTrigger: {"description:", "use when", "use for"},
	catTrigger:      {"description:", "use when", "use for"},
	catSkillTimeout: {"timeout", "wait", "networkidle"},
}

// skillQuotes returns the lines of the run's skill document that a
// finding is about: those naming the evidence's values (the failing
// command, its program, the missing module, the rejected value, the verb
// the user forbade), else the category's own words. Lines are numbered
// from 1 in the document as stored; at most maxQuotes, best first.
func skillQuotes(b *cortex.Bundle, category string, vars map[string]string) []cortex.SkillQuote {
	if (b.Skill == nil || b.Skill.Text == "") && len(b.SkillOutputs) == 0 {
		return nil
	}
	var words []string
	for _, k := range []string{"command", "dep", "value", "verb"} {
		if v := safeValue(vars[k]); v != "" {
			words = append(words, strings.ToLower(v))
		}
	}
	if len(words) == 0 {
		if v := safeValue(vars["program"]); v != "" {
			words = append(words, strings.ToLower(v))
		}
	}
	if len(words) == 0 {
		words = quoteWords[category]
	}
	if len(words) == 0 {
		return nil
	}
	type scored struct {
		q cortex.SkillQuote
		n int
	}
	var found []scored
	scan := func(text, source string, logID int64) {
		for i, line := range strings.Split(text, "\n") {
			l := strings.ToLower(line)
			n := 0
			for _, w := range words {
				if containsWord(l, w) {
					n++
				}
			}
			if n > 0 && strings.TrimSpace(line) != "" {
				found = append(found, scored{cortex.SkillQuote{Line: i + 1, Text: oneLine(line), Source: source, LogID: logID}, n})
			}
		}
	}
	if b.Skill != nil {
		scan(b.Skill.Text, "skill_doc", 0)
	}
	for _, o := range b.SkillOutputs {
		scan(o.Message, "command_output", o.ID)
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].n > found[j].n })
	var out []cortex.SkillQuote
	for _, f := range found {
		if len(out) == maxQuotes {
			break
		}
		out = append(out, f.q)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source > out[j].Source // the document first
		}
		return out[i].LogID < out[j].LogID || out[i].LogID == out[j].LogID && out[i].Line < out[j].Line
	})
	return out
}

// containsWord reports whether w occurs in l as a word (or, for words that
// are not letters, as text).
func containsWord(l, w string) bool {
	if w == "" {
		return false
	}
	for from := 0; from < len(l); {
		i := strings.Index(l[from:], w)
		if i < 0 {
			return false
		}
		i += from
		before, after := i == 0 || !isWordByte(l[i-1]), i+len(w) >= len(l) || !isWordByte(l[i+len(w)])
		if before && after || !isWordByte(w[0]) {
			return true
		}
		from = i + 1
	}
	return false
}

func isWordByte(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// maxSubjectRunes bounds the skill name quoted in hints.
const maxSubjectRunes = 120

// skillSubject renders `the "plugin:name" skill` for hints: the plugin is
// prefixed unless the name already carries it; non-printable characters
// are dropped, the name is bounded and quoted. Without a name: "the
// skill". A custom command is `the "/name" command`.
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
	if inc.SubjectKind == "command" {
		return "the " + strconv.Quote("/"+name) + " command"
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
