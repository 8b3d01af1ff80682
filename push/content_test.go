package push_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/internal/testpg"
	"github.com/cortexhq/cortex/internal/teststore"
	"github.com/cortexhq/cortex/postgres"
	"github.com/cortexhq/cortex/push"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/voice"
)

// pushed indexes one agent's folder of the real corpus into a laptop's
// store and pushes it to a new team store; it returns the team store's
// URL, the laptop's store, a read-only handle on its file and the team
// store.
func pushed(t *testing.T, agent string) (string, *sqlite.DB, *sql.DB, *postgres.DB) {
	t.Helper()
	url := testpg.URL(t)
	local, path := teststore.Indexed(t, filepath.Join(testcorpus.Real(t), agent))
	team := openTeam(t, url)
	if _, err := push.Run(context.Background(), local, team, push.Options{Hostname: "laptop"}); err != nil {
		t.Fatal(err)
	}
	return url, local, teststore.Reader(t, path), team
}

// With content none no text leaves the laptop: counts, ids, names and
// timestamps do, and the incidents that need no text are there. Raising the
// level sends every row again with its text.
func TestPushContentLevels(t *testing.T) {
	if testing.Short() {
		t.Skip("pushes the real corpus three times")
	}
	url := testpg.URL(t)
	ctx := context.Background()
	local, _ := teststore.Indexed(t, testcorpus.Real(t))
	team := openTeam(t, url)
	res, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop", Content: store.ContentNone})
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted["logs"] == 0 {
		t.Fatalf("nothing pushed: %+v", res)
	}
	for q, want := range map[string]int64{
		`SELECT count(*) FROM logs WHERE message <> '' OR raw IS NOT NULL OR fts IS NOT NULL`:                                         0,
		`SELECT count(*) FROM ai_user_events WHERE text <> ''`:                                                                        0,
		`SELECT count(*) FROM ai_mcp_events WHERE arguments_json IS NOT NULL OR output_preview IS NOT NULL OR error_text IS NOT NULL`: 0,
		`SELECT count(*) FROM ai_hook_events WHERE stdout_preview IS NOT NULL OR stderr_preview IS NOT NULL`:                          0,
		`SELECT count(*) FROM ai_user_events WHERE metadata_json LIKE '%"command"%' OR metadata_json LIKE '%"reason"%'`:               0,
		`SELECT count(*) FROM ai_skill_events WHERE metadata_json LIKE '%"args"%'`:                                                    0,
		`SELECT count(*) FROM ai_user_events WHERE voice IS NOT NULL`:                                                                 0,
		`SELECT count(*) FROM ai_skill_bodies WHERE body <> ''`:                                                                       0,
		// The calls' facts go, without their failure lines; operations
		// as hashes.
		`SELECT count(*) FROM ai_mcp_events WHERE why IS NOT NULL OR op NOT LIKE 'sha256:%' AND op <> ''`: 0,
		`SELECT count(*) FROM ai_mcp_events WHERE class IS NULL OR facts_version IS NULL`:                 0,
		// The assistant rows' claims go (read from the text before it is
		// dropped), as kinds only.
		`SELECT count(*) FROM logs WHERE ai_role = 'assistant' AND (claim IS NULL OR claim_version IS NULL)`: 0,
	} {
		if n := testpg.Count(t, url, q); n != want {
			t.Errorf("%s = %d, want %d", q, n, want)
		}
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM ai_skill_events`); n == 0 {
		t.Error("no skill events: names should be pushed")
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM ai_skill_bodies WHERE bytes > 0`); n == 0 {
		t.Error("no skill versions: their hashes and sizes should be pushed")
	}
	svc := app.New(team)
	st, err := svc.Status(ctx)
	if err != nil || st.Rows == 0 || st.Sessions == 0 {
		t.Errorf("status %+v %v", st, err)
	}
	for _, e := range st.RecentErrors {
		if e.Preview != "" {
			t.Errorf("a parse error preview was pushed with content none: %q", e.Preview)
		}
	}
	if _, err := svc.Search(ctx, cortex.SearchParams{Query: "error", Limit: 10}); err != nil {
		t.Errorf("search on a text-less store: %v", err)
	}
	// Raising the level sends the rows again, with text.
	res, err = push.Run(ctx, local, team, push.Options{Hostname: "laptop", Content: store.ContentRedacted})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Reset || res.Updated["logs"] == 0 {
		t.Errorf("changing the level did not resend the rows: %+v", res)
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM logs WHERE message <> ''`); n == 0 {
		t.Error("no text after pushing redacted")
	}
	for _, q := range []string{`SELECT count(*) FROM ai_skill_bodies WHERE body <> ''`,
		`SELECT count(*) FROM ai_user_events WHERE voice IS NOT NULL`} {
		if n := testpg.Count(t, url, q); n == 0 {
			t.Errorf("%s = 0 after pushing redacted", q)
		}
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM logs WHERE raw IS NOT NULL`); n != 0 {
		t.Errorf("%d original records pushed with content redacted", n)
	}
	// Without the records, the rows are still found by their full text
	// and its stems ("errors" finds "error"), failure lines are sent.
	if res, err := svc.Search(ctx, cortex.SearchParams{Query: "errors", Role: cortex.RoleToolResult, Limit: 10}); err != nil || len(res.Hits) == 0 {
		t.Errorf("search after pushing redacted: %+v %v", res, err)
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM ai_mcp_events WHERE why IS NOT NULL`); n == 0 {
		t.Error("no failure lines after pushing redacted")
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM push_stores WHERE content = 'redacted'`); n != 1 {
		t.Errorf("the store's level is not recorded as redacted")
	}
	res, err = push.Run(ctx, local, team, push.Options{Hostname: "laptop", Content: store.ContentRedacted})
	if err != nil || res.Rows != 0 || res.Reset {
		t.Errorf("re-push at the same level: %+v %v", res, err)
	}
}

