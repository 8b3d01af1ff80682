package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
)

// Bounds of what a report quotes.
const (
	maxValue   = 120 // a name, a session id
	maxLine    = 300 // a user's sentence, an error line
	maxExcerpt = 2000
	maxRows    = 12 // rows per evidence section
)

// doc accumulates a report.
type doc struct{ strings.Builder }

func (d *doc) f(format string, args ...any) { fmt.Fprintf(d, format, args...) }

// Investigation renders an investigation as Markdown: a heading naming
// what was investigated, then per evidence bundle the incident, its
// findings (cause, the skill's own lines, the fix), what the user did, the
// failed calls and the evidence excerpts, then the other matching
// incidents and how to read the sessions.
func Investigation(inv cortex.Investigation) string {
	var d doc
	d.f("# Cortex investigation%s\n\n", title(inv.Bundles, inv.Matched))
	if inv.Message != "" {
		d.f("%s\n\n", Prose(inv.Message))
	}
	switch {
	case inv.NoData:
		d.f("Nothing matched.\n")
		for _, s := range inv.SuggestedFilters {
			d.f("- try %s\n", Code(s, maxLine))
		}
		return d.String()
	case len(inv.Bundles) == 0:
		d.f("No incidents found.\n")
		return d.String()
	case inv.NoIncident:
		d.f("Used without a negative signal: the evidence below is plain usage, low severity.\n\n")
	default:
		d.f("%d matching incident(s); %d reported below. Findings come from Cortex's deterministic rules (no LLM).\n\n",
			inv.Total, len(inv.Bundles))
	}
	for _, u := range inv.Usage {
		d.f("- %s: %d events in %d sessions (%s), %s → %s\n", Code(u.SkillName, maxValue), u.Events, u.Sessions,
			Prose(u.Tools), stamp(u.FirstSeen), stamp(u.LastSeen))
	}
	if len(inv.Usage) > 0 {
		d.f("\n")
	}
	for _, b := range inv.Bundles {
		d.bundle(b)
	}
	d.others(inv.OtherMatching, inv.Total, "investigate")
	d.footer(inv.Bundles)
	return d.String()
}

// title names the report's subject from its first bundle.
func title(bs []cortex.Bundle, matched string) string {
	if len(bs) == 0 {
		if matched != "" {
			return " — " + Code(matched, maxValue)
		}
		return ""
	}
	inc := bs[0].Incident
	if s := inc.Subject(); s != "" {
		return " — " + subjectKind(inc) + " " + Code(s, maxValue)
	}
	return " — " + inc.Lens
}

// subjectKind names the kind of an incident's subject.
func subjectKind(inc cortex.Incident) string {
	switch inc.Lens {
	case cortex.LensSkill:
		if inc.SubjectKind == "command" {
			return "command"
		}
		return "skill"
	case cortex.LensMCP:
		return "MCP tool"
	case cortex.LensHook:
		return "hook"
	case cortex.LensFriction:
		return "friction charged to"
	}
	return "abuse terms"
}

// stamp shortens a stored UTC timestamp to the minute.
func stamp(ts string) string {
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		return t.UTC().Format("2006-01-02 15:04 UTC")
	}
	return Code(ts, 40)
}

func (d *doc) bundle(b cortex.Bundle) {
	d.head(b.Incident)
	d.findings(b.Findings)
	d.userVoice(b)
	d.failures(b)
	d.evidence(b)
}

// head writes an incident's heading and facts.
func (d *doc) head(inc cortex.Incident) {
	d.f("## %s — %s (score %.0f)\n\n", Code(inc.ID, maxValue), strings.ToUpper(Prose(inc.Label)), inc.Score)
	if s := inc.Subject(); s != "" {
		d.f("- **%s:** %s\n", subjectKind(inc), Code(s, maxValue))
	}
	d.f("- **agent:** %s · **session:** %s · **host:** %s\n", Prose(string(inc.Tool)), Code(inc.SessionID, maxValue),
		Code(inc.Hostname, maxValue))
	if inc.Project != "" {
		d.f("- **project:** %s\n", Code(inc.Project, maxValue))
	}
	dur := (time.Duration(inc.DurationSecs) * time.Second).String()
	d.f("- **when:** %s → %s (%s)\n", stamp(inc.FirstSeen), stamp(inc.LastSeen), dur)
	if len(inc.SignalsPresent) > 0 {
		var parts []string
		for _, s := range inc.SignalsPresent {
			parts = append(parts, fmt.Sprintf("%s ×%d", Code(s, maxValue), inc.SignalCounts[s]))
		}
		d.f("- **signals:** %s\n", strings.Join(parts, ", "))
	}
	if inc.EvidenceBasis != "" {
		d.f("- **evidence basis:** %s\n", Code(inc.EvidenceBasis, maxValue))
	}
	if len(inc.CoActive) > 0 {
		d.f("- **also active** (charged the same verdicts): %s\n", codes(inc.CoActive))
	}
	for _, a := range inc.AttributedTo {
		d.f("- **charged to** %s %s: %s (%d act(s))\n", Prose(a.Kind), Code(a.Name, maxValue), Prose(a.Why), a.Acts)
	}
	d.f("\n")
}

