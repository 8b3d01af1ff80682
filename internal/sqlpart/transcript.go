package sqlpart

import (
	"slices"

	"github.com/cortexhq/cortex"
)

// TranscriptReads are a store's reads of one session's transcript rows,
// each under the session's own condition and arguments plus cond and args.
type TranscriptReads struct {
	// Pivot returns the timestamp of a row of the session (found false
	// when the id is none of its transcript rows).
	Pivot func(id int64) (timestamp string, found bool, err error)
	// Rows returns at most limit rows in (timestamp, id) order, newest
	// first when desc.
	Rows func(cond string, args []any, desc bool, limit int) ([]cortex.TranscriptRow, error)
	// Count counts the rows.
	Count func(cond string, args []any) (int, error)
}

// Conditions of a transcript page relative to a row (its timestamp,
// timestamp and id).
const (
	rowsAfter     = ` AND (timestamp > ? OR (timestamp = ? AND id > ?))`
	rowsAtOrAfter = ` AND (timestamp > ? OR (timestamp = ? AND id >= ?))`
	rowsBefore    = ` AND (timestamp < ? OR (timestamp = ? AND id < ?))`
)

// TranscriptPage reads a page of a session's rows in (timestamp, id)
// order: the first page, the rows after or before a row, or a page around
// a row (a quarter of the page before it), with the session's row count
// and the page's offset in it. A row id that is not a row of the
// session's transcript is a not-found error. Limit must be clamped.
func TranscriptPage(q cortex.TranscriptQuery, r TranscriptReads) (cortex.TranscriptPage, error) {
	page := cortex.TranscriptPage{Rows: []cortex.TranscriptRow{}}
	var pivot int64
	for _, id := range []int64{q.AfterID, q.BeforeID, q.AroundID} {
		if id != 0 {
			pivot = id
		}
	}
	var pts string
	if pivot != 0 {
		ts, found, err := r.Pivot(pivot)
		if err != nil {
			return page, err
		}
		if !found {
			return page, cortex.Errorf(cortex.CodeNotFound, "row %d is not a transcript row of session %s", pivot, q.Session)
		}
		pts = ts
	}
	// read reads up to limit rows and whether there are more.
	read := func(cond string, args []any, desc bool, limit int) ([]cortex.TranscriptRow, bool, error) {
		out, err := r.Rows(cond, args, desc, limit+1)
		more := len(out) > limit
		if more {
			out = out[:limit]
		}
		if desc {
			slices.Reverse(out)
		}
		return out, more, err
	}
	pargs := []any{pts, pts, pivot}
	var err error
	switch {
	case q.AfterID != 0:
		page.Rows, page.HasAfter, err = read(rowsAfter, pargs, false, q.Limit)
		page.HasBefore = true
	case q.BeforeID != 0:
		page.Rows, page.HasBefore, err = read(rowsBefore, pargs, true, q.Limit)
		page.HasAfter = true
	case q.AroundID != 0:
		var head, tail []cortex.TranscriptRow
		head, page.HasBefore, err = read(rowsBefore, pargs, true, q.Limit/4)
		if err == nil {
			tail, page.HasAfter, err = read(rowsAtOrAfter, pargs, false, q.Limit-len(head))
		}
		page.Rows = append(head, tail...)
	default:
		page.Rows, page.HasAfter, err = read("", nil, false, q.Limit)
	}
	if err != nil {
		return page, err
	}
	if page.Rows == nil {
		page.Rows = []cortex.TranscriptRow{}
	}
	if page.RowsTotal, err = r.Count("", nil); err != nil {
		return page, err
	}
	switch {
	case len(page.Rows) == 0 && q.BeforeID == 0:
		page.Offset = page.RowsTotal
	case len(page.Rows) > 0 && page.HasBefore:
		first := page.Rows[0]
		page.Offset, err = r.Count(rowsBefore, []any{first.Timestamp, first.Timestamp, first.ID})
	}
	return page, err
}

