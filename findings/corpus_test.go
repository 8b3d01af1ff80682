package findings

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
)

// Texts copied verbatim from the labelled corpus
// (../shared/corpus/labelled), grouped by the file they come from.
// TestCorpusTextsExist checks they are still there.
const (
	fileSkillCorrection = "claude/skill-correction/session.jsonl"
	scUserAsk           = "Implement the discount code feature in checkout, with tests."
	scSkillResult       = "Launching skill: lavra:lavra-plan"
	scSkillBody         = "Base directory for this skill: /home/dev/.claude/skills/lavra-plan\n\n# lavra:lavra-plan\nFollow the steps."
	scPlan              = "Here is a plan in five phases for the discount code feature..."
	scWriteResult       = "File created successfully"
	scProceed           = "The plan is written to PLAN.md. Shall I proceed?"
	scCorrection        = "That's not what I asked. I asked you to implement it, not to write a plan. You stopped at the plan again."
	scAck               = "Understood, implementing now."
	scEditResult        = "The file checkout.go has been updated."
)

const (
	fileSkillToolFailures = "claude/skill-tool-failures/session.jsonl"
	stfAsk                = "Deploy the staging stack."
	stfSkillResult        = "Launching skill: ops:deploy-helper"
	stfSkillBody          = "Base directory for this skill: /home/dev/.claude/skills/deploy-helper\n\n# ops:deploy-helper\nFollow the steps."
	stfRestartFailed      = "Failed to restart app.service: Access denied. permission denied"
	stfSudoFailed         = "sudo: a password is required"
	stfEditResult         = "The file /etc/app/config.yaml has been updated."
	stfCorrection         = "Stop, you didn't need to touch the config. The skill says to use the deploy script."
	stfSorry              = "Sorry, reverting the config change."
)

const (
	fileWrongRepo = "codex/skill-wrong-repo/rollout-2026-10-14T17-00-00-019a0000-aaaa-7bbb-8ccc-000000000005.jsonl"
	wrAsk         = "Use the worktree skill to start a branch for the login fix."
	wrSkillBlock  = "<skill>\n<name>worktree</name>\n<path>/home/dev/.codex/skills/worktree/SKILL.md</path>\n---\nname: worktree\ndescription: Plan work.\n---\n# Steps\n1. Plan.\n</skill>"
	wrExists      = "Chunk ID: a1b2\nWall time: 0.4 seconds\nProcess exited with code 128\nOriginal token count: 40\nOutput:\nfatal: '../web-login' already exists"
	wrNotARepo    = "Chunk ID: a1b2\nWall time: 0.4 seconds\nProcess exited with code 128\nOriginal token count: 40\nOutput:\nfatal: not a git repository (or any of the parent directories): .git"
	wrAssistant   = "I created the worktree under ../api instead."
	wrCorrection  = "No, that's the wrong repo. I said the web repo, you are working in the api checkout."
)

const (
	fileNegQuoted = "claude/negative-quoted-words/session.jsonl"
	nqInstruction = "Add validation: return errors.New(\"wrong input\") when the value is empty, and log \"not found\" for missing keys."
	nqSkillResult = "Launching skill: golang-style"
	nqSkillBody   = "Base directory for this skill: /home/dev/.claude/skills/golang-style\n\n# golang-style\nFollow the steps."
	nqEditResult  = "The file validate.go has been updated."
	nqGrepResult  = "./validate.go:12:\tlog.Print(\"not found\")"
	nqAssistant   = "Added the wrong-input error and the not found log line; tests pass."
	nqApproval    = "Looks good, merge it."
)

const (
	fileAbuse    = "claude/abuse/session.jsonl"
	abQuestion   = "Why is the cart total still wrong?"
	abTestOutput = "--- FAIL: TestTotal (0.00s)\n    cart_test.go:41: got 90, want 100\nFAIL"
	abAssistant  = "I have fixed the rounding."
	abAnchor     = "This is fucking broken again. You said you fixed it and the test still fails."
)

