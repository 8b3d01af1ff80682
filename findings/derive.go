package findings

import (
	"sort"
	"strconv"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
	uservoice "github.com/cortexhq/cortex/voice"
)

// maxWhyLabels bounds the phrases named in a finding's Why.
const maxWhyLabels = 6

// hit accumulates the evidence of one category.
type hit struct {
	rows    map[int64]bool  // matched row ids
	events  map[int64]bool  // matched tool-failure event ids
	extra   int             // tool failures whose log ids are not matched rows
	logIDs  map[int64]bool  // every cited log id
	labels  map[string]bool // matched phrases and signals, for Why
	signals map[string]bool // supporting signals
	// cause is the first line of evidence that matched; vars the values
	// the evidence named for the hint.
	cause string
	vars  map[string]string
	// textOnly is set while the only evidence is a phrase in a failed
	// call's error text (no user words, no lens evidence, no signal).
	textOnly bool
	other    bool
}

func newHit() *hit {
	return &hit{rows: map[int64]bool{}, events: map[int64]bool{}, logIDs: map[int64]bool{},
		labels: map[string]bool{}, signals: map[string]bool{}, vars: map[string]string{}}
}

// note records the cause line and the values of a match (the first ones
// win).
func (h *hit) note(cause string, vars map[string]string) {
	if h.cause == "" {
		h.cause = oneLine(cause)
	}
	for k, v := range vars {
		if _, ok := h.vars[k]; !ok && v != "" {
			h.vars[k] = v
		}
	}
}

// maxCause bounds a finding's cause line.
const maxCause = 200

// oneLine flattens text to one bounded line without control characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return ' '
		}
		return r
	}, s)), " ")
	if len(s) > maxCause {
		s = cortex.CutUTF8(s, maxCause) + "…"
	}
	return s
}

// lineWith returns the line of text that holds the first of labels
// (normalized text matched; the original line is returned), else the
// first non-empty line.
func lineWith(text string, labels []string) string {
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		n := phrase.Normalize(l)
		for _, lb := range labels {
			if strings.Contains(n, lb) {
				return l
			}
		}
	}
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

// extractVars runs a rule's extractor.
func extractVars(ru *rule, text string) map[string]string {
	if ru.extract == nil {
		return nil
	}
	return ru.extract(text)
}