// A record its agent rewrote (Gemini rewrites its chat file) changes its
// row in place on the laptop; the next push sends the change.
func TestPushSendsChangedRows(t *testing.T) {
	url := testpg.URL(t)
	ctx := context.Background()
	src := filepath.Join(testcorpus.Real(t), "gemini/M-Gemini/chat_logs/session-2025-12-30T01-16-3f9ce747.json")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "session.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	local, _ := teststore.Indexed(t, dir)
	team := openTeam(t, url)
	if _, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop"}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	msgs := doc["messages"].([]any)
	var changed int
	for _, m := range msgs {
		m := m.(map[string]any)
		if m["type"] == "user" && strings.Contains(m["content"].(string), "pacman") {
			m["content"] = "how were you installed? was it npm, pacman or a tarball?"
			changed++
		}
	}
	if changed != 1 {
		t.Fatalf("changed %d messages", changed)
	}
	b, _ = json.Marshal(doc)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ir, err := ingest.Index(ctx, local, ingest.Options{Paths: []string{dir}, Hostname: "testhost"})
	if err != nil {
		t.Fatal(err)
	}
	if ir.Updated == 0 {
		t.Fatalf("re-index updated no row: %+v", ir)
	}
	res, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Updated["logs"] == 0 || res.Inserted["logs"] != 0 {
		t.Errorf("push after the rewrite: %+v", res)
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM logs WHERE message LIKE '%or a tarball?'`); n != 1 {
		t.Errorf("the team store has %d rows with the rewritten text", n)
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM ai_user_events WHERE text LIKE '%or a tarball?'`); n != 1 {
		t.Errorf("the team store has %d user events with the rewritten text", n)
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM ai_user_events WHERE text LIKE '%npm or pacman?'`); n != 0 {
		t.Errorf("the team store still has %d user events with the old text", n)
	}
	hits, err := app.New(team).Search(ctx, cortex.SearchParams{Query: "tarball", Limit: 10})
	if err != nil || len(hits.Hits) != 1 {
		t.Errorf("search for the new text: %+v %v", hits, err)
	}
	// Changes every known team store has are pruned from the laptop.
	res, err = push.Run(ctx, local, team, push.Options{Hostname: "laptop"})
	if err != nil || res.Rows != 0 {
		t.Errorf("re-push: %+v %v", res, err)
	}
}

// A purge on the laptop (cortex purge) reaches the team store with the
// next push: the rows and their events go, the session's rollup goes with
// its last row, and skill bodies no remaining event shows go too.
func TestPushSendsPurges(t *testing.T) {
	ctx := context.Background()
	url, local, lq, team := pushed(t, "claude")
	// The session with the most skill loads that showed a body.
	var session string
	if err := lq.QueryRowContext(ctx, `SELECT ai_session_id FROM ai_skill_events WHERE body_sha256 <> ''
		GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`).Scan(&session); err != nil {
		t.Fatalf("no session with a skill body: %v", err)
	}
	before := testpg.Count(t, url, `SELECT count(*) FROM logs WHERE ai_session_id = '`+session+`'`)
	pr, err := app.New(local).Purge(ctx, app.PurgeParams{Session: session})
	if err != nil || pr.Rows == 0 || pr.SessionsRemoved != 1 {
		t.Fatalf("purge: %+v %v", pr, err)
	}
	res, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted["logs"] != before || res.Deleted["ai_sessions"] != 1 || res.Inserted["logs"] != 0 {
		t.Errorf("push after purging %d rows: %+v", before, res)
	}
	for _, table := range []string{"logs", "ai_skill_events", "ai_mcp_events", "ai_hook_events", "ai_user_events", "ai_sessions"} {
		if n := testpg.Count(t, url, `SELECT count(*) FROM `+table+` WHERE ai_session_id = '`+session+`'`); n != 0 {
			t.Errorf("%s: %d rows of the purged session left on the team store", table, n)
		}
	}
	// The team store holds exactly the bodies the laptop's remaining
	// events show.
	var shown int64
	if err := lq.QueryRowContext(ctx, `SELECT count(DISTINCT e.body_sha256) FROM ai_skill_events e
		JOIN ai_skill_bodies b ON b.sha256 = e.body_sha256`).Scan(&shown); err != nil {
		t.Fatal(err)
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM ai_skill_bodies`); n != shown || n == 0 {
		t.Errorf("the team store holds %d skill bodies, the laptop's events show %d", n, shown)
	}
	a, errA := app.New(local).Sessions(ctx, cortex.SessionParams{Limit: 1000})
	b, errB := app.New(team).Sessions(ctx, cortex.SessionParams{Limit: 1000})
	if errA != nil || errB != nil || len(a.Sessions) != len(b.Sessions) || a.Total != b.Total {
		t.Errorf("sessions after the purge: laptop %d (%v), team %d (%v)", len(a.Sessions), errA, len(b.Sessions), errB)
	}
	if res, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop"}); err != nil || res.Rows != 0 {
		t.Errorf("re-push: %+v %v", res, err)
	}
}

