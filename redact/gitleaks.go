package redact

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// Gitleaks' maintained rule set (github.com/zricethezav/gitleaks/v8,
// config/gitleaks.toml: provider-specific token formats with keywords,
// regular expressions, entropy floors and allowlists) runs inside this
// package's scanner: each rule's keywords are anchors like the built-in
// rules' literals, and only where a keyword occurs does the rule's regular
// expression run, on a window around it as wide as the longest match it can
// make. Gitleaks' own detector runs every rule whose keyword appears
// anywhere in the input over the whole input, at ~2 MB/s on transcripts.

// skippedGitleaksRules are covered by the built-in rules, which understand
// JSON structure and escapes (generic-api-key is the credential-assignment
// rules with an entropy floor; jwt, private-key and the curl rules have
// built-in counterparts), or need a file path or multi-line YAML context
// this scanner does not have.
var skippedGitleaksRules = map[string]bool{
	"generic-api-key": true, "jwt": true, "private-key": true, "curl-auth-header": true, "curl-auth-user": true,
	"kubernetes-secret-yaml": true, "hashicorp-tf-password": true, "pkcs12-file": true,
}

// skippedKeywords are keywords too common in transcripts to anchor a rule
// ("s." occurs in every dotted name, "intra" in every "contract"); the
// rule keeps its other keywords (the secrets' own prefixes).
var skippedKeywords = map[string]bool{"s.": true, "intra": true}

// secretEnd is how gitleaks' expressions end a secret; secretEndEscaped
// also accepts any backslash.
const (
	secretEnd        = `(?:[\x60'"\s;]|\\[nr]|$)`
	secretEndEscaped = `(?:[\x60'"\s;\\]|$)`
)

// genericLead starts gitleaks' "name = value" expressions.
const genericLead = `(?i)[\w.-]{0,50}?`

// maxGitleaksWindow bounds the window a rule's expression runs on, on each
// side of its keyword (rules whose matches are unbounded).
const maxGitleaksWindow = 1024

// gitleaksRule is one gitleaks rule prepared for the scanner.
type gitleaksRule struct {
	rule   config.Rule
	global []*config.Allowlist
	// before and after bound the window around a keyword that can hold a
	// match containing it: before is 1 (context for \b) when every match
	// starts with a keyword.
	before, after int
	// anchored, for rules whose every match starts with a keyword, is the
	// expression anchored at its start: it is tried at each keyword only.
	anchored *regexp.Regexp
	// wordStart says the expression starts with \b.
	wordStart bool
	// run, when above 0, is the length of a run of bytes in runByte that
	// every match contains (a token's body, [a-zA-Z0-9]{40}): a window
	// without one cannot match, and the expression does not run on it.
	run     int
	runByte *[256]bool
}

