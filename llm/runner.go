// Package llm is the one path through which Cortex calls a language model.
// A Runner applies every guard — kill switch, per-action enablement,
// background gating, prompt cap, circuit breaker, sliding rate limits,
// concurrency caps, timeout with process-group kill, output cap — and
// audits every attempt (denials and dry runs included) in
// llm_invocations. Providers (the Gemini CLI) only run prompts.
package llm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/proc"
	"github.com/cortexhq/cortex/redact"
)

// Bounds of what the audit keeps.
const (
	// MaxErrorBytes bounds an audited (and returned) error message.
	MaxErrorBytes = 2048
	// MaxMetadataBytes bounds an invocation's metadata JSON.
	MaxMetadataBytes = 4096
	// PreviewBytes is the length of a dry run's prompt preview.
	PreviewBytes = 500
)

// Audit stores invocation records (the sqlite store).
type Audit interface {
	// StartInvocation writes a record.
	StartInvocation(ctx context.Context, inv cortex.Invocation) error
	// ReserveInvocation calls decide with the calls admitted since (at
	// least every row whose status is admitted; oldest first) and writes
	// the record it returns, atomically with
	// respect to every other reservation, in any process.
	ReserveInvocation(ctx context.Context, since time.Time, decide func([]cortex.Invocation) cortex.Invocation) error
	// FinishInvocation completes a record.
	FinishInvocation(ctx context.Context, f cortex.InvocationFinish) error
	// InterruptInvocations marks records of host left running that
	// running reports over as interrupted.
	InterruptInvocations(ctx context.Context, host string, running func(cortex.Invocation) bool) (int64, error)
	// AttachProvider records the process group and credential folder of
	// a running invocation's provider.
	AttachProvider(ctx context.Context, id string, pid int, dir string) error
}

// Clock tells the time; tests inject a fake one so breaker and rate tests
// never sleep.
type Clock interface{ Now() time.Time }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Spec describes one invocation.
type Spec struct {
	// Surface is the caller (cortex.SurfaceCLI, …); Action the action name
	// (ActionSkillAssess, …), used for enablement, limits and breaker.
	Surface string
	Action  string
	// What the prompt is about (audit only).
	IncidentID string
	Tool       cortex.Tool
	Project    string
	Session    string
	Evidence   cortex.EvidenceCounts
	// Prompt is the whole prompt.
	Prompt string
	// Metadata holds small tags (skill name, MCP server); never prompts or
	// evidence. It is redacted and bounded before it is stored.
	Metadata map[string]any
	// Stream receives the answer as it arrives (may be nil). At most
	// MaxOutputBytes are written to it.
	Stream io.Writer
}

// Result is the outcome of a run.
type Result struct {
	InvocationID    string        `json:"invocation_id"`
	Output          string        `json:"output"`
	OutputBytes     int           `json:"output_bytes"`
	OutputTruncated bool          `json:"output_truncated"`
	Duration        time.Duration `json:"-"`
}

// DryRunResult is what a dry run reports.
type DryRunResult struct {
	InvocationID           string                `json:"invocation_id"`
	PromptBytes            int                   `json:"prompt_bytes"`
	Evidence               cortex.EvidenceCounts `json:"evidence_counts"`
	WouldExceedPromptLimit bool                  `json:"would_exceed_prompt_limit"`
	PromptPreview          string                `json:"prompt_preview"`
}

// Option configures a Runner.
type Option func(*Runner)

// WithClock replaces the system clock (tests).
func WithClock(c Clock) Option { return func(r *Runner) { r.clock = c } }

// WithHost sets the host and process id recorded on every row (default:
// the hostname and os.Getpid()).
func WithHost(host string, pid int) Option {
	return func(r *Runner) { r.host, r.pid = host, pid }
}

// WithProcessCheck replaces the liveness check used to find rows left
// running by dead processes (tests).
func WithProcessCheck(alive func(pid int) bool) Option { return func(r *Runner) { r.alive = alive } }

// WithGroupCheck replaces the checks of provider process groups left by
// dead processes: alive, and kill (which must report whether it signalled
// the group) (tests).
func WithGroupCheck(alive func(pgid int) bool, kill func(pgid int, envEntry string) bool) Option {
	return func(r *Runner) { r.groupAlive, r.killOrphan = alive, kill }
}

