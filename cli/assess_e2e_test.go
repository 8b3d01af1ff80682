package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

// fakeGemini builds the fake Gemini CLI and writes a config that points
// [llm.gemini] at it in mode.
func fakeGemini(t *testing.T, e *env, mode string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gemini")
	cmd := exec.Command("go", "build", "-o", bin, "../internal/fakellm")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build fake gemini: %v\n%s", err, out)
	}
	cfg := filepath.Join(e.home, ".config", "cortex", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	body := "[llm]\nmax_invocations_per_minute = 2\n\n[llm.gemini]\nprogram = " + `"` + bin + `"` +
		"\nargs = [\"--fake-mode=" + mode + "\"]\nhome = " + `"` + e.home + `"` + "\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

type assessJSON struct {
	Target      string `json:"target"`
	Mode        string `json:"mode"`
	Assessments []struct {
		IncidentID    string `json:"incident_id"`
		Assessment    string `json:"assessment"`
		InvocationID  string `json:"invocation_id"`
		PromptBytes   int    `json:"prompt_bytes"`
		PromptPreview string `json:"prompt_preview"`
		Findings      struct {
			FailureModes []map[string]any `json:"likely_failure_modes"`
		} `json:"deterministic_findings"`
	} `json:"assessments"`
}

type invocationsJSON struct {
	Invocations []struct {
		ID            string `json:"id"`
		Action        string `json:"action"`
		Status        string `json:"status"`
		CallerSurface string `json:"caller_surface"`
		Provider      string `json:"provider"`
		Model         string `json:"model"`
		IncidentID    string `json:"incident_id"`
		PromptBytes   int64  `json:"prompt_bytes"`
		OutputBytes   *int64 `json:"output_bytes"`
		Hostname      string `json:"hostname"`
		PID           int    `json:"pid"`
	} `json:"invocations"`
	Total int `json:"total"`
}

// TestAssessEndToEnd runs `cortex assess` of the real binary on the
// labelled sessions with a fake Gemini CLI: findings and streamed
// Markdown on stdout, every attempt audited, limits enforced across runs.
func TestAssessEndToEnd(t *testing.T) {
	e := newEnv(t)
	db := filepath.Join(e.home, "c.db")
	if _, errOut, code := e.run("--db", db, "index", testcorpus.Labelled(t)); code != 0 {
		t.Fatal(errOut)
	}
	fakeGemini(t, e, "ok")

	out, errOut, code := e.run("--db", db, "assess", "skill", "lavra:lavra-plan")
	if code != 0 {
		t.Fatalf("assess skill: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"skill lavra:lavra-plan", "Findings", "Assessment (", "# Skill Improvement Assessment", "Prompt had ", "audited as llm-"} {
		if !strings.Contains(out, want) {
			t.Fatalf("assess output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "Findings") > strings.Index(out, "# Skill Improvement Assessment") {
		t.Fatalf("findings must come before the streamed assessment:\n%s", out)
	}

	var res assessJSON
	e.json(&res, "--db", db, "ai", "skill-assess", "lavra:lavra-plan", "--no-llm", "--json")
	if res.Mode != "no_llm" || len(res.Assessments) != 1 || res.Assessments[0].Assessment != "" || res.Assessments[0].InvocationID != "" ||
		len(res.Assessments[0].Findings.FailureModes) == 0 {
		t.Fatalf("--no-llm: %+v", res)
	}
	e.json(&res, "--db", db, "assess", "abuse", "--dry-run", "--json")
	if res.Mode != "dry_run" || len(res.Assessments) != 1 || !strings.HasPrefix(res.Assessments[0].PromptPreview, "You are assessing") {
		t.Fatalf("--dry-run: %+v", res)
	}

	// The second real run fills the per-minute limit of 2; the third is
	// refused with the busy exit code, and audited.
	if out, errOut, code := e.run("--db", db, "assess", "skill", "lavra:lavra-plan", "--json"); code != 0 {
		t.Fatalf("second run: %d %s%s", code, out, errOut)
	}
	_, errOut, code = e.run("--db", db, "assess", "skill", "lavra:lavra-plan")
	if code != 6 || !strings.Contains(errOut, "rate_limited_per_minute") {
		t.Fatalf("third run in a minute: exit %d, %s", code, errOut)
	}
	// MCP and hook assessments: the target forms resolve, each action has
	// its own limits, and the run goes through the same guarded runner.
	for _, args := range [][]string{{"mcp", "labby"}, {"hooks", "--hook", "post_tool_use:bash"}} {
		out, errOut, code := e.run(append([]string{"--db", db, "assess"}, args...)...)
		if code != 0 || !strings.Contains(out, "Matched ") || !strings.Contains(out, "Findings") ||
			!strings.Contains(out, "Prompt had ") || !strings.Contains(out, "audited as llm-") {
			t.Fatalf("assess %v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	// The kill switch.
	e.vars = append(e.vars, "CORTEX_LLM_ENABLED=false")
	_, errOut, code = e.run("--db", db, "assess", "abuse")
	if code == 0 || !strings.Contains(errOut, "disabled") {
		t.Fatalf("kill switch: exit %d, %s", code, errOut)
	}

	var audit invocationsJSON
	e.json(&audit, "--db", db, "ai", "llm-invocations", "--json")
	statuses := map[string]int{}
	for _, inv := range audit.Invocations {
		statuses[inv.Status]++
		if inv.Hostname == "" || inv.PID == 0 || inv.CallerSurface != "cli" || inv.Provider != "gemini" || inv.IncidentID == "" {
			t.Fatalf("audit row %+v", inv)
		}
	}
	if audit.Total != 7 || statuses["success"] != 4 || statuses["dry_run"] != 1 || statuses["rate_limited"] != 1 || statuses["disabled"] != 1 {
		t.Fatalf("audit: %d rows %v", audit.Total, statuses)
	}
	e.json(&audit, "--db", db, "ai", "llm-invocations", "--status", "success", "--action", "skill_assess", "--json")
	if audit.Total != 2 || *audit.Invocations[0].OutputBytes == 0 || audit.Invocations[0].Model != "gemini-3.1-flash-lite-preview" {
		t.Fatalf("success rows: %+v", audit)
	}

	_, errOut, code = e.run("--db", db, "assess", "skill", "no-such-skill")
	if code != 3 || !strings.Contains(errOut, "no-such-skill") || !strings.Contains(errOut, "try:") {
		t.Fatalf("unknown skill: exit %d, %s", code, errOut)
	}
	_, errOut, code = e.run("--db", db, "assess", "skill", "--incident-id", "skill-inc-0000", "--no-llm")
	if code != 3 || !strings.Contains(errOut, "skill-inc-0000") {
		t.Fatalf("unknown incident: exit %d, %s", code, errOut)
	}
	_, errOut, code = e.run("--db", filepath.Join(e.home, "none.db"), "assess", "skill")
	if code != 3 || !strings.Contains(errOut, "cortex index") {
		t.Fatalf("missing store: exit %d, %s", code, errOut)
	}
}

// TestAssessProviderFailureEndToEnd: a failing model is audited with its
// redacted stderr and the command fails.
func TestAssessProviderFailureEndToEnd(t *testing.T) {
	e := newEnv(t)
	db := filepath.Join(e.home, "c.db")
	e.run("--db", db, "index", testcorpus.Labelled(t))
	fakeGemini(t, e, "fail")
	out, errOut, code := e.run("--db", db, "assess", "skill", "lavra:lavra-plan")
	if code == 0 || !strings.Contains(errOut, "boom") || strings.Contains(out+errOut, "AAAAAAAAAAAAAAAAAAAA") {
		t.Fatalf("failing provider: exit %d\n%s%s", code, out, errOut)
	}
	var audit invocationsJSON
	e.json(&audit, "--db", db, "ai", "llm-invocations", "--status", "error", "--json")
	if audit.Total != 1 {
		t.Fatalf("audit: %+v", audit)
	}
}
