package sqlite

import "github.com/cortexhq/cortex"

// OnRead sets a function that sees the engine's reads (candidate scans and
// per-session reads) before they run, for tests outside the package.
func OnRead(db *DB, f func(query string, args []any)) { db.onRead = f }

// Explain returns the query plan of a read (its detail lines).
func Explain(db *DB, query string, args []any) ([]string, error) {
	rows, err := db.r.Query(`EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			return nil, err
		}
		out = append(out, detail)
	}
	return out, rows.Err()
}

// SetReadBatches sets how many queries of one batched read run at once
// and the most sessions one reads (see eachChunk).
func SetReadBatches(db *DB, par, batch int) { db.readPar, db.batch = par, batch }

// SessionScopesOf returns every session that has user, skill, tool or
// hook events.
func SessionScopesOf(db *DB) ([]SessionScope, error) {
	rows, err := db.r.Query(`SELECT ai_tool, ai_session_id, hostname FROM ai_user_events WHERE ai_session_id IS NOT NULL
		UNION SELECT ai_tool, ai_session_id, hostname FROM ai_skill_events WHERE ai_session_id IS NOT NULL
		UNION SELECT ai_tool, ai_session_id, hostname FROM ai_mcp_events WHERE ai_session_id IS NOT NULL
		UNION SELECT ai_tool, ai_session_id, hostname FROM ai_hook_events WHERE ai_session_id IS NOT NULL
		ORDER BY 2, 1, 3`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []SessionScope
	for rows.Next() {
		var s SessionScope
		var tool string
		if err := rows.Scan(&tool, &s.Session, &s.Host); err != nil {
			return nil, err
		}
		s.Tool = cortex.Tool(tool)
		out = append(out, s)
	}
	return out, rows.Err()
}
