package ingest

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/claim"
	"github.com/cortexhq/cortex/internal/testcorpus"
	"github.com/cortexhq/cortex/rawcodec"
	"github.com/cortexhq/cortex/sqlite"
	"github.com/cortexhq/cortex/toolcall"
	"github.com/cortexhq/cortex/voice"
)

// eventDump renders every event table as sorted lines (ids of event rows
// and creation times left out; log ids kept: both stores are built in the
// same order, so their row ids agree).
func eventDump(t testing.TB, path string) map[string][]string {
	t.Helper()
	db := rawDB(t, path)
	queries := map[string]string{
		"skills": `SELECT log_id, ai_tool, ai_project, ai_session_id, hostname, timestamp, skill_name, skill_plugin, skill_path,
			event_kind, evidence_kind, metadata_json, ai_agent_id FROM ai_skill_events`,
		"users": `SELECT log_id, event_index, ai_tool, ai_project, ai_session_id, hostname, ai_agent_id, timestamp, event_kind,
			text, call_id, source, metadata_json, voice, voice_version FROM ai_user_events`,
		"mcp": `SELECT call_log_id, result_log_id, ai_tool, ai_project, ai_session_id, hostname, timestamp, call_timestamp,
			result_timestamp, turn_id, call_id, tool_name, mcp_server, mcp_tool, event_kind, result_kind, status, duration_ms,
			is_error, exit_code, arguments_json, output_preview, error_text, metadata_json, ai_agent_id,
			class, why, op, loads_skill, facts_version FROM ai_mcp_events`,
		"hooks": `SELECT log_id, event_index, ai_tool, ai_project, ai_session_id, hostname, timestamp, hook_event, hook_name,
			hook_source, hook_command, status, exit_code, duration_ms, stdout_preview, stderr_preview, persisted_output_path,
			trusted_hash, evidence_kind, metadata_json FROM ai_hook_events WHERE log_id IS NOT NULL`,
	}
	out := map[string][]string{}
	for name, q := range queries {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				if v.Valid {
					parts[i] = v.String
				} else {
					parts[i] = "∅"
				}
			}
			out[name] = append(out[name], strings.Join(parts, "|"))
		}
		rows.Close()
		sort.Strings(out[name])
	}
	return out
}

func diffDumps(t *testing.T, want, got map[string][]string) {
	t.Helper()
	for _, table := range []string{"skills", "mcp", "hooks", "users"} {
		w, g := want[table], got[table]
		if len(w) == 0 {
			t.Errorf("%s: the reference store has no events; the test proves nothing", table)
		}
		if strings.Join(w, "\n") == strings.Join(g, "\n") {
			continue
		}
		t.Errorf("%s: %d events at ingest, %d after backfill", table, len(w), len(g))
		gs := map[string]bool{}
		for _, x := range g {
			gs[x] = true
		}
		ws := map[string]bool{}
		for _, x := range w {
			ws[x] = true
		}
		shown := 0
		for _, x := range w {
			if !gs[x] && shown < 3 {
				t.Errorf("  only at ingest:   %.2000s", x)
				shown++
			}
		}
		shown = 0
		for _, x := range g {
			if !ws[x] && shown < 3 {
				t.Errorf("  only at backfill: %.2000s", x)
				shown++
			}
		}
	}
}

// corpusDirs copies a varied slice of the real corpus and the labelled
// sessions into one folder.
func corpusDirs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root := realCorpus(t)
	for _, rel := range []string{"claude/entireio-cli", "claude/planetfall-seed-signalkit", "claude/claude-code-log",
		"codex/planetfall-seed-signalkit", "codex/agentv", "gemini/M-Gemini"} {
		copyTree(t, filepath.Join(root, rel), filepath.Join(dir, strings.ReplaceAll(rel, "/", "-")))
	}
	copyTree(t, testcorpus.Labelled(t), filepath.Join(dir, "labelled"))
	return dir
}

