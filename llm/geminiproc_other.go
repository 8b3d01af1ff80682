//go:build !unix

package llm

import "os/exec"

// geminiProcessGroup leaves cmd as is: without process groups,
// cancellation kills the CLI itself only (exec's default Cancel).
func geminiProcessGroup(cmd *exec.Cmd) {}

// geminiKillGroup does nothing where process groups are not supported.
func geminiKillGroup(pid int) error { return nil }
