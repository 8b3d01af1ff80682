package incident

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
)

func TestSessionBudget(t *testing.T) {
	m := func(id int64, session string) member {
		return member{ID: id, Key: groupKey{Tool: cortex.ToolClaude, Host: "h", Session: session, Project: "p" + session}}
	}
	ms := []member{m(1, "a"), m(2, "b"), m(3, "a"), m(4, "c"), m(5, "b"), m(6, "d")}
	got, cut := sessionBudget(ms, 2)
	var ids []int64
	for _, x := range got {
		ids = append(ids, x.ID)
	}
	if !cut || !slices.Equal(ids, []int64{1, 2, 3, 5}) {
		t.Fatalf("got %v cut %v", ids, cut)
	}
	if got, cut := sessionBudget(ms, 4); cut || len(got) != len(ms) {
		t.Fatalf("no cut expected: %d %v", len(got), cut)
	}
}

// The friction lens scans only acts whose stored reading says something
// (and interrupts, refusals) when the readings are this binary's; with
// readings of other rules it scans every act and reads them again. On the
// real corpus both find the same incidents but those whose only friction
// is asking again (a weak signal that makes no candidate).
func TestFrictionScanWithStaleReadings(t *testing.T) {
	ctx := context.Background()
	db := indexed(t, testcorpus.Real(t))
	e := New(db)
	current, err := e.Incidents(ctx, frictionLens{}, cortex.IncidentParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("sqlite", db.Path())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE ai_user_events SET voice_version = 1`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	stale, err := e.Incidents(ctx, frictionLens{}, cortex.IncidentParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if stale.CandidateRows <= current.CandidateRows {
		t.Errorf("stale readings scanned %d acts, current %d", stale.CandidateRows, current.CandidateRows)
	}
	ids := map[string]cortex.Incident{}
	for _, inc := range stale.Incidents {
		ids[inc.ID] = inc
	}
	for _, inc := range current.Incidents {
		if _, ok := ids[inc.ID]; !ok {
			t.Errorf("%s found with current readings only: %s %s..%s %v %v", inc.ID, inc.SessionID, inc.FirstSeen, inc.LastSeen, inc.SignalsPresent, inc.EventIDs)
		}
		delete(ids, inc.ID)
	}
	for id, inc := range ids {
		if !slices.Equal(inc.SignalsPresent, []string{cortex.SignalRepeatedRequest}) {
			t.Errorf("%s (%v) found with stale readings only: %s %s..%s %v", id, inc.SignalsPresent, inc.SessionID, inc.FirstSeen, inc.LastSeen, inc.EventIDs)
		}
	}
}
