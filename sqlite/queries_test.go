package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
)

// fixtureRow is one row of the query fixture; expectations are computed
// from this table in Go, not from the store.
type fixtureRow struct {
	key     string
	tool    cortex.Tool
	project string
	session string
	role    cortex.Role
	minute  int
	text    string
	host    string
	id      int64 // filled after import
}

func (r fixtureRow) ts() time.Time { return time.Date(2026, 11, 20, 9, r.minute, 0, 0, time.UTC) }

func queryFixture() []fixtureRow {
	return []fixtureRow{
		{key: "1", tool: "claude", project: "/p/alpha", session: "s1", role: "user", minute: 0, text: "please fix the kestrel build"},
		{key: "2", tool: "claude", project: "/p/alpha", session: "s1", role: "assistant", minute: 1, text: "the kestrel build is fixed"},
		{key: "3", tool: "claude", project: "/p/alpha", session: "s1", role: "tool_call", minute: 2, text: "cargo build kestrel"},
		{key: "4", tool: "claude", project: "/p/beta", session: "s2", role: "user", minute: 10, text: "kestrel again\nwith a second line"},
		{key: "5", tool: "codex", project: "/p/beta", session: "s3", role: "user", minute: 20, text: "codex sees a kestrel too"},
		{key: "6", tool: "codex", project: "/p/beta", session: "s3", role: "assistant", minute: 21, text: "no bird here"},
		{key: "7", tool: "gemini", project: "/p/gamma", session: "s4", role: "assistant", minute: 30, text: "gemini kestrel kestrel kestrel"},
		{key: "8", tool: "gemini", project: "/p/gamma", session: "s4", role: "thinking", minute: 31, text: "thinking about a kestrel"},
		{key: "9", tool: "claude", project: "/p/alpha", session: "s5", role: "user", minute: 40, text: "kestrel", host: "host-b"},
		// Same timestamp as 9: ties order by id.
		{key: "10", tool: "claude", project: "/p/alpha", session: "s5", role: "assistant", minute: 40, text: "a kestrel reply", host: "host-b"},
	}
}

// loadFixture imports the fixture, one batch per (tool, host), and fills
// in the row ids.
func loadFixture(t *testing.T, db *DB) []fixtureRow {
	t.Helper()
	rows := queryFixture()
	type group struct {
		tool cortex.Tool
		host string
	}
	batches := map[group]*cortex.ImportBatch{}
	var order []group
	for _, r := range rows {
		if r.host == "" {
			r.host = "host-a"
		}
		g := group{r.tool, r.host}
		b := batches[g]
		if b == nil {
			nb := batch(fmt.Sprintf("/t/%s-%s.jsonl", r.tool, r.host))
			nb.Hostname = r.host
			nb.Source.Tool, nb.Source.Kind = r.tool, string(r.tool)
			b = &nb
			batches[g] = b
			order = append(order, g)
		}
		x := rec(r.key, "", r.role, r.text, r.ts())
		x.Entry.Tool, x.Entry.Project, x.Entry.SessionID = r.tool, r.project, r.session
		x.Entry.ToolVersion = "v-" + string(r.tool)
		b.Records = append(b.Records, x)
	}
	var bs []cortex.ImportBatch
	for _, g := range order {
		bs = append(bs, *batches[g])
	}
	mustImport(t, db, bs...)
	for i := range rows {
		if rows[i].host == "" {
			rows[i].host = "host-a"
		}
		rows[i].id = logID(t, db, fmt.Sprintf("/t/%s-%s.jsonl", rows[i].tool, rows[i].host), rows[i].key)
	}
	return rows
}

