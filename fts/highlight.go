package fts

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// snippetTerm is a search term as snippets find it: its folded tokens, in
// order (a phrase has several), the last one a prefix when prefix is set.
type snippetTerm struct {
	tokens []string
	prefix bool
}

// snippetTerms reads the terms of a parsed query for highlighting.
func snippetTerms(q Query) []snippetTerm {
	var out []snippetTerm
	for _, g := range q.Groups {
		for _, t := range g {
			st := snippetTerm{tokens: Tokens(t.Text)}
			if len(st.tokens) > 0 {
				st.prefix = t.Prefix
				out = append(out, st)
			}
		}
	}
	return out
}

// token is a word of a text as FTS5's unicode61 tokenizer cuts it: a run
// of letters, numbers and private-use characters, compared case- and
// diacritic-insensitively (fold).
type token struct {
	start, end int
	fold       string
}

// tokenize cuts text into tokens.
func tokenize(text string) []token {
	var out []token
	start := -1
	for i, r := range text {
		if IsTokenChar(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, token{start, i, foldToken(text[start:i])})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, token{start, len(text), foldToken(text[start:])})
	}
	return out
}

// foldToken folds a run of token characters as the tokenizer does (case
// and diacritics removed, marks dropped; see Tokens).
func foldToken(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	return strings.Join(Tokens(s), "")
}

// sameStem reports whether two folded words have the same inflectional
// stem as the index's Porter stemmer cuts it (its step 1: plurals, -ed,
// -ing, -y), so "leaks", "leaked" and "leaking" mark "leak", but "time"
// does not mark "timeout". Words the stemmer joins only by derivational
// suffixes ("connection", "connect") are matched by the index but not
// marked: a missing mark, never a wrong one.
func sameStem(a, b string) bool { return porterStep1(a) == porterStep1(b) }

// porterStep1 applies step 1 (1a, 1b, 1c) of M. F. Porter's stemming
// algorithm ("An algorithm for suffix stripping", 1980) to a lower-case
// word; words of other scripts pass unchanged.
func porterStep1(w string) string {
	if len(w) <= 2 || strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "ies"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"):
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	cut := ""
	switch {
	case strings.HasSuffix(w, "eed"):
		if measure(w[:len(w)-3]) > 0 {
			w = w[:len(w)-1]
		}
	case strings.HasSuffix(w, "ed") && hasVowel(w[:len(w)-2]):
		cut = w[:len(w)-2]
	case strings.HasSuffix(w, "ing") && hasVowel(w[:len(w)-3]):
		cut = w[:len(w)-3]
	}
	if cut != "" {
		w = cut
		n := len(w)
		switch {
		case strings.HasSuffix(w, "at"), strings.HasSuffix(w, "bl"), strings.HasSuffix(w, "iz"):
			w += "e"
		case n >= 2 && w[n-1] == w[n-2] && consonant(w, n-1) && !strings.ContainsRune("lsz", rune(w[n-1])):
			w = w[:n-1]
		case measure(w) == 1 && endsCVC(w):
			w += "e"
		}
	}
	if strings.HasSuffix(w, "y") && hasVowel(w[:len(w)-1]) {
		w = w[:len(w)-1] + "i"
	}
	return w
}

// consonant reports whether w[i] is a consonant in Porter's sense (y after
// a consonant is a vowel).
func consonant(w string, i int) bool {
	switch w[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !consonant(w, i-1)
	}
	return true
}

// measure is Porter's m: the number of vowel-consonant sequences in w.
func measure(w string) int {
	m, vowel := 0, false
	for i := range len(w) {
		c := consonant(w, i)
		if vowel && c {
			m++
		}
		vowel = !c
	}
	return m
}

func hasVowel(w string) bool {
	for i := range len(w) {
		if !consonant(w, i) {
			return true
		}
	}
	return false
}

// endsCVC reports whether w ends consonant-vowel-consonant, the last not
// w, x or y.
func endsCVC(w string) bool {
	n := len(w)
	return n >= 3 && consonant(w, n-1) && !consonant(w, n-2) && consonant(w, n-3) && !strings.ContainsRune("wxy", rune(w[n-1]))
}

// Excerpt returns a one-line excerpt of text, at most about width bytes,
// around the first match of any term of q, and the byte ranges of the
// matches in it (what a viewer emphasises): whole tokens as the index
// matches them, phrases, prefixes, and words of the same inflectional
// stem (the index stems English words). White space runs become one
// space; cut ends get "…". Both stores cut their hits' snippets with it.
func Excerpt(text string, q Query, width int) (string, [][2]int) {
	return highlight(text, snippetTerms(q), width)
}

// highlight returns a one-line excerpt of text, at most about width
// bytes, around the first match of any term, and the byte ranges of the
// matches in it. White space runs become one space; cut ends get "…".
func highlight(text string, terms []snippetTerm, width int) (string, [][2]int) {
	toks := tokenize(text)
	var matches [][2]int
	for i := range toks {
		for _, t := range terms {
			if i+len(t.tokens) > len(toks) {
				continue
			}
			ok := true
			for j, want := range t.tokens {
				got := toks[i+j].fold
				if !(got == want || t.prefix && j == len(t.tokens)-1 && strings.HasPrefix(got, want) || sameStem(got, want)) {
					ok = false
					break
				}
			}
			if ok {
				matches = append(matches, [2]int{toks[i].start, toks[i+len(t.tokens)-1].end})
				break
			}
		}
	}
	pos := 0
	if len(matches) > 0 {
		pos = matches[0][0]
	}
	start := max(0, pos-width/3)
	for start > 0 && start < len(text) && !utf8Start(text[start]) {
		start--
	}
	end := min(len(text), start+width)
	for end > start && end < len(text) && !utf8Start(text[end]) {
		end--
	}
	// Copy the window, white space collapsed, mapping offsets.
	var b strings.Builder
	at := make(map[int]int, 2*len(matches))
	want := map[int]bool{}
	for _, m := range matches {
		want[m[0]], want[m[1]] = true, true
	}
	if start > 0 {
		b.WriteString("…")
	}
	space := false
	for i, r := range text[start:end] {
		off := start + i
		if want[off] {
			if space {
				b.WriteByte(' ')
				space = false
			}
			at[off] = b.Len()
		}
		if unicode.IsSpace(r) {
			space = b.Len() > 0 && !(start > 0 && b.Len() == len("…"))
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if want[end] {
		at[end] = b.Len()
	}
	var ranges [][2]int
	for _, m := range matches {
		s, ok1 := at[m[0]]
		e, ok2 := at[m[1]]
		if ok1 && ok2 && e > s {
			ranges = append(ranges, [2]int{s, e})
		}
	}
	out := b.String()
	if end < len(text) {
		out += "…"
	}
	return out, ranges
}
