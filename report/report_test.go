package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/assess"
)

// hostile is transcript text that tries to become markup in a report.
var hostile = []string{
	"<img src=x onerror=alert(1)> <script>alert(1)</script>",
	"[click](https://evil.example/x) ![pixel](https://evil.example/p.png)",
	"```\n# Heading\n```\n</details><h1>x</h1>",
	"| a | b |\n|---|---|\n| c | d |",
	"`` ` ``` `` **bold** _em_ ~~strike~~ <https://evil.example>",
	"line one\n\n# not a heading\n---\n* not a list",
	"\x1b[31mred\x1b[0m \u2028 \r\n",
}

// render renders Markdown the way GitHub would (GFM, raw HTML kept so a
// leak shows).
func render(t *testing.T, md string) string {
	t.Helper()
	var buf bytes.Buffer
	g := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := g.Convert([]byte(md), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// forbidden are the tags hostile text must never produce.
var forbidden = regexp.MustCompile(`<(a|img|script|h1|h2|h3|h4|table|strong|em|del|details|ul|li|hr)[ >]`)

func TestUntrustedTextNeverBecomesMarkup(t *testing.T) {
	for _, s := range hostile {
		for name, md := range map[string]string{
			"code":  "x " + Code(s, 0) + " y",
			"block": Block(s, 0),
			"prose": "x " + Prose(s) + " y",
		} {
			out := render(t, md)
			if m := forbidden.FindString(out); m != "" {
				t.Errorf("%s of %q renders %s:\n%s", name, s, m, out)
			}
			if strings.Contains(out, "\x1b") {
				t.Errorf("%s of %q keeps a control character", name, s)
			}
		}
	}
	// Bounds hold, and a cut never splits a rune.
	if c := Code(strings.Repeat("é", 200), 11); c != "`ééééé…`" {
		t.Errorf("bounded code %q", c)
	}
	if c := Code("", 10); c != "" {
		t.Errorf("empty code %q", c)
	}
	if c := Code("a``b", 0); c != "```a``b```" {
		t.Errorf("fence %q", c)
	}
	if c := Code("`x", 0); c != "`` `x ``" {
		t.Errorf("padded %q", c)
	}
	if b := Block("a ```` b", 0); !strings.HasPrefix(b, "`````text\n") || !strings.HasSuffix(b, "\n`````\n") {
		t.Errorf("block fence %q", b)
	}
	// Prose keeps its own backquoted values as code and escapes the rest.
	if p := Prose("Add a check to the \"a_b*\" skill: run `command -v jq` first"); p !=
		"Add a check to the \"a\\_b\\*\" skill: run `command -v jq` first" {
		t.Errorf("prose %q", p)
	}
}

func bundle(msg string) cortex.Bundle {
	exit := int64(1)
	res := int64(41)
	return cortex.Bundle{
		Incident: cortex.Incident{ID: "skill-inc-1", Lens: cortex.LensSkill, SkillName: msg, Tool: cortex.ToolClaude,
			SessionID: "s-1", Hostname: "h", Project: msg, FirstSeen: "2026-11-30T10:00:00.000Z", LastSeen: "2026-11-30T10:05:00.000Z",
			DurationSecs: 300, Label: "high", Score: 40, SignalsPresent: []string{"user_correction_after_skill"},
			SignalCounts: map[string]int{"user_correction_after_skill": 1}, CoActive: []string{msg}, AnchorLogIDs: []int64{7}},
		Findings: cortex.Findings{FailureModes: []cortex.Finding{{Category: "conflicts_with_user_instruction", Confidence: "low",
			EvidenceIDs: []int64{7}, Cause: msg, Why: `matched "don't commit"`,
			Hint:        "Make the \"" + msg + "\" skill follow the user's standing instructions: the user said not to `commit`.",
			SkillQuotes: []cortex.SkillQuote{{Line: 12, Text: msg, Source: "skill_doc"}, {Line: 1, Text: msg, Source: "command_output", LogID: 25}}}},
			Factors: []cortex.Factor{}, OpenQuestions: []string{"confirm in the transcript"}},
		UserVoice:     []cortex.EvidenceRow{{ID: 7, Timestamp: "2026-11-30T10:04:00.000Z", Role: "user", Kind: "prompt", Message: msg, Reaction: true}},
		Failures:      []cortex.ToolFailure{{EventID: 5, ResultLogID: &res, Timestamp: "2026-11-30T10:03:00.000Z", ToolName: "Bash", Class: "failed", ExitCode: &exit, Operation: "git commit", Line: msg}},
		SignalAnchors: []cortex.EvidenceRow{{ID: 8, Timestamp: "2026-11-30T10:04:30.000Z", Tool: cortex.ToolClaude, Role: "tool_result", Message: msg}},
	}
}

func TestInvestigationReport(t *testing.T) {
	inv := cortex.Investigation{Total: 2, Bundles: []cortex.Bundle{bundle("Don't commit anything, I review first.")},
		OtherMatching: []cortex.IncidentSummary{{ID: "skill-inc-2", Label: "low", Score: 12, FirstSeen: "2026-11-29T10:00:00Z",
			LastSeen: "2026-11-29T10:01:00Z", SessionID: "s-2"}}}
	md := Investigation(inv)
	for _, want := range []string{
		"# Cortex investigation — skill `Don't commit anything, I review first.`",
		"## `skill-inc-1` — HIGH (score 40)",
		"1. **conflicts\\_with\\_user\\_instruction** (low confidence) — rows 7",
		"   - cause: `Don't commit anything, I review first.`",
		"   - the skill says (line 12): `Don't commit anything, I review first.`",
		"   - its command printed (row 25, line 1): ",
		"the user said not to `commit`.",
		"- row 7, 10:04:00 (right after): ",
		"- tool call 5, row 41, 10:03:00 (failed), exit 1: `git commit`",
		"### Signal anchors",
		"- `skill-inc-2` — low, score 12",
		"    cortex show session s-1 --row 7",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if Investigation(inv) != md {
		t.Error("report is not deterministic")
	}
	// Every transcript value hostile at once: nothing becomes markup.
	for _, h := range hostile {
		out := render(t, Investigation(cortex.Investigation{Total: 1, Bundles: []cortex.Bundle{bundle(h)}}))
		if m := forbidden.FindString(stripOwn(out)); m != "" {
			t.Errorf("hostile %q renders %s", h, m)
		}
	}
	// No data: the suggestions, as code.
	md = Investigation(cortex.Investigation{NoData: true, SuggestedFilters: []string{"--since 30d"}})
	if !strings.Contains(md, "Nothing matched.") || !strings.Contains(md, "- try `--since 30d`") {
		t.Errorf("no data:\n%s", md)
	}
}

// stripOwn removes the markup the report itself writes (its lists,
// headings and emphasis), leaving what transcript text could add.
func stripOwn(html string) string {
	own := regexp.MustCompile(`(?s)<(ul|li|h1|h2|h3|strong|em|hr|ol)>`)
	return own.ReplaceAllString(html, "")
}

func TestAssessmentReport(t *testing.T) {
	b := bundle("x")
	res := assess.Result{Mode: assess.ModeLLM, Total: 1, Assessments: []assess.Assessment{{IncidentID: "skill-inc-1",
		Incident: b.Incident, Findings: b.Findings, InvocationID: "inv-1",
		Assessment: "# Skill Improvement Assessment\n\n<img src=x> ![p](https://evil.example/p.png)\n\n```diff\n- <old>\n+ # new\n```\n\n## 5. Proposed"}}}
	md := Assessment(res)
	for _, want := range []string{"# Cortex assessment — skill `x`", "### Assessment", "audited as `inv-1`",
		"### Skill Improvement Assessment", "&lt;img src=x>", "!\\[p](", "```diff\n- <old>\n+ # new\n```", "#### 5. Proposed"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	out := render(t, md)
	if strings.Contains(out, "<img") {
		t.Errorf("model markup leaked:\n%s", out)
	}
	// An unclosed fence in the model's answer is closed.
	if m := ModelMarkdown("```go\nx"); m != "```go\nx\n```" {
		t.Errorf("unclosed fence %q", m)
	}
	// Without an LLM run, the report says so.
	res.Mode, res.Assessments[0].Assessment, res.Assessments[0].InvocationID = assess.ModeNoLLM, "", ""
	if md := Assessment(res); !strings.Contains(md, "No LLM run") {
		t.Errorf("no-llm:\n%s", md)
	}
}
