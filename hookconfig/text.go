package hookconfig

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkText says why s is not acceptable as a bounded, single-line (or, with
// multiline, tab/newline-only) text, or "" when it is. max < 0 means no
// length bound.
func checkText(s string, max int, multiline bool) string {
	if max >= 0 && len(s) > max {
		return "is " + strconv.Itoa(len(s)) + " bytes, over the " + strconv.Itoa(max) + "-byte limit"
	}
	if hasControl(s, multiline) {
		return "holds control characters"
	}
	return ""
}

// hasControl reports a control character (C0, DEL, C1) in s; with
// multiline, tab and newline are allowed.
func hasControl(s string, multiline bool) bool {
	for _, r := range s {
		if multiline && (r == '\t' || r == '\n') {
			continue
		}
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// keyPath renders a key for a problem message: plain keys as is, others
// quoted.
func keyPath(k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r == '-' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	}) < 0 {
		return k
	}
	q := strconv.QuoteToASCII(k)
	if len(q) > 80 {
		q = q[:77] + "..."
	}
	return q
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// stripBOM drops a leading UTF-8 byte order mark.
func stripBOM(data []byte) []byte { return bytes.TrimPrefix(data, bom) }

// stripJSONComments blanks // and /* */ comments outside strings (Gemini
// CLI settings allow them), keeping newlines so that error positions still
// match the file. An unterminated /* is left for the JSON parser to report.
func stripJSONComments(data []byte) []byte {
	if !bytes.Contains(data, []byte("/")) {
		return data
	}
	out := bytes.Clone(data)
	inStr, esc := false, false
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			continue
		}
		if c != '/' || i+1 >= len(out) {
			continue
		}
		switch out[i+1] {
		case '/':
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				return out
			}
			stop := i + 2 + end + 2
			for j := i; j < stop; j++ {
				if out[j] != '\n' {
					out[j] = ' '
				}
			}
			i = stop - 1
		}
	}
	return out
}

// lineCol turns the 0-based offset of a byte into its 1-based line and
// column (in bytes).
func lineCol(data []byte, off int64) (int, int) {
	off = max(0, min(off, int64(len(data))))
	before := data[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}