func TestCorpusTextsExist(t *testing.T) {
	dir := testcorpus.Labelled(t)
	files := map[string][]string{
		fileSkillCorrection:   {scUserAsk, scSkillResult, scSkillBody, scPlan, scWriteResult, scProceed, scCorrection, scAck, scEditResult},
		fileSkillToolFailures: {stfAsk, stfSkillResult, stfSkillBody, stfRestartFailed, stfSudoFailed, stfEditResult, stfCorrection, stfSorry},
		fileWrongRepo:         {wrAsk, wrSkillBlock, wrExists, wrNotARepo, wrAssistant, wrCorrection},
		fileNegQuoted:         {nqInstruction, nqSkillResult, nqSkillBody, nqEditResult, nqGrepResult, nqAssistant, nqApproval},
		fileAbuse:             {abQuestion, abTestOutput, abAssistant, abAnchor},
	}
	for file, texts := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(data, bytes.TrimSpace(buf.Bytes())) {
				t.Errorf("%s does not contain %q", file, s)
			}
		}
	}
}

// claude/skill-correction: the user says the skill stopped at a plan.
func TestCorpusSkillCorrection(t *testing.T) {
	anchor := row(8, cortex.RoleUser, scCorrection)
	b := &cortex.Bundle{
		Incident: cortex.Incident{Lens: cortex.LensSkill, SkillName: "lavra:lavra-plan", SkillPlugin: "lavra", EventCount: 2,
			AnchorLogIDs:   []int64{8},
			SignalsPresent: []string{cortex.SignalIgnoredPolicy, cortex.SignalUserCorrection}},
		SkillEvents:   []cortex.SkillEventRow{{ID: 1, LogID: 2}, {ID: 2, LogID: 5}},
		SignalAnchors: []cortex.EvidenceRow{anchor},
		TranscriptBefore: []cortex.EvidenceRow{
			row(1, cortex.RoleUser, scUserAsk), row(2, cortex.RoleToolCall, "Skill lavra:lavra-plan"),
			row(3, cortex.RoleToolResult, scSkillResult), row(4, cortex.RoleContext, scSkillBody),
			row(5, cortex.RoleAssistant, scPlan), row(6, cortex.RoleToolResult, scWriteResult),
			row(7, cortex.RoleAssistant, scProceed),
		},
		TranscriptAfter:       []cortex.EvidenceRow{row(9, cortex.RoleAssistant, scAck), row(10, cortex.RoleToolResult, scEditResult)},
		NearbyUserCorrections: []cortex.EvidenceRow{anchor},
	}
	f := Skill().Derive(b)
	checkInvariants(t, Skill(), b, f)
	if got := cats(f); !slices.Equal(got, []string{catScope}) {
		t.Fatalf("got %v", got)
	}
	m := f.FailureModes[0]
	if !slices.Equal(m.EvidenceIDs, []int64{8}) || m.Confidence != ConfidenceLow {
		t.Fatalf("got %+v", m)
	}
	if !strings.HasPrefix(m.Hint, `Add a scope line to the "lavra:lavra-plan" skill: `) {
		t.Fatalf("hint %q", m.Hint)
	}
	for _, p := range []string{"not to write a plan", "that's not what i asked", "i asked you to implement"} {
		if !containsQuoted(m.Why, p) {
			t.Errorf("Why %q lacks %q", m.Why, p)
		}
	}
}

