package cortex

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

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

// UnwrapContent shows an MCP result's content blocks
// ([{"type":"text","text":"…"}]) as their text; any other text is
// returned as is.
func UnwrapContent(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, `[{"type":"text"`) {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal([]byte(t), &blocks) != nil {
		return s
	}
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}
