package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
)

// The LLM audit (llm.Audit) of assessments run against the team store.

// llmLock is the advisory lock key that makes a reservation (read the
// admitted calls, write the new record) atomic across processes.
const llmLock = 0x6c6c6d // "llm"

func auditFailed(err error) error {
	return cortex.WrapError(cortex.CodeUnavailable, err, "cannot write the LLM audit record: %v", err)
}

// StartInvocation writes the start record of an LLM invocation, or the
// whole record of an attempt that ends at once.
func (db *DB) StartInvocation(ctx context.Context, inv cortex.Invocation) error {
	if err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error { return insertInvocation(ctx, tx, inv) }); err != nil {
		return auditFailed(err)
	}
	return nil
}

// ReserveInvocation lets decide choose the record of a new invocation from
// the calls admitted since, and writes it, in one transaction holding an
// advisory lock: limits hold for every process sharing the store.
func (db *DB) ReserveInvocation(ctx context.Context, since time.Time, decide func([]cortex.Invocation) cortex.Invocation) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, llmLock); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, started_at, finished_at, action, status, hostname, pid,
			COALESCE(provider_pid, 0), COALESCE(provider_dir, '')
			FROM llm_invocations WHERE status IN ($1,$2,$3,$4,$5,$6) AND started_at >= $7 ORDER BY started_at, id`,
			cortex.InvocationRunning, cortex.InvocationSuccess, cortex.InvocationError, cortex.InvocationTimeout,
			cortex.InvocationCancelled, cortex.InvocationInterrupted, cortex.FormatTime(since))
		hist, err := collect(rows, err, "LLM invocations", func(rows pgx.Rows) (cortex.Invocation, error) {
			var inv cortex.Invocation
			var started string
			var finished *string
			err := rows.Scan(&inv.ID, &started, &finished, &inv.Action, &inv.Status, &inv.Hostname, &inv.PID,
				&inv.ProviderPID, &inv.ProviderDir)
			inv.StartedAt = parseStoredTime(started)
			if finished != nil {
				t := parseStoredTime(*finished)
				inv.FinishedAt = &t
			}
			return inv, err
		})
		if err != nil {
			return err
		}
		return insertInvocation(ctx, tx, decide(hist))
	})
	if err != nil {
		return auditFailed(err)
	}
	return nil
}

func insertInvocation(ctx context.Context, tx pgx.Tx, inv cortex.Invocation) error {
	var counts, meta, finished *string
	if inv.FinishedAt != nil {
		f := cortex.FormatTime(*inv.FinishedAt)
		finished = &f
	}
	if inv.Evidence != nil {
		b, _ := json.Marshal(inv.Evidence)
		s := string(b)
		counts = &s
	}
	if len(inv.Metadata) > 0 {
		b, err := json.Marshal(inv.Metadata)
		if err != nil {
			return fmt.Errorf("encode invocation metadata: %w", err)
		}
		s := string(b)
		meta = &s
	}
	_, err := tx.Exec(ctx, rebind(`INSERT INTO llm_invocations(id, started_at, finished_at, duration_ms, output_bytes, caller_surface,
		action, provider, model, program, incident_id, ai_tool, ai_project, ai_session_id, evidence_counts_json, prompt_bytes, status,
		error, metadata_json, hostname, pid)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`),
		inv.ID, cortex.FormatTime(inv.StartedAt), finished, inv.DurationMS, inv.OutputBytes, inv.CallerSurface,
		inv.Action, inv.Provider, nullStr(inv.Model), nullStr(inv.Program), nullStr(inv.IncidentID), nullStr(string(inv.Tool)),
		nullStr(inv.Project), nullStr(inv.Session), counts, inv.PromptBytes, inv.Status, nullStr(inv.Error), meta, inv.Hostname, inv.PID)
	return err
}

func nullStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// FinishInvocation completes an invocation's audit record; it fails when
// the record does not exist.
func (db *DB) FinishInvocation(ctx context.Context, f cortex.InvocationFinish) error {
	tag, err := db.pool.Exec(ctx, rebind(`UPDATE llm_invocations SET finished_at = ?, duration_ms = ?, status = ?,
		error = COALESCE(?, error), output_bytes = COALESCE(?, output_bytes) WHERE id = ?`),
		cortex.FormatTime(f.FinishedAt), f.DurationMS, f.Status, nullStr(f.Error), f.OutputBytes, f.ID)
	if err != nil {
		return auditFailed(err)
	}
	if tag.RowsAffected() == 0 {
		return cortex.Errorf(cortex.CodeNotFound, "no LLM invocation %q to finish", f.ID)
	}
	return nil
}

// InterruptInvocations marks the invocations of host left running that
// running reports as over (their process is gone, and so is any provider
// process they left) as interrupted, and returns how many it marked.
// running sees id, pid, provider_pid and provider_dir.
func (db *DB) InterruptInvocations(ctx context.Context, host string, running func(cortex.Invocation) bool) (int64, error) {
	rows, err := db.query(ctx, `SELECT id, pid, COALESCE(provider_pid, 0), COALESCE(provider_dir, '')
		FROM llm_invocations WHERE status = ? AND hostname = ?`, cortex.InvocationRunning, host)
	open, err := collect(rows, err, "LLM invocations", func(rows pgx.Rows) (cortex.Invocation, error) {
		inv := cortex.Invocation{Hostname: host, Status: cortex.InvocationRunning}
		return inv, rows.Scan(&inv.ID, &inv.PID, &inv.ProviderPID, &inv.ProviderDir)
	})
	if err != nil {
		return 0, err
	}
	var n int64
	now := cortex.FormatTime(db.now())
	for _, inv := range open {
		if running(inv) {
			continue
		}
		tag, err := db.pool.Exec(ctx, rebind(`UPDATE llm_invocations SET status = ?, finished_at = ?,
			error = COALESCE(error, 'the process running it ended before it finished') WHERE id = ? AND status = ?`),
			cortex.InvocationInterrupted, now, inv.ID, cortex.InvocationRunning)
		if err != nil {
			return n, cortex.WrapError(cortex.CodeUnavailable, err, "cannot update the LLM audit: %v", err)
		}
		n += tag.RowsAffected()
	}
	return n, nil
}

// AttachProvider records the provider process (group) and credential
// folder of a running invocation.
func (db *DB) AttachProvider(ctx context.Context, id string, pid int, dir string) error {
	if _, err := db.pool.Exec(ctx, `UPDATE llm_invocations SET provider_pid = $1, provider_dir = $2 WHERE id = $3`,
		pid, nullStr(dir), id); err != nil {
		return auditFailed(err)
	}
	return nil
}

// Invocations lists audited LLM invocations, newest first. Limit must be
// clamped.
func (db *DB) Invocations(ctx context.Context, p cortex.InvocationParams) (cortex.InvocationList, error) {
	w := sqlpart.Invocations(p)
	res, err := listRows(ctx, db, "LLM invocations", `SELECT id, started_at, finished_at, duration_ms, caller_surface, action, provider,
		COALESCE(model, ''), COALESCE(program, ''), COALESCE(incident_id, ''), COALESCE(ai_tool, ''), COALESCE(ai_project, ''),
		COALESCE(ai_session_id, ''), evidence_counts_json, COALESCE(prompt_bytes, 0), output_bytes, status, COALESCE(error, ''),
		metadata_json, hostname, pid FROM llm_invocations WHERE true`+w.SQL()+` ORDER BY started_at DESC, id DESC LIMIT ?`,
		w.Args, p.Limit, func(rows pgx.Rows) (cortex.Invocation, error) {
			var inv cortex.Invocation
			var started, tool string
			var finished, counts, meta *string
			err := rows.Scan(&inv.ID, &started, &finished, &inv.DurationMS, &inv.CallerSurface, &inv.Action, &inv.Provider, &inv.Model,
				&inv.Program, &inv.IncidentID, &tool, &inv.Project, &inv.Session, &counts, &inv.PromptBytes, &inv.OutputBytes,
				&inv.Status, &inv.Error, &meta, &inv.Hostname, &inv.PID)
			if err != nil {
				return inv, err
			}
			inv.StartedAt, inv.Tool = parseStoredTime(started), cortex.Tool(tool)
			if finished != nil {
				t := parseStoredTime(*finished)
				inv.FinishedAt = &t
			}
			if counts != nil {
				var c cortex.EvidenceCounts
				if json.Unmarshal([]byte(*counts), &c) == nil {
					inv.Evidence = &c
				}
			}
			if meta != nil {
				_ = json.Unmarshal([]byte(*meta), &inv.Metadata)
			}
			return inv, nil
		}, sqlpart.InvocationCursor)
	return cortex.InvocationList{Invocations: res.Events, Total: res.Total, Truncated: res.Truncated, Next: res.Next}, err
}
