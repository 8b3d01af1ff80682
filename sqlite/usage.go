package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/sqlpart"
	"github.com/cortexhq/cortex/store"
)

// usageRows per multi-row upsert of token usage.
const usageRows = 64

func usageSQL(n int) string {
	return `INSERT INTO ai_token_usage(ai_tool, ai_session_id, hostname, usage_key, timestamp, model,
		input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens) VALUES ` +
		repeatValues(n, "(?,?,?,?,?,?,?,?,?,?,?)") + `
		ON CONFLICT(ai_tool, ai_session_id, hostname, usage_key) DO UPDATE SET
			timestamp = min(timestamp, excluded.timestamp),
			model = CASE WHEN model = '' THEN excluded.model ELSE model END,
			input_tokens = max(input_tokens, excluded.input_tokens),
			output_tokens = max(output_tokens, excluded.output_tokens),
			cache_read_tokens = max(cache_read_tokens, excluded.cache_read_tokens),
			cache_write_tokens = max(cache_write_tokens, excluded.cache_write_tokens),
			reasoning_tokens = max(reasoning_tokens, excluded.reasoning_tokens)`
}

// usage stores a batch's token usage. A response written several times
// (the same key) keeps the largest count of each kind: Claude's streamed
// lines repeat the usage, the last with the final output count.
func (w *importTx) usage(b *cortex.ImportBatch) error {
	us := b.Usage
	for _, sp := range spans(len(us), usageRows) {
		part := us[sp[0]:sp[1]]
		st, err := w.stmt("usage", len(part), usageSQL)
		if err != nil {
			return err
		}
		args := make([]any, 0, 11*len(part))
		for _, u := range part {
			args = append(args, string(u.Tool), u.SessionID, b.Hostname, u.Key, cortex.FormatTime(u.Timestamp), u.Model,
				u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning)
		}
		if _, err := st.ExecContext(w.ctx, args...); err != nil {
			return fmt.Errorf("store token usage: %w", err)
		}
	}
	return nil
}

