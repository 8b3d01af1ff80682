package lifecycle

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cortexhq/cortex"
)

var t0 = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

func TestVersionsFoldPartialsAndCountRuns(t *testing.T) {
	bodies := map[string]Body{
		"aaaa1111": {Version: "aaaa1111", Text: "# Skill\n\nStep one.\nStep two.", Lines: 4, Complete: true},
		"bbbb2222": {Version: "bbbb2222", Text: "# Skill\n\nStep one.", Lines: 3, Complete: false}, // a partial read of aaaa
		"cccc3333": {Version: "cccc3333", Text: "# Skill\n\nStep one, carefully.\nStep two.", Lines: 4, Complete: true},
	}
	loads := []Load{
		{Version: "bbbb2222", At: t0, Tool: cortex.ToolCodex, Session: "s1", Path: "/a/SKILL.md"},
		{Version: "aaaa1111", At: t0.Add(time.Hour), Tool: cortex.ToolClaude, Session: "s2"},
		{Version: "cccc3333", At: t0.Add(48 * time.Hour), Tool: cortex.ToolClaude, Session: "s3"},
	}
	runs := []Run{
		{Session: "s1", Start: t0, Version: "aaaa1111", Incident: true},
		{Session: "s2", Start: t0.Add(time.Hour), Version: "aaaa1111"},
		{Session: "s3", Start: t0.Add(48 * time.Hour), Version: "cccc3333"},
		{Session: "s4", Start: t0.Add(50 * time.Hour)}, // version unknown
	}
	vs := Versions(loads, runs, bodies)
	if len(vs) != 2 {
		t.Fatalf("versions = %+v, want 2 (the partial read folded)", vs)
	}
	if v := vs[0]; v.Version != "aaaa1111" || v.Ordinal != 1 || v.Runs != 2 || v.Incidents != 1 || v.Loads != 2 ||
		v.Sessions != 2 || strings.Join(v.Agents, ",") != "claude,codex" || len(v.Partials) != 1 || !v.Complete {
		t.Errorf("v1 = %+v", v)
	}
	if v := vs[1]; v.Version != "cccc3333" || v.Ordinal != 2 || v.Runs != 1 || v.FirstSeen != "2026-06-03T10:00:00.000Z" {
		t.Errorf("v2 = %+v", v)
	}
	for name, want := range map[string]string{"v2": "cccc3333", "aaaa": "aaaa1111", "AAAA11": "aaaa1111"} {
		if v, ok := Resolve(vs, name); !ok || v.Version != want {
			t.Errorf("Resolve(%q) = %v %v", name, v.Version, ok)
		}
	}
	for _, name := range []string{"v3", "aa", "dddd", ""} {
		if _, ok := Resolve(vs, name); ok {
			t.Errorf("Resolve(%q) found a version", name)
		}
	}
	d := Diff(bodies["aaaa1111"], bodies["cccc3333"])
	if !strings.Contains(d, "-Step one.\n+Step one, carefully.\n") || !strings.HasPrefix(d, "--- a/aaaa1111/SKILL.md\n+++ b/cccc3333/SKILL.md\n") {
		t.Errorf("diff:\n%s", d)
	}
	// A run's version: its complete body wins over a partial one.
	rs := []Run{{}, {}}
	RunVersions(rs, [][]int64{{1, 2}, {3}}, map[int64]string{1: "aaaa1111", 2: "bbbb2222", 3: "bbbb2222"}, bodies)
	if rs[0].Version != "aaaa1111" || rs[1].Version != "aaaa1111" {
		t.Errorf("run versions = %q %q", rs[0].Version, rs[1].Version)
	}
}

