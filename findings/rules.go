package findings

import (
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
)

// CategoryUnknown is the fallback category of every lens: no rule matched.
const CategoryUnknown = "unknown"

// Confidence levels of a finding.
const (
	ConfidenceLow    = "low"
	ConfidenceMedium = "medium"
	ConfidenceHigh   = "high"
)

// voice says whose text a row carries; a rule lists the voices it reads.
type voice uint8

const (
	// voiceUser is text the human typed (RoleUser).
	voiceUser voice = 1 << iota
	// voiceTool is tool, hook and system output, non-AI logs and the
	// error text of tool failures.
	voiceTool
)

// category is one output category of a lens with its prevention hint. The
// hint may contain {subject}, replaced by the lens's subject (for example
// `the "lavra:lavra-plan" skill`).
type category struct {
	name string
	hint string
}

// rule maps phrases heard in one voice (and optionally incident signals)
// to a category.
type rule struct {
	category string
	voices   voice
	phrases  *phrase.Set
	// extra is an optional matcher for what a phrase cannot express (a
	// non-zero exit code); it returns labels for Why.
	extra func(norm string) []string
	// signals are incident signals that support the category on their
	// own, citing the incident's anchors present in the bundle.
	signals []string
	// extract pulls the values a hint names ({dep}, {code}, {value},
	// {verb}) from the matched text.
	extract func(text string) map[string]string
}

// find returns the labels of everything the rule matches in norm (a
// phrase.Normalize result).
func (r *rule) find(norm string) []string {
	var out []string
	if r.phrases != nil {
		for _, m := range r.phrases.FindNormalized(norm) {
			out = append(out, m.Phrase)
		}
	}
	if r.extra != nil {
		out = append(out, r.extra(norm)...)
	}
	return out
}

// Rules is one lens's findings rule set: an ordered category table with
// prevention hints, phrase and signal rules, and the lens-specific
// contributing factor and open-question wording. A Rules value is immutable
// after construction and safe for concurrent use. A nil *Rules is valid:
// it derives only the lens-independent part (the unknown fallback, the
// generic factors and the open questions).
type Rules struct {
	lens       string
	categories []category
	index      map[string]int // category name → position in categories
	rules      []rule
	// subject renders the incident's subject for hints ("" when the lens
	// has none).
	subject func(*cortex.Incident) string
	// lensFactor is the lens's own contributing factor, if any.
	lensFactor func(*cortex.Bundle) (cortex.Factor, bool)
	// noAnchors is the open question when the bundle has no anchors.
	noAnchors string
	// rows and failures choose what the rules read (nil: every scanned
	// row, and the failures of any class that is the agent's own).
	rows     func(*cortex.Bundle) []*cortex.EvidenceRow
	failures func(*cortex.Bundle) []*cortex.ToolFailure
	// evidence derives findings from the lens's own bundle collections
	// (nil: none).
	evidence func(*cortex.Bundle) []lensHit
	// quotes finds the lines of the subject's document a finding is
	// about (nil: none).
	quotes func(b *cortex.Bundle, category string, vars map[string]string) []cortex.SkillQuote
}

// newRules builds a rule set. Rules naming a category missing from the
// table are dropped (the tests assert there are none); the unknown
// category is appended when the table lacks it.
func newRules(lens string, cats []category, rules []rule) *Rules {
	r := &Rules{lens: lens, index: map[string]int{}, noAnchors: "no anchors captured"}
	for _, c := range cats {
		if _, dup := r.index[c.name]; dup || c.name == "" {
			continue
		}
		r.index[c.name] = len(r.categories)
		r.categories = append(r.categories, c)
	}
	if _, ok := r.index[CategoryUnknown]; !ok {
		r.index[CategoryUnknown] = len(r.categories)
		r.categories = append(r.categories, category{name: CategoryUnknown,
			hint: "No deterministic signature matched; review the transcript manually before changing anything."})
	}
	for _, ru := range rules {
		if _, ok := r.index[ru.category]; ok && ru.category != CategoryUnknown {
			r.rules = append(r.rules, ru)
		}
	}
	return r
}

// Lens names the lens the rule set is for ("" for a nil *Rules).
func (r *Rules) Lens() string {
	if r == nil {
		return ""
	}
	return r.lens
}

// Categories lists the rule set's categories in output order, unknown
// last.
func (r *Rules) Categories() []string {
	if r == nil {
		return []string{CategoryUnknown}
	}
	out := make([]string, len(r.categories))
	for i, c := range r.categories {
		out[i] = c.name
	}
	return out
}

// hintDefaults are what a hint says when the evidence did not name a value.
var hintDefaults = map[string]string{
	"command": "the failing command", "program": "the tool", "dep": "the missing module", "code": "an error",
	"value": "a value or argument", "verb": "do that",
}

// hint renders a category's hint for the bundle's subject and the values
// the evidence named ({command}, {program}, {dep}, {code}, {value},
// {verb}: safe words only, backquoted; defaults when absent).
func (r *Rules) hint(i int, inc *cortex.Incident, vars map[string]string) string {
	h := r.categories[i].hint
	if !strings.Contains(h, "{") {
		return h
	}
	if strings.Contains(h, "{subject}") {
		s := ""
		if r.subject != nil {
			s = r.subject(inc)
		}
		h = strings.ReplaceAll(h, "{subject}", s)
	}
	for k, d := range hintDefaults {
		ph := "{" + k + "}"
		if !strings.Contains(h, ph) {
			continue
		}
		v := d
		if x := safeValue(vars[k]); x != "" {
			v = "`" + x + "`"
		}
		h = strings.ReplaceAll(h, ph, v)
	}
	return h
}

// hintValues returns the values a hint named (safe words only), nil when
// none.
func hintValues(vars map[string]string) map[string]string {
	var out map[string]string
	for k := range hintDefaults {
		if v := safeValue(vars[k]); v != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// safeValue keeps a value a hint may name: words of letters, digits and
// . _ : @ + - / (a program, a subcommand, a module, a status code), at most
// three of them and 60 bytes; anything else is dropped.
func safeValue(v string) string {
	words := strings.Fields(v)
	if len(words) == 0 || len(words) > 3 || len(v) > 60 {
		return ""
	}
	for _, w := range words {
		for _, c := range w {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:@+-/", c)) {
				return ""
			}
		}
	}
	return strings.Join(words, " ")
}

// fallback is the rule set of a nil *Rules: no phrase rules, only the
// unknown category.
var fallback = newRules("", nil, nil)

// ForLens returns the rule set of a lens ([Abuse], [Skill], [MCP],
// [Hook], [Friction]), and nil for any other lens. A nil result is still usable: its
// Derive yields the lens-independent findings only.
func ForLens(lens string) *Rules {
	switch lens {
	case cortex.LensAbuse:
		return abuseRules
	case cortex.LensSkill:
		return skillRules
	case cortex.LensMCP:
		return MCP()
	case cortex.LensHook:
		return Hook()
	case cortex.LensFriction:
		return Friction()
	}
	return nil
}

// Derive derives the findings of b with the rule set of b's lens (see
// [ForLens]); an unknown lens gets the lens-independent findings only.
func Derive(b *cortex.Bundle) cortex.Findings {
	if b == nil {
		return ForLens("").Derive(nil)
	}
	return ForLens(b.Incident.Lens).Derive(b)
}
