package ingest

import (
	"context"
	"errors"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/cortexhq/cortex/sqlite"
)

// SearchStore is a store whose search index is written behind its rows
// (see sqlite.DB.IndexSearch).
type SearchStore interface {
	IndexSearch(ctx context.Context, progress func(sqlite.SearchProgress)) (sqlite.SearchProgress, error)
}

// SearchSummary reports the search index's work during an Index run.
type SearchSummary struct {
	// Indexed, Reindexed and Removed count rows added to the index,
	// indexed again (changed) and taken out (deleted).
	Indexed   int64 `json:"rows_indexed"`
	Reindexed int64 `json:"rows_reindexed,omitempty"`
	Removed   int64 `json:"rows_removed,omitempty"`
	// Bytes is the text indexed.
	Bytes int64 `json:"text_bytes"`
	// Transactions counts the index's write transactions.
	Transactions int `json:"transactions"`
	// SearchableAfter is when every stored row was searchable, from the
	// start of the run (rows are stored first: see Summary.Elapsed).
	SearchableAfter Duration `json:"searchable_after"`
	// Pending counts rows still not searchable (the run was cut short).
	Pending int64 `json:"not_yet_searchable,omitempty"`
	// MergeTransactions counts the index's merge steps after catch-ups
	// and Segments its segments at the end (a common word's search seeks
	// each).
	MergeTransactions int `json:"merge_transactions,omitempty"`
	Segments          int `json:"segments,omitempty"`
	// ReclaimedBytes is what the search file gave back to the file system
	// after catch-ups (the free pages merges left).
	ReclaimedBytes int64 `json:"reclaimed_bytes,omitempty"`
}

// searchAlong indexes rows for search while ingest stores them: on the
// other cores, behind the row writer, woken after each commit. finish
// stops it after a last catch-up (every row stored is then searchable,
// unless ctx ended) and returns what it did.
type searchAlong struct {
	store    SearchStore
	progress func(sqlite.SearchProgress)
	wake     chan struct{}
	done     chan struct{}
	result   chan searchResult
	lazy     bool
}

type searchResult struct {
	sum SearchSummary
	err error
}

func startSearch(ctx context.Context, store SearchStore, start time.Time, now func() time.Time, progress func(sqlite.SearchProgress)) *searchAlong {
	s := &searchAlong{store: store, progress: progress, wake: make(chan struct{}, 1), done: make(chan struct{}),
		result: make(chan searchResult, 1)}
	// Profiles tell its work apart by the label stage=search (its
	// goroutines inherit it; the parsers are stage=parse).
	go pprof.Do(ctx, pprof.Labels("stage", "search"), func(ctx context.Context) {
		var sum SearchSummary
		add := func(p sqlite.SearchProgress) {
			sum.Indexed += p.Indexed
			sum.Reindexed += p.Reindexed
			sum.Removed += p.Removed
			sum.Bytes += p.Bytes
			sum.Transactions += p.Batches
			sum.MergeTransactions += p.MergeSteps
			sum.ReclaimedBytes += p.Reclaimed
			if p.Segments > 0 {
				sum.Segments = p.Segments
			}
		}
		for {
			finishing := false
			select {
			case <-s.wake:
			case <-s.done:
				finishing = true
			case <-ctx.Done():
				s.result <- searchResult{sum, nil}
				return
			}
			p, err := store.IndexSearch(ctx, s.progress)
			add(p)
			if err != nil && !errors.Is(err, context.Canceled) {
				s.result <- searchResult{sum, err}
				return
			}
			if finishing {
				sum.Pending = p.Pending
				sum.SearchableAfter = Duration(now().Sub(start))
				s.result <- searchResult{sum, nil}
				return
			}
		}
	})
	return s
}

// wakeOnlyAtEnd makes the indexer wait for finish.
func (s *searchAlong) wakeOnlyAtEnd() { s.lazy = true }

// stored tells the indexer that rows were committed.
func (s *searchAlong) stored() {
	if s == nil || s.lazy {
		return
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// finish makes every stored row searchable and returns the summary.
func (s *searchAlong) finish() (SearchSummary, error) {
	close(s.done)
	r := <-s.result
	return r.sum, r.err
}

// searchAlong reports whether the search index is written while the rows
// are (SearchAlong, else: more than two CPUs, one left for it).
func (o *Options) searchAlong() bool {
	switch o.SearchAlong {
	case SearchConcurrent:
		return true
	case SearchAfter:
		return false
	}
	return runtime.NumCPU() > 2
}
