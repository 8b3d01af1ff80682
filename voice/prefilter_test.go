package voice

import (
	"encoding/json"
	"reflect"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

// realTexts returns the message texts of the real corpus (../shared):
// every "text", "content" or "message" string of its JSONL records, up to
// 4 KiB each (the length a user event keeps) — users' prompts among them.
func realTexts(tb testing.TB) []string {
	tb.Helper()
	root := testcorpus.Real(tb)
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "text" || k == "content" || k == "message") && s != "" {
					out = append(out, s[:min(len(s), 4096)])
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	testcorpus.EachLine(tb, root, func(line []byte) {
		var v any
		if json.Unmarshal(line, &v) == nil {
			walk(v)
		}
	})
	if len(out) < 1000 {
		tb.Fatalf("only %d texts in %s", len(out), root)
	}
	return out
}

// patterns lists every expression that has a prefilter.
func patterns() []*pattern {
	ps := []*pattern{acceptance, aimed}
	for _, r := range rules {
		ps = append(ps, r.expr)
	}
	return ps
}

// sound checks the prefilter's promise on s: where an expression matches,
// the prefilter lets it run.
func sound(t *testing.T, s string) {
	t.Helper()
	for _, p := range patterns() {
		if p.re.MatchString(s) && !p.possible(s) {
			t.Fatalf("prefilter of %s rejects %q, which it matches (need %q)", p.re, s, p.need)
		}
	}
	mask := ruleTexts.scan(s)
	for k, r := range rules {
		if r.expr.re.MatchString(s) && mask&(1<<k) == 0 {
			t.Fatalf("text index rejects %q for %s, which matches it", s, r.category)
		}
	}
}

// TestPrefilterAgreesOnRealText reads every message text of the real
// corpus with and without the prefilter: the readings must be identical,
// and every expression that matches a sentence must pass its prefilter.
func TestPrefilterAgreesOnRealText(t *testing.T) {
	texts := realTexts(t)
	found := 0
	for i, text := range texts {
		if got, want := Unquoted(text), unquotedReference(text); got != want {
			t.Fatalf("Unquoted(%q) = %q, want %q", text, got, want)
		}
		// Every text of the length people type (the reference reading runs
		// every expression on every sentence: slow on long tool outputs),
		// and every eighth longer one.
		if len(text) > 1024 && i%8 != 0 {
			continue
		}
		norm := Normalize(text)
		fast, slow := readNormalized(norm, nil, true), readNormalized(norm, nil, false)
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("prefilter changes the reading of %q: %+v, want %+v", text, fast, slow)
		}
		if len(slow.Categories) > 0 {
			found++
		}
		for _, s := range sentenceEnd.Split(norm, -1) {
			sound(t, strings.TrimSpace(s))
		}
	}
	// The comparison must cover readings that say something.
	if found < 100 {
		t.Fatalf("only %d of %d texts carry a category", found, len(texts))
	}
	t.Logf("%d texts, %d with a category", len(texts), found)
}

// TestRequired pins what the analysis derives from typical patterns: every
// match contains one of the texts, and unknown parts give nil.
func TestRequired(t *testing.T) {
	cases := []struct {
		expr string
		want []string
	}{
		{`i meant`, []string{"i meant"}},
		{`(?:^|\W)(undo|roll ?back)(?:$|\W)`, []string{"undo", "roll back", "rollback"}},
		{`you (?:missed|forgot)`, []string{"you missed", "you forgot"}},
		{`\pL+`, nil},
		{`a|\pL+`, nil},   // one branch unknown: no filter
		{`(?i)stop`, nil}, // case folding has no single text
		{`x*stop`, []string{"stop"}},
		{`(?:ab)?cd`, []string{"abcd", "cd"}}, // "" is not a filter
		{"\uFFFD", nil},                       // also matches invalid UTF-8
	}
	for _, c := range cases {
		re, err := syntax.Parse(c.expr, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		got := required(re.Simplify())
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("required(%s) = %q, want %q", c.expr, got, c.want)
		}
	}
}

