package ingest

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cortexhq/cortex/bench/gen"
)

// buildCortex builds the real binary for process-level tests.
func buildCortex(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the cortex binary")
	}
	bin := filepath.Join(t.TempDir(), "cortex")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/cortex")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestKilledIndexResumesToTheSameStore kills a real `cortex index` process
// with SIGKILL mid-way, re-runs it, and checks the store ends with exactly
// the records of an uninterrupted run.
func TestKilledIndexResumesToTheSameStore(t *testing.T) {
	bin := buildCortex(t)
	corpus := t.TempDir()
	if _, err := gen.Generate(context.Background(), gen.Options{SourceDir: realCorpus(t), OutDir: corpus,
		TargetBytes: 40 << 20, Seed: 7, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	clean, cleanPath := openDB(t)
	index(t, clean, Options{Paths: []string{corpus}})
	want := snapshot(t, cleanPath, corpus)

	dbPath := filepath.Join(t.TempDir(), "killed.db")
	cmd := exec.Command(bin, "--db", dbPath, "index", corpus, "--json")
	cmd.Env = append(os.Environ(), "CORTEX_HOSTNAME=testhost")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if n := rowsIn(dbPath); n > int64(len(want))/4 {
			if err := cmd.Process.Signal(syscall.SIGKILL); err == nil {
				killed = true
			}
			break
		}
	}
	_ = cmd.Wait()
	if !killed {
		t.Fatal("the index finished (or never started) before it could be killed")
	}
	partial := rowsIn(dbPath)
	if partial >= int64(len(want)) {
		t.Fatalf("killed run already had all %d rows", partial)
	}
	rerun := exec.Command(bin, "--db", dbPath, "index", corpus, "--json")
	rerun.Env = cmd.Env
	if out, err := rerun.CombinedOutput(); err != nil {
		t.Fatalf("re-run: %v\n%s", err, out)
	}
	got := snapshot(t, dbPath, corpus)
	diffSnapshots(t, want, got)
	t.Logf("killed with %d of %d rows stored; the re-run completed to %d", partial, len(want), len(got))
}

func rowsIn(path string) int64 {
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(2000)&_pragma=query_only(1)")
	if err != nil {
		return 0
	}
	defer db.Close()
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM logs").Scan(&n); err != nil {
		return 0
	}
	return n
}
