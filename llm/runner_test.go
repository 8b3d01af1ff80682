package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// memAudit keeps audit rows in memory.
type memAudit struct {
	mu        sync.Mutex
	rows      map[string]*cortex.Invocation
	order     []string
	failStart bool
	failEnd   bool
}

func newMemAudit() *memAudit { return &memAudit{rows: map[string]*cortex.Invocation{}} }

func (a *memAudit) StartInvocation(_ context.Context, inv cortex.Invocation) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failStart {
		return cortex.Errorf(cortex.CodeUnavailable, "audit down")
	}
	if _, dup := a.rows[inv.ID]; dup {
		return fmt.Errorf("duplicate id %s", inv.ID)
	}
	a.rows[inv.ID] = &inv
	a.order = append(a.order, inv.ID)
	return nil
}

func (a *memAudit) ReserveInvocation(_ context.Context, since time.Time, decide func([]cortex.Invocation) cortex.Invocation) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failStart {
		return cortex.Errorf(cortex.CodeUnavailable, "audit down")
	}
	var hist []cortex.Invocation
	for _, id := range a.order {
		if r := a.rows[id]; !r.StartedAt.Before(since) {
			hist = append(hist, *r)
		}
	}
	sort.SliceStable(hist, func(i, j int) bool { return hist[i].StartedAt.Before(hist[j].StartedAt) })
	inv := decide(hist)
	a.rows[inv.ID] = &inv
	a.order = append(a.order, inv.ID)
	return nil
}

func (a *memAudit) FinishInvocation(_ context.Context, f cortex.InvocationFinish) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.failEnd {
		return cortex.Errorf(cortex.CodeUnavailable, "audit down")
	}
	r, ok := a.rows[f.ID]
	if !ok {
		return cortex.Errorf(cortex.CodeNotFound, "no %s", f.ID)
	}
	r.FinishedAt, r.DurationMS, r.Status, r.Error = &f.FinishedAt, &f.DurationMS, f.Status, f.Error
	r.OutputBytes = f.OutputBytes
	return nil
}

func (a *memAudit) InterruptInvocations(context.Context, string, func(cortex.Invocation) bool) (int64, error) {
	return 0, nil
}

func (a *memAudit) AttachProvider(_ context.Context, id string, pid int, dir string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if inv, ok := a.rows[id]; ok {
		inv.ProviderPID, inv.ProviderDir = pid, dir
	}
	return nil
}

func (a *memAudit) get(t *testing.T, id string) cortex.Invocation {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.rows[id]
	if !ok {
		t.Fatalf("no audit row %q", id)
	}
	return *r
}

func (a *memAudit) statuses() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := map[string]int{}
	for _, r := range a.rows {
		m[r.Status]++
	}
	return m
}

// funcProvider runs a function.
type funcProvider struct {
	calls atomic.Int32
	run   func(ctx context.Context, prompt string, stream io.Writer) (string, error)
}

func (p *funcProvider) Name() string    { return "fake" }
func (p *funcProvider) Program() string { return "/bin/fake" }
func (p *funcProvider) Model() string   { return "fake-model" }
func (p *funcProvider) Run(ctx context.Context, prompt string, stream io.Writer) (string, error) {
	p.calls.Add(1)
	return p.run(ctx, prompt, stream)
}

func answer(s string) *funcProvider {
	return &funcProvider{run: func(_ context.Context, _ string, w io.Writer) (string, error) {
		_, _ = io.WriteString(w, s)
		return s, nil
	}}
}

func failing(msg string) *funcProvider {
	return &funcProvider{run: func(context.Context, string, io.Writer) (string, error) { return "", errors.New(msg) }}
}

