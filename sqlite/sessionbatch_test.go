package sqlite_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/store"
)

// The batched session reads (many sessions or windows per query, chunks
// read at once on several connections) give what reading each session or
// window alone gives, on the real corpus, with and without parallel
// chunks. Run with -race: the chunks write one result slice.
func TestSessionBatchesMatchSingleReads(t *testing.T) {
	ctx := context.Background()
	db := realCorpusStore(t)
	scopes, err := sqlite.SessionScopesOf(db)
	if err != nil {
		t.Fatal(err)
	}
	// Small chunks, so that many run side by side.
	const batch = 8
	if len(scopes) <= 4*batch {
		t.Fatalf("only %d sessions: the batches would be few chunks", len(scopes))
	}
	const limit = 7 // small enough to cut long sessions
	wantActs := map[sqlite.SessionScope][]sqlite.UserAct{}
	wantSkills := map[sqlite.SessionScope][]sqlite.SessionSkill{}
	var windows []store.CallWindow
	for _, s := range scopes {
		acts, err := db.SessionUserActs(ctx, s, time.Time{}, time.Time{}, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(acts) > 0 {
			wantActs[s] = acts
		}
		skills, err := db.SessionSkillEvents(ctx, s, limit)
		if err != nil {
			t.Fatal(err)
		}
		for i := range skills {
			skills[i].Meta = nil // the batch leaves metadata out
		}
		if len(skills) > 0 {
			wantSkills[s] = skills
		}
		windows = append(windows, store.CallWindow{Scope: s})
		if len(acts) > 1 { // a bounded window too
			windows = append(windows, store.CallWindow{Scope: s, From: acts[0].Timestamp, To: acts[len(acts)-1].Timestamp})
		}
	}
	wantCalls := make([][]sqlite.SessionCall, len(windows))
	wantHooks := make([][]sqlite.HookRun, len(windows))
	hookWindows := make([]store.CallWindow, len(windows))
	for i, w := range windows {
		if w.From.IsZero() { // hook windows are always bounded
			w.From, w.To = time.Unix(0, 0), time.Now()
		}
		hookWindows[i] = w
	}
	sqlite.SetReadBatches(db, 1, batch)
	for i := range windows {
		got, err := db.SessionCallFactsMany(ctx, windows[i:i+1], limit)
		if err != nil {
			t.Fatal(err)
		}
		wantCalls[i] = got[0]
		hooks, err := db.SessionHookRunsMany(ctx, hookWindows[i:i+1], limit)
		if err != nil {
			t.Fatal(err)
		}
		wantHooks[i] = hooks[0]
	}
	var calls, hooks int
	for i := range windows {
		calls += len(wantCalls[i])
		hooks += len(wantHooks[i])
	}
	if len(wantActs) == 0 || len(wantSkills) == 0 || calls == 0 || hooks == 0 {
		t.Fatalf("the corpus gives nothing to compare: %d sessions with acts, %d with skills, %d calls, %d hook runs",
			len(wantActs), len(wantSkills), calls, hooks)
	}
	for _, par := range []int{1, 4} {
		sqlite.SetReadBatches(db, par, batch)
		acts, err := db.SessionsUserActs(ctx, scopes, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(acts, wantActs) {
			t.Errorf("parallelism %d: batched user acts differ from single-session reads", par)
		}
		skills, err := db.SessionsSkillEvents(ctx, scopes, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(skills, wantSkills) {
			t.Errorf("parallelism %d: batched skill events differ from single-session reads", par)
		}
		gotCalls, err := db.SessionCallFactsMany(ctx, windows, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotCalls, wantCalls) {
			t.Errorf("parallelism %d: batched call windows differ from single-window reads", par)
		}
		gotHooks, err := db.SessionHookRunsMany(ctx, hookWindows, limit)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotHooks, wantHooks) {
			t.Errorf("parallelism %d: batched hook windows differ from single-window reads", par)
		}
	}
	t.Logf("%d sessions, %d windows: %d calls, %d hook runs", len(scopes), len(windows), calls, hooks)
}

// FailedCallSessions gives each session with failures enough its first
// and last failure, as its calls show them; CallWhysByID gives the
// failure lines CallTextsByID gives, without the texts.
func TestFailedCallSpansAndWhys(t *testing.T) {
	ctx := context.Background()
	db := realCorpusStore(t)
	spans, err := db.FailedCallSessions(ctx, store.CandidateFilter{Limit: 10_000}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) < 5 {
		t.Fatalf("only %d sessions with 3 failures in the real corpus", len(spans))
	}
	for i, sp := range spans {
		if i > 0 && sp.Last.After(spans[i-1].Last) {
			t.Errorf("not newest failure first at %d", i)
		}
		got, err := db.SessionCallFactsMany(ctx, []store.CallWindow{{Scope: sp.SessionScope}}, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		var first, last time.Time
		var ids []int64
		n := 0
		for _, c := range got[0] {
			if !c.IsError {
				continue
			}
			n++
			ids = append(ids, c.ID)
			if first.IsZero() || c.Timestamp.Before(first) {
				first = c.Timestamp
			}
			if c.Timestamp.After(last) {
				last = c.Timestamp
			}
		}
		if n < 3 || !first.Equal(sp.First) || !last.Equal(sp.Last) {
			t.Errorf("%v: %d failures from %v to %v, span says %v to %v", sp.SessionScope, n, first, last, sp.First, sp.Last)
		}
		texts, err := db.CallTextsByID(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		whys, err := db.CallWhysByID(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if w := texts[id].Why; whys[id] != w {
				t.Errorf("call %d: why %q, texts say %q", id, whys[id], w)
			}
		}
	}
	if none, err := db.FailedCallSessions(ctx, store.CandidateFilter{Limit: 10, Session: "no-such-session"}, 1); err != nil || len(none) != 0 {
		t.Errorf("an unknown session: %v %v", none, err)
	}
}
