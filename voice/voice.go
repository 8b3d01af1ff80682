// Package voice reads what a human typed to a coding agent: whether the
// words correct the agent, stop it, ask to undo its work, remind it of an
// instruction it ignored, complain, or swear at it. It is the vocabulary of
// the incident engine's user-voice signals, and it is pure: text in, a
// Reading out.
//
// The vocabulary was grown from how people write to agents in real
// transcripts: lower case, no apostrophes ("i didnt ask you to rewrite
// it"), ".." as punctuation, instructions without a subject ("do not
// commit anything"). It matches on word boundaries, after
//
//   - blanking code and quotations (```fenced blocks```, `inline code`,
//     "double-quoted" spans on one line), so words a user quotes are not
//     read as their own;
//   - lower-casing, folding typographic apostrophes and quotes, and runs of
//     white space;
//   - restoring the apostrophes of contractions typed without one
//     ("didnt" → "didn't", "thats" → "that's").
//
// It keeps acceptances out ("no, that's fine", "no worries" are not
// corrections) and mentions of swear words out ("add the word 'damn' to
// the list").
package voice

import (
	"bytes"
	"regexp"
	"slices"
	"strings"

	"github.com/cortexhq/cortex/phrase"
)

// Categories of what a user's words say about the agent's work.
const (
	// Correction: the agent did the wrong thing, misunderstood, or its
	// result does not do what it claimed ("that's not what I asked",
	// "i didnt ask you to rewrite it", "i meant for …", "you missed …").
	Correction = "correction"
	// Stop: the user stops the work or calls it unneeded ("you can stop.
	// unnecessary", "no need to run tests, I'll run them").
	Stop = "stop"
	// Revert: the user asks to undo the agent's work ("revert any changes
	// you have", "start over").
	Revert = "revert"
	// Scope: the agent worked on the wrong thing or from the wrong source
	// ("wrong repo", "source of truth").
	Scope = "scope"
	// Reminder: the user repeats an instruction the agent did not follow
	// ("I told you to", "as I said", "the skill says").
	Reminder = "reminder"
	// Dissatisfied is a weak signal: a complaint about the result without
	// a correction ("meh", "it's too complicated", "ew i hate all of
	// those").
	Dissatisfied = "dissatisfied"
	// Abuse: a swear word used, not mentioned.
	Abuse = "abuse"
	// Instruction is not friction: a standing instruction ("do not commit
	// anything", "dont make any changes yet"). It becomes evidence when it
	// follows an interrupt or a rejection (the reason the user stopped the
	// agent) or when the agent acts against it.
	Instruction = "instruction"
)

// Categories lists the categories in a stable order.
func Categories() []string {
	return []string{Correction, Stop, Revert, Scope, Reminder, Dissatisfied, Abuse, Instruction}
}

// Strong reports whether a category is a verdict on its own (weak
// categories and instructions are not).
func Strong(category string) bool {
	switch category {
	case Correction, Stop, Revert, Scope, Reminder, Abuse:
		return true
	}
	return false
}

// Reading is what one message says.
type Reading struct {
	// Categories found, in the order of Categories().
	Categories []string `json:"categories,omitempty"`
	// Phrases are the matched words (as normalized), for "why".
	Phrases []string `json:"phrases,omitempty"`
	// Terms are the swear words used.
	Terms []string `json:"terms,omitempty"`
	// Intensity rates abuse: 0 none, 1 a lone mild word ("crap"), up to 5
	// (several terms, shouting, aimed at the agent).
	Intensity int `json:"intensity,omitempty"`
}

// Has reports whether the reading carries category c.
func (r Reading) Has(c string) bool { return slices.Contains(r.Categories, c) }

// Friction reports whether the reading carries a strong category.
func (r Reading) Friction() bool {
	for _, c := range r.Categories {
		if Strong(c) {
			return true
		}
	}
	return false
}

// rule is one category's patterns, compiled as one alternation over
// normalized text.
type rule struct {
	category string
	re       *pattern
}

