package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

func sysRow(host, app string, sev cortex.Severity, msg string, m int) LogRow {
	return LogRow{Timestamp: t0.Add(time.Duration(m) * time.Minute), Hostname: host, AppName: app, Facility: "daemon",
		Severity: sev, Message: msg, Raw: []byte("<30>" + msg), Source: "syslog:udp", Meta: `{"peer":"10.0.0.1"}`}
}

func TestInsertLogs(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	// A transcript row first: ids continue after it.
	mustImport(t, db, batch("/t/s.jsonl", rec("u1", "", cortex.RoleUser, "deploy please", t0)))
	rows := []LogRow{
		sysRow("host-a", "nginx", cortex.SevError, "upstream timed out", 1),
		sysRow("host-a", "sshd", cortex.SevInfo, "session opened", 2),
		sysRow("host-b", "nginx", cortex.SevCritical, "worker crashed", 3),
		{Timestamp: t0, Hostname: "host-a", Message: "", Source: "syslog:tcp"}, // empty: not indexed, severity info
	}
	c := []cortex.LogIngestCounters{{Source: CounterSyslogUDP, Received: 5, Stored: 3, Dropped: 2, Malformed: 1},
		{Source: CounterSyslogTCP, Received: 1, Stored: 1}, {Source: "zero"}}
	n, err := db.InsertLogs(ctx, rows, c)
	if err != nil || n != 4 {
		t.Fatalf("InsertLogs: %d %v", n, err)
	}
	if got := count(t, db, `SELECT count(*) FROM logs WHERE ai_tool IS NULL`); got != 4 {
		t.Fatalf("%d non-AI rows", got)
	}
	if got := count(t, db, `SELECT count(*) FROM logs WHERE ai_tool IS NULL AND (ai_role IS NOT NULL OR ai_session_id IS NOT NULL
		OR source_id IS NOT NULL OR is_error <> 0)`); got != 0 {
		t.Fatalf("%d syslog rows with AI or file columns", got)
	}
	if got := count(t, db, `SELECT count(*) FROM logs WHERE message = '' AND severity = 'info' AND facility IS NULL AND app_name IS NULL`); got != 1 {
		t.Fatalf("defaults of an empty row: %d", got)
	}
	if got := ftsMatch(t, db, "timed"); len(got) != 1 {
		t.Fatalf("fts: %v", got)
	}
	if got := len(indexedRows(t, db)); got != 4 { // the transcript row and three messages
		t.Fatalf("%d indexed rows", got)
	}
	// Searchable, and the non-AI rows are not counted as agent rows.
	if hits := searchIDs(t, db, cortex.SearchParams{Query: "crashed"}); len(hits) != 1 {
		t.Fatalf("search: %v", hits)
	}
	st, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != 1 || st.LogRows != 4 || len(st.LogIngest) != 2 || st.LogIngest[0].Source != CounterSyslogTCP ||
		st.LogIngest[1].Dropped != 2 || st.LogIngest[1].FirstAt == "" {
		t.Fatalf("status rows %d log rows %d counters %+v", st.Rows, st.LogRows, st.LogIngest)
	}
	// Counters accumulate; a counters-only write is fine.
	if _, err := db.InsertLogs(ctx, nil, []cortex.LogIngestCounters{{Source: CounterSyslogUDP, Dropped: 10, KernelDrops: 3}}); err != nil {
		t.Fatal(err)
	}
	got, err := db.LogIngestCounters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if u := got[1]; u.Received != 5 || u.Stored != 3 || u.Dropped != 12 || u.KernelDrops != 3 || u.Malformed != 1 {
		t.Fatalf("accumulated %+v", u)
	}
	// Incident evidence sees them.
	near, err := db.NearbyLogs(ctx, "host-a", t0, t0.Add(10*time.Minute), true, 10)
	if err != nil || len(near) != 1 || near[0].Message != "upstream timed out" || near[0].AppName != "nginx" {
		t.Fatalf("nearby errors %+v %v", near, err)
	}
}

