// Package voice reads what a human typed to a coding agent: the form of a
// message — whether it corrects the agent, stops it, asks to undo its
// work, reminds it of an instruction it ignored, complains about the
// result, swears at it, or only opens with a negation, challenges it or
// reports a broken result (which the dialogue around it decides). It is
// the vocabulary of the incident engine's user-voice signals, and it is
// pure: text in, a Reading out.
//
// The vocabulary is small general classes, not phrases from transcripts:
// the second person with a failure verb ("you forgot", "you didn't run"),
// negations and contradictions ("no, …", "that's not what I asked", "I
// meant"), reports that the result is still broken ("it still fails",
// "same error", "nothing changed"), stop and undo words, reminders ("as I
// said"), complaints about the result ("too faded", "not gold enough") —
// in English, and for the same classes in Spanish, Portuguese, French,
// German, Italian, Russian, Chinese (simplified and traditional), Japanese
// and Korean. The agent's own acknowledgement after a message (package
// claim) is read by the engine: it confirms a correction in any language.
//
// Words are matched on word boundaries (substrings in Chinese, Japanese and
// Korean), sentence by sentence, after
//
//   - blanking code and quotations (```fenced blocks```, `inline code`,
//     "double-quoted" spans on one line), so words a user quotes are not
//     read as their own;
//   - lower-casing, folding typographic apostrophes and quotes, and runs of
//     white space;
//   - restoring the apostrophes of contractions typed without one
//     ("didnt" → "didn't", "thats" → "that's").
//
// Acceptances are kept apart ("no, that's fine", "no worries" are not
// corrections) and mentions of swear words out ("add the word 'damn' to
// the list").
package voice

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/cortexhq/cortex/phrase"
)

// Categories of what a user's words say about the agent's work.
const (
	// Correction: the agent did the wrong thing, misunderstood, or its
	// result does not do what it claimed ("that's not what I asked",
	// "you forgot the changelog", "it still fails").
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
	// Dissatisfied: a complaint about the result ("meh", "it's too
	// complicated", "not bright enough", "doesn't look right").
	Dissatisfied = "dissatisfied"
	// Abuse: a swear word used, not mentioned.
	Abuse = "abuse"
	// Instruction is not friction: a standing instruction ("do not commit
	// anything", "dont make any changes yet"). It becomes evidence when it
	// follows an interrupt or a refusal (the reason the user stopped the
	// agent) or when the agent acknowledges it was wrong.
	Instruction = "instruction"
	// Negation: the message opens with a negation ("no, …", "nope"): a
	// correction when it answers the agent's work, an answer when it
	// answers the agent's question.
	Negation = "negation"
	// Contrast: the message sets what is wanted against something else
	// ("…, not the file", "instead of", "the order doesn't matter"): a
	// correction of the agent's work, short of a new task.
	Contrast = "contrast"
	// Challenge: a question or hedge that challenges what the agent did
	// ("are you sure?", "why is it in its own folder?", "wait, …"): a
	// correction when the agent then acknowledges a mistake.
	Challenge = "challenge"
	// Report: the result is broken or missing ("the page is blank", "I
	// don't see the button"), without a sign it is the agent's doing: a
	// correction after the agent claimed the work done, or when it
	// acknowledges a mistake.
	Report = "report"
	// Removal: the message asks to take something out ("remove that line",
	// "drop the em dashes", "删掉"): in a short reply to the agent's work,
	// what it added was not wanted.
	Removal = "removal"
	// Acceptance: the message opens by accepting or thanking ("ok", "looks
	// good", "thanks", "好的") — no verdict against the agent.
	Acceptance = "acceptance"
)

// Categories lists the categories in a stable order.
func Categories() []string {
	return []string{Correction, Stop, Revert, Scope, Reminder, Dissatisfied, Abuse, Instruction, Negation, Contrast, Challenge,
		Report, Removal, Acceptance}
}

// Strong reports whether a category is a verdict on its own (the others
// need the dialogue around them: an instruction after a stop, a negation
// that answers the agent's work, a challenge the agent concedes).
func Strong(category string) bool {
	switch category {
	case Correction, Stop, Revert, Scope, Reminder, Dissatisfied, Abuse:
		return true
	}
	return false
}