// b wraps an alternation in word boundaries that also hold next to
// apostrophes (RE2's \b treats ' as a boundary, which is what we want:
// "that's" ends on a word character).
func b(alts ...string) *pattern {
	return compile(`(?:^|[^\pL\pN_])(` + strings.Join(alts, "|") + `)(?:$|[^\pL\pN_])`)
}

// The vocabulary. Patterns run on each sentence of Normalize output
// (lower case, ASCII apostrophes, contractions restored, single spaces);
// ^ and $ anchor at the sentence's ends.
var rules = []rule{
	{Correction, b(
		`(?:that's|that is|this is|it's|it is|its) not (?:really |exactly |quite )?what (?:i|we) (?:asked for|asked|meant|wanted|want|need|said|had in mind)`,
		`not (?:really |exactly |quite )?what (?:i|we) (?:asked for|asked|meant|wanted|had in mind)`,
		`i (?:didn't|did not|never) (?:ask|asked|tell|told|want|wanted|say|said) (?:you )?(?:to|for|that)`,
		`(?:i|we) (?:didn't|did not|never) (?:ask|asked) (?:you|for)`,
		`who asked (?:you|for)`,
		`i meant`, `what i meant`, `i (?:was|am|'m) (?:talking|asking) about`,
		`(?:that's|that is|this is|it's|it is) not how (?:i|we|it|this|that|the)`,
		`(?:this|that) (?:isn't|is not) (?:my|our) (?:workflow|process|setup|intent|point)`,
		`(?:that's|that is|this is|it's|it is) (?:wrong|incorrect|not right|not correct|not true|backwards)`,
		`you(?:'re| are) wrong`, `you got (?:it|this|that) wrong`,
		`you (?:missed|forgot|skipped|ignored|broke|overwrote|misunderstood|misread|messed up)`,
		`you (?:didn't|did not|haven't|have not|never) (?:actually )?(?:do|follow|read|run|test|check|update|fix|implement|use|commit|push|listen|change|finish)`,
		`you were supposed to`, `you should(?:n't| not)? have`, `why (?:did|would) you`,
		`you (?:didn't|did not) need to`, `(?:it|that|this) (?:didn't|did not) need`,
		`but (?:that's|that is|it's|it is) actually`,
		`no,? (?:that|this|it)(?:'s| is| was| has| does| did)? (?:not|n't)`,
		`no,? (?:that|this|it) (?:isn't|wasn't|hasn't|doesn't|didn't)`,
		`no,? (?:that|this|it)(?:'s| is| was) (?:the )?(?:wrong|incorrect)`,
		`no,? i (?:said|meant|asked|wanted|want|told|need)`,
		`no,? not (?:that|this|the|like|what|quite)`,
		`no,? i (?:don't|do not|can't|cannot) see`,
		`no,? (?:set|use|put|change|keep|leave|make|revert|undo) (?:it|the|that|this|them|to)`,
		`(?:it|this|that) still (?:doesn't|does not|isn't|is not|didn't|did not|won't|fails|breaks)`,
		`still (?:not|broken|failing|the same|wrong) `,
		`(?:it|this|that) (?:really )?(?:doesn't|does not|didn't|did not) (?:work|change anything|fix|help)`,
		`(?:it|this|that) (?:really )?(?:doesn't|does not) (?:look|seem) like (?:it|anything) (?:got|changed|worked|did|was|has)`,
		`(?:that|this|it) (?:shouldn't|should not) (?:happen|be happening)`,
		`^fix your`,
	)},
	{Stop, b(
		`you can stop`, `(?:please |just |ok,? |okay,? )?stop (?:it|that|this|now|here|there|doing|working|what you)`,
		`^(?:please |ok,? |okay,? |just )?stop,?$`,
		`^(?:that's |this is |it's |its )?(?:unnecessary|not necessary|not needed)`,
		`no need (?:to|for)`, `there(?:'s| is) no need`,
		`(?:i'll|i will) (?:run|test) (?:it|them|that|this|those|the \pL+)`,
		`(?:i'll|i will|let me) (?:do|handle|check|fix|run|test) (?:it|them|that|this|those) myself`,
		`never ?mind`, `forget (?:it|that|about it)`, `don't bother`, `(?:that's|that is) enough`,
		`(?:cancel|abort) (?:that|it|this|the)`,
	)},
	{Revert, b(
		`revert`, `reverted`, `undo`, `roll ?back`, `put (?:it|that|them|everything) back`,
		`discard (?:the |your |these |those |all |any |my )?(?:changes|edits|work)`,
		`start over`, `back to the drawing board`, `throw (?:it|that|this) away`,
		`restore (?:it|the|that|them) (?:to|back)`,
	)},
	{Scope, b(
		`wrong (?:repo|repository|branch|directory|folder|file|project|checkout|worktree|source|path|environment|server|account|one|tool|command|skill|version|model|approach|url|endpoint|table|database)`,
		`source of truth`, `stale data`, `outdated data`, `memory-vs-live`, `memory vs live`, `not the live`,
		`(?:the )?other (?:repo|repository|branch|checkout|worktree)`,
		`not (?:that|this) (?:repo|repository|branch|file|folder|directory|project|one)`,
	)},
	{Reminder, b(
		`i told you`, `i (?:already |just )?(?:said|asked|told you) (?:to|not to|that)`, `as i said`, `like i said`,
		`^i (?:said|asked for) (?:the|a|an|to|not|that|it)`,
		`how many times`, `you keep`, `i (?:asked|told) you (?:to|not to)`,
		`without (?:any )?verification`, `claimed success without`, `should have created (?:a|an) (?:bead|issue)`,
		`stopped at the plan`, `stopped at plan`, `i asked you to implement`,
		`the (?:skill|instructions?|docs?|readme) (?:says|said|say)`, `you didn't follow`, `you did not follow`,
		`agents\.md says`, `claude\.md says`, `wrong transport`, `instead of using \pL+`,
	)},
	{Dissatisfied, b(
		`meh`, `ew`, `ugh`, `i hate (?:all of )?(?:this|that|those|it|them|these)`,
		`(?:this|that|the) (?:idea |approach |design )?sucks`,
		`(?:it|this|that)(?:'s| is| was| looks| feels| sounds) (?:a (?:little|bit) )?(?:too (?:complicated|complex|much)|terrible|awful|horrible|confusing|worse)`,
		`too complicated`, `(?:super|very|so|really|pretty) confusing`, `i (?:don't|do not) get it`,
		`(?:we|you) (?:don't|do not) need to`, `not really what`,
	)},
	{Instruction, b(
		`(?:do not|don't|never|dont) (?:make any|make|implement|run|commit|push|change|touch|edit|create|add|write|open|start|do any|use|delete|remove|merge|deploy|install)(?: \pL+)?`,
		`without asking`, `before you (?:make|do|change|start)`, `i (?:don't|do not) want (?:a|any|you to)`,
	)},
}

