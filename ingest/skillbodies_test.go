package ingest_test

import (
	"context"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/sqlite"
)

// TestSkillBodiesRealCorpus checks the versions the skill-body pass gives
// the real corpus's skill loads against what reading the transcripts
// shows.
func TestSkillBodiesRealCorpus(t *testing.T) {
	db, _ := teststore.Indexed(t, testcorpus.Real(t))
	ctx := context.Background()
	loads := func(name string) []sqlite.SkillLoad {
		t.Helper()
		ls, err := db.SkillLoads(ctx, []string{name}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return ls
	}
	versions := func(ls []sqlite.SkillLoad) map[string][]sqlite.SkillLoad {
		out := map[string][]sqlite.SkillLoad{}
		for _, l := range ls {
			out[l.SHA256] = append(out[l.SHA256], l)
		}
		return out
	}

	// The bundled verify skill of Claude Code 2.1.165 and 2.1.170 differ
	// (2.1.170 adds "Evidence has to reach the reader"); the re-injection
	// after compaction shows its session's body, whatever the arguments.
	v := versions(loads("verify"))
	if len(v) != 2 {
		t.Fatalf("verify: %d versions, want 2: %v", len(v), v)
	}
	for sha, ls := range v {
		sessions := map[string]bool{}
		for _, l := range ls {
			sessions[l.Session] = true
		}
		if len(sessions) != 1 {
			t.Errorf("verify version %s spans sessions %v", sha[:8], sessions)
		}
		if len(ls) == 2 && (ls[0].Kind != cortex.SkillClaudeBody || ls[1].Kind != cortex.SkillClaudeInvoked) {
			t.Errorf("verify version %s: loads %s, %s; want the body and its re-injection", sha[:8], ls[0].Kind, ls[1].Kind)
		}
	}
	// marvin changed between April 30 and May 7 (today and memory added).
	if n := len(versions(loads("marvin:marvin"))); n != 2 {
		t.Errorf("marvin: %d versions, want 2", n)
	}
	// The same SKILL.md as a Codex <skill> block and as printed by sed is
	// one version (front matter is not part of it).
	if v := versions(loads("coordinator")); len(v) != 1 {
		t.Errorf("coordinator: %d versions, want 1 (block and reads)", len(v))
	}
	// Five reads of using-entire in three sessions print the same file.
	if v := versions(loads("using-entire")); len(v) != 1 {
		t.Errorf("using-entire: %d versions, want 1", len(v))
	}
	// ce-work was read in two parts (1,240 then 241,520): the second read
	// completes the body.
	cw := loads("compound-engineering:ce-work")
	if len(cw) != 2 {
		t.Fatalf("ce-work: %d loads", len(cw))
	}
	bodies, err := db.SkillBodies(ctx, []string{cw[0].SHA256, cw[1].SHA256}, true)
	if err != nil {
		t.Fatal(err)
	}
	first, joined := bodies[cw[0].SHA256], bodies[cw[1].SHA256]
	if first.Complete || !joined.Complete || joined.Lines <= first.Lines || joined.Body[:len(first.Body)] != first.Body {
		t.Errorf("ce-work: first read %d lines complete=%v, joined %d lines complete=%v", first.Lines, first.Complete,
			joined.Lines, joined.Complete)
	}

	// Nothing is left to do; a recompute finds the same versions.
	res, err := ingest.ResolveSkillBodies(ctx, db, ingest.SkillBodyOptions{})
	if err != nil || res.Loads != 0 {
		t.Errorf("second pass: %+v, %v; want nothing pending", res, err)
	}
	b, err := ingest.Backfill(ctx, db, ingest.BackfillOptions{Kinds: []string{"bodies"}, Hostname: "testhost"})
	if err != nil || b.SkillBodies == nil || b.SkillBodies.Bodies != 46 || b.Scanned != 0 {
		t.Errorf("backfill bodies: %+v %+v, %v", b, b.SkillBodies, err)
	}
	if again := versions(loads("verify")); len(again) != 2 {
		t.Errorf("verify after recompute: %d versions", len(again))
	}
}