func TestScoreAndGrade(t *testing.T) {
	cases := []struct {
		runs, incidents, severe, friction int
		score                             float64
		grade                             string
	}{
		{0, 0, 0, 0, 100, "A"},
		{10, 0, 0, 0, 100, "A"},
		{10, 1, 0, 0, 95, "A"},
		{10, 2, 1, 1, 85, "B"},
		{4, 2, 1, 2, 57.5, "D"},
		{1, 1, 1, 3, 0, "F"},
		{3, 1, 0, 0, 83.3, "B"},
	}
	for _, c := range cases {
		s := Score(c.runs, c.incidents, c.severe, c.friction)
		if s != c.score || Grade(s) != c.grade {
			t.Errorf("Score(%d,%d,%d,%d) = %v %s, want %v %s", c.runs, c.incidents, c.severe, c.friction, s, Grade(s), c.score, c.grade)
		}
	}
}

func TestSkillHealth(t *testing.T) {
	runs := []Run{
		{Tool: cortex.ToolClaude, Session: "a", Start: t0, Incident: true, Label: "critical", Version: "v1", Friction: 1},
		{Tool: cortex.ToolCodex, Session: "b", Start: t0.Add(8 * 24 * time.Hour), Version: "v2"},
		{Tool: cortex.ToolCodex, Session: "c", Start: t0.Add(9 * 24 * time.Hour)},
	}
	h := SkillHealth("deploy", runs, []Version{{Version: "v1", Ordinal: 1}, {Version: "v2", Ordinal: 2}},
		[]Finding{{IncidentID: "i1", Finding: cortex.Finding{Category: "skill_did_more_than_asked", Confidence: "low"}},
			{IncidentID: "i2", Finding: cortex.Finding{Category: "skill_did_more_than_asked", Confidence: "low"}},
			{IncidentID: "i2", Finding: cortex.Finding{Category: "skill_did_more_than_asked", Confidence: "low"}},
			{IncidentID: "i1", Finding: cortex.Finding{Category: "stale_file_state", Confidence: "low"}},
			{IncidentID: "i1", Finding: cortex.Finding{Category: "missing_authentication", Confidence: "high"}},
			{IncidentID: "i1", Finding: cortex.Finding{Category: "unknown"}}}, 2)
	if h.Runs != 3 || h.Incidents != 1 || h.Severe != 1 || h.Sessions != 3 || !h.Provisional || h.UnknownVersionRuns != 1 {
		t.Errorf("health = %+v", h.Stats)
	}
	if h.Score != Score(3, 1, 1, 1) || h.IncidentRateCI.Low <= 0 || h.IncidentRateCI.High >= 1 {
		t.Errorf("score %v ci %+v", h.Score, h.IncidentRateCI)
	}
	if len(h.Weekly) != 2 || h.Weekly[0].Week != "2026-W23" || h.Weekly[0].Incidents != 1 || h.Weekly[1].Runs != 2 {
		t.Errorf("weekly = %+v", h.Weekly)
	}
	if len(h.TopFindings) != 3 || h.TopFindings[0].Category != "skill_did_more_than_asked" || h.TopFindings[0].Incidents != 2 ||
		h.TopFindings[1].Category != "missing_authentication" || h.TopFindings[1].Confidence != "high" {
		t.Errorf("top findings = %+v", h.TopFindings)
	}
	if len(h.Versions) != 2 || h.Versions[0].Runs != 1 || h.Versions[0].Grade != "F" || h.Versions[1].Grade != "A" {
		t.Errorf("versions = %+v", h.Versions)
	}
	hs := []Health{{Skill: "b", Stats: Stats{Score: 50, Runs: 1}}, {Skill: "a", Stats: Stats{Score: 50, Runs: 4}}, {Skill: "c", Stats: Stats{Score: 10}}}
	WorstFirst(hs)
	if hs[0].Skill != "c" || hs[1].Skill != "a" || hs[2].Skill != "b" {
		t.Errorf("worst first = %v %v %v", hs[0].Skill, hs[1].Skill, hs[2].Skill)
	}
}

