package cortex

// Summary bounds: what an investigation shows of a bundle unless the
// caller asks for its detail.
const (
	// SummaryAnchors is how many signal anchors a summary keeps.
	SummaryAnchors = 5
	// SummaryRowBytes bounds the text of each anchor in a summary.
	SummaryRowBytes = 280
	// SummaryUserWords is how many of the user's decisive words a summary
	// keeps, and SummaryWordBytes bounds each.
	SummaryUserWords = 5
	SummaryWordBytes = 600
	// SummaryOthers is how many other matching incidents a summarized
	// investigation lists (total_incidents counts them all).
	SummaryOthers = 10
)

// BundleSummary is the short form of a Bundle that investigations return
// by default: the incident (with its ids), the deterministic findings,
// the first signal anchors with their text cut short, and how many rows
// each evidence collection of the full bundle holds. The full bundle is
// one call away (detail).
type BundleSummary struct {
	Incident               Incident      `json:"incident"`
	Findings               Findings      `json:"deterministic_findings"`
	SignalAnchors          []EvidenceRow `json:"signal_anchors"`
	SignalAnchorsTruncated bool          `json:"signal_anchors_truncated"`
	// UserWords are the bundle's decisive user words (the first
	// SummaryUserWords, each cut to SummaryWordBytes).
	UserWords          []EvidenceRow  `json:"user_words"`
	UserWordsTruncated bool           `json:"user_words_truncated,omitempty"`
	EvidenceCounts     map[string]int `json:"evidence_counts"`
}

// Summarize returns the summary of a bundle.
func Summarize(b Bundle) BundleSummary {
	s := BundleSummary{Incident: b.Incident, Findings: b.Findings, SignalAnchors: []EvidenceRow{},
		SignalAnchorsTruncated: b.SignalAnchorsTruncated || len(b.SignalAnchors) > SummaryAnchors}
	for _, r := range b.SignalAnchors[:min(len(b.SignalAnchors), SummaryAnchors)] {
		if len(r.Message) > SummaryRowBytes {
			r.Message, r.MessageTruncated = CutUTF8(r.Message, SummaryRowBytes)+"…", true
		}
		s.SignalAnchors = append(s.SignalAnchors, r)
	}
	s.UserWords = []EvidenceRow{}
	s.UserWordsTruncated = b.UserWordsTruncated || len(b.UserWords) > SummaryUserWords
	for _, r := range b.UserWords[:min(len(b.UserWords), SummaryUserWords)] {
		if len(r.Message) > SummaryWordBytes {
			r.Message, r.MessageTruncated = CutUTF8(r.Message, SummaryWordBytes)+"…", true
		}
		s.UserWords = append(s.UserWords, r)
	}
	counts := map[string]int{
		"user_words":              len(b.UserWords),
		"signal_anchors":          len(b.SignalAnchors),
		"user_voice":              len(b.UserVoice),
		"skill_outputs":           len(b.SkillOutputs),
		"failures":                len(b.Failures),
		"transcript_before":       len(b.TranscriptBefore),
		"transcript_after":        len(b.TranscriptAfter),
		"nearby_tool_failures":    len(b.NearbyToolFailures),
		"nearby_user_corrections": len(b.NearbyUserCorrections),
		"nearby_logs":             len(b.NearbyLogs),
		"nearby_errors":           len(b.NearbyErrors),
		"skill_events":            len(b.SkillEvents),
		"mcp_events":              len(b.MCPEvents),
		"hook_events":             len(b.HookEvents),
		"nearby_tool_calls":       len(b.NearbyToolCalls),
		"nearby_mcp_events":       len(b.NearbyMCPEvents),
	}
	s.EvidenceCounts = map[string]int{}
	for k, n := range counts {
		if n > 0 {
			s.EvidenceCounts[k] = n
		}
	}
	return s
}

// Summarized returns the investigation with its bundles replaced by
// their summaries and at most SummaryOthers other matching incidents
// (Detail false), or as it is when detail is asked for.
func (inv Investigation) Summarized(detail bool) Investigation {
	inv.Detail = detail
	if detail {
		if inv.Bundles == nil {
			inv.Bundles = []Bundle{}
		}
		return inv
	}
	inv.Summaries = make([]BundleSummary, len(inv.Bundles))
	for i, b := range inv.Bundles {
		inv.Summaries[i] = Summarize(b)
	}
	inv.Bundles = nil
	if len(inv.OtherMatching) > SummaryOthers {
		inv.OtherMatching, inv.Truncated = inv.OtherMatching[:SummaryOthers], true
	}
	return inv
}
