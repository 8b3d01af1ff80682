package app

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/incident"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/store"
)

// Bounds of session_show and row_show.
const (
	DefaultTranscriptLimit = 50
	MaxTranscriptLimit     = 1000
	// SummaryTextBytes cuts each row's text of a transcript without
	// detail; RowSummaryBytes the text of row_show without detail.
	SummaryTextBytes = 300
	RowSummaryBytes  = 2048
	// MaxRawBytes bounds the original record row_show returns.
	MaxRawBytes = 256 << 10
)

// SessionShowParams are the parameters of session_show.
type SessionShowParams struct {
	Session  string `json:"session" jsonschema:"id or unique prefix" doc:"the session id, or a unique prefix of it (at least 4 characters)"`
	Agent    string `json:"agent,omitempty" alias:"tool" doc:"the session's agent (claude, codex or gemini; older name: tool), when the id is on several" unlisted:"narrows the session id"`
	Host     string `json:"host,omitempty" doc:"the session's host, when the id is on several" unlisted:"narrows the session id"`
	AfterID  int64  `json:"after_id,omitempty" jsonschema:"next page: next_after_id" doc:"the rows after this row id (next_after_id of the previous page)"`
	BeforeID int64  `json:"before_id,omitempty" jsonschema:"page before: prev_before_id" doc:"the rows before this row id (prev_before_id)"`
	Row      int64  `json:"row,omitempty" jsonschema:"the page with this row id" doc:"a page holding this row id"`
	Limit    int    `json:"limit,omitempty" jsonschema:"50, max 1000" doc:"rows per page (default 50, max 1000)"`
	Detail   bool   `json:"detail,omitempty" jsonschema:"whole texts" doc:"whole texts; without it each row's text is cut to 300 bytes"`
}

// RowShowParams are the parameters of row_show.
type RowShowParams struct {
	ID     int64 `json:"id" jsonschema:"row id" doc:"the row id (as in search hits, evidence and transcripts)"`
	Detail bool  `json:"detail,omitempty" jsonschema:"whole text and record" doc:"the whole text and the original record; without it the text is cut to 2 KiB"`
}

// ShowSession reads a page of one session's transcript, its tool calls,
// skill and hook events folded into the rows, and the session's incidents
// of every lens with the rows that carry their signals.
func (s *Service) ShowSession(ctx context.Context, p SessionShowParams) (cortex.SessionTranscript, error) {
	out := cortex.SessionTranscript{Incidents: []cortex.SessionIncident{}, Detail: p.Detail}
	if strings.TrimSpace(p.Session) == "" {
		return out, cortex.Errorf(cortex.CodeInvalid, "session_show: session is required")
	}
	if err := checkTool(cortex.Tool(p.Agent)); err != nil {
		return out, err
	}
	set := 0
	for _, id := range []int64{p.AfterID, p.BeforeID, p.Row} {
		if id < 0 {
			return out, cortex.Errorf(cortex.CodeInvalid, "session_show: row ids are positive")
		}
		if id != 0 {
			set++
		}
	}
	if set > 1 {
		return out, cortex.Errorf(cortex.CodeInvalid, "session_show: give at most one of after_id, before_id and row")
	}
	limit, clamped, err := cortex.ClampLimit(p.Limit, DefaultTranscriptLimit, MaxTranscriptLimit)
	if err != nil {
		return out, err
	}
	out.LimitClampedTo = clamped
	sess, err := s.findSession(ctx, p.Session, cortex.Tool(p.Agent), p.Host)
	if err != nil {
		return out, err
	}
	out.Session = sess
	q := cortex.TranscriptQuery{Tool: sess.Tool, Session: sess.SessionID, Host: sess.Hostname, AfterID: p.AfterID,
		BeforeID: p.BeforeID, AroundID: p.Row, Limit: limit}
	if !p.Detail {
		q.MaxBytes = SummaryTextBytes
	}
	out.TranscriptPage, err = s.DB.TranscriptRows(ctx, q)
	if err != nil {
		return out, err
	}
	if n := len(out.Rows); n > 0 {
		if out.HasAfter {
			out.NextAfterID = out.Rows[n-1].ID
		}
		if out.HasBefore {
			out.PrevBeforeID = out.Rows[0].ID
		}
		scope := store.SessionScope{Tool: sess.Tool, Session: sess.SessionID, Host: sess.Hostname}
		from, _ := cortex.ParseTimestamp(out.Rows[0].Timestamp)
		to, _ := cortex.ParseTimestamp(out.Rows[n-1].Timestamp)
		ev, err := s.DB.SessionEvents(ctx, scope, from, to)
		if err != nil {
			return out, err
		}
		foldEvents(out.Rows, ev)
	}
	out.Incidents, out.IncidentsError = s.sessionIncidents(ctx, sess)
	markAnchors(out.Rows, out.Incidents)
	return out, nil
}

// findSession resolves a session id (or prefix) to exactly one session.
func (s *Service) findSession(ctx context.Context, id string, tool cortex.Tool, host string) (cortex.Session, error) {
	found, err := s.DB.FindSessions(ctx, id, tool, host)
	if err != nil {
		return cortex.Session{}, err
	}
	switch len(found) {
	case 0:
		return cortex.Session{}, cortex.Errorf(cortex.CodeNotFound, "no session %q (list them with cortex sessions)", id)
	case 1:
		return found[0], nil
	}
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = fmt.Sprintf("%s (%s on %s)", f.SessionID, f.Tool, f.Hostname)
	}
	return cortex.Session{}, cortex.Errorf(cortex.CodeInvalid, "session %q matches %d sessions: %s; give the full id, agent or host",
		id, len(found), strings.Join(names, ", "))
}

