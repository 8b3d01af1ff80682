package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
)

// StartInvocation writes the start record of an LLM invocation (status
// running), or the whole record of an attempt that ends at once (a denial
// or a dry run: FinishedAt set).
func (db *DB) StartInvocation(ctx context.Context, inv cortex.Invocation) error {
	err := db.write(ctx, func(tx *sql.Tx) error { return insertInvocation(ctx, tx, inv) })
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot write the LLM audit record: %v", err)
	}
	return nil
}

// ReserveInvocation lets decide choose the record of a new invocation
// from the calls admitted since (status running, success, error,
// timeout, cancelled or interrupted; oldest first; fields id, started_at,
// finished_at, action, status, hostname, pid), and writes it, in one
// write transaction: the database's write lock makes the decision and
// the record atomic across processes, so limits hold for every process
// sharing the store. decide may run more than once (busy retries).
func (db *DB) ReserveInvocation(ctx context.Context, since time.Time, decide func([]cortex.Invocation) cortex.Invocation) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		// Refusals and dry runs decide nothing: only calls that ran (or
		// run) are read, through the (status, started_at) index.
		rows, err := tx.QueryContext(ctx, `SELECT id, started_at, finished_at, action, status, hostname, pid,
			COALESCE(provider_pid, 0), COALESCE(provider_dir, '')
			FROM llm_invocations WHERE status IN (?,?,?,?,?,?) AND started_at >= ? ORDER BY started_at, id`,
			cortex.InvocationRunning, cortex.InvocationSuccess, cortex.InvocationError, cortex.InvocationTimeout,
			cortex.InvocationCancelled, cortex.InvocationInterrupted, cortex.FormatTime(since))
		if err != nil {
			return err
		}
		var hist []cortex.Invocation
		for rows.Next() {
			var inv cortex.Invocation
			var started string
			var finished sql.NullString
			if err := rows.Scan(&inv.ID, &started, &finished, &inv.Action, &inv.Status, &inv.Hostname, &inv.PID,
				&inv.ProviderPID, &inv.ProviderDir); err != nil {
				rows.Close()
				return err
			}
			inv.StartedAt = parseStoredTime(started)
			if finished.Valid {
				t := parseStoredTime(finished.String)
				inv.FinishedAt = &t
			}
			hist = append(hist, inv)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		return insertInvocation(ctx, tx, decide(hist))
	})
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot write the LLM audit record: %v", err)
	}
	return nil
}

func insertInvocation(ctx context.Context, tx *sql.Tx, inv cortex.Invocation) error {
	var counts, meta, finished any
	if inv.FinishedAt != nil {
		finished = cortex.FormatTime(*inv.FinishedAt)
	}
	if inv.Evidence != nil {
		b, _ := json.Marshal(inv.Evidence)
		counts = string(b)
	}
	if len(inv.Metadata) > 0 {
		b, err := json.Marshal(inv.Metadata)
		if err != nil {
			return fmt.Errorf("encode invocation metadata: %w", err)
		}
		meta = string(b)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO llm_invocations(id, started_at, finished_at, duration_ms, output_bytes, caller_surface,
		action, provider, model, program, incident_id, ai_tool, ai_project, ai_session_id, evidence_counts_json, prompt_bytes, status,
		error, metadata_json, hostname, pid)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		inv.ID, cortex.FormatTime(inv.StartedAt), finished, nullInt64(inv.DurationMS), nullInt64(inv.OutputBytes), inv.CallerSurface,
		inv.Action, inv.Provider, nullStr(inv.Model), nullStr(inv.Program), nullStr(inv.IncidentID), nullStr(string(inv.Tool)),
		nullStr(inv.Project), nullStr(inv.Session), counts, inv.PromptBytes, inv.Status, nullStr(inv.Error), meta, inv.Hostname, inv.PID)
	return err
}