// Derive derives the findings of b: one finding per matched category in
// the rule set's category order (or the unknown fallback), the
// contributing factors and the open questions. It never panics; a nil
// bundle is treated as an empty one. Every slice of the result is
// non-nil.
func (r *Rules) Derive(b *cortex.Bundle) cortex.Findings {
	if r == nil {
		r = fallback
	}
	if b == nil {
		b = &cortex.Bundle{}
	}
	hits := make([]*hit, len(r.categories))
	get := func(cat string) *hit {
		i := r.index[cat]
		if hits[i] == nil {
			hits[i] = newHit()
		}
		return hits[i]
	}

	rows, failures := scannedRows(b), agentFailures(b)
	if r.rows != nil {
		rows = r.rows(b)
	}
	if r.failures != nil {
		failures = r.failures(b)
	}

	// Rows.
	for _, row := range rows {
		v := voiceOf(row)
		if v == 0 {
			continue
		}
		norm := phrase.Normalize(row.Message)
		if v == voiceUser {
			// The user's words as package voice reads them: quotations and
			// code blanked, contractions typed without an apostrophe
			// restored.
			norm = uservoice.Normalize(row.Message)
		}
		for i := range r.rules {
			ru := &r.rules[i]
			if ru.voices&v == 0 {
				continue
			}
			labels := ru.find(norm)
			if len(labels) == 0 {
				continue
			}
			h := get(ru.category)
			h.other = true
			h.rows[row.ID] = true
			h.logIDs[row.ID] = true
			for _, l := range labels {
				h.labels[l] = true
			}
			h.note(lineWith(row.Message, labels), extractVars(ru, row.Message))
		}
	}

	// Tool failures: their error text is tool voice.
	for _, tf := range failures {
		norm := phrase.Normalize(tf.ErrorText)
		if norm == "" {
			continue
		}
		for i := range r.rules {
			ru := &r.rules[i]
			if ru.voices&voiceTool == 0 {
				continue
			}
			labels := ru.find(norm)
			if len(labels) == 0 {
				continue
			}
			h := get(ru.category)
			h.textOnly = true
			h.events[tf.EventID] = true
			for _, id := range []*int64{tf.ResultLogID, tf.CallLogID} {
				if id != nil {
					h.logIDs[*id] = true
				}
			}
			for _, l := range labels {
				h.labels[l] = true
			}
			vars := map[string]string{"command": tf.Operation}
			if p, _, ok := strings.Cut(tf.Operation, " "); ok {
				vars["program"] = p
			} else if tf.Command != "" {
				vars["program"] = tf.Operation
			}
			for k, v := range extractVars(ru, tf.ErrorText) {
				vars[k] = v
			}
			cause := lineWith(cortex.UnwrapContent(tf.ErrorText), labels)
			if tf.Line != "" && phrase.Normalize(tf.Line) != "" && len(labels) > 0 && strings.Contains(phrase.Normalize(tf.Line), labels[0]) {
				cause = tf.Line
			}
			h.note(cause, vars)
		}
	}

	// The incident's own MCP calls: their error text is MCP voice, read
	// only by rules of that voice (the MCP lens), so that a builtin tool's
	// failure nearby never becomes an MCP finding.
	for _, ev := range mcpCallErrors(b) {
		norm := phrase.Normalize(ev.ErrorText)
		for i := range r.rules {
			ru := &r.rules[i]
			if ru.voices&voiceMCP == 0 {
				continue
			}
			labels := ru.find(norm)
			if len(labels) == 0 {
				continue
			}
			h := get(ru.category)
			h.events[ev.ID] = true
			for _, id := range []*int64{ev.ResultLogID, ev.CallLogID} {
				if id != nil {
					h.logIDs[*id] = true
				}
			}
			for _, l := range labels {
				h.labels[l] = true
			}
			h.note(lineWith(cortex.UnwrapContent(ev.ErrorText), labels), extractVars(ru, ev.ErrorText))
		}
	}

	// The lens's own evidence from its bundle collections (hook events
	// and signals; a skill run's reaction and retries). Rows count, cited
	// ids do not.
	var own []lensHit
	if r.evidence != nil {
		own = r.evidence(b)
	}
	for _, e := range own {
		if _, ok := r.index[e.category]; !ok {
			continue
		}
		h := get(e.category)
		h.other = true
		for _, id := range e.rows {
			h.rows[id], h.logIDs[id] = true, true
		}
		for _, id := range e.cite {
			h.logIDs[id] = true
		}
		for _, id := range e.events {
			h.events[id] = true
		}
		if e.signal != "" {
			h.signals[e.signal] = true
		}
		for _, l := range e.labels {
			h.labels[l] = true
		}
		h.note(e.cause, e.vars)
	}

	// Supporting signals.
	inc := &b.Incident
	for i := range r.rules {
		ru := &r.rules[i]
		for _, sig := range ru.signals {
			if !signalPresent(inc, sig) {
				continue
			}
			ids := signalEvidence(b, sig)
			if len(ids) == 0 {
				continue // a finding must cite evidence
			}
			h := get(ru.category)
			h.other = true
			h.signals[sig] = true
			for _, id := range ids {
				h.logIDs[id] = true
			}
		}
	}

	out := cortex.Findings{FailureModes: []cortex.Finding{}, Factors: []cortex.Factor{}, OpenQuestions: []string{}}
	allLow := true
	for i, h := range hits {
		if h == nil || r.categories[i].name == CategoryUnknown {
			continue
		}
		units := len(h.rows) + len(h.signals) + countExtraEvents(b, h)
		if units == 0 {
			continue
		}
		f := cortex.Finding{
			Category:    r.categories[i].name,
			Confidence:  confidence(units),
			EvidenceIDs: sortedIDs(h.logIDs),
			MCPEventIDs: sortedIDs(h.events),
			Hint:        r.hint(i, inc, h.vars),
			HintValues:  hintValues(h.vars),
			Why:         why(h),
			Cause:       h.cause,
		}
		if r.quotes != nil {
			f.SkillQuotes = r.quotes(b, f.Category, h.vars)
		}
		if h.textOnly && !h.other && !stepInSkill(b, h.vars) {
			// Only an error string matched: name it as such, one level less
			// sure (a lock-ref error that says "permission denied" is not a
			// permission problem of the skill's making).
			f.Confidence = lower(f.Confidence)
			f.Why += "; only the failed call's error text matched — neither the skill's text nor the user's words name this step"
		}
		if f.Confidence != ConfidenceLow {
			allLow = false
		}
		out.FailureModes = append(out.FailureModes, f)
	}
	matched := len(out.FailureModes) > 0
	if !matched {
		out.FailureModes = append(out.FailureModes, cortex.Finding{
			Category:    CategoryUnknown,
			Confidence:  ConfidenceLow,
			EvidenceIDs: []int64{},
			MCPEventIDs: []int64{},
			Hint:        r.hint(r.index[CategoryUnknown], inc, nil),
			Why:         "no rule matched",
		})
	}
	out.Factors = r.factors(b)
	out.OpenQuestions = r.questions(b, matched, allLow)
	hookFinish(r, b, &out) // evidence basis and open questions (hook lens)
	return out
}

