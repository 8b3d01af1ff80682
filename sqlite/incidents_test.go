package sqlite

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

// incidentFixture stores one Claude session: user rows, an assistant row,
// a thinking row, two rows at the same instant, a failed and a successful
// tool call, a skill event; plus non-AI syslog rows on two hosts.
func incidentFixture(t *testing.T) (*DB, map[string]int64) {
	t.Helper()
	db, path := openTestDB(t)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	skill := cortex.Events{Skills: []cortex.SkillEvent{{SkillName: "ops:deploy", SkillPlugin: "ops",
		EventKind: cortex.SkillClaudeTool, EvidenceKind: cortex.EvidenceStructured}}}
	recs := []cortex.ImportRecord{
		rec("u1", "", cortex.RoleUser, "deploy the damn thing", at(0)),
		withEvents(rec("c1", "", cortex.RoleToolCall, "Skill ops:deploy", at(1)), skill),
		withEvents(rec("call-a", "", cortex.RoleToolCall, "Bash make deploy", at(2)), callEvent("A", "Bash")),
		withEvents(rec("res-a", "", cortex.RoleToolResult, "permission denied", at(3)), resultEvent("A", cortex.CallError, true, "permission denied")),
		withEvents(rec("call-b", "", cortex.RoleToolCall, "Bash make deploy", at(4)), callEvent("B", "Bash")),
		withEvents(rec("res-b", "", cortex.RoleToolResult, "ok", at(5)), resultEvent("B", cortex.CallSuccess, false, "ok")),
		rec("think", "", cortex.RoleThinking, "hmm, damn", at(5)),
		rec("tie1", "", cortex.RoleAssistant, "same instant one", at(6)),
		rec("tie2", "", cortex.RoleAssistant, "same instant two", at(6)),
		rec("u2", "", cortex.RoleUser, "no, that's the wrong damn host", at(7)),
		rec("tool-damn", "", cortex.RoleToolResult, "grep: damn: no match", at(8)),
	}
	mustImport(t, db, batch("/t/s.jsonl", recs...))
	raw := rawConn(t, path)
	for i, r := range []struct {
		host, sev string
		m         int
	}{{"host-a", "info", 2}, {"host-a", "err", 3}, {"host-a", "crit", 4}, {"host-b", "err", 3}, {"host-a", "warning", 60}} {
		if _, err := raw.Exec(`INSERT INTO logs (timestamp, hostname, severity, app_name, message, received_at, source)
			VALUES (?, ?, ?, 'nginx', ?, ?, 'syslog')`, cortex.FormatTime(at(r.m)), r.host, r.sev,
			fmt.Sprintf("syslog %d", i), cortex.FormatTime(testNow)); err != nil {
			t.Fatal(err)
		}
	}
	id := map[string]int64{}
	for _, k := range []string{"u1", "c1", "res-a", "res-b", "tie1", "tie2", "u2", "think", "tool-damn"} {
		id[k] = logID(t, db, "/t/s.jsonl", k)
	}
	return db, id
}

