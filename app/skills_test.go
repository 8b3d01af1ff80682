package app

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aymanbagabas/go-udiff"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/lifecycle"
	"github.com/cortexhq/cortex/llm"
)

// TestSkillLifecycleRealCorpus checks versions, health and compare on the
// real corpus, where three skills ran with two different bodies each:
// Claude Code's bundled verify skill (2.1.165, then 2.1.170 which adds
// "Evidence has to reach the reader"), the marvin plugin (April 30, then
// May 7 with `today` and `memory`) and Codex's in-app browser plugin
// (26.602 then 26.608, which rewrote the documentation-read rule).
func TestSkillLifecycleRealCorpus(t *testing.T) {
	db, _ := teststore.Indexed(t, testcorpus.Real(t))
	s := New(db)
	ctx := context.Background()

	vl, err := s.SkillVersions(ctx, SkillVersionsParams{Skill: "verify", Diff: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(vl.Versions) != 2 || vl.Versions[0].Runs != 1 || vl.Versions[0].Incidents != 0 || vl.Versions[1].Runs != 1 ||
		vl.Versions[1].Incidents != 1 || vl.Versions[1].Loads != 2 || vl.UnknownVersionRuns != 0 {
		t.Fatalf("verify versions = %+v (unknown %d)", vl.Versions, vl.UnknownVersionRuns)
	}
	d := vl.Diff.Diff
	// The real change is in the diff; the runs' arguments are not.
	if !strings.Contains(d, "+**Evidence has to reach the reader.**") || strings.Contains(d, "Planetfall") ||
		strings.Contains(d, "Base directory") || vl.Diff.Partial {
		t.Errorf("verify diff:\n%s", d)
	}
	mv, err := s.SkillVersions(ctx, SkillVersionsParams{Skill: "marvin", From: "v1", To: "v2"})
	if err != nil || len(mv.Versions) != 2 || !strings.Contains(mv.Diff.Diff, "+- `today`") {
		t.Fatalf("marvin versions: %v %+v", err, mv)
	}
	if _, err := s.SkillVersions(ctx, SkillVersionsParams{Skill: "verify", From: "v9"}); cortex.ErrorCode(err) != cortex.CodeNotFound {
		t.Errorf("an unknown version: %v", err)
	}
	if _, err := s.SkillVersions(ctx, SkillVersionsParams{Skill: "no-such-skill"}); cortex.ErrorCode(err) != cortex.CodeNotFound {
		t.Errorf("an unknown skill: %v", err)
	}

	// One run a side shows nothing: the verdict says so.
	c, err := s.SkillCompare(ctx, SkillCompareParams{Skill: "verify"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != lifecycle.VerdictNotEnoughRuns || c.Before.Runs != 1 || c.Before.Incidents != 0 || c.After.Incidents != 1 ||
		c.PValue != 1 || c.RunsNeeded == 0 || c.Diff == "" {
		t.Errorf("verify compare = %+v", c)
	}
	// One version so far: no diff, nothing to compare, and no error.
	one1, err := s.SkillVersions(ctx, SkillVersionsParams{Skill: "using-entire", Diff: true})
	if err != nil || one1.Diff != nil || one1.Message == "" || len(one1.Versions) != 1 {
		t.Errorf("one version, diff: %v %+v", err, one1)
	}
	oc, err := s.SkillCompare(ctx, SkillCompareParams{Skill: "using-entire"})
	if err != nil || oc.Verdict != lifecycle.VerdictNotEnoughRuns || oc.Before.Runs != 5 || oc.After.Runs != 0 ||
		!strings.Contains(oc.Message, "only 1 version") {
		t.Errorf("one version, compare: %v %+v", err, oc)
	}
	cd, err := s.SkillCompare(ctx, SkillCompareParams{Skill: "using-entire", Before: "2026-06-10"})
	if err != nil || cd.Before.Runs+cd.After.Runs != 5 || cd.Before.To != "2026-06-10T00:00:00.000Z" {
		t.Errorf("using-entire by date: %v %+v", err, cd)
	}
	if _, err := s.SkillCompare(ctx, SkillCompareParams{Skill: "verify", Before: "v1", After: "2026-06-10"}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("a version against a date: %v", err)
	}

	h, err := s.SkillHealth(ctx, SkillHealthParams{Limit: MaxHealthLimit})
	if err != nil {
		t.Fatal(err)
	}
	if h.Total < 20 || h.GradeFormula == "" || len(h.Skills) != h.Total {
		t.Fatalf("health: total %d", h.Total)
	}
	for i := 1; i < len(h.Skills); i++ {
		if h.Skills[i].Score < h.Skills[i-1].Score {
			t.Errorf("not worst first at %d: %s %v after %s %v", i, h.Skills[i].Skill, h.Skills[i].Score, h.Skills[i-1].Skill, h.Skills[i-1].Score)
		}
	}
	one, err := s.SkillHealth(ctx, SkillHealthParams{Skill: "using-entire"})
	if err != nil || len(one.Skills) != 1 {
		t.Fatal(err, one)
	}
	ue := one.Skills[0]
	// None of its five runs failed: a login `entire dispatch` lacked was
	// worked around, the in-app browser's failures are that skill's
	// tool's, and a rewrite the user undid was the agent's own reading of
	// the request (labelled so in testdata/corpus/labels-real.jsonl).
	if ue.Runs != 5 || ue.Incidents != 0 || ue.Provisional || len(ue.Versions) != 1 || ue.Versions[0].Runs != 5 ||
		len(ue.TopFindings) != 0 || ue.FindingsFrom != 0 || len(ue.Weekly) < 2 || ue.Grade != lifecycle.Grade(ue.Score) {
		t.Errorf("using-entire health = %+v", ue)
	}
}

// fakeLLM answers every prompt with a fixed text.
type fakeLLM struct {
	answer  string
	prompts []string
}

func (f *fakeLLM) Name() string    { return "fake" }
func (f *fakeLLM) Program() string { return "" }
func (f *fakeLLM) Model() string   { return "fake-model" }
func (f *fakeLLM) Run(_ context.Context, prompt string, _ io.Writer) (string, error) {
	f.prompts = append(f.prompts, prompt)
	return f.answer, nil
}

// TestSkillProposeAndEvalsRealCorpus proposes edits to the real verify
// SKILL.md (Claude Code's bundled skill, installed in a temporary home the
// way Claude Code keeps a user's skill) and writes evals for the skill.
// Its 2.1.170 run went wrong: it ran the browser tests the user then said
// they would run themselves ("no need to run tests … I'll run them").
func TestSkillProposeAndEvalsRealCorpus(t *testing.T) {
	db, _ := teststore.Indexed(t, testcorpus.Real(t))
	s := New(db)
	s.Home = t.TempDir()
	ctx := context.Background()
	cli := Caller{Surface: cortex.SurfaceCLI}
	orig, err := os.ReadFile("../lifecycle/testdata/verify/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(s.Home, ".claude", "skills", "verify", "SKILL.md")
	if _, err := s.SkillPropose(ctx, cli, SkillProposeParams{Skill: "verify"}); cortex.ErrorCode(err) != cortex.CodeNotFound ||
		!strings.Contains(err.Error(), "--file") {
		t.Errorf("no SKILL.md anywhere: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := s.SkillPropose(ctx, cli, SkillProposeParams{Skill: "verify"})
	if err != nil {
		t.Fatal(err)
	}
	if p.File != file || p.Source != "deterministic" || p.Incidents != 1 || len(p.Hunks) == 0 ||
		!strings.Contains(p.Diff, "skill_did_more_than_asked (skill-inc-") || !strings.Contains(p.Diff, "Ask before optional extra steps") {
		t.Fatalf("proposal: %+v\n%s", p.Tried, p.Diff)
	}
	// The failing browser script is not in the skill's text: no edit is
	// about it.
	if strings.Contains(p.Diff, "l2-verify") || strings.Contains(p.Diff, "ERR_MODULE_NOT_FOUND") {
		t.Errorf("an edit about a step the skill does not name:\n%s", p.Diff)
	}
	// using-entire's one failure was a login its run worked around
	// (labelled so in testdata/corpus/labels-real.jsonl): nothing to change.
	ue := filepath.Join(s.Home, ".codex", "skills", "using-entire", "SKILL.md")
	ueText, err := os.ReadFile("../lifecycle/testdata/using-entire/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(ue), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ue, ueText, 0o644); err != nil {
		t.Fatal(err)
	}
	if np, err := s.SkillPropose(ctx, cli, SkillProposeParams{Skill: "using-entire"}); err != nil || np.Diff != "" || np.Incidents != 0 {
		t.Errorf("using-entire: %v %+v", err, np)
	}

	// Remote callers cannot write, ask the LLM or read other files.
	for _, rp := range []SkillProposeParams{{Skill: "verify", Write: true}, {Skill: "verify", LLM: true},
		{Skill: "verify", File: "/etc/passwd"}} {
		if _, err := s.SkillPropose(ctx, Caller{Surface: cortex.SurfaceMCP}, rp); cortex.ErrorCode(err) != cortex.CodeInvalid {
			t.Errorf("remote %+v: %v", rp, err)
		}
	}

	// An LLM answer that applies cleanly replaces the proposal; a rewrite
	// is rejected and the deterministic proposal stands. Both are audited.
	fake := &fakeLLM{answer: "Here is the diff:\n\n```diff\n" + p.Diff + "```\n"}
	if err := s.EnableLLM(ctx, llm.DefaultConfig(), func(string) (llm.Provider, error) { return fake, nil }); err != nil {
		t.Fatal(err)
	}
	lp, err := s.SkillPropose(ctx, cli, SkillProposeParams{Skill: "verify", LLM: true})
	if err != nil || lp.LLM == nil || !lp.LLM.Accepted || lp.Source != "llm" || lp.New != p.New {
		t.Fatalf("llm proposal: %v %+v", err, lp.LLM)
	}
	if len(fake.prompts) != 1 || !strings.Contains(fake.prompts[0], `<untrusted-evidence source="cortex skill_propose json"`) ||
		!strings.Contains(fake.prompts[0], "I'll run them") {
		t.Errorf("prompt: %.400s", fake.prompts[0])
	}
	fake.answer = udiff.Unified("a/SKILL.md", "b/SKILL.md", string(orig), "# Verify\n\nRewritten.\n")
	rj, err := s.SkillPropose(ctx, cli, SkillProposeParams{Skill: "verify", LLM: true})
	if err != nil || rj.LLM.Accepted || rj.LLM.Rejected == "" || rj.Source != "deterministic" || rj.Diff != p.Diff {
		t.Errorf("rejected llm proposal: %v %+v", err, rj.LLM)
	}
	inv, err := s.Invocations(ctx, cortex.InvocationParams{Action: llm.ActionSkillPropose})
	if err != nil || len(inv.Invocations) != 2 {
		t.Errorf("audit: %v %d", err, len(inv.Invocations))
	}

	// --write changes the file; the next proposal has nothing to add.
	w, err := s.SkillPropose(ctx, cli, SkillProposeParams{Skill: "verify", Write: true})
	if err != nil || !w.Written {
		t.Fatal(err, w.Written)
	}
	if got, _ := os.ReadFile(file); string(got) != p.New {
		t.Error("the written file is not the proposal")
	}
	again, err := s.SkillPropose(ctx, cli, SkillProposeParams{Skill: "verify"})
	if err != nil || again.Diff != "" {
		t.Errorf("after writing: %v\n%s", err, again.Diff)
	}
	if err := writeSkillFile(file, p.FileSHA256, p.New); cortex.ErrorCode(err) != cortex.CodeConflict {
		t.Errorf("writing over a changed file: %v", err)
	}

	// Evals: skill-creator's format, with where each came from.
	out := t.TempDir()
	ev, err := s.SkillEvals(ctx, cli, SkillEvalsParams{Skill: "verify", Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.EvalSet.Evals) != 1 || ev.EvalSet.SkillName != "verify" || len(ev.Written) != 3 || len(ev.TriggerEvals) == 0 {
		t.Fatalf("evals: %+v", ev)
	}
	raw, err := os.ReadFile(filepath.Join(out, "evals", "evals.json"))
	if err != nil {
		t.Fatal(err)
	}
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		t.Fatal(err)
	}
	schemaRaw, err := os.ReadFile("../lifecycle/testdata/evals.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var sc jsonschema.Schema
	if err := json.Unmarshal(schemaRaw, &sc); err != nil {
		t.Fatal(err)
	}
	rs, err := sc.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(inst); err != nil {
		t.Errorf("evals.json does not validate: %v", err)
	}
	asks := false
	for _, e := range ev.EvalSet.Evals {
		for _, x := range e.Expectations {
			asks = asks || strings.Contains(x, "asks before optional extra steps")
		}
	}
	if !asks {
		t.Errorf("no eval expects asking before optional steps: %+v", ev.EvalSet.Evals)
	}
	if _, err := s.SkillEvals(ctx, Caller{Surface: cortex.SurfaceREST}, SkillEvalsParams{Skill: "verify", Out: out}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("remote out: %v", err)
	}
}
