package sqlite

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/cortexhq/cortex"
)

// Limits on user search input.
const (
	maxQueryBytes = 512
	maxQueryTerms = 32
)

// ftsTerm is one parsed search term.
type ftsTerm struct {
	text   string
	phrase bool
	prefix bool
	or     bool // joined to the previous term with OR
}

// BuildFTSQuery turns user search text into a safe FTS5 MATCH expression.
// Words and "quoted phrases" must all match; word* matches a prefix; an
// uppercase OR between two terms matches either. Nothing else is FTS
// syntax: hyphens, quotes, colons, parentheses and NEAR are taken
// literally (each term becomes an FTS5 string), so no input can produce an
// FTS syntax error. It also returns the plain words for snippets.
func BuildFTSQuery(input string) (string, []string, error) {
	if len(input) > maxQueryBytes {
		return "", nil, cortex.Errorf(cortex.CodeInvalid, "search query is longer than %d bytes", maxQueryBytes)
	}
	// FTS5 reads its query up to the first NUL byte: a NUL inside a quoted
	// term would end the string early ("unterminated string"). Treat it as
	// a space.
	terms := parseTerms(strings.ReplaceAll(input, "\x00", " "))
	var parts []string
	var words []string
	for _, t := range terms {
		if !hasTokenChar(t.text) {
			continue
		}
		if len(parts) >= maxQueryTerms {
			return "", nil, cortex.Errorf(cortex.CodeInvalid, "search query has more than %d terms", maxQueryTerms)
		}
		q := `"` + strings.ReplaceAll(t.text, `"`, `""`) + `"`
		if t.prefix {
			q += "*"
		}
		if t.or && len(parts) > 0 {
			parts[len(parts)-1] = parts[len(parts)-1] + " OR " + q
		} else {
			parts = append(parts, q)
		}
		words = append(words, t.text)
	}
	if len(parts) == 0 {
		return "", nil, cortex.Errorf(cortex.CodeInvalid, "search query %q has no searchable words", input)
	}
	for i, p := range parts {
		if strings.Contains(p, " OR ") {
			parts[i] = "(" + p + ")"
		}
	}
	return strings.Join(parts, " AND "), words, nil
}

func parseTerms(s string) []ftsTerm {
	var out []ftsTerm
	nextOr := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			var text string
			if end < 0 {
				text = s[i+1:]
				i = len(s)
			} else {
				text = s[i+1 : i+1+end]
				i += end + 2
			}
			out = append(out, ftsTerm{text: text, phrase: true, or: nextOr})
			nextOr = false
		default:
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' && s[j] != '\r' && s[j] != '"' {
				j++
			}
			w := s[i:j]
			i = j
			if w == "OR" && len(out) > 0 {
				nextOr = true
				continue
			}
			t := ftsTerm{text: w, or: nextOr}
			nextOr = false
			if strings.HasSuffix(w, "*") && len(w) > 1 {
				t.text = strings.TrimRight(w, "*")
				// A prefix only makes sense on a single token.
				t.prefix = hasTokenChar(t.text) && !strings.ContainsFunc(t.text, func(r rune) bool { return !isTokenChar(r) })
			}
			out = append(out, t)
		}
	}
	return out
}

// isTokenChar mirrors FTS5's unicode61 tokenizer: letters, numbers and
// private-use characters are token characters.
func isTokenChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

func hasTokenChar(s string) bool { return strings.IndexFunc(s, isTokenChar) >= 0 }

// snippetTerm is a search term as snippets find it: its folded tokens, in
// order (a phrase has several), the last one a prefix when prefix is set.
type snippetTerm struct {
	tokens []string
	prefix bool
}

// snippetTerms reads the terms of a search query (see BuildFTSQuery) for
// highlighting.
func snippetTerms(query string) []snippetTerm {
	var out []snippetTerm
	for _, t := range parseTerms(strings.ReplaceAll(query, "\x00", " ")) {
		var st snippetTerm
		for _, tok := range tokenize(t.text) {
			st.tokens = append(st.tokens, tok.fold)
		}
		if len(st.tokens) > 0 {
			st.prefix = t.prefix
			out = append(out, st)
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
		if isTokenChar(r) || start >= 0 && unicode.Is(unicode.Mn, r) {
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

// foldToken lower-cases a token and removes its diacritics (as
// remove_diacritics does: é → e).
func foldToken(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
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

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
