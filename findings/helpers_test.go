package findings

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

// row builds a transcript row of the given role (Tool claude).
func row(id int64, role cortex.Role, text string) cortex.EvidenceRow {
	return cortex.EvidenceRow{ID: id, Timestamp: "2026-10-14T09:00:00.000Z", Tool: cortex.ToolClaude,
		SessionID: "s1", Hostname: "dev", Role: role, Severity: cortex.SevInfo, Message: text}
}

// logRow builds a non-AI log row (no tool, no role).
func logRow(id int64, text string) cortex.EvidenceRow {
	return cortex.EvidenceRow{ID: id, Timestamp: "2026-10-14T09:00:00.000Z", Hostname: "dev",
		Severity: cortex.SevError, AppName: "app", Message: text}
}

func ptr(v int64) *int64 { return &v }

// skillBundle is a skill-lens bundle for "lavra:lavra-plan" whose rows
// are the transcript after the skill.
func skillBundle(rows ...cortex.EvidenceRow) *cortex.Bundle {
	return &cortex.Bundle{
		Incident:        cortex.Incident{ID: "skill-inc-1", Lens: cortex.LensSkill, SkillName: "lavra:lavra-plan", SkillPlugin: "lavra", EventCount: 1},
		TranscriptAfter: rows,
	}
}

// abuseBundle is an abuse-lens bundle whose rows are the transcript after
// the anchors.
func abuseBundle(rows ...cortex.EvidenceRow) *cortex.Bundle {
	return &cortex.Bundle{
		Incident:        cortex.Incident{ID: "inc-1", Lens: cortex.LensAbuse, EventCount: 1},
		TranscriptAfter: rows,
	}
}

// cats lists the categories of the failure modes, in output order.
func cats(f cortex.Findings) []string {
	out := []string{}
	for _, m := range f.FailureModes {
		out = append(out, m.Category)
	}
	return out
}

// mode returns the finding of a category, or nil.
func mode(f cortex.Findings, cat string) *cortex.Finding {
	for i := range f.FailureModes {
		if f.FailureModes[i].Category == cat {
			return &f.FailureModes[i]
		}
	}
	return nil
}

// mustJSON marshals v.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkInvariants asserts what must hold for every derivation.
func checkInvariants(t testing.TB, r *Rules, b *cortex.Bundle, f cortex.Findings) {
	t.Helper()
	if f.FailureModes == nil || f.Factors == nil || f.OpenQuestions == nil {
		t.Fatalf("nil slice in %+v", f)
	}
	if len(f.FailureModes) == 0 {
		t.Fatal("no failure mode (want at least unknown)")
	}
	known := r.Categories()
	last := -1
	for _, m := range f.FailureModes {
		i := slices.Index(known, m.Category)
		if i < 0 {
			t.Fatalf("category %q not in %v", m.Category, known)
		}
		if i <= last {
			t.Fatalf("categories out of order or repeated: %v", cats(f))
		}
		last = i
		if m.EvidenceIDs == nil || m.MCPEventIDs == nil {
			t.Fatalf("nil ids in %+v", m)
		}
		if !strictlySorted(m.EvidenceIDs) || !strictlySorted(m.MCPEventIDs) {
			t.Fatalf("ids not sorted/deduped: %+v", m)
		}
		switch m.Confidence {
		case ConfidenceLow, ConfidenceMedium, ConfidenceHigh:
		default:
			t.Fatalf("confidence %q", m.Confidence)
		}
		if m.Hint == "" {
			t.Fatalf("no hint: %+v", m)
		}
		if m.Category == CategoryUnknown {
			if len(f.FailureModes) != 1 || len(m.EvidenceIDs) != 0 || m.Confidence != ConfidenceLow {
				t.Fatalf("unknown must be alone, low and without evidence: %+v", f.FailureModes)
			}
		} else if len(m.EvidenceIDs)+len(m.MCPEventIDs) == 0 {
			t.Fatalf("finding without evidence: %+v", m)
		}
	}
	for _, fa := range f.Factors {
		if fa.EvidenceIDs == nil || !strictlySorted(fa.EvidenceIDs) {
			t.Fatalf("factor ids: %+v", fa)
		}
	}
	g := r.Derive(b)
	if !reflect.DeepEqual(f, g) || mustJSON(t, f) != mustJSON(t, g) {
		t.Fatalf("not deterministic:\n%s\n%s", mustJSON(t, f), mustJSON(t, g))
	}
}

func strictlySorted(ids []int64) bool {
	return sort.SliceIsSorted(ids, func(i, j int) bool { return ids[i] < ids[j] }) && len(slices.Compact(slices.Clone(ids))) == len(ids)
}

// containsQuoted reports whether why names phrase (quoted).
func containsQuoted(why, phrase string) bool {
	return strings.Contains(why, strconv.Quote(phrase))
}

// checkPositive asserts that the bundle's single row (id 1) yields a
// low-confidence finding of cat whose Why names want.
func checkPositive(t *testing.T, r *Rules, b *cortex.Bundle, cat, want string) {
	t.Helper()
	f := r.Derive(b)
	checkInvariants(t, r, b, f)
	var msg string
	var role cortex.Role
	if rows := b.TranscriptAfter; len(rows) > 0 {
		msg, role = rows[0].Message, rows[0].Role
	}
	m := mode(f, cat)
	if m == nil {
		t.Errorf("%q (%s): want %s, got %v", msg, role, cat, cats(f))
		return
	}
	if !slices.Equal(m.EvidenceIDs, []int64{1}) || m.Confidence != ConfidenceLow {
		t.Errorf("%q: evidence %v confidence %s", msg, m.EvidenceIDs, m.Confidence)
	}
	if !containsQuoted(m.Why, want) {
		t.Errorf("%q: Why %q does not name %q", msg, m.Why, want)
	}
}