// Runner guards and audits LLM invocations. It is safe for concurrent use.
// It keeps no limit state of its own: rate windows, failure streaks and
// calls in flight are read from the audit when a call is admitted, inside
// the write transaction that records it, so the limits hold across every
// process sharing the store (a CLI run and a server alike) and survive
// restarts.
type Runner struct {
	cfg        Config
	audit      Audit
	clock      Clock
	red        *redact.Redactor
	host       string
	pid        int
	alive      func(pid int) bool
	groupAlive func(pgid int) bool
	killOrphan func(pgid int, envEntry string) bool
	// orphanDirs are credential folders of providers left running by dead
	// processes and still alive at start (not swept).
	orphanDirs map[string]bool
	// live holds the ids of this process's calls in flight (a row whose
	// finish could not be written must not hold a slot forever).
	mu   sync.Mutex
	live map[string]bool
}

// NewRunner validates cfg and returns a runner writing to audit. It
// recovers from processes that died mid-call (killed, even by SIGKILL):
// a provider they left running is killed when it is provably theirs and
// otherwise counted against the limits while it lives; rows left running
// are marked interrupted once nothing of them runs; credential folders
// they left are removed.
func NewRunner(ctx context.Context, cfg Config, audit Audit, opts ...Option) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg, audit: audit, clock: systemClock{}, red: redact.New(), pid: os.Getpid(), alive: proc.Alive,
		groupAlive: proc.GroupAlive, killOrphan: proc.KillOwnedGroup, live: map[string]bool{}, orphanDirs: map[string]bool{}}
	r.host, _ = os.Hostname()
	for _, o := range opts {
		o(r)
	}
	if r.host == "" {
		r.host = "unknown"
	}
	if _, err := audit.InterruptInvocations(ctx, r.host, r.stillRunning); err != nil {
		return nil, fmt.Errorf("recover the LLM audit: %w", err)
	}
	r.sweepProviderDirs()
	return r, nil
}

// denial is a refusal decided before any provider starts.
type denial struct {
	status string
	err    *cortex.Error
}

// Run runs spec.Prompt through p under every guard, in this order: kill
// switch, action enablement and background gating, prompt cap, circuit
// breaker, per-action sliding rate limits (minute, hour), global and
// per-action concurrency (rejected, never queued), then the audited run
// with a timeout and the output cap. Every call writes one audit row; a
// denied call's row carries the denial status. The returned Result's
// InvocationID is set whenever a row was written.
func (r *Runner) Run(ctx context.Context, spec Spec, p Provider) (Result, error) {
	now := r.clock.Now()
	inv := r.invocation(spec, p, now)
	deny := func(d *denial) (Result, error) {
		inv.Status, inv.Error = d.status, d.err.Message
		inv.FinishedAt, inv.DurationMS = &now, new(int64)
		if err := r.audit.StartInvocation(ctx, inv); err != nil {
			return Result{}, err
		}
		return Result{InvocationID: inv.ID}, d.err
	}
	if d := r.gate(spec); d != nil {
		return deny(d)
	}
	var refused *denial
	err := r.audit.ReserveInvocation(ctx, now.Add(-r.lookback()), func(hist []cortex.Invocation) cortex.Invocation {
		row := inv
		refused = r.decide(spec.Action, now, hist)
		if refused != nil {
			row.Status, row.Error = refused.status, refused.err.Message
			row.FinishedAt, row.DurationMS = &now, new(int64)
		} else {
			row.Status = cortex.InvocationRunning
			r.setLive(row.ID, true)
		}
		return row
	})
	if err != nil {
		r.setLive(inv.ID, false)
		return Result{}, err
	}
	if refused != nil {
		return Result{InvocationID: inv.ID}, refused.err
	}
	defer r.setLive(inv.ID, false)
	ctx = withProviderHook(ctx, func(pid int, dir string) {
		if err := r.audit.AttachProvider(context.WithoutCancel(ctx), inv.ID, pid, dir); err != nil {
			r.logAttachFailure(err)
		}
	})
	return r.run(ctx, spec, p, inv)
}

// logAttachFailure is called when the provider's process could not be
// recorded: the call goes on (the kernel still ties the provider to this
// process on Linux), but a crash now could leave it uncounted.
func (r *Runner) logAttachFailure(err error) {
	fmt.Fprintf(os.Stderr, "cortex: warning: %v\n", cortex.ErrorMessage(err))
}

func (r *Runner) setLive(id string, on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if on {
		r.live[id] = true
	} else {
		delete(r.live, id)
	}
}

