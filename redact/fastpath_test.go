package redact

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// The scanner's fast paths — the backslash jump of unescapeASCII, the
// trigger bitmap of next, the triples that pass a trigger pair to its
// anchors, and the required-run test before a gitleaks expression runs —
// must never change what is redacted. These tests
// compare each with the plain path it replaces.

// unescapeReference is unescapeASCII as first written: byte by byte.
func unescapeReference(src []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i+1 < len(src); i++ {
		if src[i] != '\\' {
			continue
		}
		c, n := byte(0), 0
		switch {
		case src[i+1] == '/':
			c, n = '/', 2
		case src[i+1] == 'u' && i+6 <= len(src) && src[i+2] == '0' && src[i+3] == '0':
			if v, ok := hexByte(src[i+4], src[i+5]); ok && v >= 0x20 && v < 0x7f && v != '"' && v != '\\' {
				c, n = v, 6
			}
		}
		if n == 0 {
			i++
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(src))
		}
		out = append(append(out, src[last:i]...), c)
		last = i + n
		i += n - 1
	}
	if out == nil {
		return src
	}
	return append(out, src[last:]...)
}

// nextReference is next on the 128 KB slot table.
func (r *Redactor) nextReference(src []byte, i int) int {
	for ; i < len(src); i++ {
		if r.slot[uint16(src[i-1])<<8|uint16(src[i])] != 0 {
			return i
		}
	}
	return i
}

// reference is the Redactor that examines every trigger pair (no
// triples) and runs every gitleaks expression on every window around its
// keywords (no required-run test).
var reference = sync.OnceValue(func() *Redactor {
	gl, err := gitleaksRules(false)
	if err != nil {
		panic(err)
	}
	return buildTriggers(append(rules(), gl...))
})

// agree checks every fast path against its reference on src.
func agree(t *testing.T, src []byte) {
	t.Helper()
	if got, want := unescapeASCII(src), unescapeReference(src); !bytes.Equal(got, want) {
		t.Fatalf("unescapeASCII(%q) = %q, want %q", src, got, want)
	}
	r := New()
	for i := 1; i <= len(src); i++ {
		if got, want := r.next(src, i), r.nextReference(src, i); got != want {
			t.Fatalf("next(%q, %d) = %d, want %d", src, i, got, want)
		}
	}
	// The triples pass every trigger where an anchor is present.
	for i := 1; i < len(src); i++ {
		k := r.slot[uint16(src[i-1])<<8|uint16(src[i])]
		if k == 0 {
			continue
		}
		for _, a := range r.anchors[k-1] {
			if a.matches(src, i-a.off) && !r.possible(src, i) {
				t.Fatalf("possible(%q, %d) = false, but anchor %q is there", src, i, a.lit)
			}
		}
	}
	got, n := r.JSON(src)
	want, m := reference().JSON(src)
	if !bytes.Equal(got, want) || n != m {
		t.Fatalf("JSON(%q) = %q (%d), want %q (%d)", src, got, n, want, m)
	}
}

// TestRequiredRun pins the run a gitleaks expression's matches must hold.
func TestRequiredRun(t *testing.T) {
	cases := []struct {
		expr string
		n    int
		in   string // bytes in the run's class
		out  string // bytes not in it
	}{
		{`[\w.-]{0,50}?(?i:cohere)[\x60'"\s=]{0,5}([a-zA-Z0-9]{40})(?:[\x60'"\s;]|$)`, 40, "aZ09", "-_. "},
		{`\b(sk-ant-api03-[a-zA-Z0-9_\-]{93}AA)`, 93, "aZ9_-", ". "},
		{`(?i)\b([a-z0-9]{32})\b`, 32, "aZ9\x80\xff", "-_ "}, // (?i) adds ſ and K (U+017F, U+212A): every byte >= 0x80
		{`[a-z]{0,50}`, 0, "", ""},
		{`(?:[a-z]{40}|[0-9]{40})`, 0, "", ""}, // alternatives: no one class
		{`[a-z]{7}`, 0, "", ""},                // too short to be worth a pass
	}
	for _, c := range cases {
		n, in := requiredRun(c.expr)
		if n != c.n {
			t.Errorf("requiredRun(%s) = %d, want %d", c.expr, n, c.n)
			continue
		}
		for _, b := range []byte(c.in) {
			if !in[b] {
				t.Errorf("requiredRun(%s): %q not in the class", c.expr, b)
			}
		}
		for _, b := range []byte(c.out) {
			if in[b] {
				t.Errorf("requiredRun(%s): %q in the class", c.expr, b)
			}
		}
	}
}

// TestFastPathsOnRealExcerpts: lines shaped like real transcript lines. The
// keyword "cohere" is in every "coherent" (real excerpts from
// ../shared/corpus/real, codex/agentv), where the Cohere rule's expression
// used to run on a 2 KB window for nothing; next to a key it still redacts.
func TestFastPathsOnRealExcerpts(t *testing.T) {
	key := strings.Repeat("Ab3Cd4Ef5G", 4) // 40 letters and digits
	cases := []struct {
		in, want string
	}{
		{`{"type":"message","content":"- Rigor: You expect technical arguments to be coherent and defensible, and you surface gaps"}`, ""},
		{`{"content":"assertions: [{ type: 'llm-grader', criteria: 'Conversation was coherent' }],\npackages/core/test/evaluation/conversation-mode.test.ts"}`, ""},
		{`{"content":"export CO_API_KEY=` + key + `\nnpm test"}`, `{"content":"export CO_API_KEY=[REDACTED]\nnpm test"}`},
		{`{"arguments":"{\"cmd\":\"cohere_key: '` + key + `'\"}"}`, `{"arguments":"{\"cmd\":\"cohere_key: '[REDACTED]'\"}"}`},
		{`{"content":"coherent: ` + key[:39] + `"}`, ""}, // 39: no run of 40, no match
	}
	for _, c := range cases {
		want := c.want
		if want == "" {
			want = c.in
		}
		got, _ := New().JSON([]byte(c.in))
		if string(got) != want {
			t.Errorf("JSON(%s) = %s, want %s", c.in, got, want)
		}
		agree(t, []byte(c.in))
	}
}

// TestFastPathsAgreeOnRealCorpus runs every line of the real corpus through
// both paths.
func TestFastPathsAgreeOnRealCorpus(t *testing.T) {
	data, err := realCorpus(64 << 20)
	if err != nil || len(data) == 0 {
		t.Skipf("real corpus not available: %v", err)
	}
	lines := bytes.Split(data, []byte("\n"))
	for _, l := range lines {
		if got, want := unescapeASCII(l), unescapeReference(l); !bytes.Equal(got, want) {
			t.Fatalf("unescapeASCII differs on %.200q", l)
		}
		if got, want := New().next(l, 1), New().nextReference(l, 1); got != want {
			t.Fatalf("next differs on %.200q", l)
		}
		got, n := New().JSON(l)
		want, m := reference().JSON(l)
		if !bytes.Equal(got, want) || n != m {
			t.Fatalf("JSON differs on %.200q", l)
		}
	}
	t.Logf("%d lines, %d bytes", len(lines), len(data))
}

// FuzzFastPathsAgree compares the fast paths with their references on any
// input, seeded with every table case (secrets among them).
func FuzzFastPathsAgree(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"a":"\u0041\/x\\u0042\"\u00e9\`))
	f.Add([]byte(`{"content":"CO_API_KEY=` + strings.Repeat("Ab3Cd4Ef5G", 4) + `"}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		agree(t, src)
	})
}