// FinishInvocation completes an invocation's audit record. It fails when
// the record does not exist.
func (db *DB) FinishInvocation(ctx context.Context, f cortex.InvocationFinish) error {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE llm_invocations SET finished_at = ?, duration_ms = ?, status = ?,
			error = COALESCE(?, error), output_bytes = COALESCE(?, output_bytes) WHERE id = ?`,
			cortex.FormatTime(f.FinishedAt), f.DurationMS, f.Status, nullStr(f.Error), nullInt64(f.OutputBytes), f.ID)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot write the LLM audit record: %v", err)
	}
	if n == 0 {
		return cortex.Errorf(cortex.CodeNotFound, "no LLM invocation %q to finish", f.ID)
	}
	return nil
}

// InterruptInvocations marks the invocations of host left running that
// running reports as over (their process is gone, and so is any provider
// process they left) as interrupted, and returns how many it marked.
// running sees id, pid, provider_pid and provider_dir.
func (db *DB) InterruptInvocations(ctx context.Context, host string, running func(cortex.Invocation) bool) (int64, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, pid, COALESCE(provider_pid, 0), COALESCE(provider_dir, '')
		FROM llm_invocations WHERE status = ? AND hostname = ?`, cortex.InvocationRunning, host)
	if err != nil {
		return 0, queryFailed(err, "LLM invocations")
	}
	var dead []string
	for rows.Next() {
		inv := cortex.Invocation{Hostname: host, Status: cortex.InvocationRunning}
		if err := rows.Scan(&inv.ID, &inv.PID, &inv.ProviderPID, &inv.ProviderDir); err != nil {
			rows.Close()
			return 0, queryFailed(err, "LLM invocations")
		}
		if !running(inv) {
			dead = append(dead, inv.ID)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(dead) == 0 {
		return 0, err
	}
	var n int64
	now := cortex.FormatTime(db.now())
	err = db.write(ctx, func(tx *sql.Tx) error {
		n = 0
		for _, id := range dead {
			res, err := tx.ExecContext(ctx, `UPDATE llm_invocations SET status = ?, finished_at = ?,
				error = COALESCE(error, 'the process running it ended before it finished') WHERE id = ? AND status = ?`,
				cortex.InvocationInterrupted, now, id, cortex.InvocationRunning)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += k
		}
		return nil
	})
	if err != nil {
		return 0, cortex.WrapError(cortex.CodeUnavailable, err, "cannot update the LLM audit: %v", err)
	}
	return n, nil
}

// AttachProvider records the provider process (group) and credential
// folder of a running invocation.
func (db *DB) AttachProvider(ctx context.Context, id string, pid int, dir string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE llm_invocations SET provider_pid = ?, provider_dir = ? WHERE id = ?`, pid, nullStr(dir), id)
		return err
	})
	if err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot write the LLM audit record: %v", err)
	}
	return nil
}

// Invocations lists audited LLM invocations, newest first. Limit must be
// clamped.
func (db *DB) Invocations(ctx context.Context, p cortex.InvocationParams) (cortex.InvocationList, error) {
	w := part(sqlpart.Invocations(p))
	res, err := listRows(ctx, db.r, "LLM invocations", `SELECT id, started_at, finished_at, duration_ms, caller_surface, action, provider,
		COALESCE(model, ''), COALESCE(program, ''), COALESCE(incident_id, ''), COALESCE(ai_tool, ''), COALESCE(ai_project, ''),
		COALESCE(ai_session_id, ''), evidence_counts_json, COALESCE(prompt_bytes, 0), output_bytes, status, COALESCE(error, ''),
		metadata_json, hostname, pid FROM llm_invocations WHERE 1=1`+w.sql()+` ORDER BY started_at DESC, id DESC LIMIT ?`,
		w.args, p.Limit, scanInvocation, sqlpart.InvocationCursor)
	return cortex.InvocationList{Invocations: res.Events, Total: res.Total, Truncated: res.Truncated, Next: res.Next}, err
}

func scanInvocation(rows *sql.Rows) (cortex.Invocation, error) {
	var inv cortex.Invocation
	var started, tool string
	var finished, counts, meta sql.NullString
	var duration, output sql.NullInt64
	err := rows.Scan(&inv.ID, &started, &finished, &duration, &inv.CallerSurface, &inv.Action, &inv.Provider, &inv.Model,
		&inv.Program, &inv.IncidentID, &tool, &inv.Project, &inv.Session, &counts, &inv.PromptBytes, &output, &inv.Status,
		&inv.Error, &meta, &inv.Hostname, &inv.PID)
	if err != nil {
		return inv, err
	}
	inv.StartedAt, inv.Tool = parseStoredTime(started), cortex.Tool(tool)
	if finished.Valid {
		t := parseStoredTime(finished.String)
		inv.FinishedAt = &t
	}
	inv.DurationMS, inv.OutputBytes = ptrInt64(duration), ptrInt64(output)
	if counts.Valid {
		var c cortex.EvidenceCounts
		if json.Unmarshal([]byte(counts.String), &c) == nil {
			inv.Evidence = &c
		}
	}
	if meta.Valid {
		_ = json.Unmarshal([]byte(meta.String), &inv.Metadata)
	}
	return inv, nil
}