func TestCompareVerdicts(t *testing.T) {
	side := func(runs, inc int) Side {
		var rs []Run
		for i := range runs {
			rs = append(rs, Run{Incident: i < inc})
		}
		return NewSide("x", rs)
	}
	cases := []struct {
		name               string
		before, after      Side
		verdict            string
		minNeeded, maxNeed int
	}{
		{"one run each (the real verify split)", side(1, 1), side(1, 0), VerdictNotEnoughRuns, 4, 40},
		{"no runs after", side(5, 2), side(0, 0), VerdictNotEnoughRuns, 0, 0},
		{"clearly better", side(14, 11), side(10, 1), VerdictBetter, 0, 0},
		{"clearly worse", side(10, 1), side(14, 11), VerdictWorse, 0, 0},
		{"same rate, many runs", side(40, 10), side(40, 10), VerdictNoDifference, 0, 0},
		{"same rate, few runs", side(4, 1), side(4, 1), VerdictNotEnoughRuns, 100, 1000},
		{"no incidents at all, few runs", side(3, 0), side(3, 0), VerdictNotEnoughRuns, 20, 200},
		{"small difference", side(30, 9), side(30, 6), VerdictNotEnoughRuns, 100, 2000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Compare("s", c.before, c.after)
			if got.Verdict != c.verdict || got.RunsNeeded < c.minNeeded || got.RunsNeeded > c.maxNeed && c.maxNeed > 0 {
				t.Errorf("verdict %s, runs needed %d (p %v): %s", got.Verdict, got.RunsNeeded, got.PValue, got.Message)
			}
			if (got.Verdict == VerdictBetter || got.Verdict == VerdictWorse) && got.PValue >= Significance {
				t.Errorf("claimed an effect with p = %v", got.PValue)
			}
		})
	}
}

func readSkill(t *testing.T, name string) (string, string) {
	t.Helper()
	p := filepath.Join("testdata", name, "SKILL.md")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, string(b)
}

// applyGit applies a unified diff to text with go-gitdiff (strict: every
// context line must match).
func applyGit(t *testing.T, diff, text string) string {
	t.Helper()
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil || len(files) != 1 {
		t.Fatalf("parse diff: %v (%d files)\n%s", err, len(files), diff)
	}
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, strings.NewReader(text), files[0]); err != nil {
		t.Fatalf("apply: %v\n%s", err, diff)
	}
	return out.String()
}