// sentenceEnd splits a message into sentences: at ., !, ?, ; or a line
// break followed by white space or the end ("plan.md" and "e.g" stay whole
// words; "..", common in typed prompts, ends a sentence).
var sentenceEnd = regexp.MustCompile(`(?:[.!?;]+(?:\s+|$)|\.\.+|\n+)`)

// findAll returns the first group of every match of re in the sentences
// (at most 4 per sentence), trimmed. With masks (from ruleTexts), it skips
// the sentences whose mask lacks bit: re cannot match them.
func findAll(re *pattern, sentences []string, masks []uint32, bit uint32) []string {
	var out []string
	for i, s := range sentences {
		if masks != nil && masks[i]&bit == 0 {
			continue
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		for _, m := range re.re.FindAllStringSubmatch(s, 4) {
			out = append(out, m[1])
		}
	}
	return out
}

// ruleTexts finds which rules can match a sentence (bit i: rules[i]).
var ruleTexts = func() *textIndex {
	ps := make([]*pattern, len(rules))
	for i, r := range rules {
		ps[i] = r.re
	}
	return newTextIndex(ps)
}()

// acceptance suppresses corrections that are really agreement ("no,
// that's fine", "no worries").
var acceptance = b(
	`no,? (?:that's|that is|it's|it is|then it's|then its) (?:fine|good|great|ok|okay|perfect|right|correct)`,
	`no (?:worries|problem|problems)`, `not bad`, `nope,? (?:all )?good`,
)

// DefaultAbuseTerms are the swear words the abuse reading looks for.
var DefaultAbuseTerms = []string{
	"asshole", "bastard", "bitch", "biznitch", "bullshit", "crap", "damn", "dick",
	"fuck", "fucked", "fucker", "fucking", "hell", "piss", "shit", "shitty",
}

var defaultAbuse = phrase.NewSet(DefaultAbuseTerms...)

// mild terms alone rate intensity 1.
var mild = map[string]bool{"crap": true, "damn": true, "hell": true, "piss": true}

// A swear word is mentioned rather than used when the words before it
// name it as a word ("the word damn", "terms like crap", "such as hell"),
// when the words after it do ("crap is a swear word", "add hell to the
// list"), or when it stands in single quotes.
var (
	mentionBefore = regexp.MustCompile(`(?:\bwords?|\bterms?|\bswear(?:ing)?|\bcurse|\bsuch as|\be\.g\.|\bcalled|\bspelled)\W+(?:\pL+\W+){0,2}$`)
	mentionAfter  = regexp.MustCompile(`^\W*(?:(?:is|are|as) (?:a |an )?(?:swear|curse|bad|banned|blocked|offensive)|(?:to|from|in|on) (?:the |our |your |a )?(?:list|filter|blocklist|denylist|allowlist|detector|set)|,? ?(?:etc|and so on)\b)`)
)

// mentioned reports whether the term at norm[pos:pos+n] is talked about
// rather than used.
func mentioned(norm string, pos, n int) bool {
	if pos > 0 && pos+n < len(norm) && norm[pos-1] == '\'' && norm[pos+n] == '\'' {
		return true
	}
	return mentionBefore.MatchString(norm[:pos]) || mentionAfter.MatchString(norm[pos+n:])
}

// Read returns what text says. abuse is the swear-word set to use (nil:
// DefaultAbuseTerms).
func Read(text string, abuse *phrase.Set) Reading {
	norm := Normalize(text)
	return ReadNormalized(norm, abuse)
}

// ReadNormalized is Read on a Normalize result.
func ReadNormalized(norm string, abuse *phrase.Set) Reading {
	return readNormalized(norm, abuse, true)
}

// readNormalized is ReadNormalized; without prefilter every expression
// runs on every sentence (the reference the prefilter is tested against).
func readNormalized(norm string, abuse *phrase.Set, prefilter bool) Reading {
	var r Reading
	if norm == "" {
		return r
	}
	var accepted bool
	if prefilter {
		accepted = acceptance.MatchString(norm)
	} else {
		accepted = acceptance.re.MatchString(norm)
	}
	sentences := sentenceEnd.Split(norm, -1)
	var masks []uint32
	if prefilter {
		var buf [32]uint32
		masks = buf[:0]
		for _, s := range sentences {
			masks = append(masks, ruleTexts.scan(s))
		}
	}
	for k, ru := range rules {
		for _, m := range findAll(ru.re, sentences, masks, uint32(1)<<k) {
			p := m
			if accepted && ru.category == Correction && strings.HasPrefix(p, "no") {
				continue
			}
			if !slices.Contains(r.Categories, ru.category) {
				r.Categories = append(r.Categories, ru.category)
			}
			if !slices.Contains(r.Phrases, p) {
				r.Phrases = append(r.Phrases, p)
			}
		}
	}
	if abuse == nil {
		abuse = defaultAbuse
	}
	for _, m := range abuse.FindNormalized(norm) {
		if mentioned(norm, m.Pos, len(m.Phrase)) {
			continue
		}
		r.Terms = append(r.Terms, m.Phrase)
	}
	if len(r.Terms) > 0 {
		r.Categories = append(r.Categories, Abuse)
		r.Intensity = intensity(norm, r.Terms)
	}
	return r
}

// intensity rates swearing from 1 (one mild word) to 5: more terms,
// strong words, words aimed at the agent ("you", "your") and shouting
// (exclamation marks) each add one.
func intensity(norm string, terms []string) int {
	n := 1
	if len(terms) > 1 {
		n++
	}
	for _, t := range terms {
		if !mild[t] {
			n++
			break
		}
	}
	if aimed.MatchString(norm) {
		n++
	}
	if strings.Count(norm, "!") >= 2 || strings.Contains(norm, "?!") {
		n++
	}
	return min(n, 5)
}

var aimed = b(`you`, `your`, `you're`, `u`)

// Normalize prepares a message for matching: code and quotations blanked,
// lower case, ASCII apostrophes and quotes, contractions typed without an
// apostrophe restored, white space folded.
func Normalize(text string) string {
	return contractions(phrase.Normalize(Unquoted(text)))
}

// contracted maps contractions typed without an apostrophe to their
// spelled form. Ambiguous words ("ill", "were", "its", "lets", "wont" is
// kept: it is rarely a noun in prompts to an agent) stay out.
var contracted = map[string]string{
	"didnt": "didn't", "dont": "don't", "doesnt": "doesn't", "isnt": "isn't", "arent": "aren't",
	"wasnt": "wasn't", "werent": "weren't", "cant": "can't", "wont": "won't", "shouldnt": "shouldn't",
	"wouldnt": "wouldn't", "couldnt": "couldn't", "havent": "haven't", "hasnt": "hasn't", "hadnt": "hadn't",
	"thats": "that's", "whats": "what's", "im": "i'm", "ive": "i've", "youre": "you're", "youve": "you've",
	"theyre": "they're", "theres": "there's", "heres": "here's", "itll": "it'll", "youll": "you'll",
	"mustnt": "mustn't", "neednt": "needn't",
}

// contractions restores apostrophes in norm (lower case already).
func contractions(norm string) string {
	var sb strings.Builder
	changed := false
	start := -1
	flush := func(end int) {
		w := norm[start:end]
		if c, ok := contracted[w]; ok {
			sb.WriteString(c)
			changed = true
		} else {
			sb.WriteString(w)
		}
		start = -1
	}
	for i := 0; i < len(norm); i++ {
		c := norm[i]
		if c >= 'a' && c <= 'z' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			flush(i)
		}
		sb.WriteByte(c)
	}
	if start >= 0 {
		flush(len(norm))
	}
	if !changed {
		return norm
	}
	return sb.String()
}

