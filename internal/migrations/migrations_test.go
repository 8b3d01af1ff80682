package migrations

import (
	"testing"
	"testing/fstest"
)

func TestLoadOrdersByVersionAndRejectsBadNames(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0010_b.sql": {Data: []byte("B")},
		"m/0002_a.sql": {Data: []byte("A")},
	}
	ms, err := Load(fsys, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Version != 2 || ms[0].Name != "0002_a" || ms[0].SQL != "A" || ms[1].Version != 10 || Newest(ms) != 10 {
		t.Fatalf("got %+v", ms)
	}
	fsys["m/readme.sql"] = &fstest.MapFile{Data: []byte("x")}
	if _, err := Load(fsys, "m"); err == nil {
		t.Fatal("a file without a version was accepted")
	}
	if Newest(nil) != 0 {
		t.Fatal("Newest of none")
	}
}
