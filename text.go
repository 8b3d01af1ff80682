package cortex

import "unicode/utf8"

// CutUTF8 returns the longest prefix of s of at most n bytes that ends on
// a rune boundary ("" for n <= 0).
func CutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
