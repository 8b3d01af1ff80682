package ingest

import (
	"testing"
)

// Work-count gates (timings are noise on a shared machine; counts are
// not). Ingesting the real corpus takes a bounded number of write
// transactions, rows and search index alike; indexing it again reads no
// record, writes nothing and indexes nothing.
func TestIngestWorkCounts(t *testing.T) {
	dir := corpusDirs(t)
	db, _ := openDB(t)
	first := index(t, db, Options{Paths: []string{dir}, Workers: 2})
	if first.Inserted == 0 || first.Search == nil {
		t.Fatalf("first run: %+v", first)
	}
	// Batches are grouped: far fewer transactions than files, and the
	// search index writes thousands of rows per transaction.
	if first.Transactions > int64(first.FilesRead) || first.Transactions > 80 {
		t.Errorf("%d write transactions for %d files", first.Transactions, first.FilesRead)
	}
	if max := int(first.Transactions) + int(first.Inserted/1000) + 2; first.Search.Transactions > max {
		t.Errorf("%d search transactions for %d rows (at most %d)", first.Search.Transactions, first.Inserted, max)
	}
	again := index(t, db, Options{Paths: []string{dir}, Workers: 2})
	if again.BytesRead != 0 || again.Transactions != 0 || again.Inserted != 0 || again.FilesRead != 0 {
		t.Errorf("an unchanged re-index read %d bytes in %d transactions (%d rows, %d files read)", again.BytesRead,
			again.Transactions, again.Inserted, again.FilesRead)
	}
	if again.Search == nil || again.Search.Transactions != 0 || again.Search.Indexed != 0 {
		t.Errorf("an unchanged re-index wrote the search index: %+v", again.Search)
	}
	t.Logf("first run: %d files, %d rows in %d transactions, search %d rows in %d transactions", first.FilesRead,
		first.Inserted, first.Transactions, first.Search.Indexed, first.Search.Transactions)
}
