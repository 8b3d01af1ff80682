package findings

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

func TestConfidenceByDistinctRows(t *testing.T) {
	for n, want := range map[int]string{1: ConfidenceLow, 2: ConfidenceMedium, 3: ConfidenceHigh, 5: ConfidenceHigh} {
		var rows []cortex.EvidenceRow
		for i := range n {
			rows = append(rows, row(int64(100-i), cortex.RoleUser, "No, that's the wrong repo."))
		}
		b := skillBundle(rows...)
		f := Skill().Derive(b)
		checkInvariants(t, Skill(), b, f)
		if m := mode(f, catSource); m == nil || m.Confidence != want || len(m.EvidenceIDs) != n {
			t.Errorf("%d rows: got %+v, want %s", n, m, want)
		}
	}
}

// A row found in several collections counts once; ids come out sorted.
func TestEvidenceSortedAndDeduped(t *testing.T) {
	r30 := row(30, cortex.RoleUser, "wrong branch again")
	r10 := row(10, cortex.RoleUser, "that's the wrong repo")
	r20 := row(20, cortex.RoleUser, "stale data")
	b := skillBundle(r30, r10, r20)
	b.SignalAnchors = []cortex.EvidenceRow{r10, r30}
	b.NearbyUserCorrections = []cortex.EvidenceRow{r20, r10}
	f := Skill().Derive(b)
	checkInvariants(t, Skill(), b, f)
	m := mode(f, catSource)
	if m == nil || !slices.Equal(m.EvidenceIDs, []int64{10, 20, 30}) || m.Confidence != ConfidenceHigh {
		t.Fatalf("got %+v", m)
	}
	if m.Why != `matched "stale data", "wrong branch", "wrong repo"` {
		t.Fatalf("Why = %q", m.Why)
	}
	// Both wrong_source_of_truth rules merged into one finding.
	if got := cats(f); !slices.Equal(got, []string{catSource}) {
		t.Fatalf("got %v", got)
	}
	// The first occurrence of an id wins: a later row with the same id is
	// not read again.
	b = skillBundle(row(4, cortex.RoleUser, "wrong repo"))
	b.SignalAnchors = []cortex.EvidenceRow{row(4, cortex.RoleUser, "looks fine")}
	if got := cats(Skill().Derive(b)); !slices.Equal(got, []string{CategoryUnknown}) {
		t.Fatalf("got %v", got)
	}
	// Two rows, one id: the first occurrence wins and counts once.
	b = skillBundle(row(4, cortex.RoleUser, "wrong repo"))
	b.SignalAnchors = []cortex.EvidenceRow{row(4, cortex.RoleUser, "wrong repo")}
	if m := mode(Skill().Derive(b), catSource); m == nil || m.Confidence != ConfidenceLow || !slices.Equal(m.EvidenceIDs, []int64{4}) {
		t.Fatalf("got %+v", m)
	}
}