// RowCols are the columns of one row of logs a RowScan receives.
const RowCols = `id, timestamp, hostname, COALESCE(ai_tool, ''), COALESCE(ai_project, ''),
	COALESCE(ai_session_id, ''), COALESCE(ai_transcript_path, ''), COALESCE(source_line, 0), COALESCE(ai_role, ''),
	COALESCE(ai_kind, ''), COALESCE(ai_tool_name, ''), COALESCE(ai_agent_id, ''), is_error, severity, COALESCE(app_name, ''),
	COALESCE(facility, ''), source, received_at, metadata_json, message, raw`

// RowSelect reads one row of logs by id (its one ? is the id) into a
// RowScan.
const RowSelect = `SELECT ` + RowCols + ` FROM logs WHERE id = ?`

// RowScan receives a RowSelect: scan into Dest, then Finish.
type RowScan struct {
	R               cortex.RowDetail
	Raw             []byte
	tool, role, sev string
	isErr           int
}

// Dest lists the scan destinations of a RowSelect; meta receives the
// metadata JSON (the store's nullable string type).
func (s *RowScan) Dest(meta any) []any {
	r := &s.R
	return []any{&r.ID, &r.Timestamp, &r.Hostname, &s.tool, &r.Project, &r.SessionID, &r.TranscriptPath, &r.Line, &s.role,
		&r.Kind, &r.ToolName, &r.AgentID, &s.isErr, &s.sev, &r.AppName, &r.Facility, &r.Source, &r.ReceivedAt, meta, &r.Text, &s.Raw}
}

// Agent is the scanned row's agent (before Finish).
func (s *RowScan) Agent() string { return s.tool }

// Finish types the scanned columns, sets the decoded metadata and cuts the
// text to maxText bytes (0: whole); the event lists start empty.
func (s *RowScan) Finish(meta map[string]string, maxText int) {
	r := &s.R
	r.Tool, r.Role, r.Severity, r.IsError, r.Metadata = cortex.Tool(s.tool), cortex.Role(s.role), cortex.Severity(s.sev),
		s.isErr == 1, meta
	r.TextBytes = len(r.Text)
	r.Text, r.TextTruncated = cutText(r.Text, maxText)
	r.SkillEvents, r.ToolEvents, r.HookEvents = []cortex.SkillEventRow{}, []cortex.ToolEventRow{}, []cortex.HookEventRow{}
}

// TranscriptCols are the columns of a session's transcript row, scanned
// by a TranscriptScan.
const TranscriptCols = `id, timestamp, COALESCE(ai_role, ''), COALESCE(ai_kind, ''), COALESCE(ai_tool_name, ''),
	COALESCE(ai_agent_id, ''), is_error, severity, COALESCE(source_line, 0), message, metadata_json`

// TranscriptScan receives one row of TranscriptCols: scan into Dest, then
// Finish.
type TranscriptScan struct {
	R         cortex.TranscriptRow
	role, sev string
	isErr     int
}

// Dest lists the scan destinations; meta receives the metadata JSON (the
// store's nullable string type).
func (s *TranscriptScan) Dest(meta any) []any {
	r := &s.R
	return []any{&r.ID, &r.Timestamp, &s.role, &r.Kind, &r.ToolName, &r.AgentID, &s.isErr, &s.sev, &r.Line, &r.Text, meta}
}

// Finish types the scanned columns, reads the metadata and cuts the text
// to maxBytes (0: whole).
func (s *TranscriptScan) Finish(meta map[string]string, maxBytes int) cortex.TranscriptRow {
	r := &s.R
	r.Role, r.Severity, r.IsError = cortex.Role(s.role), cortex.Severity(s.sev), s.isErr == 1
	r.Model, r.Sidechain, r.StoredTruncated = meta["model"], meta["sidechain"] == "true", meta["text_truncated"] == "true"
	r.TextBytes = len(r.Text)
	r.Text, r.TextTruncated = cutText(r.Text, maxBytes)
	return *r
}

// cutText cuts text to maxBytes on a UTF-8 boundary (0: whole).
func cutText(text string, maxBytes int) (string, bool) {
	if maxBytes > 0 && len(text) > maxBytes {
		return cortex.CutUTF8(text, maxBytes), true
	}
	return text, false
}
