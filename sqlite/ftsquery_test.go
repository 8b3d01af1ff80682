package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/fts"
)

func TestBuildFTSQuery(t *testing.T) {
	t.Parallel()
	terms := func(n int) string {
		var ws []string
		for i := range n {
			ws = append(ws, fmt.Sprintf("w%d", i))
		}
		return strings.Join(ws, " ")
	}
	for _, c := range []struct {
		name, in, want string
		words          []string
	}{
		{"words", "hello world", `"hello" AND "world"`, []string{"hello", "world"}},
		{"extra spaces", "  hello \t world\n", `"hello" AND "world"`, []string{"hello", "world"}},
		{"phrase", `"quoted phrase" here`, `"quoted phrase" AND "here"`, []string{"quoted phrase", "here"}},
		{"prefix", "deploy*", `"deploy"*`, []string{"deploy"}},
		{"prefix stars", "deploy**", `"deploy"*`, []string{"deploy"}},
		{"prefix on two tokens is literal", "foo-bar*", `"foo-bar"`, []string{"foo-bar"}},
		{"star inside", "foo*bar", `"foo*bar"`, []string{"foo*bar"}},
		{"OR", "a OR b", `("a" OR "b")`, []string{"a", "b"}},
		{"OR chain", "a OR b OR c", `("a" OR "b" OR "c")`, []string{"a", "b", "c"}},
		{"OR then AND", "x a OR b y", `"x" AND ("a" OR "b") AND "y"`, []string{"x", "a", "b", "y"}},
		{"OR with phrase and prefix", `"a b" OR c*`, `("a b" OR "c"*)`, []string{"a b", "c"}},
		{"lowercase or is a word", "a or b", `"a" AND "or" AND "b"`, []string{"a", "or", "b"}},
		{"leading OR is a word", "OR a", `"OR" AND "a"`, []string{"OR", "a"}},
		{"lone OR is a word", "OR", `"OR"`, []string{"OR"}},
		{"trailing OR is dropped", "a OR", `"a"`, []string{"a"}},
		{"double OR", "a OR OR b", `("a" OR "b")`, []string{"a", "b"}},
		{"hyphenated", "cargo-build", `"cargo-build"`, []string{"cargo-build"}},
		{"short flag", "-v", `"-v"`, []string{"-v"}},
		{"long flag", "--force", `"--force"`, []string{"--force"}},
		{"mcp tool", "mcp__labby__search", `"mcp__labby__search"`, []string{"mcp__labby__search"}},
		{"colon", "key:value", `"key:value"`, []string{"key:value"}},
		{"column filter syntax", "message:foo", `"message:foo"`, []string{"message:foo"}},
		{"parentheses", "(a b)", `"(a" AND "b)"`, []string{"(a", "b)"}},
		{"NEAR", "a NEAR b", `"a" AND "NEAR" AND "b"`, []string{"a", "NEAR", "b"}},
		{"NEAR group", "NEAR(a b, 3)", `"NEAR(a" AND "b," AND "3)"`, []string{"NEAR(a", "b,", "3)"}},
		{"AND", "a AND b", `"a" AND "AND" AND "b"`, []string{"a", "AND", "b"}},
		{"NOT", "NOT a", `"NOT" AND "a"`, []string{"NOT", "a"}},
		{"caret and plus", "^start +plus", `"^start" AND "+plus"`, []string{"^start", "+plus"}},
		{"stray quote", `it"s`, `"it" AND "s"`, []string{"it", "s"}},
		{"unbalanced quote", `"abc`, `"abc"`, []string{"abc"}},
		{"unbalanced quote after word", `x "abc def`, `"x" AND "abc def"`, []string{"x", "abc def"}},
		{"empty phrase skipped", `"" a`, `"a"`, []string{"a"}},
		{"star alone skipped", "a *", `"a"`, []string{"a"}},
		{"punctuation term skipped", "a -- b", `"a" AND "b"`, []string{"a", "b"}},
		{"emoji skipped", "🚀 deploy", `"deploy"`, []string{"deploy"}},
		{"emoji inside a word", "ship🚀it", `"ship🚀it"`, []string{"ship🚀it"}},
		{"CJK", "日本語 テスト", `"日本語" AND "テスト"`, []string{"日本語", "テスト"}},
		{"accents", "café*", `"café"*`, []string{"café"}},
		{"NUL is a separator", "a\x00b", `"a" AND "b"`, []string{"a", "b"}},
		{"NUL in a phrase", "\"a\x00b\"", `"a b"`, []string{"a b"}},
		{"32 terms", terms(32), strings.Join(quoteAll(terms(32)), " AND "), strings.Fields(terms(32))},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, words, err := BuildFTSQuery(c.in)
			if err != nil {
				t.Fatalf("BuildFTSQuery(%q): %v", c.in, err)
			}
			if got != c.want {
				t.Errorf("BuildFTSQuery(%q) = %s, want %s", c.in, got, c.want)
			}
			if c.words != nil && !reflect.DeepEqual(words, c.words) {
				t.Errorf("words %q, want %q", words, c.words)
			}
		})
	}

	for _, c := range []struct{ name, in string }{
		{"empty", ""},
		{"spaces", "   "},
		{"star alone", "*"},
		{"only punctuation", `-- !! ?? ... () "" :: ^ +`},
		{"only emoji", "🚀 🎉"},
		{"600 bytes", strings.Repeat("abcdefghi ", 60)},
		{"513 bytes", strings.Repeat("a", 513)},
		{"40 terms", terms(40)},
		{"33 terms", terms(33)},
	} {
		t.Run("invalid/"+c.name, func(t *testing.T) {
			q, _, err := BuildFTSQuery(c.in)
			if err == nil {
				t.Fatalf("BuildFTSQuery(%q) = %s, want an error", c.in, q)
			}
			wantCode(t, err, cortex.CodeInvalid)
		})
	}
	if _, _, err := BuildFTSQuery(strings.Repeat("a", 512)); err != nil {
		t.Errorf("a 512-byte query is refused: %v", err)
	}
}

