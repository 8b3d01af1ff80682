package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/cortexhq/cortex"
)

// EvalSet is an evals.json in the format of Anthropic's skill-creator
// (references/schemas.md: skill_name, evals[] with id, prompt,
// expected_output, files, expectations).
type EvalSet struct {
	SkillName string `json:"skill_name"`
	Evals     []Eval `json:"evals"`
}

// Eval is one eval case.
type Eval struct {
	ID             int      `json:"id"`
	Prompt         string   `json:"prompt"`
	ExpectedOutput string   `json:"expected_output"`
	Files          []string `json:"files"`
	Expectations   []string `json:"expectations"`
}

// TriggerEval is a trigger eval of skill-creator's description optimizer
// ({"query", "should_trigger"}).
type TriggerEval struct {
	Query         string `json:"query"`
	ShouldTrigger bool   `json:"should_trigger"`
}

// Provenance says where an eval came from (kept beside evals.json, whose
// format has no place for it).
type Provenance struct {
	EvalID      int      `json:"eval_id,omitempty"`
	Query       string   `json:"query,omitempty"`
	IncidentID  string   `json:"incident_id"`
	Session     string   `json:"ai_session_id"`
	PromptLogID int64    `json:"prompt_log_id,omitempty"`
	Categories  []string `json:"finding_categories,omitempty"`
	EvidenceIDs []int64  `json:"evidence_ids,omitempty"`
}

// Case is one run turned into evals: the prompt the user typed that
// started it, what they said when it went wrong, and its findings.
type Case struct {
	IncidentID  string
	Session     string
	Prompt      string
	PromptLogID int64
	// Correction is the user's own words correcting the run ("" none).
	Correction string
	Findings   []cortex.Finding
	// Incident is false for a run without a negative signal (a positive
	// trigger example only).
	Incident bool
}

// Evals is the answer of skill-evals.
type Evals struct {
	EvalSet      EvalSet       `json:"evals_json"`
	TriggerEvals []TriggerEval `json:"trigger_evals"`
	Provenance   []Provenance  `json:"provenance"`
	// Skipped counts incidents with no prompt to replay.
	Skipped int `json:"skipped_without_prompt"`
}

// maxEvalText bounds a prompt or correction quoted in an eval.
const maxEvalText = 4000

// maxTriggerPositives bounds the should_trigger: true examples taken from
// runs that went well.
const maxTriggerPositives = 10

// triggerCategories are the finding categories that say the skill should
// not have run.
var triggerCategories = []string{"wrong_skill_triggered", "ambiguous_skill_trigger"}

// BuildEvals turns a skill's runs into evals: every incident whose prompt
// is known becomes an eval (the real prompt; the expected output and
// expectations from the user's correction and the findings); runs of a
// wrong trigger become should_trigger: false trigger evals, runs without an
// incident should_trigger: true ones (at most 10). Deterministic.
func BuildEvals(skill string, cases []Case) Evals {
	out := Evals{EvalSet: EvalSet{SkillName: evalSkillName(skill), Evals: []Eval{}}, TriggerEvals: []TriggerEval{},
		Provenance: []Provenance{}}
	positives := 0
	seenQuery := map[string]bool{}
	for _, c := range cases {
		prompt := evalText(c.Prompt)
		if prompt == "" {
			if c.Incident {
				out.Skipped++
			}
			continue
		}
		var cats []string
		var ev []int64
		for _, f := range c.Findings {
			if f.Category == "unknown" {
				continue
			}
			cats = append(cats, f.Category)
			ev = append(ev, f.EvidenceIDs...)
		}
		slices.Sort(ev)
		ev = slices.Compact(ev)
		wrongTrigger := slices.ContainsFunc(cats, func(c string) bool { return slices.Contains(triggerCategories, c) })
		if (wrongTrigger || !c.Incident) && !seenQuery[prompt] && (c.Incident || positives < maxTriggerPositives) {
			seenQuery[prompt] = true
			out.TriggerEvals = append(out.TriggerEvals, TriggerEval{Query: prompt, ShouldTrigger: !wrongTrigger})
			out.Provenance = append(out.Provenance, Provenance{Query: prompt, IncidentID: c.IncidentID, Session: c.Session,
				PromptLogID: c.PromptLogID, Categories: cats, EvidenceIDs: ev})
			if !c.Incident {
				positives++
			}
		}
		if !c.Incident || wrongTrigger && len(cats) == 1 {
			continue
		}
		e := Eval{ID: len(out.EvalSet.Evals) + 1, Prompt: prompt, Files: []string{}, Expectations: []string{}}
		var want []string
		for _, f := range c.Findings {
			if x := Expectation(f); x != "" && !slices.Contains(e.Expectations, x) {
				e.Expectations = append(e.Expectations, x)
				want = append(want, strings.TrimSuffix(x, "."))
			}
		}
		corr := evalText(c.Correction)
		if corr != "" {
			e.Expectations = append(e.Expectations, fmt.Sprintf("Does not draw the user's correction again: %q.", corr))
		}
		switch {
		case len(want) > 0:
			e.ExpectedOutput = "The skill completes the request, and: " + strings.ToLower(want[0][:1]) + want[0][1:]
			for _, w := range want[1:] {
				e.ExpectedOutput += "; " + strings.ToLower(w[:1]) + w[1:]
			}
			e.ExpectedOutput += "."
		default:
			e.ExpectedOutput = "The skill completes the request the way the user asked for it."
		}
		if corr != "" {
			e.ExpectedOutput += fmt.Sprintf(" In the recorded run the user had to say: %q.", corr)
		}
		if len(e.Expectations) == 0 {
			e.Expectations = append(e.Expectations, "Completes the request without the user having to stop or correct it.")
		}
		out.EvalSet.Evals = append(out.EvalSet.Evals, e)
		out.Provenance = append(out.Provenance, Provenance{EvalID: e.ID, IncidentID: c.IncidentID, Session: c.Session,
			PromptLogID: c.PromptLogID, Categories: cats, EvidenceIDs: ev})
	}
	return out
}

