package syslogd

import (
	"strings"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
)

var ref = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func TestParse(t *testing.T) {
	p := NewParser(time.UTC)
	for _, c := range []struct {
		name, in                      string
		format                        string
		ts                            string // FormatTime, "" for none
		host, app, procid, msgid, fac string
		sev                           cortex.Severity
		text                          string
		malformed                     bool
		sd                            bool
	}{
		{name: "rfc3164", in: `<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8`, format: FormatRFC3164,
			ts: "2025-10-11T22:14:15.000Z", host: "mymachine", app: "su", fac: "auth", sev: cortex.SevCritical,
			text: "'su root' failed for lonvick on /dev/pts/8"},
		{name: "rfc3164 pid", in: `<11>Mar  9 08:00:01 web1 nginx[4242]: upstream timed out`, format: FormatRFC3164,
			ts: "2026-03-09T08:00:01.000Z", host: "web1", app: "nginx", procid: "4242", fac: "user", sev: cortex.SevError,
			text: "upstream timed out"},
		{name: "rfc3164 zero-padded day, fractions", in: `<13>Mar 09 08:00:01.250 web1 app: x`, format: FormatRFC3164,
			ts: "2026-03-09T08:00:01.250Z", host: "web1", app: "app", fac: "user", sev: cortex.SevNotice, text: "x"},
		{name: "rfc3164 rfc3339 stamp", in: `<30>2026-01-05T10:00:00.123456+01:00 host sshd[123]: Accepted key`, format: FormatRFC3164,
			ts: "2026-01-05T09:00:00.123Z", host: "host", app: "sshd", procid: "123", fac: "daemon", sev: cortex.SevInfo, text: "Accepted key"},
		{name: "rfc5424", in: `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog 77 ID47 [exampleSDID@32473 iut="3" eventSource="Application"] An application event`,
			format: FormatRFC5424, ts: "2003-10-11T22:14:15.003Z", host: "mymachine.example.com", app: "evntslog", procid: "77",
			msgid: "ID47", fac: "local4", sev: cortex.SevNotice, text: "An application event", sd: true},
		{name: "rfc5424 nil values", in: `<27>1 - - - - - - disk full`, format: FormatRFC5424, fac: "daemon", sev: cortex.SevError, text: "disk full"},
		{name: "rfc5424 offset", in: `<14>1 2026-03-10T13:00:00.5+01:00 h a - - - m`, format: FormatRFC5424,
			ts: "2026-03-10T12:00:00.500Z", host: "h", app: "a", fac: "user", sev: cortex.SevInfo, text: "m"},
		{name: "file line without PRI", in: `Mar  9 08:00:01 web1 sshd[1]: Failed password for root`, format: FormatRFC3164,
			ts: "2026-03-09T08:00:01.000Z", host: "web1", app: "sshd", procid: "1", text: "Failed password for root"},
		{name: "december read in january", in: `<13>Dec 31 23:59:00 h a: late`, format: FormatRFC3164,
			ts: "2025-12-31T23:59:00.000Z", host: "h", app: "a", fac: "user", sev: cortex.SevNotice, text: "late"},
		{name: "not syslog", in: `hello world`, text: "hello world", malformed: true},
		{name: "bad priority", in: `<999>garbage`, text: "<999>garbage", malformed: true},
		{name: "rfc5424 bad timestamp keeps PRI", in: `<11>1 yesterday host app - - - boom`, format: FormatRFC5424,
			fac: "user", sev: cortex.SevError, text: `<11>1 yesterday host app - - - boom`, malformed: true},
		{name: "empty", in: ``, malformed: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ref
			if strings.Contains(c.name, "january") {
				r = time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
			}
			m := p.Parse([]byte(c.in), r)
			if (m.Err != nil) != c.malformed {
				t.Fatalf("err = %v, malformed want %v", m.Err, c.malformed)
			}
			ts := ""
			if !m.Timestamp.IsZero() {
				ts = cortex.FormatTime(m.Timestamp)
			}
			got := []string{m.Format, ts, m.Hostname, m.AppName, m.ProcID, m.MsgID, m.Facility, string(m.Severity), m.Text}
			want := []string{c.format, c.ts, c.host, c.app, c.procid, c.msgid, c.fac, string(c.sev), c.text}
			if c.malformed && c.format == "" {
				got[0] = ""
			}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("field %d = %q, want %q (%+v)", i, got[i], want[i], m)
				}
			}
			if (len(m.StructuredData) > 0) != c.sd {
				t.Errorf("structured data %v", m.StructuredData)
			}
			meta := m.Meta(nil)
			if c.malformed && !strings.Contains(meta, "parse_error") {
				t.Errorf("meta of a malformed message has no parse error: %s", meta)
			}
		})
	}
}

func TestSeverityFromText(t *testing.T) {
	for in, want := range map[string]cortex.Severity{
		"ERROR: disk full":              cortex.SevError,
		"error: disk full":              cortex.SevError,
		"[warn] slow":                   cortex.SevWarning,
		"WARN slow":                     cortex.SevWarning,
		"level=error msg=x":             cortex.SevError,
		"<crit> x":                      cortex.SevCritical,
		"FATAL boom":                    cortex.SevCritical,
		"Notice how this is prose":      "",
		"Errors were made":              "",
		"error":                         "",
		"7 things":                      "",
		"":                              "",
		"Connection closed by 10.0.0.1": "",
	} {
		got, ok := SeverityFromText(in)
		if got != want || ok != (want != "") {
			t.Errorf("SeverityFromText(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestSeverityOf(t *testing.T) {
	for n, want := range []cortex.Severity{"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"} {
		if got := SeverityOf(n); got != want {
			t.Errorf("SeverityOf(%d) = %q", n, got)
		}
	}
	if SeverityOf(8) != "" || SeverityOf(-1) != "" {
		t.Error("out-of-range severity mapped")
	}
}
