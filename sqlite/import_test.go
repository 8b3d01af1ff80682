package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

// logRow is every column of a logs row, read back with our own SQL.
type logRow struct {
	ID                                       int64
	Timestamp, Hostname                      string
	Facility                                 sql.NullString
	Severity                                 string
	AppName                                  sql.NullString
	Message                                  string
	Raw                                      []byte
	ReceivedAt, Source                       string
	Tool, Project, Session, Path, Role, Kind sql.NullString
	ToolName, AgentID                        sql.NullString
	IsError                                  int64
	SourceID, SourceLine                     sql.NullInt64
	Meta                                     sql.NullString
}

func readLogRow(t *testing.T, db *DB, id int64) logRow {
	t.Helper()
	var r logRow
	err := db.r.QueryRow(`SELECT id, timestamp, hostname, facility, severity, app_name, message, raw, received_at, source,
		ai_tool, ai_project, ai_session_id, COALESCE(ai_transcript_path, (SELECT path FROM transcript_sources s WHERE s.id = logs.source_id)), ai_role, ai_kind, ai_tool_name, ai_agent_id, is_error,
		source_id, source_line, metadata_json FROM logs WHERE id = ?`, id).Scan(&r.ID, &r.Timestamp, &r.Hostname, &r.Facility,
		&r.Severity, &r.AppName, &r.Message, &r.Raw, &r.ReceivedAt, &r.Source, &r.Tool, &r.Project, &r.Session, &r.Path,
		&r.Role, &r.Kind, &r.ToolName, &r.AgentID, &r.IsError, &r.SourceID, &r.SourceLine, &r.Meta)
	if err != nil {
		t.Fatalf("read logs row %d: %v", id, err)
	}
	// A new row's raw is a reference into its block: compare the record.
	if r.Raw, err = db.resolveRaw(context.Background(), db.r, r.Raw); err != nil {
		t.Fatalf("read logs row %d: %v", id, err)
	}
	return r
}

func ns(s string) sql.NullString   { return sql.NullString{String: s, Valid: true} }
func ni(n int64) sql.NullInt64     { return sql.NullInt64{Int64: n, Valid: true} }
func sortedIDs(v ...int64) []int64 { v = slices.Clone(v); slices.Sort(v); return v }

func TestImportStoresRows(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	const path = "/home/u/.claude/projects/p/sess-1.jsonl"
	cet := time.FixedZone("CET", 3600)
	ts := time.Date(2026, 11, 30, 11, 15, 30, 123456789, cet) // 10:15:30.123 UTC

	user := rec("u:1", "hash-1", cortex.RoleUser, "please deploy the walrus service", ts)
	user.Entry.Kind = "user"
	user.Raw = []byte("zstd\x00\x01\x02 raw bytes")
	user.Line = 3
	user.Meta = `{"uuid":"1"}`
	asst := rec("u:2", "hash-2", cortex.RoleAssistant, "walrus deployed", ts.Add(time.Second))
	asst.Entry.Project = ""
	asst.Line = 4
	call := rec("u:3", "hash-3", cortex.RoleToolCall, "running cargo-build --release", ts.Add(2*time.Second))
	call.Entry.Kind = "assistant:tool_use"
	call.Entry.ToolName = "Bash"
	call.Entry.IsError = true
	call.Entry.Severity = cortex.SevError
	call.Entry.AgentID = "agent-7"
	call.Line = 5
	think := rec("u:4", "hash-4", cortex.RoleThinking, "ponderous reasoning about walrus", ts.Add(3*time.Second))
	empty := rec("u:5", "hash-5", cortex.RoleToolResult, "", ts.Add(4*time.Second))

	b := batch(path, user, asst, call, think, empty)
	res := mustImport(t, db, b)[0]
	if res.Inserted != 5 || res.Updated != 0 || res.Duplicates != 0 || res.SourceID == 0 {
		t.Fatalf("result %+v, want 5 inserted and a source id", res)
	}
	if n := count(t, db, `SELECT id FROM transcript_sources WHERE path = ?`, path); n != res.SourceID {
		t.Errorf("SourceID %d, transcript_sources says %d", res.SourceID, n)
	}

	id1 := logID(t, db, path, "u:1")
	got := readLogRow(t, db, id1)
	want := logRow{
		ID: id1, Timestamp: "2026-11-30T10:15:30.123Z", Hostname: "host-a", Facility: ns("transcript"),
		Severity: "info", AppName: ns("claude-transcript"), Message: "please deploy the walrus service",
		Raw: []byte("zstd\x00\x01\x02 raw bytes"), ReceivedAt: "2026-11-30T12:00:00.000Z", Source: "transcripts",
		Tool: ns("claude"), Project: ns("/home/u/proj"), Session: ns("sess-1"), Path: ns(path), Role: ns("user"),
		Kind: ns("user"), SourceID: ni(res.SourceID), SourceLine: ni(3), Meta: ns(`{"uuid":"1"}`),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("row u:1\n got %+v\nwant %+v", got, want)
	}
	got = readLogRow(t, db, logID(t, db, path, "u:2"))
	if got.Project.Valid || got.ToolName.Valid || got.AgentID.Valid || got.Meta.Valid || got.IsError != 0 {
		t.Errorf("row u:2: empty project/tool name/agent/meta must be NULL, is_error 0: %+v", got)
	}
	if got.Timestamp != "2026-11-30T10:15:31.123Z" || got.Role != ns("assistant") {
		t.Errorf("row u:2: %+v", got)
	}
	got = readLogRow(t, db, logID(t, db, path, "u:3"))
	if got.ToolName != ns("Bash") || got.AgentID != ns("agent-7") || got.IsError != 1 || got.Severity != "err" ||
		got.Kind != ns("assistant:tool_use") || got.SourceLine != ni(5) {
		t.Errorf("row u:3: %+v", got)
	}

	// The ledger maps every key to its row and hash.
	type ledger struct {
		key, hash, msg string
	}
	rows, err := db.r.Query(`SELECT r.record_key, r.content_hash, l.message FROM transcript_import_records r
		JOIN logs l ON l.id = r.log_id WHERE r.source_id = ? ORDER BY r.record_key`, res.SourceID)
	if err != nil {
		t.Fatal(err)
	}
	var gotLedger []ledger
	for rows.Next() {
		var l ledger
		if err := rows.Scan(&l.key, &l.hash, &l.msg); err != nil {
			t.Fatal(err)
		}
		gotLedger = append(gotLedger, l)
	}
	rows.Close()
	wantLedger := []ledger{{"u:1", "hash-1", user.Entry.Text}, {"u:2", "hash-2", asst.Entry.Text},
		{"u:3", "hash-3", call.Entry.Text}, {"u:4", "hash-4", think.Entry.Text}, {"u:5", "hash-5", ""}}
	if !reflect.DeepEqual(gotLedger, wantLedger) {
		t.Errorf("ledger\n got %v\nwant %v", gotLedger, wantLedger)
	}

	// Full-text: every row is indexed from its stored record, thinking
	// included (a record says something even when the row's text is empty).
	id2, id3 := logID(t, db, path, "u:2"), logID(t, db, path, "u:3")
	id4, id5 := logID(t, db, path, "u:4"), logID(t, db, path, "u:5")
	if got, want := indexedRows(t, db), sortedIDs(id1, id2, id3, id4, id5); !reflect.DeepEqual(got, want) {
		t.Errorf("indexed rows %v, want %v (every record)", got, want)
	}
	if got, want := ftsMatch(t, db, "walrus"), sortedIDs(id1, id2, id4); !reflect.DeepEqual(got, want) {
		t.Errorf("fts walrus = %v, want %v", got, want)
	}
	if got := searchIDs(t, db, cortex.SearchParams{Query: "walrus"}); !reflect.DeepEqual(got, []int64{id4, id2, id1}) {
		t.Errorf("Search walrus = %v, want %v (newest first)", got, []int64{id4, id2, id1})
	}
	if got := searchIDs(t, db, cortex.SearchParams{Query: "ponderous"}); !reflect.DeepEqual(got, []int64{id4}) {
		t.Errorf("Search ponderous = %v, want the thinking row %d", got, id4)
	}
	if got := searchIDs(t, db, cortex.SearchParams{Query: "cargo-build"}); !reflect.DeepEqual(got, []int64{id3}) {
		t.Errorf("Search cargo-build = %v, want [%d]", got, id3)
	}
}

