package findings

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
)

// Hook categories, in output order.
const (
	catHookNotFound    = "hook_command_not_found"
	catHookCancelled   = "hook_cancelled"
	catHookFailed      = "hook_failed"
	catHookTimedOut    = "hook_timed_out"
	catHookNotInvoked  = "hook_not_invoked"
	catHookTooOften    = "hook_invoked_too_often"
	catHookWrongScope  = "hook_wrong_scope"
	catHookParse       = "hook_output_parse_error"
	catHookDrift       = "hook_policy_drift"
	catHookBlocked     = "hook_blocked_agent_flow"
	catHookMutated     = "hook_mutated_unexpected_state"
	catHookToolFailure = "hook_caused_tool_failure"
)

// hookNotFoundPhrases say a hook's executable was not found.
var hookNotFoundPhrases = phrase.NewSet("command not found", "executable file not found", "no such file or directory",
	"not found in path", "is not recognized as an internal or external command")

// Hook returns the rule set of the hook lens. Most of its findings come
// from the incident's own hook events (Bundle.HookEvents: status, exit
// code, duration, output) and its signals, not from phrases: a failed,
// cancelled or errored run; a slow one; output the agent could not parse;
// repeated blocks; a run rate far above the hook's trigger; a configured
// hook that did not run where it was expected; a tool call failing on a
// hook's error. Phrases the user typed add wrong scope, policy drift,
// mutated state and blocked flow. Hints aim at the hook's command and
// configuration and name the hook.
//
// Evidence basis. Findings.EvidenceBasis says what the findings rest on:
// runtime_transcript (hook runs written into the transcript: the hook
// executed) or config_inventory / trusted_hash_state only (the hook is
// configured: not proof that it ran). Nothing derived from configuration
// alone says the hook ran, failed or was slow.
func Hook() *Rules { return hookRules }

var hookRules = buildHook()

func buildHook() *Rules {
	cats := []category{
		{catHookNotFound, "The command of {subject} is not on the agent's PATH (exit 127, \"command not found\"): the hook runs with the agent's environment, not your login shell's. Call the executable by absolute path, install it where the agent can find it, or guard the entry (`command -v <tool> >/dev/null || exit 0`) so a machine without the tool is not broken; remove the entry if the tool is gone for good."},
		{catHookCancelled, "A run of {subject} was cancelled before it finished (not by the user's interrupt): it ran past its timeout or was killed. Make it faster (cache, do less per run), move slow work to the background or an async hook, and set an explicit `timeout` on its entry that fits what it does."},
		{catHookFailed, "Fix the command of {subject}: run it by hand with a sample event on stdin and read its stderr; make the inputs it should ignore exit 0 and report real errors on stderr with an exit code the agent can act on, and remove the entry from its settings file if the hook is no longer wanted."},
		{catHookTimedOut, "Bound {subject}: set an explicit `timeout` on its entry in the settings file, move slow work out of the hook (run it in the background or as an async hook), and cache what it recomputes on every run."},
		{catHookNotInvoked, "Check the wiring of {subject} for this session: its event and matcher against the tool call or prompt that should have triggered it, its scope (user or project settings, the session's project), `disableAllHooks` and trust. A configured entry is not proof that a hook runs: confirm with the transcript's hook records of a session where it should run before changing it."},
		{catHookTooOften, "Narrow the matcher of {subject} to the tools it needs (not `*`, \"\" or a broad regex), make its command exit early when there is nothing to do, and check that it is not configured twice (user and project settings, or a plugin)."},
		{catHookWrongScope, "Tighten the scope of {subject}: match exact tool names in its matcher, and move it from user-level settings to the project's settings if it only applies there."},
		{catHookParse, "Make {subject} print one valid JSON object on stdout (or plain text, never a mix of the two) and send logs and diagnostics to stderr; check its output with `jq .` in a test."},
		{catHookDrift, "Pin the configuration of {subject}: keep its entry in version-controlled project settings, review changes to its command or trust hash before trusting it again, and remove stale copies of it."},
		{catHookBlocked, "Review what {subject} feeds back to the agent: block only what the policy forbids, make every block reason name the exact fix, make a Stop hook stop blocking once its condition is met, and keep injected context short and unambiguous."},
		{catHookMutated, "Make {subject} write only what it owns: no edits to settings, environment or tracked files outside its own state directory; make its side effects explicit and idempotent."},
		{catHookToolFailure, "Make {subject} fail open on input it does not recognise and make its error or block message say what to change, so that the tool call it gates can succeed on the next attempt."},
		{CategoryUnknown, "No deterministic signature matched; review the hook events of {subject} and the transcript manually before changing its command or configuration."},
	}
	user := func(cat string, phrases ...string) rule {
		return rule{category: cat, voices: voiceUser, phrases: phrase.NewSet(phrases...)}
	}
	rules := []rule{
		user(catHookWrongScope, "hook fired on the wrong", "wrong tool for this hook", "hook matched too broadly",
			"hook should not have run", "hook shouldn't have run", "hook ran on the wrong", "hook should only run",
			"hook runs on every", "hook is too broad", "hook shouldn't run", "hook should not run"),
		user(catHookDrift, "hook config drifted", "hook policy changed", "unexpected hook configuration",
			"hook trust changed", "hook configuration changed", "hooks have changed", "untrusted hook",
			"hook is not trusted", "hook was modified", "hook config changed", "hook settings changed"),
		user(catHookBlocked, "the hook keeps blocking", "hook keeps blocking", "blocked by the hook",
			"stop hook keeps", "hook keeps firing", "the hook blocked", "hook won't let", "hook will not let"),
		user(catHookMutated, "unexpected config change", "unexpected file change", "mutated state",
			"the hook modified", "the hook changed my", "the hook overwrote", "the hook deleted", "the hook reverted",
			"hook rewrote", "hook modified my", "hook touched my"),
	}
	r := newRules(cortex.LensHook, cats, rules)
	r.evidence = hookEvidence
	r.subject = hookSubject
	r.lensFactor = hookFactor
	r.noAnchors = "no negative signal anchors captured"
	return r
}

