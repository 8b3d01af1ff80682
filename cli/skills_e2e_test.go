package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkillLifecycleEndToEnd runs the skill lifecycle commands through the
// real binary on the real corpus: versions and their diff, health, compare,
// a proposal applied with patch and written with --write, an LLM proposal
// from a configured `claude -p` (a fake program), evals written to a
// folder, and --print-prompt.
func TestSkillLifecycleEndToEnd(t *testing.T) {
	real := realCorpus(t)
	e := newEnv(t)
	db := filepath.Join(e.home, "c.db")
	if _, errOut, code := e.run("--db", db, "index", real); code != 0 {
		t.Fatalf("index: %s", errOut)
	}

	out, _, code := e.run("--db", db, "ai", "skill-versions", "verify", "--diff")
	if code != 0 || !strings.Contains(out, "verify: 2 version(s)") || !strings.Contains(out, "v1 f65d22fc4444") ||
		!strings.Contains(out, "+**Evidence has to reach the reader.**") {
		t.Fatalf("skill-versions:\n%s", out)
	}
	out, _, code = e.run("--db", db, "ai", "skill-health")
	if code != 0 || !strings.HasPrefix(out, "GRADE") || !strings.Contains(out, "using-entire") || !strings.Contains(out, "Grade: score =") {
		t.Fatalf("skill-health:\n%s", out)
	}
	var cmp struct {
		Verdict    string  `json:"verdict"`
		PValue     float64 `json:"p_value"`
		RunsNeeded int     `json:"runs_needed"`
	}
	e.json(&cmp, "--db", db, "ai", "skill-compare", "marvin:marvin", "--json")
	if cmp.Verdict != "not_enough_runs" || cmp.PValue != 1 || cmp.RunsNeeded == 0 {
		t.Errorf("skill-compare: %+v", cmp)
	}
	if _, errOut, code := e.run("--db", db, "ai", "skill-versions", "no-such-skill"); code != 3 || !strings.Contains(errOut, "no runs or loads") {
		t.Errorf("unknown skill: exit %d %s", code, errOut)
	}

	// The verify skill's SKILL.md where Claude Code keeps a user's skill
	// in this HOME (its 2.1.170 run ran the browser tests the user said
	// they would run themselves).
	orig, err := os.ReadFile("../lifecycle/testdata/verify/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.home, ".claude", "skills", "verify")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "SKILL.md")
	if err := os.WriteFile(file, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	patchText, errOut, code := e.run("--db", db, "ai", "skill-propose", "verify")
	if code != 0 || !strings.Contains(patchText, "# cortex ai skill-propose verify: "+file) ||
		!strings.Contains(patchText, "skill_did_more_than_asked (skill-inc-") {
		t.Fatalf("skill-propose: %s\n%s", errOut, patchText)
	}
	if _, err := exec.LookPath("patch"); err == nil {
		cmd := exec.Command("patch", "-p1", "--dry-run", "-d", dir)
		cmd.Stdin = strings.NewReader(patchText)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("patch -p1: %v\n%s", err, b)
		}
	}
	prompt, _, code := e.run("--db", db, "ai", "skill-propose", "verify", "--print-prompt")
	if code != 0 || !strings.Contains(prompt, "<untrusted-evidence") || !strings.Contains(prompt, "Verification is runtime observation") {
		t.Errorf("--print-prompt:\n%.300s", prompt)
	}

	// --llm through a configured claude -p: a fake program answering with
	// the deterministic diff, which applies.
	diffOnly := patchText[strings.Index(patchText, "--- "):]
	answer := filepath.Join(e.home, "answer.diff")
	if err := os.WriteFile(answer, []byte("```diff\n"+diffOnly+"```\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(e.home, "fake-claude")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\ncat > /dev/null\ncat "+answer+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(e.home, "cortex.toml")
	if err := os.WriteFile(cfg, []byte("[llm.actions.skill_propose]\nprovider = \"claude\"\n\n[llm.claude]\nprogram = \""+fake+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = e.run("--config", cfg, "--db", db, "ai", "skill-propose", "verify", "--llm", "--write")
	if code != 0 || !strings.Contains(out, "# LLM proposal accepted") || !strings.Contains(errOut, "wrote "+file) {
		t.Fatalf("--llm --write: exit %d\n%s%s", code, out, errOut)
	}
	got, _ := os.ReadFile(file)
	if !strings.Contains(string(got), "Ask before optional extra steps") || len(got) <= len(orig) {
		t.Errorf("the file was not written:\n%s", got)
	}
	var audit struct {
		Invocations []struct {
			Action   string `json:"action"`
			Provider string `json:"provider"`
			Status   string `json:"status"`
		} `json:"invocations"`
	}
	e.json(&audit, "--db", db, "ai", "llm-invocations", "--action", "skill_propose", "--json")
	if len(audit.Invocations) != 1 || audit.Invocations[0].Provider != "claude" || audit.Invocations[0].Status != "success" {
		t.Errorf("audit: %+v", audit.Invocations)
	}

	out, _, code = e.run("--db", db, "ai", "skill-evals", "verify", "--out", filepath.Join(e.home, "ev"))
	if code != 0 || !strings.Contains(out, "evals.json") {
		t.Fatalf("skill-evals --out:\n%s", out)
	}
	for _, f := range []string{"evals.json", "trigger_evals.json", "provenance.json"} {
		if _, err := os.Stat(filepath.Join(e.home, "ev", "evals", f)); err != nil {
			t.Error(err)
		}
	}
	var evals struct {
		SkillName string `json:"skill_name"`
		Evals     []struct {
			Prompt       string   `json:"prompt"`
			Expectations []string `json:"expectations"`
		} `json:"evals"`
	}
	e.json(&evals, "--db", db, "ai", "skill-evals", "verify")
	if evals.SkillName != "verify" || len(evals.Evals) != 1 || len(evals.Evals[0].Expectations) == 0 ||
		!strings.Contains(evals.Evals[0].Expectations[0], "asks before optional extra steps") {
		t.Errorf("skill-evals: %+v", evals)
	}

	// assess --print-prompt prints the prompt and runs nothing.
	out, _, code = e.run("--db", db, "assess", "skill", "using-entire", "--print-prompt")
	if code != 0 || !strings.Contains(out, "<untrusted-evidence") {
		t.Errorf("assess --print-prompt: exit %d\n%.300s", code, out)
	}
}