// claude/skill-tool-failures: two permission failures, then the user says
// the skill's procedure was not followed.
func TestCorpusSkillToolFailures(t *testing.T) {
	correction := row(11, cortex.RoleUser, stfCorrection)
	failed1, failed2 := row(6, cortex.RoleToolResult, stfRestartFailed), row(8, cortex.RoleToolResult, stfSudoFailed)
	failed1.IsError, failed2.IsError = true, true
	b := &cortex.Bundle{
		Incident: cortex.Incident{Lens: cortex.LensSkill, SkillName: "ops:deploy-helper", SkillPlugin: "ops", EventCount: 1,
			AnchorLogIDs:   []int64{6, 8, 11},
			SignalsPresent: []string{cortex.SignalToolFailure, cortex.SignalUserCorrection}},
		SignalAnchors: []cortex.EvidenceRow{failed1, failed2, correction},
		TranscriptBefore: []cortex.EvidenceRow{
			row(1, cortex.RoleUser, stfAsk), row(2, cortex.RoleToolCall, "Skill ops:deploy-helper"),
			row(3, cortex.RoleToolResult, stfSkillResult), row(4, cortex.RoleContext, stfSkillBody),
			row(5, cortex.RoleToolCall, "systemctl restart app"), failed1,
			row(7, cortex.RoleToolCall, "sudo systemctl restart app"), failed2,
			row(9, cortex.RoleToolCall, "Edit /etc/app/config.yaml"), row(10, cortex.RoleToolResult, stfEditResult),
		},
		TranscriptAfter: []cortex.EvidenceRow{row(12, cortex.RoleAssistant, stfSorry)},
		NearbyToolFailures: []cortex.ToolFailure{
			{EventID: 501, CallLogID: ptr(5), ResultLogID: ptr(6), ToolName: "Bash", Status: cortex.CallError, ErrorText: stfRestartFailed},
			{EventID: 502, CallLogID: ptr(7), ResultLogID: ptr(8), ToolName: "Bash", Status: cortex.CallError, ErrorText: stfSudoFailed},
		},
		NearbyUserCorrections: []cortex.EvidenceRow{correction},
	}
	f := Skill().Derive(b)
	checkInvariants(t, Skill(), b, f)
	// "Stop, you didn't need to touch the config" is the skill doing more
	// than asked; the failures show a permission problem; "the skill says"
	// a tool policy.
	if got := cats(f); !slices.Equal(got, []string{catOverreach, catSkillPermission, catToolPolicy}) {
		t.Fatalf("got %v", got)
	}
	pre := mode(f, catSkillPermission)
	if !slices.Equal(pre.EvidenceIDs, []int64{5, 6, 7, 8}) || !slices.Equal(pre.MCPEventIDs, []int64{501, 502}) || pre.Confidence != ConfidenceMedium ||
		pre.Cause != "Failed to restart app.service: Access denied. permission denied" {
		t.Fatalf("permission: %+v", pre)
	}
	pol := mode(f, catToolPolicy)
	if !slices.Equal(pol.EvidenceIDs, []int64{11}) || !strings.Contains(pol.Hint, `the "ops:deploy-helper" skill`) {
		t.Fatalf("tool policy: %+v", pol)
	}
	want := []cortex.Factor{{Factor: "2 failed tool calls near the incident (mcp events 501, 502)", EvidenceIDs: []int64{5, 6, 7, 8}}}
	if !slices.EqualFunc(f.Factors, want, func(a, b cortex.Factor) bool {
		return a.Factor == b.Factor && slices.Equal(a.EvidenceIDs, b.EvidenceIDs)
	}) {
		t.Fatalf("factors %+v", f.Factors)
	}
	if !slices.Equal(f.OpenQuestions, []string{questionNoLogs}) {
		t.Fatalf("questions %q", f.OpenQuestions)
	}
}

// codex/skill-wrong-repo: git fails outside a repository; the user says
// it is the wrong repo.
func TestCorpusSkillWrongRepo(t *testing.T) {
	codex := func(id int64, role cortex.Role, text string) cortex.EvidenceRow {
		r := row(id, role, text)
		r.Tool = cortex.ToolCodex
		return r
	}
	correction := codex(9, cortex.RoleUser, wrCorrection)
	b := &cortex.Bundle{
		Incident: cortex.Incident{Lens: cortex.LensSkill, SkillName: "worktree", EventCount: 1, AnchorLogIDs: []int64{5, 7, 9},
			SignalsPresent: []string{cortex.SignalScopeConfusion, cortex.SignalToolFailure}},
		SignalAnchors: []cortex.EvidenceRow{codex(5, cortex.RoleToolResult, wrExists), codex(7, cortex.RoleToolResult, wrNotARepo), correction},
		TranscriptBefore: []cortex.EvidenceRow{
			codex(1, cortex.RoleUser, wrAsk), codex(2, cortex.RoleContext, wrSkillBlock),
			codex(4, cortex.RoleToolCall, `{"cmd": "git worktree add ../web-login"}`),
			codex(6, cortex.RoleToolCall, `{"cmd": "git worktree add ../web-login-2"}`),
			codex(8, cortex.RoleAssistant, wrAssistant),
		},
		NearbyUserCorrections: []cortex.EvidenceRow{correction},
	}
	f := Skill().Derive(b)
	checkInvariants(t, Skill(), b, f)
	if got := cats(f); !slices.Equal(got, []string{catRepoSetup, catSource}) {
		t.Fatalf("got %v", got)
	}
	if m := mode(f, catSource); !slices.Equal(m.EvidenceIDs, []int64{9}) || m.Why != `matched "wrong repo"` ||
		!strings.HasPrefix(m.Hint, `Name the canonical source of truth in the "worktree" skill`) {
		t.Fatalf("got %+v", m)
	}
	if m := mode(f, catRepoSetup); m == nil || !slices.Equal(m.EvidenceIDs, []int64{7}) {
		t.Fatalf("got %+v", m)
	}
}

