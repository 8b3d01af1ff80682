package findings

import (
	"sort"
	"strconv"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
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
}

func newHit() *hit {
	return &hit{rows: map[int64]bool{}, events: map[int64]bool{}, logIDs: map[int64]bool{},
		labels: map[string]bool{}, signals: map[string]bool{}}
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

	// Rows.
	for _, row := range scannedRows(b) {
		v := voiceOf(row)
		if v == 0 {
			continue
		}
		norm := phrase.Normalize(row.Message)
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
			h.rows[row.ID] = true
			h.logIDs[row.ID] = true
			for _, l := range labels {
				h.labels[l] = true
			}
		}
	}

	// Tool failures: their error text is tool voice.
	for _, tf := range toolFailures(b) {
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
			h.events[tf.EventID] = true
			for _, id := range []*int64{tf.ResultLogID, tf.CallLogID} {
				if id != nil {
					h.logIDs[*id] = true
				}
			}
			for _, l := range labels {
				h.labels[l] = true
			}
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
		}
	}

	// The hook lens's own evidence: its hook events and signals (see
	// hookEvidence; nil for other lenses). Rows count, cited ids do not.
	for _, e := range hookEvidence(r, b) {
		if _, ok := r.index[e.category]; !ok {
			continue
		}
		h := get(e.category)
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
			Hint:        r.hint(i, inc),
			Why:         why(h),
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
			Hint:        r.hint(r.index[CategoryUnknown], inc),
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
	for _, tf := range b.NearbyToolFailures {
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