// Conditional reports whether a category is a verdict only in context
// (negation, contrast, challenge, report, instruction).
func Conditional(category string) bool {
	switch category {
	case Instruction, Negation, Contrast, Challenge, Report, Removal:
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
	// Words counts the message's words (CJK characters count one each):
	// a long message is more often a new task than a reply.
	Words int `json:"words,omitempty"`
	// Lead are the categories found in the message's lead — the
	// sentences that start within its first leadWords words — when it
	// is longer than that: what the user says of the agent's work comes
	// first; words deep in a long message are more often a task or a
	// pasted document.
	Lead []string `json:"lead,omitempty"`
}

// leadWords bounds the lead of a message (see Reading.Lead).
const leadWords = 40

// Asks reports whether a message ends with a question (its last sentence
// ends with a question mark, code and quotations aside).
func Asks(text string) bool {
	sentences, questions := splitSentences(Normalize(text))
	for i := len(sentences) - 1; i >= 0; i-- {
		if strings.TrimSpace(sentences[i]) != "" {
			return questions[i]
		}
	}
	return false
}

// Has reports whether the reading carries category c.
func (r Reading) Has(c string) bool { return slices.Contains(r.Categories, c) }

// Leading is the reading as its lead says it: a message of at most
// leadWords words whole, a longer one only the categories of its lead
// (abuse and acceptance, read anywhere, kept).
func (r Reading) Leading() Reading {
	if r.Words <= leadWords {
		return r
	}
	out := r
	out.Categories = slices.Clone(r.Lead)
	for _, c := range []string{Abuse, Acceptance} {
		if r.Has(c) && !slices.Contains(out.Categories, c) {
			out.Categories = append(out.Categories, c)
		}
	}
	return out
}

// Friction reports whether the reading carries a strong category.
func (r Reading) Friction() bool {
	for _, c := range r.Categories {
		if Strong(c) {
			return true
		}
	}
	return false
}

// Says reports whether the reading carries any category but acceptance:
// the message may be friction, in its context.
func (r Reading) Says() bool {
	for _, c := range r.Categories {
		if c != Acceptance {
			return true
		}
	}
	return false
}

// rule is one class's pattern, compiled as one alternation over
// normalized text. An opener runs on the message's first sentence only.
type rule struct {
	category string
	lang     string
	opener   bool
	// wish marks a wish said as a negation: not a correction after praise.
	wish bool
	expr *pattern
}

// b wraps an alternation in word boundaries that also hold next to
// apostrophes (RE2's \b treats ' as a boundary, which is what we want:
// "that's" ends on a word character).
func b(alts ...string) *pattern {
	return compileAlts(`(?:^|[^\pL\pN_])(`+strings.Join(alts, "|")+`)(?:$|[^\pL\pN_])`, alts)
}

// rules are every language's classes.
var rules = append(slices.Clone(english), otherRules(other)...)

// sentenceEnd splits a message into sentences: at ., !, ?, ; (and their
// full-width forms) or a line break followed by white space or the end
// ("plan.md" and "e.g" stay whole words; "..", common in typed prompts,
// ends a sentence).
var sentenceEnd = regexp.MustCompile(`(?:[.!?;]+(?:\s+|$)|\.\.+|\n+|[。！？；…]+\s*)`)

// findAll calls found with the sentence index and first group (trimmed)
// of every match of the rule in the sentences (at most 4 per sentence);
// an opener looks at the first sentence only. With masks (from
// ruleTexts), it skips the sentences whose mask lacks bit: the rule
// cannot match them.
func findAll(ru rule, sentences []string, masks []uint64, bit uint64, found func(i int, p string)) {
	if ru.opener && len(sentences) > 1 {
		sentences = sentences[:1]
	}
	for i, s := range sentences {
		if masks != nil && masks[i]&bit == 0 {
			continue
		}
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		for _, m := range ru.expr.re.FindAllStringSubmatch(s, 4) {
			found(i, strings.TrimSpace(m[1]))
		}
	}
}

// splitSentences splits a normalized message into sentences (see
// sentenceEnd), dropping the empty ones before the first, and says which
// end with a question mark.
func splitSentences(norm string) (sentences []string, questions []bool) {
	last := 0
	for _, loc := range sentenceEnd.FindAllStringIndex(norm, -1) {
		sentences = append(sentences, norm[last:loc[0]])
		sep := norm[loc[0]:loc[1]]
		questions = append(questions, strings.Contains(sep, "?") || strings.Contains(sep, "？"))
		last = loc[1]
	}
	sentences = append(sentences, norm[last:])
	questions = append(questions, false)
	for i, x := range sentences {
		if strings.TrimSpace(x) != "" {
			return sentences[i:], questions[i:]
		}
	}
	return nil, nil
}

// askingWord opens a question that asks rather than asserts ("is it too
// big?", "do I need to …?").
var askingWord = regexp.MustCompile(`^\s*(?:is|are|was|were|do|does|did|should|would|could|can|will|shall|have|has|need|may|might|isn't|aren't|doesn't|don't|shouldn't|wouldn't)\b`)

// ruleTexts finds which rules can match a sentence (bit i: rules[i]).
var ruleTexts = func() *textIndex {
	ps := make([]*pattern, len(rules))
	for i, r := range rules {
		ps[i] = r.expr
	}
	return newTextIndex(ps)
}()

// notNegations open with a negation word without negating the agent's
// work ("no idea", "not sure", "no rush"; in Chinese "不过" is "but").
var notNegations = []string{"no idea", "no clue", "not sure", "no rush", "no need", "no problem", "no worries", "not bad",
	"never mind", "nevermind", "no pressure", "not yet", "不过", "不過", "不错", "不錯", "不客气", "不客氣", "没问题", "沒問題", "没关系", "沒關係", "不用了"}

// countWords counts the words of a normalized text: runs of letters or
// digits, each CJK character one word.
func countWords(norm string) int {
	n, in := 0, false
	for _, r := range norm {
		switch {
		case r >= 0x3040 && r <= 0x30ff || r >= 0x3400 && r <= 0x9fff || r >= 0xac00 && r <= 0xd7af || r >= 0xf900 && r <= 0xfaff:
			n++
			in = false
		case r == '\'' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 0x7f && unicode.IsLetter(r):
			if !in {
				n++
			}
			in = true
		default:
			in = false
		}
	}
	return n
}

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
	r.Words = countWords(norm)
	var accepted bool
	if prefilter {
		accepted = acceptance.MatchString(norm)
	} else {
		accepted = acceptance.re.MatchString(norm)
	}
	sentences, questions := splitSentences(norm)
	// Sentences starting within the first leadWords words are the lead.
	lead, seen := make([]bool, len(sentences)), 0
	for i, s := range sentences {
		lead[i] = seen < leadWords
		seen += countWords(s)
	}
	long := r.Words > leadWords
	var masks []uint64
	if prefilter {
		var buf [32]uint64
		masks = buf[:0]
		for _, s := range sentences {
			masks = append(masks, ruleTexts.scan(s))
		}
	}
	notNegation := slices.ContainsFunc(notNegations, func(p string) bool { return strings.HasPrefix(norm, p) })
	praised := len(sentences) > 0 && praise.MatchString(sentences[0])
	add := func(category, p string) {
		if !slices.Contains(r.Categories, category) {
			r.Categories = append(r.Categories, category)
		}
		if p != "" && !slices.Contains(r.Phrases, p) {
			r.Phrases = append(r.Phrases, p)
		}
	}
	for k, ru := range rules {
		findAll(ru, sentences, masks, uint64(1)<<k, func(i int, p string) {
			category := ru.category
			switch {
			case accepted && category == Correction && strings.HasPrefix(p, "no"):
				return // "no, that's fine"
			case praised && ru.wish:
				return // "this looks so good. I don't want it on earth though"
			case category == Negation && (accepted || notNegation):
				return // "no worries", "not sure"
			case questions[i] && (category == Dissatisfied || category == Report) && askingWord.MatchString(sentences[i]):
				// "is the board too big?" asks; what the agent then says
				// decides whether it was a complaint.
				category = Challenge
			}
			add(category, p)
			if long && lead[i] && !slices.Contains(r.Lead, category) {
				r.Lead = append(r.Lead, category)
			}
		})
	}
	if accepted || praised {
		add(Acceptance, "")
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
	order := Categories()
	byOrder := func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) }
	slices.SortFunc(r.Categories, byOrder)
	slices.SortFunc(r.Lead, byOrder)
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