// expectations are the verifiable statements a category adds to an eval.
var expectations = map[string]string{
	"skill_did_more_than_asked":              "Does only what the prompt asks; asks before optional extra steps (browser checks, full test runs, commits, pushes).",
	"conflicts_with_user_instruction":        "Does not {verb} unless the user asks for it.",
	"missing_authentication":                 "Checks that {program} is logged in before running {command}, and asks the user to log in instead of retrying.",
	"missing_repository_setup":               "Checks the repository setup (git repository, origin remote, upstream) before running {command}.",
	"command_not_found":                      "Checks that {program} is installed before using it.",
	"shell_portability":                      "Runs shell commands that work under zsh and bash (no unmatched globs, no GNU-only flags).",
	"missing_dependency":                     "Checks that {dep} is installed before the step that needs it.",
	"tool_rejects_documented_value":          "Does not pass {value}, which the tool rejects.",
	"timeout_or_rate_limit":                  "Uses an explicit timeout and a readiness check for slow steps; retries at most once.",
	"permission_denied":                      "Does not work around a permission error with sudo or another location.",
	"http_error_from_script":                 "Checks the target exists before calling the API and reports a failed request ({code}) instead of retrying.",
	"stale_file_state":                       "Reads each file right before editing it.",
	"skill_scope_mismatch":                   "Stays within the scope the user asked for.",
	"missing_prerequisite_check":             "Checks credentials, tools and the working directory before acting.",
	"wrong_source_of_truth":                  "Confirms the repository, branch and directory before changing anything.",
	"overly_broad_research_loop":             "Stops after two failed attempts at {command} and changes approach or asks.",
	"tool_policy_mismatch":                   "Uses the tool or script the skill names.",
	"missing_verification_step":              "Verifies the result (tests or live state) before claiming success.",
	"stale_or_conflicting_skill_instruction": "Follows the user where the skill's instructions conflict with them.",
	"assistant_overexplained_simple_answer":  "Answers the question first, in one or two sentences.",
}

// Expectation returns the verifiable statement a finding adds to an eval
// ("" when its category has none).
func Expectation(f cortex.Finding) string {
	t, ok := expectations[f.Category]
	if !ok {
		return ""
	}
	return fill(t, evalDefaults, f.HintValues)
}

// evalDefaults name what an expectation is about when the evidence named
// no value.
var evalDefaults = map[string]string{"verb": "commit, push or delete anything", "program": "the tool it needs",
	"command": "the failing command", "dep": "the module it needs", "value": "values the tool does not document",
	"code": "an HTTP error"}

// evalSkillName is the name skill-creator matches against the skill's
// front matter: the skill part of plugin:skill.
func evalSkillName(skill string) string {
	if _, s, ok := strings.Cut(skill, ":"); ok && s != "" {
		return s
	}
	return skill
}

// evalText is a user's words fit for an eval file: control characters
// (terminal escapes) dropped, white space kept, bounded.
func evalText(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	return cortex.CutUTF8(strings.TrimSpace(s), maxEvalText)
}