// tableCounts snapshots the row counts of every table a batch writes.
func tableCounts(t *testing.T, db *DB) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, q := range []string{"logs", "transcript_import_records", "transcript_sources", "transcript_parse_errors",
		"transcript_unknown_types", "ai_sessions", "log_counts"} {
		out[q] = count(t, db, "SELECT count(*) FROM "+q)
	}
	out["sum(log_counts.rows)"] = count(t, db, "SELECT COALESCE(sum(rows), 0) FROM log_counts")
	out["sum(ai_sessions.rows)"] = count(t, db, "SELECT COALESCE(sum(rows), 0) FROM ai_sessions")
	out["sum(transcript_sources.records)"] = count(t, db, "SELECT COALESCE(sum(records), 0) FROM transcript_sources")
	return out
}

func TestImportSameBatchTwice(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	b := batch("/t/a.jsonl",
		rec("k1", "", cortex.RoleUser, "one", testNow),
		rec("k2", "", cortex.RoleAssistant, "two", testNow.Add(time.Second)),
		rec("k3", "", cortex.RoleThinking, "three", testNow.Add(2*time.Second)))
	mustImport(t, db, b)
	before := tableCounts(t, db)
	res := mustImport(t, db, b)[0]
	if res.Inserted != 0 || res.Updated != 0 || res.Duplicates != 3 {
		t.Errorf("second import: %+v, want 0 inserted, 3 duplicates", res)
	}
	if after := tableCounts(t, db); !reflect.DeepEqual(before, after) {
		t.Errorf("tables changed by a duplicate import:\nbefore %v\nafter  %v", before, after)
	}
}

