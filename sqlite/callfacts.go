package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/cortexhq/cortex/toolcall"
)

// CallFacts is a tool call's derived facts (package toolcall) to store,
// with the version of the rules that derived them.
type CallFacts struct {
	ID int64
	toolcall.Facts
	Version int
}

// factsInputCols are the columns the facts of a call are derived from (see
// scanFactsInput).
const factsInputCols = `tool_name, status, COALESCE(is_error, 0), exit_code, arguments_json, output_preview,
	COALESCE(error_text, '')`

// scanFactsInput reads an id and factsInputCols.
func (db *DB) scanFactsInput(row scanner, id *int64, c *toolcall.Call) error {
	var isErr int
	var exit sql.NullInt64
	if err := row.Scan(id, &c.ToolName, &c.Status, &isErr, &exit, db.packedText(&c.Arguments), db.packedText(&c.Output),
		&c.ErrorText); err != nil {
		return err
	}
	c.IsError, c.ExitCode = isErr == 1, ptrInt64(exit)
	return nil
}

const setFactsSQL = `UPDATE ai_mcp_events SET class = ?, why = ?, op = ?, loads_skill = ?, facts_version = ? WHERE id = ?`

func factsArgs(f CallFacts) []any {
	return []any{f.Class, nullStr(f.Why), f.Op, boolInt(f.LoadsSkill), f.Version, f.ID}
}

// StaleCall is a tool call whose stored facts are missing or of other
// rules, with what they are derived from.
type StaleCall struct {
	ID int64
	toolcall.Call
}

// StaleCallFacts returns up to limit tool calls after id whose stored facts
// are not of the given rules version, by id: what a refresh derives again.
func (db *DB) StaleCallFacts(ctx context.Context, version int, after int64, limit int) ([]StaleCall, error) {
	// The version index finds the stale calls (NULL and other versions
	// sort apart from the current one: see staleIDsSQL); they are then
	// read in id order.
	rows, err := db.query(ctx, `SELECT id, `+factsInputCols+` FROM ai_mcp_events WHERE id IN (`+
		staleIDsSQL(`ai_mcp_events INDEXED BY idx_ai_mcp_events_facts_version`, "", "facts_version")+`) ORDER BY id`,
		staleIDsArgs(version, after, limit)...)
	if err != nil {
		return nil, queryFailed(err, "tool calls")
	}
	defer rows.Close()
	var out []StaleCall
	for rows.Next() {
		var c StaleCall
		if err := db.scanFactsInput(rows, &c.ID, &c.Call); err != nil {
			return nil, queryFailed(err, "tool calls")
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// SetCallFacts stores derived facts of tool calls, in one transaction.
func (db *DB) SetCallFacts(ctx context.Context, facts []CallFacts) error {
	if len(facts) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, setFactsSQL)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, f := range facts {
			if _, err := st.ExecContext(ctx, factsArgs(f)...); err != nil {
				return fmt.Errorf("store call facts: %w", err)
			}
		}
		return nil
	})
}

// CallTextsByID returns the texts of tool calls, by event id.
func (db *DB) CallTextsByID(ctx context.Context, ids []int64) (map[int64]CallTexts, error) {
	out := make(map[int64]CallTexts, len(ids))
	for len(ids) > 0 {
		part := ids[:min(len(ids), 500)]
		ids = ids[len(part):]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := db.query(ctx, `SELECT id, status, exit_code, arguments_json, output_preview,
			COALESCE(error_text, ''), COALESCE(why, '') FROM ai_mcp_events WHERE id IN (`+
			strings.TrimSuffix(strings.Repeat("?,", len(part)), ",")+`)`, args...)
		if err != nil {
			return nil, queryFailed(err, "tool calls")
		}
		for rows.Next() {
			var id int64
			var t CallTexts
			var exit sql.NullInt64
			if err := rows.Scan(&id, &t.Status, &exit, db.packedText(&t.Arguments), db.packedText(&t.Output), &t.ErrorText,
				&t.Why); err != nil {
				rows.Close()
				return nil, queryFailed(err, "tool calls")
			}
			t.ExitCode = ptrInt64(exit)
			out[id] = t
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, queryFailed(err, "tool calls")
		}
	}
	return out, nil
}

// CallWhysByID returns the failure lines (the why derived with the calls'
// facts) of tool calls, by event id: a call without one is left out. It
// reads no argument or output text.
func (db *DB) CallWhysByID(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	for len(ids) > 0 {
		part := ids[:min(len(ids), 500)]
		ids = ids[len(part):]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := db.query(ctx, `SELECT id, why FROM ai_mcp_events WHERE why IS NOT NULL AND why <> '' AND id IN (`+
			strings.TrimSuffix(strings.Repeat("?,", len(part)), ",")+`)`, args...)
		if err != nil {
			return nil, queryFailed(err, "tool calls")
		}
		for rows.Next() {
			var id int64
			var why string
			if err := rows.Scan(&id, &why); err != nil {
				rows.Close()
				return nil, queryFailed(err, "tool calls")
			}
			out[id] = why
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, queryFailed(err, "tool calls")
		}
	}
	return out, nil
}