func TestBackfillEqualsExtractionAtIngest(t *testing.T) {
	dir := corpusDirs(t)
	withEvents, pathA := openDB(t)
	sumA := index(t, withEvents, Options{Paths: []string{dir}, Workers: 1})
	without, pathB := openDB(t)
	sumB := index(t, without, Options{Paths: []string{dir}, Workers: 1, NoEvents: true})
	if sumB.Events != (cortex.EventCounts{}) {
		t.Fatalf("NoEvents stored events: %+v", sumB.Events)
	}
	if sumA.Inserted != sumB.Inserted {
		t.Fatalf("row counts differ: %d vs %d", sumA.Inserted, sumB.Inserted)
	}
	want := eventDump(t, pathA)

	// A dry run reports what it would add and writes nothing.
	dry, err := Backfill(context.Background(), without, BackfillOptions{DryRun: true, Hostname: "testhost"})
	if err != nil {
		t.Fatal(err)
	}
	if got := eventDump(t, pathB); len(got["skills"])+len(got["mcp"])+len(got["hooks"])+len(got["users"]) != 0 {
		t.Fatal("a dry run wrote events")
	}
	if dry.Events.Skills != int64(len(want["skills"])) || dry.Events.Tools != int64(len(want["mcp"])) || dry.Events.Hooks != int64(len(want["hooks"])) ||
		dry.Events.Users != int64(len(want["users"])) {
		t.Errorf("dry run would add %+v; ingest stored %d skill, %d tool, %d hook events", dry.Events,
			len(want["skills"]), len(want["mcp"]), len(want["hooks"]))
	}

	// The real run, in small batches, ends with exactly the ingest events.
	res, err := Backfill(context.Background(), without, BackfillOptions{BatchRows: 300, Hostname: "testhost"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned != sumB.Inserted || res.ParseErrors != 0 || res.Truncated {
		t.Errorf("backfill: %+v (rows %d)", res, sumB.Inserted)
	}
	if res.Events != dry.Events {
		t.Errorf("dry run %+v, real run %+v", dry.Events, res.Events)
	}
	diffDumps(t, want, eventDump(t, pathB))

	// Running it again, or backfilling the store that extracted at ingest,
	// adds nothing.
	for _, db := range []Store{without, withEvents} {
		again, err := Backfill(context.Background(), db.(BackfillStore), BackfillOptions{Hostname: "testhost"})
		if err != nil {
			t.Fatal(err)
		}
		if again.Events.Skills+again.Events.Tools+again.Events.Hooks+again.Events.Users != 0 {
			t.Errorf("a repeated backfill added events: %+v", again.Events)
		}
	}
	diffDumps(t, want, eventDump(t, pathA))

	// Re-indexing adds no events either.
	re := index(t, withEvents, Options{Paths: []string{dir}, Workers: 1, Force: true})
	if re.Events.Skills+re.Events.Tools+re.Events.Hooks+re.Events.Users != 0 || re.Inserted != 0 {
		t.Errorf("forced re-index added rows or events: %+v", re)
	}
	t.Logf("events: %d skill, %d tool-call rows, %d hook, %d user; backfill scanned %d rows in %v", len(want["skills"]),
		len(want["mcp"]), len(want["hooks"]), len(want["users"]), res.Scanned, res.Elapsed)
}

// A store migrated from a version without user events asks for their
// backfill; the next index runs it once, from the stored records, and
// clears the request.
func TestPendingBackfillRunsOnIndex(t *testing.T) {
	dir := corpusDirs(t)
	reference, pathA := openDB(t)
	index(t, reference, Options{Paths: []string{dir}, Workers: 1})
	db, pathB := openDB(t)
	index(t, db, Options{Paths: []string{dir}, Workers: 1, NoEvents: true})
	w, err := sql.Open("sqlite", pathB+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`INSERT INTO pending_backfills(kind, created_at) VALUES ('users', '2026-12-01T00:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	raw := rawDB(t, pathB)
	sum := index(t, db, Options{Paths: []string{dir}, Workers: 1})
	if sum.Backfilled == nil || sum.Backfilled.Events.Users == 0 || sum.Backfilled.Events.Skills != 0 || sum.Inserted != 0 {
		t.Fatalf("pending user backfill: %+v (inserted %d)", sum.Backfilled, sum.Inserted)
	}
	want, got := eventDump(t, pathA)["users"], eventDump(t, pathB)["users"]
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Errorf("user events after the pending backfill: %d, at ingest: %d", len(got), len(want))
	}
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM pending_backfills`).Scan(&n); err != nil || n != 0 {
		t.Errorf("pending backfills left: %d %v", n, err)
	}
	if again := index(t, db, Options{Paths: []string{dir}, Workers: 1}); again.Backfilled != nil {
		t.Errorf("the backfill ran twice: %+v", again.Backfilled)
	}
}

func TestBackfillKindsLimitAndLock(t *testing.T) {
	dir := corpusDirs(t)
	db, path := openDB(t)
	sum := index(t, db, Options{Paths: []string{dir}, NoEvents: true})

	// Only the requested kind.
	res, err := Backfill(context.Background(), db, BackfillOptions{Kinds: []string{"skill"}, Hostname: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Events.Skills == 0 || res.Events.Tools != 0 || res.Events.Hooks != 0 {
		t.Errorf("skills-only backfill: %+v", res.Events)
	}
	if _, err := Backfill(context.Background(), db, BackfillOptions{Kinds: []string{"bogus"}}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Errorf("unknown kind: %v", err)
	}

	// A limit stops the scan and says so; continuing after LastID finishes.
	part, err := Backfill(context.Background(), db, BackfillOptions{Kinds: []string{"mcp"}, Limit: 1000, Hostname: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if !part.Truncated || part.Scanned != 1000 {
		t.Fatalf("limited backfill: %+v", part)
	}
	rest, err := Backfill(context.Background(), db, BackfillOptions{Kinds: []string{"mcp"}, AfterID: part.LastID, Hostname: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if rest.Truncated || part.Scanned+rest.Scanned != sum.Inserted {
		t.Errorf("continued backfill scanned %d+%d of %d rows", part.Scanned, rest.Scanned, sum.Inserted)
	}

	// A second concurrent backfill fails fast with code busy; a lock left
	// by a dead process is taken over.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`INSERT INTO maintenance_locks VALUES ('event backfill', 'other', 1, 'h', '2999-01-01T00:00:00.000Z')`); err != nil {
		t.Fatal(err)
	}
	_, err = Backfill(context.Background(), db, BackfillOptions{Hostname: "h", Holder: "test"})
	if cortex.ErrorCode(err) != cortex.CodeBusy || !strings.Contains(err.Error(), "already running") {
		t.Errorf("concurrent backfill: %v", err)
	}
	if _, err := raw.Exec(`UPDATE maintenance_locks SET pid = 999999999`); err != nil {
		t.Fatal(err)
	}
	if _, err := Backfill(context.Background(), db, BackfillOptions{Hostname: "h", DryRun: true}); err != nil {
		t.Errorf("a dead holder's lock was not taken over: %v", err)
	}
	if n := count(t, raw, `SELECT count(*) FROM maintenance_locks`); n != 0 {
		t.Errorf("the lock was not released (%d rows)", n)
	}
	_ = fmt.Sprint
}

// Readings made by other voice rules (or none, from before the column)
// are read again when the store is next indexed, once, and come out as
// at ingest.
func TestStaleVoicesAreReadAgainOnIndex(t *testing.T) {
	dir := corpusDirs(t)
	db, path := openDB(t)
	index(t, db, Options{Paths: []string{dir}, Workers: 1})
	raw := rawDB(t, path)
	readings := func() map[int64]string {
		rows, err := raw.Query(`SELECT id, COALESCE(voice, ''), COALESCE(voice_version, 0) FROM ai_user_events ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]string{}
		for rows.Next() {
			var id int64
			var v string
			var version int
			if err := rows.Scan(&id, &v, &version); err != nil {
				t.Fatal(err)
			}
			out[id] = fmt.Sprintf("%s@%d", v, version)
		}
		return out
	}
	want := readings()
	storedAtIngest(t, want, "@", voice.Version, "user events")
	staleThenIndex(t, db, path, dir, `UPDATE ai_user_events SET voice = NULL, voice_version = NULL WHERE id % 2 = 0;
		UPDATE ai_user_events SET voice = '{"categories":["stop"]}', voice_version = 1 WHERE id % 2 = 1`, want, readings,
		func(b *BackfillResult) int64 { return b.VoicesRead })
}

// Assistant rows stored with claims of other rules (or none: a store
// migrated from a version without them) are read again on the next
// index, once, with exactly the readings ingest made.
func TestStaleClaimsAreReadAgainOnIndex(t *testing.T) {
	dir := corpusDirs(t)
	db, path := openDB(t)
	index(t, db, Options{Paths: []string{dir}, Workers: 1})
	raw := rawDB(t, path)
	readings := func() map[int64]string {
		rows, err := raw.Query(`SELECT id, ai_role, claim, claim_version, message FROM logs ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]string{}
		for rows.Next() {
			var id int64
			var role, msg string
			var kinds, version sql.NullInt64
			if err := rows.Scan(&id, &role, &kinds, &version, &msg); err != nil {
				t.Fatal(err)
			}
			if role != string(cortex.RoleAssistant) && role != string(cortex.RoleThinking) {
				if kinds.Valid || version.Valid {
					t.Fatalf("a %s row has claims", role)
				}
				continue
			}
			if msg == "" { // perhaps read from its record
				r, _, err := db.Row(context.Background(), id, 0)
				if err != nil {
					t.Fatal(err)
				}
				msg = r.Text
			}
			if int(version.Int64) == claim.Version && claim.Kinds(kinds.Int64) != claim.Of(role, msg) {
				t.Fatalf("row %d (%s): stored claims %d, its text reads %d", id, role, kinds.Int64, claim.Of(role, msg))
			}
			out[id] = fmt.Sprintf("%d@%d", kinds.Int64, version.Int64)
		}
		return out
	}
	want := readings()
	storedAtIngest(t, want, "0@", claim.Version, "assistant rows")
	staleThenIndex(t, db, path, dir, `UPDATE logs SET claim = NULL, claim_version = NULL WHERE ai_role IN ('assistant', 'thinking') AND id % 2 = 0;
		UPDATE logs SET claim = 3, claim_version = 1 WHERE ai_role IN ('assistant', 'thinking') AND id % 2 = 1`, want, readings,
		func(b *BackfillResult) int64 { return b.ClaimsRead })
}

// Tool calls stored with facts of other rules (or none: a store migrated
// from a version without them) are classified again on the next index,
// once, with exactly the facts ingest derives; every call's facts are
// those of its stored row.
func TestStaleCallFactsAreDerivedAgainOnIndex(t *testing.T) {
	dir := corpusDirs(t)
	db, path := openDB(t)
	index(t, db, Options{Paths: []string{dir}, Workers: 1})
	raw := rawDB(t, path)
	codec, err := rawcodec.New()
	if err != nil {
		t.Fatal(err)
	}
	facts := func() map[int64]string {
		rows, err := raw.Query(`SELECT id, tool_name, status, COALESCE(is_error, 0), exit_code, arguments_json,
			output_preview, COALESCE(error_text, ''), class, COALESCE(why, ''), op, loads_skill,
			COALESCE(facts_version, 0) FROM ai_mcp_events ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]string{}
		for rows.Next() {
			var id int64
			var c toolcall.Call
			var isErr, loads, version int
			var exit sql.NullInt64
			var f toolcall.Facts
			var args, output []byte // stored compressed or as text (see sqlite's packText)
			if err := rows.Scan(&id, &c.ToolName, &c.Status, &isErr, &exit, &args, &output, &c.ErrorText, &f.Class, &f.Why,
				&f.Op, &loads, &version); err != nil {
				t.Fatal(err)
			}
			c.Arguments, c.Output = unpacked(t, codec, args), unpacked(t, codec, output)
			c.IsError, f.LoadsSkill = isErr == 1, loads == 1
			if exit.Valid {
				c.ExitCode = &exit.Int64
			}
			if want := toolcall.Read(c); f != want || version != toolcall.Version {
				t.Fatalf("call %d: stored %+v@%d, derived %+v@%d", id, f, version, want, toolcall.Version)
			}
			out[id] = fmt.Sprintf("%+v", f)
		}
		return out
	}
	want := facts()
	classes := map[string]int{}
	for _, f := range want {
		classes[f[strings.Index(f, ":")+1:strings.Index(f, " ")]]++
	}
	if len(want) == 0 || classes[toolcall.ClassFailed] == 0 || classes[toolcall.ClassOK] == 0 || classes[toolcall.ClassProbe] == 0 {
		t.Fatalf("%d calls, classes %v", len(want), classes)
	}
	staleThenIndex(t, db, path, dir, `UPDATE ai_mcp_events SET class = NULL, why = NULL, op = NULL, loads_skill = NULL, facts_version = NULL
		WHERE id % 2 = 0; UPDATE ai_mcp_events SET class = 'ok', facts_version = 1 WHERE id % 2 = 1`, want, facts,
		func(b *BackfillResult) int64 { return b.CallFactsDerived })
}

// storedAtIngest checks readings stored at ingest ("value@version"): every
// one of version, and some saying something (not starting with none).
func storedAtIngest(t *testing.T, readings map[int64]string, none string, version int, what string) {
	t.Helper()
	said := 0
	for _, r := range readings {
		if !strings.HasPrefix(r, none) {
			said++
		}
		if !strings.HasSuffix(r, fmt.Sprintf("@%d", version)) {
			t.Fatalf("a reading at ingest is not of this binary's rules: %s", r)
		}
	}
	if len(readings) == 0 || said == 0 {
		t.Fatalf("%d %s, %d with a reading", len(readings), what, said)
	}
}

// staleThenIndex makes stored derivations stale with corrupt (SQL run on
// the store at path), indexes dir again and checks that the refresh read
// every one of want again (count of the backfill result), leaving exactly
// what ingest stored (read), once: a third index refreshes nothing.
func staleThenIndex(t *testing.T, db *sqlite.DB, path, dir, corrupt string, want map[int64]string,
	read func() map[int64]string, count func(*BackfillResult) int64) {
	t.Helper()
	w, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(corrupt); err != nil {
		t.Fatal(err)
	}
	w.Close()
	sum := index(t, db, Options{Paths: []string{dir}, Workers: 1})
	if sum.Backfilled == nil || count(sum.Backfilled) != int64(len(want)) {
		t.Fatalf("read again: %+v, want %d", sum.Backfilled, len(want))
	}
	if got := read(); !maps.Equal(got, want) {
		t.Error("after the refresh the stored derivations differ from those at ingest")
	}
	if again := index(t, db, Options{Paths: []string{dir}, Workers: 1}); again.Backfilled != nil {
		t.Errorf("the refresh ran twice: %+v", again.Backfilled)
	}
}

// unpacked is a stored tool call text as it was written: a zstd frame
// decompressed, a text as it is.
func unpacked(t *testing.T, codec *rawcodec.Codec, v []byte) string {
	t.Helper()
	out, err := codec.Decode(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
