package cli_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

type logsList struct {
	Logs []struct {
		Timestamp string            `json:"timestamp"`
		Hostname  string            `json:"hostname"`
		AppName   string            `json:"app_name"`
		Severity  string            `json:"severity"`
		Facility  string            `json:"facility"`
		Message   string            `json:"message"`
		Source    string            `json:"source"`
		Metadata  map[string]string `json:"metadata"`
	} `json:"logs"`
	Total          int  `json:"total"`
	Truncated      bool `json:"truncated"`
	LimitClampedTo int  `json:"limit_clamped_to"`
}

type logStatus struct {
	LogRows   int64 `json:"log_rows"`
	LogIngest []struct {
		Source    string `json:"source"`
		Received  int64  `json:"received"`
		Stored    int64  `json:"stored"`
		Dropped   int64  `json:"dropped"`
		Malformed int64  `json:"malformed"`
	} `json:"log_ingest"`
}

// TestIngestLogsEndToEnd imports a syslog file, JSON lines and a journald
// export with the real binary, lists and searches them, and re-imports.
func TestIngestLogsEndToEnd(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sys := write("syslog", "<11>Mar  9 08:00:03 web1 nginx[77]: upstream timed out\n"+
		"Mar  9 08:00:04 web1 sshd[9]: Accepted publickey for root\n"+
		"a line that is not syslog\n")
	js := write("app.jsonl", `{"time":"2026-03-09T08:00:05Z","level":"error","msg":"payment declined","service":"billing"}`+"\n"+
		`{"time":"2026-03-09T08:00:06Z","level":"info","msg":"api key=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 loaded"}`+"\n")
	jd := write("journal.json", `{"__REALTIME_TIMESTAMP":"1773043207000000","PRIORITY":"2","SYSLOG_FACILITY":"0","SYSLOG_IDENTIFIER":"kernel","_HOSTNAME":"web2","MESSAGE":"Out of memory: Killed process 4242"}`+"\n")

	var sum struct {
		Files []struct {
			Format   string `json:"format"`
			Outcome  string `json:"outcome"`
			Inserted int64  `json:"rows_inserted"`
		} `json:"files"`
		Inserted  int64 `json:"rows_inserted"`
		Malformed int64 `json:"malformed"`
	}
	e.json(&sum, "ingest-logs", sys, js, jd, "--json")
	if sum.Inserted != 6 || sum.Malformed != 1 || len(sum.Files) != 3 || sum.Files[0].Format != "syslog" ||
		sum.Files[1].Format != "json" || sum.Files[2].Format != "journald-json" {
		t.Fatalf("summary %+v", sum)
	}

	var all logsList
	e.json(&all, "logs", "--json")
	if all.Total != 6 || all.Logs[0].Message != "Out of memory: Killed process 4242" || all.Logs[0].Severity != "crit" ||
		all.Logs[0].Facility != "kern" || !strings.HasPrefix(all.Logs[0].Source, "file:") {
		t.Fatalf("logs %+v", all)
	}
	var errs logsList
	e.json(&errs, "logs", "--severity", "err", "--json")
	var got []string
	for _, l := range errs.Logs {
		got = append(got, l.Hostname+"/"+l.AppName+"/"+l.Severity)
	}
	if strings.Join(got, ",") != "web2/kernel/crit,e2e-host/billing/err,web1/nginx/err" {
		t.Fatalf("--severity err: %v", got)
	}
	var web1 logsList
	e.json(&web1, "logs", "--host", "web1", "--app", "sshd", "--json")
	if web1.Total != 1 || web1.Logs[0].Message != "Accepted publickey for root" {
		t.Fatalf("--host --app: %+v", web1)
	}
	var since logsList
	e.json(&since, "logs", "--since", "2026-03-09T08:00:05Z", "--until", "2026-03-09T08:00:07Z", "--limit", "1", "--json")
	if since.Total != 1 || !since.Truncated || since.Logs[0].AppName != "" {
		t.Fatalf("--since --until --limit: %+v", since)
	}
	for _, l := range all.Logs {
		if strings.Contains(l.Message, "sk-ant") {
			t.Fatalf("secret stored: %q", l.Message)
		}
	}
	// Searchable like transcripts.
	var hits struct {
		Hits []struct {
			Hostname string `json:"hostname"`
			Severity string `json:"severity"`
		} `json:"hits"`
	}
	e.json(&hits, "search", "upstream timed out", "--json")
	if len(hits.Hits) != 1 || hits.Hits[0].Hostname != "web1" || hits.Hits[0].Severity != "err" {
		t.Fatalf("search: %+v", hits)
	}
	var st logStatus
	e.json(&st, "status", "--json")
	if st.LogRows != 6 || len(st.LogIngest) != 1 || st.LogIngest[0].Source != "file" || st.LogIngest[0].Malformed != 1 {
		t.Fatalf("status %+v", st)
	}

	// Text output, and a second import that only stats.
	out, errOut, code := e.run("ingest-logs", sys, js, jd)
	if code != 0 || strings.Count(out, "unchanged") != 3 {
		t.Fatalf("re-import: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = e.run("logs", "--host", "web1")
	if code != 0 || !strings.Contains(out, "SEVERITY") || !strings.Contains(out, "upstream timed out") || strings.Contains(out, "payment") {
		t.Fatalf("logs table: exit %d\n%s", code, out)
	}
	// Errors: bad flags are usage errors, a missing file is not found.
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"logs", "--severity", "loud"}, 2},
		{[]string{"logs", "--limit", "-1"}, 2},
		{[]string{"ingest-logs", sys, "--format", "xml"}, 2},
		{[]string{"ingest-logs"}, 2},
		{[]string{"ingest-logs", filepath.Join(dir, "missing.log")}, 3},
	} {
		if out, errOut, code := e.run(c.args...); code != c.code {
			t.Errorf("cortex %s: exit %d, want %d\n%s%s", strings.Join(c.args, " "), code, c.code, out, errOut)
		}
	}
	var none logsList
	e.json(&none, "logs", "--host", "nobody", "--json")
	if none.Total != 0 || none.Logs == nil {
		t.Fatalf("empty listing %+v", none)
	}
}

