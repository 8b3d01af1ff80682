package fts

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [][]Term
	}{
		{"hello world", [][]Term{{{Text: "hello"}}, {{Text: "world"}}}},
		{`"a phrase" x`, [][]Term{{{Text: "a phrase"}}, {{Text: "x"}}}},
		{"deploy* a OR b", [][]Term{{{Text: "deploy", Prefix: true}}, {{Text: "a"}, {Text: "b"}}}},
		{"foo-bar*", [][]Term{{{Text: "foo-bar"}}}},
		{"OR a", [][]Term{{{Text: "OR"}}, {{Text: "a"}}}},
		{"-- a", [][]Term{{{Text: "a"}}}},
	} {
		q, err := Parse(c.in)
		if err != nil || !reflect.DeepEqual(q.Groups, c.want) {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, q.Groups, err, c.want)
		}
	}
	for _, in := range []string{"", "  ", "-- !!", strings.Repeat("a ", 33), strings.Repeat("x", MaxQueryBytes+1)} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

func TestTokens(t *testing.T) {
	for in, want := range map[string][]string{
		"Hello, World!":               {"hello", "world"},
		"mcp__labby__search":          {"mcp", "labby", "search"},
		"/home/user/main.go:42":       {"home", "user", "main", "go", "42"},
		"Crème BRÛLÉE":                {"creme", "brulee"},
		"cafe\u0301s":                 {"cafes"},
		"Straße µ":                    {"straße", "μ"},
		"emoji 🚀 rocket":              {"emoji", "rocket"},
		"":                            nil,
		"日本語のテキスト":                    {"日本語のテキスト"},
		"don't":                       {"don", "t"},
		"x\u00a0y":                    {"x", "y"},
		"tab\tnew\nline\r\nend":       {"tab", "new", "line", "end"},
		"A1-B2_C3":                    {"a1", "b2", "c3"},
		"ΣΊΣΥΦΟΣ":                     {"σίσυφοσ"}, // Greek keeps its accents
		"\uE000private\uF8FF":         {"\uE000private\uF8FF"},
		"Ǖber":                        {"uber"},
		"naïve café":                  {"naive", "cafe"},
		"x²":                          {"x²"},
		"İ":                           {"i"},
		"don’t stop":                  {"don", "t", "stop"},
		"https://example.com/a?b=c#d": {"https", "example", "com", "a", "b", "c", "d"},
	} {
		if got := Tokens(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSnippet(t *testing.T) {
	text := strings.Repeat("x ", 100) + "the Needle here " + strings.Repeat("y ", 100)
	s, _ := Excerpt(text, Query{Groups: [][]Term{{{Text: "needle"}}}}, 40)
	if !strings.Contains(s, "Needle") || !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
		t.Errorf("snippet %q", s)
	}
}

// FuzzTokens checks the tokenizer's invariants on any text: tokens are
// non-empty, hold only what a token may, and tokenizing the tokens again
// changes nothing.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"Hello, World!", "Crème brûlée", "cafe\u0301s", "mcp__x__y", "\xff\xfe", "日本語 テキスト", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokens(s)
		for _, tok := range toks {
			if tok == "" {
				t.Fatalf("empty token of %q", s)
			}
			if strings.ContainsFunc(tok, func(r rune) bool { return !IsTokenChar(r) }) {
				t.Fatalf("token %q of %q holds a separator", tok, s)
			}
		}
		if again := Tokens(strings.Join(toks, " ")); !reflect.DeepEqual(again, toks) && len(toks) > 0 {
			t.Fatalf("Tokens(%q) = %q, again %q", s, toks, again)
		}
		if q, err := Parse(s); err == nil && len(q.Groups) == 0 {
			t.Fatalf("Parse(%q) accepted a query without terms", s)
		}
	})
}