func codes(ss []string) string {
	var out []string
	for _, s := range ss {
		out = append(out, Code(s, maxValue))
	}
	return strings.Join(out, ", ")
}

// findings writes the deterministic findings.
func (d *doc) findings(fs cortex.Findings) {
	d.f("### Findings\n\n")
	if fs.EvidenceBasis != "" {
		d.f("Evidence basis: %s\n\n", Prose(fs.EvidenceBasis))
	}
	for i, m := range fs.FailureModes {
		d.f("%d. **%s** (%s confidence)%s\n", i+1, Prose(m.Category), Prose(m.Confidence), refs(m.EvidenceIDs, m.MCPEventIDs))
		if m.Cause != "" {
			d.f("   - cause: %s\n", Code(m.Cause, maxLine))
		}
		for _, q := range m.SkillQuotes {
			if q.Source == "command_output" {
				d.f("   - its command printed (row %d, line %d): %s\n", q.LogID, q.Line, Code(q.Text, maxLine))
			} else {
				d.f("   - the skill says (line %d): %s\n", q.Line, Code(q.Text, maxLine))
			}
		}
		if m.Why != "" {
			d.f("   - why: %s\n", Code(m.Why, maxLine))
		}
		if m.Hint != "" {
			d.f("   - **fix:** %s\n", Prose(m.Hint))
		}
	}
	if len(fs.Factors) > 0 {
		d.f("\nContributing factors:\n")
		for _, c := range fs.Factors {
			d.f("- %s%s\n", Prose(c.Factor), refs(c.EvidenceIDs, nil))
		}
	}
	if len(fs.OpenQuestions) > 0 {
		d.f("\nOpen questions:\n")
		for _, q := range fs.OpenQuestions {
			d.f("- %s\n", Prose(q))
		}
	}
	d.f("\n")
}

// refs cites rows and tool calls.
func refs(rows, calls []int64) string {
	var parts []string
	if len(rows) > 0 {
		parts = append(parts, "rows "+ids(rows))
	}
	if len(calls) > 0 {
		parts = append(parts, "tool calls "+ids(calls))
	}
	if len(parts) == 0 {
		return ""
	}
	return " — " + strings.Join(parts, "; ")
}

func ids(v []int64) string {
	var s []string
	for i, id := range v {
		if i == 10 {
			s = append(s, fmt.Sprintf("… +%d", len(v)-10))
			break
		}
		s = append(s, strconv.FormatInt(id, 10))
	}
	return strings.Join(s, ", ")
}

// userVoice writes what the user did, in their own words.
func (d *doc) userVoice(b cortex.Bundle) {
	if len(b.UserVoice) == 0 {
		return
	}
	d.f("### What the user did\n\n")
	for _, r := range head(b.UserVoice, maxRows) {
		mark := ""
		if r.Reaction {
			mark = " (right after)"
		}
		sig := ""
		if len(r.Signals) > 0 {
			sig = " — " + codes(r.Signals)
		}
		d.f("- row %d, %s%s: %s%s\n", r.ID, clock(r.Timestamp), mark, Code(r.Message, maxLine), sig)
	}
	more(d, len(b.UserVoice), b.UserVoiceTruncated)
	d.f("\n")
}

// clock is a timestamp's time of day (UTC).
func clock(ts string) string {
	if len(ts) >= 19 {
		return ts[11:19]
	}
	return Code(ts, 40)
}

func more(d *doc, n int, truncated bool) {
	if n > maxRows || truncated {
		d.f("- … more in the JSON answer (`--json`)\n")
	}
}