// TestSyslogEndToEnd runs `cortex syslog` on free loopback ports, sends
// messages over UDP and TCP, and reads them back while it runs.
func TestSyslogEndToEnd(t *testing.T) {
	e := newEnv(t)
	d, addrs := startDaemon(t, e, regexp.MustCompile(`udp (127\.0\.0\.1:\d+), tcp (127\.0\.0\.1:\d+)`),
		"syslog", "--udp", "127.0.0.1:0", "--tcp", "127.0.0.1:0")
	udp, tcp := addrs[0], addrs[1]

	uc, err := net.Dial("udp", udp)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(uc, "<11>Mar 10 12:00:00 web1 nginx: udp 3164 upstream failed")
	fmt.Fprint(uc, "<165>1 2026-03-10T12:00:01Z web1 deployd 7 ID1 - udp 5424 deploy done")
	uc.Close()
	tc, err := net.Dial("tcp", tcp)
	if err != nil {
		t.Fatal(err)
	}
	m := "<27>1 2026-03-10T12:00:02Z web2 app - - - tcp octet counted"
	fmt.Fprintf(tc, "%d %s<30>Mar 10 12:00:03 web2 sshd: tcp newline framed\nnot syslog at all\n", len(m), m)
	tc.Close()

	// The receiver stores counters every second: status shows them while it runs.
	deadline := time.Now().Add(15 * time.Second)
	var st logStatus
	for {
		e.json(&st, "status", "--json")
		if st.LogRows == 5 && len(st.LogIngest) == 2 && st.LogIngest[0].Received == 3 && st.LogIngest[1].Received == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status while running: %+v\n%s", st, d.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if tcpC := st.LogIngest[0]; tcpC.Source != "syslog:tcp" || tcpC.Stored != 3 || tcpC.Malformed != 1 || tcpC.Dropped != 0 {
		t.Errorf("tcp counters %+v", tcpC)
	}
	var list logsList
	e.json(&list, "logs", "--source", "syslog:udp", "--json")
	if list.Total != 2 || list.Logs[0].Message != "udp 5424 deploy done" || list.Logs[0].Metadata["msgid"] != "ID1" ||
		list.Logs[1].Severity != "err" || list.Logs[1].AppName != "nginx" {
		t.Fatalf("udp rows %+v", list)
	}
	e.json(&list, "logs", "--host", "e2e-host", "--json")
	if list.Total != 1 || list.Logs[0].Message != "not syslog at all" || list.Logs[0].Metadata["parse_error"] == "" {
		t.Fatalf("malformed row %+v", list)
	}
	d.stop(t)
	if !strings.Contains(d.log.String(), "5 received, 5 stored, 0 dropped, 1 malformed") {
		t.Errorf("final summary missing:\n%s", d.log.String())
	}
	// A taken port is an error, not a silent receiver without a socket.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if out, errOut, code := e.run("syslog", "--udp", "off", "--tcp", ln.Addr().String()); code != 7 || !strings.Contains(errOut, "cannot listen") {
		t.Errorf("busy port: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := e.run("syslog", "--udp", "off", "--tcp", "off"); code != 2 {
		t.Errorf("both off: exit %d\n%s", code, errOut)
	}
}
