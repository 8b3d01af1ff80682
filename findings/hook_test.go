package findings

import (
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

// hookBundle is a hook-lens bundle for the runtime "PostToolUse:Bash" hook
// with the given signals (count 1 each) and hook events.
func hookBundle(signals []string, evs ...cortex.HookEventRow) *cortex.Bundle {
	counts := map[string]int{}
	for _, s := range signals {
		counts[s] = 1
	}
	return &cortex.Bundle{
		Incident: cortex.Incident{ID: "hook-inc-1", Lens: cortex.LensHook, Tool: cortex.ToolClaude, HookEvent: "PostToolUse",
			HookName: "PostToolUse:Bash", EvidenceBasis: cortex.EvidenceRuntime, EventCount: len(evs), SignalCounts: counts,
			SignalsPresent: signals},
		HookEvents: evs,
	}
}

// run is a runtime hook event of log row logID.
func run(id, logID int64, status string, f func(*cortex.HookEventRow)) cortex.HookEventRow {
	r := cortex.HookEventRow{ID: id, LogID: ptr(logID), Tool: cortex.ToolClaude, SessionID: "s1", Hostname: "dev",
		Timestamp: "2026-10-14T09:00:00.000Z", HookEvent: "PostToolUse", HookName: "PostToolUse:Bash", HookCommand: "marvin check",
		Status: status, EvidenceKind: cortex.EvidenceRuntime, Metadata: map[string]string{"attachment_type": "hook_success"}}
	if f != nil {
		f(&r)
	}
	return r
}

// anchor is a signal anchor row of a hook record tagged with signals.
func anchor(id int64, signals ...string) cortex.EvidenceRow {
	r := row(id, cortex.RoleHook, "hook PostToolUse:Bash")
	r.Signals = signals
	return r
}

func TestHookCategories(t *testing.T) {
	want := []string{"hook_command_not_found", "hook_cancelled", "hook_failed", "hook_timed_out", "hook_not_invoked", "hook_invoked_too_often", "hook_wrong_scope",
		"hook_output_parse_error", "hook_policy_drift", "hook_blocked_agent_flow", "hook_mutated_unexpected_state",
		"hook_caused_tool_failure", "unknown"}
	if got := Hook().Categories(); !slices.Equal(got, want) {
		t.Errorf("categories %v", got)
	}
	if ForLens(cortex.LensHook) != Hook() || Hook().Lens() != cortex.LensHook {
		t.Error("ForLens(hook)")
	}
	for _, c := range Hook().categories {
		if !strings.Contains(c.hint, "{subject}") {
			t.Errorf("%s: hint does not name the hook", c.name)
		}
	}
}

func TestHookFindingsPerCategory(t *testing.T) {
	exit := func(n int64) func(*cortex.HookEventRow) {
		return func(r *cortex.HookEventRow) {
			r.ExitCode = &n
			r.StderrPreview = "Failed with non-blocking status code: /bin/sh: marvin: command not found"
			r.Metadata["attachment_type"] = "hook_non_blocking_error"
		}
	}
	for _, tc := range []struct {
		name       string
		b          *cortex.Bundle
		cat        string
		confidence string
		evidence   []int64
		why        []string
	}{
		{"failed, one run", func() *cortex.Bundle {
			b := hookBundle([]string{cortex.SignalHookFailed}, run(1, 10, cortex.HookFailed, exit(127)))
			b.SignalAnchors = []cortex.EvidenceRow{anchor(10, cortex.SignalHookFailed)}
			return b
		}(), "hook_command_not_found", "medium", []int64{10}, []string{"exit 127", "command not found", "status failed", "command: marvin check"}},
		{"failed, four runs", hookBundle([]string{cortex.SignalHookFailed}, run(1, 10, cortex.HookFailed, exit(127)),
			run(2, 11, cortex.HookFailed, exit(127)), run(3, 12, cortex.HookFailed, exit(127)), run(4, 13, cortex.HookFailed, exit(127))),
			"hook_command_not_found", "high", []int64{10, 11, 12, 13}, []string{"exit 127"}},
		{"cancelled", hookBundle([]string{cortex.SignalHookFailed}, run(1, 10, cortex.HookCancelled, nil)),
			"hook_cancelled", "medium", []int64{10}, []string{"status cancelled"}},
		{"failed with another exit code", hookBundle([]string{cortex.SignalHookFailed}, run(1, 10, cortex.HookFailed, func(r *cortex.HookEventRow) {
			n := int64(2)
			r.ExitCode = &n
			r.StderrPreview = "ruff: 3 errors"
		})), "hook_failed", "medium", []int64{10}, []string{"exit 2", "status failed"}},
		{"timed out", hookBundle([]string{cortex.SignalHookTimedOut}, run(1, 10, cortex.HookSuccess, func(r *cortex.HookEventRow) {
			d := int64(45_000)
			r.DurationMS = &d
		})), "hook_timed_out", "medium", []int64{10}, []string{"ran 45s"}},
		{"not invoked rests on configuration: low", func() *cortex.Bundle {
			b := hookBundle([]string{cortex.SignalHookNotInvoked})
			b.Incident.HookSource, b.Incident.EvidenceBasis = "claude:user:settings.json", cortex.EvidenceConfig
			b.HookEvents = []cortex.HookEventRow{{ID: 7, HookEvent: "PostToolUse", HookName: "PostToolUse:Bash",
				HookSource: "claude:user:settings.json", Status: cortex.HookConfigured, EvidenceKind: cortex.EvidenceConfig}}
			b.SignalAnchors = []cortex.EvidenceRow{anchor(20, cortex.SignalHookNotInvoked), anchor(21, cortex.SignalHookNotInvoked)}
			return b
		}(), "hook_not_invoked", "low", []int64{20, 21}, []string{"configured in claude:user:settings.json"}},
		{"too often", func() *cortex.Bundle {
			b := hookBundle([]string{cortex.SignalHookTooOften}, run(1, 10, cortex.HookSuccess, nil))
			b.Incident.EventCount = 40
			b.SignalAnchors = []cortex.EvidenceRow{anchor(10, cortex.SignalHookTooOften)}
			return b
		}(), "hook_invoked_too_often", "medium", []int64{10}, []string{"40 runs"}},
		{"wrong scope (user)", func() *cortex.Bundle {
			b := hookBundle(nil)
			b.TranscriptAfter = []cortex.EvidenceRow{row(30, cortex.RoleUser, "That hook matched too broadly, it runs on every Read.")}
			return b
		}(), "hook_wrong_scope", "low", []int64{30}, []string{"hook matched too broadly"}},
		{"parse error", hookBundle([]string{cortex.SignalHookOutputParse}, run(1, 10, cortex.HookSuccess, func(r *cortex.HookEventRow) {
			r.StdoutPreview = `{"hookSpecificOutput": {`
		})), "hook_output_parse_error", "medium", []int64{10}, []string{"stdout is not valid JSON"}},
		{"policy drift (user)", func() *cortex.Bundle {
			b := hookBundle(nil)
			b.TranscriptAfter = []cortex.EvidenceRow{row(30, cortex.RoleUser, "the hook config changed again without review")}
			return b
		}(), "hook_policy_drift", "low", []int64{30}, []string{"hook config changed"}},
		{"repeated blocks", hookBundle([]string{cortex.SignalHookBlockedFlow}, run(1, 10, cortex.HookBlocked, nil),
			run(2, 11, cortex.HookBlocked, nil)), "hook_blocked_agent_flow", "high", []int64{10, 11}, []string{"2 blocked runs"}},
		{"correction after the hook's output", func() *cortex.Bundle {
			b := hookBundle([]string{cortex.SignalCorrectionAfterHook}, run(1, 10, cortex.HookSuccess, nil))
			b.SignalAnchors = []cortex.EvidenceRow{row(31, cortex.RoleUser, "no, that's wrong")}
			b.SignalAnchors[0].Signals = []string{cortex.SignalCorrectionAfterHook}
			return b
		}(), "hook_blocked_agent_flow", "medium", []int64{31}, []string{"user correction after the hook's output"}},
		{"mutated state (user)", func() *cortex.Bundle {
			b := hookBundle(nil)
			b.TranscriptAfter = []cortex.EvidenceRow{row(30, cortex.RoleUser, "The hook overwrote my .env file!")}
			return b
		}(), "hook_mutated_unexpected_state", "low", []int64{30}, []string{"the hook overwrote"}},
		{"tool failure naming a hook", func() *cortex.Bundle {
			b := hookBundle(nil)
			b.NearbyToolFailures = []cortex.ToolFailure{{EventID: 5, ResultLogID: ptr(40), Timestamp: "2026-10-14T09:00:00.000Z",
				ToolName: "Bash", Status: "error", ErrorText: "PreToolUse:Bash hook error: [guard.sh]: rm is not allowed"}}
			return b
		}(), "hook_caused_tool_failure", "low", []int64{40}, []string{"hook error"}},
		{"tool failure next to a failed PreToolUse run", func() *cortex.Bundle {
			b := hookBundle([]string{cortex.SignalHookFailed}, run(1, 10, cortex.HookBlocked, func(r *cortex.HookEventRow) {
				r.HookEvent, r.HookName, r.Timestamp = "PreToolUse", "PreToolUse:Bash", "2026-10-14T09:00:05.000Z"
			}))
			b.NearbyToolFailures = []cortex.ToolFailure{{EventID: 5, ResultLogID: ptr(40), Timestamp: "2026-10-14T09:00:00.000Z",
				ToolName: "Bash", Status: "error", ErrorText: "denied"}}
			return b
		}(), "hook_caused_tool_failure", "low", []int64{10, 40}, []string{"Bash failed next to a failed PreToolUse:Bash run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Hook()
			f := r.Derive(tc.b)
			checkInvariants(t, r, tc.b, f)
			m := mode(f, tc.cat)
			if m == nil {
				t.Fatalf("want %s, got %v", tc.cat, cats(f))
			}
			if m.Confidence != tc.confidence || !slices.Equal(m.EvidenceIDs, tc.evidence) {
				t.Errorf("confidence %s evidence %v, want %s %v", m.Confidence, m.EvidenceIDs, tc.confidence, tc.evidence)
			}
			for _, w := range tc.why {
				if !containsQuoted(m.Why, w) {
					t.Errorf("why %q does not name %q", m.Why, w)
				}
			}
			if !strings.Contains(m.Hint, "PostToolUse:Bash") {
				t.Errorf("hint does not name the hook: %q", m.Hint)
			}
		})
	}
}

// Negative cases: nothing from one block, a successful run, or text the
// agent or a tool wrote.
func TestHookFindingsNegatives(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *cortex.Bundle
	}{
		{"a successful run", hookBundle(nil, run(1, 10, cortex.HookSuccess, func(r *cortex.HookEventRow) { r.StdoutPreview = `{"ok": true}` }))},
		{"a truncated JSON stdout", hookBundle(nil, run(1, 10, cortex.HookSuccess, func(r *cortex.HookEventRow) {
			r.StdoutPreview, r.Metadata["stdout_truncated"] = `{"a": "x [… 10 bytes omitted …]`, "true"
		}))},
		{"a JSON stdout cut to the bundle's max_bytes", hookBundle(nil, run(1, 10, cortex.HookSuccess, func(r *cortex.HookEventRow) {
			r.StdoutPreview = `{"hookSpecificOutput": {"additionalContext": "lo… [cut 900 bytes]`
		}))},
		{"assistant prose about hooks", func() *cortex.Bundle {
			b := hookBundle(nil)
			b.TranscriptAfter = []cortex.EvidenceRow{row(30, cortex.RoleAssistant, "The hook overwrote nothing; the hook matched too broadly before.")}
			return b
		}()},
		{"a tool failure unrelated to hooks", func() *cortex.Bundle {
			b := hookBundle(nil)
			b.NearbyToolFailures = []cortex.ToolFailure{{EventID: 5, ResultLogID: ptr(40), Timestamp: "2026-10-14T09:00:00.000Z",
				ToolName: "Bash", Status: "error", ErrorText: "exit code 1"}}
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Hook().Derive(tc.b)
			checkInvariants(t, Hook(), tc.b, f)
			if got := cats(f); !slices.Equal(got, []string{CategoryUnknown}) {
				t.Errorf("want unknown, got %v", got)
			}
		})
	}
}