func TestImportChangedRecordIsUpdated(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	const path = "/t/a.jsonl"
	mustImport(t, db, batch(path,
		rec("k1", "v1", cortex.RoleAssistant, "old giraffe text", testNow),
		rec("k2", "v1", cortex.RoleUser, "stable words", testNow),
		rec("k3", "v1", cortex.RoleThinking, "hidden thoughts", testNow)))
	id1, id2, id3 := logID(t, db, path, "k1"), logID(t, db, path, "k2"), logID(t, db, path, "k3")
	before := tableCounts(t, db)

	changed := rec("k1", "v2", cortex.RoleAssistant, "new okapi text", testNow.Add(time.Minute))
	changed.Line = 9
	res := mustImport(t, db, batch(path, changed, rec("k2", "v1", cortex.RoleUser, "stable words", testNow)))[0]
	if res.Inserted != 0 || res.Updated != 1 || res.Duplicates != 1 {
		t.Fatalf("result %+v, want 1 updated, 1 duplicate", res)
	}
	if got := logID(t, db, path, "k1"); got != id1 {
		t.Errorf("ledger points k1 at row %d, want the same row %d", got, id1)
	}
	row := readLogRow(t, db, id1)
	if row.Message != "new okapi text" || row.Timestamp != cortex.FormatTime(testNow.Add(time.Minute)) || row.SourceLine != ni(9) {
		t.Errorf("updated row: %+v", row)
	}
	if h := count(t, db, `SELECT count(*) FROM transcript_import_records WHERE record_key = 'k1' AND content_hash = 'v2'`); h != 1 {
		t.Error("ledger hash of k1 not updated")
	}
	if got := ftsMatch(t, db, "giraffe"); len(got) != 0 {
		t.Errorf("old text still indexed: %v", got)
	}
	if got := searchIDs(t, db, cortex.SearchParams{Query: "giraffe"}); len(got) != 0 {
		t.Errorf("Search finds the old text: %v", got)
	}
	if got := searchIDs(t, db, cortex.SearchParams{Query: "okapi"}); !reflect.DeepEqual(got, []int64{id1}) {
		t.Errorf("Search okapi = %v, want [%d]", got, id1)
	}
	after := tableCounts(t, db)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("an update changed row counts:\nbefore %v\nafter  %v", before, after)
	}

	// Changed rows are indexed again with what they hold now, whatever
	// their role.
	mustImport(t, db, batch(path,
		rec("k2", "v2", cortex.RoleThinking, "steady words now thinking", testNow),
		rec("k3", "v2", cortex.RoleAssistant, "visible notions", testNow)))
	if got, want := indexedRows(t, db), sortedIDs(id1, id2, id3); !reflect.DeepEqual(got, want) {
		t.Errorf("indexed rows %v, want %v", got, want)
	}
	if got := ftsMatch(t, db, "stable"); len(got) != 0 {
		t.Errorf("a changed row's old text is still indexed: %v", got)
	}
	if got := ftsMatch(t, db, "steady"); !reflect.DeepEqual(got, []int64{id2}) {
		t.Errorf("fts steady = %v, want [%d]", got, id2)
	}
	if got := ftsMatch(t, db, "hidden"); len(got) != 0 {
		t.Errorf("fts hidden = %v, want none", got)
	}
	if got := ftsMatch(t, db, "notions"); !reflect.DeepEqual(got, []int64{id3}) {
		t.Errorf("fts notions = %v, want [%d]", got, id3)
	}
}

// Batches of one file arrive grouped in one ImportBatches call, so a record
// can be inserted and changed (or changed twice) within one transaction.
// Only its last text may stay searchable.
func TestImportChangedTwiceInOneCall(t *testing.T) {
	t.Parallel()
	const path = "/t/a.jsonl"

	t.Run("inserted then changed", func(t *testing.T) {
		db, _ := openTestDB(t)
		res := mustImport(t, db,
			batch(path, rec("k1", "v1", cortex.RoleUser, "alpha", testNow)),
			batch(path, rec("k1", "v2", cortex.RoleUser, "beta", testNow)))
		if res[0].Inserted != 1 || res[1].Updated != 1 {
			t.Fatalf("results %+v", res)
		}
		id := logID(t, db, path, "k1")
		if got := ftsMatch(t, db, "alpha"); len(got) != 0 {
			t.Errorf("first text still indexed: %v", got)
		}
		if got := ftsMatch(t, db, "beta"); !reflect.DeepEqual(got, []int64{id}) {
			t.Errorf("fts beta = %v, want [%d]", got, id)
		}
		if got := indexedRows(t, db); !reflect.DeepEqual(got, []int64{id}) {
			t.Errorf("indexed rows %v, want [%d] once", got, id)
		}
		if n := count(t, db, `SELECT count(*) FROM logs`); n != 1 {
			t.Errorf("logs rows %d, want 1", n)
		}
	})

	t.Run("stored then changed twice", func(t *testing.T) {
		db, _ := openTestDB(t)
		mustImport(t, db, batch(path, rec("k1", "v1", cortex.RoleUser, "gamma", testNow)))
		mustImport(t, db,
			batch(path, rec("k1", "v2", cortex.RoleUser, "delta", testNow)),
			batch(path, rec("k1", "v3", cortex.RoleUser, "epsilon", testNow)))
		id := logID(t, db, path, "k1")
		for _, w := range []string{"gamma", "delta"} {
			if got := ftsMatch(t, db, w); len(got) != 0 {
				t.Errorf("%s still indexed: %v", w, got)
			}
		}
		if got := searchIDs(t, db, cortex.SearchParams{Query: "epsilon"}); !reflect.DeepEqual(got, []int64{id}) {
			t.Errorf("Search epsilon = %v, want [%d]", got, id)
		}
		if got := indexedRows(t, db); !reflect.DeepEqual(got, []int64{id}) {
			t.Errorf("indexed rows %v, want [%d] once", got, id)
		}
	})

	t.Run("inserted then changed to thinking", func(t *testing.T) {
		db, _ := openTestDB(t)
		mustImport(t, db,
			batch(path, rec("k1", "v1", cortex.RoleAssistant, "zeta", testNow)),
			batch(path, rec("k1", "v2", cortex.RoleThinking, "eta", testNow)))
		if got, want := indexedRows(t, db), []int64{logID(t, db, path, "k1")}; !reflect.DeepEqual(got, want) {
			t.Errorf("indexed rows %v, want %v", got, want)
		}
		if got := searchIDs(t, db, cortex.SearchParams{Query: "zeta"}); len(got) != 0 {
			t.Errorf("Search zeta = %v, want none", got)
		}
		if msg := readLogRow(t, db, logID(t, db, path, "k1")).Message; msg != "eta" {
			t.Errorf("message %q, want eta", msg)
		}
	})
}

