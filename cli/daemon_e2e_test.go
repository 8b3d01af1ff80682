package cli_test

import (
	"bufio"
	"fmt"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// daemon is a long-running cortex command (serve, syslog) started by a
// test; its stderr is collected in log.
type daemon struct {
	cmd     *exec.Cmd
	log     *lockedBuffer
	stopped bool
}

// startDaemon starts cortex args in e and waits until a stderr line
// matches ready; it returns the match's groups. The daemon is stopped
// (and must exit 0 on SIGINT) when the test ends, or earlier with stop.
func startDaemon(t *testing.T, e *env, ready *regexp.Regexp, args ...string) (*daemon, []string) {
	t.Helper()
	cmd := exec.Command(cortexBin, args...)
	cmd.Env = e.vars
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, log: &lockedBuffer{}}
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(d.log, sc.Text())
			if m := ready.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1:]:
				default:
				}
			}
		}
	}()
	select {
	case m := <-found:
		t.Cleanup(func() { d.stop(t) })
		return d, m
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("cortex %s did not start:\n%s", args[0], d.log.String())
	}
	return nil, nil
}

// stop sends SIGINT and expects exit 0 within 15 s (once).
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	if d.stopped {
		return
	}
	d.stopped = true
	_ = d.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("cortex %s exit after SIGINT: %v\n%s", d.cmd.Args[1], err, d.log.String())
		}
	case <-time.After(15 * time.Second):
		_ = d.cmd.Process.Kill()
		t.Errorf("cortex %s did not stop on SIGINT\n%s", d.cmd.Args[1], d.log.String())
	}
}
