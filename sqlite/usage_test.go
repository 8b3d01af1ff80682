package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

// TestTokenUsageDedupe stores a response's usage as Claude writes it
// (several lines, the same key, the output count growing) and Codex's
// repeated events: each response counts once, with its largest counts.
func TestTokenUsageDedupe(t *testing.T) {
	db, _ := openTestDB(t)
	at := testNow.Add(-time.Hour)
	u := func(key string, out int64, ts time.Time) cortex.TokenUsage {
		return cortex.TokenUsage{Tool: cortex.ToolClaude, SessionID: "sess-1", Timestamp: ts, Key: key, Model: "claude-opus-4-8",
			TokenCounts: cortex.TokenCounts{Input: 10, Output: out, CacheRead: 100, CacheWrite: 5, Responses: 1}}
	}
	b1 := batch("/t/a.jsonl", rec("u:1", "", cortex.RoleUser, "do it", at))
	b1.Usage = []cortex.TokenUsage{u("m:a", 3, at), u("m:a", 40, at.Add(time.Second)), u("m:b", 7, at.Add(time.Minute))}
	mustImport(t, db, b1)
	b2 := batch("/t/a.jsonl")
	b2.Usage = []cortex.TokenUsage{u("m:a", 40, at), u("m:b", 7, at.Add(time.Minute))} // a re-read
	mustImport(t, db, b2)
	got, err := db.SessionUsage(context.Background(), []cortex.Session{{Tool: cortex.ToolClaude, SessionID: "sess-1", Hostname: "host-a"}})
	if err != nil {
		t.Fatal(err)
	}
	c := got[store.SessionScope{Tool: cortex.ToolClaude, Session: "sess-1", Host: "host-a"}]["claude-opus-4-8"]
	if want := (cortex.TokenCounts{Input: 20, Output: 47, CacheRead: 200, CacheWrite: 10, Responses: 2}); c != want {
		t.Fatalf("usage %+v, want %+v", c, want)
	}
	// A span of the session: only the responses inside it.
	span, err := db.UsageBetween(context.Background(), store.SessionScope{Tool: cortex.ToolClaude, Session: "sess-1", Host: "host-a"},
		cortex.FormatTime(at.Add(30*time.Second)), cortex.FormatTime(at.Add(2*time.Minute)))
	if err != nil || span["claude-opus-4-8"].Output != 7 || span["claude-opus-4-8"].Responses != 1 {
		t.Fatalf("span usage %+v %v", span, err)
	}
}

// TestSummaryTitlesItsLeafSession attaches Claude summaries to the session
// of their leaf message whichever arrives first, and never makes a
// session of a summary alone.
func TestSummaryTitlesItsLeafSession(t *testing.T) {
	db, _ := openTestDB(t)
	at := testNow.Add(-time.Hour)
	dir := "/h/.claude/projects/-p/"
	leaf := func(session, uuid string) cortex.ImportRecord {
		r := rec("u:"+uuid, "", cortex.RoleUser, "first prompt of "+session, at)
		r.Entry.SessionID = session
		return r
	}
	title := func(session string) string {
		var s string
		if err := db.r.QueryRow(`SELECT COALESCE(title, '') FROM ai_sessions WHERE ai_session_id = ?`, session).Scan(&s); err != nil {
			t.Fatalf("%s: %v", session, err)
		}
		return s
	}
	// Leaf first (another file of the folder), summary later.
	mustImport(t, db, batch(dir+"s1.jsonl", leaf("s1", "leaf-1")))
	sum := batch(dir + "s2.jsonl")
	sum.Summaries = []cortex.SessionSummary{{LeafUUID: "leaf-1", Text: "Fix the cache"}}
	mustImport(t, db, sum)
	if got := title("s1"); got != "Fix the cache" {
		t.Errorf("leaf first: title %q", got)
	}
	// Summary first, leaf later.
	sum = batch(dir + "s4.jsonl")
	sum.Summaries = []cortex.SessionSummary{{LeafUUID: "leaf-3", Text: "Ship the parser"}}
	mustImport(t, db, sum)
	if n := count(t, db, `SELECT count(*) FROM ai_sessions`); n != 1 {
		t.Fatalf("a summary alone made a session: %d sessions", n)
	}
	mustImport(t, db, batch(dir+"s3.jsonl", leaf("s3", "leaf-3")))
	if got := title("s3"); got != "Ship the parser" {
		t.Errorf("summary first: title %q", got)
	}
	// The same transaction, and a summary whose leaf never comes.
	both := batch(dir+"s5.jsonl", leaf("s5", "leaf-5"))
	both.Summaries = []cortex.SessionSummary{{LeafUUID: "leaf-5", Text: "Same batch"}, {LeafUUID: "nowhere", Text: "Orphan"}}
	mustImport(t, db, both)
	if got := title("s5"); got != "Same batch" {
		t.Errorf("same batch: title %q", got)
	}
	// Sessions list the title, else the first prompt.
	res, err := db.Sessions(context.Background(), cortex.SessionParams{Limit: 10})
	if err != nil || len(res.Sessions) != 3 {
		t.Fatalf("sessions %+v %v", res, err)
	}
	for _, s := range res.Sessions {
		if s.TitleSource != "summary" || s.Title == "" {
			t.Errorf("session %s: title %q (%s)", s.SessionID, s.Title, s.TitleSource)
		}
	}
	mustImport(t, db, batch("/elsewhere/s6.jsonl", leaf("s6", "leaf-6")))
	res, _ = db.Sessions(context.Background(), cortex.SessionParams{Limit: 10})
	for _, s := range res.Sessions {
		if s.SessionID == "s6" && (s.Title != "first prompt of s6" || s.TitleSource != "first_prompt") {
			t.Errorf("untitled session: %q (%s)", s.Title, s.TitleSource)
		}
	}
}
