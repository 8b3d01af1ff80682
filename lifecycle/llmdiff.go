package lifecycle

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// Limits of an LLM proposal: small edits, never a rewrite.
const (
	maxLLMDeleted   = 10
	maxLLMAdded     = 80
	maxDeletedShare = 0.2
)

// AcceptDiff checks a model's answer: it must hold one unified diff of
// one file that applies cleanly (every context and removed line matching)
// to text, and be small (at most 10 removed lines and a fifth of the file,
// at most 80 added). It returns the new text and the diff rendered again
// from it; an error says why the answer was rejected.
func AcceptDiff(path, text, answer string) (string, string, error) {
	d := extractDiff(answer)
	if strings.TrimSpace(d) == "" {
		return "", "", fmt.Errorf("the answer holds no unified diff")
	}
	files, _, err := gitdiff.Parse(strings.NewReader(d))
	if err != nil {
		return "", "", fmt.Errorf("the diff does not parse: %v", err)
	}
	if len(files) != 1 {
		return "", "", fmt.Errorf("the diff changes %d files, want 1", len(files))
	}
	f := files[0]
	if f.IsNew || f.IsDelete || f.IsRename || f.IsBinary || len(f.TextFragments) == 0 {
		return "", "", fmt.Errorf("the diff must only edit the file")
	}
	var added, deleted int64
	for _, fr := range f.TextFragments {
		added += fr.LinesAdded
		deleted += fr.LinesDeleted
	}
	lines := len(splitLines(text))
	if deleted > maxLLMDeleted || float64(deleted) > maxDeletedShare*float64(max(lines, 1)) || added > maxLLMAdded {
		return "", "", fmt.Errorf("the diff is not a small edit (%d lines removed, %d added)", deleted, added)
	}
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, strings.NewReader(withNewline(text)), f); err != nil {
		return "", "", fmt.Errorf("the diff does not apply to the current file: %v", err)
	}
	nt := out.String()
	if nt == withNewline(text) {
		return "", "", fmt.Errorf("the diff changes nothing")
	}
	return nt, udiff.Unified("a/"+baseName(path), "b/"+baseName(path), withNewline(text), nt), nil
}

// extractDiff takes the diff out of a model's answer: the first ```diff
// fence, else everything from the first "--- " line.
func extractDiff(s string) string {
	if i := strings.Index(s, "```diff"); i >= 0 {
		rest := s[i+len("```diff"):]
		if j := strings.Index(rest, "\n```"); j >= 0 {
			rest = rest[:j+1]
		}
		return strings.TrimLeft(rest, "\n")
	}
	if i := strings.Index(s, "--- "); i >= 0 && (i == 0 || s[i-1] == '\n') {
		s = s[i:]
		if j := strings.Index(s, "\n```"); j >= 0 {
			s = s[:j+1]
		}
		return s
	}
	return ""
}
