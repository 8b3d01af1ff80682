package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
)

// printInvestigation renders an investigation as a compact report: per
// bundle a header (score, label, subject, where, when), the signals, the
// findings with their hints, then evidence excerpts; then the other
// matching incidents. All transcript text is passed through OneLine (no
// control characters reach the terminal).
func printInvestigation(f *Factory, inv cortex.Investigation) {
	if inv.Matched != "" {
		f.IO.Printf("Matched %s\n", OneLine(inv.Matched, 0))
	}
	if inv.Message != "" {
		f.IO.Printf("%s\n", OneLine(inv.Message, 0))
	}
	if inv.NoData {
		if len(inv.SuggestedFilters) > 0 {
			f.IO.Printf("Try:\n")
			for _, s := range inv.SuggestedFilters {
				f.IO.Printf("  - %s\n", OneLine(s, 0))
			}
		}
		return
	}
	for _, u := range inv.Usage {
		f.IO.Printf("  %s: %d events in %d sessions (%s), %s → %s\n", OneLine(u.SkillName, 60), u.Events, u.Sessions,
			u.Tools, f.timeCell(u.FirstSeen, false), f.timeCell(u.LastSeen, false))
	}
	if len(inv.Bundles) == 0 && !inv.NoIncident {
		f.IO.Printf("No incidents found.\n")
	}
	for i, b := range inv.Bundles {
		if i > 0 || inv.Message != "" {
			f.IO.Printf("\n")
		}
		printBundle(f, b)
	}
	if len(inv.OtherMatching) > 0 {
		f.IO.Printf("\nOther matching incidents (%d of %d; investigate one with --incident-id):\n", len(inv.OtherMatching), inv.Total)
		for _, o := range inv.OtherMatching {
			f.IO.Printf("  %s  %-8s %5.0f  %s → %s  session %s\n", o.ID, o.Label, o.Score, f.timeCell(o.FirstSeen, false),
				f.timeCell(o.LastSeen, false), shortSession(o.SessionID))
		}
	}
	printScan(f, inv.CandidateRows, inv.CandidateWindowTruncated)
}

func printBundle(f *Factory, b cortex.Bundle) {
	printIncidentHead(f, b.Incident)
	printFindings(f, b.Findings)
	printEvidence(f, b)
}

// printIncidentHead prints an incident's header: id, label, score,
// subject, where, when, signals.
func printIncidentHead(f *Factory, inc cortex.Incident) {
	subject := "abuse"
	switch inc.Lens {
	case cortex.LensSkill:
		subject = "skill " + OneLine(inc.SkillName, 80)
	case cortex.LensAbuse:
		subject = "abuse terms " + strings.Join(inc.Terms, ", ")
	case cortex.LensMCP:
		subject = "MCP " + OneLine(incidentSubject(inc), 80)
	case cortex.LensHook:
		subject = "hook " + OneLine(incidentSubject(inc), 80)
		if inc.EvidenceBasis != "" {
			subject += " [" + inc.EvidenceBasis + "]"
		}
	case cortex.LensFriction:
		subject = "friction"
	}
	if inc.Lens == cortex.LensSkill && inc.SubjectKind == "command" {
		subject = "command /" + OneLine(inc.SkillName, 80)
	}
	f.IO.Printf("%s  %s (score %.0f)  %s\n", inc.ID, strings.ToUpper(inc.Label), inc.Score, subject)
	f.IO.Printf("  %s · session %s · host %s", inc.Tool, OneLine(inc.SessionID, 40), OneLine(inc.Hostname, 40))
	if inc.Project != "" {
		f.IO.Printf(" · project %s", OneLine(inc.Project, 60))
	}
	f.IO.Printf("\n  %s → %s (%s)", f.timeCell(inc.FirstSeen, true), f.clockCell(inc.LastSeen),
		(time.Duration(inc.DurationSecs) * time.Second).String())
	if inc.Lens == cortex.LensSkill {
		f.IO.Printf(" · %d activation(s), %d skill events", inc.EventCount, len(inc.EventIDs))
	}
	f.IO.Printf("\n  signals: %s\n", signalSummary(inc))
	if u := inc.Usage; u != nil {
		f.IO.Printf("  spent in it: %s tokens (%d model responses), estimated %s\n", tokensCell(u), u.Total.Responses, costCell(u))
	}
	if len(inc.CoActive) > 0 {
		f.IO.Printf("  also active (charged the same verdicts): %s\n", OneLine(strings.Join(inc.CoActive, ", "), 200))
	}
	for _, a := range inc.AttributedTo {
		f.IO.Printf("  charged to %s %s: %s (%d act(s))\n", a.Kind, OneLine(a.Name, 80), OneLine(a.Why, 80), a.Acts)
	}
	if inc.Lens == cortex.LensFriction && len(inc.AttributedTo) == 0 {
		f.IO.Printf("  charged to nothing: no skill, MCP tool or hook was active\n")
	}
}

// printFindings prints deterministic findings with their hints.
func printFindings(f *Factory, fs cortex.Findings) {
	f.IO.Printf("\nFindings\n")
	if fs.EvidenceBasis != "" {
		f.IO.Printf("  evidence basis: %s\n", fs.EvidenceBasis)
	}
	for _, m := range fs.FailureModes {
		f.IO.Printf("  • %s (%s confidence)%s\n", m.Category, m.Confidence, evidenceRef(m.EvidenceIDs, m.MCPEventIDs))
		if m.Why != "" {
			f.IO.Printf("    why: %s\n", OneLine(m.Why, 200))
		}
		if m.Hint != "" {
			f.IO.Printf("    fix: %s\n", OneLine(m.Hint, 0))
		}
	}
	for _, c := range fs.Factors {
		f.IO.Printf("  + %s%s\n", OneLine(c.Factor, 0), evidenceRef(c.EvidenceIDs, nil))
	}
	for _, q := range fs.OpenQuestions {
		f.IO.Printf("  ? %s\n", OneLine(q, 0))
	}
}