// gate applies the guards that need no history: kill switch, action and
// background enablement, prompt cap.
func (r *Runner) gate(spec Spec) *denial {
	c := r.cfg
	switch {
	case !c.Enabled:
		return &denial{cortex.InvocationDisabled, cortex.Errorf(cortex.CodeForbidden,
			"LLM calls are disabled ([llm] enabled = false or CORTEX_LLM_ENABLED=false)")}
	case !c.actionEnabled(spec.Action):
		return &denial{cortex.InvocationDisabled, cortex.Errorf(cortex.CodeForbidden,
			"LLM action %q is disabled ([llm.actions.%s] enabled = false)", spec.Action, spec.Action)}
	case (spec.Surface == cortex.SurfaceBackground || spec.Action == ActionBackground) && !c.BackgroundEnabled:
		return &denial{cortex.InvocationDisabled, cortex.Errorf(cortex.CodeForbidden,
			"background LLM use is disabled ([llm] background_enrichment_enabled = false)")}
	case len(spec.Prompt) > c.MaxPromptBytes:
		return &denial{cortex.InvocationDenied, cortex.Errorf(cortex.CodeInvalid,
			"prompt_too_large: the prompt has %d bytes, the limit is %d ([llm] max_prompt_bytes); narrow the selection",
			len(spec.Prompt), c.MaxPromptBytes)}
	}
	return nil
}

// lookback is how much history decides: the hour of the rate window, or
// two cooldowns when longer (so an open circuit is seen whole).
func (r *Runner) lookback() time.Duration {
	return max(time.Hour, 2*time.Duration(r.cfg.CooldownSecs)*time.Second)
}

// admitted reports whether a status is that of a call that passed every
// guard (it counts against the rate limits).
func admitted(status string) bool {
	switch status {
	case cortex.InvocationRunning, cortex.InvocationSuccess, cortex.InvocationError, cortex.InvocationTimeout,
		cortex.InvocationCancelled, cortex.InvocationInterrupted:
		return true
	}
	return false
}

// inFlight reports whether a row is a call still running: its process is
// this one, or alive.
func (r *Runner) inFlight(inv cortex.Invocation) bool {
	if inv.Status != cortex.InvocationRunning {
		return false
	}
	if inv.Hostname != r.host {
		return true // another host sharing the store: trust the row
	}
	if inv.PID == r.pid {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.live[inv.ID]
	}
	// A provider left running by a dead process is still a call in
	// flight: it counts against the limits until it ends.
	return r.alive(inv.PID) || inv.ProviderPID > 0 && r.groupAlive(inv.ProviderPID)
}

// decide applies the breaker, the rate windows and the concurrency caps
// to a new call of action at now, given the invocations started since
// now - lookback (oldest first).
func (r *Runner) decide(action string, now time.Time, hist []cortex.Invocation) *denial {
	c := r.cfg
	var streak, inMinute, inHour, active, actionActive int
	var openUntil, oldestMinute, oldestHour time.Time
	hourAgo, minuteAgo := now.Add(-time.Hour), now.Add(-time.Minute)
	for _, inv := range hist {
		running := r.inFlight(inv)
		if running {
			active++
		}
		if inv.Action != action {
			continue
		}
		if running {
			actionActive++
		}
		switch inv.Status {
		case cortex.InvocationSuccess:
			streak, openUntil = 0, time.Time{}
		case cortex.InvocationError, cortex.InvocationTimeout:
			streak++
			if streak >= c.FailureThreshold {
				end := inv.StartedAt
				if inv.FinishedAt != nil {
					end = *inv.FinishedAt
				}
				openUntil = end.Add(time.Duration(c.CooldownSecs) * time.Second)
			}
		}
		if admitted(inv.Status) && inv.StartedAt.After(hourAgo) {
			if inHour == 0 {
				oldestHour = inv.StartedAt
			}
			inHour++
			if inv.StartedAt.After(minuteAgo) {
				if inMinute == 0 {
					oldestMinute = inv.StartedAt
				}
				inMinute++
			}
		}
	}
	if streak >= c.FailureThreshold {
		if now.Before(openUntil) {
			return &denial{cortex.InvocationCircuitOpen, cortex.Errorf(cortex.CodeBusy,
				"circuit_open: %d consecutive %s failures; retry after %s", streak, action, retryAfter(openUntil.Sub(now)))}
		}
		if actionActive > 0 {
			return &denial{cortex.InvocationCircuitOpen, cortex.Errorf(cortex.CodeBusy,
				"circuit_open: a probe call of %s is testing the provider; retry after it ends", action)}
		}
		// Half-open: this call is the probe.
	}
	if inMinute >= c.MaxPerMinute {
		return &denial{cortex.InvocationRateLimited, cortex.Errorf(cortex.CodeBusy,
			"rate_limited_per_minute: %d %s calls in the last minute (limit %d); retry after %s",
			inMinute, action, c.MaxPerMinute, retryAfter(oldestMinute.Add(time.Minute).Sub(now)))}
	}
	if inHour >= c.MaxPerHour {
		return &denial{cortex.InvocationRateLimited, cortex.Errorf(cortex.CodeBusy,
			"rate_limited_per_hour: %d %s calls in the last hour (limit %d); retry after %s",
			inHour, action, c.MaxPerHour, retryAfter(oldestHour.Add(time.Hour).Sub(now)))}
	}
	if active >= c.MaxConcurrent {
		return &denial{cortex.InvocationDenied, cortex.Errorf(cortex.CodeBusy,
			"global_concurrency_limited: %d LLM call(s) already running (limit %d); try again when it ends",
			active, c.MaxConcurrent)}
	}
	if actionActive >= c.MaxPerActionConcurrent {
		return &denial{cortex.InvocationDenied, cortex.Errorf(cortex.CodeBusy,
			"action_concurrency_limited: %d %s call(s) already running (limit %d); try again when it ends",
			actionActive, action, c.MaxPerActionConcurrent)}
	}
	return nil
}