// hookSubject renders the hook for hints: `the "PostToolUse:Bash" hook`,
// with its configuration source when the incident rests on configuration
// (`… configured in claude:user:settings.json`). Without a name: "the
// hook".
func hookSubject(inc *cortex.Incident) string {
	name := clean(inc.HookName)
	if name == "" {
		name = clean(inc.HookEvent)
	}
	if name == "" {
		return "the hook"
	}
	if r := []rune(name); len(r) > maxSubjectRunes {
		name = string(r[:maxSubjectRunes]) + "…"
	}
	s := "the " + strconv.Quote(name) + " hook"
	if src := clean(inc.HookSource); src != "" && incidentBasis(inc) != cortex.EvidenceRuntime {
		s += " configured in " + src
	}
	return s
}

// incidentBasis is the incident's evidence basis, runtime when unset on a
// runtime subject (no source).
func incidentBasis(inc *cortex.Incident) string {
	if inc.EvidenceBasis != "" {
		return inc.EvidenceBasis
	}
	if inc.HookSource != "" {
		return cortex.EvidenceConfig
	}
	return cortex.EvidenceRuntime
}

// lensHit is evidence a lens derives from its own bundle collections,
// added to a category's hits: rows count one unit each (confidence),
// cited rows and events are cited without counting, a signal counts one
// unit; labels name what matched (Why).
type lensHit struct {
	category string
	rows     []int64
	cite     []int64
	events   []int64
	signal   string
	labels   []string
	// cause and vars feed the finding's cause line and hint values.
	cause string
	vars  map[string]string
}

// Thresholds of the hook findings and of the hook lens's detectors, which
// call HookRunTimedOut.
const (
	// hookSlowMS: a run this long (30 s) counts as timed out, whatever its
	// status (agents' default hook timeouts are 60 s and more; a hook that
	// slow holds up every turn it runs in).
	hookSlowMS          = 30_000
	hookRepeatThreshold = 5
	// hookToolWindow: a tool call failing this close to a failed or
	// blocked PreToolUse run of the same tool failed on the hook.
	hookToolWindow = 2 * time.Minute
)

var (
	hookTimeoutPhrases = phrase.NewSet("timed out", "timeout", "time out", "etimedout", "deadline exceeded",
		"context deadline exceeded")
	hookParsePhrases = phrase.NewSet("invalid json", "json parse error", "unexpected token", "failed to parse hook output",
		"malformed output", "syntaxerror", "json validation failed", "hook json output validation failed", "not valid json",
		"unexpected end of json input", "cannot unmarshal", "failed to parse json", "could not parse json",
		"invalid hook output", "error parsing hook output")
	// hookFailurePhrases name the usual causes in a failed run's stderr.
	hookFailurePhrases = phrase.NewSet("command not found", "no such file or directory", "permission denied",
		"executable file not found", "cannot execute", "syntax error", "traceback", "panic:")
	// hookToolPhrases: a tool failure that names a hook failed on it.
	hookToolPhrases = phrase.NewSet("hook error", "blocked by hook", "blocked by a hook", "hook blocked",
		"denied by hook", "hook denied", "hook returned", "hook failed", "pretooluse hook", "pretooluse:")
)