// FuzzPrefilter: on any text, the reading with the prefilter is the
// reading without, and no expression that matches is filtered out.
func FuzzPrefilter(f *testing.F) {
	for _, s := range []string{"i didnt ask you to rewrite it", "no, that's fine. you missed it", "undo\xffroll back",
		"stop,", "wrong repo..i told you to", "meh", "dont commit"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		norm := Normalize(text)
		if fast, slow := readNormalized(norm, nil, true), readNormalized(norm, nil, false); !reflect.DeepEqual(fast, slow) {
			t.Fatalf("prefilter changes the reading of %q: %+v, want %+v", text, fast, slow)
		}
		sound(t, text)
		sound(t, norm)
	})
}

func BenchmarkReadRealText(b *testing.B) {
	texts := realTexts(b)
	var n int64
	for _, t := range texts {
		n += int64(len(t))
	}
	for _, mode := range []struct {
		name      string
		prefilter bool
	}{{"prefilter", true}, {"regexp", false}} {
		b.Run(mode.name, func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for range b.N {
				for _, t := range texts {
					readNormalized(Normalize(t), nil, mode.prefilter)
				}
			}
		})
	}
}

// TestTextIndexScan: the one-pass scan finds the same patterns as looking
// for each pattern's texts one by one, on real user messages' sentences.
func TestTextIndexScan(t *testing.T) {
	cases := []struct {
		sentence string
		want     []string // categories whose rule can match
	}{
		{"i didn't ask you to rewrite it", []string{Correction}},
		{"you can stop", []string{Stop}},
		{"uh i think revert any changes you have", []string{Revert}},
		{"wrong repo", []string{Scope}},
		{"i told you to run the tests", []string{Reminder}},
		{"ew i hate all of those", []string{Dissatisfied}},
		{"do not commit anything", []string{Instruction}},
		{"please add a readme section on installation", nil},
		{"", nil},
	}
	for _, c := range cases {
		mask := ruleTexts.scan(c.sentence)
		var got []string
		for k, r := range rules {
			if mask&(1<<k) != 0 {
				got = append(got, r.category)
			}
			if r.expr.possible(c.sentence) != (mask&(1<<k) != 0) {
				t.Errorf("%q: scan and possible disagree on %s", c.sentence, r.category)
			}
		}
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("scan(%q) = %v, lacks %s", c.sentence, got, w)
			}
		}
		if c.want == nil && got != nil {
			t.Errorf("scan(%q) = %v, want none", c.sentence, got)
		}
	}
}

// unquotedReference is Unquoted as first written (strings functions on
// copies of the rest of the text: quadratic in the quotes of a message).
func unquotedReference(s string) string {
	if !strings.ContainsAny(s, "`\"“") {
		return s
	}
	b := []byte(s)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '`' && strings.HasPrefix(string(b[i:]), "```"):
			end := strings.Index(string(b[i+3:]), "```")
			if end < 0 {
				blank(i, len(b))
				return string(b)
			}
			blank(i, i+3+end+3)
			i += 3 + end + 2
		case b[i] == '`' || b[i] == '"':
			end := strings.IndexAny(string(b[i+1:]), string(b[i])+"\n")
			if end < 0 || end > maxQuoted || b[i+1+end] == '\n' {
				continue
			}
			blank(i, i+1+end+1)
			i += end + 1
		case strings.HasPrefix(string(b[i:]), "“"):
			end := strings.Index(string(b[i:]), "”")
			if end < 0 || end > maxQuoted || strings.Contains(string(b[i:i+end]), "\n") {
				continue
			}
			blank(i, i+end+len("”"))
			i += end + len("”") - 1
		}
	}
	return string(b)
}

// FuzzUnquoted: Unquoted (bytes functions on the text, no copies) blanks
// exactly what the reference does.
func FuzzUnquoted(f *testing.F) {
	for _, s := range []string{"say \"hi\" and `x` then ```code``` “quoted” done", "\"open\nline\"", "“a\n”", "```", "\xff\"\xfe\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Unquoted(s), unquotedReference(s); got != want {
			t.Fatalf("Unquoted(%q) = %q, want %q", s, got, want)
		}
	})
}
