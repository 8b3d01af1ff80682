package ingest

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"testing"
)

// A real Claude session with pasted images and thinking signatures is
// stored without its blobs: the stored records hold markers instead, the
// summary says how much was left out, and reading the file again — as an
// unchanged file, or from the start with --force — finds every record
// already stored, as it is.
func TestBlobsAreNotStoredAndReReadsMatch(t *testing.T) {
	const rel = "claude/planetfall-seed-signalkit/8e/da3033e7b0/3/full.jsonl"
	data := corpusFile(t, rel)
	blob := regexp.MustCompile(`"[A-Za-z0-9+/=_-]{256,}"`)
	if !blob.Match(data) {
		t.Fatalf("%s holds no blob", rel)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.jsonl"), data)
	db, path := openDB(t)
	first := index(t, db, Options{Paths: []string{dir}})
	if first.BlobBytesNotStored == 0 || first.Inserted == 0 {
		t.Fatalf("first read: %+v", first)
	}
	before := snapshot(t, path, dir)

	raws, err := db.RawRecords(context.Background(), logIDs(t, path))
	if err != nil {
		t.Fatal(err)
	}
	var markers, stored int
	for id, r := range raws {
		if m := blob.Find(r.Raw); m != nil {
			t.Fatalf("row %d still holds a blob: %.80s…", id, m)
		}
		markers += bytes.Count(r.Raw, []byte("-byte blob not stored]"))
		stored += len(r.Raw)
	}
	if markers == 0 || int64(stored+int(first.BlobBytesNotStored)) < int64(len(data))*9/10 {
		t.Fatalf("%d markers in %d stored bytes, %d left out, file %d bytes", markers, stored, first.BlobBytesNotStored, len(data))
	}

	again := index(t, db, Options{Paths: []string{dir}})
	if again.FilesUnchanged != 1 || again.BytesRead != 0 {
		t.Errorf("unchanged re-read: %+v", again)
	}
	forced := index(t, db, Options{Paths: []string{dir}, Force: true})
	if forced.Inserted != 0 || forced.Updated != 0 || forced.Duplicates != first.Inserted {
		t.Errorf("forced re-read: %d inserted, %d updated, %d duplicates (want 0, 0, %d)",
			forced.Inserted, forced.Updated, forced.Duplicates, first.Inserted)
	}
	if after := snapshot(t, path, dir); !equalLines(before, after) {
		t.Error("the stored records changed after a forced re-read")
	}
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
