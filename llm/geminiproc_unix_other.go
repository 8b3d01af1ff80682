//go:build unix && !linux

package llm

import "syscall"

// tieToParent has no kernel support here: a CLI left by a killed Cortex is
// counted against the concurrency limit by the next runner until it
// exits, and its folder removed then (see Runner.recover).
func tieToParent(a *syscall.SysProcAttr) {}
