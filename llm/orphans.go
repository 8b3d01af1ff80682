package llm

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
)

// ProviderDirPrefix starts the name of the temporary folder a provider
// run creates (followed by Cortex's process id and a random suffix); it
// holds copied credentials.
const ProviderDirPrefix = "cortex-gemini-"

type providerHookKey struct{}

// withProviderHook returns ctx carrying fn, which a provider calls once its
// process started (see providerStarted).
func withProviderHook(ctx context.Context, fn func(pid int, dir string)) context.Context {
	return context.WithValue(ctx, providerHookKey{}, fn)
}

// providerStarted tells the runner that the provider's process group pid
// runs with its credentials in dir: the audit row records both, so that
// if this Cortex process dies a later runner can find the orphan and the
// folder.
func providerStarted(ctx context.Context, pid int, dir string) {
	if fn, ok := ctx.Value(providerHookKey{}).(func(int, string)); ok {
		fn(pid, dir)
	}
}

// orphanKillWait bounds how long recovery waits for a killed orphan group
// to disappear.
const orphanKillWait = 2 * time.Second

// stillRunning reports whether an audited call still runs: its Cortex
// process lives, or the provider it started does (an orphan, after Cortex
// was killed). An orphan that is provably this call's (a member's HOME is
// the recorded folder) is killed; one that lives on counts against the
// concurrency limits. When neither runs, the call's credential folder is
// removed.
func (r *Runner) stillRunning(inv cortex.Invocation) bool {
	if inv.PID == r.pid || r.alive(inv.PID) {
		return true
	}
	if inv.ProviderPID > 0 && r.groupAlive(inv.ProviderPID) {
		if inv.ProviderDir != "" && r.killOrphan(inv.ProviderPID, "HOME="+filepath.Join(inv.ProviderDir, "home")) {
			deadline := time.Now().Add(orphanKillWait)
			for r.groupAlive(inv.ProviderPID) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
		}
		if r.groupAlive(inv.ProviderPID) {
			r.orphanDirs[inv.ProviderDir] = true // in use: not swept
			return true
		}
	}
	removeProviderDir(inv.ProviderDir)
	return false
}

// removeProviderDir removes a provider folder, but only one that is
// evidently such a folder in the temporary directory.
func removeProviderDir(dir string) {
	if dir == "" || filepath.Dir(dir) != filepath.Clean(os.TempDir()) || !strings.HasPrefix(filepath.Base(dir), ProviderDirPrefix) {
		return
	}
	_ = os.RemoveAll(dir)
}

// legacyDirAge is how old a provider folder of an older Cortex (named
// without a process id) must be before it is taken as abandoned.
const legacyDirAge = time.Hour

// sweepProviderDirs removes provider folders whose Cortex process is gone
// (a killed run leaves its copied credentials behind), and folders of
// older versions, which carry no process id, once they are an hour old.
func (r *Runner) sweepProviderDirs() {
	tmp := os.TempDir()
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, ProviderDirPrefix) || r.orphanDirs[filepath.Join(tmp, name)] {
			continue
		}
		rest := strings.TrimPrefix(name, ProviderDirPrefix)
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		switch {
		case err == nil:
			if pid == r.pid || r.alive(pid) {
				continue
			}
		case strings.HasPrefix(rest, "home-") || strings.HasPrefix(rest, "work-"):
			info, err := e.Info()
			if err != nil || time.Since(info.ModTime()) < legacyDirAge {
				continue
			}
		default:
			continue
		}
		removeProviderDir(filepath.Join(tmp, name))
	}
}