func TestImportDuplicateKeysInOneBatch(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	const path = "/t/a.jsonl"
	first := rec("k1", "v1", cortex.RoleUser, "first version", testNow)
	first.Line = 1
	last := rec("k1", "v2", cortex.RoleUser, "final version", testNow)
	last.Line = 3
	res := mustImport(t, db, batch(path, first, rec("k2", "", cortex.RoleUser, "other", testNow), last,
		rec("k2", "", cortex.RoleUser, "other", testNow)))[0]
	if res.Inserted != 2 || res.Duplicates != 2 || res.Updated != 0 {
		t.Errorf("result %+v, want 2 inserted, 2 duplicates", res)
	}
	if n := count(t, db, `SELECT count(*) FROM logs`); n != 2 {
		t.Errorf("logs rows %d, want 2", n)
	}
	row := readLogRow(t, db, logID(t, db, path, "k1"))
	if row.Message != "final version" || row.SourceLine != ni(3) {
		t.Errorf("k1 row %+v, want the last version", row)
	}
	if n := count(t, db, `SELECT count(*) FROM transcript_import_records WHERE record_key = 'k1' AND content_hash = 'v2'`); n != 1 {
		t.Error("ledger does not hold the last version's hash")
	}
	if got := ftsMatch(t, db, "first"); len(got) != 0 {
		t.Errorf("the overridden text is indexed: %v", got)
	}
	if n := count(t, db, `SELECT rows FROM log_counts WHERE ai_role = 'user'`); n != 2 {
		t.Errorf("log_counts user = %d, want 2", n)
	}
}

// bigBatch returns n records with keys prefix0..prefixN-1.
func bigBatch(path, prefix string, n int, tool cortex.Tool) cortex.ImportBatch {
	var recs []cortex.ImportRecord
	for i := range n {
		r := rec(prefix+itoa(i), "", cortex.RoleAssistant, "bulk row "+prefix+itoa(i), testNow.Add(time.Duration(i)*time.Second))
		r.Entry.Tool = tool
		recs = append(recs, r)
	}
	b := batch(path, recs...)
	b.Source.Tool, b.Source.Kind = tool, string(tool)
	return b
}

func itoa(i int) string { return fmt.Sprintf("%04d", i) }

func TestImportBatchesOrderAndAtomicity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openTestDB(t)
	// Several sources, one call; sizes cross the statement chunk sizes.
	bs := []cortex.ImportBatch{
		bigBatch("/t/claude.jsonl", "c", 1, cortex.ToolClaude),
		bigBatch("/t/codex.jsonl", "x", 300, cortex.ToolCodex),
		bigBatch("/t/gemini.json", "g", 2, cortex.ToolGemini),
	}
	res := mustImport(t, db, bs...)
	for i, b := range bs {
		if res[i].Inserted != int64(len(b.Records)) {
			t.Errorf("result %d: %+v, want %d inserted", i, res[i], len(b.Records))
		}
		if id := count(t, db, `SELECT id FROM transcript_sources WHERE path = ?`, b.Source.Path); res[i].SourceID != id {
			t.Errorf("result %d: source id %d, stored %d", i, res[i].SourceID, id)
		}
		if n := count(t, db, `SELECT count(*) FROM logs JOIN transcript_sources s ON s.id = logs.source_id WHERE s.path = ? AND logs.ai_tool = ?`, b.Source.Path,
			string(b.Source.Tool)); n != int64(len(b.Records)) {
			t.Errorf("batch %d: %d rows stored, want %d", i, n, len(b.Records))
		}
	}
	if res[0].SourceID == res[1].SourceID || res[1].SourceID == res[2].SourceID {
		t.Errorf("sources share ids: %+v", res)
	}

	// One invalid batch in the middle: nothing of the call is stored, not
	// the valid batches before and after it, not their checkpoints.
	before := tableCounts(t, db)
	srcBefore, _, _ := db.Source(ctx, "/t/claude.jsonl")
	good := bigBatch("/t/new.jsonl", "n", 5, cortex.ToolClaude)
	good.ParseErrors = []cortex.ParseError{{Line: 1, Error: "bad"}}
	good.Unknown = []cortex.UnknownType{{Version: "1", Type: "t", Count: 1}}
	bad := bigBatch("/t/bad.jsonl", "b", 3, cortex.ToolClaude)
	bad.Records[1].Entry.Severity = "bogus"
	again := bigBatch("/t/claude.jsonl", "c", 4, cortex.ToolClaude)
	again.Source.Offset, again.Source.Size = 999, 999
	_, err := db.ImportBatches(ctx, []cortex.ImportBatch{good, bad, again})
	if err == nil {
		t.Fatal("ImportBatches accepted a row violating the severity CHECK")
	}
	if cortex.ErrorCode(err) == cortex.CodeInternal {
		t.Errorf("error %v carries no cortex code", err)
	}
	if after := tableCounts(t, db); !reflect.DeepEqual(before, after) {
		t.Errorf("a failed call changed the store:\nbefore %v\nafter  %v", before, after)
	}
	for _, p := range []string{"/t/new.jsonl", "/t/bad.jsonl"} {
		if _, ok, err := db.Source(ctx, p); ok || err != nil {
			t.Errorf("source %s registered by a failed call (%v)", p, err)
		}
	}
	if srcAfter, _, _ := db.Source(ctx, "/t/claude.jsonl"); !reflect.DeepEqual(srcBefore, srcAfter) {
		t.Errorf("checkpoint moved by a failed call:\nbefore %+v\nafter  %+v", srcBefore, srcAfter)
	}
	if got := ftsMatch(t, db, "n0000"); len(got) != 0 {
		t.Errorf("rows of the failed call are indexed: %v", got)
	}
	// The next call works and its ids follow the stored ones.
	maxID := count(t, db, `SELECT max(id) FROM logs`)
	mustImport(t, db, good)
	if n := count(t, db, `SELECT min(logs.id) FROM logs JOIN transcript_sources s ON s.id = logs.source_id WHERE s.path = '/t/new.jsonl'`); n <= maxID {
		t.Errorf("new row id %d not above %d", n, maxID)
	}
}

