package logimport

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/leodido/go-syslog/v4/common"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/syslogd"
)

// Formats of log files.
const (
	FormatAuto     = "auto"
	FormatSyslog   = "syslog"
	FormatJSON     = "json"
	FormatJournald = "journald-json"
)

// Formats lists the formats --format accepts.
func Formats() []string { return []string{FormatAuto, FormatSyslog, FormatJSON, FormatJournald} }

// kindPrefix marks log-file checkpoints in the sources table (their kind
// is "log:<format>").
const kindPrefix = "log:"

// sniffLines bounds the lines Sniff looks at.
const sniffLines = 20

// Sniff detects the format of a file from its first bytes: JSON lines
// carrying journald's fields (__REALTIME_TIMESTAMP, __CURSOR, or MESSAGE
// with PRIORITY) are journald-json, other JSON objects json, anything else
// syslog text.
func Sniff(head []byte) string {
	n, cut := 0, false
	for len(head) > 0 && n < sniffLines {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		n++
		if line[0] != '{' {
			return FormatSyslog
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(line, &obj) != nil {
			if head == nil {
				cut = true // a cut last line of the head
				continue
			}
			return FormatSyslog
		}
		_, rt := obj["__REALTIME_TIMESTAMP"]
		_, cur := obj["__CURSOR"]
		_, msg := obj["MESSAGE"]
		_, prio := obj["PRIORITY"]
		if rt || cur || msg && prio {
			return FormatJournald
		}
		return FormatJSON
	}
	if cut {
		return FormatJSON
	}
	return FormatSyslog
}

// record is one parsed line.
type record struct {
	ts        time.Time
	host      string
	app       string
	facility  string
	sev       cortex.Severity
	sevGuess  bool // severity read from the text, not a field
	text      string
	meta      map[string]string
	malformed string // parse error
}

// Field names recognized in JSON lines, in order of preference. Dotted
// names are also looked up as nested objects (ECS: {"log":{"level":…}}).
var (
	timeKeys  = []string{"timestamp", "@timestamp", "time", "ts", "datetime", "date", "eventTime", "t"}
	levelKeys = []string{"level", "severity", "log.level", "lvl", "loglevel", "levelname", "level_name", "priority"}
	msgKeys   = []string{"message", "msg", "@message", "log", "text", "event", "body"}
	hostKeys  = []string{"hostname", "host", "host.name", "host.hostname", "_HOSTNAME"}
	appKeys   = []string{"app", "app_name", "appname", "application", "service", "service.name", "program",
		"syslog_identifier", "logger", "logger_name", "component", "name"}
)

// parseJSON reads a JSON log line.
func parseJSON(line []byte) record {
	var obj map[string]any
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil || obj == nil {
		msg := "not a JSON object"
		if err != nil {
			msg = "invalid JSON: " + err.Error()
		}
		return record{malformed: msg, text: string(line)}
	}
	var r record
	if v, ok := lookup(obj, timeKeys); ok {
		r.ts = jsonTime(v)
	}
	if v, ok := lookup(obj, levelKeys); ok {
		r.sev = jsonLevel(v)
	}
	if v, ok := lookup(obj, msgKeys); ok {
		r.text = scalar(v)
	} else {
		r.text = string(line)
	}
	if v, ok := lookup(obj, hostKeys); ok {
		r.host = scalar(v)
	}
	if v, ok := lookup(obj, appKeys); ok {
		r.app = scalar(v)
	}
	if v, ok := lookup(obj, []string{"facility"}); ok {
		r.facility = scalar(v)
	}
	return r
}

// lookup returns the first key present with a non-empty value, trying
// dotted keys both flat and nested.
func lookup(obj map[string]any, keys []string) (any, bool) {
	for _, k := range keys {
		if v, ok := obj[k]; ok && v != nil && v != "" {
			if _, isObj := v.(map[string]any); !isObj {
				return v, true
			}
		}
		if strings.Contains(k, ".") {
			var cur any = obj
			for _, part := range strings.Split(k, ".") {
				m, ok := cur.(map[string]any)
				if !ok {
					cur = nil
					break
				}
				cur = m[part]
			}
			if cur != nil && cur != "" {
				if _, isObj := cur.(map[string]any); !isObj {
					return cur, true
				}
			}
		}
	}
	return nil, false
}

// scalar renders a JSON value as text (objects and arrays as JSON).
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// jsonTime reads a timestamp: RFC 3339 (and the variants ParseTimestamp
// takes) or a Unix epoch in seconds, milliseconds, microseconds or
// nanoseconds (guessed by magnitude).
func jsonTime(v any) time.Time {
	switch x := v.(type) {
	case string:
		if t, err := cortex.ParseTimestamp(x); err == nil {
			return t
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return epochInt(n)
		}
		if f, err := x.Float64(); err == nil {
			return epoch(f)
		}
	}
	return time.Time{}
}

// epochInt converts an integer Unix epoch guessed by magnitude.
func epochInt(n int64) time.Time {
	switch {
	case n <= 0:
		return time.Time{}
	case n > 1e17:
		return time.Unix(0, n).UTC()
	case n > 1e14:
		return time.UnixMicro(n).UTC()
	case n > 1e11:
		return time.UnixMilli(n).UTC()
	}
	return time.Unix(n, 0).UTC()
}

// epoch converts a Unix epoch number guessed by magnitude.
func epoch(f float64) time.Time {
	switch {
	case f <= 0 || math.IsInf(f, 0) || math.IsNaN(f):
		return time.Time{}
	case f > 1e17: // nanoseconds
		return time.Unix(0, int64(f)).UTC()
	case f > 1e14: // microseconds
		return time.UnixMicro(int64(f)).UTC()
	case f > 1e11: // milliseconds
		return time.UnixMilli(int64(f)).UTC()
	}
	sec := math.Floor(f)
	return time.Unix(int64(sec), int64((f-sec)*1e9)).UTC()
}

// jsonLevel maps a level value onto the vocabulary: names (ParseSeverity),
// syslog numbers 0–7, and the numeric levels of pino/bunyan (10 trace … 60
// fatal).
func jsonLevel(v any) cortex.Severity {
	s := scalar(v)
	if sev, err := cortex.ParseSeverity(s); err == nil {
		return sev
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return ""
	}
	switch {
	case n >= 60:
		return cortex.SevCritical
	case n >= 50:
		return cortex.SevError
	case n >= 40:
		return cortex.SevWarning
	case n >= 30:
		return cortex.SevInfo
	case n >= 10:
		return cortex.SevDebug
	}
	return ""
}

// parseJournald reads one line of `journalctl -o json`.
func parseJournald(line []byte) record {
	var obj map[string]any
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	if err := d.Decode(&obj); err != nil || obj == nil {
		msg := "not a JSON object"
		if err != nil {
			msg = "invalid JSON: " + err.Error()
		}
		return record{malformed: msg, text: string(line)}
	}
	str := func(k string) string { return journalString(obj[k]) }
	var r record
	if us, err := strconv.ParseInt(str("__REALTIME_TIMESTAMP"), 10, 64); err == nil && us > 0 {
		r.ts = time.UnixMicro(us).UTC()
	} else if us, err := strconv.ParseInt(str("_SOURCE_REALTIME_TIMESTAMP"), 10, 64); err == nil && us > 0 {
		r.ts = time.UnixMicro(us).UTC()
	}
	r.host = str("_HOSTNAME")
	r.app = str("SYSLOG_IDENTIFIER")
	if r.app == "" {
		r.app = str("_COMM")
	}
	if p, err := strconv.Atoi(str("PRIORITY")); err == nil {
		r.sev = syslogd.SeverityOf(p)
	}
	if f, err := strconv.Atoi(str("SYSLOG_FACILITY")); err == nil {
		r.facility = facilityName(f)
	}
	r.text = str("MESSAGE")
	r.meta = map[string]string{}
	for k, name := range map[string]string{"_SYSTEMD_UNIT": "unit", "_PID": "pid", "_BOOT_ID": "boot_id",
		"__CURSOR": "cursor", "_TRANSPORT": "transport"} {
		if v := str(k); v != "" {
			r.meta[name] = v
		}
	}
	return r
}

// journalString reads a journald field: a string, a number, or an array of
// bytes (journald's encoding of non-UTF-8 values).
func journalString(v any) string {
	switch x := v.(type) {
	case []any:
		b := make([]byte, 0, len(x))
		for _, e := range x {
			n, ok := e.(json.Number)
			if !ok {
				return scalar(v)
			}
			i, err := n.Int64()
			if err != nil || i < 0 || i > 255 {
				return scalar(v)
			}
			b = append(b, byte(i))
		}
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return scalar(v)
}

// facilityName is the keyword of a syslog facility number (go-syslog's
// table).
func facilityName(n int) string {
	if n < 0 || n > 23 {
		return ""
	}
	return common.FacilityKeywords[uint8(n)]
}

// parseSyslogLine reads a syslog text line.
func parseSyslogLine(p *syslogd.Parser, line []byte, ref time.Time) record {
	m := p.Parse(line, ref)
	r := record{ts: m.Timestamp, host: m.Hostname, app: m.AppName, facility: m.Facility, sev: m.Severity, text: m.Text}
	r.meta = map[string]string{}
	if m.Err != nil {
		r.malformed = m.Err.Error()
	}
	if m.Format != "" && m.Err == nil {
		r.meta["format"] = m.Format
	}
	if m.ProcID != "" {
		r.meta["procid"] = m.ProcID
	}
	if m.MsgID != "" {
		r.meta["msgid"] = m.MsgID
	}
	if len(m.StructuredData) > 0 {
		if b, err := json.Marshal(m.StructuredData); err == nil {
			r.meta["structured_data"] = string(b)
		}
	}
	return r
}
