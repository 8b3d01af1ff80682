// Package testcorpus locates the shared corpora for tests: the real
// transcripts (../shared/corpus/real from the module root, or
// $CORTEX_REAL_CORPUS) and the labelled sessions (../shared/corpus/labelled,
// or $CORTEX_LABELLED_CORPUS). Tests skip when a corpus is absent.
package testcorpus

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// moduleRoot is the repository root, found from this file's location.
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

func locate(tb testing.TB, env, rel string) string {
	tb.Helper()
	dir := os.Getenv(env)
	if dir == "" {
		dir = filepath.Join(moduleRoot(), "..", "shared", "corpus", rel)
	}
	dir, _ = filepath.Abs(dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		tb.Skipf("corpus not available at %s (set %s)", dir, env)
	}
	// The store names transcripts by their paths with every link
	// resolved; tests compare with paths built from this folder.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir
}

// Real returns the real-transcript corpus folder, or skips the test.
func Real(tb testing.TB) string { return locate(tb, "CORTEX_REAL_CORPUS", "real") }

// Labelled returns the labelled-sessions corpus folder, or skips the test.
func Labelled(tb testing.TB) string { return locate(tb, "CORTEX_LABELLED_CORPUS", "labelled") }

// EachLine calls fn with every line of every .jsonl file under root, in
// walk order (the slice is only valid during the call).
func EachLine(tb testing.TB, root string, fn func(line []byte)) {
	tb.Helper()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			fn(sc.Bytes())
		}
		return sc.Err()
	})
	if err != nil {
		tb.Fatalf("read corpus %s: %v", root, err)
	}
}