// blocking runs until release is closed (or ctx ends), signalling started.
func blocking(started chan<- struct{}, release <-chan struct{}) *funcProvider {
	return &funcProvider{run: func(ctx context.Context, _ string, _ io.Writer) (string, error) {
		started <- struct{}{}
		select {
		case <-release:
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}}
}

func testRunner(t *testing.T, mutate func(*Config)) (*Runner, *memAudit, *fakeClock) {
	t.Helper()
	cfg := DefaultConfig()
	if mutate != nil {
		mutate(&cfg)
	}
	audit, clock := newMemAudit(), &fakeClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	r, err := NewRunner(context.Background(), cfg, audit, WithClock(clock), WithHost("testhost", 4242))
	if err != nil {
		t.Fatal(err)
	}
	return r, audit, clock
}

func spec(action string) Spec {
	return Spec{Surface: cortex.SurfaceTest, Action: action, IncidentID: "skill-inc-1", Prompt: "assess this"}
}

func wantDenied(t *testing.T, audit *memAudit, res Result, err error, status, code string, fragment string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a %s denial, got success", status)
	}
	if got := cortex.ErrorCode(err); string(got) != code {
		t.Fatalf("code %q, want %q (%v)", got, code, err)
	}
	if !strings.Contains(err.Error(), fragment) {
		t.Fatalf("error %q lacks %q", err, fragment)
	}
	row := audit.get(t, res.InvocationID)
	if row.Status != status || row.FinishedAt == nil || !strings.Contains(row.Error, fragment) {
		t.Fatalf("audit row %+v, want status %s, finished, error with %q", row, status, fragment)
	}
	if row.Hostname != "testhost" || row.PID != 4242 {
		t.Fatalf("host/pid %s/%d", row.Hostname, row.PID)
	}
}

func TestDisabledRunnerDeniesAndAudits(t *testing.T) {
	r, audit, _ := testRunner(t, func(c *Config) { c.Enabled = false })
	p := answer("x")
	res, err := r.Run(context.Background(), spec(ActionSkillAssess), p)
	wantDenied(t, audit, res, err, cortex.InvocationDisabled, "forbidden", "disabled")
	if p.calls.Load() != 0 {
		t.Fatal("provider ran while disabled")
	}
}

func TestKillSwitchFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		v       string
		want    bool
		wantErr bool
	}{{"false", false, false}, {"0", false, false}, {"OFF", false, false}, {"true", true, false}, {"", true, false}, {"maybe", true, true}} {
		cfg := DefaultConfig()
		err := cfg.ApplyEnv(func(string) (string, bool) { return tc.v, true })
		if (err != nil) != tc.wantErr || cfg.Enabled != tc.want {
			t.Errorf("CORTEX_LLM_ENABLED=%q: enabled %v err %v", tc.v, cfg.Enabled, err)
		}
	}
}

func TestActionAndBackgroundGating(t *testing.T) {
	r, audit, _ := testRunner(t, func(c *Config) {
		c.Actions = map[string]ActionConfig{ActionMCPAssess: {Enabled: new(false)}, ActionSkillAssess: {Enabled: new(true)}}
	})
	res, err := r.Run(context.Background(), spec(ActionMCPAssess), answer("x"))
	wantDenied(t, audit, res, err, cortex.InvocationDisabled, "forbidden", "mcp_assess")
	if _, err := r.Run(context.Background(), spec(ActionSkillAssess), answer("x")); err != nil {
		t.Fatalf("enabled action: %v", err)
	}
	bg := spec(ActionAbuseAssess)
	bg.Surface = cortex.SurfaceBackground
	res, err = r.Run(context.Background(), bg, answer("x"))
	wantDenied(t, audit, res, err, cortex.InvocationDisabled, "forbidden", "background")
	res, err = r.Run(context.Background(), spec(ActionBackground), answer("x"))
	wantDenied(t, audit, res, err, cortex.InvocationDisabled, "forbidden", "background")

	r2, _, _ := testRunner(t, func(c *Config) { c.BackgroundEnabled = true })
	if _, err := r2.Run(context.Background(), bg, answer("x")); err != nil {
		t.Fatalf("background enabled: %v", err)
	}
}