// foldEvents attaches tool calls, skill events and hook runs to the rows
// that record them.
func foldEvents(rows []cortex.TranscriptRow, ev store.TranscriptEvents) {
	byID := make(map[int64]*cortex.TranscriptRow, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	for _, t := range ev.Tools {
		call := &cortex.TranscriptCall{EventID: t.ID, CallLogID: t.CallLogID, ResultLogID: t.ResultLogID, ToolName: t.ToolName,
			MCPServer: t.MCPServer, Status: t.Status, ExitCode: t.ExitCode, DurationMS: t.DurationMS, ErrorText: t.ErrorText}
		for _, id := range []*int64{t.CallLogID, t.ResultLogID} {
			if id != nil && byID[*id] != nil && byID[*id].Call == nil {
				byID[*id].Call = call
			}
		}
	}
	for _, k := range ev.Skills {
		if r := byID[k.LogID]; r != nil {
			name := k.SkillName
			if k.SkillPlugin != "" && !strings.Contains(name, ":") {
				name = k.SkillPlugin + ":" + name
			}
			if !slices.Contains(r.Skills, name) {
				r.Skills = append(r.Skills, name)
			}
		}
	}
	for _, h := range ev.Hooks {
		if h.LogID == nil || byID[*h.LogID] == nil {
			continue
		}
		r := byID[*h.LogID]
		name := h.HookEvent
		if h.HookName != "" && h.HookName != h.HookEvent {
			name = h.HookName
		}
		r.Hooks = append(r.Hooks, name+" "+h.Status)
	}
}

// sessionIncidents lists the incidents of every lens in one session, best
// first. A lens that fails does not hide the others: its error is
// reported beside them.
func (s *Service) sessionIncidents(ctx context.Context, sess cortex.Session) ([]cortex.SessionIncident, string) {
	out := []cortex.SessionIncident{}
	var errs []string
	for _, lens := range LensNames() {
		list, err := s.Incidents(ctx, lens, cortex.IncidentParams{Tool: sess.Tool, Session: sess.SessionID, Host: sess.Hostname,
			Limit: incident.MaxLimit})
		if err != nil {
			errs = append(errs, lens+": "+cortex.ErrorMessage(err))
			continue
		}
		for _, inc := range list.Incidents {
			out = append(out, cortex.SessionIncident{ID: inc.ID, Lens: inc.Lens, Subject: inc.Subject(), Label: inc.Label,
				Score: inc.Score, FirstSeen: inc.FirstSeen, LastSeen: inc.LastSeen, Signals: inc.SignalsPresent,
				AnchorLogIDs: inc.AnchorLogIDs})
		}
	}
	slices.SortStableFunc(out, func(a, b cortex.SessionIncident) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.FirstSeen, b.FirstSeen))
	})
	return out, strings.Join(errs, "; ")
}

// LensNames lists the incident lenses, sorted.
func LensNames() []string {
	var names []string
	for name := range incident.Lenses() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// markAnchors lists on each row the incidents whose signals it carries.
func markAnchors(rows []cortex.TranscriptRow, incs []cortex.SessionIncident) {
	byID := make(map[int64]*cortex.TranscriptRow, len(rows))
	for i := range rows {
		byID[rows[i].ID] = &rows[i]
	}
	for _, inc := range incs {
		for _, id := range inc.AnchorLogIDs {
			if r := byID[id]; r != nil && !slices.Contains(r.Incidents, inc.ID) {
				r.Incidents = append(r.Incidents, inc.ID)
			}
		}
	}
}

// ShowRow reads one stored row: its text (cut to RowSummaryBytes without
// detail), the events extracted from it, its neighbours in the session,
// and with detail its original record (redacted when stored).
func (s *Service) ShowRow(ctx context.Context, p RowShowParams) (cortex.RowDetail, error) {
	if p.ID <= 0 {
		return cortex.RowDetail{}, cortex.Errorf(cortex.CodeInvalid, "row_show: id must be a positive row id, got %d", p.ID)
	}
	maxText := RowSummaryBytes
	if p.Detail {
		maxText = 0
	}
	r, raw, err := s.DB.Row(ctx, p.ID, maxText)
	if err != nil {
		return r, err
	}
	r.Detail = p.Detail
	if len(raw) > 0 {
		codec, err := s.codec()
		if err != nil {
			return r, cortex.WrapError(cortex.CodeInternal, err, "row_show: %v", err)
		}
		dec, err := codec.Decode(raw)
		if err != nil {
			return r, cortex.WrapError(cortex.CodeInternal, err, "row %d: cannot decode its stored record: %v", p.ID, err)
		}
		r.RawBytes = len(dec)
		if p.Detail {
			r.Raw = string(dec)
			if len(r.Raw) > MaxRawBytes {
				r.Raw, r.RawTruncated = cortex.CutUTF8(r.Raw, MaxRawBytes), true
			}
		}
	}
	return r, nil
}

// codec returns the service's decoder of stored records (built on first
// use; safe for concurrent use).
func (s *Service) codec() (*rawcodec.Codec, error) {
	s.codecOnce.Do(func() { s.rawCodec, s.codecErr = rawcodec.New() })
	return s.rawCodec, s.codecErr
}