func quoteAll(s string) []string {
	var out []string
	for _, w := range strings.Fields(s) {
		out = append(out, `"`+w+`"`)
	}
	return out
}

// ftsTestTexts are the rows of the small database the property tests search.
var ftsTestTexts = []string{
	"hello world from the deploy script",
	"cargo-build --release failed: error[E0308]",
	"mcp__labby__search key:value (nested) \"quoted\"",
	"日本語のテキスト and テスト",
	"café naïve Straße ⱥⱥ Ⱥ",
	"NEAR AND OR NOT * ^ +",
	"emoji 🚀 rocket launch",
	"it's a test-case with a-b-c",
	strings.Repeat("long line of text ", 40),
}

// openFTSDB opens a small indexed database for the property tests.
func openFTSDB(tb testing.TB) *DB {
	tb.Helper()
	db, _ := openTestDB(tb)
	var recs []cortex.ImportRecord
	for i, text := range ftsTestTexts {
		recs = append(recs, rec(fmt.Sprintf("k%d", i), "", cortex.RoleAssistant, text, testNow.Add(time.Duration(i)*time.Minute)))
	}
	mustImport(tb, db, batch("/t/fts.jsonl", recs...))
	return db
}

// checkQuery is the property: input that BuildFTSQuery accepts never makes
// FTS5 fail, and neither ordering nor snippets break on it.
func checkQuery(t *testing.T, db *DB, input string) {
	t.Helper()
	q, words, err := BuildFTSQuery(input)
	if err != nil {
		if cortex.ErrorCode(err) != cortex.CodeInvalid {
			t.Fatalf("BuildFTSQuery(%q): %v with code %s, want invalid", input, err, cortex.ErrorCode(err))
		}
		return
	}
	if len(words) == 0 {
		t.Fatalf("BuildFTSQuery(%q) = %s with no words", input, q)
	}
	for _, rank := range []bool{false, true} {
		res, err := db.Search(context.Background(), cortex.SearchParams{Query: input, Limit: 5, Rank: rank})
		if err != nil {
			t.Fatalf("Search(%q) with FTS query %s (rank %v): %v", input, q, rank, err)
		}
		for _, h := range res.Hits {
			if strings.ContainsAny(h.Snippet, "\n\r\t") {
				t.Fatalf("Search(%q): snippet %q is not one line", input, h.Snippet)
			}
			if !utf8.ValidString(h.Snippet) {
				t.Fatalf("Search(%q): snippet %q is not valid UTF-8", input, h.Snippet)
			}
		}
	}
}

