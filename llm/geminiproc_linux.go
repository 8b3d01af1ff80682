package llm

import "syscall"

// tieToParent makes the kernel kill the CLI when Cortex dies, even by
// SIGKILL (Pdeathsig); what the CLI started is killed by the next runner
// (see Runner.recover).
func tieToParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
