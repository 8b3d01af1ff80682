//go:build unix

package llm

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// geminiProcessGroup starts cmd in a process group of its own and makes
// cancellation kill the whole group, so that nothing the CLI starts (node
// workers, shell tools) outlives it.
func geminiProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	tieToParent(cmd.SysProcAttr)
	cmd.Cancel = func() error { return geminiKillGroup(cmd.Process.Pid) }
}

// geminiKillGroup sends SIGKILL to the process group led by pid. It
// returns os.ErrProcessDone when the group no longer exists.
func geminiKillGroup(pid int) error {
	if pid <= 0 {
		return os.ErrProcessDone
	}
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
