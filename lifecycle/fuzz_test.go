package lifecycle

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/cortexhq/cortex"
)

// FuzzPropose checks proposals against any SKILL.md text and any quoted
// line: they never panic, insert only, and their diff applies to the text
// and gives the proposal's new text.
func FuzzPropose(f *testing.F) {
	f.Add("# Ship\n\n1. Run `gh pr create`.\n2. Push.\n", "1. Run `gh pr create`.", "gh pr create")
	f.Add("---\nname: x\n---\n| a | b |\n|---|---|\n| run `x` | y |\n\nAfter:\n\n```sh\nx\n```\n", "| run `x` | y |", "x")
	f.Add("", "", "")
	f.Add("no newline at end", "no newline at end", "newline")
	f.Fuzz(func(t *testing.T, text, quote, value string) {
		fs := []Finding{{IncidentID: "skill-inc-1", Finding: cortex.Finding{Category: "missing_authentication",
			HintValues:  map[string]string{"command": value, "program": value},
			SkillQuotes: []cortex.SkillQuote{{Line: 1, Source: "skill_doc", Text: quote}}}},
			{IncidentID: "skill-inc-2", Finding: cortex.Finding{Category: "stale_file_state"}}}
		p := Propose("x", "/s/x/SKILL.md", text, fs)
		if p.Diff == "" {
			return
		}
		if strings.Contains(p.Diff, "\n-") && !strings.Contains(p.Diff, "\n--- ") {
			t.Fatalf("a proposal removed a line:\n%s", p.Diff)
		}
		files, _, err := gitdiff.Parse(strings.NewReader(p.Diff))
		if err != nil || len(files) != 1 {
			t.Fatalf("diff does not parse: %v\n%s", err, p.Diff)
		}
		var out bytes.Buffer
		if err := gitdiff.Apply(&out, strings.NewReader(withNewline(text)), files[0]); err != nil {
			t.Fatalf("diff does not apply: %v\n%q\n%s", err, text, p.Diff)
		}
		if out.String() != p.New {
			t.Fatalf("applied diff differs from the new text:\n%q\n%q", out.String(), p.New)
		}
	})
}

// FuzzAcceptDiff checks the acceptance of a model's answer (untrusted):
// no panic, and an accepted answer changes the text by a small edit.
func FuzzAcceptDiff(f *testing.F) {
	text := "# Ship\n\n1. Run the tests.\n2. Push.\n"
	f.Add(text, "--- a/SKILL.md\n+++ b/SKILL.md\n@@ -3,2 +3,3 @@\n 1. Run the tests.\n+   - Stop on failure.\n 2. Push.\n")
	f.Add(text, "```diff\n--- a/SKILL.md\n+++ b/SKILL.md\n@@ -1 +1 @@\n-# Ship\n+# Ship it\n```")
	f.Add("", "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+x\n")
	f.Fuzz(func(t *testing.T, text, answer string) {
		nt, d, err := AcceptDiff("/s/SKILL.md", text, answer)
		if err != nil {
			return
		}
		if nt == withNewline(text) || d == "" {
			t.Fatalf("accepted an answer that changes nothing: %q", answer)
		}
		removed := 0
		for _, l := range strings.Split(d, "\n") {
			if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "--- ") {
				removed++
			}
		}
		if removed > maxLLMDeleted {
			t.Fatalf("accepted %d removed lines", removed)
		}
	})
}