// expectSearch lists the ids of fixture rows containing word that pass
// keep, newest first then highest id.
func expectSearch(rows []fixtureRow, word string, keep func(fixtureRow) bool) []int64 {
	var sel []fixtureRow
	for _, r := range rows {
		if r.role == cortex.RoleThinking || !slices.Contains(strings.Fields(r.text), word) || !keep(r) {
			continue
		}
		sel = append(sel, r)
	}
	slices.SortFunc(sel, func(a, b fixtureRow) int {
		if c := b.ts().Compare(a.ts()); c != 0 {
			return c
		}
		return int(b.id - a.id)
	})
	out := []int64{}
	for _, r := range sel {
		out = append(out, r.id)
	}
	return out
}

func TestSearchFilters(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	rows := loadFixture(t, db)
	at := func(min int) time.Time { return time.Date(2026, 11, 20, 9, min, 0, 0, time.UTC) }
	all := func(fixtureRow) bool { return true }
	for _, c := range []struct {
		name string
		p    cortex.SearchParams
		keep func(fixtureRow) bool
	}{
		{"all", cortex.SearchParams{}, all},
		{"tool", cortex.SearchParams{Tool: "codex"}, func(r fixtureRow) bool { return r.tool == "codex" }},
		{"project", cortex.SearchParams{Project: "/p/alpha"}, func(r fixtureRow) bool { return r.project == "/p/alpha" }},
		{"session", cortex.SearchParams{Session: "s1"}, func(r fixtureRow) bool { return r.session == "s1" }},
		{"role", cortex.SearchParams{Role: "user"}, func(r fixtureRow) bool { return r.role == "user" }},
		{"thinking role", cortex.SearchParams{Role: "thinking"}, func(r fixtureRow) bool { return false }},
		{"since (inclusive)", cortex.SearchParams{Since: at(10)}, func(r fixtureRow) bool { return r.minute >= 10 }},
		{"until (exclusive)", cortex.SearchParams{Until: at(10)}, func(r fixtureRow) bool { return r.minute < 10 }},
		{"window", cortex.SearchParams{Since: at(1), Until: at(30)}, func(r fixtureRow) bool { return r.minute >= 1 && r.minute < 30 }},
		{"combined", cortex.SearchParams{Tool: "claude", Project: "/p/alpha", Role: "assistant"},
			func(r fixtureRow) bool { return r.tool == "claude" && r.project == "/p/alpha" && r.role == "assistant" }},
		{"no match", cortex.SearchParams{Tool: "gemini", Session: "s1"}, func(fixtureRow) bool { return false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.p.Query = "kestrel"
			want := expectSearch(rows, "kestrel", c.keep)
			got := searchIDs(t, db, c.p)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Search(%+v) = %v, want %v", c.p, got, want)
			}
		})
	}

	// Hits carry the row's fields.
	res, err := db.Search(context.Background(), cortex.SearchParams{Query: "cargo", Limit: 10})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("Search cargo: %v %v", res, err)
	}
	h := res.Hits[0]
	want := cortex.SearchHit{ID: rows[2].id, Timestamp: "2026-11-20T09:02:00.000Z", Tool: "claude", Project: "/p/alpha",
		SessionID: "s1", Role: "tool_call", Kind: "tool_call", Hostname: "host-a", Severity: "info",
		TranscriptPath: "/t/claude-host-a.jsonl", Line: 1, Snippet: "cargo build kestrel", Highlights: [][2]int{{0, 5}}}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("hit\n got %+v\nwant %+v", h, want)
	}
	if res.Query != "cargo" || res.FTSQuery != `"cargo"` || res.Total != 1 || res.Truncated {
		t.Errorf("result header %+v", res)
	}

	// Invalid input is refused before reaching FTS5.
	_, err = db.Search(context.Background(), cortex.SearchParams{Query: "***", Limit: 10})
	wantCode(t, err, cortex.CodeInvalid)
}