// gitleaksRules loads gitleaks' default configuration and returns one
// scanner rule per usable gitleaks rule. Without runFilter, every rule's
// expression runs on every window (tests compare both).
func gitleaksRules(runFilter bool) ([]rule, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("read gitleaks rules: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("read gitleaks rules: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("compile gitleaks rules: %w", err)
	}
	var out []rule
	for _, id := range cfg.OrderedRules {
		r := cfg.Rules[id]
		if skippedGitleaksRules[id] || r.Regex == nil || r.SkipReport || len(r.RequiredRules) > 0 {
			continue
		}
		// Gitleaks' "vendor = value" rules (like its generic-api-key) are
		// left to the built-in assignment rules, which look at every
		// key/secret/token/password-named value with an entropy floor:
		// their keywords are common words.
		if strings.HasPrefix(r.Regex.String(), genericLead) {
			continue
		}
		var anchors []string
		for _, k := range r.Keywords {
			if k = strings.ToLower(k); len(k) >= 2 && !skippedKeywords[k] {
				anchors = append(anchors, k)
			}
		}
		if len(anchors) == 0 {
			continue
		}
		expr := r.Regex.String()
		// Gitleaks ends most secrets at a quote, space, ';' or an escaped
		// \n or \r; in JSON inside a JSON string (tool arguments) the
		// closing quote is itself escaped: any backslash ends a secret.
		expr = strings.ReplaceAll(expr, secretEnd, secretEndEscaped)
		if expr != r.Regex.String() {
			r.Regex = regexp.MustCompile(expr)
		}
		g := &gitleaksRule{rule: r, global: cfg.Allowlists}
		g.before, g.after = windows(r.Regex.String(), anchors)
		if runFilter {
			g.run, g.runByte = requiredRun(r.Regex.String())
		}
		if g.before <= 1 {
			expr := r.Regex.String()
			g.anchored = regexp.MustCompile(`^(?:` + expr + `)`)
			g.wordStart = strings.HasPrefix(expr, `\b`)
		}
		fold := true
		// Case-sensitive literals that start every match (twilio's "SK",
		// intra42's "s-s4t2ud-", facebook's "EAA") anchor far more
		// selectively than the keywords.
		if lits := exactLeading(r.Regex.String()); len(lits) > 0 && allStartWithKeyword(lower(lits), anchors) {
			anchors, fold = lits, false
		}
		out = append(out, rule{name: "gitleaks:" + id, fold: fold, anchors: anchors, region: g.region})
	}
	return out, nil
}

func lower(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}

// exactLeading returns the case-sensitive literals (2 bytes or more) one
// of which starts every match of expr, or nil.
func exactLeading(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	lits := leading(re.Simplify(), false)
	for _, l := range lits {
		if len(l) < 2 {
			return nil
		}
	}
	return lits
}

// windows returns how far before and after a keyword occurrence a match
// of expr containing it can reach: the longest match (at most
// maxGitleaksWindow) on both sides, except that a match known to start
// with a keyword reaches 1 byte back (the context of a leading \b).
func windows(expr string, keywords []string) (before, after int) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return maxGitleaksWindow, maxGitleaksWindow
	}
	re = re.Simplify()
	n := reMax(re)
	if n < 0 || n > maxGitleaksWindow {
		n = maxGitleaksWindow
	}
	if lits := leading(re, true); len(lits) > 0 && allStartWithKeyword(lits, keywords) {
		return 1, n
	}
	return n, n
}

// leading returns the literal texts one of which every match of re starts
// with, or nil when that is not known. With fold the texts are lower case
// and case-insensitive literals count; without, any case-insensitive part
// makes the answer nil.
func leading(re *syntax.Regexp, fold bool) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 && !fold {
			return nil
		}
		if fold {
			return []string{strings.ToLower(string(re.Rune))}
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture:
		return leading(re.Sub[0], fold)
	case syntax.OpConcat:
		for i, sub := range re.Sub {
			switch sub.Op {
			case syntax.OpBeginLine, syntax.OpBeginText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
				continue
			}
			lits := leading(sub, fold)
			// A literal followed by more literal text: join them, so
			// that factored alternations (sc(?:auth)?_) still read whole.
			if len(lits) > 0 && i+1 < len(re.Sub) {
				if next := leading(re.Sub[i+1], fold); len(next) > 0 && len(lits)*len(next) <= 64 {
					var joined []string
					for _, a := range lits {
						for _, b := range next {
							joined = append(joined, a+b)
						}
					}
					return joined
				}
			}
			return lits
		}
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			lits := leading(sub, fold)
			if len(lits) == 0 {
				return nil
			}
			out = append(out, lits...)
		}
		return out
	case syntax.OpQuest:
		// An optional part: what follows it is unknown here.
		return nil
	case syntax.OpEmptyMatch:
		return []string{""}
	}
	return nil
}