func head[T any](v []T, n int) []T { return v[:min(n, len(v))] }

// failures writes the failed tool calls: the run's own when the bundle
// has them, else those nearby.
func (d *doc) failures(b cortex.Bundle) {
	fs, name, truncated := b.Failures, "Failed tool calls in the run", b.FailuresTruncated
	if fs == nil {
		fs, name, truncated = b.NearbyToolFailures, "Failed tool calls nearby", b.NearbyToolFailuresTruncated
	}
	if len(fs) == 0 {
		return
	}
	d.f("### %s\n\n", name)
	for _, t := range head(fs, maxRows) {
		what := t.Operation
		if what == "" {
			what = t.ToolName
		}
		line := t.Line
		if line == "" {
			line = t.ErrorText
		}
		class := ""
		if t.Class != "" {
			class = " (" + Prose(t.Class) + ")"
		}
		exit := ""
		if t.ExitCode != nil {
			exit = fmt.Sprintf(", exit %d", *t.ExitCode)
		}
		rec := ""
		if t.Recovered {
			rec = ", recovered later"
		}
		row := ""
		if t.ResultLogID != nil {
			row = fmt.Sprintf(", row %d", *t.ResultLogID)
		}
		d.f("- tool call %d%s, %s%s%s%s: %s — %s\n", t.EventID, row, clock(t.Timestamp), class, exit, rec,
			Code(what, maxValue), Code(line, maxLine))
	}
	more(d, len(fs), truncated)
	d.f("\n")
}

// evidence writes the signal anchors and the corrections as excerpts.
func (d *doc) evidence(b cortex.Bundle) {
	sections := []struct {
		name      string
		rows      []cortex.EvidenceRow
		truncated bool
	}{
		{"Signal anchors", b.SignalAnchors, b.SignalAnchorsTruncated},
		{"User corrections nearby", b.NearbyUserCorrections, b.NearbyUserCorrectionsTruncated},
		{"Errors nearby (non-AI logs, same host)", b.NearbyErrors, b.NearbyErrorsTruncated},
	}
	seen := map[int64]bool{}
	for _, r := range b.UserVoice {
		seen[r.ID] = true
	}
	for _, s := range sections {
		var rows []cortex.EvidenceRow
		for _, r := range s.rows {
			if !seen[r.ID] {
				seen[r.ID] = true
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		d.f("### %s\n\n", s.name)
		for _, r := range head(rows, maxRows) {
			who := string(r.Role)
			if r.Tool == "" {
				who = r.AppName + "/" + string(r.Severity)
			} else if r.ToolName != "" {
				who += ":" + r.ToolName
			}
			d.f("row %d, %s, %s\n\n", r.ID, clock(r.Timestamp), Code(who, maxValue))
			d.WriteString(Block(r.Message, maxExcerpt))
			d.f("\n")
		}
		if len(rows) > maxRows || s.truncated {
			d.f("… more in the JSON answer (`--json`)\n\n")
		}
	}
}

// others lists the matching incidents without a bundle.
func (d *doc) others(os []cortex.IncidentSummary, total int, verb string) {
	if len(os) == 0 {
		return
	}
	d.f("## Other matching incidents (%d of %d)\n\n", len(os), total)
	for _, o := range os {
		d.f("- %s — %s, score %.0f, %s → %s, session %s\n", Code(o.ID, maxValue), Prose(o.Label), o.Score, stamp(o.FirstSeen),
			stamp(o.LastSeen), Code(o.SessionID, maxValue))
	}
	d.f("\n%s one with `--incident-id`.\n\n", strings.ToUpper(verb[:1])+verb[1:])
}

// footer says how to read the sessions the report is about.
func (d *doc) footer(bs []cortex.Bundle) {
	seen := map[string]bool{}
	var lines []string
	for _, b := range bs {
		s := b.Incident.SessionID
		if s == "" || seen[s] || oneLine(s, maxValue) != s || strings.ContainsAny(s, "` ") {
			continue
		}
		seen[s] = true
		row := ""
		if len(b.Incident.AnchorLogIDs) > 0 {
			row = fmt.Sprintf(" --row %d", b.Incident.AnchorLogIDs[0])
		}
		lines = append(lines, "    cortex show session "+s+row)
	}
	if len(lines) == 0 {
		return
	}
	d.f("---\n\nRead the sessions:\n\n%s\n", strings.Join(lines, "\n"))
}