func TestSearchRankAndTruncation(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	rows := loadFixture(t, db)
	all := expectSearch(rows, "kestrel", func(fixtureRow) bool { return true })

	res, err := db.Search(context.Background(), cortex.SearchParams{Query: "kestrel", Limit: 50, Rank: true})
	if err != nil {
		t.Fatalf("ranked search on the contentless table: %v", err)
	}
	var got []int64
	for _, h := range res.Hits {
		got = append(got, h.ID)
	}
	if !reflect.DeepEqual(sortedIDs(got...), sortedIDs(all...)) {
		t.Errorf("ranked hits %v, want the same rows as %v", got, all)
	}
	// bm25 (k1 1.2, b 0.75, average length about 3.9 tokens): "gemini
	// kestrel kestrel kestrel" scores 1.56, the one-word row "kestrel"
	// 1.44, every other row less than 1.3.
	if len(got) < 2 || got[0] != rows[6].id || got[1] != rows[8].id {
		t.Errorf("ranked order %v, want %d then %d first", got, rows[6].id, rows[8].id)
	}

	for _, limit := range []int{1, 3, len(all) - 1, len(all), len(all) + 1} {
		for _, rank := range []bool{false, true} {
			res, err := db.Search(context.Background(), cortex.SearchParams{Query: "kestrel", Limit: limit, Rank: rank})
			if err != nil {
				t.Fatal(err)
			}
			wantN := min(limit, len(all))
			if len(res.Hits) != wantN || res.Total != wantN || res.Truncated != (limit < len(all)) {
				t.Errorf("limit %d rank %v: %d hits, total %d, truncated %v; want %d, %v", limit, rank, len(res.Hits),
					res.Total, res.Truncated, wantN, limit < len(all))
			}
			if !rank {
				var ids []int64
				for _, h := range res.Hits {
					ids = append(ids, h.ID)
				}
				if !reflect.DeepEqual(ids, all[:wantN]) {
					t.Errorf("limit %d: %v, want the newest %v", limit, ids, all[:wantN])
				}
			}
		}
	}
}

func TestSearchSnippet(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	long := strings.Repeat("lorem ipsum dolor sit amet\n", 30) + "the PEREGRINE falcon\tdives\n" + strings.Repeat("consectetur adipiscing\n", 30)
	mustImport(t, db, batch("/t/a.jsonl", rec("k1", "", cortex.RoleAssistant, long, testNow)))
	res, err := db.Search(context.Background(), cortex.SearchParams{Query: "peregrine", Limit: 5})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("Search: %+v %v", res, err)
	}
	s := res.Hits[0].Snippet
	if !strings.Contains(s, "PEREGRINE falcon dives") {
		t.Errorf("snippet %q does not contain the matched word in its context", s)
	}
	if strings.ContainsAny(s, "\n\t\r") {
		t.Errorf("snippet %q is not one line", s)
	}
	if !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
		t.Errorf("snippet %q of a cut text is not marked as cut", s)
	}
	if len(s) > 200+2*len("…") {
		t.Errorf("snippet is %d bytes", len(s))
	}
}

func TestSnippet(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, text string
		words      []string
		width      int
		want       string
	}{
		{"short text", "hello world", []string{"world"}, 200, "hello world"},
		{"whitespace collapsed", "a\n\n b\t\tc  ", []string{"b"}, 200, "a b c"},
		{"no match starts at 0", "abcdefghij", []string{"zzz"}, 4, "abcd…"},
		{"case-insensitive", "xxxxxxxxxxxxxxxxxxxx NEEDLE yyyyyyyyyyyyyyyyyyyy", []string{"needle"}, 18, "…xxxxx NEEDLE yyyyy…"},
		{"earliest word wins", "aaaa bbbb cccc dddd eeee ffff", []string{"eeee", "cccc"}, 9, "…bb cccc d…"},
		{"phrase", "one two three four five", []string{"three four"}, 200, "one two three four five"},
		{"empty words ignored", "abc", []string{"", "  "}, 200, "abc"},
		// Invalid UTF-8 made of continuation bytes only: no rune start to
		// cut at (found by FuzzBuildFTSQuery).
		{"only continuation bytes", strings.Repeat("\xb1\xa5", 20) + "\xb1", nil, 40, "…"},
		// Ⱥ (2 bytes) lower-cases to ⱥ (3 bytes): offsets in the lower-cased
		// text run ahead of the original.
		{"lower-casing grows", strings.Repeat("Ⱥ", 300) + " needle here", []string{"needle"}, 30, "…ⱥⱥⱥⱥⱥ needle here"},
		// K (Kelvin sign, 3 bytes) lower-cases to k (1 byte).
		{"lower-casing shrinks", strings.Repeat("\u212a", 100) + " needle tail", []string{"needle"}, 30, "…\u212a\u212a\u212a needle tail"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := snippet(c.text, c.words, c.width)
			want := strings.ReplaceAll(c.want, "ⱥ", "Ⱥ")
			if got != want {
				t.Errorf("snippet(%q, %q, %d) = %q, want %q", c.text, c.words, c.width, got, want)
			}
		})
	}
}

