package cli_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestShowEndToEnd reads a real session and one of its rows through the
// binary: the transcript is readable (typed prompts, folded tool calls,
// row ids), --json is the session_show answer, and a hostile transcript
// reaches the terminal without control characters.
func TestShowEndToEnd(t *testing.T) {
	e := newEnv(t)
	db := filepath.Join(e.home, "c.db")
	if out, errOut, code := e.run("--db", db, "index", realCorpus(t), filepath.Join("..", "httpapi", "dashboard", "testdata", "hostile")); code != 0 {
		t.Fatalf("index: exit %d\n%s%s", code, out, errOut)
	}
	var sessions struct {
		Sessions []struct {
			ID   string `json:"ai_session_id"`
			Rows int    `json:"rows"`
			User int    `json:"user_rows"`
			Call int    `json:"tool_calls"`
		} `json:"sessions"`
	}
	e.json(&sessions, "--db", db, "sessions", "--json", "--limit", "1000")
	id := ""
	for _, s := range sessions.Sessions {
		if s.User > 3 && s.Call > 10 && s.Rows < 400 {
			id = s.ID
			break
		}
	}
	if id == "" {
		t.Fatal("no real session with prompts and tool calls")
	}
	out, errOut, code := e.run("--db", db, "show", "session", id[:8])
	if code != 0 {
		t.Fatalf("show session: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"Session " + id, "▶ USER", "⚙ ", "↳ #"} {
		if !strings.Contains(out, want) {
			t.Errorf("show session: no %q in\n%s", want, out[:min(len(out), 2000)])
		}
	}
	var page struct {
		Rows []struct {
			ID int64 `json:"id"`
		} `json:"rows"`
		HasAfter    bool  `json:"has_after"`
		NextAfterID int64 `json:"next_after_id"`
	}
	e.json(&page, "--db", db, "show", "session", id, "--json", "--limit", "5")
	if len(page.Rows) != 5 || !page.HasAfter || page.NextAfterID != page.Rows[4].ID {
		t.Fatalf("show session --json --limit 5: %+v", page)
	}
	row := fmt.Sprint(page.Rows[2].ID)
	out, _, code = e.run("--db", db, "show", "row", row, "--detail")
	if code != 0 || !strings.Contains(out, "Row "+row) || !strings.Contains(out, "Original record") {
		t.Fatalf("show row: exit %d\n%s", code, out)
	}
	var detail map[string]any
	e.json(&detail, "--db", db, "show", "row", row, "--json")
	if detail["ai_session_id"] != id {
		t.Fatalf("show row --json: %v", detail)
	}
	if _, _, code := e.run("--db", db, "show", "row", "999999999"); code != 3 {
		t.Fatalf("unknown row: exit %d, want 3", code)
	}
	if _, _, code := e.run("--db", db, "show", "row", "abc"); code != 2 {
		t.Fatalf("bad row id: exit %d, want 2", code)
	}
	out, _, code = e.run("--db", db, "show", "session", "6e0571e0", "--detail")
	if code != 0 || !strings.Contains(out, "<script>") || strings.ContainsRune(out, 0x1b) {
		t.Fatalf("hostile session: exit %d, escape present %v\n%s", code, strings.ContainsRune(out, 0x1b), out)
	}
	raw, _, _ := e.run("--db", db, "show", "session", "6e0571e0", "--json")
	if !json.Valid([]byte(raw)) {
		t.Fatal("hostile session --json is not JSON")
	}
}
