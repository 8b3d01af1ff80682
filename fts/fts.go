// Package fts is Cortex's full-text search language and tokenizer, shared
// by both stores: Parse reads what a user typed (words, "quoted phrases",
// word* prefixes, OR) into a Query each store renders in its own syntax
// (an FTS5 MATCH expression, a PostgreSQL tsquery); Tokens splits text into
// the words a row is found by — the rules of SQLite FTS5's unicode61
// tokenizer with remove_diacritics 2; Indexer reduces them to the English
// stems the SQLite store's search file holds (with FTS5's own porter
// tokenizer), so the PostgreSQL store, which indexes those terms, finds the
// same rows as the SQLite store; Excerpt cuts the snippet shown with a hit
// and finds its matches.
package fts

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
)

// Limits on user search input.
const (
	MaxQueryBytes = 512
	MaxQueryTerms = 32
)

// Term is one search term: a phrase of one or more tokens (a word or a
// "quoted phrase"), or with Prefix a single token's prefix.
type Term struct {
	Text   string
	Prefix bool
}

// Query is a parsed search: every group must match, and a group matches
// when any of its terms does.
type Query struct {
	Groups [][]Term
	// Words are the terms' texts, for snippets.
	Words []string
}

type rawTerm struct {
	text   string
	prefix bool
	or     bool // joined to the previous term with OR
}

// Parse reads user search text. Words and "quoted phrases" must all match;
// word* matches a prefix; an uppercase OR between two terms matches either.
// Nothing else is syntax: hyphens, quotes, colons, parentheses and NEAR are
// taken literally (a term with several tokens is a phrase). A query longer
// than MaxQueryBytes, with more than MaxQueryTerms terms, or without a
// searchable word is an invalid-argument error.
func Parse(input string) (Query, error) {
	var q Query
	if len(input) > MaxQueryBytes {
		return q, cortex.Errorf(cortex.CodeInvalid, "search query is longer than %d bytes", MaxQueryBytes)
	}
	// FTS5 reads its query up to the first NUL byte: treat NUL as a space.
	for _, t := range parseTerms(strings.ReplaceAll(input, "\x00", " ")) {
		if !HasTokenChar(t.text) {
			continue
		}
		if len(q.Groups) >= MaxQueryTerms {
			return Query{}, cortex.Errorf(cortex.CodeInvalid, "search query has more than %d terms", MaxQueryTerms)
		}
		term := Term{Text: t.text, Prefix: t.prefix}
		if t.or && len(q.Groups) > 0 {
			q.Groups[len(q.Groups)-1] = append(q.Groups[len(q.Groups)-1], term)
		} else {
			q.Groups = append(q.Groups, []Term{term})
		}
		q.Words = append(q.Words, t.text)
	}
	if len(q.Groups) == 0 {
		return Query{}, cortex.Errorf(cortex.CodeInvalid, "search query %q has no searchable words", input)
	}
	return q, nil
}

func parseTerms(s string) []rawTerm {
	var out []rawTerm
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
			out = append(out, rawTerm{text: text, or: nextOr})
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
			t := rawTerm{text: w, or: nextOr}
			nextOr = false
			if strings.HasSuffix(w, "*") && len(w) > 1 {
				t.text = strings.TrimRight(w, "*")
				// A prefix only makes sense on a single token.
				t.prefix = HasTokenChar(t.text) && !strings.ContainsFunc(t.text, func(r rune) bool { return !IsTokenChar(r) })
			}
			out = append(out, t)
		}
	}
	return out
}

// IsTokenChar reports whether FTS5's unicode61 tokenizer keeps r in a
// token (letters, numbers, private-use and unassigned code points, and
// the diacritical marks it drops).
func IsTokenChar(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	_, sep := slices.BinarySearchFunc(separators, r, func(rg [2]rune, r rune) int {
		switch {
		case rg[1] < r:
			return -1
		case rg[0] > r:
			return 1
		}
		return 0
	})
	return !sep
}

// HasTokenChar reports whether s holds a token character.
func HasTokenChar(s string) bool { return strings.IndexFunc(s, IsTokenChar) >= 0 }

// Tokens returns the tokens of text as SQLite FTS5's unicode61 tokenizer
// with remove_diacritics 2 makes them: runs of token characters, case
// folded, letters with diacritics written without them, marks dropped.
// The tables behind it are generated from FTS5 itself (see tables.go).
func Tokens(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				b.WriteByte(c)
			case 'A' <= c && c <= 'Z':
				b.WriteByte(c + 'a' - 'A')
			default:
				flush()
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if !IsTokenChar(r) {
			flush()
			continue
		}
		if j, ok := slices.BinarySearchFunc(folds, r, func(f [2]rune, r rune) int { return cmp.Compare(f[0], r) }); ok {
			r = folds[j][1]
		}
		if r != 0 {
			b.WriteRune(r)
		}
	}
	flush()
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