func TestPromptOverLimitIsRejectedBeforeTheProvider(t *testing.T) {
	r, audit, _ := testRunner(t, func(c *Config) { c.MaxPromptBytes = 10 })
	p := answer("x")
	s := spec(ActionSkillAssess)
	s.Prompt = strings.Repeat("a", 11)
	res, err := r.Run(context.Background(), s, p)
	wantDenied(t, audit, res, err, cortex.InvocationDenied, "invalid", "prompt_too_large")
	if p.calls.Load() != 0 {
		t.Fatal("provider ran with an oversized prompt")
	}
	if row := audit.get(t, res.InvocationID); row.PromptBytes != 11 {
		t.Fatalf("prompt_bytes %d", row.PromptBytes)
	}
}

func TestConcurrencyLimitsRejectWithoutQueueing(t *testing.T) {
	for _, tc := range []struct {
		name              string
		global, perAction int
		second            string
		fragment          string
	}{
		{"global", 1, 1, ActionAbuseAssess, "global_concurrency_limited"},
		{"per action", 2, 1, ActionSkillAssess, "action_concurrency_limited"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, audit, _ := testRunner(t, func(c *Config) { c.MaxConcurrent, c.MaxPerActionConcurrent = tc.global, tc.perAction })
			started, release := make(chan struct{}, 1), make(chan struct{})
			done := make(chan error)
			go func() {
				_, err := r.Run(context.Background(), spec(ActionSkillAssess), blocking(started, release))
				done <- err
			}()
			<-started
			res, err := r.Run(context.Background(), spec(tc.second), answer("x"))
			wantDenied(t, audit, res, err, cortex.InvocationDenied, "busy", tc.fragment)
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			// The slot is free again.
			if _, err := r.Run(context.Background(), spec(tc.second), answer("x")); err != nil {
				t.Fatalf("after release: %v", err)
			}
		})
	}
}

func TestRateLimitsSlideWithTheClock(t *testing.T) {
	r, audit, clock := testRunner(t, func(c *Config) { c.MaxPerMinute, c.MaxPerHour = 3, 5 })
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := r.Run(ctx, spec(ActionSkillAssess), answer("x")); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		clock.Advance(10 * time.Second)
	}
	// Calls at 0, 10, 20 s; now 30 s: the fourth waits until 60 s.
	res, err := r.Run(ctx, spec(ActionSkillAssess), answer("x"))
	wantDenied(t, audit, res, err, cortex.InvocationRateLimited, "busy", "rate_limited_per_minute")
	if !strings.Contains(err.Error(), "retry after 30s") {
		t.Fatalf("retry hint: %v", err)
	}
	// Another action has its own window.
	if _, err := r.Run(ctx, spec(ActionAbuseAssess), answer("x")); err != nil {
		t.Fatalf("other action: %v", err)
	}
	clock.Advance(30 * time.Second) // the call at 0 s leaves the window
	if _, err := r.Run(ctx, spec(ActionSkillAssess), answer("x")); err != nil {
		t.Fatalf("after the window slid: %v", err)
	}
	clock.Advance(2 * time.Minute)
	if _, err := r.Run(ctx, spec(ActionSkillAssess), answer("x")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	res, err = r.Run(ctx, spec(ActionSkillAssess), answer("x"))
	wantDenied(t, audit, res, err, cortex.InvocationRateLimited, "busy", "rate_limited_per_hour")
	clock.Advance(time.Hour)
	if _, err := r.Run(ctx, spec(ActionSkillAssess), answer("x")); err != nil {
		t.Fatalf("after an hour: %v", err)
	}
	// Denied calls never consumed a slot: 3+1+1 ok before the hour, the
	// rest denied.
	if got := audit.statuses(); got[cortex.InvocationSuccess] != 7 || got[cortex.InvocationRateLimited] != 2 {
		t.Fatalf("statuses %v", got)
	}
}

