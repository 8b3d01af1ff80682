//go:build unix && !linux

package proc

import (
	"errors"
	"syscall"
)

// GroupAlive reports whether a process group with this id has a member on
// this host.
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// KillOwnedGroup cannot check who owns a process group on this platform
// and kills nothing: the caller counts the group as running until it
// exits.
func KillOwnedGroup(pgid int, envEntry string) bool { return false }
