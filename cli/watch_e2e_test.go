package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cortexhq/cortex/cli"
)

func TestWatchFlags(t *testing.T) {
	f := &cli.Factory{IO: &cli.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	var got *cli.WatchOptions
	cmd := cli.NewCmdWatch(f, func(_ context.Context, o *cli.WatchOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"a", "b/c", "--debounce", "50ms", "--rescan", "10s", "--json"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Paths, ",") != "a,b/c" || got.Debounce != 50*time.Millisecond || got.Rescan != 10*time.Second || !got.JSON {
		t.Errorf("parsed %+v", got)
	}
	cmd = cli.NewCmdWatch(f, func(context.Context, *cli.WatchOptions) error { return nil })
	cmd.SetArgs(nil)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	cmd.SetArgs([]string{"--debounce", "-1s"})
	if err := cmd.ExecuteContext(context.Background()); err == nil {
		t.Error("a negative --debounce must fail")
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWatchEndToEnd runs `cortex watch` on the default roots, appends a
// line to a live transcript, finds it with `cortex search`, and stops the
// watcher with Ctrl-C.
func TestWatchEndToEnd(t *testing.T) {
	corpus := realCorpus(t)
	e := newEnv(t)
	src, err := os.ReadFile(filepath.Join(corpus, "claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(src, []byte("\n"))[:8]
	var user map[string]any
	for _, l := range lines {
		var rec map[string]any
		if json.Unmarshal(l, &rec) == nil && rec["type"] == "user" {
			if m, ok := rec["message"].(map[string]any); ok {
				if _, ok := m["content"].(string); ok {
					user = rec
					break
				}
			}
		}
	}
	if user == nil {
		t.Fatal("no user line in the corpus file")
	}
	session := filepath.Join(e.home, ".claude", "projects", "-experiments-ideas", "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl")
	copyBytes(t, session, bytes.Join(lines, nil))

	cmd := exec.Command(cortexBin, "watch", "--json", "--debounce", "100ms")
	cmd.Env = e.vars
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	passes := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("watch --json printed a line that is not JSON: %q", sc.Text())
				continue
			}
			passes <- m
		}
		exited <- cmd.Wait()
	}()
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	}()

	select {
	case p := <-passes:
		if p["full_scan"] != true || p["rows"].(float64) == 0 {
			t.Fatalf("first pass: %v", p)
		}
	case err := <-exited:
		t.Fatalf("watch exited at start: %v\n%s", err, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("no initial pass\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), filepath.Join(e.home, ".claude", "projects")) {
		t.Errorf("the startup line does not say what is watched:\n%s", stderr.String())
	}

	word := "livewatch" + randHex(5)
	user["uuid"] = "0000" + randHex(14)
	user["timestamp"] = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	user["message"] = map[string]any{"role": "user", "content": "the " + word + " test line"}
	line, _ := json.Marshal(user)
	f, err := os.OpenFile(session, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	appended := time.Now()
	f.Write(append(line, '\n'))
	f.Close()
	var latency time.Duration
	for {
		var res struct {
			Hits []struct {
				Snippet string `json:"snippet"`
			} `json:"hits"`
		}
		e.json(&res, "search", word, "--json")
		if len(res.Hits) > 0 {
			latency = time.Since(appended)
			break
		}
		if time.Since(appended) > 5*time.Second {
			t.Fatalf("the appended line was not searchable within 5 s\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("appended line searchable via `cortex search` %s after the append", latency.Round(time.Millisecond))
	if latency > 2*time.Second {
		t.Errorf("latency %s exceeds 2 s", latency)
	}

	stopAt := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("watch after SIGINT: %v\n%s", err, stderr.String())
		}
		t.Logf("exit status %d, %s after SIGINT", cmd.ProcessState.ExitCode(), time.Since(stopAt).Round(time.Millisecond))
	case <-time.After(5 * time.Second):
		t.Fatalf("watch did not stop within 5 s of SIGINT")
	}
	if strings.Contains(stderr.String(), "level=WARN") || strings.Contains(stderr.String(), "panic") {
		t.Errorf("unexpected stderr:\n%s", stderr.String())
	}
}

func copyBytes(t *testing.T, dst string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
