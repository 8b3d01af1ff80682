package transcript

import (
	"strings"
	"testing"
)

// FuzzSkillBody checks the body normalization on any text and arguments:
// it never panics, is deterministic, and leaves no CRLF, no trailing white
// space on a line and no blank line at either end.
func FuzzSkillBody(f *testing.F) {
	f.Add("Base directory for this skill: /x/y\n\n---\nname: y\n---\n# Y\r\nRun it.  \n\n\nARGUMENTS: go", "go")
	f.Add("# Verify\n\n## User Request\n\nVerify the thing", "Verify the thing")
	f.Add("---\nname: x\n", "")
	f.Fuzz(func(t *testing.T, text, args string) {
		got := SkillBody(text, args)
		if got != SkillBody(text, args) {
			t.Fatal("not deterministic")
		}
		if strings.Contains(got, "\r\n") || strings.HasPrefix(got, "\n") || strings.HasSuffix(got, "\n") {
			t.Fatalf("line ends or blank ends kept: %q", got)
		}
		for _, l := range strings.Split(got, "\n") {
			if strings.TrimRight(l, " \t") != l {
				t.Fatalf("trailing white space kept: %q", l)
			}
		}
		if len(SkillVersion(got)) != 64 {
			t.Fatal("version is not a SHA-256")
		}
	})
}
