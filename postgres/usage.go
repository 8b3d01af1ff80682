package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
	"github.com/cortexhq/cortex/store"
)

// SessionUsage returns the token usage of sessions per model, keyed by
// session (the usage pushed with them, ai_token_usage).
func (db *DB) SessionUsage(ctx context.Context, sessions []cortex.Session) (map[store.SessionScope]map[string]cortex.TokenCounts, error) {
	out := map[store.SessionScope]map[string]cortex.TokenCounts{}
	ids := sqlpart.SessionIDs(sessions)
	type row struct {
		key   store.SessionScope
		model string
		c     cortex.TokenCounts
	}
	for start := 0; start < len(ids); start += sqlpart.UsageChunk {
		q, args := sqlpart.SessionUsage(ids[start:min(start+sqlpart.UsageChunk, len(ids))])
		rows, err := db.query(ctx, q, args...)
		got, err := collect(rows, err, "token usage", func(rows pgx.Rows) (row, error) {
			var r row
			var tool string
			err := rows.Scan(append([]any{&tool, &r.key.Session, &r.key.Host, &r.model}, sqlpart.UsageDest(&r.c)...)...)
			r.key.Tool = cortex.Tool(tool)
			return r, err
		})
		if err != nil {
			return nil, err
		}
		for _, r := range got {
			if out[r.key] == nil {
				out[r.key] = map[string]cortex.TokenCounts{}
			}
			out[r.key][r.model] = r.c
		}
	}
	return out, nil
}

// UsageBetween returns the token usage of one session per model between
// two stored times (inclusive): what the session spent in that span.
func (db *DB) UsageBetween(ctx context.Context, s store.SessionScope, from, to string) (map[string]cortex.TokenCounts, error) {
	q, args := sqlpart.UsageBetween(s, from, to)
	type row struct {
		model string
		c     cortex.TokenCounts
	}
	rows, err := db.query(ctx, q, args...)
	got, err := collect(rows, err, "token usage", func(rows pgx.Rows) (row, error) {
		var r row
		return r, rows.Scan(append([]any{&r.model}, sqlpart.UsageDest(&r.c)...)...)
	})
	if err != nil {
		return nil, err
	}
	out := map[string]cortex.TokenCounts{}
	for _, r := range got {
		out[r.model] = r.c
	}
	return out, nil
}

// RecentSessionIDs returns the ids of the most recently active sessions
// whose id starts with prefix (for shell completion).
func (db *DB) RecentSessionIDs(ctx context.Context, prefix string, limit int) ([]string, error) {
	q, args := sqlpart.RecentSessionIDs(prefix, limit)
	rows, err := db.query(ctx, q, args...)
	return collect(rows, err, "sessions", func(rows pgx.Rows) (string, error) {
		var s string
		return s, rows.Scan(&s)
	})
}
