package findings

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
)

// scannedRows returns the bundle's rows that phrase rules read, in scan
// order (signal anchors, transcript before, transcript after, nearby user
// corrections, nearby logs, nearby errors), deduplicated by id: the first
// occurrence of an id wins.
func scannedRows(b *cortex.Bundle) []*cortex.EvidenceRow {
	return distinctRows(b.SignalAnchors, b.TranscriptBefore, b.TranscriptAfter, b.NearbyUserCorrections, b.NearbyLogs,
		b.NearbyErrors)
}

// distinctRows returns the rows of groups in order, each id once (the
// first occurrence wins).
func distinctRows(groups ...[]cortex.EvidenceRow) []*cortex.EvidenceRow {
	seen := map[int64]bool{}
	var out []*cortex.EvidenceRow
	for _, g := range groups {
		for i := range g {
			if seen[g[i].ID] {
				continue
			}
			seen[g[i].ID] = true
			out = append(out, &g[i])
		}
	}
	return out
}

// agentFailures returns the bundle's tool failures that are the agent's
// own — not a probe that found nothing, a call cancelled because a
// sibling failed, or a call the user refused — deduplicated by event id
// (the first occurrence wins): the run's own failures first (skill lens),
// then the nearby ones.
func agentFailures(b *cortex.Bundle) []*cortex.ToolFailure {
	seen := map[int64]bool{}
	var out []*cortex.ToolFailure
	for _, list := range [][]cortex.ToolFailure{b.Failures, b.NearbyToolFailures} {
		for i := range list {
			tf := &list[i]
			if seen[tf.EventID] || !agentsOwn(tf.Class) {
				continue
			}
			seen[tf.EventID] = true
			out = append(out, tf)
		}
	}
	return out
}

// agentsOwn reports whether a failure class is the agent's own failure
// (an unclassified failure counts).
func agentsOwn(class string) bool {
	switch class {
	case "", "failed", "failed_in_output":
		return true
	}
	return false
}

// voiceOf classifies a row: user voice for text the user typed, tool voice
// for tool/hook/system output and non-AI log rows, 0 (never matched) for
// assistant prose, tool calls, thinking, injected context and anything
// unrecognised.
func voiceOf(row *cortex.EvidenceRow) voice {
	switch row.Role {
	case cortex.RoleUser:
		return voiceUser
	case cortex.RoleToolResult, cortex.RoleHook, cortex.RoleSystem:
		return voiceTool
	case "":
		if row.Tool == "" {
			return voiceTool // a non-AI log row (syslog, JSON logs)
		}
	}
	return 0
}

// signalPresent reports whether the incident carries sig.
func signalPresent(inc *cortex.Incident, sig string) bool {
	return inc.SignalCounts[sig] > 0 || slices.Contains(inc.SignalsPresent, sig)
}

// signalEvidence returns the log ids supporting an incident signal: the
// bundle's anchor rows tagged with the signal, or else every incident
// anchor present in the bundle.
func signalEvidence(b *cortex.Bundle, sig string) []int64 {
	set := map[int64]bool{}
	for _, row := range b.SignalAnchors {
		if slices.Contains(row.Signals, sig) {
			set[row.ID] = true
		}
	}
	if len(set) == 0 {
		return anchorIDs(b)
	}
	return sortedIDs(set)
}

// anchorIDs returns the incident's anchors present in the bundle: the
// signal anchor rows plus any incident anchor id found among the scanned
// rows, sorted.
func anchorIDs(b *cortex.Bundle) []int64 {
	set := map[int64]bool{}
	for _, row := range b.SignalAnchors {
		set[row.ID] = true
	}
	if len(b.Incident.AnchorLogIDs) > 0 {
		present := map[int64]bool{}
		for _, row := range scannedRows(b) {
			present[row.ID] = true
		}
		for _, id := range b.Incident.AnchorLogIDs {
			if present[id] {
				set[id] = true
			}
		}
	}
	return sortedIDs(set)
}

// exitPrefixes introduce an exit status in command output.
var exitPrefixes = []string{"exit code", "exit status", "exited with code", "exited with status", "returned exit code"}

// nonZeroExit matches an exit code or status followed by a non-zero number
// ("exit code 128", "exit status: 1", "Process exited with code 2"); "exit
// code 0" is success and does not match. It returns one label per prefix
// found.
func nonZeroExit(norm string) []string {
	var out []string
	for _, p := range exitPrefixes {
		for from := 0; from < len(norm); {
			i := strings.Index(norm[from:], p)
			if i < 0 {
				break
			}
			i += from
			from = i + 1
			if r, _ := utf8.DecodeLastRuneInString(norm[:i]); i > 0 && isWord(r) {
				continue
			}
			if nonZeroAfter(norm[i+len(p):]) {
				out = append(out, p+" (non-zero)")
				break
			}
		}
	}
	return out
}

// nonZeroAfter reports whether s starts (after spaces, ':' or '=') with a
// whole number other than zero.
func nonZeroAfter(s string) bool {
	s = strings.TrimLeft(s, " :=")
	s = strings.TrimPrefix(s, "-")
	n := 0
	nonZero := false
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		if s[n] != '0' {
			nonZero = true
		}
		n++
	}
	if r, _ := utf8.DecodeRuneInString(s[n:]); n == 0 || (n < len(s) && isWord(r)) {
		return false
	}
	return nonZero
}

// isWord reports whether r is a word character (as in package phrase).
func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