func evidenceIDs(rows []cortex.EvidenceRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func TestUserTextMatchesReadsOnlyUserRows(t *testing.T) {
	db, id := incidentFixture(t)
	ctx := context.Background()
	got, complete, err := db.UserTextMatches(ctx, []string{"damn"}, CandidateFilter{Limit: 10})
	if err != nil || !complete {
		t.Fatal(complete, err)
	}
	var ids []int64
	for _, c := range got {
		ids = append(ids, c.ID)
	}
	// Newest first; thinking and tool output are not user text.
	if fmt.Sprint(ids) != fmt.Sprint([]int64{id["u2"], id["u1"]}) {
		t.Fatalf("matches %v, want u2, u1 (%v)", ids, id)
	}
	if got[0].Session != "sess-1" || got[0].Tool != cortex.ToolClaude || got[0].Host != "host-a" {
		t.Fatalf("candidate fields: %+v", got[0])
	}
	got, _, _ = db.UserTextMatches(ctx, []string{"damn"}, CandidateFilter{Limit: 1})
	if len(got) != 1 || got[0].ID != id["u2"] {
		t.Fatalf("limit: %+v", got)
	}
	got, _, _ = db.UserTextMatches(ctx, []string{"damn"}, CandidateFilter{Limit: 10, Until: t0.Add(time.Minute)})
	if len(got) != 1 || got[0].ID != id["u1"] {
		t.Fatalf("until: %+v", got)
	}
	// A user row the search index has not reached yet is a candidate
	// whatever it says (the caller reads its words).
	if _, err := db.ImportBatches(ctx, []cortex.ImportBatch{batch("/t/late.jsonl",
		rec("late", "", cortex.RoleUser, "no such word here", t0.Add(time.Hour)))}); err != nil {
		t.Fatal(err)
	}
	got, complete, _ = db.UserTextMatches(ctx, []string{"damn"}, CandidateFilter{Limit: 10})
	if !complete || len(got) != 3 || got[0].Message != "no such word here" {
		t.Fatalf("with an unindexed row: complete %v, %+v", complete, got)
	}
	// A term is always an FTS string: quotes cannot become syntax.
	if _, _, err := db.UserTextMatches(ctx, []string{`x" OR "y`}, CandidateFilter{Limit: 10}); err != nil {
		t.Fatalf("quoted term: %v", err)
	}
}

func TestSessionRowsAroundARow(t *testing.T) {
	db, id := incidentFixture(t)
	ctx := context.Background()
	s := SessionScope{Tool: cortex.ToolClaude, Session: "sess-1", Host: "host-a"}
	tie := t0.Add(6 * time.Minute)
	before, err := db.SessionRowsBefore(ctx, s, tie, id["tie2"], 2)
	if err != nil {
		t.Fatal(err)
	}
	// tie1 shares tie2's instant and precedes it by id; thinking is skipped.
	if fmt.Sprint(evidenceIDs(before)) != fmt.Sprint([]int64{id["res-b"], id["tie1"]}) {
		t.Fatalf("before tie2: %v (ids %v)", evidenceIDs(before), id)
	}
	after, _ := db.SessionRowsAfter(ctx, s, tie, id["tie1"], 2)
	if fmt.Sprint(evidenceIDs(after)) != fmt.Sprint([]int64{id["tie2"], id["u2"]}) {
		t.Fatalf("after tie1: %v", evidenceIDs(after))
	}
	// Id 0 / MaxInt64 mean "before / after the instant".
	before, _ = db.SessionRowsBefore(ctx, s, tie, 0, 10)
	if last := before[len(before)-1].ID; last != id["res-b"] {
		t.Fatalf("before the instant ends at %d", last)
	}
	after, _ = db.SessionRowsAfter(ctx, s, tie, math.MaxInt64, 10)
	if after[0].ID != id["u2"] {
		t.Fatalf("after the instant starts at %d", after[0].ID)
	}
	users, err := db.SessionUserRows(ctx, s, t0, t0.Add(time.Hour), 10)
	if err != nil || fmt.Sprint(evidenceIDs(users)) != fmt.Sprint([]int64{id["u1"], id["u2"]}) {
		t.Fatalf("user rows: %v %v", evidenceIDs(users), err)
	}
	if users, _ := db.SessionUserRows(ctx, s, t0.Add(time.Minute), t0.Add(time.Hour), 10); len(users) != 1 {
		t.Fatalf("user rows from t0+1m: %v", evidenceIDs(users))
	}
	other := SessionScope{Tool: cortex.ToolClaude, Session: "sess-1", Host: "host-b"}
	if rows, _ := db.SessionUserRows(ctx, other, t0, t0.Add(time.Hour), 10); len(rows) != 0 {
		t.Fatalf("another host's session: %v", evidenceIDs(rows))
	}
}

func TestNearbyLogsAreNonAIRowsOfTheHost(t *testing.T) {
	db, _ := incidentFixture(t)
	ctx := context.Background()
	all, err := db.NearbyLogs(ctx, "host-a", t0, t0.Add(10*time.Minute), false, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 {
		t.Fatalf("nearby logs: %+v", all)
	}
	for _, r := range all {
		if r.Tool != "" || r.Hostname != "host-a" {
			t.Fatalf("row %+v is AI or another host's", r)
		}
	}
	errs, _ := db.NearbyLogs(ctx, "host-a", t0, t0.Add(10*time.Minute), true, 10)
	if len(errs) != 2 || errs[0].Severity != cortex.SevError || errs[1].Severity != cortex.SevCritical {
		t.Fatalf("nearby errors (err and crit count, the stored spellings): %+v", errs)
	}
	if one, _ := db.NearbyLogs(ctx, "host-a", t0, t0.Add(10*time.Minute), false, 1); len(one) != 1 {
		t.Fatalf("limit: %d", len(one))
	}
}

func TestSessionToolCallsAndSkillQueries(t *testing.T) {
	db, id := incidentFixture(t)
	ctx := context.Background()
	s := SessionScope{Tool: cortex.ToolClaude, Session: "sess-1", Host: "host-a"}
	calls, err := db.SessionCallNames(ctx, s, t0, t0.Add(time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || !calls[0].IsError || calls[1].IsError || calls[0].ToolName != "Bash" ||
		calls[0].ResultLogID == nil || *calls[0].ResultLogID != id["res-a"] {
		t.Fatalf("calls: %+v", calls)
	}
	failed, err := db.SessionFailedCalls(ctx, s, t0, t0.Add(time.Hour), 10)
	if err != nil || len(failed) != 1 || failed[0].ID != calls[0].ID {
		t.Fatalf("failed calls: %+v %v", failed, err)
	}
	if n, err := db.CountSessionCalls(ctx, s, t0, t0.Add(time.Hour)); n != 2 || err != nil {
		t.Fatalf("count: %d %v", n, err)
	}
	if n, _ := db.CountSessionCalls(ctx, s, t0.Add(3*time.Minute), t0.Add(time.Hour)); n != 1 {
		t.Fatalf("count from t0+3m: %d", n)
	}
	if n, _ := db.CountSessionCalls(ctx, SessionScope{Tool: cortex.ToolCodex, Session: "sess-1", Host: "host-a"}, t0, t0.Add(time.Hour)); n != 0 {
		t.Fatalf("count of another agent's session: %d", n)
	}
	// Bash failed at its call time, then succeeded: recovered within the
	// hour, not within the first three minutes.
	for _, c := range []struct {
		tool  string
		until time.Duration
		want  bool
	}{{"Bash", time.Hour, true}, {"Bash", 3 * time.Minute, false}, {"Edit", time.Hour, false}} {
		got, err := db.CallSucceededAfter(ctx, s, c.tool, calls[0].Timestamp, t0.Add(c.until))
		if err != nil || got != c.want {
			t.Errorf("CallSucceededAfter(%s, %v) = %v %v, want %v", c.tool, c.until, got, err, c.want)
		}
	}
	cands, err := db.SkillCandidates(ctx, CandidateFilter{Plugin: "ops", Limit: 10})
	if err != nil || len(cands) != 1 || cands[0].Skill != "ops:deploy" || cands[0].LogID != id["c1"] || cands[0].Session != "sess-1" {
		t.Fatalf("skill candidates: %+v %v", cands, err)
	}
	if none, _ := db.SkillCandidates(ctx, CandidateFilter{Skill: "other", Limit: 10}); len(none) != 0 {
		t.Fatalf("skill filter: %+v", none)
	}
	evs, err := db.SkillEventsByID(ctx, []int64{cands[0].ID})
	if err != nil || len(evs) != 1 || evs[0].SkillName != "ops:deploy" || evs[0].EventKind != cortex.SkillClaudeTool {
		t.Fatalf("events by id: %+v %v", evs, err)
	}
	names, _ := db.SkillNames(ctx)
	if fmt.Sprint(names) != "[ops:deploy]" {
		t.Fatalf("names: %v", names)
	}
	if rows, err := db.RowsByID(ctx, nil); rows != nil || err != nil {
		t.Fatalf("no ids: %v %v", rows, err)
	}
}
