package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
)

// claimRoles are the rows that carry claims (package claim: the agent's
// prose and reasoning), as the version index's condition spells them.
const claimRoles = `ai_role IN ('assistant', 'thinking')`

// ClaimsCurrent reports whether every assistant row's stored claims
// (package claim) were read by the given rules version: only then does
// SessionClaimRows return every row that claims something.
func (db *DB) ClaimsCurrent(ctx context.Context, version int) (bool, error) {
	var stale int
	err := db.r.QueryRowContext(ctx, staleExistsSQL(`logs INDEXED BY idx_logs_claim_version`, claimRoles,
		"claim_version"), version, version).Scan(&stale)
	if err != nil {
		return false, queryFailed(err, "rows")
	}
	return stale == 0, nil
}

// SessionClaimRows returns the assistant rows of a session in [from, to]
// whose stored claims say something about tools (claim.Tool; valid when
// ClaimsCurrent reports true), in time order, at most limit.
func (db *DB) SessionClaimRows(ctx context.Context, s SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error) {
	return db.evidence(ctx)(db.query(ctx, `SELECT `+evidenceCols+` FROM logs INDEXED BY idx_logs_claims
		WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND timestamp <= ? AND claim > 0
		AND (claim & ?) > 0 AND ai_role = 'assistant' ORDER BY timestamp, id LIMIT ?`,
		s.Session, string(s.Tool), s.Host, cortex.FormatTime(from), cortex.FormatTime(to), int(claim.Tool), limit))
}

// claimWindowSQL is one window of SessionClaimsMany.
const claimWindowSQL = `SELECT ? AS w, id, timestamp, COALESCE(ai_agent_id, ''), claim FROM logs INDEXED BY idx_logs_claims
	WHERE ai_session_id = ? AND ai_tool = ? AND hostname = ? AND timestamp >= ? AND timestamp <= ? AND claim > 0
	AND (claim & ?) > 0 AND ` + claimRoles

// SessionClaimsMany returns, for many windows, the assistant rows whose
// stored claims hold a kind about the dialogue (claim.Dialogue: the agent
// conceding, asking, saying it is done), in time order, at most limit per
// window (the first): no texts. Valid when ClaimsCurrent reports true.
func (db *DB) SessionClaimsMany(ctx context.Context, ws []CallWindow, limit int) ([][]ClaimRow, error) {
	return readWindows(ctx, db, ws, limit, claimWindowSQL, "claims", func(w CallWindow) []any {
		from, to := "", "\xff"
		if !w.From.IsZero() {
			from = cortex.FormatTime(w.From)
		}
		if !w.To.IsZero() {
			to = cortex.FormatTime(w.To)
		}
		return []any{w.Scope.Session, string(w.Scope.Tool), w.Scope.Host, from, to, int(claim.Dialogue)}
	}, func(rows *sql.Rows) (int, ClaimRow, error) {
		var w int
		var c ClaimRow
		var ts string
		err := rows.Scan(&w, &c.LogID, &ts, &c.Thread, &c.Kinds)
		c.Timestamp = parseStoredTime(ts)
		return w, c, err
	}, func(c ClaimRow) (time.Time, int64) { return c.Timestamp, c.LogID })
}

// StaleClaim is a row of the agent's (prose or reasoning) whose stored
// claims are missing or of other rules, with its role and text.
type StaleClaim struct {
	ID   int64
	Role string
	Text string
}

// ClaimReading is an assistant row's claims to store.
type ClaimReading struct {
	ID      int64
	Kinds   claim.Kinds
	Version int
}