func TestImportLogsLedger(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	b := LogBatch{Source: cortex.Source{Path: "file:/var/log/app.log", Kind: "log:syslog", Offset: 30, Line: 3, Complete: true}, Reset: true}
	for i, msg := range []string{"one", "two", "two"} {
		r := sysRow("host-a", "app", cortex.SevInfo, msg, i)
		r.Source, r.Key, r.Line = b.Source.Path, "h:"+msg+"#1", int64(i+1)
		if i == 2 {
			r.Key = "h:two#2"
		}
		if msg == "one" {
			r.Malformed = true
		}
		b.Rows = append(b.Rows, r)
	}
	res, err := db.ImportLogs(ctx, []LogBatch{b})
	if err != nil || res[0].Inserted != 3 || res[0].Duplicates != 0 || res[0].SourceID == 0 {
		t.Fatalf("first import %+v %v", res, err)
	}
	// Again, plus a repeated key inside one batch: nothing twice.
	b.Reset, b.Rewritten = false, true
	b.Rows = append(b.Rows, b.Rows[0])
	res, err = db.ImportLogs(ctx, []LogBatch{b})
	if err != nil || res[0].Inserted != 0 || res[0].Duplicates != 4 {
		t.Fatalf("second import %+v %v", res, err)
	}
	if got := count(t, db, `SELECT count(*) FROM logs WHERE source = 'file:/var/log/app.log' AND source_id IS NOT NULL AND source_line > 0`); got != 3 {
		t.Fatalf("%d rows", got)
	}
	src, ok, err := db.Source(ctx, "file:/var/log/app.log")
	if err != nil || !ok || src.Kind != "log:syslog" || src.Offset != 30 || src.Records != 3 || src.Rewrites != 1 || src.Tool != "" {
		t.Fatalf("checkpoint %+v %v %v", src, ok, err)
	}
	counts, err := db.LogKeyCounts(ctx, src.ID, []string{"h:two", "h:one", "h:none", "h:tw"})
	if err != nil {
		t.Fatal(err)
	}
	if counts["h:two"] != 2 || counts["h:one"] != 1 || counts["h:none"] != 0 || counts["h:tw"] != 0 {
		t.Fatalf("key counts %v", counts)
	}
	if c, _ := db.LogKeyCounts(ctx, src.ID, nil); len(c) != 0 {
		t.Fatalf("no keys: %v", c)
	}
	st, err := db.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.LogIngest) != 1 || st.LogIngest[0] != (cortex.LogIngestCounters{Source: CounterFile, Received: 7, Stored: 3, Malformed: 3,
		FirstAt: st.LogIngest[0].FirstAt, UpdatedAt: st.LogIngest[0].UpdatedAt}) || st.Sources.ByKind["log:syslog"] != 1 {
		t.Fatalf("status counters %+v, sources %+v", st.LogIngest, st.Sources)
	}
}

