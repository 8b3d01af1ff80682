package app

import (
	"context"
	"time"

	"github.com/cortexhq/cortex/ingest"
)

// BackfillParams are the inputs of an event backfill.
type BackfillParams struct {
	// Kinds: skills, mcp, hooks (empty: all).
	Kinds []string
	Since time.Time
	// AfterID continues a previous, truncated run after this row id.
	AfterID int64
	// Limit bounds the rows scanned (0: all).
	Limit  int
	DryRun bool
	// Hostname and Holder identify the caller in the single-flight lock.
	Hostname string
	Holder   string
	Progress func(scanned int64)
}

// Backfill extracts events from rows stored before extraction existed (or
// with it switched off). It runs from the database alone, in bounded
// batches, and is idempotent; a second concurrent run fails with code busy.
func (s *Service) Backfill(ctx context.Context, p BackfillParams) (ingest.BackfillResult, error) {
	opts := ingest.BackfillOptions{Kinds: p.Kinds, Since: p.Since, AfterID: p.AfterID, Limit: p.Limit, DryRun: p.DryRun,
		Hostname: p.Hostname, Holder: p.Holder}
	if p.Progress != nil {
		opts.Progress = func(bp ingest.BackfillProgress) { p.Progress(bp.Scanned) }
	}
	db, err := s.local("skills_backfill")
	if err != nil {
		return ingest.BackfillResult{}, err
	}
	return ingest.Backfill(ctx, db, opts)
}