// claude/negative-quoted-words: "wrong" and "not found" appear only in the
// user's instructions, tool output and assistant text — no finding.
func TestCorpusNegativeQuotedWords(t *testing.T) {
	transcript := []cortex.EvidenceRow{
		row(2, cortex.RoleToolCall, "Skill golang-style"), row(3, cortex.RoleToolResult, nqSkillResult),
		row(4, cortex.RoleContext, nqSkillBody), row(5, cortex.RoleToolCall, "Edit validate.go"),
		row(6, cortex.RoleToolResult, nqEditResult), row(7, cortex.RoleToolCall, `grep -rn "not found" .`),
		row(8, cortex.RoleToolResult, nqGrepResult), row(9, cortex.RoleAssistant, nqAssistant),
	}
	b := &cortex.Bundle{
		Incident:        cortex.Incident{Lens: cortex.LensSkill, SkillName: "golang-style", EventCount: 1},
		TranscriptAfter: transcript,
	}
	for _, withUser := range []bool{false, true} {
		if withUser {
			b.TranscriptBefore = []cortex.EvidenceRow{row(1, cortex.RoleUser, nqInstruction)}
			b.TranscriptAfter = append(slices.Clone(transcript), row(10, cortex.RoleUser, nqApproval))
		}
		for _, rs := range []*Rules{Skill(), Abuse()} {
			f := rs.Derive(b)
			checkInvariants(t, rs, b, f)
			if got := cats(f); !slices.Equal(got, []string{CategoryUnknown}) {
				t.Errorf("%s (user rows %v): got %v", rs.Lens(), withUser, got)
			}
		}
	}
}

// claude/abuse: a failing Go test, then a profane complaint that the test
// still fails.
func TestCorpusAbuse(t *testing.T) {
	anchor := row(5, cortex.RoleUser, abAnchor)
	anchor.Term = "fucking"
	anchor.Signals = []string{cortex.SignalAbuseTerm}
	testOut := row(3, cortex.RoleToolResult, abTestOutput)
	testOut.IsError = true
	b := &cortex.Bundle{
		Incident: cortex.Incident{Lens: cortex.LensAbuse, EventCount: 1, AnchorLogIDs: []int64{5}, Terms: []string{"fucking"},
			Hostname: "dev"},
		SignalAnchors: []cortex.EvidenceRow{anchor},
		TranscriptBefore: []cortex.EvidenceRow{
			row(1, cortex.RoleUser, abQuestion), row(2, cortex.RoleToolCall, "go test ./cart"),
			testOut, row(4, cortex.RoleAssistant, abAssistant),
		},
	}
	f := Abuse().Derive(b)
	checkInvariants(t, Abuse(), b, f)
	if got := cats(f); !slices.Equal(got, []string{catTestFailure}) {
		t.Fatalf("got %v", got)
	}
	if m := f.FailureModes[0]; !slices.Equal(m.EvidenceIDs, []int64{3, 5}) || m.Confidence != ConfidenceMedium {
		t.Fatalf("got %+v", m)
	}
	if !slices.Equal(f.OpenQuestions, []string{questionNoLogs}) {
		t.Fatalf("questions %q", f.OpenQuestions)
	}
}
