package report

import (
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/assess"
)

// Assessment renders an assessment as Markdown: per incident its facts
// and deterministic findings, then the model's assessment (or why there is
// none: no LLM run, a dry run, a refusal), then the other matching
// incidents. The model wrote its Markdown from untrusted evidence: its
// headings are nested under the incident, and images and raw HTML in it
// are neutralised (see [ModelMarkdown]).
func Assessment(res assess.Result) string {
	var d doc
	var bs []cortex.Bundle
	for _, a := range res.Assessments {
		bs = append(bs, cortex.Bundle{Incident: a.Incident})
	}
	d.f("# Cortex assessment%s\n\n", title(bs, res.Matched))
	if res.Message != "" {
		d.f("%s\n\n", Prose(res.Message))
	}
	if len(res.Assessments) == 0 {
		d.f("No incidents to assess.\n")
		for _, s := range res.SuggestedFilters {
			d.f("- try %s\n", Code(s, maxLine))
		}
		return d.String()
	}
	for _, a := range res.Assessments {
		d.head(a.Incident)
		d.findings(a.Findings)
		d.f("### Assessment\n\n")
		switch {
		case a.Assessment != "":
			note := ""
			if a.OutputTruncated {
				note = "; cut at the output bound"
			}
			d.f("_Written by a model from the evidence above; audited as %s%s._\n\n", Code(a.InvocationID, maxValue), note)
			d.WriteString(ModelMarkdown(a.Assessment))
			d.f("\n\n")
		case a.Error != "":
			d.f("No assessment: %s (audited as %s).\n\n", Prose(a.Error), Code(a.InvocationID, maxValue))
		case a.Skipped != "":
			d.f("Skipped: %s\n\n", Prose(a.Skipped))
		case res.Mode == assess.ModeDryRun:
			d.f("Dry run (audited as %s): the prompt is %d bytes, %d of them evidence; no model was called.\n\n",
				Code(a.InvocationID, maxValue), a.PromptBytes, a.EvidenceBytes)
		default:
			d.f("No LLM run: the findings above are the deterministic ones.\n\n")
		}
	}
	d.others(res.OtherMatching, res.Total, "assess")
	d.footer(bs)
	return d.String()
}

// ModelMarkdown neutralises what a model's Markdown must not do in a
// report: outside fenced code, headings are nested two levels down, "<"
// is written as an entity (no raw HTML) and an image ("![") becomes plain
// text (no request to a URL the evidence chose). Fenced code is kept as
// is.
func ModelMarkdown(s string) string {
	s = safe(s, true)
	lines := strings.Split(s, "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if fence != "" {
			if c := strings.TrimRight(t, " "); strings.HasPrefix(c, fence) && strings.Trim(c, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOf(t); f != "" {
			fence = f
			continue
		}
		if strings.HasPrefix(t, "#") {
			l = "##" + t
		}
		l = strings.ReplaceAll(l, "<", "&lt;")
		l = strings.ReplaceAll(l, "![", "!\\[")
		lines[i] = l
	}
	if fence != "" {
		// An unclosed fence would swallow the rest of the report.
		lines = append(lines, fence)
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// fenceOf returns the fence a line opens (``` or ~~~, three or more), or
// "".
func fenceOf(t string) string {
	for _, c := range []string{"`", "~"} {
		n := 0
		for n < len(t) && t[n] == c[0] {
			n++
		}
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}