func allStartWithKeyword(lits, keywords []string) bool {
	for _, l := range lits {
		ok := false
		for _, k := range keywords {
			if strings.HasPrefix(l, k) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// reMax returns the longest match of re in bytes, or -1 when unbounded.
func reMax(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += runeBytes(r)
		}
		return n
	case syntax.OpCharClass:
		w := 0
		for i := 1; i < len(re.Rune); i += 2 {
			w = max(w, runeBytes(re.Rune[i]))
		}
		return w
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 4
	case syntax.OpCapture:
		return reMax(re.Sub[0])
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, s := range re.Sub {
			n := reMax(s)
			if n < 0 {
				return -1
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
		}
		return total
	case syntax.OpQuest:
		return reMax(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpRepeat:
		n := reMax(re.Sub[0])
		if n < 0 || re.Max < 0 {
			return -1
		}
		return n * re.Max
	}
	return 0 // empty-width assertions
}

func runeBytes(r rune) int {
	switch {
	case r < 0x80:
		return 1
	case r < 0x800:
		return 2
	case r < 0x10000:
		return 3
	}
	return 4
}

// region runs the rule's expression once over each merged window around
// the rule's keyword occurrences (hits, sorted) and returns the secrets of
// the matches that contain a keyword and pass the rule's entropy floor and
// allowlists. Each byte is scanned at most once per rule, however dense
// the keywords.
func (g *gitleaksRule) region(src []byte, hits []regionHit, spans []span) []span {
	if g.anchored != nil {
		last := -1
		for _, h := range hits {
			if h.at < last || g.wordStart && h.at > 0 && isWord(src[h.at-1]) {
				continue
			}
			win := src[h.at:min(len(src), h.end+g.after)]
			if !g.mayMatch(win) {
				continue
			}
			if m := g.anchored.FindSubmatchIndex(win); m != nil {
				n := len(spans)
				if spans = g.accept(src, h.at, win, m, spans); len(spans) > n {
					last = spans[len(spans)-1].end
				}
			}
		}
		return spans
	}
	for i := 0; i < len(hits); {
		ws, we := max(0, hits[i].at-g.before), min(len(src), hits[i].end+g.after)
		j := i + 1
		for ; j < len(hits) && hits[j].at-g.before <= we; j++ {
			we = min(len(src), max(we, hits[j].end+g.after))
		}
		spans = g.scan(src, ws, we, spans)
		i = j
	}
	return spans
}

// minRun is the shortest required run requiredRun reports: shorter runs
// are in every window.
const minRun = 8

// requiredRun returns n > 0 and the bytes of a character class when every
// match of expr contains a run of at least n bytes from that set, else 0.
// A class with runes beyond ASCII admits every byte >= 0x80 (their UTF-8
// bytes, and invalid bytes, which match as U+FFFD), so a run of n
// characters is always a run of n bytes or more.
func requiredRun(expr string) (int, *[256]bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0, nil
	}
	n, class := runOf(re)
	if n < minRun {
		return 0, nil
	}
	in := new([256]bool)
	for i := 0; i+1 < len(class); i += 2 {
		lo, hi := class[i], class[i+1]
		for c := lo; c <= hi && c < 0x80; c++ {
			in[c] = true
		}
		if hi >= 0x80 {
			for c := 0x80; c < 256; c++ {
				in[c] = true
			}
		}
	}
	return n, in
}

// runOf returns the longest run of one character class that every match
// of re contains (n, and the class's rune ranges), from the expression as
// parsed (Simplify would spell {40} as 40 copies).
func runOf(re *syntax.Regexp) (int, []rune) {
	switch re.Op {
	case syntax.OpRepeat:
		if re.Min < 1 {
			return 0, nil
		}
		if sub := re.Sub[0]; sub.Op == syntax.OpCharClass {
			return re.Min, sub.Rune
		}
		return runOf(re.Sub[0])
	case syntax.OpCapture, syntax.OpPlus:
		return runOf(re.Sub[0])
	case syntax.OpConcat:
		best, class := 0, []rune(nil)
		for _, sub := range re.Sub {
			if n, c := runOf(sub); n > best {
				best, class = n, c
			}
		}
		return best, class
	}
	return 0, nil
}

// mayMatch reports whether win holds the run every match contains (true
// when the rule has none).
func (g *gitleaksRule) mayMatch(win []byte) bool {
	if g.run == 0 {
		return true
	}
	n := 0
	for _, c := range win {
		if !g.runByte[c] {
			n = 0
			continue
		}
		if n++; n >= g.run {
			return true
		}
	}
	return false
}

// scan finds the rule's secrets in src[ws:we], the window around some of
// its keywords.
func (g *gitleaksRule) scan(src []byte, ws, we int, spans []span) []span {
	win := src[ws:we]
	if !g.mayMatch(win) {
		return spans
	}
	// Like gitleaks, which requires a keyword anywhere in the input, a
	// match need not contain the keyword: near it is enough.
	for _, m := range g.rule.Regex.FindAllSubmatchIndex(win, -1) {
		spans = g.accept(src, ws, win, m, spans)
	}
	return spans
}

// accept appends the secret of match m of win (= src[ws:…]) when it passes
// the rule's entropy floor and allowlists.
func (g *gitleaksRule) accept(src []byte, ws int, win []byte, m []int, spans []span) []span {
	{
		s, e := m[0], m[1]
		if len(m) > 2 {
			if k := g.rule.SecretGroup; k > 0 && 2*k+1 < len(m) && m[2*k] >= 0 {
				s, e = m[2*k], m[2*k+1]
			} else if k == 0 {
				for i := 2; i+1 < len(m); i += 2 {
					if m[i] >= 0 && m[i+1] > m[i] {
						s, e = m[i], m[i+1]
						break
					}
				}
			}
		}
		e = s + jsonSafeEnd(win[s:e])
		if e <= s {
			return spans
		}
		secret := string(win[s:e])
		if g.rule.Entropy > 0 && shannon(secret) <= g.rule.Entropy {
			return spans
		}
		line := lineAround(src, ws+m[0], ws+m[1])
		if allowed(g.global, secret, string(win[m[0]:m[1]]), line) ||
			allowed(g.rule.Allowlists, secret, string(win[m[0]:m[1]]), line) {
			return spans
		}
		spans = append(spans, span{ws + s, ws + e})
	}
	return spans
}

// lineAround returns the line of win holding win[s:e] (also ending at an
// escaped \n in raw JSON), at most 512 bytes on each side.
func lineAround(win []byte, s, e int) string {
	a, b := max(0, s-512), min(len(win), e+512)
	if k := bytes.LastIndexByte(win[a:s], '\n'); k >= 0 {
		a += k + 1
	}
	if k := bytes.IndexByte(win[e:b], '\n'); k >= 0 {
		b = e + k
	}
	return string(win[a:b])
}

// jsonSafeEnd returns the length of the longest prefix of b that ends
// inside one JSON string: before any '"', and not inside an escape
// sequence (a secret is never cut into half an escape).
func jsonSafeEnd(b []byte) int {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i
		case '\\':
			if i+1 >= len(b) {
				return i
			}
			if b[i+1] == 'u' {
				if i+6 > len(b) {
					return i
				}
				i += 5
			} else {
				i++
			}
		}
	}
	return len(b)
}

// allowed applies gitleaks allowlists to a finding: regular expressions
// (on the secret, the match or the line — here the window) and stop words
// (on the secret). Conditions on commits and paths never hold here.
func allowed(lists []*config.Allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		regex := len(a.Regexes) > 0 && a.RegexAllowed(target)
		stop, _ := a.ContainsStopWord(secret)
		if a.MatchCondition == config.AllowlistMatchAnd {
			if len(a.Commits) > 0 || len(a.Paths) > 0 || len(a.Regexes) > 0 && !regex || len(a.StopWords) > 0 && !stop ||
				len(a.Regexes) == 0 && len(a.StopWords) == 0 {
				continue
			}
			return true
		}
		if regex || stop {
			return true
		}
	}
	return false
}

// shannon is the Shannon entropy of s in bits per byte.
func shannon[T string | []byte](s T) float64 {
	if len(s) == 0 {
		return 0
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
