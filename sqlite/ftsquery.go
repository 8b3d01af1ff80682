package sqlite

import (
	"slices"
	"strings"
	"unicode"

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

// snippet returns a one-line excerpt of text around the first occurrence of
// any of words (case-insensitive), at most width bytes.
func snippet(text string, words []string, width int) string {
	lower, offs := lowerOffsets(text)
	pos := -1
	for _, w := range words {
		w, _ = lowerOffsets(strings.TrimSpace(w))
		if w == "" {
			continue
		}
		if i := strings.Index(lower, w); i >= 0 && (pos < 0 || offs[i] < pos) {
			pos = offs[i]
		}
	}
	if pos < 0 {
		pos = 0
	}
	start := max(0, pos-width/3)
	for start > 0 && start < len(text) && !utf8Start(text[start]) {
		start--
	}
	end := min(len(text), start+width)
	for end > start && end < len(text) && !utf8Start(text[end]) {
		end--
	}
	out := strings.Join(strings.Fields(text[start:end]), " ")
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "…"
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// highlights finds the byte ranges of words (case-insensitive) in a
// snippet, in order, without overlaps.
func highlights(text string, words []string) [][2]int {
	lower, offs := lowerOffsets(text)
	var out [][2]int
	for _, w := range words {
		w, _ = lowerOffsets(strings.TrimSpace(w))
		if w == "" {
			continue
		}
		for i := 0; ; {
			j := strings.Index(lower[i:], w)
			if j < 0 {
				break
			}
			start, endL := i+j, i+j+len(w)
			end := len(text)
			if endL < len(offs) {
				end = offs[endL]
			}
			out = append(out, [2]int{offs[start], end})
			i = endL
		}
	}
	slices.SortFunc(out, func(a, b [2]int) int { return a[0] - b[0] })
	merged := out[:0]
	for _, r := range out {
		if n := len(merged); n > 0 && r[0] < merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	return merged
}

// lowerOffsets lower-cases s rune by rune and maps each byte of the result
// to the offset of the rune of s it came from: lower-casing changes the
// length of some runes (U+023A "Ⱥ" grows from 2 to 3 bytes, U+212A "K"
// shrinks from 3 to 1), so offsets in the lower-cased text are not offsets
// in s.
func lowerOffsets(s string) (string, []int) {
	var b strings.Builder
	b.Grow(len(s))
	offs := make([]int, 0, len(s))
	for i, r := range s {
		b.WriteRune(unicode.ToLower(r))
		for len(offs) < b.Len() {
			offs = append(offs, i)
		}
	}
	return b.String(), offs
}
