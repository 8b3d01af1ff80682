package cli_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

type incidentJSON struct {
	ID             string         `json:"incident_id"`
	Lens           string         `json:"lens"`
	SkillName      string         `json:"skill_name"`
	Terms          []string       `json:"terms"`
	SignalsPresent []string       `json:"signals_present"`
	SignalCounts   map[string]int `json:"signal_counts"`
	Score          float64        `json:"priority_score"`
	Label          string         `json:"priority_label"`
	AnchorLogIDs   []int64        `json:"anchor_log_ids"`
}

type incidentListJSON struct {
	Incidents []incidentJSON `json:"incidents"`
	Total     int            `json:"total_incidents"`
	Next      string         `json:"next"`
}

type investigationJSON struct {
	Evidence []struct {
		Incident      incidentJSON     `json:"incident"`
		SkillEvents   []map[string]any `json:"skill_events"`
		SignalAnchors []map[string]any `json:"signal_anchors"`
		Findings      struct {
			FailureModes []struct {
				Category    string  `json:"category"`
				EvidenceIDs []int64 `json:"evidence_ids"`
				Hint        string  `json:"prevention_hint"`
			} `json:"likely_failure_modes"`
		} `json:"deterministic_findings"`
	} `json:"evidence"`
	Summaries []struct {
		Incident       incidentJSON   `json:"incident"`
		EvidenceCounts map[string]int `json:"evidence_counts"`
	} `json:"evidence_summary"`
	Detail        bool             `json:"detail"`
	Total         int              `json:"total_incidents"`
	Other         []map[string]any `json:"other_matching_incidents"`
	NoIncident    bool             `json:"no_incident_low_severity_summary"`
	NoData        bool             `json:"no_data"`
	Suggested     []string         `json:"suggested_filters"`
	Message       string           `json:"message"`
	LimitClamped  int              `json:"limit_clamped_to"`
	WindowMinutes int              `json:"window_minutes"`
}

