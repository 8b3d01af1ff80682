package sqlite

import (
	"context"
	"time"

	"github.com/cortexhq/cortex"
)

// RowSource is where a transcript row came from: its file, its line (the
// 1-based line of a JSONL file; a Gemini chat document's message index)
// and its session and time.
type RowSource struct {
	ID        int64
	Path      string
	Line      int64
	Session   string
	Timestamp time.Time
}

// RowSources returns the source of every transcript row, in (path, line)
// order — what a labelled corpus's labels refer to (the detection
// benchmark maps them to rows with it). It reads the whole store: meant for
// corpora of a few thousand files, not a team's archive.
func (db *DB) RowSources(ctx context.Context) ([]RowSource, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT l.id, s.path, COALESCE(l.source_line, 0), COALESCE(l.ai_session_id, ''), l.timestamp
		FROM logs l JOIN transcript_sources s ON s.id = l.source_id WHERE l.ai_tool IS NOT NULL ORDER BY s.path, l.source_line, l.id`)
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeInternal, err, "row sources")
	}
	defer rows.Close()
	var out []RowSource
	for rows.Next() {
		var r RowSource
		var ts string
		if err := rows.Scan(&r.ID, &r.Path, &r.Line, &r.Session, &ts); err != nil {
			return nil, cortex.WrapError(cortex.CodeInternal, err, "row sources")
		}
		r.Timestamp, _ = cortex.ParseTimestamp(ts)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, cortex.WrapError(cortex.CodeInternal, err, "row sources")
	}
	return out, nil
}