// One block counts as a failed run (its status), not as blocked flow.
func TestHookOneBlock(t *testing.T) {
	b := hookBundle([]string{cortex.SignalHookFailed}, run(1, 10, cortex.HookBlocked, nil))
	f := Hook().Derive(b)
	checkInvariants(t, Hook(), b, f)
	if got := cats(f); !slices.Equal(got, []string{"hook_failed"}) {
		t.Errorf("one block: %v", got)
	}
}

// The evidence basis is stated, and configuration-only evidence is never
// worded as a run.
func TestHookEvidenceBasisWording(t *testing.T) {
	rt := hookBundle([]string{cortex.SignalHookFailed}, run(1, 10, cortex.HookFailed, nil), run(2, 11, cortex.HookSuccess, nil))
	f := Hook().Derive(rt)
	if f.EvidenceBasis != "runtime_transcript: 2 hook run record(s) written into the transcript prove the hook executed" {
		t.Errorf("runtime basis %q", f.EvidenceBasis)
	}
	if slices.ContainsFunc(f.OpenQuestions, func(q string) bool { return strings.Contains(q, "inventory only") }) {
		t.Errorf("runtime questions %v", f.OpenQuestions)
	}

	for _, tc := range []struct {
		basis, source, want string
		tool                cortex.Tool
	}{
		{cortex.EvidenceConfig, "claude:user:settings.json",
			"config_inventory only: the hook is configured (claude:user:settings.json), which is not proof that it ran", cortex.ToolClaude},
		{cortex.EvidenceConfig, "codex:user:hooks.json",
			"config_inventory only: the hook is configured (codex:user:hooks.json), which is not proof that it ran", cortex.ToolCodex},
		{cortex.EvidenceTrust, "codex:user:config.toml[hooks.state]",
			"trusted_hash_state only: the hook's trust hash is recorded (codex:user:config.toml[hooks.state]), which is not proof that it ran", cortex.ToolCodex},
	} {
		// A configuration-only bundle, even one whose rows look like a
		// failure (an exit code on a configuration row), yields no run
		// finding.
		exit := int64(1)
		b := &cortex.Bundle{
			Incident: cortex.Incident{ID: "hook-inc-2", Lens: cortex.LensHook, Tool: tc.tool, HookEvent: "Stop", HookName: "Stop",
				HookSource: tc.source, EvidenceBasis: tc.basis, EventCount: 1, SignalCounts: map[string]int{}},
			HookEvents: []cortex.HookEventRow{{ID: 9, Tool: tc.tool, HookEvent: "Stop", HookName: "Stop", HookSource: tc.source,
				HookCommand: "notify", Status: cortex.HookFailed, ExitCode: &exit, EvidenceKind: tc.basis}},
		}
		f := Hook().Derive(b)
		checkInvariants(t, Hook(), b, f)
		if f.EvidenceBasis != tc.want {
			t.Errorf("%s basis %q", tc.source, f.EvidenceBasis)
		}
		if got := cats(f); !slices.Equal(got, []string{CategoryUnknown}) {
			t.Errorf("%s: configuration produced %v", tc.source, got)
		}
		if !slices.Contains(f.OpenQuestions, questionHookConfigOnly) {
			t.Errorf("%s: questions %v", tc.source, f.OpenQuestions)
		}
		if got := slices.Contains(f.OpenQuestions, questionHookNoRuntime); got != (tc.tool != cortex.ToolClaude) {
			t.Errorf("%s: no-runtime question %v in %v", tc.source, got, f.OpenQuestions)
		}
		for _, m := range f.FailureModes {
			if !strings.Contains(m.Hint, "configured in "+tc.source) {
				t.Errorf("%s: hint does not name the configuration: %q", tc.source, m.Hint)
			}
			for _, word := range []string{"executed", "ran ", "failed", "exit "} {
				if strings.Contains(m.Hint+m.Why, word) {
					t.Errorf("%s: %q worded as a run: %q / %q", tc.source, word, m.Hint, m.Why)
				}
			}
		}
	}
}

