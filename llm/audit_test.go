package llm_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/llm"
	"github.com/cortexhq/cortex/sqlite"
)

type gate struct {
	started chan struct{}
	release chan struct{}
	calls   atomic.Int32
}

func (g *gate) Name() string    { return "fake" }
func (g *gate) Program() string { return "" }
func (g *gate) Model() string   { return "m" }
func (g *gate) Run(ctx context.Context, _ string, w io.Writer) (string, error) {
	g.calls.Add(1)
	g.started <- struct{}{}
	select {
	case <-g.release:
		_, _ = io.WriteString(w, "ok")
		return "ok", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func openStore(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cortex.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestStormIsRejectedNotQueuedAndFullyAudited sends 20 concurrent calls at
// a runner that allows two at a time: two run, eighteen are denied at
// once, and the store holds twenty finished rows.
func TestStormIsRejectedNotQueuedAndFullyAudited(t *testing.T) {
	db := openStore(t)
	cfg := llm.DefaultConfig()
	cfg.MaxConcurrent, cfg.MaxPerActionConcurrent, cfg.MaxPerMinute, cfg.MaxPerHour = 2, 2, 100, 100
	r, err := llm.NewRunner(context.Background(), cfg, db)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{started: make(chan struct{}, 20), release: make(chan struct{})}
	var wg sync.WaitGroup
	var denied, ok atomic.Int32
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := r.Run(context.Background(), llm.Spec{Surface: cortex.SurfaceTest, Action: llm.ActionSkillAssess, Prompt: "p"}, g)
			switch {
			case err == nil:
				ok.Add(1)
			case cortex.ErrorCode(err) == cortex.CodeBusy:
				denied.Add(1)
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}()
	}
	// Denials return without waiting for the running calls.
	deadline := time.Now().Add(10 * time.Second)
	for denied.Load() < 18 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if denied.Load() != 18 || g.calls.Load() != 2 {
		t.Fatalf("%d denied, %d running; want 18 and 2", denied.Load(), g.calls.Load())
	}
	close(g.release)
	wg.Wait()
	list, err := db.Invocations(context.Background(), cortex.InvocationParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, inv := range list.Invocations {
		counts[inv.Status]++
		if inv.FinishedAt == nil {
			t.Errorf("row %s not finished", inv.ID)
		}
	}
	if list.Total != 20 || counts[cortex.InvocationSuccess] != 2 || counts[cortex.InvocationDenied] != 18 {
		t.Fatalf("audit: %d rows %v", list.Total, counts)
	}
}

// TestRunningRowIsWrittenBeforeTheProviderStarts checks the audit is
// durable while the call runs, and that a row left running by a dead
// process becomes interrupted when the next runner starts.
func TestRunningRowIsWrittenBeforeTheProviderStarts(t *testing.T) {
	db := openStore(t)
	ctx := context.Background()
	cfg := llm.DefaultConfig()
	r, err := llm.NewRunner(ctx, cfg, db, llm.WithHost("h1", 111), llm.WithProcessCheck(func(int) bool { return true }))
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{started: make(chan struct{}, 1), release: make(chan struct{})}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		_, err := r.Run(runCtx, llm.Spec{Action: llm.ActionAbuseAssess, Prompt: "p"}, g)
		done <- err
	}()
	<-g.started
	list, err := db.Invocations(ctx, cortex.InvocationParams{Limit: 10})
	if err != nil || list.Total != 1 || list.Invocations[0].Status != cortex.InvocationRunning {
		t.Fatalf("while running: %+v %v", list, err)
	}
	// A new process on the same host whose check says pid 111 is gone
	// (as after a crash) marks the row interrupted; pid 222 is its own.
	if _, err := llm.NewRunner(ctx, cfg, db, llm.WithHost("h1", 222), llm.WithProcessCheck(func(pid int) bool { return pid != 111 })); err != nil {
		t.Fatal(err)
	}
	list, _ = db.Invocations(ctx, cortex.InvocationParams{Limit: 10})
	if list.Invocations[0].Status != cortex.InvocationInterrupted {
		t.Fatalf("after restart: %+v", list.Invocations[0])
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("want cancellation")
	}
	// The cancelled run still completes its own row.
	list, _ = db.Invocations(ctx, cortex.InvocationParams{Limit: 10})
	if got := list.Invocations[0]; got.Status != cortex.InvocationCancelled || got.FinishedAt == nil {
		t.Fatalf("after cancel: %+v", got)
	}
}

type instant struct{}

func (instant) Name() string    { return "fake" }
func (instant) Program() string { return "" }
func (instant) Model() string   { return "m" }
func (instant) Run(context.Context, string, io.Writer) (string, error) {
	return "ok", nil
}

// TestLimitsHoldAcrossProcesses runs two runners (two processes) on one
// store: the rate window and the concurrency cap are shared, because they
// are read from the audit inside the transaction that records a call.
func TestLimitsHoldAcrossProcesses(t *testing.T) {
	db := openStore(t)
	ctx := context.Background()
	cfg := llm.DefaultConfig()
	alive := llm.WithProcessCheck(func(int) bool { return true })
	a, err := llm.NewRunner(ctx, cfg, db, llm.WithHost("h", 1001), alive)
	if err != nil {
		t.Fatal(err)
	}
	b, err := llm.NewRunner(ctx, cfg, db, llm.WithHost("h", 1002), alive)
	if err != nil {
		t.Fatal(err)
	}
	sp := llm.Spec{Action: llm.ActionSkillAssess, Prompt: "p"}
	// Process a runs one call and holds it: b is refused (global cap 1).
	g := &gate{started: make(chan struct{}, 1), release: make(chan struct{})}
	done := make(chan error)
	go func() {
		_, err := a.Run(ctx, sp, g)
		done <- err
	}()
	<-g.started
	if _, err := b.Run(ctx, llm.Spec{Action: llm.ActionAbuseAssess, Prompt: "p"}, instant{}); err == nil ||
		!strings.Contains(err.Error(), "global_concurrency_limited") {
		t.Fatalf("second process during a running call: %v", err)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Two more calls in b: three in the minute across both processes.
	for i := 0; i < 2; i++ {
		if _, err := b.Run(ctx, sp, instant{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, err := a.Run(ctx, sp, instant{}); err == nil || !strings.Contains(err.Error(), "rate_limited_per_minute") {
		t.Fatalf("fourth call in a minute across processes: %v", err)
	}
	// A restarted process sees the same window.
	c, err := llm.NewRunner(ctx, cfg, db, llm.WithHost("h", 1003), alive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx, sp, instant{}); err == nil || !strings.Contains(err.Error(), "rate_limited_per_minute") {
		t.Fatalf("after restart: %v", err)
	}
}

// okProvider answers at once.
type okProvider struct{}

func (okProvider) Name() string    { return "fake" }
func (okProvider) Program() string { return "" }
func (okProvider) Model() string   { return "m" }
func (okProvider) Run(context.Context, string, io.Writer) (string, error) {
	return "ok", nil
}