// printEvidence prints evidence excerpts of a bundle.
func printEvidence(f *Factory, b cortex.Bundle) {
	f.IO.Printf("\nEvidence\n")
	if len(b.MCPEvents) > 0 {
		f.IO.Printf("  MCP calls (%d%s; call row proves the call, result row its outcome):\n", len(b.MCPEvents), more(b.MCPEventsTruncated))
		for _, c := range b.MCPEvents {
			f.IO.Printf("    [mcp %d] %s %s %s  call row %s, result row %s  %s\n", c.ID, f.clockCell(c.Timestamp), OneLine(c.ToolName, 50),
				c.Status, rowRef(c.CallLogID), rowRef(c.ResultLogID), OneLine(c.ErrorText, 120))
		}
	}
	if len(b.HookEvents) > 0 {
		f.IO.Printf("  hook events (%d%s):\n", len(b.HookEvents), more(b.HookEventsTruncated))
		for _, h := range b.HookEvents {
			exit := ""
			if h.ExitCode != nil {
				exit = fmt.Sprintf(" exit %d", *h.ExitCode)
			}
			f.IO.Printf("    [hook %d] %s %s %s%s %s  %s\n", h.ID, f.clockCell(h.Timestamp), OneLine(h.HookEvent+" "+h.HookName, 50),
				h.Status, exit, h.EvidenceKind, OneLine(h.StderrPreview, 100))
		}
	}
	if len(b.NearbyToolCalls) > 0 {
		f.IO.Printf("  tool calls nearby: %d%s (see --json)\n", len(b.NearbyToolCalls), more(b.NearbyToolCallsTruncated))
	}
	if len(b.UserVoice) > 0 {
		f.IO.Printf("  the user (%d%s):\n", len(b.UserVoice), more(b.UserVoiceTruncated))
		for _, r := range b.UserVoice {
			mark := " "
			switch {
			case r.Reaction:
				mark = "→"
			case len(r.Signals) > 0:
				mark = "!"
			}
			sig := ""
			if len(r.Signals) > 0 {
				sig = "  [" + strings.Join(r.Signals, ", ") + "]"
			}
			f.IO.Printf("   %s %s%s\n", mark, rowLine(f, r, 240), sig)
		}
	}
	section(f, "signal anchors", b.SignalAnchors, b.SignalAnchorsTruncated, 240)
	section(f, "transcript before", tail(b.TranscriptBefore, 5), b.TranscriptBeforeTruncated || len(b.TranscriptBefore) > 5, 160)
	section(f, "transcript after", head(b.TranscriptAfter, 8), b.TranscriptAfterTruncated || len(b.TranscriptAfter) > 8, 160)
	if len(b.NearbyToolFailures) > 0 {
		f.IO.Printf("  failed tool calls (%d%s):\n", len(b.NearbyToolFailures), more(b.NearbyToolFailuresTruncated))
		for _, t := range b.NearbyToolFailures {
			exit := ""
			if t.ExitCode != nil {
				exit = fmt.Sprintf(" exit %d", *t.ExitCode)
			}
			rec := ""
			if t.Recovered {
				rec = " (recovered)"
			}
			f.IO.Printf("    [mcp %d] %s %s%s%s  %s\n", t.EventID, f.clockCell(t.Timestamp), OneLine(t.ToolName, 40), exit, rec,
				OneLine(t.ErrorText, 160))
		}
	}
	section(f, "user corrections nearby", b.NearbyUserCorrections, b.NearbyUserCorrectionsTruncated, 200)
	section(f, "nearby errors (non-AI logs, same host)", b.NearbyErrors, b.NearbyErrorsTruncated, 160)
	if len(b.NearbyLogs) > 0 {
		f.IO.Printf("  nearby logs: %d%s (see --json)\n", len(b.NearbyLogs), more(b.NearbyLogsTruncated))
	}
}

func rowRef(id *int64) string {
	if id == nil {
		return "-"
	}
	return fmt.Sprint(*id)
}

func evidenceRef(logIDs, mcpIDs []int64) string {
	var parts []string
	if len(logIDs) > 0 {
		parts = append(parts, "rows "+joinIDs(logIDs, 8))
	}
	if len(mcpIDs) > 0 {
		parts = append(parts, "tool calls "+joinIDs(mcpIDs, 8))
	}
	if len(parts) == 0 {
		return ""
	}
	return " — " + strings.Join(parts, "; ")
}

func joinIDs(ids []int64, max int) string {
	var s []string
	for i, id := range ids {
		if i == max {
			s = append(s, fmt.Sprintf("… +%d", len(ids)-max))
			break
		}
		s = append(s, fmt.Sprint(id))
	}
	return strings.Join(s, ",")
}

func more(truncated bool) string {
	if truncated {
		return ", more not shown"
	}
	return ""
}

func section(f *Factory, name string, rows []cortex.EvidenceRow, truncated bool, width int) {
	if len(rows) == 0 {
		return
	}
	f.IO.Printf("  %s (%d%s):\n", name, len(rows), more(truncated))
	for _, r := range rows {
		line := rowLine(f, r, width)
		if len(r.Signals) > 0 {
			line += "  {" + strings.Join(r.Signals, ",") + "}"
		}
		f.IO.Printf("    %s\n", line)
	}
}

func head(rows []cortex.EvidenceRow, n int) []cortex.EvidenceRow { return rows[:min(n, len(rows))] }

func tail(rows []cortex.EvidenceRow, n int) []cortex.EvidenceRow { return rows[max(0, len(rows)-n):] }
