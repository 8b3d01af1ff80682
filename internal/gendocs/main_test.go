package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedDocsAreCurrent fails while a generated document differs
// from the registry: run `go run ./internal/gendocs` and commit.
func TestGeneratedDocsAreCurrent(t *testing.T) {
	for path, want := range documents() {
		got, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatalf("%s: %v (run go run ./internal/gendocs)", path, err)
		}
		if string(got) != want {
			t.Errorf("%s is out of date: run go run ./internal/gendocs", path)
		}
	}
}
