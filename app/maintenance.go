package app

import (
	"bytes"
	"context"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/sqlite"
)

// Rescan re-redacts everything stored with the current rules (see
// ingest.Rescan).
func (s *Service) Rescan(ctx context.Context, dryRun bool, holder string, progress func(int64)) (ingest.RescanResult, error) {
	db, err := s.local("redact_rescan")
	if err != nil {
		return ingest.RescanResult{}, err
	}
	return ingest.Rescan(ctx, db, ingest.RescanOptions{DryRun: dryRun, Holder: holder, Hostname: s.host(), Progress: progress})
}

// PurgeParams select what Purge deletes: exactly one of Session, Source
// and Match.
type PurgeParams struct {
	Session, Source, Match, Tool string
	DryRun                       bool
}

// minPurgeMatch is the shortest text a match purge accepts: a shorter one
// would match far more than the caller means.
const minPurgeMatch = 8

// Purge deletes rows (and what derives from them) by session, source file
// or contained text.
func (s *Service) Purge(ctx context.Context, p PurgeParams) (sqlite.PurgeResult, error) {
	n := 0
	for _, v := range []string{p.Session, p.Source, p.Match} {
		if v != "" {
			n++
		}
	}
	if n != 1 {
		return sqlite.PurgeResult{}, cortex.Errorf(cortex.CodeInvalid, "purge: give exactly one of session, source and match")
	}
	tool := cortex.Tool(p.Tool)
	if err := checkTool(tool); err != nil {
		return sqlite.PurgeResult{}, err
	}
	sel := sqlite.PurgeSelector{Session: p.Session, Source: p.Source, Tool: tool}
	var decode func([]byte) ([]byte, error)
	if p.Match != "" {
		if len(p.Match) < minPurgeMatch {
			return sqlite.PurgeResult{}, cortex.Errorf(cortex.CodeInvalid, "purge: match must be at least %d characters", minPurgeMatch)
		}
		codec, err := rawcodec.New()
		if err != nil {
			return sqlite.PurgeResult{}, err
		}
		decode = codec.Decode
		needle := []byte(p.Match)
		sel.Match = func(msg string, raw []byte) bool {
			return strings.Contains(msg, p.Match) || bytes.Contains(raw, needle)
		}
	}
	db, err := s.local("purge")
	if err != nil {
		return sqlite.PurgeResult{}, err
	}
	return db.Purge(ctx, sel, decode, p.DryRun)
}