// TestProposeOnRealSkill proposes edits to the real using-entire SKILL.md
// from the findings its incidents had on the real corpus (entire dispatch
// failed with "dispatch requires login", the finding quoting the skill's
// table row that sends the agent to run it).
func TestProposeOnRealSkill(t *testing.T) {
	path, text := readSkill(t, "using-entire")
	fs := []Finding{
		{IncidentID: "skill-inc-8efe24469e62e72f02dd5a44f4d49e08", Finding: cortex.Finding{Category: "missing_authentication",
			Confidence: "high", EvidenceIDs: []int64{7706, 7708}, HintValues: map[string]string{"command": "entire dispatch", "program": "entire"},
			SkillQuotes: []cortex.SkillQuote{{Line: 54, Source: "skill_doc",
				Text: `| Generate a dispatch / summary | "summarize recent work" / "generate a dispatch" / "what was accomplished this week" | run ` + "`entire dispatch`" + ` directly |`}}}},
		{IncidentID: "skill-inc-837adc4c3dc9acf7fbe53aeb80609bd4", Finding: cortex.Finding{Category: "skill_did_more_than_asked",
			Confidence: "low", EvidenceIDs: []int64{8400}}},
		{IncidentID: "skill-inc-x", Finding: cortex.Finding{Category: "unknown"}},
	}
	p := Propose("using-entire", path, text, fs)
	if len(p.Hunks) != 2 || len(p.Skipped) != 1 || p.Skipped[0].Category != "unknown" {
		t.Fatalf("hunks %+v skipped %+v", p.Hunks, p.Skipped)
	}
	// The login preflight goes after the table that holds the quoted row,
	// never inside it.
	auth := p.Hunks[0]
	if l := strings.Join(auth.Lines, "\n"); auth.Categories[0] != "missing_authentication" || !strings.Contains(l, "`entire dispatch`") ||
		!strings.Contains(l, "`entire` is logged in") || auth.Lines[0] != "" {
		t.Errorf("auth hunk = %+v", auth)
	}
	lines := splitLines(text)
	if strings.HasPrefix(lines[auth.AfterLine-1], "|") && auth.AfterLine < len(lines) && strings.HasPrefix(lines[auth.AfterLine], "|") {
		t.Errorf("inserted inside the table after line %d", auth.AfterLine)
	}
	if !strings.Contains(p.Diff, "@@ missing_authentication (skill-inc-8efe24469e62e72f02dd5a44f4d49e08)") ||
		!strings.Contains(p.Diff, "+"+GuardrailsHeading) {
		t.Errorf("diff:\n%s", p.Diff)
	}
	// Small: only insertions, a few lines.
	if strings.Count(p.Diff, "\n-") != 0 || strings.Count(p.Diff, "\n+") > 9 {
		t.Errorf("not a small insertion-only diff:\n%s", p.Diff)
	}
	// The diff applies to the real file (go-gitdiff, strict) and gives
	// p.New; GNU patch agrees when it is installed.
	if got := applyGit(t, p.Diff, text); got != p.New {
		t.Errorf("applied diff differs from the proposal's new text")
	}
	if _, err := exec.LookPath("patch"); err == nil {
		dir := t.TempDir()
		f := filepath.Join(dir, "SKILL.md")
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("patch", "--dry-run", "-p1", f)
		cmd.Stdin = strings.NewReader(p.Diff)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("patch --dry-run: %v\n%s", err, out)
		}
	}
	// Deterministic, and idempotent: the patched file needs nothing more.
	if again := Propose("using-entire", path, text, fs); again.Diff != p.Diff {
		t.Error("the same findings gave a different diff")
	}
	if after := Propose("using-entire", path, p.New, fs); after.Diff != "" || len(after.Skipped) != 3 {
		t.Errorf("proposing against the patched file: diff %q skipped %+v", after.Diff, after.Skipped)
	}
}

func TestProposeUsesRulesSection(t *testing.T) {
	text := "---\nname: ship\n---\n# Ship\n\n1. Run the tests.\n2. Push.\n\n## Rules\n\n- Never force-push.\n\n## Examples\n\n```sh\nship\n```\n"
	p := Propose("ship", "/x/ship/SKILL.md", text, []Finding{{IncidentID: "i1", Finding: cortex.Finding{Category: "stale_file_state"}},
		{IncidentID: "i2", Finding: cortex.Finding{Category: "conflicts_with_user_instruction", HintValues: map[string]string{"verb": "push"},
			SkillQuotes: []cortex.SkillQuote{{Line: 5, Source: "skill_doc", Text: "2. Push."}}}}})
	want := "---\nname: ship\n---\n# Ship\n\n1. Run the tests.\n2. Push.\n   - Never push unless the user asked for it in this conversation: " +
		"the user's instructions override the steps of this skill.\n\n## Rules\n\n- Never force-push.\n" +
		"- Read a file right before editing it, and re-read it when anything else may have changed it; do not let parallel subagents edit the same file.\n" +
		"\n## Examples\n\n```sh\nship\n```\n"
	if p.New != want {
		t.Errorf("new text:\n%s\nwant:\n%s", p.New, want)
	}
	if got := applyGit(t, p.Diff, text); got != want {
		t.Errorf("diff does not apply to give the new text:\n%s", p.Diff)
	}
}

func validate(t *testing.T, schemaFile string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", schemaFile))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(inst); err != nil {
		t.Errorf("%s: %v\n%s", schemaFile, err, b)
	}
}

