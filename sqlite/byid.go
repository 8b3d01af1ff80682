package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
)

// idChunk bounds the ids bound in one IN list.
const idChunk = 500

// marks returns n comma-separated SQL placeholders.
func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// idArgs returns ids as query arguments.
func idArgs(ids []int64) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}

// readByIDs reads the rows of selectFrom ("SELECT cols FROM table") whose
// id is in ids, idChunk ids per query, and returns them ordered by key
// (a stored timestamp: one fixed-width UTC form, so string order is time
// order) then id. Unknown ids are skipped.
func readByIDs[T any](ctx context.Context, db *sql.DB, what, selectFrom string, ids []int64,
	scan func(*sql.Rows) (T, error), key func(T) (string, int64)) ([]T, error) {
	var out []T
	for len(ids) > 0 {
		n := min(len(ids), idChunk)
		rows, err := db.QueryContext(ctx, selectFrom+` WHERE id IN (`+marks(n)+`)`, idArgs(ids[:n])...)
		if err != nil {
			return nil, queryFailed(err, what)
		}
		for rows.Next() {
			r, err := scan(rows)
			if err != nil {
				rows.Close()
				return nil, queryFailed(err, what)
			}
			out = append(out, r)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, queryFailed(err, what)
		}
		ids = ids[n:]
	}
	slices.SortFunc(out, func(a, b T) int {
		at, aid := key(a)
		bt, bid := key(b)
		if c := strings.Compare(at, bt); c != 0 {
			return c
		}
		return cmp.Compare(aid, bid)
	})
	return out, nil
}

// collect scans every row of a query with scan (what names the rows in
// errors) and closes it.
func collect[T any](rows *sql.Rows, err error, what string, scan func(*sql.Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, queryFailed(err, what)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, queryFailed(err, what)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, queryFailed(err, what)
	}
	return out, nil
}