// maxQuoted bounds a quoted span that Unquoted blanks: longer "quotes" are
// more likely an unbalanced quote character than a quotation.
const maxQuoted = 300

var (
	fence      = []byte("```")
	openQuote  = []byte("“")
	closeQuote = []byte("”")
)

// Unquoted blanks code and quotations in what the user typed — ```fenced
// blocks```, `inline code` and "double-quoted" spans on one line — so that
// words the user quotes (an error string to log, a test name) are not
// read as the user's own voice. Line breaks stay.
func Unquoted(s string) string {
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
	// (bytes functions on b: converting b[i:] to a string would copy the
	// rest of the text at every quote.)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '`' && bytes.HasPrefix(b[i:], fence):
			end := bytes.Index(b[i+3:], fence)
			if end < 0 {
				blank(i, len(b))
				return string(b)
			}
			blank(i, i+3+end+3)
			i += 3 + end + 2
		case b[i] == '`' || b[i] == '"':
			end := bytes.IndexAny(b[i+1:], string(b[i])+"\n")
			if end < 0 || end > maxQuoted || b[i+1+end] == '\n' {
				continue
			}
			blank(i, i+1+end+1)
			i += end + 1
		case bytes.HasPrefix(b[i:], openQuote):
			end := bytes.Index(b[i:], closeQuote)
			if end < 0 || end > maxQuoted || bytes.IndexByte(b[i:i+end], '\n') >= 0 {
				continue
			}
			blank(i, i+end+len(closeQuote))
			i += end + len(closeQuote) - 1
		}
	}
	return string(b)
}