func TestLogsListing(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	mustImport(t, db, batch("/t/s.jsonl", rec("u1", "", cortex.RoleUser, "an agent row", t0.Add(time.Minute))))
	rows := []LogRow{
		sysRow("host-a", "nginx", cortex.SevError, "a1 error", 1),
		sysRow("host-a", "sshd", cortex.SevInfo, "a2 info", 2),
		sysRow("host-b", "nginx", cortex.SevCritical, "b3 crit", 3),
		sysRow("host-a", "nginx", cortex.SevWarning, "a4 warning", 4),
	}
	rows[3].Source = "file:/var/log/nginx.log"
	if _, err := db.InsertLogs(ctx, rows, nil); err != nil {
		t.Fatal(err)
	}
	list := func(p LogParams) string {
		t.Helper()
		if p.Limit == 0 {
			p.Limit = 100
		}
		res, err := db.Logs(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range res.Logs {
			out = append(out, strings.Fields(e.Message)[0])
		}
		s := strings.Join(out, ",")
		if res.Truncated {
			s += "+"
		}
		return s
	}
	for _, c := range []struct {
		p    LogParams
		want string
	}{
		{LogParams{}, "a4,b3,a2,a1"},
		{LogParams{Host: "host-a"}, "a4,a2,a1"},
		{LogParams{App: "nginx"}, "a4,b3,a1"},
		{LogParams{Severity: cortex.SevError}, "b3,a1"},
		{LogParams{Severity: cortex.SevWarning, Host: "host-a"}, "a4,a1"},
		{LogParams{Source: "syslog"}, "b3,a2,a1"},
		{LogParams{Source: "file:"}, "a4"},
		{LogParams{Since: t0.Add(2 * time.Minute), Until: t0.Add(4 * time.Minute)}, "b3,a2"},
		{LogParams{Limit: 2}, "a4,b3+"},
		{LogParams{Host: "nobody"}, ""},
	} {
		if got := list(c.p); got != c.want {
			t.Errorf("Logs(%+v) = %s, want %s", c.p, got, c.want)
		}
	}
	res, err := db.Logs(ctx, LogParams{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Logs[0]
	if e.Hostname != "host-a" || e.Facility != "daemon" || e.Severity != cortex.SevWarning || e.AppName != "nginx" ||
		e.Metadata["peer"] != "10.0.0.1" || e.ReceivedAt != cortex.FormatTime(testNow) || e.Timestamp != cortex.FormatTime(t0.Add(4*time.Minute)) {
		t.Fatalf("entry %+v", e)
	}
	if _, err := db.Logs(ctx, LogParams{Severity: "loud", Limit: 1}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Fatalf("bad severity: %v", err)
	}
}

// The listing reads non-AI rows through their partial indexes, never by
// walking transcript rows.
func TestLogsQueryPlan(t *testing.T) {
	db, _ := openTestDB(t)
	plan := func(where string) string {
		rows, err := db.r.Query(`EXPLAIN QUERY PLAN SELECT id FROM logs WHERE ai_tool IS NULL` + where + ` ORDER BY timestamp DESC, id DESC LIMIT 10`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			out = append(out, detail)
		}
		return strings.Join(out, "; ")
	}
	if p := plan(""); !strings.Contains(p, "idx_logs_nonai_time") {
		t.Errorf("plan without host: %s", p)
	}
	if p := plan(" AND hostname = 'h'"); !strings.Contains(p, "idx_logs_nonai_host_time") {
		t.Errorf("plan with host: %s", p)
	}
}

// TestNearbyLogsMatchTheShortHostName: a syslog sender writing its FQDN
// (or a transcript host that is one) is the same machine as the short
// name; another host sharing a prefix is not.
func TestNearbyLogsMatchTheShortHostName(t *testing.T) {
	db, _ := openTestDB(t)
	ctx := context.Background()
	rows := []LogRow{
		sysRow("vm", "a", cortex.SevError, "short", 1),
		sysRow("vm.example.com", "b", cortex.SevError, "fqdn", 2),
		sysRow("VM.lan", "c", cortex.SevError, "other case", 3),
		sysRow("vmx", "d", cortex.SevError, "prefix only", 4),
		sysRow("vm_x.lan", "e", cortex.SevError, "underscore", 5),
		sysRow("other", "f", cortex.SevError, "other host", 6),
	}
	if _, err := db.InsertLogs(ctx, rows, nil); err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{
		"vm":             "short,fqdn,other case",
		"vm.example.com": "short,fqdn,other case",
		"vm_x":           "underscore",
	} {
		got, err := db.NearbyLogs(ctx, host, t0, t0.Add(time.Hour), false, 10)
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for _, r := range got {
			msgs = append(msgs, r.Message)
		}
		if strings.Join(msgs, ",") != want {
			t.Errorf("host %q: %v, want %s", host, msgs, want)
		}
	}
}
