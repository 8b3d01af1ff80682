package incident

import (
	"fmt"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func mem(id int64, at time.Duration, session string) member {
	return member{ID: id, LogID: id, At: t0.Add(at), Key: groupKey{Tool: cortex.ToolClaude, Host: "h", Session: session,
		Subject: [3]string{"s"}}}
}

func sizes(gs []*group) []int {
	out := make([]int, len(gs))
	for i, g := range gs {
		out[i] = len(g.Members)
	}
	return out
}

func TestGroupingAtWindowEdges(t *testing.T) {
	w := 10 * time.Minute
	cases := []struct {
		name string
		ms   []member
		want []int
	}{
		{"gap exactly the window stays", []member{mem(1, 0, "a"), mem(2, w, "a")}, []int{2}},
		{"gap a millisecond over splits", []member{mem(1, 0, "a"), mem(2, w+time.Millisecond, "a")}, []int{1, 1}},
		{"a burst straddling an epoch bucket edge stays one", []member{
			mem(1, 9*time.Minute+50*time.Second, "a"), mem(2, 10*time.Minute+10*time.Second, "a")}, []int{2}},
		{"a long chain of short gaps is one", []member{mem(1, 0, "a"), mem(2, 9*time.Minute, "a"),
			mem(3, 18*time.Minute, "a"), mem(4, 27*time.Minute, "a")}, []int{4}},
		{"sessions never merge", []member{mem(1, 0, "a"), mem(2, time.Second, "b")}, []int{1, 1}},
		{"input order does not matter", []member{mem(3, 25*time.Minute, "a"), mem(1, 0, "a"), mem(2, 5*time.Minute, "a")}, []int{2, 1}},
		{"same instant, two members", []member{mem(2, 0, "a"), mem(1, 0, "a")}, []int{2}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := sizes(groupMembers(c.ms, w))
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("group sizes %v, want %v", got, c.want)
			}
		})
	}
}

func TestGroupingKeepsChronologicalMembers(t *testing.T) {
	gs := groupMembers([]member{mem(9, 2*time.Minute, "a"), mem(3, time.Minute, "a"), mem(5, time.Minute, "a")}, time.Hour)
	if len(gs) != 1 {
		t.Fatalf("groups: %d", len(gs))
	}
	var ids []int64
	for _, m := range gs[0].Members {
		ids = append(ids, m.ID)
	}
	if fmt.Sprint(ids) != "[3 5 9]" || !gs[0].First.Equal(t0.Add(time.Minute)) || !gs[0].Last.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("members %v first %v last %v", ids, gs[0].First, gs[0].Last)
	}
}

func TestStableID(t *testing.T) {
	k := groupKey{Tool: cortex.ToolClaude, Host: "h", Project: "p", Session: "s", Subject: [3]string{"skill", "plugin"}}
	a, b, c := mem(1, 0, "s").identity(), mem(2, time.Minute, "s").identity(), mem(3, 2*time.Minute, "s").identity()
	id := stableID("skill-inc-", cortex.LensSkill, k, []string{c, a, b})
	if want := "skill-inc-"; id[:len(want)] != want || len(id) != len(want)+idHexLen {
		t.Fatalf("id shape: %q", id)
	}
	// Same members in any order: same id.
	if again := stableID("skill-inc-", cortex.LensSkill, k, []string{b, c, a}); again != id {
		t.Fatalf("id not stable: %q vs %q", again, id)
	}
	differ := map[string]string{}
	add := func(name, v string) {
		if prev, ok := differ[v]; ok {
			t.Errorf("%s and %s share id %s", name, prev, v)
		}
		differ[v] = name
	}
	add("base", id)
	add("other member", stableID("skill-inc-", cortex.LensSkill, k, []string{a, b, mem(4, 3*time.Minute, "s").identity()}))
	add("fewer members", stableID("skill-inc-", cortex.LensSkill, k, []string{a, b}))
	add("a member twice", stableID("skill-inc-", cortex.LensSkill, k, []string{a, b, c, c}))
	add("other lens", stableID("skill-inc-", cortex.LensAbuse, k, []string{a, b, c}))
	k2 := k
	k2.Subject = [3]string{"skillp", "lugin"} // same concatenation, different fields
	add("shifted subject", stableID("skill-inc-", cortex.LensSkill, k2, []string{a, b, c}))
	k3 := k
	k3.Session = "s2"
	add("other session", stableID("skill-inc-", cortex.LensSkill, k3, []string{a, b, c}))
	other := mem(1, 0, "s")
	other.Kind = cortex.SkillClaudeBody
	add("other kind", stableID("skill-inc-", cortex.LensSkill, k, []string{other.identity(), b, c}))
}

// TestStableIDGolden pins the canonical string: changing it changes every
// id users have written down.
func TestStableIDGolden(t *testing.T) {
	k := groupKey{Tool: cortex.ToolCodex, Host: "host", Project: "proj", Session: "sess", Subject: [3]string{"worktree"}}
	m := member{At: time.Date(2026, 10, 14, 17, 0, 1, 500e6, time.UTC), Kind: cortex.SkillCodexBlock}
	if m.identity() != "2026-10-14T17:00:01.500Z/codex_skill_block" {
		t.Fatalf("identity %q", m.identity())
	}
	got := stableID("skill-inc-", cortex.LensSkill, k, []string{m.identity()})
	if got != goldenID {
		t.Fatalf("id %q, want %q (the canonical string changed)", got, goldenID)
	}
}

// goldenID is the SHA-256 of the canonical string of TestStableIDGolden,
// computed outside Go:
//
//	printf 'cortex-incident/v1\nskill\n5:codex\n4:host\n4:proj\n4:sess\n8:worktree\n0:\n0:\n2026-10-14T17:00:01.500Z/codex_skill_block' | sha256sum
const goldenID = "skill-inc-3f0ac72ea9349d77b0193e90afefb3f1"

func TestSortIncidentsTotalOrder(t *testing.T) {
	incs := []cortex.Incident{
		{ID: "b", Score: 10, LastSeen: "2026-11-01T00:00:00.000Z"},
		{ID: "a", Score: 10, LastSeen: "2026-11-01T00:00:00.000Z"},
		{ID: "c", Score: 10, LastSeen: "2026-11-02T00:00:00.000Z"},
		{ID: "d", Score: 30, LastSeen: "2026-10-01T00:00:00.000Z"},
	}
	sortIncidents(incs)
	var got []string
	for _, i := range incs {
		got = append(got, i.ID)
	}
	if fmt.Sprint(got) != "[d c a b]" {
		t.Fatalf("order %v", got)
	}
}