// run performs an admitted call (its running row is written): provider
// under timeout, output cap, finish row.
func (r *Runner) run(ctx context.Context, spec Spec, p Provider, inv cortex.Invocation) (res Result, err error) {
	res.InvocationID = inv.ID
	outcome := cortex.InvocationError
	timeout := time.Duration(r.cfg.TimeoutSecs) * time.Second
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stream := &cappedWriter{w: spec.Stream, left: r.cfg.MaxOutputBytes}
	start := time.Now()
	out, perr := p.Run(runCtx, spec.Prompt, stream)
	res.Duration = time.Since(start)
	fin := cortex.InvocationFinish{ID: inv.ID, FinishedAt: inv.StartedAt.Add(res.Duration), DurationMS: res.Duration.Milliseconds()}
	var callErr error
	switch {
	case perr == nil:
		outcome = cortex.InvocationSuccess
		res.Output, res.OutputTruncated = capUTF8(out, r.cfg.MaxOutputBytes)
		res.OutputBytes = len(res.Output)
		n := int64(res.OutputBytes)
		fin.OutputBytes = &n
	case ctx.Err() != nil:
		outcome = cortex.InvocationCancelled
		fin.Error = "cancelled by the caller"
		callErr = cortex.WrapError(cortex.CodeUnavailable, ctx.Err(), "LLM invocation %s cancelled", inv.ID)
	case runCtx.Err() != nil || errors.Is(perr, context.DeadlineExceeded):
		outcome = cortex.InvocationTimeout
		fin.Error = fmt.Sprintf("timed out after %ds; the provider's processes were killed", r.cfg.TimeoutSecs)
		callErr = cortex.WrapError(cortex.CodeUnavailable, context.DeadlineExceeded,
			"LLM invocation %s timed out after %ds ([llm] timeout_secs)", inv.ID, r.cfg.TimeoutSecs)
	default:
		fin.Error = r.sanitize(perr.Error())
		code := cortex.ErrorCode(perr)
		if code == cortex.CodeInternal {
			code = cortex.CodeUnavailable
		}
		callErr = cortex.Errorf(code, "LLM invocation %s failed: %s", inv.ID, fin.Error)
	}
	fin.Status = outcome
	// The audit row is finished even when the caller's context is gone.
	if err := r.audit.FinishInvocation(context.WithoutCancel(ctx), fin); err != nil {
		// Audit completeness over result delivery: an answer whose
		// record could not be completed is not returned.
		return Result{InvocationID: inv.ID}, err
	}
	if callErr != nil {
		return Result{InvocationID: inv.ID, Duration: res.Duration}, callErr
	}
	return res, nil
}

// DryRun builds the audit record of spec without running anything: it
// writes a dry_run row and reports the prompt's size and a preview. It
// consults no limit and no breaker (nothing is spent).
func (r *Runner) DryRun(ctx context.Context, spec Spec, p Provider) (DryRunResult, error) {
	now := r.clock.Now()
	inv := r.invocation(spec, p, now)
	inv.Status, inv.FinishedAt, inv.DurationMS = cortex.InvocationDryRun, &now, new(int64)
	if err := r.audit.StartInvocation(ctx, inv); err != nil {
		return DryRunResult{}, err
	}
	res := r.Preview(spec)
	res.InvocationID = inv.ID
	return res, nil
}

