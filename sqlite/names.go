package sqlite

import (
	"context"
)

// RecentSessionIDs returns the ids of the most recently active sessions
// whose id starts with prefix (for shell completion).
func (db *DB) RecentSessionIDs(ctx context.Context, prefix string, limit int) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT ai_session_id FROM ai_sessions WHERE ai_session_id >= ? AND ai_session_id < ?
		GROUP BY ai_session_id ORDER BY max(last_seen) DESC LIMIT ?`, prefix, prefix+"\U0010FFFF", limit)
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
