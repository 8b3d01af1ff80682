//go:build unix

package llm_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/llm"
)

// TestLiveOrphanCountsAgainstTheLimit: a provider left running by a dead
// Cortex process that cannot be proven this call's (so is not killed)
// holds its concurrency slot until it exits: the next call is refused, not
// run next to it; once it is gone the row is interrupted, its folder
// removed, and calls are admitted again.
func TestLiveOrphanCountsAgainstTheLimit(t *testing.T) {
	db := openStore(t)
	ctx := context.Background()
	cfg := llm.DefaultConfig()
	orphan := exec.Command("sleep", "30")
	orphan.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { orphan.Process.Kill(); orphan.Wait() })
	dir, err := os.MkdirTemp("", llm.ProviderDirPrefix+"999999-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	now := time.Now().UTC()
	if err := db.StartInvocation(ctx, cortex.Invocation{ID: "llm-orphan", StartedAt: now, CallerSurface: "cli",
		Action: llm.ActionSkillAssess, Provider: "gemini", Status: cortex.InvocationRunning, Hostname: "h1", PID: 999999}); err != nil {
		t.Fatal(err)
	}
	if err := db.AttachProvider(ctx, "llm-orphan", orphan.Process.Pid, dir); err != nil {
		t.Fatal(err)
	}
	dead := llm.WithProcessCheck(func(pid int) bool { return pid != 999999 })
	r, err := llm.NewRunner(ctx, cfg, db, llm.WithHost("h1", 222), dead)
	if err != nil {
		t.Fatal(err)
	}
	// (The orphan's HOME is not the recorded folder's: not provably the
	// call's, so it is not killed.)
	_, err = r.Run(ctx, llm.Spec{Action: llm.ActionAbuseAssess, Prompt: "p"}, okProvider{})
	if cortex.ErrorCode(err) != cortex.CodeBusy || !strings.Contains(err.Error(), "global_concurrency_limited") {
		t.Fatalf("a call next to a live orphan: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the folder of a live orphan was removed: %v", err)
	}
	orphan.Process.Kill()
	orphan.Wait()
	r, err = llm.NewRunner(ctx, cfg, db, llm.WithHost("h1", 223), dead)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, llm.Spec{Action: llm.ActionAbuseAssess, Prompt: "p"}, okProvider{}); err != nil {
		t.Fatalf("after the orphan ended: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the orphan's credential folder is still there: %v", err)
	}
	list, _ := db.Invocations(ctx, cortex.InvocationParams{Status: cortex.InvocationInterrupted, Limit: 10})
	if list.Total != 1 || list.Invocations[0].ID != "llm-orphan" {
		t.Fatalf("interrupted rows: %+v", list)
	}
}
