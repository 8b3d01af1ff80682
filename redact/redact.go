// Package redact replaces secrets in AI transcript data with [Marker] before
// the data is stored.
//
// A [Redactor] finds common credential formats (cloud and SaaS API keys,
// JWTs, bearer and basic auth headers, password=... style assignments,
// passwords in URLs and PEM private keys) in raw JSON lines as well as in
// plain text. Applied to a valid JSON document, [Redactor.Bytes] returns valid
// JSON: a match never contains a quote or a backslash except whole escape
// sequences inside a private-key block, and the marker contains neither.
//
// What it does NOT guarantee: redaction is pattern based and is defense in
// depth, not a compliance control. Secrets in unknown formats, secrets
// written in prose ("the password is hunter2"), split, encoded or escaped
// secrets (for example a JSON value containing \" or \u sequences) are
// partly or entirely left in place. Conversely, harmless text that looks
// like a credential is sometimes redacted. See the tests for the exact
// false-positive decisions.
//
// Speed: input without secrets never reaches a matcher. Every rule has short
// literal anchors ("sk-", "eyJ", "password", ...), and [New] picks the
// rarest pair of adjacent bytes of each anchor (in every case variant for
// case-insensitive rules) as its trigger. The scan looks up each pair of
// input bytes in a 64 KB table, compares whole anchors only at trigger pairs
// (about 1% of positions in real transcripts) and runs a rule's hand-written
// matcher only where an anchor is present. No regular expressions are
// involved.
package redact

