package incident

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/sqlite"
)

// indexed opens a fresh store holding the given corpus folder.
func indexed(t testing.TB, paths ...string) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cortex.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := ingest.Index(ctx, db, ingest.Options{Paths: paths, Hostname: "testhost"}); err != nil {
		t.Fatalf("index: %v", err)
	}
	return db
}

func labelledCases(t *testing.T, root string) []LabelledCase {
	t.Helper()
	cases, err := ReadLabelled(root)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// sessionOf returns the session id the file's rows were stored under.
func sessionOf(t *testing.T, db *sqlite.DB, path string) string {
	t.Helper()
	list, err := db.Sessions(context.Background(), cortex.SessionParams{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		if s.TranscriptPath == path {
			return s.SessionID
		}
	}
	t.Fatalf("no session for %s", path)
	return ""
}

// TestLabelledCorpus asserts every abuse and skill answer of
// ../shared/corpus/labelled/expected.json, each session alone and all of
// them in one store.
func TestLabelledCorpus(t *testing.T) {
	root := testcorpus.Labelled(t)
	db := indexed(t, root)
	e := New(db)
	ctx := context.Background()
	checked := 0
	for _, c := range labelledCases(t, root) {
		l, ok := Lenses()[c.Lens]
		if !ok {
			continue // mcp and hook lenses come later
		}
		t.Run(c.File, func(t *testing.T) {
			path := filepath.Join(root, c.File)
			session := sessionOf(t, db, path)
			// The subject as a user would give it: the MCP server as a
			// TARGET, the hook by its name.
			p := cortex.IncidentParams{Session: session, Skill: c.Skill, Target: c.MCPServer, Hook: c.HookName}
			list, err := e.Incidents(ctx, l, p)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Incident {
				if list.Total != 0 {
					t.Fatalf("want no incident, got %+v", list.Incidents)
				}
				// Usage is still there on request.
				p.IncludeUsage = true
				if usage, err := e.Incidents(ctx, l, p); err != nil || usage.Total == 0 {
					t.Fatalf("include_usage: %+v %v", usage, err)
				}
				return
			}
			if list.Total != 1 {
				t.Fatalf("want 1 incident, got %d: %+v", list.Total, list.Incidents)
			}
			inc := list.Incidents[0]
			for _, s := range c.SignalsInclude {
				if !slices.Contains(inc.SignalsPresent, s) {
					t.Errorf("signal %s missing: %v", s, inc.SignalsPresent)
				}
			}
			for _, term := range c.TermsInclude {
				if !slices.Contains(inc.Terms, term) {
					t.Errorf("term %s missing: %v", term, inc.Terms)
				}
			}
			if c.Skill != "" && inc.SkillName != c.Skill {
				t.Errorf("skill %q, want %q", inc.SkillName, c.Skill)
			}
			// The bundle cites the anchors and derives findings.
			inv, err := e.Investigate(ctx, l, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{IncidentID: inc.ID}})
			if err != nil || len(inv.Bundles) != 1 {
				t.Fatalf("investigate %s: %+v %v", inc.ID, inv, err)
			}
			b := inv.Bundles[0]
			if len(b.SignalAnchors) != len(inc.AnchorLogIDs) || len(b.Findings.FailureModes) == 0 {
				t.Errorf("bundle: %d anchors for %v, findings %+v", len(b.SignalAnchors), inc.AnchorLogIDs, b.Findings)
			}
		})
		checked++
	}
	if checked < 6 {
		t.Fatalf("only %d labelled abuse/skill cases checked", checked)
	}
}

// TestAbuseOnlyFromUserText: the abuse lens reads what users typed, on
// word boundaries; "hell" inside "shell" or in tool output is no anchor.
func TestAbuseOnlyFromUserText(t *testing.T) {
	root := testcorpus.Labelled(t)
	db := indexed(t, root)
	list, err := New(db).Incidents(context.Background(), abuseLens{}, cortex.IncidentParams{})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != 1 || list.Incidents[0].Terms[0] != "fucking" {
		t.Fatalf("abuse incidents: %+v", list.Incidents)
	}
	rows, err := db.RowsByID(context.Background(), list.Incidents[0].AnchorLogIDs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Role != cortex.RoleUser {
			t.Errorf("anchor %d has role %s", r.ID, r.Role)
		}
	}
}

func TestIncidentIDsStableAcrossLimitsAndRuns(t *testing.T) {
	root := testcorpus.Labelled(t)
	ctx := context.Background()
	ids := func(db *sqlite.DB, limit int) []string {
		list, err := New(db).Incidents(ctx, skillLens{}, cortex.IncidentParams{Limit: limit, IncludeUsage: true})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, i := range list.Incidents {
			out = append(out, i.ID)
		}
		return out
	}
	a := indexed(t, root)
	all := ids(a, 100)
	if len(all) < 5 {
		t.Fatalf("want ≥ 5 skill groups, got %v", all)
	}
	if one := ids(a, 1); one[0] != all[0] {
		t.Fatalf("limit changed the id: %v vs %v", one, all)
	}
	// A second store built from the same files gives the same ids.
	b := indexed(t, root)
	if again := ids(b, 100); strings.Join(again, ",") != strings.Join(all, ",") {
		t.Fatalf("ids differ across runs:\n%v\n%v", all, again)
	}
	// Unrelated new data (a whole other corpus) does not change them.
	real := testcorpus.Real(t)
	if _, err := ingest.Index(ctx, b, ingest.Options{Paths: []string{real}, Hostname: "testhost"}); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, id := range ids(b, 100) {
		got[id] = true
	}
	for _, id := range all {
		if !got[id] {
			t.Errorf("id %s vanished after unrelated data was added", id)
		}
	}
}

func TestIncidentFiltersAndLimits(t *testing.T) {
	root := testcorpus.Labelled(t)
	db := indexed(t, root)
	e := New(db)
	ctx := context.Background()
	all, err := e.Incidents(ctx, skillLens{}, cortex.IncidentParams{})
	if err != nil {
		t.Fatal(err)
	}
	if all.Total != 3 {
		t.Fatalf("want the 3 labelled skill incidents, got %d", all.Total)
	}
	// Sorted by score.
	for i := 1; i < len(all.Incidents); i++ {
		if all.Incidents[i].Score > all.Incidents[i-1].Score {
			t.Fatalf("not sorted: %+v", all.Incidents)
		}
	}
	one, _ := e.Incidents(ctx, skillLens{}, cortex.IncidentParams{Limit: 1})
	if len(one.Incidents) != 1 || !one.Truncated || one.Total != 3 {
		t.Fatalf("limit 1: %+v", one)
	}
	big, _ := e.Incidents(ctx, skillLens{}, cortex.IncidentParams{Limit: 1000})
	if big.LimitClampedTo != MaxLimit {
		t.Fatalf("clamp not reported: %+v", big)
	}
	scope, _ := e.Incidents(ctx, skillLens{}, cortex.IncidentParams{Signals: []string{cortex.SignalScopeConfusion}})
	if scope.Total != 1 || scope.Incidents[0].SkillName != "worktree" {
		t.Fatalf("signals filter: %+v", scope.Incidents)
	}
	last := all.Incidents[len(all.Incidents)-1]
	byID, _ := e.Incidents(ctx, skillLens{}, cortex.IncidentParams{IncidentID: last.ID, Limit: 1})
	if byID.Total != 1 || byID.Incidents[0].ID != last.ID {
		t.Fatalf("incident_id at the last rank: %+v", byID)
	}
	high, _ := e.Incidents(ctx, skillLens{}, cortex.IncidentParams{MinScore: all.Incidents[0].Score})
	if high.Total < 1 || high.Incidents[len(high.Incidents)-1].Score < all.Incidents[0].Score {
		t.Fatalf("min_score: %+v", high)
	}
	// Candidate cap: the newest candidates are kept and truncation is said.
	capped := New(db)
	capped.CandidateCap = 2
	c, err := capped.Incidents(ctx, skillLens{}, cortex.IncidentParams{IncludeUsage: true})
	if err != nil || !c.CandidateWindowTruncated || c.CandidateRows != 2 || !c.Truncated {
		t.Fatalf("cap: %+v %v", c, err)
	}
	for _, bad := range []cortex.IncidentParams{{Limit: -1}, {WindowMinutes: -1}, {Signals: []string{"nope"}},
		{Tool: "vim"}, {MinScore: -1}, {Terms: []string{"x"}}} {
		if _, err := e.Incidents(ctx, skillLens{}, bad); cortex.ErrorCode(err) != cortex.CodeInvalid {
			t.Errorf("%+v: %v, want invalid", bad, err)
		}
	}
	w, _ := e.Incidents(ctx, skillLens{}, cortex.IncidentParams{WindowMinutes: 1000})
	if w.WindowMinutes != MaxWindowMinutes {
		t.Fatalf("window clamp: %d", w.WindowMinutes)
	}
}

func TestSkillFirstInvestigation(t *testing.T) {
	root := testcorpus.Labelled(t)
	db := indexed(t, root)
	e := New(db)
	ctx := context.Background()
	inv := func(p cortex.IncidentParams) cortex.Investigation {
		t.Helper()
		out, err := e.Investigate(ctx, skillLens{}, cortex.InvestigateParams{IncidentParams: p})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// An incident: one bundle, with the skill's events and findings.
	got := inv(cortex.IncidentParams{Skill: "lavra:lavra-plan"})
	if len(got.Bundles) != 1 || got.NoData || got.NoIncident {
		t.Fatalf("lavra: %+v", got)
	}
	b := got.Bundles[0]
	if len(b.SkillEvents) == 0 || b.Incident.SkillName != "lavra:lavra-plan" || len(b.TranscriptAfter) == 0 {
		t.Fatalf("bundle: %+v", b)
	}
	// By plugin.
	if got := inv(cortex.IncidentParams{Plugin: "ops"}); len(got.Bundles) != 1 || got.Bundles[0].Incident.SkillName != "ops:deploy-helper" {
		t.Fatalf("plugin: %+v", got)
	}
	// Usage without a signal: a low-severity summary, not an error.
	got = inv(cortex.IncidentParams{Skill: "verify"})
	if !got.NoIncident || got.NoData || len(got.Bundles) != 1 || len(got.Usage) != 1 || got.Bundles[0].Incident.Label != "low" {
		t.Fatalf("verify: %+v", got)
	}
	// The skill part of a plugin skill's name finds it (one name per skill).
	if got := inv(cortex.IncidentParams{Skill: "lavra-plan"}); len(got.Bundles) != 1 || got.Bundles[0].Incident.SkillName != "lavra:lavra-plan" {
		t.Fatalf("skill part: %+v", got)
	}
	// No events: no data, with the nearest skill name suggested.
	got = inv(cortex.IncidentParams{Skill: "lavra-plann"})
	if !got.NoData || len(got.Bundles) != 0 || !strings.Contains(strings.Join(got.SuggestedFilters, "|"), "lavra:lavra-plan") {
		t.Fatalf("no data: %+v", got)
	}
	// An unknown id is not found.
	_, err := e.Investigate(ctx, skillLens{}, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{IncidentID: "skill-inc-0"}})
	if cortex.ErrorCode(err) != cortex.CodeNotFound {
		t.Fatalf("unknown id: %v", err)
	}
}

// TestBundleCapsAndMaxBytes uses the real session where Claude tagged 60
// lines with the "run" skill over half an hour, 56 rows into the session.
func TestBundleCapsAndMaxBytes(t *testing.T) {
	db := indexed(t, testcorpus.Real(t))
	e := New(db)
	ctx := context.Background()
	got, err := e.Investigate(ctx, skillLens{}, cortex.InvestigateParams{
		IncidentParams: cortex.IncidentParams{Skill: "run", Session: "3b5a9bec-34c4-48d5-9502-dd21f9e1e011",
			IncludeUsage: true, WindowMinutes: MaxWindowMinutes}, MaxBytes: 64})
	if err != nil || len(got.Bundles) != 1 {
		t.Fatalf("%+v %v", got, err)
	}
	b := got.Bundles[0]
	if len(b.Incident.EventIDs) != 60 || b.Incident.EventCount != 1 {
		t.Fatalf("60 skill events, one activation: %d events, %d activations", len(b.Incident.EventIDs), b.Incident.EventCount)
	}
	if len(b.SkillEvents) != capSkillEvents || !b.SkillEventsTruncated {
		t.Fatalf("skill_events: %d, truncated %v", len(b.SkillEvents), b.SkillEventsTruncated)
	}
	if len(b.TranscriptBefore) != capTranscript || !b.TranscriptBeforeTruncated {
		t.Fatalf("transcript_before: %d rows, truncated %v", len(b.TranscriptBefore), b.TranscriptBeforeTruncated)
	}
	// Chronological, ending right before the incident.
	for i := 1; i < len(b.TranscriptBefore); i++ {
		if b.TranscriptBefore[i].Timestamp < b.TranscriptBefore[i-1].Timestamp {
			t.Fatalf("transcript_before not chronological")
		}
	}
	if last := b.TranscriptBefore[len(b.TranscriptBefore)-1]; last.Timestamp > b.Incident.FirstSeen {
		t.Fatalf("transcript_before reaches into the incident: %s > %s", last.Timestamp, b.Incident.FirstSeen)
	}
	cut := 0
	for _, r := range append(append(b.TranscriptAfter, b.TranscriptBefore...), b.SignalAnchors...) {
		if len(r.Message) > 64+len("… [cut 9999999 bytes]") {
			t.Fatalf("row %d not bounded: %d bytes", r.ID, len(r.Message))
		}
		if r.MessageTruncated {
			cut++
			if !strings.Contains(r.Message, "… [cut ") {
				t.Fatalf("row %d cut without a marker", r.ID)
			}
		}
	}
	if cut == 0 {
		t.Fatal("no row was long enough to be cut at 64 bytes")
	}
	if b.CorrelationWindowMinutes != DefaultCorrelationMinutes {
		t.Fatalf("correlation window %d", b.CorrelationWindowMinutes)
	}
}
