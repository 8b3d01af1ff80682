//go:build linux

package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cortexhq/cortex/internal/testcorpus"
)

// TestAssessKill9LeavesNothingRunning: `kill -9` of `cortex assess` while
// the (fake) Gemini CLI runs. The CLI dies with it (Pdeathsig); what the
// CLI started and the copied credentials are cleaned up by the next
// `cortex assess`, which is admitted only once the orphan is gone — it
// never runs next to it against max_concurrent = 1.
func TestAssessKill9LeavesNothingRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	e := newEnv(t)
	tmp := t.TempDir()
	e.vars = append(e.vars, "TMPDIR="+tmp)
	db := filepath.Join(e.home, "c.db")
	if _, errOut, code := e.run("--db", db, "index", testcorpus.Labelled(t)); code != 0 {
		t.Fatal(errOut)
	}
	if err := os.MkdirAll(filepath.Join(e.home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, ".gemini", "oauth_creds.json"), []byte(`{"refresh_token":"fake-credential"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(e.home, "grandchild.pid")
	fakeGemini(t, e, "sleep\", \"--fake-pidfile="+pidfile)

	cmd := exec.Command(cortexBin, "--db", db, "assess", "skill", "lavra:lavra-plan")
	cmd.Env = e.vars
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	grandchild := waitPidfile(t, pidfile)
	cli := pgidOf(t, grandchild) // the fake CLI leads its own process group
	if cli == cmd.Process.Pid || !processAlive(cli) {
		t.Fatalf("fake CLI pid %d (cortex %d)", cli, cmd.Process.Pid)
	}
	dirs, _ := filepath.Glob(filepath.Join(tmp, "cortex-gemini-"+strconv.Itoa(cmd.Process.Pid)+"-*"))
	if len(dirs) != 1 {
		t.Fatalf("credential folders: %v", dirs)
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "home", ".gemini", "oauth_creds.json")); err != nil {
		t.Fatalf("copied credentials: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The kernel kills the CLI with its parent.
	waitFor(t, 3*time.Second, "the fake CLI to die with cortex", func() bool { return !processAlive(cli) })
	if !processAlive(grandchild) {
		t.Log("the grandchild died too")
	}

	// The next call: the orphan is killed, the folder removed, the old
	// row interrupted, and only then is the call admitted.
	fakeGemini(t, e, "ok")
	out, errOut, code := e.run("--db", db, "assess", "skill", "lavra:lavra-plan", "--json")
	if code != 0 {
		t.Fatalf("next assess: exit %d\n%s%s", code, out, errOut)
	}
	if processAlive(grandchild) {
		t.Errorf("the orphan %d still runs after the next call", grandchild)
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Errorf("the credential folder %s is still there: %v", dirs[0], err)
	}
	var inv invocationsJSON
	e.json(&inv, "--db", db, "ai", "llm-invocations", "--json")
	statuses := map[string]int{}
	for _, i := range inv.Invocations {
		statuses[i.Status]++
	}
	if statuses["interrupted"] != 1 || statuses["success"] != 1 || len(inv.Invocations) != 2 {
		t.Fatalf("audit: %v", statuses)
	}
}

func waitPidfile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, 20*time.Second, "the fake CLI's pidfile", func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processAlive reports a live, non-zombie process.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

func pgidOf(t *testing.T, pid int) int {
	t.Helper()
	g, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
