package findings

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cortexhq/cortex"
)

// Thresholds of the contributing factors.
const (
	repeatThreshold      = 3  // lens events (abuse anchors, skill activations)
	errorBurstThreshold  = 3  // nearby error-level logs
	toolFailureThreshold = 2  // nearby failed tool calls
	maxEventIDsInText    = 10 // MCP event ids named in a factor's text
)

// factors returns the contributing factors in fixed order: the lens
// factor, the error burst, the failed tool calls. A factor is only
// emitted when it cites evidence (log ids, or MCP event ids in its text).
func (r *Rules) factors(b *cortex.Bundle) []cortex.Factor {
	out := []cortex.Factor{}
	if r.lensFactor != nil {
		if f, ok := r.lensFactor(b); ok && len(f.EvidenceIDs) > 0 {
			out = append(out, f)
		}
	}
	set := map[int64]bool{}
	for _, row := range b.NearbyErrors {
		set[row.ID] = true
	}
	if len(set) >= errorBurstThreshold {
		out = append(out, cortex.Factor{
			Factor:      fmt.Sprintf("error burst: %d error-level logs near the incident", len(set)),
			EvidenceIDs: sortedIDs(set),
		})
	}
	if tfs := agentFailures(b); len(tfs) >= toolFailureThreshold {
		logs, events := map[int64]bool{}, map[int64]bool{}
		for _, tf := range tfs {
			events[tf.EventID] = true
			for _, id := range []*int64{tf.ResultLogID, tf.CallLogID} {
				if id != nil {
					logs[*id] = true
				}
			}
		}
		out = append(out, cortex.Factor{
			Factor:      fmt.Sprintf("%d failed tool calls near the incident (mcp events %s)", len(tfs), idList(sortedIDs(events))),
			EvidenceIDs: sortedIDs(logs),
		})
	}
	return out
}

// abuseFactor: three or more abuse anchors with anchors in the bundle.
func abuseFactor(b *cortex.Bundle) (cortex.Factor, bool) {
	if b.Incident.EventCount < repeatThreshold {
		return cortex.Factor{}, false
	}
	return cortex.Factor{
		Factor:      fmt.Sprintf("elevated frustration signal: %d abuse anchors", b.Incident.EventCount),
		EvidenceIDs: anchorIDs(b),
	}, true
}

// skillFactor: three or more skill activations, citing the skill events'
// log rows.
func skillFactor(b *cortex.Bundle) (cortex.Factor, bool) {
	if b.Incident.EventCount < repeatThreshold {
		return cortex.Factor{}, false
	}
	set := map[int64]bool{}
	for _, ev := range b.SkillEvents {
		set[ev.LogID] = true
	}
	return cortex.Factor{
		Factor:      fmt.Sprintf("repeated skill activation: %d activations", b.Incident.EventCount),
		EvidenceIDs: sortedIDs(set),
	}, true
}

// idList renders ids as "1, 2, 3", at most maxEventIDsInText of them.
func idList(ids []int64) string {
	parts := make([]string, 0, min(len(ids), maxEventIDsInText)+1)
	for i, id := range ids {
		if i == maxEventIDsInText {
			parts = append(parts, "+"+strconv.Itoa(len(ids)-i)+" more")
			break
		}
		parts = append(parts, strconv.FormatInt(id, 10))
	}
	return strings.Join(parts, ", ")
}

// Open questions.
const (
	questionUnknown   = "no deterministic signature matched; manual transcript review recommended"
	questionLow       = "all findings are low confidence (one piece of evidence each); confirm them in the transcript before changing anything"
	questionNoLogs    = "no surrounding non-AI logs to corroborate"
	questionTruncated = "evidence was truncated (cap reached) for: "
)

// questions returns the open questions in fixed order.
func (r *Rules) questions(b *cortex.Bundle, matched, allLow bool) []string {
	out := []string{}
	if !matched {
		out = append(out, questionUnknown)
	} else if allLow {
		out = append(out, questionLow)
	}
	if len(b.SignalAnchors) == 0 {
		out = append(out, r.noAnchors)
	}
	if len(b.NearbyLogs) == 0 && len(b.NearbyErrors) == 0 {
		out = append(out, questionNoLogs)
	}
	if t := truncated(b); len(t) > 0 {
		out = append(out, questionTruncated+strings.Join(t, ", "))
	}
	return out
}

// truncated names the bundle's truncated collections in bundle order.
func truncated(b *cortex.Bundle) []string {
	var out []string
	for _, c := range []struct {
		name string
		set  bool
	}{
		{"skill_events", b.SkillEventsTruncated},
		{"mcp_events", b.MCPEventsTruncated},
		{"hook_events", b.HookEventsTruncated},
		{"signal_anchors", b.SignalAnchorsTruncated},
		{"transcript_before", b.TranscriptBeforeTruncated},
		{"transcript_after", b.TranscriptAfterTruncated},
		{"nearby_tool_failures", b.NearbyToolFailuresTruncated},
		{"nearby_tool_calls", b.NearbyToolCallsTruncated},
		{"nearby_mcp_events", b.NearbyMCPEventsTruncated},
		{"nearby_user_corrections", b.NearbyUserCorrectionsTruncated},
		{"nearby_logs", b.NearbyLogsTruncated},
		{"nearby_errors", b.NearbyErrorsTruncated},
	} {
		if c.set {
			out = append(out, c.name)
		}
	}
	return out
}