// TestIncidentCommandsEndToEnd runs the incident commands of the real
// binary on the labelled sessions.
func TestIncidentCommandsEndToEnd(t *testing.T) {
	labelled := testcorpus.Labelled(t)
	e := newEnv(t)
	db := filepath.Join(e.home, "c.db")
	e.run("--db", db, "index", labelled)

	var skills incidentListJSON
	e.json(&skills, "--db", db, "ai", "skill-incidents", "--json")
	var names []string
	for _, i := range skills.Incidents {
		names = append(names, i.SkillName)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "lavra:lavra-plan,ops:deploy-helper,worktree" {
		t.Fatalf("skill incidents: %v", names)
	}

	// Skill-first: a positional skill, nothing else needed. --json gives
	// the summary; --detail the whole bundle.
	var inv investigationJSON
	e.json(&inv, "--db", db, "ai", "skill-investigate", "lavra:lavra-plan", "--json")
	if len(inv.Summaries) != 1 || inv.Summaries[0].Incident.SkillName != "lavra:lavra-plan" || len(inv.Evidence) != 0 ||
		inv.Summaries[0].EvidenceCounts["skill_events"] == 0 {
		t.Fatalf("skill-investigate summary: %+v", inv)
	}
	inv = investigationJSON{}
	e.json(&inv, "--db", db, "ai", "skill-investigate", "lavra:lavra-plan", "--json", "--detail")
	if len(inv.Evidence) != 1 || inv.Evidence[0].Incident.SkillName != "lavra:lavra-plan" || len(inv.Evidence[0].SkillEvents) == 0 ||
		!inv.Detail {
		t.Fatalf("skill-investigate detail: %+v", inv)
	}
	modes := inv.Evidence[0].Findings.FailureModes
	if len(modes) == 0 || modes[0].Category == "unknown" || len(modes[0].EvidenceIDs) == 0 || modes[0].Hint == "" {
		t.Fatalf("findings: %+v", modes)
	}
	out, _, code := e.run("--db", db, "ai", "skill-investigate", "lavra:lavra-plan")
	for _, want := range []string{"skill lavra:lavra-plan", "Findings", "fix:", "Evidence", "signal anchors", "That's not what I asked"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("human report lacks %q (exit %d):\n%s", want, code, out)
		}
	}

	// The same as a Markdown report, for an issue or a PR; a bad format
	// is a usage error, --json with --format a conflict.
	out, _, code = e.run("--db", db, "ai", "skill-investigate", "lavra:lavra-plan", "--format", "md")
	for _, want := range []string{"# Cortex investigation — skill `lavra:lavra-plan`", "### Findings", "**fix:**",
		"### What the user did", "cortex show session "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("markdown report lacks %q (exit %d):\n%s", want, code, out)
		}
	}
	if _, errOut, code := e.run("--db", db, "ai", "skill-investigate", "lavra:lavra-plan", "--format", "html"); code != 2 ||
		!strings.Contains(errOut, "text, md or json") {
		t.Errorf("bad format: exit %d %s", code, errOut)
	}
	if _, _, code := e.run("--db", db, "ai", "skill-investigate", "--json", "--format", "md"); code == 0 {
		t.Error("--json with --format accepted")
	}
	out, _, code = e.run("--db", db, "assess", "skill", "lavra:lavra-plan", "--no-llm", "--format", "md")
	if code != 0 || !strings.Contains(out, "# Cortex assessment — skill `lavra:lavra-plan`") || !strings.Contains(out, "No LLM run") {
		t.Errorf("assess markdown (exit %d):\n%s", code, out)
	}

	// The calibration, compared with the labelled corpus it was indexed
	// from: every case as expected.
	var cal struct {
		Sessions int `json:"sessions"`
		Signals  []struct {
			Signal   string `json:"signal"`
			Verdict  string `json:"verdict"`
			Labelled *struct {
				Expected, Found, Missed, FalsePositives int
			} `json:"labelled"`
		} `json:"signals"`
		Labelled struct{ Cases, Passed int } `json:"labelled"`
	}
	e.json(&cal, "--db", db, "ai", "signals", "--labelled", labelled, "--json")
	if cal.Sessions == 0 || len(cal.Signals) < 20 || cal.Labelled.Cases == 0 || cal.Labelled.Passed != cal.Labelled.Cases {
		t.Fatalf("signals: %+v", cal)
	}
	out, _, code = e.run("--db", db, "ai", "signals", "--labelled", labelled)
	for _, want := range []string{"sessions judged", "A bad end:", "VERDICT", "LABELLED", "tool_failure_after_skill", "never_fired"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("signals table lacks %q (exit %d):\n%s", want, code, out)
		}
	}
	if _, errOut, code := e.run("--db", db, "ai", "signals", "--labelled", e.home); code != 2 || !strings.Contains(errOut, "expected.json") {
		t.Errorf("bad labelled dir: exit %d %s", code, errOut)
	}

	// Usage without signal; no data is not found (exit 3), with the
	// suggestions, like cortex assess.
	inv = investigationJSON{}
	e.json(&inv, "--db", db, "ai", "skill-investigate", "verify", "--json")
	if !inv.NoIncident || len(inv.Summaries) != 1 {
		t.Fatalf("verify usage: %+v", inv)
	}
	out, _, code = e.run("--db", db, "ai", "skill-investigate", "deploy-helpr", "--since", "2026-10-01", "--json")
	if code != 3 || !strings.Contains(out, `"not_found"`) || !strings.Contains(out, "ops:deploy-helper") {
		t.Fatalf("no data --json: exit %d %s", code, out)
	}
	_, errOut, code := e.run("--db", db, "ai", "skill-investigate", "deploy-helpr")
	if code != 3 || !strings.Contains(errOut, "try:") || !strings.Contains(errOut, "ops:deploy-helper") {
		t.Fatalf("no-data report (exit %d):\n%s", code, errOut)
	}
	_, errOut2, code2 := e.run("--db", db, "assess", "skill", "deploy-helpr", "--no-llm")
	if code2 != code {
		t.Fatalf("assess of an unknown skill exits %d, investigate %d (%s)", code2, code, errOut2)
	}

	// ai incidents lists every lens, with a LENS column; --lens narrows;
	// ai investigate takes any lens's id.
	var all incidentListJSON
	e.json(&all, "--db", db, "ai", "incidents", "--json")
	lenses := map[string]bool{}
	for _, i := range all.Incidents {
		lenses[i.Lens] = true
	}
	if !lenses["skill"] || !lenses["abuse"] || all.Total < len(skills.Incidents)+1 {
		t.Fatalf("all-lens incidents: %+v", all)
	}
	out, _, code = e.run("--db", db, "ai", "incidents")
	if code != 0 || !strings.HasPrefix(out, "LENS") {
		t.Fatalf("human all-lens incidents:\n%s", out)
	}
	var onlySkill incidentListJSON
	e.json(&onlySkill, "--db", db, "ai", "incidents", "--lens", "skill", "--json")
	if onlySkill.Total != skills.Total {
		t.Fatalf("--lens skill: %d incidents, skill-incidents %d", onlySkill.Total, skills.Total)
	}
	var page1, page2 incidentListJSON
	e.json(&page1, "--db", db, "ai", "incidents", "--limit", "1", "--json")
	e.json(&page2, "--db", db, "ai", "incidents", "--limit", "1", "--cursor", page1.Next, "--json")
	if page1.Next == "" || len(page2.Incidents) != 1 || page2.Incidents[0].ID != all.Incidents[1].ID {
		t.Fatalf("pages: %+v then %+v", page1, page2)
	}
	for _, want := range all.Incidents {
		inv = investigationJSON{}
		e.json(&inv, "--db", db, "ai", "investigate", want.ID, "--json")
		if len(inv.Summaries) != 1 || inv.Summaries[0].Incident.ID != want.ID || inv.Summaries[0].Incident.Lens != want.Lens {
			t.Fatalf("investigate %s: %+v", want.ID, inv)
		}
	}
	if _, errOut, code := e.run("--db", db, "ai", "investigate"); code != 2 || !strings.Contains(errOut, "incident_id") {
		t.Fatalf("investigate without an id: exit %d %s", code, errOut)
	}

	// Abuse: the match with its context, the incident, its bundle.
	var abuse struct {
		Matches []struct {
			Term   string           `json:"term"`
			Before []map[string]any `json:"before"`
			After  []map[string]any `json:"after"`
		} `json:"matches"`
	}
	e.json(&abuse, "--db", db, "ai", "abuse", "--before", "3", "--after", "1", "--json")
	if len(abuse.Matches) != 1 || abuse.Matches[0].Term != "fucking" || len(abuse.Matches[0].Before) != 3 {
		t.Fatalf("abuse: %+v", abuse)
	}
	var incs incidentListJSON
	e.json(&incs, "--db", db, "ai", "abuse-incidents", "--json")
	if incs.Total != 1 || !slices.Contains(incs.Incidents[0].Terms, "fucking") {
		t.Fatalf("abuse incidents: %+v", incs)
	}
	inv = investigationJSON{}
	e.json(&inv, "--db", db, "ai", "abuse-investigate", "--incident-id", incs.Incidents[0].ID, "--json", "--detail")
	if len(inv.Evidence) != 1 || inv.Evidence[0].Incident.ID != incs.Incidents[0].ID || len(inv.Evidence[0].SignalAnchors) != 1 {
		t.Fatalf("abuse investigate: %+v", inv)
	}
	// Other terms replace the defaults; bad ones are clear errors.
	e.json(&incs, "--db", db, "ai", "abuse-incidents", "--term", "broken", "--json")
	if incs.Total != 1 || incs.Incidents[0].Terms[0] != "broken" {
		t.Fatalf("custom term: %+v", incs)
	}
	_, errOut, code = e.run("--db", db, "ai", "abuse-incidents", "--term", "rm -rf")
	if code != 2 || !strings.Contains(errOut, "letters, digits") {
		t.Fatalf("bad term: exit %d %s", code, errOut)
	}
	_, errOut, code = e.run("--db", db, "ai", "skill-incidents", "--signal", "bogus")
	if code != 2 || !strings.Contains(errOut, "unknown skill signal") {
		t.Fatalf("bad signal: exit %d %s", code, errOut)
	}
	_, errOut, code = e.run("--db", db, "ai", "skill-investigate", "--incident-id", "skill-inc-nope")
	if code == 0 || !strings.Contains(errOut, "no skill incident") {
		t.Fatalf("unknown id: exit %d %s", code, errOut)
	}
	out, _, _ = e.run("--db", db, "ai", "skill-incidents")
	if !strings.HasPrefix(out, "SCORE") || !strings.Contains(out, "worktree") {
		t.Fatalf("human skill-incidents:\n%s", out)
	}
}