// Readings of what users said, read again by newer rules on the laptop
// (ingest.RefreshVoices), reach the team store as changes.
func TestPushSendsVoiceReadings(t *testing.T) {
	ctx := context.Background()
	url, local, lq, team := pushed(t, "gemini")
	if n := testpg.Count(t, url, `SELECT count(*) FROM ai_user_events WHERE voice IS NOT NULL`); n == 0 {
		t.Fatal("no reading pushed")
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM ai_user_events WHERE voice_version IS NULL OR voice_version = 0`); n != 0 {
		t.Errorf("%d user events pushed without their rules' version", n)
	}
	var id int64
	if err := lq.QueryRowContext(ctx, `SELECT id FROM ai_user_events WHERE voice IS NOT NULL ORDER BY id LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if err := local.SetVoices(ctx, []sqlite.VoiceReading{{ID: id, Voice: "", Version: 7}}); err != nil {
		t.Fatal(err)
	}
	res, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop"})
	if err != nil || res.Updated["ai_user_events"] != 1 {
		t.Fatalf("push after a new reading: %+v %v", res, err)
	}
	if n := testpg.Count(t, url, `SELECT count(*) FROM ai_user_events WHERE voice IS NULL AND voice_version = 7`); n != 1 {
		t.Errorf("the new reading is on %d team rows, want 1", n)
	}
	current, err := team.VoicesCurrent(ctx, voice.Version)
	if err != nil || current {
		t.Errorf("VoicesCurrent with a reading of other rules: %v %v", current, err)
	}
}

// Sessions' titles and token usage reach the team store, also when they
// change after the session's rows were pushed: a summary written later, in
// another file of the folder, titles a pushed session, and a response
// whose counts grow changes its usage row. A title is text: none drops it,
// redacted redacts it again.
func TestPushSessionTitlesAndUsage(t *testing.T) {
	url := testpg.URL(t)
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join(testcorpus.Real(t),
		"claude/claude-code-log/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "-experiments-ideas")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var leaf string
	for _, line := range strings.Split(string(b), "\n") {
		var rec struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.UUID != "" {
			leaf = rec.UUID
		}
	}
	local, path := teststore.Indexed(t, dir)
	team := openTeam(t, url)
	if _, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop"}); err != nil {
		t.Fatal(err)
	}
	same := func(what string) cortex.Session {
		t.Helper()
		a, errA := app.New(local).Sessions(ctx, cortex.SessionParams{Limit: 10})
		b, errB := app.New(team).Sessions(ctx, cortex.SessionParams{Limit: 10})
		if errA != nil || errB != nil || len(a.Sessions) != 1 || len(b.Sessions) != 1 {
			t.Fatalf("%s: sessions %+v (%v), %+v (%v)", what, a, errA, b, errB)
		}
		ja, _ := json.Marshal(a.Sessions[0])
		jb, _ := json.Marshal(b.Sessions[0])
		if string(ja) != string(jb) {
			t.Errorf("%s: the laptop's session\n%s\nthe team's\n%s", what, ja, jb)
		}
		return b.Sessions[0]
	}
	s := same("first push")
	if s.TitleSource != "first_prompt" || s.Usage == nil || s.Usage.Total.Output == 0 || len(s.Models) == 0 {
		t.Fatalf("the pushed session has no title or usage: %+v", s)
	}
	// A summary of the session written later, in a new file of the folder
	// (as Claude Code does): no row of the session changes.
	sum, _ := json.Marshal(map[string]string{"type": "summary", "summary": "Ideas for the experiments", "leafUuid": leaf})
	if err := os.WriteFile(filepath.Join(dir, "later.jsonl"), append(sum, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Index(ctx, local, ingest.Options{Paths: []string{dir}, Hostname: "testhost"}); err != nil {
		t.Fatal(err)
	}
	res, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop"})
	if err != nil || res.Updated["ai_sessions"] != 1 || res.Inserted["logs"] != 0 {
		t.Fatalf("push after a summary: %+v %v", res, err)
	}
	if s := same("after a summary"); s.Title != "Ideas for the experiments" || s.TitleSource != "summary" {
		t.Errorf("the team's session is titled %q (%s)", s.Title, s.TitleSource)
	}
	// A response's counts grow (Claude writes a streamed response's usage
	// again with its final output count).
	w := teststore.Writer(t, path)
	if _, err := w.ExecContext(ctx, `UPDATE ai_token_usage SET output_tokens = output_tokens + 1000
		WHERE id = (SELECT min(id) FROM ai_token_usage)`); err != nil {
		t.Fatal(err)
	}
	res, err = push.Run(ctx, local, team, push.Options{Hostname: "laptop"})
	if err != nil || res.Updated["ai_token_usage"] != 1 || res.Rows != 1 {
		t.Fatalf("push after a usage change: %+v %v", res, err)
	}
	same("after a usage change")
	if res, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop"}); err != nil || res.Rows != 0 {
		t.Errorf("re-push: %+v %v", res, err)
	}
	// Titles are text. A title holding a secret (stored before the rules
	// knew it) is redacted again with redacted, dropped with none.
	secret := "ghp_" + strings.Repeat("x1Y2z3", 6)
	if _, err := w.ExecContext(ctx, `UPDATE ai_sessions SET title = ?`, "deploy with "+secret); err != nil {
		t.Fatal(err)
	}
	for _, level := range []store.Content{store.ContentRedacted, store.ContentNone} {
		res, err := push.Run(ctx, local, team, push.Options{Hostname: "laptop", Content: level})
		if err != nil || !res.Reset {
			t.Fatalf("push %s: %+v %v", level, res, err)
		}
		if n := testpg.Count(t, url, `SELECT count(*) FROM ai_sessions WHERE title LIKE '%`+secret+`%' OR first_prompt LIKE '%`+secret+`%'`); n != 0 {
			t.Errorf("%s: the secret of a title reached the team store", level)
		}
		texts := testpg.Count(t, url, `SELECT count(*) FROM ai_sessions WHERE title IS NOT NULL OR first_prompt IS NOT NULL`)
		if want := map[store.Content]int64{store.ContentRedacted: 1, store.ContentNone: 0}[level]; texts != want {
			t.Errorf("%s: %d sessions with a title or first prompt on the team store, want %d", level, texts, want)
		}
		if n := testpg.Count(t, url, `SELECT count(*) FROM ai_token_usage`); n == 0 {
			t.Errorf("%s: no token usage pushed (counts are no text)", level)
		}
	}
}
