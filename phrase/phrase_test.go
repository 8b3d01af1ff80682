package phrase

import (
	"strings"
	"testing"
)

func TestWordBoundaries(t *testing.T) {
	s := NewSet("not found", "wrong repo", "stop, you", "is wrong", "hell", "that's not what i asked", "exit code")
	cases := []struct {
		text string
		want []string
	}{
		{"error: not found", []string{"not found"}},
		{"the not foundation layer", nil},
		{"NOT FOUND!", []string{"not found"}},
		{"not\n\tfound", []string{"not found"}},
		{"that’s not what I asked", []string{"that's not what i asked"}},
		{"Stop, you didn't need to", []string{"stop, you"}},
		{"hello shell hellish", nil},
		{"what the hell.", []string{"hell"}},
		{"the wrong repository", nil},
		{"wrong repo_name", nil},
		{"this is wrong; and the wrong repo", []string{"is wrong", "wrong repo"}},
		{"exit code 1", []string{"exit code"}},
		{"exit codes", nil},
		{"", nil},
	}
	for _, c := range cases {
		var got []string
		for _, m := range s.Find(c.text) {
			got = append(got, m.Phrase)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Find(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestPhraseWithPunctuationEdges(t *testing.T) {
	s := NewSet("no, that's", "--force")
	if !s.Contains("No, that's the wrong repo") {
		t.Error("phrase with inner punctuation")
	}
	if s.Contains("nono, that's") {
		t.Error("a word character before the phrase")
	}
	// A phrase starting with punctuation needs no boundary on that side.
	if !s.Contains("git push--force") {
		t.Error("leading punctuation phrase")
	}
}

func TestUnicodeBoundaries(t *testing.T) {
	s := NewSet("fix")
	if s.Contains("préfix") || s.Contains("fixé") {
		t.Error("letters outside ASCII are word characters")
	}
	if !s.Contains("«fix»") {
		t.Error("guillemets are boundaries")
	}
}

func TestFirstAndDedup(t *testing.T) {
	s := NewSet("b c", "a", "B  C", "")
	if len(s.Phrases()) != 2 {
		t.Errorf("phrases %v", s.Phrases())
	}
	if got := s.First("x a b c"); got != "a" {
		t.Errorf("First = %q", got)
	}
}

func FuzzFind(f *testing.F) {
	f.Add("that's not what i asked", "not what")
	f.Add("\xff\xfe not found", "not found")
	f.Fuzz(func(t *testing.T, text, p string) {
		s := NewSet(p)
		for _, m := range s.Find(text) {
			n := Normalize(text)
			if m.Pos < 0 || m.Pos+len(m.Phrase) > len(n) || n[m.Pos:m.Pos+len(m.Phrase)] != m.Phrase {
				t.Fatalf("bad match %+v in %q", m, n)
			}
		}
	})
}

// normalizeRunes is Normalize read rune by rune (its definition).
func normalizeRunes(text string) string {
	var b strings.Builder
	space := false
	for _, r := range text {
		space = foldRune(&b, r, space)
	}
	return b.String()
}

// Normalize's ASCII path gives what reading every rune gives.
func FuzzNormalizeAgrees(f *testing.F) {
	for _, s := range []string{"", "  Hello\tWORLD \n", "don`t  stop’", "Ünïcode\u00a0SPACE\u0085x", "\xff\xfeA\x80b", "\u201cQuoted\u201d \v\f\r",
		"ÀB\u2028c", "a\x00b\x1fc\x7fd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Normalize(s), normalizeRunes(s); got != want {
			t.Fatalf("Normalize(%q) = %q, reading every rune gives %q", s, got, want)
		}
	})
}

func BenchmarkNormalize(b *testing.B) {
	text := strings.Repeat("Please don't change the API  — just fix the failing Test in handler.go\n", 4)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Normalize(text)
	}
}