// countExtraEvents counts the matched tool failures and MCP calls of h
// whose log ids are not already matched rows, so one failure seen both as
// a row and as an event (or as a tool failure and an MCP call) counts
// once.
func countExtraEvents(b *cortex.Bundle, h *hit) int {
	n := 0
	seen := map[int64]bool{}
	count := func(id int64, logs ...*int64) {
		if !h.events[id] || seen[id] {
			return
		}
		seen[id] = true
		for _, l := range logs {
			if l != nil && h.rows[*l] {
				return
			}
		}
		n++
	}
	for _, tf := range agentFailures(b) {
		count(tf.EventID, tf.ResultLogID, tf.CallLogID)
	}
	for _, ev := range mcpCallErrors(b) {
		count(ev.ID, ev.ResultLogID, ev.CallLogID)
	}
	return n
}

// voiceMCP is the error text of the incident's own MCP calls
// (Bundle.MCPEvents): only rules of the MCP lens read it.
const voiceMCP voice = 1 << 7

// mcpCallErrors returns the incident's own MCP calls that carry error
// text, deduplicated by event id (the first occurrence wins).
func mcpCallErrors(b *cortex.Bundle) []*cortex.ToolEventRow {
	seen := map[int64]bool{}
	var out []*cortex.ToolEventRow
	for i := range b.MCPEvents {
		ev := &b.MCPEvents[i]
		if ev.ErrorText == "" || seen[ev.ID] {
			continue
		}
		seen[ev.ID] = true
		out = append(out, ev)
	}
	return out
}

// lower is a confidence one level down.
func lower(c string) string {
	if c == ConfidenceHigh {
		return ConfidenceMedium
	}
	return ConfidenceLow
}

// stepInSkill reports whether the skill document (or its command's
// output) the run loaded names the failing step: its command, else its
// program — then the failure is of the skill's making.
func stepInSkill(b *cortex.Bundle, vars map[string]string) bool {
	var texts []string
	if b.Skill != nil {
		texts = append(texts, strings.ToLower(b.Skill.Text))
	}
	for _, o := range b.SkillOutputs {
		texts = append(texts, strings.ToLower(o.Message))
	}
	for _, k := range []string{"command", "program"} {
		v := strings.ToLower(strings.TrimSpace(vars[k]))
		if len(v) < 3 {
			continue
		}
		for _, t := range texts {
			if strings.Contains(t, v) {
				return true
			}
		}
	}
	return false
}

// confidence maps a count of distinct evidence to a level.
func confidence(n int) string {
	switch {
	case n >= 3:
		return ConfidenceHigh
	case n == 2:
		return ConfidenceMedium
	}
	return ConfidenceLow
}

// why names the matched phrases and signals, sorted, at most maxWhyLabels.
func why(h *hit) string {
	phrases := make([]string, 0, len(h.labels))
	for l := range h.labels {
		phrases = append(phrases, l)
	}
	sort.Strings(phrases)
	var b strings.Builder
	if len(phrases) > 0 {
		b.WriteString("matched ")
		for i, p := range phrases {
			if i == maxWhyLabels {
				b.WriteString(" (+" + strconv.Itoa(len(phrases)-i) + " more)")
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(p))
		}
	}
	sigs := make([]string, 0, len(h.signals))
	for s := range h.signals {
		sigs = append(sigs, s)
	}
	sort.Strings(sigs)
	if len(sigs) > 0 {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString("signal " + strings.Join(sigs, ", "))
	}
	return b.String()
}

// sortedIDs returns the keys of set in ascending order (non-nil).
func sortedIDs(set map[int64]bool) []int64 {
	out := make([]int64, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