// attachSummaries stores this transaction's session summaries and gives
// sessions their titles, in both orders of arrival: a summary whose leaf
// message is stored (in this transaction, or earlier in a file of the
// same folder — Claude keeps a project's sessions in one folder) titles
// the leaf's session at once; a stored summary still waiting for its leaf
// titles the session of a leaf written now.
func (w *importTx) attachSummaries() error {
	for _, sm := range w.summaries {
		if _, err := w.exec(`INSERT INTO ai_session_summaries(leaf_uuid, summary, source_id, seen_at) VALUES (?, ?, ?, ?)
			ON CONFLICT(leaf_uuid) DO UPDATE SET summary = excluded.summary`, sm.LeafUUID, sm.Text, sm.sourceID, w.now); err != nil {
			return err
		}
		leaf, ok := w.leaves[sm.LeafUUID]
		if !ok {
			var err error
			if leaf, ok, err = w.storedLeaf(sm.LeafUUID, filepath.Dir(sm.path)); err != nil {
				return err
			}
		}
		if ok {
			if err := w.title(sm.LeafUUID, leaf); err != nil {
				return err
			}
		}
	}
	if len(w.leaves) == 0 {
		return nil
	}
	var waiting bool
	if err := w.queryRow(`SELECT EXISTS(SELECT 1 FROM ai_session_summaries WHERE ai_session_id IS NULL)`).Scan(&waiting); err != nil {
		return err
	}
	if !waiting {
		return nil
	}
	uuids := make([]string, 0, len(w.leaves))
	for u := range w.leaves {
		uuids = append(uuids, u)
	}
	for _, sp := range spans(len(uuids), claimChunk) {
		part := uuids[sp[0]:sp[1]]
		args := make([]any, len(part))
		for i, u := range part {
			args[i] = u
		}
		rows, err := w.tx.QueryContext(w.ctx, `SELECT leaf_uuid FROM ai_session_summaries INDEXED BY idx_ai_session_summaries_unresolved
			WHERE ai_session_id IS NULL AND leaf_uuid IN (`+strings.TrimSuffix(strings.Repeat("?,", len(part)), ",")+`)`, args...)
		if err != nil {
			return err
		}
		var found []string
		for rows.Next() {
			var u string
			if err := rows.Scan(&u); err != nil {
				rows.Close()
				return err
			}
			found = append(found, u)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, u := range found {
			if err := w.title(u, w.leaves[u]); err != nil {
				return err
			}
		}
	}
	return nil
}

// storedLeaf finds a stored Claude message by uuid among the files of a
// folder (one primary-key lookup per file).
func (w *importTx) storedLeaf(uuid, dir string) (leafRow, bool, error) {
	if dir == "" || dir == "." {
		return leafRow{}, false, nil
	}
	rows, err := w.tx.QueryContext(w.ctx, `SELECT r.log_id FROM transcript_sources s
		JOIN transcript_import_records r ON r.source_id = s.id AND r.record_key = ?
		WHERE s.path > ? AND s.path < ?`, "u:"+uuid, dir+string(filepath.Separator), dir+string(rune(filepath.Separator+1)))
	if err != nil {
		return leafRow{}, false, err
	}
	var id int64
	found := false
	for rows.Next() && !found {
		found = rows.Scan(&id) == nil
	}
	rows.Close()
	if err := rows.Err(); err != nil || !found {
		return leafRow{}, false, err
	}
	var l leafRow
	var tool, session sql.NullString
	if err := w.queryRow(`SELECT ai_tool, ai_session_id, hostname FROM logs WHERE id = ?`, id).Scan(&tool, &session, &l.host); err != nil {
		if err == sql.ErrNoRows {
			return leafRow{}, false, nil
		}
		return leafRow{}, false, err
	}
	l.tool, l.session = tool.String, session.String
	return l, l.session != "", nil
}

// title attaches a summary to its leaf's session and makes it the
// session's title.
func (w *importTx) title(leafUUID string, l leafRow) error {
	if l.session == "" {
		return nil
	}
	if _, err := w.exec(`UPDATE ai_session_summaries SET ai_tool = ?, ai_session_id = ?, hostname = ? WHERE leaf_uuid = ?`,
		l.tool, l.session, l.host, leafUUID); err != nil {
		return err
	}
	_, err := w.exec(`UPDATE ai_sessions SET title = (SELECT summary FROM ai_session_summaries WHERE leaf_uuid = ?)
		WHERE ai_tool = ? AND ai_session_id = ? AND hostname = ?`, leafUUID, l.tool, l.session, l.host)
	return err
}

// SessionUsage returns the token usage of sessions per model, keyed by
// session.
func (db *DB) SessionUsage(ctx context.Context, sessions []cortex.Session) (map[store.SessionScope]map[string]cortex.TokenCounts, error) {
	out := map[store.SessionScope]map[string]cortex.TokenCounts{}
	ids := sqlpart.SessionIDs(sessions)
	for start := 0; start < len(ids); start += sqlpart.UsageChunk {
		q, args := sqlpart.SessionUsage(ids[start:min(start+sqlpart.UsageChunk, len(ids))])
		rows, err := db.r.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read token usage: %v", err)
		}
		for rows.Next() {
			var k store.SessionScope
			var tool, model string
			var c cortex.TokenCounts
			if err := rows.Scan(append([]any{&tool, &k.Session, &k.Host, &model}, sqlpart.UsageDest(&c)...)...); err != nil {
				rows.Close()
				return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read token usage")
			}
			k.Tool = cortex.Tool(tool)
			if out[k] == nil {
				out[k] = map[string]cortex.TokenCounts{}
			}
			out[k][model] = c
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read token usage: %v", err)
		}
	}
	return out, nil
}

// UsageBetween returns the token usage of one session per model between
// two stored times (inclusive): what the session spent in that span.
func (db *DB) UsageBetween(ctx context.Context, s store.SessionScope, from, to string) (map[string]cortex.TokenCounts, error) {
	q, args := sqlpart.UsageBetween(s, from, to)
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read token usage: %v", err)
	}
	defer rows.Close()
	out := map[string]cortex.TokenCounts{}
	for rows.Next() {
		var model string
		var c cortex.TokenCounts
		if err := rows.Scan(append([]any{&model}, sqlpart.UsageDest(&c)...)...); err != nil {
			return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot read token usage")
		}
		out[model] = c
	}
	return out, rows.Err()
}
