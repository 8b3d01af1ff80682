package cortex

import (
	"strings"
	"testing"
)

func TestSummarized(t *testing.T) {
	long := strings.Repeat("é", 400)
	b := Bundle{Incident: Incident{ID: "skill-inc-1"}, UserVoice: []EvidenceRow{{ID: 1}, {ID: 2}}}
	for i := range SummaryAnchors + 2 {
		b.SignalAnchors = append(b.SignalAnchors, EvidenceRow{ID: int64(10 + i), Message: long})
	}
	inv := Investigation{Bundles: []Bundle{b}}
	for i := range SummaryOthers + 5 {
		inv.OtherMatching = append(inv.OtherMatching, IncidentSummary{ID: string(rune('a' + i))})
	}

	full := inv.Summarized(true)
	if !full.Detail || len(full.Bundles) != 1 || full.Summaries != nil || len(full.OtherMatching) != SummaryOthers+5 {
		t.Fatalf("detail: %+v", full)
	}
	s := inv.Summarized(false)
	if s.Detail || s.Bundles != nil || len(s.Summaries) != 1 || len(s.OtherMatching) != SummaryOthers || !s.Truncated {
		t.Fatalf("summary: bundles %v, %d summaries, %d others, truncated %v", s.Bundles, len(s.Summaries), len(s.OtherMatching), s.Truncated)
	}
	sum := s.Summaries[0]
	if len(sum.SignalAnchors) != SummaryAnchors || !sum.SignalAnchorsTruncated || sum.Incident.ID != "skill-inc-1" {
		t.Errorf("anchors: %d, truncated %v", len(sum.SignalAnchors), sum.SignalAnchorsTruncated)
	}
	if a := sum.SignalAnchors[0]; !a.MessageTruncated || len(a.Message) > SummaryRowBytes+len("…") || !strings.HasSuffix(a.Message, "…") {
		t.Errorf("anchor text: %d bytes, truncated %v", len(a.Message), a.MessageTruncated)
	}
	if c := sum.EvidenceCounts; c["signal_anchors"] != SummaryAnchors+2 || c["user_voice"] != 2 || c["transcript_before"] != 0 {
		t.Errorf("counts: %v", c)
	}
	if _, zero := sum.EvidenceCounts["transcript_after"]; zero {
		t.Error("empty collections are counted")
	}
}
