// Package report renders investigations and assessments as Markdown a
// user can paste into an issue or a pull request.
//
// Transcript text is untrusted: it never becomes markup. One-line values
// (a skill name, a user's sentence, an error line) are inline code spans,
// longer excerpts fenced code blocks, both delimited by more backticks than
// the text holds; the fixed wording of hints is escaped outside its own
// backquoted values. No link, image, HTML, heading or mention can come
// from a transcript. Reports are a pure function of their input.
package report

import (
	"strings"
	"unicode"

	"github.com/cortexhq/cortex"
)

// safe drops control characters (keeping newlines and tabs when
// multiline) and the Unicode line and paragraph separators.
func safe(s string, multiline bool) string {
	return strings.Map(func(r rune) rune {
		switch {
		case multiline && (r == '\n' || r == '\t'):
			return r
		case r == '\t':
			return ' '
		case unicode.IsControl(r), r == '\u2028', r == '\u2029', r == '\ufeff':
			return -1
		}
		return r
	}, s)
}

// oneLine flattens s to one line of at most max bytes (0: no bound).
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(safe(s, false)), " ")
	if max > 0 && len(s) > max {
		s = cortex.CutUTF8(s, max) + "…"
	}
	return s
}

// longestRun is the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// Code renders untrusted text as one inline code span of at most max
// bytes: flattened to one line, delimited by one backtick more than the
// longest run inside, padded when it starts or ends with a backtick.
// Inside a table cell a "|" would still end the cell: Code is never used
// in tables. Empty text renders as an empty string.
func Code(s string, max int) string {
	s = oneLine(s, max)
	if s == "" {
		return ""
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// Block renders untrusted text as a fenced code block of at most max
// bytes, fenced by more backticks than any run inside (at least three),
// with an info string of "text" so no renderer highlights it as code.
func Block(s string, max int) string {
	s = strings.TrimRight(safe(s, true), "\n ")
	if max > 0 && len(s) > max {
		s = cortex.CutUTF8(s, max) + "\n…"
	}
	fence := strings.Repeat("`", max3(longestRun(s, '`')+1))
	return fence + "text\n" + s + "\n" + fence + "\n"
}

func max3(n int) int { return max(n, 3) }

// mdSpecial are the characters escaped in prose: those that can start
// emphasis, links, images, HTML, tables, strikethrough or entities, and
// the @ of an address GFM would link (mailto).
const mdSpecial = "\\`*_[]<>|~!#&@"

// Prose renders one line of Cortex's own wording that may embed
// untrusted values (a hint naming a skill): backquoted stretches become
// code spans, everything else is escaped so it renders as typed, and a
// URL is broken so no renderer links it.
func Prose(s string) string {
	s = oneLine(s, 0)
	var b strings.Builder
	parts := strings.Split(s, "`")
	for i, p := range parts {
		// Odd parts were inside backquotes (an unmatched last one is
		// prose).
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString(Code(p, 0))
			continue
		}
		if i%2 == 1 {
			b.WriteString("\\`")
		}
		// A URL in prose would be linked (GFM autolinks): break it.
		p = strings.NewReplacer("://", ":\x00//", "www.", "www\x00.").Replace(p)
		for _, r := range p {
			if r == 0 {
				b.WriteByte('\\')
				continue
			}
			if r < 0x80 && strings.ContainsRune(mdSpecial, r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
