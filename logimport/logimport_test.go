package logimport

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/sqlite"
)

func openDB(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cortex.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fixture copies a testdata file to a temp folder (imports checkpoint by
// path, and tests change files).
func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func opts() Options { return Options{Host: "filehost", Location: time.UTC} }

func mustImport(t testing.TB, db *sqlite.DB, o Options, paths ...string) Summary {
	t.Helper()
	sum, err := Import(context.Background(), db, paths, o)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

func logs(t testing.TB, db *sqlite.DB) []sqlite.LogEntry {
	t.Helper()
	list, err := db.Logs(context.Background(), sqlite.LogParams{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	// Oldest first, by line for equal stamps.
	out := list.Logs
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

type want struct {
	ts, host, app, fac string
	sev                cortex.Severity
	msg                string
	meta               map[string]string
}

func check(t *testing.T, got []sqlite.LogEntry, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		for _, g := range got {
			t.Logf("%s %s %s %s %q %v", g.Timestamp, g.Hostname, g.AppName, g.Severity, g.Message, g.Metadata)
		}
		t.Fatalf("%d rows, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		g := got[i]
		if g.Timestamp != w.ts || g.Hostname != w.host || g.AppName != w.app || g.Facility != w.fac || g.Severity != w.sev || g.Message != w.msg {
			t.Errorf("row %d:\n got %s|%s|%s|%s|%s|%q\nwant %s|%s|%s|%s|%s|%q", i, g.Timestamp, g.Hostname, g.AppName, g.Facility,
				g.Severity, g.Message, w.ts, w.host, w.app, w.fac, w.sev, w.msg)
		}
		for k, v := range w.meta {
			if g.Metadata[k] != v && !(v == "*" && g.Metadata[k] != "") {
				t.Errorf("row %d (%q): metadata %s = %q, want %q (%v)", i, g.Message, k, g.Metadata[k], v, g.Metadata)
			}
		}
		if !strings.HasPrefix(g.Source, SourcePrefix) {
			t.Errorf("row %d: source %q", i, g.Source)
		}
	}
}

func TestImportSyslogText(t *testing.T) {
	db := openDB(t)
	path := fixture(t, "syslog.log")
	sum := mustImport(t, db, opts(), path)
	if sum.Failed != 0 || sum.Files[0].Format != FormatSyslog || sum.Files[0].Outcome != OutcomeRead || sum.Inserted != 7 || sum.Lines != 7 || sum.Malformed != 1 {
		t.Fatalf("summary %+v", sum)
	}
	check(t, logs(t, db), []want{
		{"2026-03-09T08:00:01.000Z", "web1", "systemd", "", cortex.SevNotice, "Started Daily apt download activities.", map[string]string{"procid": "1"}},
		{"2026-03-09T08:00:02.000Z", "web1", "sshd", "", cortex.SevError, "error: kex_exchange_identification: Connection closed by remote host", map[string]string{"severity_from": "text"}},
		{"2026-03-09T08:00:03.000Z", "web1", "nginx", "user", cortex.SevError, "upstream timed out (110: Connection timed out) while reading response header", nil},
		{"2026-03-09T08:00:04.123Z", "web2", "kernel", "", cortex.SevNotice, "[12345.678] EXT4-fs warning (device sda1): ext4_dx_add_entry: Directory index full!", nil},
		{"2026-03-09T08:00:05.003Z", "web1", "deployd", "local4", cortex.SevNotice, "deploy of api finished", map[string]string{"msgid": "ID47", "structured_data": `{"meta@32473":{"build":"42"}}`}},
		// A continuation line: malformed, kept whole, at the previous stamp.
		{"2026-03-09T08:00:05.003Z", "filehost", "", "", cortex.SevNotice, "    at com.example.Foo.bar(Foo.java:42)", map[string]string{"timestamp_estimated": "true", "parse_error": "*"}},
		{"2026-03-09T08:00:06.000Z", "web1", "app", "", cortex.SevNotice, "db password=[REDACTED] rejected", nil},
	})
}

func TestImportJSONLines(t *testing.T) {
	db := openDB(t)
	path := fixture(t, "app.jsonl")
	sum := mustImport(t, db, opts(), path)
	if sum.Files[0].Format != FormatJSON || sum.Inserted != 8 || sum.Malformed != 1 {
		t.Fatalf("summary %+v", sum)
	}
	// Lines without a time take the previous line's.
	check(t, logs(t, db), []want{
		{"2026-03-09T08:00:01.500Z", "web1", "api", "", cortex.SevInfo, "server started", nil},
		{"2026-03-09T08:00:02.000Z", "filehost", "billing", "", cortex.SevError, "payment failed: card declined", nil},
		{"2026-03-09T08:00:03.000Z", "db1", "db-proxy", "", cortex.SevWarning, "slow query", nil},
		{"2026-03-09T08:00:04.123Z", "web3", "worker", "", cortex.SevError, "pino says error", nil},
		{"2026-03-09T08:00:05.000Z", "filehost", "cli", "", cortex.SevDebug, "bunyan-ish debug", nil},
		{"2026-03-09T08:00:05.000Z", "filehost", "", "", cortex.SevError, "no time here, token=[REDACTED]", map[string]string{"timestamp_estimated": "true"}},
		{"2026-03-09T08:00:05.000Z", "filehost", "", "", cortex.SevNotice, "not json at all", map[string]string{"parse_error": "*", "timestamp_estimated": "true"}},
		{"2026-03-09T08:00:07.000Z", "filehost", "", "", cortex.SevInfo, "no level given", nil},
	})
}

func TestImportJournald(t *testing.T) {
	db := openDB(t)
	path := fixture(t, "journal.json")
	sum := mustImport(t, db, opts(), path)
	if sum.Files[0].Format != FormatJournald || sum.Inserted != 4 || sum.Malformed != 0 {
		t.Fatalf("summary %+v", sum)
	}
	check(t, logs(t, db), []want{
		{"2026-03-09T08:00:01.123Z", "web1", "systemd", "daemon", cortex.SevInfo, "Started Session 12 of User root.", map[string]string{"unit": "init.scope", "pid": "1", "cursor": "s=a1;i=1;b=b1;m=1;t=5f0;x=1"}},
		{"2026-03-09T08:00:02.000Z", "web1", "sshd", "auth", cortex.SevError, "error: maximum authentication attempts exceeded for root", map[string]string{"unit": "ssh.service"}},
		{"2026-03-09T08:00:03.000Z", "web1", "myapp", "", cortex.SevCritical, "binary \uFFFD ok", nil},
		{"2026-03-09T08:00:04.000Z", "web1", "kernel", "", cortex.SevWarning, "usb 1-1: device descriptor read/64, error -71", nil},
	})
}

func TestSniff(t *testing.T) {
	for _, c := range []struct{ head, want string }{
		{"Mar  9 08:00:01 web1 systemd[1]: Started\n", FormatSyslog},
		{"<13>1 - - - - - - x\n", FormatSyslog},
		{"\n\n{\"msg\":\"x\",\"level\":\"info\"}\n", FormatJSON},
		{`{"__CURSOR":"s","MESSAGE":"x"}` + "\n", FormatJournald},
		{`{"MESSAGE":"x","PRIORITY":"3"}` + "\n", FormatJournald},
		{`{"msg":"cut`, FormatJSON},
		{"{not json\nmore\n", FormatSyslog},
		{"", FormatSyslog},
	} {
		if got := Sniff([]byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q) = %s, want %s", c.head, got, c.want)
		}
	}
}

func TestJSONLevels(t *testing.T) {
	for line, want := range map[string]cortex.Severity{
		`{"level":"WARN"}`:         cortex.SevWarning,
		`{"level":"fatal"}`:        cortex.SevCritical,
		`{"level":"trace"}`:        cortex.SevDebug,
		`{"level":3}`:              cortex.SevError,
		`{"level":60}`:             cortex.SevCritical,
		`{"level":30}`:             cortex.SevInfo,
		`{"levelname":"CRITICAL"}`: cortex.SevCritical,
		`{"log.level":"error"}`:    cortex.SevError,
		`{"severity":"INFO"}`:      cortex.SevInfo,
		`{"level":"chatty"}`:       "",
	} {
		if got := parseJSON([]byte(line)).sev; got != want {
			t.Errorf("%s: severity %q, want %q", line, got, want)
		}
	}
	for line, want := range map[string]string{
		`{"time":"2026-03-09T08:00:00+02:00"}`: "2026-03-09T06:00:00.000Z",
		`{"time":1773043200}`:                  "2026-03-09T08:00:00.000Z",
		`{"time":1773043200.25}`:               "2026-03-09T08:00:00.250Z",
		`{"time":1773043200250}`:               "2026-03-09T08:00:00.250Z",
		`{"time":1773043200250000}`:            "2026-03-09T08:00:00.250Z",
		`{"time":1773043200250000000}`:         "2026-03-09T08:00:00.250Z",
		`{"time":"1773043200"}`:                "2026-03-09T08:00:00.000Z",
		`{"time":"2026-03-09 08:00:00.5"}`:     "2026-03-09T08:00:00.500Z",
	} {
		if got := cortex.FormatTime(parseJSON([]byte(line)).ts); got != want {
			t.Errorf("%s: time %s, want %s", line, got, want)
		}
	}
}

func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestResumeAndRewrite(t *testing.T) {
	db := openDB(t)
	path := filepath.Join(t.TempDir(), "app.log")
	line := func(s string) string { return "<11>Mar  9 08:00:00 web1 app: " + s + "\n" }
	os.WriteFile(path, []byte(line("one")+line("same")+line("same")), 0o644)
	first := mustImport(t, db, opts(), path).Files[0]
	if first.Outcome != OutcomeRead || first.Inserted != 3 {
		t.Fatalf("first import %+v", first)
	}
	// Unchanged: a stat.
	if again := mustImport(t, db, opts(), path).Files[0]; again.Outcome != OutcomeUnchanged || again.Lines != 0 {
		t.Fatalf("unchanged import %+v", again)
	}
	// Appended: only the new lines are read; an identical line is a new
	// occurrence (the ledger counts those already stored).
	appendTo(t, path, line("same")+line("two"))
	res := mustImport(t, db, opts(), path).Files[0]
	if res.Outcome != OutcomeResumed || res.Lines != 2 || res.Inserted != 2 || res.Duplicates != 0 {
		t.Fatalf("resumed import %+v", res)
	}
	// Forced: everything again, nothing new.
	o := opts()
	o.Force = true
	if res := mustImport(t, db, o, path).Files[0]; res.Outcome != OutcomeRead || res.Lines != 5 || res.Inserted != 0 || res.Duplicates != 5 {
		t.Fatalf("forced import %+v", res)
	}
	// Rewritten (rotated: new content, one old line kept): read from the
	// start, only the new lines stored; old rows stay.
	os.WriteFile(path, []byte(line("one")+line("three")), 0o644)
	res = mustImport(t, db, opts(), path).Files[0]
	if res.Outcome != OutcomeRewritten || res.Lines != 2 || res.Inserted != 1 || res.Duplicates != 1 {
		t.Fatalf("rewritten import %+v", res)
	}
	var msgs []string
	for _, r := range logs(t, db) {
		msgs = append(msgs, r.Message)
	}
	if got := strings.Join(msgs, ","); got != "one,same,same,same,two,three" {
		t.Fatalf("rows %s", got)
	}
	src, ok, err := db.Source(context.Background(), SourcePrefix+path)
	if err != nil || !ok || src.Rewrites != 1 || src.Kind != "log:syslog" || !src.Complete {
		t.Fatalf("checkpoint %+v %v %v", src, ok, err)
	}
	st, err := db.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.LogRows != 6 || len(st.LogIngest) != 1 || st.LogIngest[0].Source != "file" || st.LogIngest[0].Stored != 6 {
		t.Fatalf("status %d rows, counters %+v", st.LogRows, st.LogIngest)
	}
}

func TestPendingLastLine(t *testing.T) {
	db := openDB(t)
	path := filepath.Join(t.TempDir(), "app.log")
	os.WriteFile(path, []byte("<11>Mar  9 08:00:00 web1 app: done\n<11>Mar  9 08:00:01 web1 app: half"), 0o644)
	fi, _ := os.Stat(path)
	o := opts()
	o.Now = func() time.Time { return fi.ModTime().Add(time.Second) }
	res := mustImport(t, db, o, path).Files[0]
	if res.Inserted != 1 || res.PendingBytes != int64(len("<11>Mar  9 08:00:01 web1 app: half")) {
		t.Fatalf("fresh file %+v", res)
	}
	// Still being written: stays pending; once settled it is taken.
	appendTo(t, path, " written")
	fi, _ = os.Stat(path)
	o.Now = func() time.Time { return fi.ModTime().Add(time.Minute) }
	res = mustImport(t, db, o, path).Files[0]
	if res.Outcome != OutcomeResumed || res.Inserted != 1 || res.PendingBytes != 0 {
		t.Fatalf("settled file %+v", res)
	}
	if rows := logs(t, db); len(rows) != 2 || rows[1].Message != "half written" {
		t.Fatalf("rows %+v", rows)
	}
	if res := mustImport(t, db, o, path).Files[0]; res.Outcome != OutcomeUnchanged {
		t.Fatalf("third import %+v", res)
	}
}

func TestLongLinesAndBlankLines(t *testing.T) {
	db := openDB(t)
	path := filepath.Join(t.TempDir(), "big.log")
	long := "<14>Mar  9 08:00:00 web1 app: " + strings.Repeat("x", 200<<10)
	os.WriteFile(path, []byte("\n\r\n"+long+"\r\n<14>Mar  9 08:00:01 web1 app: after\n"), 0o644)
	o := opts()
	o.MaxLineBytes = 1000
	res := mustImport(t, db, o, path).Files[0]
	if res.Inserted != 2 || res.Truncated != 1 {
		t.Fatalf("result %+v", res)
	}
	rows := logs(t, db)
	if len(rows[0].Message) > 1000 || rows[0].Metadata["truncated"] != "true" || rows[0].Metadata["original_bytes"] != "204830" || rows[1].Message != "after" {
		t.Fatalf("rows: %d bytes %v; %q", len(rows[0].Message), rows[0].Metadata, rows[1].Message)
	}
}

func TestFailures(t *testing.T) {
	db := openDB(t)
	dir := t.TempDir()
	good := fixture(t, "syslog.log")
	sum := mustImport(t, db, opts(), filepath.Join(dir, "missing.log"), dir, good)
	if sum.Failed != 2 || sum.Files[0].Outcome != OutcomeFailed || !strings.Contains(sum.Files[0].Error, "no such file") ||
		!strings.Contains(sum.Files[1].Error, "directory") || sum.Files[2].Inserted != 7 {
		t.Fatalf("summary %+v", sum)
	}
	if _, err := Import(context.Background(), db, []string{good}, Options{Format: "xml"}); cortex.ErrorCode(err) != cortex.CodeInvalid {
		t.Fatalf("bad format: %v", err)
	}
	// An explicit format wins over detection.
	o := opts()
	o.Format, o.Force = FormatJSON, true
	if res := mustImport(t, db, o, good).Files[0]; res.Format != FormatJSON || res.Malformed != 7 {
		t.Fatalf("forced json %+v", res)
	}
}

func TestEmptyFile(t *testing.T) {
	db := openDB(t)
	path := filepath.Join(t.TempDir(), "empty.log")
	os.WriteFile(path, nil, 0o644)
	if res := mustImport(t, db, opts(), path).Files[0]; res.Outcome != OutcomeEmpty {
		t.Fatalf("%+v", res)
	}
	if res := mustImport(t, db, opts(), path).Files[0]; res.Outcome != OutcomeUnchanged {
		t.Fatalf("%+v", res)
	}
}