func TestToolFailuresCiteEventsAndLogs(t *testing.T) {
	b := skillBundle()
	b.NearbyToolFailures = []cortex.ToolFailure{
		{EventID: 78, ErrorText: "sudo: a password is required"}, // no log ids
		{EventID: 77, CallLogID: ptr(11), ResultLogID: ptr(12), ErrorText: "Permission denied"},
		{EventID: 77, CallLogID: ptr(11), ResultLogID: ptr(12), ErrorText: "Permission denied"}, // duplicate event
		{EventID: 79, CallLogID: ptr(13), ResultLogID: ptr(14), ErrorText: ""},                  // no text: nothing to match
	}
	f := Skill().Derive(b)
	checkInvariants(t, Skill(), b, f)
	m := mode(f, catSkillPermission)
	// Two failures (medium), but only their error texts matched: one level
	// less sure, and the finding says so.
	if m == nil || !slices.Equal(m.MCPEventIDs, []int64{77, 78}) || !slices.Equal(m.EvidenceIDs, []int64{11, 12}) ||
		m.Confidence != ConfidenceLow || !strings.Contains(m.Why, "only the failed call's error text matched") {
		t.Fatalf("got %+v", m)
	}
	// When the skill's text names the failing step, the failure is of its
	// making: as sure as the evidence.
	b.Skill = &cortex.SkillDoc{Text: "Run `sudo make install` to install."}
	b.NearbyToolFailures[1].Operation, b.NearbyToolFailures[2].Operation = "sudo make", "sudo make"
	if m := mode(Skill().Derive(b), catSkillPermission); m == nil || m.Confidence != ConfidenceMedium || strings.Contains(m.Why, "only the") {
		t.Fatalf("step in the skill's text: got %+v", m)
	}
	b.Skill = nil

	// The same failure seen as its result row and as an event counts once.
	b = skillBundle(row(12, cortex.RoleToolResult, "Permission denied"))
	b.NearbyToolFailures = []cortex.ToolFailure{{EventID: 77, CallLogID: ptr(11), ResultLogID: ptr(12), ErrorText: "Permission denied"}}
	m = mode(Skill().Derive(b), catSkillPermission)
	if m == nil || m.Confidence != ConfidenceLow || !slices.Equal(m.EvidenceIDs, []int64{11, 12}) || !slices.Equal(m.MCPEventIDs, []int64{77}) {
		t.Fatalf("got %+v", m)
	}

	// Abuse: error text is tool voice; a user-voiced phrase in it is not.
	b = abuseBundle()
	b.NearbyToolFailures = []cortex.ToolFailure{
		{EventID: 5, ResultLogID: ptr(50), ErrorText: "context deadline exceeded"},
		{EventID: 6, ResultLogID: ptr(60), ErrorText: "that's not what i asked"},
	}
	f = Abuse().Derive(b)
	checkInvariants(t, Abuse(), b, f)
	if got := cats(f); !slices.Equal(got, []string{catToolTimeout}) {
		t.Fatalf("got %v", got)
	}
	if m := f.FailureModes[0]; !slices.Equal(m.MCPEventIDs, []int64{5}) || !slices.Equal(m.EvidenceIDs, []int64{50}) {
		t.Fatalf("got %+v", m)
	}
}

func TestFallbackUnknown(t *testing.T) {
	for _, c := range []struct {
		rules     *Rules
		noAnchors string
	}{
		{Skill(), "no negative signal anchors captured"},
		{Abuse(), "no anchors captured"},
		{nil, "no anchors captured"},
	} {
		b := &cortex.Bundle{Incident: cortex.Incident{Lens: c.rules.Lens()}}
		f := c.rules.Derive(b)
		checkInvariants(t, c.rules, b, f)
		want := []string{questionUnknown, c.noAnchors, questionNoLogs}
		if !slices.Equal(f.OpenQuestions, want) {
			t.Errorf("%q: questions %q, want %q", c.rules.Lens(), f.OpenQuestions, want)
		}
		m := f.FailureModes[0]
		if len(f.FailureModes) != 1 || m.Category != CategoryUnknown || m.Confidence != ConfidenceLow || len(m.EvidenceIDs) != 0 {
			t.Errorf("%q: got %+v", c.rules.Lens(), f.FailureModes)
		}
		js := mustJSON(t, f)
		if !strings.Contains(js, `"evidence_ids":[]`) || !strings.Contains(js, `"contributing_factors":[]`) {
			t.Errorf("empty slices must marshal as []: %s", js)
		}
	}
	// Nil everything does not panic.
	var r *Rules
	checkInvariants(t, r, nil, r.Derive(nil))
	checkInvariants(t, Skill(), nil, Skill().Derive(nil))
	if f := Derive(nil); f.FailureModes[0].Category != CategoryUnknown {
		t.Fatal(f)
	}
}

func TestOpenQuestions(t *testing.T) {
	// One low-confidence finding: ask for confirmation; anchors and logs
	// present: no other question.
	b := skillBundle(row(1, cortex.RoleUser, "wrong repo"))
	b.SignalAnchors = []cortex.EvidenceRow{row(1, cortex.RoleUser, "wrong repo")}
	b.NearbyLogs = []cortex.EvidenceRow{logRow(2, "sshd: session opened")}
	if got := Skill().Derive(b).OpenQuestions; !slices.Equal(got, []string{questionLow}) {
		t.Fatalf("got %q", got)
	}
	// A medium finding: no low-confidence question.
	b.TranscriptAfter = append(b.TranscriptAfter, row(3, cortex.RoleUser, "wrong branch"))
	if got := Skill().Derive(b).OpenQuestions; len(got) != 0 {
		t.Fatalf("got %q", got)
	}
	// Nearby errors alone corroborate too.
	b.NearbyLogs, b.NearbyErrors = nil, []cortex.EvidenceRow{logRow(2, "x")}
	if got := Skill().Derive(b).OpenQuestions; len(got) != 0 {
		t.Fatalf("got %q", got)
	}
}

