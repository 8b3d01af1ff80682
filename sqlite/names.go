package sqlite

import (
	"context"

	"github.com/cortexhq/cortex/internal/sqlpart"
)

// RecentSessionIDs returns the ids of the most recently active sessions
// whose id starts with prefix (for shell completion).
func (db *DB) RecentSessionIDs(ctx context.Context, prefix string, limit int) ([]string, error) {
	q, args := sqlpart.RecentSessionIDs(prefix, limit)
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, queryFailed(err, "sessions")
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, queryFailed(err, "sessions")
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
