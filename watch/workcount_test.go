package watch

import (
	"path/filepath"
	"testing"
	"time"
)

// Work-count gate: with nothing changed, the watcher's rescans read no
// record and write nothing — no row transaction, no search index
// transaction.
func TestWatchIdleDoesNoWork(t *testing.T) {
	t.Parallel()
	fx := loadFixture(t)
	db, _ := openStore(t)
	root := t.TempDir()
	file := filepath.Join(root, "p", newID()+".jsonl")
	word := token("idle")
	writeFile(t, file, append(fx.headBytes(), fx.probe(t, word)...))
	w := start(t, db, []string{root}, func(o *Options) { o.Rescan = 200 * time.Millisecond })
	// The start pass stores the file; later rescans find it unchanged.
	for deadline := time.Now().Add(10 * time.Second); hits(t, db, word) != 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the file never became searchable")
		}
	}
	w.next(10 * time.Second) // the pass under way when the file became searchable
	idle := 0
	for deadline := time.Now().Add(10 * time.Second); idle < 3 && time.Now().Before(deadline); {
		rep := w.next(time.Until(deadline))
		if !rep.Full {
			continue
		}
		s := rep.Summary
		if s.BytesRead != 0 || s.Transactions != 0 || s.Inserted != 0 || s.Search == nil || s.Search.Transactions != 0 {
			t.Fatalf("an idle rescan did work: %d bytes read, %d transactions, search %+v", s.BytesRead, s.Transactions, s.Search)
		}
		idle++
	}
	if idle < 3 {
		t.Fatalf("saw %d idle rescans", idle)
	}
}