// snippet never cuts a rune, whatever the width and position of the match.
func TestSnippetRuneBoundaries(t *testing.T) {
	t.Parallel()
	runes := []string{"a", "é", "ß", "日", "本", "🚀", "𝔘", "Ⱥ", "\u212a", "İ", " ", "\n", "x"}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var b strings.Builder
		for range r.IntN(120) {
			b.WriteString(runes[r.IntN(len(runes))])
		}
		text := b.String()
		word := runes[r.IntN(len(runes))]
		if r.IntN(2) == 0 {
			word = "needle"
			at := r.IntN(len(text) + 1)
			for at < len(text) && !utf8.RuneStart(text[at]) {
				at--
			}
			text = text[:at] + "needle" + text[at:]
		}
		width := r.IntN(60)
		got := snippet(text, []string{word}, width)
		if !utf8.ValidString(got) {
			t.Fatalf("case %d: snippet(%q, %q, %d) = %q cuts a rune", i, text, word, width, got)
		}
		if strings.ContainsAny(got, "\n\t") {
			t.Fatalf("case %d: snippet %q is not one line", i, got)
		}
		core := strings.TrimSuffix(strings.TrimPrefix(got, "…"), "…")
		if len(core) > width {
			t.Fatalf("case %d: snippet %q longer than %d bytes", i, got, width)
		}
		if word == "needle" && width >= 3*len("needle") && !strings.Contains(got, "needle") {
			t.Fatalf("case %d: snippet(%q, needle, %d) = %q misses the match", i, text, width, got)
		}
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	db, _ := openTestDB(t)
	rows := loadFixture(t, db)
	// Expected rollups computed from the fixture.
	type agg struct {
		s           cortex.Session
		first, last time.Time
		prompt      time.Time
	}
	by := map[string]*agg{}
	var keys []string
	for _, r := range rows {
		k := string(r.tool) + "/" + r.session + "/" + r.host
		a := by[k]
		if a == nil {
			a = &agg{s: cortex.Session{Tool: r.tool, SessionID: r.session, Hostname: r.host, Project: r.project,
				ToolVersion: "v-" + string(r.tool), TranscriptPath: fmt.Sprintf("/t/%s-%s.jsonl", r.tool, r.host)},
				first: r.ts(), last: r.ts()}
			by[k] = a
			keys = append(keys, k)
		}
		if r.ts().Before(a.first) {
			a.first = r.ts()
		}
		if r.ts().After(a.last) {
			a.last = r.ts()
		}
		a.s.Rows++
		switch r.role {
		case "user":
			a.s.UserRows++
			// The earliest typed prompt is the title of a session without
			// a summary.
			if a.s.Title == "" || r.ts().Before(a.prompt) {
				a.s.Title, a.s.TitleSource, a.prompt = strings.Join(strings.Fields(r.text), " "), "first_prompt", r.ts()
			}
		case "assistant":
			a.s.AssistantRows++
		case "tool_call":
			a.s.ToolCalls++
		}
	}
	var all []cortex.Session
	for _, k := range keys {
		a := by[k]
		a.s.FirstSeen, a.s.LastSeen = cortex.FormatTime(a.first), cortex.FormatTime(a.last)
		a.s.DurationSecs = a.last.Sub(a.first).Seconds()
		all = append(all, a.s)
	}
	slices.SortFunc(all, func(a, b cortex.Session) int {
		if c := strings.Compare(b.LastSeen, a.LastSeen); c != 0 {
			return c
		}
		return strings.Compare(b.SessionID, a.SessionID)
	})
	at := func(min int) time.Time { return time.Date(2026, 11, 20, 9, min, 0, 0, time.UTC) }
	for _, c := range []struct {
		name string
		p    cortex.SessionParams
		keep func(cortex.Session) bool
	}{
		{"all", cortex.SessionParams{}, func(cortex.Session) bool { return true }},
		{"tool", cortex.SessionParams{Tool: "claude"}, func(s cortex.Session) bool { return s.Tool == "claude" }},
		{"project", cortex.SessionParams{Project: "/p/beta"}, func(s cortex.Session) bool { return s.Project == "/p/beta" }},
		{"host", cortex.SessionParams{Host: "host-b"}, func(s cortex.Session) bool { return s.Hostname == "host-b" }},
		// Since keeps sessions active at or after the bound, Until those
		// that started before it.
		{"since", cortex.SessionParams{Since: at(21)}, func(s cortex.Session) bool { return s.LastSeen >= cortex.FormatTime(at(21)) }},
		{"until", cortex.SessionParams{Until: at(20)}, func(s cortex.Session) bool { return s.FirstSeen < cortex.FormatTime(at(20)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.p.Limit = 100
			got, err := db.Sessions(context.Background(), c.p)
			if err != nil {
				t.Fatal(err)
			}
			want := []cortex.Session{}
			for _, s := range all {
				if c.keep(s) {
					want = append(want, s)
				}
			}
			if !reflect.DeepEqual(got.Sessions, want) || got.Total != len(want) || got.Truncated {
				t.Errorf("Sessions(%+v)\n got %+v (total %d, truncated %v)\nwant %+v", c.p, got.Sessions, got.Total, got.Truncated, want)
			}
		})
	}
	for _, limit := range []int{1, len(all) - 1, len(all), len(all) + 1} {
		got, err := db.Sessions(context.Background(), cortex.SessionParams{Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		n := min(limit, len(all))
		if !reflect.DeepEqual(got.Sessions, all[:n]) || got.Truncated != (limit < len(all)) || got.Total != n {
			t.Errorf("limit %d: %d sessions, truncated %v", limit, len(got.Sessions), got.Truncated)
		}
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: testNow}
	path := t.TempDir() + "/c.db"
	db, err := Open(ctx, path, Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	empty, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Rows != 0 || empty.Oldest != "" || empty.Newest != "" || empty.Sources.Files != 0 || len(empty.RecentErrors) != 0 ||
		empty.RecentErrors == nil || empty.UnknownTypes == nil || empty.SchemaVersion != SchemaVersion() || empty.DBPath != path {
		t.Errorf("empty status %+v", empty)
	}

	rows := loadFixture(t, db)
	// Parse errors on two files, twelve in all (more than the ten shown).
	for i := range 12 {
		clk.Set(testNow.Add(time.Duration(i) * time.Minute))
		b := batch(fmt.Sprintf("/t/err-%d.jsonl", i%2))
		b.Source.PendingBytes = int64(i % 2 * 10)
		b.Source.LastError = "boom"
		b.ParseErrors = []cortex.ParseError{{Line: int64(i), Error: "invalid JSON", Preview: fmt.Sprintf("p%d", i)}}
		if i == 0 {
			b.Rewritten = true
			b.Unknown = []cortex.UnknownType{{Version: "1", Type: "alpha", Count: 2}, {Version: "2", Type: "beta", Count: 9}}
		}
		if i == 1 {
			b.Unknown = []cortex.UnknownType{{Version: "1", Type: "alpha", Count: 5}}
		}
		mustImport(t, db, b)
	}
	if err := db.MarkSource(ctx, cortex.Source{Path: "/t/notes.txt", Kind: "unsupported", LastError: "not a transcript"}); err != nil {
		t.Fatal(err)
	}

	st, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantTool := map[string]int64{}
	wantRole := map[string]map[string]int64{}
	oldest, newest := rows[0].ts(), rows[0].ts()
	for _, r := range rows {
		wantTool[string(r.tool)]++
		if wantRole[string(r.tool)] == nil {
			wantRole[string(r.tool)] = map[string]int64{}
		}
		wantRole[string(r.tool)][string(r.role)]++
		if r.ts().Before(oldest) {
			oldest = r.ts()
		}
		if r.ts().After(newest) {
			newest = r.ts()
		}
	}
	if st.Rows != int64(len(rows)) || !reflect.DeepEqual(st.RowsByTool, wantTool) || !reflect.DeepEqual(st.RowsByRole, wantRole) {
		t.Errorf("rows %d %v %v, want %d %v %v", st.Rows, st.RowsByTool, st.RowsByRole, len(rows), wantTool, wantRole)
	}
	if st.Sessions != count(t, db, `SELECT count(DISTINCT ai_tool || '/' || ai_session_id || '/' || hostname) FROM logs`) {
		t.Errorf("sessions %d", st.Sessions)
	}
	if st.Oldest != cortex.FormatTime(oldest) || st.Newest != cortex.FormatTime(newest) {
		t.Errorf("oldest/newest %s %s, want %s %s", st.Oldest, st.Newest, cortex.FormatTime(oldest), cortex.FormatTime(newest))
	}
	// loadFixture: claude@host-a, codex, gemini, claude@host-b; the two
	// error files are claude too.
	wantKinds := map[string]int64{"claude": 4, "codex": 1, "gemini": 1, "unsupported": 1}
	if !reflect.DeepEqual(st.Sources.ByKind, wantKinds) || st.Sources.Files != 7 {
		t.Errorf("sources %+v, want %v and 7 files", st.Sources, wantKinds)
	}
	// err-1 ends with pending bytes; both error files have last_error
	// (the unsupported file's error does not count); one rewrite.
	if st.Sources.Pending != 1 || st.Sources.WithErrors != 2 || st.Sources.Rewrites != 1 {
		t.Errorf("sources %+v, want 1 pending, 2 with errors, 1 rewrite", st.Sources)
	}
	if st.ParseErrors != 12 || len(st.RecentErrors) != 10 {
		t.Fatalf("parse errors %d, recent %d; want 12, 10", st.ParseErrors, len(st.RecentErrors))
	}
	for i, e := range st.RecentErrors {
		n := 11 - i
		want := cortex.SourceError{Path: fmt.Sprintf("/t/err-%d.jsonl", n%2), Line: int64(n), Error: "invalid JSON",
			Preview: fmt.Sprintf("p%d", n), SeenAt: cortex.FormatTime(testNow.Add(time.Duration(n) * time.Minute))}
		if e != want {
			t.Errorf("recent error %d: %+v, want %+v", i, e, want)
		}
	}
	wantUnknown := []cortex.UnknownTypeCount{
		{Tool: "claude", Version: "2", Type: "beta", Count: 9},
		{Tool: "claude", Version: "1", Type: "alpha", Count: 7},
	}
	if !reflect.DeepEqual(st.UnknownTypes, wantUnknown) {
		t.Errorf("unknown types %+v, want %+v", st.UnknownTypes, wantUnknown)
	}
	if st.LastIndexedAt != cortex.FormatTime(testNow.Add(11*time.Minute)) {
		t.Errorf("last indexed %s", st.LastIndexedAt)
	}
	if st.DBBytes <= 0 {
		t.Errorf("db bytes %d", st.DBBytes)
	}
}