// sameSource compares checkpoints, times by instant.
func sameSource(t *testing.T, got, want cortex.Source) {
	t.Helper()
	if !got.FirstIndexedAt.Equal(want.FirstIndexedAt) || !got.LastIndexedAt.Equal(want.LastIndexedAt) {
		t.Errorf("indexed times %v / %v, want %v / %v", got.FirstIndexedAt, got.LastIndexedAt, want.FirstIndexedAt, want.LastIndexedAt)
	}
	got.FirstIndexedAt, got.LastIndexedAt = time.Time{}, time.Time{}
	want.FirstIndexedAt, want.LastIndexedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkpoint\n got %+v\nwant %+v", got, want)
	}
}

func TestSourceCheckpointRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 11, 1, 8, 0, 0, 250_000_000, time.UTC)}
	db, err := Open(ctx, t.TempDir()+"/c.db", Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t1 := clk.Now()
	const path = "/home/u/.codex/sessions/rollout-1.jsonl"
	src := cortex.Source{
		Path: path, Kind: "codex", Tool: cortex.ToolCodex, Size: 123456, ModTimeNS: 1764500000123456789,
		PrefixHash: "prefix-sha", AnchorHash: "anchor-sha", Offset: 120000, Line: 321,
		ParserState: []byte(`{"cwd":"/repo","model":"gpt"}`), PendingBytes: 17, Complete: true, LastError: "line 9: truncated",
	}
	b := bigBatch(path, "r", 2, cortex.ToolCodex)
	b.Source, b.Rewritten = src, true
	res := mustImport(t, db, b)[0]

	want := src
	want.ID, want.Records, want.Rewrites, want.FirstIndexedAt, want.LastIndexedAt = res.SourceID, 2, 1, t1, t1
	got, ok, err := db.Source(ctx, path)
	if err != nil || !ok {
		t.Fatalf("Source: %v %v", ok, err)
	}
	sameSource(t, got, want)

	// A later checkpoint: empty fields become empty again, counters add up,
	// first_indexed_at stays.
	clk.Set(t1.Add(90 * time.Minute))
	t2 := clk.Now()
	next := cortex.Source{Path: path, Kind: "codex", Tool: cortex.ToolCodex, Size: 200000, ModTimeNS: 1764500009000000000,
		Offset: 200000, Line: 400}
	b = bigBatch(path, "s", 3, cortex.ToolCodex)
	b.Source = next
	mustImport(t, db, b)
	want = next
	want.ID, want.Records, want.Rewrites, want.FirstIndexedAt, want.LastIndexedAt = res.SourceID, 5, 1, t1, t2
	got, _, _ = db.Source(ctx, path)
	sameSource(t, got, want)
	if got.ParserState != nil {
		t.Errorf("ParserState %q, want nil", got.ParserState)
	}
	if n := count(t, db, `SELECT count(*) FROM transcript_sources WHERE prefix_hash IS NULL
		AND anchor_hash IS NULL AND last_error IS NULL`); n != 1 {
		t.Error("empty checkpoint fields are not stored as NULL")
	}
	if n := count(t, db, `SELECT count(*) FROM transcript_parser_states`); n != 0 {
		t.Errorf("%d parser states kept after a checkpoint without one", n)
	}

	// MarkSource stores a checkpoint without records.
	unsupported := cortex.Source{Path: "/home/u/notes.txt", Kind: "unsupported", Size: 10, ModTimeNS: 5, Complete: true,
		LastError: "not a transcript"}
	if err := db.MarkSource(ctx, unsupported); err != nil {
		t.Fatal(err)
	}
	all, err := db.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 {
		t.Fatalf("Sources has %d entries, want 2", len(all))
	}
	sameSource(t, all[path], want)
	u := all[unsupported.Path]
	wantU := unsupported
	wantU.ID, wantU.FirstIndexedAt, wantU.LastIndexedAt = u.ID, t2, t2
	if u.ID == 0 || u.ID == res.SourceID {
		t.Errorf("unsupported source id %d", u.ID)
	}
	sameSource(t, u, wantU)
	if _, ok, err := db.Source(ctx, "/nope"); ok || err != nil {
		t.Errorf("Source(/nope) = %v, %v; want not found", ok, err)
	}
}

type parseErrRow struct {
	path         string
	line, offset int64
	err, preview string
	seenAt       string
}