// StaleClaims returns up to limit assistant rows after id whose stored
// claims are not of the given rules version, by id: what a refresh reads
// again.
func (db *DB) StaleClaims(ctx context.Context, version int, after int64, limit int) ([]StaleClaim, error) {
	// The version index finds the stale rows; they are then read in id
	// order (see StaleVoices).
	rows, err := db.query(ctx, `SELECT id, ai_role, `+textCols("")+` FROM logs WHERE id IN (`+
		staleIDsSQL(`logs INDEXED BY idx_logs_claim_version`, claimRoles, "claim_version")+`) ORDER BY id`,
		staleIDsArgs(version, after, limit)...)
	return collectTexts(ctx, db, rows, err, "rows", func(rows *sql.Rows, t *textScan) (StaleClaim, int64, error) {
		var c StaleClaim
		err := rows.Scan(append([]any{&c.ID, &c.Role}, t.dest()...)...)
		return c, c.ID, err
	}, func(c *StaleClaim, text string) { c.Text = text })
}

// SetClaims stores assistant rows' claims, in one transaction.
func (db *DB) SetClaims(ctx context.Context, readings []ClaimReading) error {
	if len(readings) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `UPDATE logs SET claim = ?, claim_version = ? WHERE id = ? AND `+claimRoles)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range readings {
			if _, err := st.ExecContext(ctx, int64(r.Kinds), r.Version, r.ID); err != nil {
				return fmt.Errorf("store claims: %w", err)
			}
		}
		return nil
	})
}

// FailedCallSessions returns the sessions with at least min failed calls
// (is_error) in f's range and scope, each with its first and last failure
// there, the one with the newest failure first, at most f.Limit: where the
// agent may have looped on a failure. It reads the failed calls' time
// index alone.
func (db *DB) FailedCallSessions(ctx context.Context, f CandidateFilter, min int) ([]FailedSpan, error) {
	w := candidateWhere(f, "")
	rows, err := db.query(ctx, `SELECT ai_tool, hostname, ai_session_id, min(timestamp), max(timestamp)
		FROM ai_mcp_events INDEXED BY idx_ai_mcp_events_error_time
		WHERE is_error = 1 AND ai_session_id IS NOT NULL`+w.sql()+`
		GROUP BY ai_tool, hostname, ai_session_id HAVING count(*) >= ? ORDER BY max(timestamp) DESC LIMIT ?`,
		append(w.args, min, f.Limit)...)
	if err != nil {
		return nil, queryFailed(err, "tool calls")
	}
	defer rows.Close()
	var out []FailedSpan
	for rows.Next() {
		var s FailedSpan
		var tool, first, last string
		if err := rows.Scan(&tool, &s.Host, &s.Session, &first, &last); err != nil {
			return nil, queryFailed(err, "tool calls")
		}
		s.Tool, s.First, s.Last = cortex.Tool(tool), parseStoredTime(first), parseStoredTime(last)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, queryFailed(err, "tool calls")
	}
	return out, nil
}

// ConcessionSessions returns the sessions in f's range and scope where the
// agent conceded a mistake, granted the user a point or noted their
// pushback in its reasoning (claim.Concession), the newest first, at most f.Limit: what the user said
// there was a correction, whatever its words. Valid when ClaimsCurrent
// reports true.
func (db *DB) ConcessionSessions(ctx context.Context, f CandidateFilter) ([]SessionScope, error) {
	w := candidateWhere(f, "")
	return scanScopes(db.query(ctx, `SELECT ai_tool, hostname, ai_session_id FROM logs INDEXED BY idx_logs_concessions
		WHERE (claim & 100) > 0 AND ai_session_id IS NOT NULL`+w.sql()+`
		GROUP BY ai_tool, hostname, ai_session_id ORDER BY max(timestamp) DESC LIMIT ?`, append(w.args, f.Limit)...))
}

// scanScopes reads (agent, host, session) rows.
func scanScopes(rows *sql.Rows, err error) ([]SessionScope, error) {
	if err != nil {
		return nil, queryFailed(err, "sessions")
	}
	defer rows.Close()
	var out []SessionScope
	for rows.Next() {
		var s SessionScope
		var tool string
		if err := rows.Scan(&tool, &s.Host, &s.Session); err != nil {
			return nil, queryFailed(err, "sessions")
		}
		s.Tool = cortex.Tool(tool)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, queryFailed(err, "sessions")
	}
	return out, nil
}
