package sqlite

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
