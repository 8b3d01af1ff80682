// Package phrase matches fixed phrases in free text: case-insensitive, on
// word boundaries ("not found" does not match "not foundation"), with
// typographic apostrophes and runs of white space folded. Sets are
// immutable and safe for concurrent use.
package phrase

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Set is a precompiled list of phrases.
type Set struct {
	phrases []string // normalized, longest first (a longer phrase wins a tie)
	// index finds the phrases in one pass (nil when a phrase is shorter
	// than 3 bytes: then each phrase is searched for in turn).
	index *Index
}

// NewSet compiles phrases. Empty phrases are ignored.
func NewSet(phrases ...string) *Set {
	s := &Set{}
	seen := map[string]bool{}
	for _, p := range phrases {
		n := Normalize(p)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		s.phrases = append(s.phrases, n)
	}
	sort.SliceStable(s.phrases, func(i, j int) bool { return len(s.phrases[i]) > len(s.phrases[j]) })
	s.index = NewIndex(s.phrases)
	return s
}

// Phrases returns the normalized phrases.
func (s *Set) Phrases() []string { return append([]string(nil), s.phrases...) }

// Normalize lower-cases text, folds typographic quotes to ASCII and runs of
// white space to one space. ASCII bytes take a path of their own (most
// text is ASCII: the friction lens normalizes every prompt it compares);
// the result is the same as folding every rune with foldRune.
func Normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	space := false
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ' ' || '\t' <= c && c <= '\r': // unicode.IsSpace's ASCII
				space = true
				continue
			case c == '`':
				c = '\''
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			}
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteByte(c)
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		space = foldRune(&b, r, space)
	}
	return b.String()
}

// foldRune writes r to b as Normalize does (space: white space precedes
// it, unwritten) and returns whether white space is pending.
func foldRune(b *strings.Builder, r rune, space bool) bool {
	switch r {
	case '\u2018', '\u2019', '\u02bc', '`':
		r = '\''
	case '\u201c', '\u201d':
		r = '"'
	}
	if unicode.IsSpace(r) {
		return true
	}
	if space && b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteRune(unicode.ToLower(r))
	return false
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// bounded reports whether text[i:j] stands on word boundaries: the
// characters around it are not word characters (when the phrase itself
// starts or ends with a word character).
func bounded(text, p string, i int) bool {
	j := i + len(p)
	first, _ := utf8.DecodeRuneInString(p)
	last, _ := utf8.DecodeLastRuneInString(p)
	if isWord(first) && i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(text[:i]); isWord(r) {
			return false
		}
	}
	if isWord(last) && j < len(text) {
		if r, _ := utf8.DecodeRuneInString(text[j:]); isWord(r) {
			return false
		}
	}
	return true
}

// Match is one phrase found in a text.
type Match struct {
	Phrase string
	// Pos is the byte offset in the normalized text.
	Pos int
}

// FindNormalized returns every phrase of the set found in norm (a
// Normalize result), ordered by position; each phrase once, at its first
// bounded occurrence.
func (s *Set) FindNormalized(norm string) []Match {
	if s.index == nil {
		return s.findEach(norm)
	}
	// One pass: positions come in order, so each phrase's first bounded
	// occurrence is the one kept, and the result is ordered by position,
	// then set order, as findEach's.
	var out []Match
	found := make([]bool, len(s.phrases))
	s.index.Scan(norm, func(i, at int) bool {
		if !found[i] && bounded(norm, s.phrases[i], at) {
			found[i] = true
			out = append(out, Match{Phrase: s.phrases[i], Pos: at})
		}
		return len(out) < len(s.phrases)
	})
	return out
}

// findEach is FindNormalized searching for each phrase in turn.
func (s *Set) findEach(norm string) []Match {
	var out []Match
	for _, p := range s.phrases {
		for from := 0; from < len(norm); {
			i := strings.Index(norm[from:], p)
			if i < 0 {
				break
			}
			i += from
			if bounded(norm, p, i) {
				out = append(out, Match{Phrase: p, Pos: i})
				break
			}
			from = i + 1
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Pos < out[b].Pos })
	return out
}

// Find normalizes text and returns the phrases found in it.
func (s *Set) Find(text string) []Match { return s.FindNormalized(Normalize(text)) }

// Contains reports whether any phrase of the set is in text.
func (s *Set) Contains(text string) bool { return len(s.Find(text)) > 0 }

// First returns the earliest phrase found in text, or "".
func (s *Set) First(text string) string {
	m := s.Find(text)
	if len(m) == 0 {
		return ""
	}
	return m[0].Phrase
}
