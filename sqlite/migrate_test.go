package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/cortexhq/cortex"
)

// storeAtSchema creates a store as a binary of schema version upTo left
// it, and returns its path and a raw connection to it.
func storeAtSchema(t *testing.T, upTo int) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version > upTo {
			break
		}
		if _, err := raw.Exec(m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (?, ?, 'x')`, m.Version, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	return path, raw
}

// A store written by a version before the user events (schema 6) gets the
// agent thread of its events from their rows, and asks for a backfill of
// user events (rows stored without them).
func TestMigrationToUserEvents(t *testing.T) {
	path, raw := storeAtSchema(t, 6)
	for _, q := range []string{
		`INSERT INTO logs(id, timestamp, hostname, received_at, ai_tool, ai_session_id, ai_agent_id) VALUES
			(1, '2026-01-01T00:00:00.000Z', 'h', 'x', 'claude', 's', NULL),
			(2, '2026-01-01T00:00:01.000Z', 'h', 'x', 'claude', 's', 'a7'),
			(3, '2026-01-01T00:00:02.000Z', 'h', 'x', 'claude', 's', NULL)`,
		`UPDATE logs SET metadata_json = '{"sidechain":true}' WHERE id = 3`,
		`INSERT INTO ai_skill_events(log_id, ai_tool, ai_session_id, hostname, timestamp, skill_name, event_kind, evidence_kind)
			VALUES (1, 'claude', 's', 'h', '2026-01-01T00:00:00.000Z', 'run', 'claude_skill_tool', 'structured_json_field'),
			       (2, 'claude', 's', 'h', '2026-01-01T00:00:01.000Z', 'run', 'claude_skill_tool', 'structured_json_field')`,
		`INSERT INTO ai_mcp_events(call_log_id, result_log_id, ai_tool, ai_session_id, hostname, timestamp, call_id, event_kind, status)
			VALUES (NULL, 3, 'claude', 's', 'h', '2026-01-01T00:00:02.000Z', 'c1', 'claude_tool_result', 'error')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check, _ := sql.Open("sqlite", path+"?_pragma=query_only(1)")
	defer check.Close()
	var a1, a2, a3 sql.NullString
	if err := check.QueryRow(`SELECT (SELECT ai_agent_id FROM ai_skill_events WHERE log_id = 1), (SELECT ai_agent_id FROM ai_skill_events WHERE log_id = 2),
		(SELECT ai_agent_id FROM ai_mcp_events WHERE call_id = 'c1')`).Scan(&a1, &a2, &a3); err != nil {
		t.Fatal(err)
	}
	if a1.Valid || a2.String != "a7" || a3.String != ThreadSidechain {
		t.Errorf("threads after migration: %v %v %v", a1, a2, a3)
	}
	kinds, err := db.PendingBackfills(context.Background())
	if err != nil || len(kinds) != 1 || kinds[0] != "users" {
		t.Errorf("pending backfills %v %v", kinds, err)
	}
	// A new, empty store asks for nothing.
	fresh, _ := openTestDB(t)
	if kinds, err := fresh.PendingBackfills(context.Background()); err != nil || len(kinds) != 0 {
		t.Errorf("fresh store pending backfills %v %v", kinds, err)
	}
}

// A store written before migration 0031 keeps its parsers' states, now
// apart from the checkpoints; a resumed read gets its state back, and a
// scan of every checkpoint reads none.
func TestMigrationParserStatesApart(t *testing.T) {
	path, raw := storeAtSchema(t, 30)
	if _, err := raw.Exec(`INSERT INTO transcript_sources(id, path, kind, ai_tool, size, parser_state, complete) VALUES
		(1, '/t/a.jsonl', 'claude', 'claude', 10, '{"session_id":"s1"}', 0),
		(2, '/t/b.jsonl', 'codex', 'codex', 20, NULL, 1),
		(3, '/t/c.txt', 'unsupported', NULL, 5, '{"sniff":2}', 1),
		(9, '/t/gone.jsonl', 'claude', 'claude', 1, NULL, 1)`); err != nil {
		t.Fatal(err)
	}
	// Ids are never given twice (AUTOINCREMENT): the highest was 9.
	if _, err := raw.Exec(`DELETE FROM transcript_sources WHERE id = 9`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	ctx := context.Background()
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for p, want := range map[string]string{"/t/a.jsonl": `{"session_id":"s1"}`, "/t/b.jsonl": "", "/t/c.txt": `{"sniff":2}`} {
		s, ok, err := db.Source(ctx, p)
		if err != nil || !ok || string(s.ParserState) != want {
			t.Errorf("Source(%s): state %q ok=%v err=%v, want %q", p, s.ParserState, ok, err, want)
		}
	}
	all, err := db.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Only an unsupported file's state (what sniffed it) is read by a scan.
	if len(all) != 3 || all["/t/a.jsonl"].ParserState != nil || string(all["/t/c.txt"].ParserState) != `{"sniff":2}` ||
		all["/t/b.jsonl"].Size != 20 {
		t.Errorf("Sources after the migration: %+v", all)
	}
	var cols int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('transcript_sources') WHERE name = 'parser_state'`).
		Scan(&cols); err != nil || cols != 0 {
		t.Errorf("transcript_sources still has parser_state (%d, %v)", cols, err)
	}
	res, err := db.Import(ctx, cortex.ImportBatch{Source: cortex.Source{Path: "/t/new.jsonl", Kind: "claude", Size: 1}})
	if err != nil || res.SourceID != 10 {
		t.Errorf("a new source after the migration has id %d (%v), want 10", res.SourceID, err)
	}
	var unique int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM pragma_index_list('transcript_sources') l
		JOIN pragma_index_info(l.name) i WHERE l."unique" = 1 AND i.name = 'path'`).Scan(&unique); err != nil || unique != 1 {
		t.Errorf("path is not unique after the migration (%d, %v)", unique, err)
	}
}
