package voice

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cortexhq/cortex/phrase"
)

// pattern is a compiled expression with the literal texts one of which
// every match contains (need, nil when not known). Most messages contain
// none of a category's texts, so the expression runs only where it could
// match: the answer is the expression's own, only cheaper.
type pattern struct {
	re   *regexp.Regexp
	need []string
}

func compile(expr string) *pattern {
	p := &pattern{re: regexp.MustCompile(expr)}
	p.need = need(expr)
	return p
}

// compileAlts compiles expr, an expression around the alternation of
// alts, whose every match contains a match of one of alts: its texts are
// the union of the alternatives' own (each parsed alone — the parser
// factors common prefixes out of an alternation, which would leave the
// analysis only the alternatives' tails).
func compileAlts(expr string, alts []string) *pattern {
	p := &pattern{re: regexp.MustCompile(expr)}
	for _, a := range alts {
		n := need(a)
		if n == nil {
			p.need = nil
			return p
		}
		p.need = union(p.need, n)
	}
	return p
}

// need is required of an expression's parse (nil when it does not parse).
func need(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	return required(re.Simplify())
}

// possible reports whether a match can occur in s: false only when s
// contains none of the texts every match contains.
func (p *pattern) possible(s string) bool {
	if p.need == nil {
		return true
	}
	for _, n := range p.need {
		if strings.Contains(s, n) {
			return true
		}
	}
	return false
}

// MatchString is p.re.MatchString.
func (p *pattern) MatchString(s string) bool { return p.possible(s) && p.re.MatchString(s) }

// required returns literal texts one of which every match of re contains,
// or nil when that is not known. It is sound by construction: a literal
// node contributes its text, an alternation the union of its branches'
// (nil if any branch's is unknown), a concatenation the best of its
// parts', and a repetition its body's only when the body must occur.
func required(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || len(re.Rune) == 0 || slices.Contains(re.Rune, utf8.RuneError) {
			// Case folding, and U+FFFD (which also matches invalid
			// UTF-8 bytes), have no single literal text.
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			n := required(sub)
			if n == nil {
				return nil
			}
			out = union(out, n)
		}
		return out
	case syntax.OpConcat:
		// The parts' own texts, and the texts of runs of adjacent parts
		// that match finitely many texts (joined: "you " + "missed").
		var best, run []string
		consider := func(n []string) {
			if n != nil && (best == nil || better(n, best)) {
				best = n
			}
		}
		for _, sub := range re.Sub {
			ex := exact(sub)
			if ex == nil {
				run = nil
				consider(required(sub))
				continue
			}
			if run = cross(run, ex); run == nil {
				run = ex
			}
			consider(run)
		}
		return best
	}
	return nil
}

// maxExact bounds the texts exact and cross enumerate.
const maxExact = 64

// exact returns every text re matches, when there are at most maxExact,
// or nil. Zero-width assertions match "" (where they hold).
func exact(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if required(re) == nil {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []string{""}
	case syntax.OpCapture:
		return exact(re.Sub[0])
	case syntax.OpQuest:
		if ex := exact(re.Sub[0]); ex != nil && len(ex) < maxExact {
			return union(ex, []string{""})
		}
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			ex := exact(sub)
			if ex == nil {
				return nil
			}
			if out = union(out, ex); len(out) > maxExact {
				return nil
			}
		}
		return out
	case syntax.OpConcat:
		out := []string{""}
		for _, sub := range re.Sub {
			ex := exact(sub)
			if ex == nil {
				return nil
			}
			if out = cross(out, ex); out == nil {
				return nil
			}
		}
		return out
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if r == utf8.RuneError || len(out) >= 8 {
					return nil
				}
				out = append(out, string(r))
			}
		}
		return out
	}
	return nil
}

// cross returns every a+b, or nil when a is nil or there would be more
// than maxExact.
func cross(a, b []string) []string {
	if a == nil || len(a)*len(b) > maxExact {
		return nil
	}
	var out []string
	for _, x := range a {
		for _, y := range b {
			out = union(out, []string{x + y})
		}
	}
	return out
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// better reports whether the texts a are a better filter than b: a longer
// shortest text (fewer chance hits: a sentence contains "the " far more
// often than "the skill says"), then fewer texts. Looking for a few dozen
// texts costs far less than one run of an expression.
func better(a, b []string) bool {
	ma, mb := shortest(a), shortest(b)
	return ma > mb || ma == mb && len(a) < len(b)
}

func shortest(ss []string) int {
	n := -1
	for _, s := range ss {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return n
}

// String is the expression's source text.
func (p *pattern) String() string { return p.re.String() }

// textIndex finds, in one pass over a sentence, which of a list of
// patterns can match it: those one of whose texts the sentence contains
// (and those without texts). Looking for every text of every pattern with
// strings.Contains would cost hundreds of searches per sentence.
type textIndex struct {
	always uint64      // patterns without texts
	short  []textEntry // texts under 3 bytes, looked for whole
	long   []textEntry // the others, found through index
	index  *phrase.Index
}

// textEntry is one text and the patterns (bits) it makes possible.
type textEntry struct {
	text string
	mask uint64
}

// newTextIndex indexes the texts of at most 64 patterns; bit i of a scan
// result stands for ps[i].
func newTextIndex(ps []*pattern) *textIndex {
	if len(ps) > 64 {
		panic("voice: more than 64 patterns in a text index")
	}
	ix := &textIndex{}
	add := func(list []textEntry, text string, bit uint64) []textEntry {
		for i := range list {
			if list[i].text == text {
				list[i].mask |= bit
				return list
			}
		}
		return append(list, textEntry{text, bit})
	}
	for i, p := range ps {
		bit := uint64(1) << i
		if p.need == nil {
			ix.always |= bit
			continue
		}
		for _, t := range p.need {
			if len(t) < 3 {
				ix.short = add(ix.short, t, bit)
			} else {
				ix.long = add(ix.long, t, bit)
			}
		}
	}
	texts := make([]string, len(ix.long))
	for i, e := range ix.long {
		texts[i] = e.text
	}
	ix.index = phrase.NewIndex(texts)
	return ix
}

// scan returns the patterns (bits) that can match s: a pattern whose bit
// is clear has a text every match contains, and s contains none of them.
func (ix *textIndex) scan(s string) uint64 {
	m := ix.always
	for _, e := range ix.short {
		if m&e.mask != e.mask && strings.Contains(s, e.text) {
			m |= e.mask
		}
	}
	if ix.index != nil {
		ix.index.Scan(s, func(i, _ int) bool {
			m |= ix.long[i].mask
			return true
		})
	}
	return m
}