func TestCircuitOpensAfterThresholdAndProbesOnceHalfOpen(t *testing.T) {
	r, audit, clock := testRunner(t, func(c *Config) { c.FailureThreshold, c.CooldownSecs, c.MaxPerMinute, c.MaxPerHour = 3, 300, 100, 100 })
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		res, err := r.Run(ctx, spec(ActionSkillAssess), failing("model overloaded"))
		if err == nil || audit.get(t, res.InvocationID).Status != cortex.InvocationError {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	p := answer("x")
	clock.Advance(299*time.Second + 100*time.Millisecond)
	res, err := r.Run(ctx, spec(ActionSkillAssess), p)
	wantDenied(t, audit, res, err, cortex.InvocationCircuitOpen, "busy", "circuit_open")
	if !strings.Contains(err.Error(), "retry after 1s") { // 0.9 s rounds up
		t.Fatalf("retry hint: %v", err)
	}
	// Other actions are unaffected.
	if _, err := r.Run(ctx, spec(ActionAbuseAssess), answer("x")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	// Half-open: one probe runs; a concurrent call is refused meanwhile.
	r.cfg.MaxConcurrent, r.cfg.MaxPerActionConcurrent = 5, 5
	started, release := make(chan struct{}, 1), make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := r.Run(ctx, spec(ActionSkillAssess), &funcProvider{run: func(ctx context.Context, _ string, _ io.Writer) (string, error) {
			started <- struct{}{}
			<-release
			return "", errors.New("still broken")
		}})
		done <- err
	}()
	<-started
	res, err = r.Run(ctx, spec(ActionSkillAssess), p)
	wantDenied(t, audit, res, err, cortex.InvocationCircuitOpen, "busy", "probe")
	close(release)
	if err := <-done; err == nil {
		t.Fatal("probe should fail")
	}
	// The failed probe reopens the circuit for a full cooldown.
	clock.Advance(299 * time.Second)
	res, err = r.Run(ctx, spec(ActionSkillAssess), p)
	wantDenied(t, audit, res, err, cortex.InvocationCircuitOpen, "busy", "circuit_open")
	clock.Advance(2 * time.Second)
	if _, err := r.Run(ctx, spec(ActionSkillAssess), p); err != nil {
		t.Fatalf("successful probe: %v", err)
	}
	// Closed again: one failure does not reopen it.
	if _, err := r.Run(ctx, spec(ActionSkillAssess), failing("x")); err == nil {
		t.Fatal("want failure")
	}
	if _, err := r.Run(ctx, spec(ActionSkillAssess), p); err != nil {
		t.Fatalf("closed circuit: %v", err)
	}
	if p.calls.Load() != 2 {
		t.Fatalf("provider ran %d times, want 2", p.calls.Load())
	}
}

func TestTimeoutAndCancellation(t *testing.T) {
	r, audit, _ := testRunner(t, func(c *Config) { c.TimeoutSecs, c.FailureThreshold, c.MaxPerMinute = 1, 1, 100 })
	slow := &funcProvider{run: func(ctx context.Context, _ string, _ io.Writer) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}}
	// Cancellation by the caller is audited and does not feed the breaker.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	res, err := r.Run(ctx, spec(ActionSkillAssess), slow)
	if err == nil || audit.get(t, res.InvocationID).Status != cortex.InvocationCancelled {
		t.Fatalf("cancel: %v %+v", err, audit.get(t, res.InvocationID))
	}
	start := time.Now()
	res, err = r.Run(context.Background(), spec(ActionSkillAssess), slow)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out after 1s") {
		t.Fatalf("timeout: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("timeout took %v", d)
	}
	row := audit.get(t, res.InvocationID)
	if row.Status != cortex.InvocationTimeout || row.DurationMS == nil || *row.DurationMS < 900 {
		t.Fatalf("timeout row %+v", row)
	}
	// Threshold 1: the timeout opened the circuit.
	res, err = r.Run(context.Background(), spec(ActionSkillAssess), answer("x"))
	wantDenied(t, audit, res, err, cortex.InvocationCircuitOpen, "busy", "circuit_open")
}