// Other lenses are untouched by hook evidence.
func TestHookEvidenceOnlyForHookLens(t *testing.T) {
	b := skillBundle(row(1, cortex.RoleUser, "fine"))
	b.HookEvents = []cortex.HookEventRow{run(1, 10, cortex.HookFailed, nil)}
	b.Incident.SignalCounts = map[string]int{cortex.SignalHookFailed: 1}
	f := Skill().Derive(b)
	if f.EvidenceBasis != "" || mode(f, "hook_failed") != nil {
		t.Errorf("skill findings %+v", f)
	}
	if ForLens("").Derive(b).EvidenceBasis != "" {
		t.Error("fallback states a basis")
	}
}

func TestHookFactorsAndQuestions(t *testing.T) {
	var evs []cortex.HookEventRow
	for i := range int64(6) {
		evs = append(evs, run(i+1, 10+i, cortex.HookSuccess, nil))
	}
	b := hookBundle([]string{cortex.SignalHookTooOften}, evs...)
	b.SignalAnchors = []cortex.EvidenceRow{anchor(15, cortex.SignalHookTooOften)}
	b.HookEventsTruncated, b.NearbyToolCallsTruncated, b.TranscriptAfterTruncated = true, true, true
	f := Hook().Derive(b)
	checkInvariants(t, Hook(), b, f)
	if len(f.Factors) != 1 || !strings.HasPrefix(f.Factors[0].Factor, `repeated hook runs: 6 runs of the "PostToolUse:Bash" hook`) ||
		!slices.Equal(f.Factors[0].EvidenceIDs, []int64{10, 11, 12, 13, 14, 15}) {
		t.Errorf("factors %+v", f.Factors)
	}
	if !slices.Contains(f.OpenQuestions, questionTruncated+"hook_events, transcript_after, nearby_tool_calls") {
		t.Errorf("questions %v", f.OpenQuestions)
	}
	empty := hookBundle(nil)
	if f := Hook().Derive(empty); !slices.Contains(f.OpenQuestions, questionHookNoEvidence) || cats(f)[0] != CategoryUnknown {
		t.Errorf("empty: %+v", f)
	}
	if f := Hook().Derive(nil); f.FailureModes == nil || len(f.FailureModes) != 1 {
		t.Errorf("nil bundle: %+v", f)
	}
}

