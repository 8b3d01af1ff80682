package proc

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// GroupAlive reports whether a process group with this id has a member on
// this host that is not a zombie (a killed orphan stays a zombie until
// whoever adopted it reaps it, which in a container may be never).
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	if err := syscall.Kill(-pgid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	alive := false
	eachMember(pgid, func(dir string, state byte) bool {
		alive = state != 'Z' && state != 'X'
		return !alive
	})
	return alive
}

// KillOwnedGroup sends SIGKILL to process group pgid if one of its members
// has envEntry (such as "HOME=/tmp/cortex-gemini-…/home") in its
// environment — proof that the group is the one recorded, not an unrelated
// group that reuses the id. It reports whether it sent the signal.
func KillOwnedGroup(pgid int, envEntry string) bool {
	if pgid <= 0 || envEntry == "" {
		return false
	}
	owned := false
	eachMember(pgid, func(dir string, state byte) bool {
		env, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil {
			return true
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if string(kv) == envEntry {
				owned = true
				return false
			}
		}
		return true
	})
	return owned && syscall.Kill(-pgid, syscall.SIGKILL) == nil
}

// eachMember calls fn with the /proc folder and state of every process of
// group pgid until fn returns false.
func eachMember(pgid int, fn func(dir string, state byte) bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		state, group := statFields(b)
		if group == pgid && !fn(filepath.Dir(st), state) {
			return
		}
	}
}

// statFields reads the state (field 3) and process group (field 5) of
// /proc/<pid>/stat; the command name (field 2) is in parentheses and may
// contain spaces.
func statFields(stat []byte) (byte, int) {
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, -1
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, -1
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, -1
	}
	return f[0][0], n
}