func readParseErrors(t *testing.T, db *DB) []parseErrRow {
	t.Helper()
	rows, err := db.r.Query(`SELECT s.path, e.line_no, e.byte_offset, e.error, e.preview, e.seen_at
		FROM transcript_parse_errors e JOIN transcript_sources s ON s.id = e.source_id ORDER BY s.path, e.line_no, e.error`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []parseErrRow
	for rows.Next() {
		var r parseErrRow
		if err := rows.Scan(&r.path, &r.line, &r.offset, &r.err, &r.preview, &r.seenAt); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

type unknownRow struct {
	path, tool, version, typ string
	count                    int64
}

func readUnknown(t *testing.T, db *DB) []unknownRow {
	t.Helper()
	rows, err := db.r.Query(`SELECT s.path, u.ai_tool, u.tool_version, u.record_type, u.count
		FROM transcript_unknown_types u JOIN transcript_sources s ON s.id = u.source_id ORDER BY s.path, u.tool_version, u.record_type`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []unknownRow
	for rows.Next() {
		var r unknownRow
		if err := rows.Scan(&r.path, &r.tool, &r.version, &r.typ, &r.count); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestParseErrorsAndUnknownTypes(t *testing.T) {
	t.Parallel()
	clk := &clock{t: testNow}
	db, err := Open(context.Background(), t.TempDir()+"/c.db", Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t1 := cortex.FormatTime(testNow)
	a := batch("/t/a.jsonl")
	a.ParseErrors = []cortex.ParseError{
		{Line: 1, Offset: 0, Error: "invalid JSON", Preview: "{oops"},
		{Line: 2, Offset: 10, Error: "invalid JSON", Preview: "{x"},
		{Line: 2, Offset: 10, Error: "missing type", Preview: "{x"},
		{Line: 1, Offset: 0, Error: "invalid JSON", Preview: "{oops again"}, // same key within one batch
	}
	a.Unknown = []cortex.UnknownType{{Version: "2.1", Type: "weird", Count: 3}, {Version: "2.1", Type: "odd", Count: 1}}
	b := batch("/t/b.jsonl")
	b.Source.Tool = cortex.ToolGemini
	b.ParseErrors = []cortex.ParseError{{Line: 1, Offset: 0, Error: "invalid JSON", Preview: "{b"}}
	b.Unknown = []cortex.UnknownType{{Version: "2.1", Type: "weird", Count: 5}}
	mustImport(t, db, a, b)

	wantErrs := []parseErrRow{
		{"/t/a.jsonl", 1, 0, "invalid JSON", "{oops again", t1},
		{"/t/a.jsonl", 2, 10, "invalid JSON", "{x", t1},
		{"/t/a.jsonl", 2, 10, "missing type", "{x", t1},
		{"/t/b.jsonl", 1, 0, "invalid JSON", "{b", t1},
	}
	if got := readParseErrors(t, db); !reflect.DeepEqual(got, wantErrs) {
		t.Errorf("parse errors\n got %v\nwant %v", got, wantErrs)
	}

	// The same error seen again later: one row, newer preview and time.
	clk.Set(testNow.Add(time.Hour))
	t2 := cortex.FormatTime(testNow.Add(time.Hour))
	a2 := batch("/t/a.jsonl")
	a2.ParseErrors = []cortex.ParseError{{Line: 2, Offset: 10, Error: "invalid JSON", Preview: "{x2"}}
	a2.Unknown = []cortex.UnknownType{{Version: "2.1", Type: "weird", Count: 2}, {Version: "2.2", Type: "weird", Count: 1}}
	mustImport(t, db, a2)
	wantErrs[1].preview, wantErrs[1].seenAt = "{x2", t2
	if got := readParseErrors(t, db); !reflect.DeepEqual(got, wantErrs) {
		t.Errorf("parse errors after a repeat\n got %v\nwant %v", got, wantErrs)
	}
	wantUnknown := []unknownRow{
		{"/t/a.jsonl", "claude", "2.1", "odd", 1},
		{"/t/a.jsonl", "claude", "2.1", "weird", 5},
		{"/t/a.jsonl", "claude", "2.2", "weird", 1},
		{"/t/b.jsonl", "gemini", "2.1", "weird", 5},
	}
	if got := readUnknown(t, db); !reflect.DeepEqual(got, wantUnknown) {
		t.Errorf("unknown types\n got %v\nwant %v", got, wantUnknown)
	}

	// Reset: a's errors and counts start over with this batch's; b keeps its.
	reset := batch("/t/a.jsonl", rec("k1", "", cortex.RoleUser, "x", testNow))
	reset.Reset = true
	reset.ParseErrors = []cortex.ParseError{{Line: 7, Offset: 70, Error: "invalid JSON", Preview: "{7"}}
	reset.Unknown = []cortex.UnknownType{{Version: "2.1", Type: "weird", Count: 1}}
	mustImport(t, db, reset)
	wantErrs = []parseErrRow{
		{"/t/a.jsonl", 7, 70, "invalid JSON", "{7", t2},
		{"/t/b.jsonl", 1, 0, "invalid JSON", "{b", t1},
	}
	if got := readParseErrors(t, db); !reflect.DeepEqual(got, wantErrs) {
		t.Errorf("parse errors after Reset\n got %v\nwant %v", got, wantErrs)
	}
	wantUnknown = []unknownRow{
		{"/t/a.jsonl", "claude", "2.1", "weird", 1},
		{"/t/b.jsonl", "gemini", "2.1", "weird", 5},
	}
	if got := readUnknown(t, db); !reflect.DeepEqual(got, wantUnknown) {
		t.Errorf("unknown types after Reset\n got %v\nwant %v", got, wantUnknown)
	}
}

type sessionRow struct {
	tool, session, host, project, first, last string
	rows, user, assistant, calls, errs, sub   int64
	version, path                             string
}

const sessionCols = `ai_tool, ai_session_id, hostname, COALESCE(ai_project, ''), first_seen, last_seen, rows, user_rows,
	assistant_rows, tool_calls, error_rows, subagent_rows, COALESCE(tool_version, ''), COALESCE(transcript_path, '')`

func scanSessions(t *testing.T, db *DB, query string) []sessionRow {
	t.Helper()
	rows, err := db.r.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []sessionRow
	for rows.Next() {
		var s sessionRow
		if err := rows.Scan(&s.tool, &s.session, &s.host, &s.project, &s.first, &s.last, &s.rows, &s.user, &s.assistant,
			&s.calls, &s.errs, &s.sub, &s.version, &s.path); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestSessionRollupAndCounts(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	const (
		main = "/home/u/.claude/projects/p/S1.jsonl"
		sub  = "/home/u/.claude/projects/p/S1/subagents/agent-a.jsonl"
	)
	at := func(min int) time.Time { return time.Date(2026, 11, 30, 10, min, 0, 0, time.UTC) }
	mk := func(key string, role cortex.Role, min int, sidechain, isErr bool) cortex.ImportRecord {
		r := rec(key, "", role, "text of "+key, at(min))
		r.Entry.SessionID = "S1"
		r.Entry.Project = "/repo/p"
		r.Entry.Sidechain = sidechain
		r.Entry.IsError = isErr
		if sidechain {
			r.Entry.AgentID = "agent-a"
		}
		r.Meta = r.Entry.MetadataJSON()
		return r
	}
	// A subagent file first: the session's path is provisional.
	mustImport(t, db, batch(sub, mk("s1", cortex.RoleAssistant, 5, true, false), mk("s2", cortex.RoleToolCall, 6, true, true)))
	if got := scanSessions(t, db, `SELECT `+sessionCols+` FROM ai_sessions`); len(got) != 1 || got[0].path != sub {
		t.Fatalf("after the subagent file: %+v", got)
	}
	// The main file, with a version on one row.
	mainRecs := []cortex.ImportRecord{
		mk("m1", cortex.RoleUser, 1, false, false),
		mk("m2", cortex.RoleAssistant, 2, false, false),
		mk("m3", cortex.RoleToolCall, 3, false, false),
		mk("m4", cortex.RoleToolResult, 4, false, true),
		mk("m5", cortex.RoleUser, 10, false, false),
	}
	mainRecs[1].Entry.ToolVersion = "2.0.1"
	mustImport(t, db, batch(main, mainRecs...))
	// More subagent rows, in one call with a codex session and the same
	// session id on another host.
	codex := rec("c1", "", cortex.RoleUser, "codex text", at(30))
	codex.Entry.Tool, codex.Entry.SessionID, codex.Entry.Project, codex.Entry.ToolVersion = cortex.ToolCodex, "C1", "/repo/q", "0.5"
	codex2 := rec("c2", "", cortex.RoleToolCall, "codex call", at(31))
	codex2.Entry.Tool, codex2.Entry.SessionID, codex2.Entry.Project = cortex.ToolCodex, "C1", "/repo/q"
	cb := batch("/home/u/.codex/sessions/c1.jsonl", codex, codex2)
	cb.Source.Tool = cortex.ToolCodex
	other := batch("/mnt/host-b/S1.jsonl", mk("m1", cortex.RoleUser, 0, false, false))
	other.Hostname = "host-b"
	mustImport(t, db, batch(sub, mk("s3", cortex.RoleUser, 20, true, false)), cb, other)
	// Duplicates and a changed record add nothing.
	mustImport(t, db, batch(main, mainRecs...))
	changed := mainRecs[0]
	changed.ContentHash, changed.Entry.Text = "new", "changed text"
	mustImport(t, db, batch(main, changed))
	// Rows without a session count in log_counts only.
	nosess := rec("n1", "", cortex.RoleSystem, "no session", at(40))
	nosess.Entry.SessionID = ""
	mustImport(t, db, batch("/t/nosess.jsonl", nosess))

	got := scanSessions(t, db, `SELECT `+sessionCols+` FROM ai_sessions ORDER BY ai_tool, ai_session_id, hostname`)
	want := []sessionRow{
		{"claude", "S1", "host-a", "/repo/p", "2026-11-30T10:01:00.000Z", "2026-11-30T10:20:00.000Z", 8, 3, 2, 2, 2, 3, "2.0.1", main},
		{"claude", "S1", "host-b", "/repo/p", "2026-11-30T10:00:00.000Z", "2026-11-30T10:00:00.000Z", 1, 1, 0, 0, 0, 0, "", "/mnt/host-b/S1.jsonl"},
		{"codex", "C1", "host-a", "/repo/q", "2026-11-30T10:30:00.000Z", "2026-11-30T10:31:00.000Z", 2, 1, 0, 1, 0, 0, "0.5", "/home/u/.codex/sessions/c1.jsonl"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ai_sessions\n got %+v\nwant %+v", got, want)
	}
	// The same rollup computed from the rows themselves.
	fromLogs := scanSessions(t, db, `SELECT ai_tool, ai_session_id, hostname, COALESCE(max(ai_project), ''), min(timestamp), max(timestamp),
		count(*), sum(ai_role = 'user'), sum(ai_role = 'assistant'), sum(ai_role = 'tool_call'), sum(is_error),
		sum(COALESCE(json_extract(metadata_json, '$.sidechain'), 0)), '', ''
		FROM logs WHERE ai_session_id IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`)
	for i := range fromLogs {
		if i < len(got) {
			fromLogs[i].version, fromLogs[i].path = got[i].version, got[i].path
		}
	}
	if !reflect.DeepEqual(got, fromLogs) {
		t.Errorf("ai_sessions disagrees with logs\nrollup %+v\nlogs   %+v", got, fromLogs)
	}

	// log_counts equals a GROUP BY over logs.
	counts := func(q string) map[[2]string]int64 {
		rows, err := db.r.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		m := map[[2]string]int64{}
		for rows.Next() {
			var tool, role string
			var n int64
			if err := rows.Scan(&tool, &role, &n); err != nil {
				t.Fatal(err)
			}
			m[[2]string{tool, role}] = n
		}
		return m
	}
	lc := counts(`SELECT ai_tool, ai_role, rows FROM log_counts`)
	fromRows := counts(`SELECT ai_tool, ai_role, count(*) FROM logs GROUP BY 1, 2`)
	if !reflect.DeepEqual(lc, fromRows) {
		t.Errorf("log_counts %v, logs say %v", lc, fromRows)
	}
	wantLC := map[[2]string]int64{
		{"claude", "user"}: 4, {"claude", "assistant"}: 2, {"claude", "tool_call"}: 2, {"claude", "tool_result"}: 1,
		{"claude", "system"}: 1, {"codex", "user"}: 1, {"codex", "tool_call"}: 1,
	}
	if !reflect.DeepEqual(lc, wantLC) {
		t.Errorf("log_counts %v, want %v", lc, wantLC)
	}
}

func TestRowIDsIncreaseAndAreNotReused(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	const path = "/t/a.jsonl"
	seen := map[int64]bool{}
	var maxID int64
	step := func(name string, wantNew int, recs ...cortex.ImportRecord) {
		t.Helper()
		before := map[int64]bool{}
		for _, id := range ids(t, db, `SELECT id FROM logs`) {
			before[id] = true
		}
		mustImport(t, db, batch(path, recs...))
		var fresh []int64
		for _, id := range ids(t, db, `SELECT id FROM logs ORDER BY rowid`) {
			if !before[id] {
				fresh = append(fresh, id)
			}
		}
		if len(fresh) != wantNew {
			t.Fatalf("%s: %d new rows, want %d", name, len(fresh), wantNew)
		}
		for _, id := range fresh {
			if seen[id] || id <= maxID {
				t.Errorf("%s: new row id %d reuses or goes below earlier ids (max %d)", name, id, maxID)
			}
		}
		for _, id := range fresh {
			seen[id] = true
			maxID = max(maxID, id)
		}
		// Rows of one batch get ids in record order.
		for i := 1; i < len(fresh); i++ {
			if fresh[i] <= fresh[i-1] {
				t.Errorf("%s: ids not increasing: %v", name, fresh)
			}
		}
	}
	step("first", 3, rec("k1", "", cortex.RoleUser, "a", testNow), rec("k2", "", cortex.RoleUser, "b", testNow),
		rec("k3", "", cortex.RoleUser, "c", testNow))
	id2 := logID(t, db, path, "k2")
	step("update and duplicates", 2, rec("k1", "", cortex.RoleUser, "a", testNow), rec("k2", "v2", cortex.RoleUser, "b2", testNow),
		rec("k4", "", cortex.RoleUser, "d", testNow), rec("k5", "", cortex.RoleUser, "e", testNow))
	if got := logID(t, db, path, "k2"); got != id2 {
		t.Errorf("updated row moved from id %d to %d", id2, got)
	}
	step("after update", 1, rec("k6", "", cortex.RoleUser, "f", testNow))
	// Ledger ids and row ids agree.
	if n := count(t, db, `SELECT count(*) FROM transcript_import_records r LEFT JOIN logs l ON l.id = r.log_id WHERE l.id IS NULL`); n != 0 {
		t.Errorf("%d ledger entries point at no row", n)
	}
	if seq := count(t, db, `SELECT seq FROM sqlite_sequence WHERE name = 'logs'`); seq < maxID {
		t.Errorf("sqlite_sequence %d below max id %d: ids could be reused", seq, maxID)
	}
}

func TestCountKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := openTestDB(t)
	keys := []string{"h:abc#0", "h:abc#1", "h:abd#0", "h:ab", "h:abc\U0010FFFF", "h:é#0", "u:1", "H:abc#0", "h;abc"}
	var recs []cortex.ImportRecord
	for _, k := range keys {
		recs = append(recs, rec(k, "", cortex.RoleUser, "x", testNow))
	}
	a := mustImport(t, db, batch("/t/a.jsonl", recs...))[0].SourceID
	b := mustImport(t, db, batch("/t/b.jsonl", rec("h:abc#0", "", cortex.RoleUser, "x", testNow)))[0].SourceID
	for _, c := range []struct {
		src    int64
		prefix string
		want   int64
	}{
		{a, "h:abc", 3}, {a, "h:abc#", 2}, {a, "h:ab", 5}, {a, "h:", 6}, {a, "u:", 1}, {a, "H:", 1}, {a, "x", 0},
		{a, "h:abc#0", 1}, {b, "h:abc", 1}, {b, "h:abd", 0}, {999, "h:", 0},
	} {
		got, err := db.CountKeys(ctx, c.src, c.prefix)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("CountKeys(%d, %q) = %d, want %d", c.src, c.prefix, got, c.want)
		}
	}
}