func TestHookSubject(t *testing.T) {
	for _, tc := range []struct {
		inc  cortex.Incident
		want string
	}{
		{cortex.Incident{HookName: "PostToolUse:Bash"}, `the "PostToolUse:Bash" hook`},
		{cortex.Incident{HookEvent: "Stop"}, `the "Stop" hook`},
		{cortex.Incident{}, "the hook"},
		{cortex.Incident{HookName: "Stop", HookSource: "claude:user:settings.json", EvidenceBasis: cortex.EvidenceConfig},
			`the "Stop" hook configured in claude:user:settings.json`},
		{cortex.Incident{HookName: "Stop\x00\x1b", EvidenceBasis: cortex.EvidenceRuntime}, `the "Stop" hook`},
	} {
		if got := hookSubject(&tc.inc); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.inc, got, tc.want)
		}
	}
}

// A failed run's finding carries the stderr line that shows the failure.
func TestHookFailureCause(t *testing.T) {
	n := int64(127)
	b := hookBundle([]string{cortex.SignalHookFailed}, run(1, 10, cortex.HookFailed, func(r *cortex.HookEventRow) {
		r.ExitCode = &n
		r.StderrPreview = "Failed with non-blocking status code:\n/bin/sh: marvin: command not found"
	}))
	m := mode(Hook().Derive(b), catHookNotFound)
	if m == nil || m.Cause != "/bin/sh: marvin: command not found" {
		t.Fatalf("got %+v", m)
	}
}
