package app

import (
	"context"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/incident"
	"github.com/cortexhq/cortex/llm"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/store"
)

// Store is what the service reads (and, for the LLM audit, writes): the
// incident engine's reads plus the listings and viewers of the actions.
// sqlite.DB (a laptop's store) and postgres.DB (a team's store) implement
// it; the actions, and so every surface, behave the same on either.
type Store interface {
	incident.Store
	llm.Audit

	Status(ctx context.Context) (cortex.Status, error)
	Search(ctx context.Context, p cortex.SearchParams) (cortex.SearchResult, error)
	FindSessions(ctx context.Context, id string, tool cortex.Tool, host string) ([]cortex.Session, error)
	TranscriptRows(ctx context.Context, q cortex.TranscriptQuery) (cortex.TranscriptPage, error)
	SessionEvents(ctx context.Context, s store.SessionScope, from, to time.Time) (store.TranscriptEvents, error)
	Row(ctx context.Context, id int64, maxText int) (cortex.RowDetail, []byte, error)
	SkillEvents(ctx context.Context, p cortex.SkillEventParams) (cortex.EventList[cortex.SkillEventRow], error)
	ToolEvents(ctx context.Context, p cortex.ToolEventParams) (cortex.EventList[cortex.ToolEventRow], error)
	HookEvents(ctx context.Context, p cortex.HookEventParams) (cortex.EventList[cortex.HookEventRow], error)
	Invocations(ctx context.Context, p cortex.InvocationParams) (cortex.InvocationList, error)
	Logs(ctx context.Context, p store.LogParams) (store.LogList, error)

	// The skill lifecycle's reads: which body version each load showed,
	// a skill's loads with a body, the bodies, and the prompt a run
	// answered.
	SkillEventBodies(ctx context.Context, ids []int64) (map[int64]string, error)
	SkillLoads(ctx context.Context, names []string, limit int) ([]store.SkillLoad, error)
	SkillBodies(ctx context.Context, shas []string, withText bool) (map[string]store.SkillBody, error)
	LastPrompt(ctx context.Context, s store.SessionScope, t time.Time) (store.UserAct, bool, error)

	// What sessions and incidents cost, and the hints of an empty answer:
	// the token usage of sessions and of a span of one session (per
	// model), the newest stored row, and the most recently active session
	// ids with a prefix (shell completion).
	SessionUsage(ctx context.Context, sessions []cortex.Session) (map[store.SessionScope]map[string]cortex.TokenCounts, error)
	UsageBetween(ctx context.Context, s store.SessionScope, from, to string) (map[string]cortex.TokenCounts, error)
	NewestRow(ctx context.Context) (string, error)
	RecentSessionIDs(ctx context.Context, prefix string, limit int) ([]string, error)
}

// local returns the store as the laptop's SQLite store, for the actions
// that write what only a laptop has (event backfill, hook configuration):
// a team store receives those through cortex push.
func (s *Service) local(action string) (*sqlite.DB, error) {
	if db, ok := s.DB.(*sqlite.DB); ok {
		return db, nil
	}
	return nil, cortex.Errorf(cortex.CodeUnavailable,
		"%s runs on the local store (cortex --db); a team store receives its data through cortex push", action)
}
