//go:build unix

// Package proc answers questions about processes on this host.
package proc

import (
	"errors"
	"syscall"
)

// Alive reports whether a process with this id exists on this host (EPERM
// means it exists but belongs to someone else).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