func TestSuccessfulRunIsAuditedWithTimingAndStreamed(t *testing.T) {
	r, audit, _ := testRunner(t, nil)
	var out bytes.Buffer
	s := spec(ActionSkillAssess)
	s.Stream = &out
	s.Tool, s.Project, s.Session = cortex.ToolClaude, "cortex", "sess-1"
	s.Evidence = cortex.EvidenceCounts{TotalIncidents: 3, Bundles: 1, Anchors: 4, EvidenceBytes: 99}
	s.Metadata = map[string]any{"skill_name": "run"}
	res, err := r.Run(context.Background(), s, answer("# Assessment\nfine"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "# Assessment\nfine" || out.String() != res.Output || res.OutputBytes != len(res.Output) {
		t.Fatalf("result %+v, streamed %q", res, out.String())
	}
	row := audit.get(t, res.InvocationID)
	if row.Status != cortex.InvocationSuccess || row.FinishedAt == nil || row.DurationMS == nil || *row.OutputBytes != int64(len(res.Output)) ||
		row.Provider != "fake" || row.Model != "fake-model" || row.Program != "/bin/fake" || row.Action != ActionSkillAssess ||
		row.CallerSurface != cortex.SurfaceTest || row.IncidentID != "skill-inc-1" || row.Tool != cortex.ToolClaude ||
		row.Evidence.Anchors != 4 || row.PromptBytes != int64(len(s.Prompt)) || row.Metadata["skill_name"] != "run" {
		t.Fatalf("audit row %+v", row)
	}
	if !strings.HasPrefix(row.ID, "llm-20261130T120000.000000-") || len(row.ID) != len("llm-20261130T120000.000000-")+16 {
		t.Fatalf("id %q", row.ID)
	}
}

func TestErrorsAreRedactedBeforeTheyAreBounded(t *testing.T) {
	r, audit, _ := testRunner(t, func(c *Config) { c.MaxPerMinute = 100 })
	secret := "sk-ant-api03-" + strings.Repeat("Q", 60)
	for _, msg := range []string{
		"provider said: token " + secret + " rejected",
		// The secret straddles the 2048-byte bound.
		strings.Repeat("x", MaxErrorBytes-20) + " " + secret,
	} {
		res, err := r.Run(context.Background(), spec(ActionSkillAssess), failing(msg))
		if err == nil {
			t.Fatal("want error")
		}
		row := audit.get(t, res.InvocationID)
		for _, s := range []string{err.Error(), row.Error} {
			if strings.Contains(s, "QQQQQQQQ") || strings.Contains(s, "sk-ant-api03-Q") {
				t.Fatalf("secret leaked: %q", s)
			}
		}
		if len(row.Error) > MaxErrorBytes {
			t.Fatalf("error has %d bytes", len(row.Error))
		}
	}
}

func TestMetadataIsRedactedAtEveryDepthAndBounded(t *testing.T) {
	r, audit, _ := testRunner(t, nil)
	s := spec(ActionSkillAssess)
	s.Metadata = map[string]any{"skill_name": "run", "nested": map[string]any{"deeper": []any{"Bearer abcdefghijklmnopqrstuvwxyz0123456789"}},
		"bare": "ghp_" + strings.Repeat("a", 36)}
	res, err := r.Run(context.Background(), s, answer("x"))
	if err != nil {
		t.Fatal(err)
	}
	row := audit.get(t, res.InvocationID)
	if got := fmt.Sprint(row.Metadata); strings.Contains(got, "abcdefghijklmnop") || strings.Contains(got, "aaaaaaaaaaaa") || !strings.Contains(got, "run") {
		t.Fatalf("metadata %v", got)
	}
	s.Metadata = map[string]any{"big": strings.Repeat("y", MaxMetadataBytes)}
	res, err = r.Run(context.Background(), s, answer("x"))
	if err != nil {
		t.Fatal(err)
	}
	row = audit.get(t, res.InvocationID)
	if row.Metadata["truncated"] != true || row.Metadata["max_bytes"] != MaxMetadataBytes {
		t.Fatalf("oversized metadata %v", row.Metadata)
	}
}

func TestOutputIsCappedInBytesOnARuneBoundary(t *testing.T) {
	r, audit, _ := testRunner(t, func(c *Config) { c.MaxOutputBytes = 10 })
	var out bytes.Buffer
	s := spec(ActionSkillAssess)
	s.Stream = &out
	res, err := r.Run(context.Background(), s, answer("ééééééé")) // 14 bytes
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "ééééé" || !res.OutputTruncated || res.OutputBytes != 10 || out.String() != "ééééé" {
		t.Fatalf("output %q (%d, %v), streamed %q", res.Output, res.OutputBytes, res.OutputTruncated, out.String())
	}
	if row := audit.get(t, res.InvocationID); *row.OutputBytes != 10 {
		t.Fatalf("output_bytes %d", *row.OutputBytes)
	}
}

func TestDryRunNeverInvokesTheProvider(t *testing.T) {
	r, audit, _ := testRunner(t, func(c *Config) { c.Enabled = false; c.MaxPromptBytes = 100 })
	p := answer("x")
	s := spec(ActionSkillAssess)
	s.Prompt = strings.Repeat("é", 300)
	s.Evidence = cortex.EvidenceCounts{Bundles: 1, Anchors: 2}
	dr, err := r.DryRun(context.Background(), s, p)
	if err != nil {
		t.Fatal(err)
	}
	if p.calls.Load() != 0 || dr.PromptBytes != 600 || !dr.WouldExceedPromptLimit || len(dr.PromptPreview) != PreviewBytes || dr.Evidence.Anchors != 2 {
		t.Fatalf("dry run %+v", dr)
	}
	if row := audit.get(t, dr.InvocationID); row.Status != cortex.InvocationDryRun || row.FinishedAt == nil || row.Model != "fake-model" {
		t.Fatalf("row %+v", row)
	}
}

func TestAuditFailuresStopOrDiscard(t *testing.T) {
	r, audit, _ := testRunner(t, func(c *Config) { c.MaxPerMinute = 100 })
	p := answer("x")
	audit.failStart = true
	if _, err := r.Run(context.Background(), spec(ActionSkillAssess), p); err == nil || p.calls.Load() != 0 {
		t.Fatalf("no start row, provider ran: %v", err)
	}
	audit.failStart, audit.failEnd = false, true
	res, err := r.Run(context.Background(), spec(ActionSkillAssess), p)
	if err == nil || res.Output != "" {
		t.Fatalf("unfinished audit must discard the answer: %+v %v", res, err)
	}
	audit.failEnd = false
	// Slots were released.
	if _, err := r.Run(context.Background(), spec(ActionSkillAssess), p); err != nil {
		t.Fatal(err)
	}
}

func TestConfigValidation(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"max_concurrent":       func(c *Config) { c.MaxConcurrent = 0 },
		"timeout_secs":         func(c *Config) { c.TimeoutSecs = -1 },
		"max_output_bytes":     func(c *Config) { c.MaxOutputBytes = 0 },
		"cooldown_secs":        func(c *Config) { c.CooldownSecs = -5 },
		"provider":             func(c *Config) { c.Provider = "openai" },
		"unknown action":       func(c *Config) { c.Actions = map[string]ActionConfig{"skil_assess": {}} },
		"forbidden gemini arg": func(c *Config) { c.Gemini.Args = []string{"--yolo"} },
	} {
		cfg := DefaultConfig()
		mutate(&cfg)
		if err := cfg.Validate(); err == nil || cortex.ErrorCode(err) != cortex.CodeInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}