func TestTruncationNote(t *testing.T) {
	b := skillBundle(row(1, cortex.RoleUser, "wrong repo"))
	b.NearbyErrorsTruncated, b.TranscriptAfterTruncated, b.SkillEventsTruncated = true, true, true
	got := Skill().Derive(b).OpenQuestions
	want := "evidence was truncated (cap reached) for: skill_events, transcript_after, nearby_errors"
	if got[len(got)-1] != want {
		t.Fatalf("got %q", got)
	}
	b.NearbyErrorsTruncated, b.TranscriptAfterTruncated, b.SkillEventsTruncated = false, false, false
	for _, q := range Skill().Derive(b).OpenQuestions {
		if strings.Contains(q, "truncated") {
			t.Fatalf("unexpected %q", q)
		}
	}
}

func TestFactors(t *testing.T) {
	// Abuse: ≥3 anchors with anchors in the bundle, an error burst, failed
	// tool calls — in that order.
	b := abuseBundle()
	b.Incident.EventCount = 3
	b.Incident.AnchorLogIDs = []int64{3, 1, 2, 1000}
	b.SignalAnchors = []cortex.EvidenceRow{row(3, cortex.RoleUser, "a"), row(1, cortex.RoleUser, "b"), row(2, cortex.RoleUser, "c")}
	b.NearbyErrors = []cortex.EvidenceRow{logRow(40, "e"), logRow(41, "e"), logRow(42, "e")}
	b.NearbyToolFailures = []cortex.ToolFailure{
		{EventID: 6, CallLogID: ptr(60), ResultLogID: ptr(61)},
		{EventID: 5, ResultLogID: ptr(51)},
	}
	f := Abuse().Derive(b)
	checkInvariants(t, Abuse(), b, f)
	want := []cortex.Factor{
		{Factor: "elevated frustration signal: 3 abuse anchors", EvidenceIDs: []int64{1, 2, 3}},
		{Factor: "error burst: 3 error-level logs near the incident", EvidenceIDs: []int64{40, 41, 42}},
		{Factor: "2 failed tool calls near the incident (mcp events 5, 6)", EvidenceIDs: []int64{51, 60, 61}},
	}
	if !reflect.DeepEqual(f.Factors, want) {
		t.Fatalf("got %+v", f.Factors)
	}

	// Below the thresholds, or no anchor in the bundle: no factor.
	b.Incident.EventCount = 2
	b.NearbyErrors = b.NearbyErrors[:2]
	b.NearbyToolFailures = b.NearbyToolFailures[:1]
	if got := Abuse().Derive(b).Factors; len(got) != 0 {
		t.Fatalf("got %+v", got)
	}
	b.Incident.EventCount = 5
	b.SignalAnchors = nil
	b.Incident.AnchorLogIDs = []int64{1000}
	if got := Abuse().Derive(b).Factors; len(got) != 0 {
		t.Fatalf("anchors not in the bundle: got %+v", got)
	}

	// Skill: ≥3 activations cite the skill events' log ids.
	s := skillBundle()
	s.Incident.EventCount = 3
	s.SkillEvents = []cortex.SkillEventRow{{ID: 1, LogID: 41}, {ID: 2, LogID: 40}, {ID: 3, LogID: 41}}
	got := Skill().Derive(s).Factors
	if want := []cortex.Factor{{Factor: "repeated skill activation: 3 activations", EvidenceIDs: []int64{40, 41}}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
}

func TestForLens(t *testing.T) {
	if ForLens(cortex.LensAbuse) != Abuse() || ForLens(cortex.LensSkill) != Skill() || ForLens(cortex.LensMCP) != MCP() ||
		ForLens(cortex.LensHook) != Hook() || MCP() == nil {
		t.Fatal("ForLens does not return the lens rule sets")
	}
	for _, l := range []string{"", "nope"} {
		if ForLens(l) != nil {
			t.Errorf("ForLens(%q) != nil", l)
		}
	}
	// Derive picks by lens: the same text gives abuse or skill categories.
	b := &cortex.Bundle{TranscriptAfter: []cortex.EvidenceRow{row(1, cortex.RoleToolResult, "permission denied")}}
	for lens, want := range map[string]string{cortex.LensAbuse: catAuth, cortex.LensSkill: catSkillPermission, cortex.LensMCP: CategoryUnknown} {
		b.Incident.Lens = lens
		if got := cats(Derive(b)); !slices.Equal(got, []string{want}) {
			t.Errorf("lens %q: got %v, want %s", lens, got, want)
		}
	}
	// Unknown lens: still the generic factors and questions.
	b.Incident.Lens = "nope"
	b.NearbyToolFailures = []cortex.ToolFailure{{EventID: 1}, {EventID: 2}}
	if f := Derive(b); len(f.Factors) != 1 || f.OpenQuestions[0] != questionUnknown {
		t.Fatalf("got %+v", f)
	}
}

// Every rule names a category of its table; every category but unknown
// (and those the lens derives from its own collections) has a rule;
// phrases are non-empty.
func TestRuleTables(t *testing.T) {
	fromEvidence := map[string]bool{catWrongTrigger: true, catRetry: true}
	for _, rs := range []*Rules{Abuse(), Skill()} {
		used := map[string]bool{}
		for _, ru := range rs.rules {
			if _, ok := rs.index[ru.category]; !ok || ru.category == CategoryUnknown {
				t.Errorf("%s: rule category %q", rs.Lens(), ru.category)
			}
			if ru.phrases == nil && ru.extra == nil && len(ru.signals) == 0 {
				t.Errorf("%s: empty rule for %s", rs.Lens(), ru.category)
			}
			used[ru.category] = true
		}
		for _, c := range rs.Categories() {
			if c != CategoryUnknown && !used[c] && !fromEvidence[c] {
				t.Errorf("%s: category %s has no rule", rs.Lens(), c)
			}
		}
		for _, c := range rs.categories {
			if strings.Contains(rs.hint(rs.index[c.name], &cortex.Incident{SkillName: "s"}, nil), "{") {
				t.Errorf("%s: unrendered hint placeholder in %q", rs.Lens(), c.hint)
			}
		}
	}
}

// Determinism: Derive twice gives equal values and identical JSON, and
// the order of rows inside a collection does not change the result.
func TestDeterminism(t *testing.T) {
	b := richBundle()
	f1, f2 := Skill().Derive(b), Skill().Derive(b)
	if !reflect.DeepEqual(f1, f2) || mustJSON(t, f1) != mustJSON(t, f2) {
		t.Fatal("two derivations differ")
	}
	checkInvariants(t, Skill(), b, f1)
	if len(f1.FailureModes) < 4 {
		t.Fatalf("rich bundle too poor: %v", cats(f1))
	}
	r := richBundle()
	slices.Reverse(r.TranscriptAfter)
	slices.Reverse(r.NearbyToolFailures)
	slices.Reverse(r.NearbyErrors)
	if f3 := Skill().Derive(r); mustJSON(t, f1) != mustJSON(t, f3) {
		t.Fatalf("row order changed the findings:\n%s\n%s", mustJSON(t, f1), mustJSON(t, f3))
	}
}

func richBundle() *cortex.Bundle {
	b := skillBundle(
		row(21, cortex.RoleUser, "That's not what I asked. You stopped at the plan again."),
		row(22, cortex.RoleToolResult, "fatal: not a git repository"),
		row(23, cortex.RoleUser, "wrong repo, and we wasted an hour"),
		row(24, cortex.RoleAssistant, "I will use the wrong repo"),
		row(25, cortex.RoleUser, "The skill says to use the deploy script."),
		row(26, cortex.RoleContext, "skill body: wrong branch"),
	)
	b.Incident.EventCount = 4
	b.Incident.SignalsPresent = []string{cortex.SignalOverlongLoop}
	b.Incident.AnchorLogIDs = []int64{21, 23}
	b.SignalAnchors = []cortex.EvidenceRow{row(21, cortex.RoleUser, "That's not what I asked. You stopped at the plan again.")}
	b.SkillEvents = []cortex.SkillEventRow{{ID: 1, LogID: 3}, {ID: 2, LogID: 2}, {ID: 3, LogID: 1}, {ID: 4, LogID: 4}}
	b.NearbyErrors = []cortex.EvidenceRow{logRow(31, "sshd: permission denied"), logRow(32, "x"), logRow(33, "database is locked")}
	b.NearbyToolFailures = []cortex.ToolFailure{
		{EventID: 9, CallLogID: ptr(41), ResultLogID: ptr(42), ErrorText: "sudo: a password is required"},
		{EventID: 8, ResultLogID: ptr(22), ErrorText: "fatal: not a git repository"},
	}
	b.TranscriptBeforeTruncated = true
	return b
}
