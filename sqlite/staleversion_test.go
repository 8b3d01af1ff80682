package sqlite

import (
	"context"
	"strings"
	"testing"
)

// Work-count gate: the checks and reads of stale derivations seek the
// version index on each side of the current version; none walks it (an OR
// of the sides did, reading the whole index at every write-open).
func TestStaleVersionReadsSeek(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	for _, c := range []struct {
		from, where, col string
	}{
		{`ai_user_events INDEXED BY idx_ai_user_events_voice_version`, "", "voice_version"},
		{`ai_mcp_events INDEXED BY idx_ai_mcp_events_facts_version`, "", "facts_version"},
		{`logs INDEXED BY idx_logs_claim_version`, claimRoles, "claim_version"},
	} {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{staleExistsSQL(c.from, c.where, c.col), []any{3, 3}},
			{staleIDsSQL(c.from, c.where, c.col), staleIDsArgs(3, 10, 100)},
		} {
			rows, err := db.r.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q.sql, q.args...)
			if err != nil {
				t.Fatalf("%s: %v", q.sql, err)
			}
			var seeks int
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
				if strings.HasPrefix(detail, "SCAN ") && !strings.HasPrefix(detail, "SCAN CONSTANT ROW") {
					t.Errorf("%s walks a table or index: %s", c.col, detail)
				}
				if strings.HasPrefix(detail, "SEARCH ") && strings.Contains(detail, c.col) {
					seeks++
				}
			}
			rows.Close()
			if seeks != len(staleSides) {
				t.Errorf("%s: %d seeks of the version index, want %d: %s", c.col, seeks, len(staleSides), strings.Join(plan, "; "))
			}
		}
	}
}
