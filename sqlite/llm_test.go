package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

func TestInvocationAuditLifecycle(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	start := testNow.Add(-time.Minute)
	inv := cortex.Invocation{ID: "llm-1", StartedAt: start, CallerSurface: cortex.SurfaceCLI, Action: "skill_assess",
		Provider: "gemini", Model: "m", Program: "gemini", IncidentID: "skill-inc-1", Tool: cortex.ToolClaude,
		Evidence: &cortex.EvidenceCounts{TotalIncidents: 2, Bundles: 1, Anchors: 3, Truncated: true}, PromptBytes: 1234,
		Status: cortex.InvocationRunning, Metadata: map[string]any{"skill_name": "verify"}, Hostname: "h", PID: 42}
	if err := db.StartInvocation(ctx, inv); err != nil {
		t.Fatal(err)
	}
	// A second start with the same id is refused (ids are unique).
	if err := db.StartInvocation(ctx, inv); err == nil {
		t.Fatal("duplicate id accepted")
	}
	out := int64(99)
	if err := db.FinishInvocation(ctx, cortex.InvocationFinish{ID: "llm-1", FinishedAt: testNow, DurationMS: 60000,
		Status: cortex.InvocationSuccess, OutputBytes: &out}); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishInvocation(ctx, cortex.InvocationFinish{ID: "nope", FinishedAt: testNow, Status: cortex.InvocationError}); cortex.ErrorCode(err) != cortex.CodeNotFound {
		t.Fatalf("finish of an unknown id: %v", err)
	}
	// Denials: started and finished with their final status.
	for i, st := range []string{cortex.InvocationDenied, cortex.InvocationRateLimited} {
		d := inv
		d.ID, d.Status, d.Action, d.StartedAt = "llm-d"+st, st, "ai_assess", start.Add(time.Duration(i+1)*time.Second)
		if err := db.StartInvocation(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	list, err := db.Invocations(ctx, cortex.InvocationParams{Limit: 10})
	if err != nil || list.Total != 3 || list.Invocations[2].ID != "llm-1" {
		t.Fatalf("list: %+v %v", list, err)
	}
	got := list.Invocations[2]
	if got.Status != cortex.InvocationSuccess || got.FinishedAt == nil || *got.DurationMS != 60000 || *got.OutputBytes != 99 ||
		got.Evidence == nil || got.Evidence.Anchors != 3 || !got.Evidence.Truncated || got.Metadata["skill_name"] != "verify" ||
		got.Hostname != "h" || got.PID != 42 || got.Tool != cortex.ToolClaude {
		t.Fatalf("row: %+v", got)
	}
	for _, c := range []struct {
		p    cortex.InvocationParams
		want int
	}{
		{cortex.InvocationParams{Action: "ai_assess", Limit: 10}, 2},
		{cortex.InvocationParams{Status: cortex.InvocationDenied, Limit: 10}, 1},
		{cortex.InvocationParams{Since: start.Add(1500 * time.Millisecond), Limit: 10}, 1},
		{cortex.InvocationParams{Limit: 1}, 1},
	} {
		l, _ := db.Invocations(ctx, c.p)
		if l.Total != c.want || (c.p.Limit == 1 && !l.Truncated) {
			t.Errorf("%+v: %d rows (truncated %v), want %d", c.p, l.Total, l.Truncated, c.want)
		}
	}
}

func TestInterruptInvocationsOfDeadProcesses(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	for _, r := range []struct {
		id, host string
		pid      int
	}{{"dead", "h", 1}, {"alive", "h", 2}, {"elsewhere", "other", 1}} {
		if err := db.StartInvocation(ctx, cortex.Invocation{ID: r.id, StartedAt: testNow, CallerSurface: "cli", Action: "a",
			Provider: "fake", Status: cortex.InvocationRunning, Hostname: r.host, PID: r.pid}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.InterruptInvocations(ctx, "h", func(inv cortex.Invocation) bool { return inv.PID == 2 })
	if err != nil || n != 1 {
		t.Fatalf("interrupted %d, %v", n, err)
	}
	list, _ := db.Invocations(ctx, cortex.InvocationParams{Limit: 10})
	status := map[string]string{}
	for _, i := range list.Invocations {
		status[i.ID] = i.Status
	}
	if status["dead"] != cortex.InvocationInterrupted || status["alive"] != cortex.InvocationRunning || status["elsewhere"] != cortex.InvocationRunning {
		t.Fatalf("statuses: %v", status)
	}
}