var hookFailedStatuses = map[string]bool{
	cortex.HookFailed: true, cortex.HookBlocked: true, cortex.HookCancelled: true, cortex.HookError: true,
}

// HookRunFailed reports a failed, blocked, cancelled or errored hook run,
// or a success record with a non-zero exit code. The hook lens's detectors
// and these findings read runs by the same rules.
func HookRunFailed(ev *cortex.HookEventRow) bool {
	return hookFailedStatuses[ev.Status] || (ev.Status == cortex.HookSuccess && ev.ExitCode != nil && *ev.ExitCode != 0)
}

// HookRunTimedOut reports a run of 30 s or more, or a failed run that
// says it timed out.
func HookRunTimedOut(ev *cortex.HookEventRow) bool {
	if ev.DurationMS != nil && *ev.DurationMS >= hookSlowMS {
		return true
	}
	return HookRunFailed(ev) && (hookTimeoutPhrases.Contains(ev.StderrPreview) || hookTimeoutPhrases.Contains(ev.StdoutPreview))
}

// HookRunParseErrors lists the parse problems of a run: parse-error
// phrases in stderr (or in the stdout of a run that did not succeed), or a
// complete JSON-looking stdout that is not valid JSON.
func HookRunParseErrors(ev *cortex.HookEventRow) []string {
	var out []string
	for _, m := range hookParsePhrases.Find(ev.StderrPreview) {
		out = append(out, m.Phrase)
	}
	if ev.Status != cortex.HookSuccess {
		for _, m := range hookParsePhrases.Find(ev.StdoutPreview) {
			out = append(out, m.Phrase)
		}
	}
	switch ev.Metadata["attachment_type"] {
	case "hook_success", "hook_non_blocking_error", "hook_blocking_error":
		// Only a complete stdout is judged: not one cut at ingest
		// (stdout_truncated) or in the bundle (max_bytes marker).
		s := strings.TrimSpace(ev.StdoutPreview)
		if ev.Metadata["stdout_truncated"] != "true" && !strings.Contains(s, "… [cut ") && strings.HasPrefix(s, "{") &&
			!json.Valid([]byte(s)) {
			out = append(out, "stdout is not valid JSON")
		}
	}
	return out
}

// runtimeEvents returns the bundle's hook runs with a transcript row:
// runtime evidence, the only proof that a hook executed.
func runtimeEvents(b *cortex.Bundle) []*cortex.HookEventRow {
	var out []*cortex.HookEventRow
	seen := map[int64]bool{}
	for i := range b.HookEvents {
		ev := &b.HookEvents[i]
		if ev.EvidenceKind != cortex.EvidenceRuntime || ev.LogID == nil || seen[ev.ID] {
			continue
		}
		seen[ev.ID] = true
		out = append(out, ev)
	}
	return out
}

// taggedAnchors returns the signal anchor rows tagged with sig.
func taggedAnchors(b *cortex.Bundle, sig string) []int64 {
	set := map[int64]bool{}
	for _, row := range b.SignalAnchors {
		for _, s := range row.Signals {
			if s == sig {
				set[row.ID] = true
			}
		}
	}
	return sortedIDs(set)
}

