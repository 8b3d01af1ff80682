package sqlite

import "strings"

// Rows whose stored derivation (a voice reading, a call's facts, an
// assistant row's claims) is of other rules than this binary's: its
// version column is NULL, lower or higher. Each is read as three seeks of
// the version index, one per side: SQLite plans an OR of them as a walk of
// the whole index, which on a 5M-row store read thousands of pages at
// every write-open and every MCP answer to find nothing.

// staleSides are the three conditions on a version column v (each but
// the first takes the current version as its argument).
var staleSides = [3]string{"v IS NULL", "v < ?", "v > ?"}

// staleSelects returns, per side, "SELECT what FROM from WHERE where AND
// side" for the version column col (where may be "").
func staleSelects(what, from, where, col string) []string {
	parts := make([]string, len(staleSides))
	for i, side := range staleSides {
		parts[i] = `SELECT ` + what + ` FROM ` + from + ` WHERE ` + conj(where, strings.Replace(side, "v", col, 1))
	}
	return parts
}

// staleExistsSQL returns a statement whose one value is 1 when a row of
// from (a table with its INDEXED BY clause) that matches where (a
// condition, or "") has a version column col other than the argument
// (given twice).
func staleExistsSQL(from, where, col string) string {
	parts := staleSelects("1", from, where, col)
	for i, p := range parts {
		parts[i] = `EXISTS(` + p + `)`
	}
	return `SELECT ` + strings.Join(parts, " OR ")
}

// staleIDsSQL returns a statement of the ids (of table rows in id order,
// at most a limit) of from's rows matching where whose version column col
// is other than the current version, after an id. Arguments: after,
// version, after, version, after, limit.
func staleIDsSQL(from, where, col string) string {
	parts := staleSelects("id", from, where, col)
	return `SELECT id FROM (` + strings.Join(parts, " AND id > ? UNION ALL ") + ` AND id > ?) ORDER BY id LIMIT ?`
}

// staleIDsArgs are the arguments of staleIDsSQL.
func staleIDsArgs(version int, after int64, limit int) []any {
	return []any{after, version, after, version, after, limit}
}

func conj(a, b string) string {
	if a == "" {
		return b
	}
	return a + " AND " + b
}