// randomQuery mixes letters, digits, FTS5 operators and punctuation.
func randomQuery(r *rand.Rand) string {
	pieces := []string{
		"a", "b", "z", "foo", "hello", "world", "deploy", "cargo", "build", "é", "ß", "日本", "テスト", "🚀", "Ⱥ", "K",
		"0", "7", "42", "E0308",
		`"`, `""`, "*", "-", "--", "(", ")", ":", "^", "+", ",", ".", "{", "}", "[", "]", "'", "_", "/", "\\",
		" ", " ", " ", "  ", "\t", "\n",
		"OR", "AND", "NOT", "NEAR", "NEAR(", "or", " OR ", " AND ", " NOT ", " NEAR ",
		"\x00", "\xff", "\xc3", "\u0301", "\u200b", "\ue000",
	}
	var b strings.Builder
	n := 1 + r.IntN(14)
	for range n {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func TestBuildFTSQueryNeverBreaksFTS5(t *testing.T) {
	t.Parallel()
	db := openFTSDB(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0xc0ffee))
	n := 3000
	if testing.Short() {
		n = 500
	}
	accepted := 0
	for range n {
		in := randomQuery(r)
		if _, _, err := BuildFTSQuery(in); err == nil {
			accepted++
		}
		checkQuery(t, db, in)
	}
	if accepted < n/4 {
		t.Errorf("only %d of %d random queries were accepted: the generator no longer exercises FTS5", accepted, n)
	}
	// Queries that must find something.
	for q, want := range map[string]int{
		"hello": 1, "deploy*": 1, "cargo-build": 1, `"failed: error"`: 1, "mcp__labby__search": 1, "key:value": 1,
		"日本語のテキスト": 1, "cafe": 1, "straße": 1, "NEAR": 1, "rocket 🚀": 1, "hello OR rocket": 2, "it's": 1,
		"test-case": 1, "a-b-c": 1, "ⱥⱥ": 1,
	} {
		res, err := db.Search(context.Background(), cortex.SearchParams{Query: q, Limit: 10})
		if err != nil {
			t.Errorf("Search(%q): %v", q, err)
			continue
		}
		if len(res.Hits) != want {
			t.Errorf("Search(%q) [%s] found %d rows, want %d", q, res.FTSQuery, len(res.Hits), want)
		}
	}
}

func FuzzBuildFTSQuery(f *testing.F) {
	for _, s := range []string{
		"hello world", `"quoted phrase"`, "deploy*", "a OR b", "a or b", "cargo-build", "-v", "--force",
		"mcp__labby__search", "key:value", "(a b)", "NEAR(a b)", "a AND b", "NOT a", `it"s`, `"abc`, "*", "🚀",
		"日本語", "a\x00b", "\"a\x00b\"", "\xff\xfe", "x*y*", "Ⱥ" + strings.Repeat("ⱥ", 80) + " hello",
	} {
		f.Add(s)
	}
	db := openFTSDB(f) // once per fuzzing process
	f.Fuzz(func(t *testing.T, input string) {
		checkQuery(t, db, input)
		// snippet never panics and stays one line whatever the text.
		_, words, _ := BuildFTSQuery(input)
		s := snippet(input, words, 40)
		if strings.ContainsAny(s, "\n\r\t") {
			t.Fatalf("snippet(%q) = %q is not one line", input, s)
		}
		if utf8.ValidString(input) && !utf8.ValidString(s) {
			t.Fatalf("snippet(%q) = %q cut a rune", input, s)
		}
	})
}

func TestHighlights(t *testing.T) {
	for _, tc := range []struct {
		text  string
		words []string
		want  [][2]int
	}{
		{"cargo build kestrel", []string{"cargo"}, [][2]int{{0, 5}}},
		{"Rate limit hit; rate LIMIT again", []string{"rate limit"}, [][2]int{{0, 10}, {16, 26}}},
		{"timeout then Timeout", []string{"timeout", "then"}, [][2]int{{0, 7}, {8, 12}, {13, 20}}},
		// Whole tokens only, as the index matches them.
		{"subagent", []string{"agent"}, nil},
		// Offsets are in the original text even where folding changes a
		// rune's length (U+212A Kelvin sign).
		{"\u212aelvin kelvin", []string{"kelvin"}, [][2]int{{0, 8}, {9, 15}}},
		// English stems: the index finds "leaks" for "leak".
		{"memory leaks again", []string{"memory leak"}, [][2]int{{0, 12}}},
		{"leaked, leaking", []string{"leak"}, [][2]int{{0, 6}, {8, 15}}},
		// A word that only starts like the query is not its stem.
		{"Wall time: 0.68 s, then a timeout", []string{"timeout"}, [][2]int{{26, 33}}},
		{"nothing here", []string{"absent"}, nil},
	} {
		_, got := fts.Excerpt(tc.text, phrases(tc.words), 200)
		if !reflect.DeepEqual(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("highlight(%q, %q) = %v, want %v", tc.text, tc.words, got, tc.want)
		}
	}
}
