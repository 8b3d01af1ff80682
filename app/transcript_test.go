package app

import (
	"context"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/teststore"
)

// TestShowSessionPagesCoverTheTranscript reads the longest real session
// page by page and checks the pages join without gaps or repeats, the
// positions add up, a page around a row holds it, tool calls are folded
// with their results and the session's incidents anchor on its rows.
func TestShowSessionPagesCoverTheTranscript(t *testing.T) {
	db, _ := teststore.Indexed(t, testcorpus.Real(t))
	s := New(db)
	ctx := context.Background()
	list, err := s.Sessions(ctx, cortex.SessionParams{Limit: MaxSessionsLimit})
	if err != nil {
		t.Fatal(err)
	}
	var longest cortex.Session
	for _, x := range list.Sessions {
		if x.Rows > longest.Rows {
			longest = x
		}
	}
	if longest.Rows < 300 {
		t.Fatalf("the real corpus's longest session has %d rows", longest.Rows)
	}
	var all []cortex.TranscriptRow
	p := SessionShowParams{Session: longest.SessionID, Limit: 97}
	calls, folded := 0, 0
	for page := 0; ; page++ {
		got, err := s.ShowSession(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if got.Offset != len(all) {
			t.Fatalf("page %d: offset %d, want %d", page, got.Offset, len(all))
		}
		for _, r := range got.Rows {
			if r.TextTruncated && len(r.Text) > SummaryTextBytes {
				t.Fatalf("row %d: summary text of %d bytes", r.ID, len(r.Text))
			}
			if r.Role == cortex.RoleToolCall {
				calls++
				if r.Call != nil && r.Call.CallLogID != nil && *r.Call.CallLogID == r.ID {
					folded++
				}
			}
		}
		all = append(all, got.Rows...)
		if !got.HasAfter {
			if got.RowsTotal != len(all) {
				t.Fatalf("read %d rows, rows_total %d", len(all), got.RowsTotal)
			}
			break
		}
		p.AfterID = got.NextAfterID
	}
	seen := map[int64]bool{}
	for i, r := range all {
		if seen[r.ID] {
			t.Fatalf("row %d read twice", r.ID)
		}
		seen[r.ID] = true
		if i > 0 && (r.Timestamp < all[i-1].Timestamp || (r.Timestamp == all[i-1].Timestamp && r.ID < all[i-1].ID)) {
			t.Fatalf("rows out of order at %d", i)
		}
		if r.Role == cortex.RoleThinking && r.Text == "" {
			t.Fatalf("empty thinking row %d shown", r.ID)
		}
	}
	if calls == 0 || folded < calls*9/10 {
		t.Fatalf("%d of %d tool calls carry their call event", folded, calls)
	}
	// Backwards from the end gives the same rows.
	back, err := s.ShowSession(ctx, SessionShowParams{Session: longest.SessionID, BeforeID: all[len(all)-1].ID, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if back.Offset != len(all)-51 || back.Rows[0].ID != all[len(all)-51].ID || !back.HasBefore || !back.HasAfter {
		t.Fatalf("before page: offset %d first %d", back.Offset, back.Rows[0].ID)
	}
	mid := all[len(all)/2]
	around, err := s.ShowSession(ctx, SessionShowParams{Session: longest.SessionID[:8], Row: mid.ID, Limit: 40, Detail: true})
	if err != nil {
		t.Fatal(err)
	}
	if around.Offset != len(all)/2-10 || around.Rows[10].ID != mid.ID || around.Rows[10].Text == "" && mid.TextBytes > 0 {
		t.Fatalf("around row %d: offset %d, rows from %d", mid.ID, around.Offset, around.Rows[0].ID)
	}
	if _, err := s.ShowSession(ctx, SessionShowParams{Session: longest.SessionID, Row: 1 << 40}); cortex.ErrorCode(err) != cortex.CodeNotFound {
		t.Fatalf("unknown row: %v", err)
	}
	if _, err := s.ShowSession(ctx, SessionShowParams{Session: "no-such-session"}); cortex.ErrorCode(err) != cortex.CodeNotFound {
		t.Fatalf("unknown session: %v", err)
	}
	if _, err := s.ShowSession(ctx, SessionShowParams{Session: longest.SessionID, AfterID: 1, Row: 2}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Fatalf("two cursors: %v", err)
	}
}

// TestShowSessionMarksIncidentAnchors finds a session with an incident
// and checks its anchor rows are marked.
func TestShowSessionMarksIncidentAnchors(t *testing.T) {
	db, _ := teststore.Indexed(t, testcorpus.Labelled(t))
	s := New(db)
	ctx := context.Background()
	list, err := s.Incidents(ctx, cortex.LensSkill, cortex.IncidentParams{})
	if err != nil || len(list.Incidents) == 0 {
		t.Fatalf("no skill incident: %v", err)
	}
	inc := list.Incidents[0]
	got, err := s.ShowSession(ctx, SessionShowParams{Session: inc.SessionID, Agent: string(inc.Tool), Host: inc.Hostname,
		Row: inc.AnchorLogIDs[0], Limit: MaxTranscriptLimit})
	if err != nil {
		t.Fatal(err)
	}
	var listed bool
	for _, x := range got.Incidents {
		listed = listed || x.ID == inc.ID
	}
	marked := 0
	for _, r := range got.Rows {
		for _, id := range r.Incidents {
			if id == inc.ID {
				marked++
			}
		}
	}
	if !listed || marked == 0 {
		t.Fatalf("incident %s listed %v, marked on %d rows", inc.ID, listed, marked)
	}
}

func TestShowRow(t *testing.T) {
	db, _ := teststore.Indexed(t, testcorpus.Real(t))
	s := New(db)
	ctx := context.Background()
	hits, err := s.Search(ctx, cortex.SearchParams{Query: "error", Role: cortex.RoleToolResult, Limit: 50})
	if err != nil || len(hits.Hits) == 0 {
		t.Fatalf("no tool result: %v", err)
	}
	var row cortex.RowDetail
	for _, h := range hits.Hits {
		if row, err = s.ShowRow(ctx, RowShowParams{ID: h.ID, Detail: true}); err != nil {
			t.Fatal(err)
		}
		if len(row.ToolEvents) > 0 {
			break
		}
	}
	if len(row.ToolEvents) == 0 || row.Raw == "" || !strings.HasPrefix(row.Raw, "{") || row.RawBytes < len(row.Raw) {
		t.Fatalf("row %d: %d tool events, raw %d bytes", row.ID, len(row.ToolEvents), len(row.Raw))
	}
	if row.PrevID == 0 && row.NextID == 0 {
		t.Fatalf("row %d has no neighbours", row.ID)
	}
	summary, err := s.ShowRow(ctx, RowShowParams{ID: row.ID})
	if err != nil || summary.Raw != "" || len(summary.Text) > RowSummaryBytes {
		t.Fatalf("summary: raw %d bytes, text %d: %v", len(summary.Raw), len(summary.Text), err)
	}
	if _, err := s.ShowRow(ctx, RowShowParams{ID: 1 << 40}); cortex.ErrorCode(err) != cortex.CodeNotFound {
		t.Fatalf("unknown row: %v", err)
	}
	if _, err := s.ShowRow(ctx, RowShowParams{}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Fatalf("row 0: %v", err)
	}
}
