package sqlpart

import (
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

// HookCandidateCols are the columns of a hook event as the incident engine
// groups it, scanned by a HookCandidateScan: with its outcome (exit code,
// duration) and whether it printed anything, so that a run without output
// needs no second read.
const HookCandidateCols = `id, COALESCE(log_id, 0), ai_tool, COALESCE(ai_project, ''), COALESCE(ai_session_id, ''), hostname,
	timestamp, COALESCE(last_seen, ''), hook_event, COALESCE(hook_name, ''), COALESCE(hook_source, ''),
	COALESCE(hook_command, ''), status, evidence_kind, metadata_json, exit_code, duration_ms,
	CASE WHEN COALESCE(stdout_preview, '') <> '' OR COALESCE(stderr_preview, '') <> '' THEN 1 ELSE 0 END`

// HookCandidateScan receives one row of HookCandidateCols: scan into
// Dest, then Finish.
type HookCandidateScan struct {
	C              store.HookCandidate
	tool, ts, last string
	output         int
}

// Dest lists the scan destinations; meta receives the metadata JSON and
// exit and duration the exit code and duration (the store's nullable
// string and integer types).
func (s *HookCandidateScan) Dest(meta, exit, duration any) []any {
	c := &s.C
	return []any{&c.ID, &c.LogID, &s.tool, &c.Project, &c.Session, &c.Host, &s.ts, &s.last, &c.Event, &c.Name,
		&c.Source, &c.Command, &c.Status, &c.EvidenceKind, meta, exit, duration, &s.output}
}

// Finish types the scanned columns: parse reads a stored time, meta is the
// decoded metadata, exit and duration the nullable numbers.
func (s *HookCandidateScan) Finish(parse func(string) time.Time, meta map[string]string, exit, duration *int64) store.HookCandidate {
	c := &s.C
	c.Tool, c.Timestamp, c.LastSeen, c.Meta = cortex.Tool(s.tool), parse(s.ts), parse(s.last), meta
	c.ExitCode, c.DurationMS, c.HasOutput = exit, duration, s.output == 1
	return *c
}