// hookEvidence derives the hook lens's findings from the incident's own
// hook events and signals (nil for any other rule set). Runtime findings
// (failed, timed out, parse error, blocked, caused a tool failure) read
// runtime events only: a configuration row never shows a run.
func hookEvidence(b *cortex.Bundle) []lensHit {
	if b == nil {
		return nil
	}
	inc := &b.Incident
	runs := runtimeEvents(b)
	var out []lensHit
	add := func(h lensHit, sig string) {
		if sig != "" && signalPresent(inc, sig) {
			h.rows = append(h.rows, taggedAnchors(b, sig)...)
			h.signal = sig
		}
		if len(h.rows)+len(h.cite)+len(h.events) > 0 {
			out = append(out, h)
		}
	}

	var notFound, cancelled, failed, slow, parse, blocked lensHit
	notFound.category, cancelled.category, failed.category = catHookNotFound, catHookCancelled, catHookFailed
	slow.category, parse.category, blocked.category = catHookTimedOut, catHookParse, catHookBlocked
	nBlocked := 0
	for _, ev := range runs {
		id := *ev.LogID
		if HookRunFailed(ev) {
			// One fix per cause: a missing executable, a cancelled run,
			// any other failure.
			h := &failed
			switch {
			case ev.ExitCode != nil && *ev.ExitCode == 127 || hookNotFoundPhrases.Contains(ev.StderrPreview):
				h = &notFound
			case ev.Status == cortex.HookCancelled:
				h = &cancelled
			}
			h.rows = append(h.rows, id)
			h.labels = append(h.labels, "status "+ev.Status)
			if ev.ExitCode != nil && *ev.ExitCode != 0 {
				h.labels = append(h.labels, fmt.Sprintf("exit %d", *ev.ExitCode))
			}
			var found []string
			for _, m := range hookFailurePhrases.Find(ev.StderrPreview) {
				h.labels = append(h.labels, m.Phrase)
				found = append(found, m.Phrase)
			}
			if h.cause == "" && strings.TrimSpace(ev.StderrPreview) != "" {
				h.cause = oneLine(lineWith(ev.StderrPreview, found))
			}
			if c := commandLabel(ev.HookCommand); c != "" {
				h.labels = append(h.labels, c)
			}
		}
		if HookRunTimedOut(ev) {
			slow.rows = append(slow.rows, id)
			if ev.DurationMS != nil && *ev.DurationMS >= hookSlowMS {
				slow.labels = append(slow.labels, fmt.Sprintf("ran %ds", *ev.DurationMS/1000))
			} else {
				slow.labels = append(slow.labels, "timed out")
			}
			if c := commandLabel(ev.HookCommand); c != "" {
				slow.labels = append(slow.labels, c)
			}
		}
		if labels := HookRunParseErrors(ev); len(labels) > 0 {
			parse.rows = append(parse.rows, id)
			parse.labels = append(parse.labels, labels...)
			if c := commandLabel(ev.HookCommand); c != "" {
				parse.labels = append(parse.labels, c)
			}
		}
		if ev.Status == cortex.HookBlocked {
			blocked.rows = append(blocked.rows, id)
			nBlocked++
		}
	}
	// The hook_failed signal supports the first failure category found.
	sig := cortex.SignalHookFailed
	for _, h := range []lensHit{notFound, cancelled, failed} {
		if len(h.rows) > 0 {
			add(h, sig)
			sig = ""
		}
	}
	if sig != "" {
		add(failed, sig)
	}
	add(slow, cortex.SignalHookTimedOut)
	// hook_not_invoked rests on configuration: the trigger rows are cited,
	// the signal is its only unit (never more than low confidence).
	if signalPresent(inc, cortex.SignalHookNotInvoked) {
		h := lensHit{category: catHookNotInvoked, cite: taggedAnchors(b, cortex.SignalHookNotInvoked),
			signal: cortex.SignalHookNotInvoked, labels: []string{"configured, no runtime run recorded in this session"}}
		if src := clean(inc.HookSource); src != "" {
			h.labels = append(h.labels, "configured in "+src)
		}
		if len(h.cite) > 0 {
			out = append(out, h)
		}
	}
	if signalPresent(inc, cortex.SignalHookTooOften) {
		add(lensHit{category: catHookTooOften, labels: []string{fmt.Sprintf("%d runs", inc.EventCount)}},
			cortex.SignalHookTooOften)
	}
	add(parse, cortex.SignalHookOutputParse)
	if nBlocked < 2 {
		blocked.rows, blocked.labels = nil, nil // one block is the hook working
	} else {
		blocked.labels = []string{fmt.Sprintf("%d blocked runs", nBlocked)}
	}
	add(blocked, cortex.SignalHookBlockedFlow)
	if signalPresent(inc, cortex.SignalCorrectionAfterHook) {
		add(lensHit{category: catHookBlocked, labels: []string{"user correction after the hook's output"}},
			cortex.SignalCorrectionAfterHook)
	}
	if h := hookToolFailures(b, runs); len(h.rows) > 0 {
		out = append(out, h)
	}
	return out
}