// Preview reports what DryRun reports — the prompt's size, a preview and
// whether it would exceed the prompt limit — without writing anything:
// read-only surfaces (a GET, an MCP read tool) use it, since a read must
// not write.
func (r *Runner) Preview(spec Spec) DryRunResult {
	preview, _ := capUTF8(spec.Prompt, PreviewBytes)
	return DryRunResult{PromptBytes: len(spec.Prompt), Evidence: spec.Evidence,
		WouldExceedPromptLimit: len(spec.Prompt) > r.cfg.MaxPromptBytes, PromptPreview: preview}
}

// invocation is the audit row of spec.
func (r *Runner) invocation(spec Spec, p Provider, now time.Time) cortex.Invocation {
	ev := spec.Evidence
	inv := cortex.Invocation{ID: newID(now), StartedAt: now, CallerSurface: spec.Surface, Action: spec.Action,
		IncidentID: spec.IncidentID, Tool: spec.Tool, Project: spec.Project, Session: spec.Session, Evidence: &ev,
		PromptBytes: int64(len(spec.Prompt)), Metadata: r.metadata(spec.Metadata), Hostname: r.host, PID: r.pid}
	if inv.CallerSurface == "" {
		inv.CallerSurface = cortex.SurfaceCLI
	}
	if p != nil {
		inv.Provider, inv.Model, inv.Program = p.Name(), p.Model(), p.Program()
	} else {
		inv.Provider = r.cfg.Provider
	}
	return inv
}

// sanitize redacts secrets first, then bounds the message, so a secret
// split by the bound cannot leak its head.
func (r *Runner) sanitize(s string) string {
	s, _ = r.red.String(s)
	if len(s) > MaxErrorBytes {
		s, _ = capUTF8(s, MaxErrorBytes-len(" …[truncated]"))
		s += " …[truncated]"
	}
	return s
}

// metadata redacts every string leaf and replaces an oversized object by
// a marker that says so.
func (r *Runner) metadata(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	clean, _ := r.redactValue(m).(map[string]any)
	b, err := json.Marshal(clean)
	if err != nil {
		return map[string]any{"truncated": true, "reason": "metadata is not JSON: " + r.sanitize(err.Error())}
	}
	if len(b) > MaxMetadataBytes {
		return map[string]any{"truncated": true, "reason": "metadata over the byte cap",
			"original_bytes": len(b), "max_bytes": MaxMetadataBytes}
	}
	return clean
}

func (r *Runner) redactValue(v any) any {
	switch x := v.(type) {
	case string:
		s, _ := r.red.String(x)
		return s
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = r.redactValue(e)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = r.redactValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.redactValue(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.redactValue(e)
		}
		return out
	case nil, bool, int, int64, float64, json.Number:
		return x
	default:
		// Anything else is stored by its JSON form, redacted.
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprintf("%T", x)
		}
		s, _ := r.red.String(string(b))
		return s
	}
}

// newID returns llm-<UTC time to the microsecond>-<64 random bits>.
func newID(now time.Time) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "llm-" + now.UTC().Format("20060102T150405.000000") + "-" + hex.EncodeToString(b[:])
}

// retryAfter renders a wait in whole seconds, rounded up.
func retryAfter(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return fmt.Sprintf("%ds", int64(math.Ceil(d.Seconds())))
}

// capUTF8 cuts s to at most n bytes on a rune boundary.
func capUTF8(s string, n int) (string, bool) {
	return cortex.CutUTF8(s, n), len(s) > n
}

// cappedWriter forwards at most left bytes, cut on rune boundaries, and
// ignores the rest (the answer is capped as a whole too).
type cappedWriter struct {
	w    io.Writer
	left int
}

func (c *cappedWriter) Write(b []byte) (int, error) {
	if c.w == nil || c.left <= 0 {
		return len(b), nil
	}
	out := b
	if len(out) > c.left {
		s, _ := capUTF8(string(out), c.left)
		out = []byte(s)
		c.left = 0
	} else {
		c.left -= len(out)
	}
	if _, err := c.w.Write(out); err != nil {
		// A closed terminal must not fail the audited call.
		c.left, c.w = 0, nil
	}
	return len(b), nil
}
