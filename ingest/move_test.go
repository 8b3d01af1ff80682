package ingest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cortexhq/cortex"
)

// A scan that finds new files in a store of many known files checks the
// paths of the known files whose head matches a new file's, not every
// known path: here one stat for a moved file among 5,000 known ones, none
// for a new file that matches nothing, and a copy (its old path still
// there) is not taken for a move.
func TestMovesCheckOnlyMatchingPaths(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) candidate {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return candidate{path: p, size: int64(len(content))}
	}
	moved := write("moved.jsonl", `{"moved":true}`+"\n")
	fresh := write("fresh.jsonl", `{"fresh":true}`+"\n")
	copied := write("copy.jsonl", `{"copied":true}`+"\n")
	write("original.jsonl", `{"copied":true}`+"\n")

	sources := map[string]cortex.Source{}
	for i := range 5000 {
		p := filepath.Join(dir, "gone", fmt.Sprintf("%d.jsonl", i))
		sources[p] = cortex.Source{ID: int64(i + 1), Path: p, Kind: "claude", HeadHash: fmt.Sprintf("h%d", i)}
	}
	oldPath := filepath.Join(dir, "gone", "old-name.jsonl")
	sources[oldPath] = cortex.Source{ID: 9001, Path: oldPath, Kind: "claude", HeadHash: headHash([]byte(`{"moved":true}` + "\n"))}
	orig := filepath.Join(dir, "original.jsonl")
	sources[orig] = cortex.Source{ID: 9002, Path: orig, Kind: "claude", HeadHash: headHash([]byte(`{"copied":true}` + "\n"))}

	m := newMoves(sources, []candidate{moved, fresh, copied})
	stats := 0
	m.lstat = func(p string) (fs.FileInfo, error) {
		stats++
		return os.Lstat(p)
	}
	if s, ok := m.find(fresh); ok {
		t.Fatalf("a new file was taken for %s", s.Path)
	}
	if stats != 0 {
		t.Fatalf("%d stats for a file that matches no known head", stats)
	}
	if s, ok := m.find(moved); !ok || s.ID != 9001 {
		t.Fatalf("the moved file was not recognized: %+v, %v", s, ok)
	}
	if _, ok := m.find(copied); ok {
		t.Fatal("a copy (its original still there) was taken for a move")
	}
	if stats != 2 {
		t.Errorf("%d stats of known paths, want 2 (the moved file's old path, the copy's original)", stats)
	}
}