// hookToolFailures finds tool calls that failed on a hook: their error
// text names a hook, or they failed within hookToolWindow of a failed or
// blocked PreToolUse run for the same tool.
func hookToolFailures(b *cortex.Bundle, runs []*cortex.HookEventRow) lensHit {
	h := lensHit{category: catHookToolFailure}
	for _, tf := range agentFailures(b) {
		var labels []string
		for _, m := range hookToolPhrases.Find(tf.ErrorText) {
			labels = append(labels, m.Phrase)
		}
		at, err := cortex.ParseTimestamp(tf.Timestamp)
		for _, ev := range runs {
			if ev.HookEvent != "PreToolUse" || !HookRunFailed(ev) || ev.HookName != "PreToolUse:"+tf.ToolName || err != nil {
				continue
			}
			if evAt, e := cortex.ParseTimestamp(ev.Timestamp); e == nil && absDuration(at.Sub(evAt)) <= hookToolWindow {
				labels = append(labels, fmt.Sprintf("%s failed next to a failed %s run", tf.ToolName, ev.HookName))
				h.cite = append(h.cite, *ev.LogID)
			}
		}
		if len(labels) == 0 {
			continue
		}
		switch {
		case tf.ResultLogID != nil:
			h.rows = append(h.rows, *tf.ResultLogID)
		case tf.CallLogID != nil:
			h.rows = append(h.rows, *tf.CallLogID)
		}
		h.events = append(h.events, tf.EventID)
		h.labels = append(h.labels, labels...)
	}
	return h
}

// maxCommandLabel bounds a command quoted in Why.
const maxCommandLabel = 80

// commandLabel names a hook command for Why ("command: marvin check"),
// bounded and cleaned; "" without a command.
func commandLabel(cmd string) string {
	c := clean(strings.Join(strings.Fields(cmd), " "))
	if c == "" {
		return ""
	}
	if r := []rune(c); len(r) > maxCommandLabel {
		c = string(r[:maxCommandLabel]) + "…"
	}
	return "command: " + c
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// hookFactor: five or more hook runs, citing their transcript rows.
func hookFactor(b *cortex.Bundle) (cortex.Factor, bool) {
	runs := runtimeEvents(b)
	if b.Incident.EventCount < hookRepeatThreshold || len(runs) == 0 {
		return cortex.Factor{}, false
	}
	set := map[int64]bool{}
	for _, ev := range runs {
		set[*ev.LogID] = true
	}
	return cortex.Factor{
		Factor:      fmt.Sprintf("repeated hook runs: %d runs of %s", b.Incident.EventCount, hookSubject(&b.Incident)),
		EvidenceIDs: sortedIDs(set),
	}, true
}

// Open questions of the hook lens.
const (
	questionHookConfigOnly = "findings based on config/trust inventory only: no runtime_transcript evidence that the hook ran"
	questionHookNoEvidence = "no hook events or anchors captured"
	questionHookNoRuntime  = "this agent writes no hook runs into its transcripts (only Claude Code does): check the hook's own logs to learn whether it ran"
)

// hookFinish states the evidence basis and adds the hook lens's open
// questions (nothing for any other rule set).
func hookFinish(r *Rules, b *cortex.Bundle, f *cortex.Findings) {
	if r != hookRules || b == nil {
		return
	}
	inc := &b.Incident
	basis := inc.EvidenceBasis
	runs := runtimeEvents(b)
	if basis == "" {
		basis = cortex.EvidenceRuntime
		if len(runs) == 0 && len(b.HookEvents) > 0 {
			basis = b.HookEvents[0].EvidenceKind
		}
	}
	src := clean(inc.HookSource)
	if src == "" {
		for _, ev := range b.HookEvents {
			if ev.HookSource != "" {
				src = clean(ev.HookSource)
				break
			}
		}
	}
	switch basis {
	case cortex.EvidenceRuntime:
		f.EvidenceBasis = cortex.EvidenceRuntime + ": hook runs written into the transcript prove the hook executed"
		if len(runs) > 0 {
			f.EvidenceBasis = fmt.Sprintf("%s: %d hook run record(s) written into the transcript prove the hook executed",
				cortex.EvidenceRuntime, len(runs))
		}
	default:
		what := "the hook is configured"
		if basis == cortex.EvidenceTrust {
			what = "the hook's trust hash is recorded"
		}
		if src != "" {
			what += " (" + src + ")"
		}
		f.EvidenceBasis = fmt.Sprintf("%s only: %s, which is not proof that it ran", basis, what)
		f.OpenQuestions = append(f.OpenQuestions, questionHookConfigOnly)
		if inc.Tool == cortex.ToolCodex || inc.Tool == cortex.ToolGemini {
			f.OpenQuestions = append(f.OpenQuestions, questionHookNoRuntime)
		}
	}
	if len(b.HookEvents) == 0 && len(b.SignalAnchors) == 0 {
		f.OpenQuestions = append(f.OpenQuestions, questionHookNoEvidence)
	}
}