func TestBuildEvals(t *testing.T) {
	cases := []Case{
		{IncidentID: "skill-inc-1", Session: "s1", Prompt: "summarize recent work\x1b[31m", PromptLogID: 10, Incident: true,
			Correction: "no, log in first", Findings: []cortex.Finding{{Category: "missing_authentication",
				HintValues: map[string]string{"command": "entire dispatch", "program": "entire"}, EvidenceIDs: []int64{12, 11}}}},
		{IncidentID: "skill-inc-2", Session: "s2", Prompt: "what does this regex do?", Incident: true,
			Findings: []cortex.Finding{{Category: "wrong_skill_triggered"}}},
		{IncidentID: "skill-inc-3", Session: "s3", Prompt: "", Incident: true},
		{IncidentID: "skill-inc-4", Session: "s4", Prompt: "generate a dispatch for this week"},
	}
	e := BuildEvals("entire:using-entire", cases)
	if e.EvalSet.SkillName != "using-entire" || len(e.EvalSet.Evals) != 1 || e.Skipped != 1 {
		t.Fatalf("evals = %+v", e)
	}
	ev := e.EvalSet.Evals[0]
	if ev.ID != 1 || ev.Prompt != "summarize recent work[31m" || len(ev.Expectations) != 2 ||
		!strings.Contains(ev.Expectations[0], "`entire` is logged in before running `entire dispatch`") ||
		!strings.Contains(ev.Expectations[1], `"no, log in first"`) || !strings.Contains(ev.ExpectedOutput, "checks that `entire` is logged in") {
		t.Errorf("eval = %+v", ev)
	}
	if len(e.TriggerEvals) != 2 || e.TriggerEvals[0] != (TriggerEval{Query: "what does this regex do?", ShouldTrigger: false}) ||
		!e.TriggerEvals[1].ShouldTrigger {
		t.Errorf("trigger evals = %+v", e.TriggerEvals)
	}
	if len(e.Provenance) != 3 || e.Provenance[0].EvalID != 1 || e.Provenance[0].EvidenceIDs[0] != 11 {
		t.Errorf("provenance = %+v", e.Provenance)
	}
	validate(t, "evals.schema.json", e.EvalSet)
	validate(t, "trigger_evals.schema.json", e.TriggerEvals)
}

func TestAcceptDiff(t *testing.T) {
	text := "# Ship\n\n1. Run the tests.\n2. Push.\n3. Tell the user.\n"
	good := "--- a/SKILL.md\n+++ b/SKILL.md\n@@ -2,3 +2,4 @@\n \n 1. Run the tests.\n+   - Stop when they fail.\n 2. Push.\n"
	nt, d, err := AcceptDiff("/s/ship/SKILL.md", text, "Sure:\n```diff\n"+good+"```\nDone.")
	if err != nil || !strings.Contains(nt, "   - Stop when they fail.\n2. Push.") || !strings.Contains(d, "+   - Stop when they fail.") {
		t.Fatalf("accept: %v\n%s", err, d)
	}
	if _, _, err := AcceptDiff("/s/SKILL.md", text, good); err != nil {
		t.Errorf("an unfenced diff: %v", err)
	}
	stale := strings.Replace(good, " 2. Push.", " 2. Push to main.", 1)
	big := "--- a/SKILL.md\n+++ b/SKILL.md\n@@ -1,5 +1,1 @@\n-# Ship\n-\n-1. Run the tests.\n-2. Push.\n-3. Tell the user.\n+# New\n"
	two := good + "--- a/other.md\n+++ b/other.md\n@@ -1 +1 @@\n-x\n+y\n"
	for name, answer := range map[string]string{"no diff": "I would not change anything.", "context does not match": stale,
		"a rewrite": big, "two files": two} {
		if _, _, err := AcceptDiff("/s/SKILL.md", text, answer); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