import (
	"bytes"
	_ "embed"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// Marker is the text that replaces every redacted secret.
const Marker = "[REDACTED]"

// Redactor replaces secrets with [Marker]. It is safe for concurrent use;
// build it once with [New] and share it.
type Redactor struct {
	rules []rule
	// slot maps a byte pair (first<<8 | second) to 1 + its index in
	// anchors, or 0 when no anchor is triggered by it.
	slot    [1 << 16]uint16
	anchors [][]anchor
	// trigger has bit p set when slot[p] != 0: 8 KB, which stays in the
	// L1 cache during the scan (slot is 128 KB).
	trigger [1 << 16 / 64]uint64
	// A trigger pair is common ("ok" of "token", "t." of "pat."); before
	// its anchors are compared, the byte after it (fwd: the anchors whose
	// trigger is not their last pair) or before it (bwd: the others) must
	// complete a triple one of them holds, or the pair must be a whole
	// anchor (pair). Triples are hashed to 16 bits (bits set in 8 KB).
	// Without triples (tests' reference), every trigger is examined.
	fwd, bwd  *[1 << 16 / 64]uint64
	pairWhole [1 << 16 / 64]uint64
}

// A matchFunc is called when an anchor of its rule occurs at src[at:end].
// It returns the span src[s:e] to replace with Marker.
type matchFunc func(src []byte, at, end int) (s, e int, ok bool)

type rule struct {
	name    string
	fold    bool     // anchors match ASCII case-insensitively
	anchors []string // at least two bytes each; lower case when fold
	match   matchFunc
	// region, when set instead of match, is called once per find with
	// every anchor occurrence of the rule (sorted) and appends the spans
	// to redact: rules backed by a regular expression
	// run it once over the merged windows around their anchors.
	region func(src []byte, hits []regionHit, spans []span) []span
}

type anchor struct {
	lit  string
	fold bool
	off  int // lit[off-1:off+1] is the trigger pair
	rule int
}

type span struct{ start, end int }

// New returns the Redactor with all rules: the built-in ones and gitleaks'
// maintained rule set. It is built once (compiling a few hundred regular
// expressions) and shared: a Redactor is immutable.
func New() *Redactor { return shared() }

var shared = sync.OnceValue(func() *Redactor {
	gl, err := gitleaksRules(true)
	if err != nil {
		// The rule set is embedded in the binary: this is a build defect.
		panic("redact: " + err.Error())
	}
	return build(append(rules(), gl...))
})

// None returns a Redactor without rules: it redacts nothing. Tests use it
// to store data the way an older, weaker Cortex did.
func None() *Redactor { return build(nil) }

// build indexes the anchors of rs by their trigger pair, the rarest two
// adjacent bytes of each anchor (in all case variants for fold rules).
func build(rs []rule) *Redactor {
	r := buildTriggers(rs)
	r.fwd, r.bwd = new([1 << 16 / 64]uint64), new([1 << 16 / 64]uint64)
	for _, ru := range rs {
		for _, lit := range ru.anchors {
			off := triggerIndex(lit, ru.fold)
			switch {
			case off+1 < len(lit):
				setTriples(r.fwd, lit[off-1:off+2], ru.fold)
			case off >= 2:
				setTriples(r.bwd, lit[off-2:off+1], ru.fold)
			default: // a two-byte anchor
				for _, c1 := range variants(lit[0], ru.fold) {
					for _, c2 := range variants(lit[1], ru.fold) {
						setBit(&r.pairWhole, uint16(c1)<<8|uint16(c2))
					}
				}
			}
		}
	}
	return r
}

// setTriples sets the bits of t's hashes in every case variant.
func setTriples(bits *[1 << 16 / 64]uint64, t string, fold bool) {
	for _, a := range variants(t[0], fold) {
		for _, b := range variants(t[1], fold) {
			for _, c := range variants(t[2], fold) {
				setBit(bits, hash3(a, b, c))
			}
		}
	}
}

func setBit(bits *[1 << 16 / 64]uint64, k uint16) { bits[k>>6] |= 1 << (k & 63) }

func hasBit(bits *[1 << 16 / 64]uint64, k uint16) bool { return bits[k>>6]&(1<<(k&63)) != 0 }

func hash3(a, b, c byte) uint16 {
	return uint16((uint32(a)<<16 | uint32(b)<<8 | uint32(c)) * 0x9E3779B1 >> 16)
}

// possible reports whether an anchor can hold the trigger pair ending at
// src[i] (see Redactor.fwd): false only when no anchor of the pair can.
func (r *Redactor) possible(src []byte, i int) bool {
	if r.fwd == nil {
		return true
	}
	a, b := src[i-1], src[i]
	return hasBit(&r.pairWhole, uint16(a)<<8|uint16(b)) ||
		i+1 < len(src) && hasBit(r.fwd, hash3(a, b, src[i+1])) ||
		i >= 2 && hasBit(r.bwd, hash3(src[i-2], a, b))
}

// buildTriggers indexes the anchors by trigger pair (see build), without
// the triples.
func buildTriggers(rs []rule) *Redactor {
	r := &Redactor{rules: rs}
	for i, ru := range rs {
		for _, lit := range ru.anchors {
			off := triggerIndex(lit, ru.fold)
			a := anchor{lit: lit, fold: ru.fold, off: off, rule: i}
			for _, c1 := range variants(lit[off-1], ru.fold) {
				for _, c2 := range variants(lit[off], ru.fold) {
					p := uint16(c1)<<8 | uint16(c2)
					if r.slot[p] == 0 {
						r.anchors = append(r.anchors, nil)
						r.slot[p] = uint16(len(r.anchors))
						r.trigger[p>>6] |= 1 << (p & 63)
					}
					k := r.slot[p] - 1
					r.anchors[k] = append(r.anchors[k], a)
				}
			}
		}
	}
	return r
}

// variants returns c, plus its upper-case form when fold is set.
func variants(c byte, fold bool) []byte {
	if fold && 'a' <= c && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

// byFrequency lists printable ASCII from most to least common in real agent
// transcripts (measured on JSONL from Claude Code, Codex and Gemini).
const byFrequency = " etnsaior\"\\cldpumh:/,fg-01.2by_kwv3456798xTEACSDI()RPU={}LzM+jNBFOqHZGWYXVJ`QK;*[]'>#<|!%&?@$~^"

// commonPairs lists the 600 most frequent pairs of adjacent printable
// bytes in real agent transcripts (the project's corpus of Claude Code,
// Codex and Gemini JSONL, 35 MB), most frequent first, as 1,200 bytes.
//
//go:embed pairs.txt
var commonPairs string

// pairRank maps a byte pair (first<<8 | second) to its position in
// commonPairs plus one; 0 for pairs not among them (rare).
var pairRank = func() (r [1 << 16]uint16) {
	for i := 0; i+1 < len(commonPairs); i += 2 {
		r[uint16(commonPairs[i])<<8|uint16(commonPairs[i+1])] = uint16(i/2 + 1)
	}
	return r
}()

// pairRarity is how rare a pair is: higher is rarer. A pair outside the
// common list is rarer than any in it; among those, the unigram ranks
// decide. For fold, the most common case variant counts.
func pairRarity(c1, c2 byte, fold bool) int {
	rarest := 1 << 20
	for _, a := range variants(c1, fold) {
		for _, b := range variants(c2, fold) {
			r := 1<<16 + rarity(a, false) + rarity(b, false)
			if k := pairRank[uint16(a)<<8|uint16(b)]; k > 0 {
				r = int(k)
			}
			rarest = min(rarest, r)
		}
	}
	return rarest
}

// triggerIndex returns the index j such that lit[j-1:j+1] is the rarest
// pair of adjacent bytes in lit (see pairRarity), so that the scan stops
// as seldom as possible.
func triggerIndex(lit string, fold bool) int {
	if len(lit) < 2 {
		panic("redact: anchor shorter than two bytes: " + lit)
	}
	best, bestRank := 1, -1
	for j := 1; j < len(lit); j++ {
		if rank := pairRarity(lit[j-1], lit[j], fold); rank > bestRank {
			best, bestRank = j, rank
		}
	}
	return best
}

// rarity is the position of c in byFrequency; for fold the more common of
// both cases counts.
func rarity(c byte, fold bool) int {
	rank := len(byFrequency)
	for _, v := range variants(c, fold) {
		if i := strings.IndexByte(byFrequency, v); i >= 0 {
			rank = min(rank, i)
		}
	}
	return rank
}

// Rules returns the names of the rules, in definition order.
func (r *Redactor) Rules() []string {
	names := make([]string, len(r.rules))
	for i, ru := range r.rules {
		names[i] = ru.name
	}
	return names
}

// Bytes returns src with secrets replaced by [Marker] and the number of
// replacements. When nothing matches it returns src itself without
// allocating; otherwise it returns a new slice and leaves src unchanged.
func (r *Redactor) Bytes(src []byte) ([]byte, int) {
	return r.redact(src)
}

// JSON is [Redactor.Bytes] for a JSON document (a raw transcript record):
// it first writes \u escapes of printable ASCII (other than '"' and '\\')
// and escaped slashes as the characters themselves — the same JSON value —
// so that a secret written with escapes (Go's encoder writes & < > as
// \u0026 \u003c \u003e) is seen and redacted like any other. When
// nothing is escaped or found it returns src itself.
func (r *Redactor) JSON(src []byte) ([]byte, int) {
	return r.redact(unescapeASCII(src))
}

// unescapeASCII replaces \uXXXX escapes of printable ASCII except '"' and
// '\\', and \/, by the character; escapes of other characters stay. It
// returns src itself when there are none.
func unescapeASCII(src []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i+1 < len(src); i++ {
		if src[i] != '\\' {
			// Jump to the next backslash (most bytes are not one).
			k := bytes.IndexByte(src[i+1:], '\\')
			if k < 0 {
				break
			}
			i += k + 1
			if i+1 >= len(src) {
				break
			}
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
			i++ // an escape that stays (\\, \", \n, \u00e9 …): skip its second byte
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

func hexByte(a, b byte) (byte, bool) {
	h, ok1 := hexVal(a)
	l, ok2 := hexVal(b)
	return h<<4 | l, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// minOpaqueRun is the shortest run Opaque replaces.
const minOpaqueRun = 32

// Opaque is [Redactor.JSON] plus the replacement of every random-looking
// run of at least 32 base64 bytes (letters and digits mixed, high
// entropy), whatever surrounds it: for excerpts whose only purpose is
// diagnosis (the preview of a line that is not valid JSON), where a key's
// body may stand alone, cut from the header that would name it.
func (r *Redactor) Opaque(src []byte) []byte {
	out, _ := r.JSON(src)
	var res []byte
	last := 0
	for i := 0; i < len(out); {
		switch { // (JSON escapes are skipped whole: a run never eats \n)
		case out[i] == '\\' && i+1 < len(out) && out[i+1] == 'u':
			i += 6 // an escape's letters are not part of a run
			continue
		case out[i] == '\\':
			i += 2
			continue
		case !isBase64URL(out[i]) && out[i] != '+' && out[i] != '/':
			i++
			continue
		}
		e := run(out, i, func(c byte) bool { return isBase64URL(c) || c == '+' || c == '/' || c == '=' }, len(out))
		if e-i >= minOpaqueRun && randomLooking(out[i:e], minOpaqueRun) {
			res = append(append(res, out[last:i]...), Marker...)
			last = e
		}
		i = e
	}
	if res == nil {
		return out
	}
	return append(res, out[last:]...)
}

// String is [Redactor.Bytes] for strings. It does not allocate when nothing
// matches.
func (r *Redactor) String(s string) (string, int) {
	// redact only reads its input, so viewing the string's bytes is safe.
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	out, n := r.redact(b)
	if n == 0 {
		return s, 0
	}
	return string(out), n
}

// maxPasses bounds the passes in redact.
const maxPasses = 4

// redact replaces all matches and repeats on its output until nothing more
// matches: a replacement can complete a match, as when a key glued to a
// private-key block gains a word boundary. This makes redaction idempotent.
func (r *Redactor) redact(src []byte) ([]byte, int) {
	total := 0
	for range maxPasses {
		spans := r.find(src)
		if len(spans) == 0 {
			break
		}
		src = replace(src, spans)
		total += len(spans)
	}
	return src, total
}

// regionHit is an anchor occurrence of a region rule.
type regionHit struct {
	rule    int
	at, end int
}

// find returns the sorted, non-overlapping spans to redact.
func (r *Redactor) find(src []byte) []span {
	var spans []span
	var resume resumeSet // a rule is not retried inside its own last match
	var hits *[]regionHit
	for i := r.next(src, 1); i < len(src); i = r.next(src, i+1) {
		if !r.possible(src, i) {
			continue
		}
		k := r.slot[uint16(src[i-1])<<8|uint16(src[i])]
		for _, a := range r.anchors[k-1] {
			at := i - a.off
			if !a.matches(src, at) || at < resume.get(a.rule) {
				continue
			}
			if at > 0 && startsEscape(src, at-1) {
				continue // the anchor's first byte is the n of \n, the t of \t, ...
			}
			ru := &r.rules[a.rule]
			if ru.region != nil {
				if hits == nil {
					hits = hitPool.Get().(*[]regionHit)
				}
				*hits = append(*hits, regionHit{a.rule, at, at + len(a.lit)})
				continue
			}
			s, e, ok := ru.match(src, at, at+len(a.lit))
			if ok && s < e {
				spans = append(spans, span{s, e})
				resume.set(a.rule, e)
			}
		}
	}
	if hits != nil {
		spans = r.regions(src, *hits, spans)
		*hits = (*hits)[:0]
		hitPool.Put(hits)
	}
	return merge(spans)
}

// hitPool recycles the region-rule occurrence lists of find.
var hitPool = sync.Pool{New: func() any { s := make([]regionHit, 0, 16); return &s }}

// regions runs every region rule that had anchor occurrences once, over
// all of them.
func (r *Redactor) regions(src []byte, hits []regionHit, spans []span) []span {
	slices.SortStableFunc(hits, func(a, b regionHit) int { return a.rule - b.rule })
	for i := 0; i < len(hits); {
		j := i
		for j < len(hits) && hits[j].rule == hits[i].rule {
			j++
		}
		spans = r.rules[hits[i].rule].region(src, hits[i:j], spans)
		i = j
	}
	return spans
}

// resumeSet maps rules to the end of their last match; it holds a few
// entries without allocating.
type resumeSet struct {
	n    int
	buf  [8][2]int
	more map[int]int
}

func (s *resumeSet) get(rule int) int {
	for i := 0; i < s.n; i++ {
		if s.buf[i][0] == rule {
			return s.buf[i][1]
		}
	}
	return s.more[rule]
}

func (s *resumeSet) set(rule, end int) {
	for i := 0; i < s.n; i++ {
		if s.buf[i][0] == rule {
			s.buf[i][1] = end
			return
		}
	}
	if s.n < len(s.buf) {
		s.buf[s.n] = [2]int{rule, end}
		s.n++
		return
	}
	if s.more == nil {
		s.more = map[int]int{}
	}
	s.more[rule] = end
}

// next returns the first i' >= i at which src[i'-1:i'+1] is a trigger
// pair, or len(src). This loop is where almost all time is spent.
func (r *Redactor) next(src []byte, i int) int {
	for ; i < len(src); i++ {
		p := uint16(src[i-1])<<8 | uint16(src[i])
		if r.trigger[p>>6]&(1<<(p&63)) != 0 {
			return i
		}
	}
	return i
}

// matches reports whether the anchor's literal occurs at src[at:].
func (a *anchor) matches(src []byte, at int) bool {
	if at < 0 || len(src)-at < len(a.lit) {
		return false
	}
	for i := 0; i < len(a.lit); i++ {
		c := src[at+i]
		if a.fold && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != a.lit[i] {
			return false
		}
	}
	return true
}

// merge sorts spans and joins the ones that overlap or touch.
func merge(spans []span) []span {
	if len(spans) < 2 {
		return spans
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	out := spans[:1]
	for _, s := range spans[1:] {
		last := &out[len(out)-1]
		if s.start <= last.end {
			last.end = max(last.end, s.end)
			continue
		}
		out = append(out, s)
	}
	return out
}

// replace returns a copy of src with each span replaced by Marker.
func replace(src []byte, spans []span) []byte {
	out := make([]byte, 0, len(src))
	prev := 0
	for _, s := range spans {
		out = append(out, src[prev:s.start]...)
		out = append(out, Marker...)
		prev = s.end
	}
	return append(out, src[prev:]...)
}
