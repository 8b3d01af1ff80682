package syslogd

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"

	syslog "github.com/leodido/go-syslog/v4"
	"github.com/leodido/go-syslog/v4/auto"
	"github.com/leodido/go-syslog/v4/rfc3164"
	"github.com/leodido/go-syslog/v4/rfc5424"

	"github.com/cortexhq/cortex"
)

// Formats of parsed messages (Message.Format).
const (
	FormatRFC5424 = "rfc5424"
	FormatRFC3164 = "rfc3164"
)

// Message is one syslog message as parsed by go-syslog: RFC 5424 or RFC
// 3164 (BSD), detected per message. A message that does not parse is
// still a Message: Err says why, Text is the whole input, and only a PRI
// that was certainly read is kept.
type Message struct {
	Format string
	// Timestamp is the message's time (zero when it states none). RFC 3164
	// stamps carry no year and no zone: see Parser.
	Timestamp time.Time
	Hostname  string
	AppName   string
	ProcID    string
	MsgID     string
	// Facility is the facility keyword (kern, user, daemon, local0 …).
	Facility string
	// Severity is the PRI's severity in the one vocabulary; empty without
	// a PRI (plain log-file lines): see SeverityFromText.
	Severity cortex.Severity
	Text     string
	// StructuredData is RFC 5424 structured data, by SD-ID.
	StructuredData map[string]map[string]string
	// Err is the parse error of a malformed message.
	Err error
}

// Parser parses syslog messages. It is not safe for concurrent use: give
// each goroutine its own.
type Parser struct {
	m   syslog.Machine
	loc *time.Location
}

// NewParser returns a parser that accepts RFC 5424 and RFC 3164 messages,
// with or without PRI (log files carry none), RFC 3339 stamps in RFC 3164
// messages and zero-padded days. RFC 3164 stamps are read in loc (nil:
// UTC).
func NewParser(loc *time.Location) *Parser {
	if loc == nil {
		loc = time.UTC
	}
	m := auto.NewMachine(
		auto.WithRFC3164Options(rfc3164.WithRFC3339(), rfc3164.WithLenientDay(), rfc3164.WithSecondFractions(),
			rfc3164.WithOptionalPriority(), rfc3164.WithLocaleTimezone(loc)),
		auto.WithRFC5424Options(rfc5424.WithOptionalPriority()),
	)
	m.WithBestEffort()
	return &Parser{m: m, loc: loc}
}

// Parse parses one message (without framing or trailing newline). ref is
// the time the message was received (or, for files, written): RFC 3164
// stamps take its year, or the year before when that would put them more
// than two days after ref.
func (p *Parser) Parse(data []byte, ref time.Time) Message {
	msg, err := p.m.Parse(data)
	var out Message
	var base *syslog.Base
	switch m := msg.(type) {
	case *rfc5424.SyslogMessage:
		out.Format, base = FormatRFC5424, &m.Base
		if err == nil && m.StructuredData != nil && len(*m.StructuredData) > 0 {
			out.StructuredData = *m.StructuredData
		}
	case *rfc3164.SyslogMessage:
		out.Format, base = FormatRFC3164, &m.Base
	}
	if err != nil || base == nil {
		if err == nil {
			err = errUnknownMessage
		}
		out.Err = err
		out.Text = string(data)
		// Best effort: a PRI read before the error is kept when the input
		// really starts with it (partial parses can misread it).
		if base != nil && base.Priority != nil && strings.HasPrefix(out.Text, "<"+strconv.Itoa(int(*base.Priority))+">") {
			out.Facility, out.Severity = facilityOf(base), severityOf(base)
		}
		return out
	}
	if base.Timestamp != nil {
		out.Timestamp = fixYear(*base.Timestamp, ref)
	}
	out.Hostname = deref(base.Hostname)
	out.AppName = deref(base.Appname)
	out.ProcID = deref(base.ProcID)
	out.MsgID = deref(base.MsgID)
	out.Facility, out.Severity = facilityOf(base), severityOf(base)
	out.Text = strings.TrimRight(deref(base.Message), "\r\n")
	return out
}

type parseError string

// Error implements error.
func (e parseError) Error() string { return string(e) }

const errUnknownMessage = parseError("not a syslog message")

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func facilityOf(b *syslog.Base) string {
	if f := b.FacilityLevel(); f != nil {
		return *f
	}
	return ""
}

func severityOf(b *syslog.Base) cortex.Severity {
	if b.Severity == nil {
		return ""
	}
	return SeverityOf(int(*b.Severity))
}

// SeverityOf maps a syslog severity number (0 emerg … 7 debug) to the
// vocabulary; out-of-range numbers are "".
func SeverityOf(n int) cortex.Severity {
	s := cortex.Severities()
	if n < 0 || n >= len(s) {
		return ""
	}
	return s[n]
}

// fixYear gives an RFC 3164 stamp (parsed as year 0) the year of ref, or
// the year before when the stamp would lie more than two days after ref
// (a December message read in January).
func fixYear(t, ref time.Time) time.Time {
	if t.Year() != 0 {
		return t.UTC()
	}
	if ref.IsZero() {
		ref = time.Now()
	}
	ref = ref.In(t.Location())
	y := time.Date(ref.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), t.Location())
	if y.After(ref.Add(48 * time.Hour)) {
		y = y.AddDate(-1, 0, 0)
	}
	return y.UTC()
}

// SeverityFromText guesses the severity of a line without PRI from a level
// word at its start ("ERROR: …", "[warn] …", "level=error …", "E …" is
// not taken). ok is false when there is none.
func SeverityFromText(text string) (cortex.Severity, bool) {
	t := strings.TrimLeft(text, " \t[<(")
	keyed := false
	for _, k := range []string{"level=", "severity=", "lvl="} {
		if rest, ok := strings.CutPrefix(t, k); ok {
			t, keyed = strings.TrimLeft(rest, "\""), true
			break
		}
	}
	end := strings.IndexFunc(t, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(t)
	}
	word := t[:end]
	if len(word) < 3 || len(word) > 13 {
		return "", false
	}
	// A level word stands alone: followed by a separator, not more text
	// ("Error:" yes, "Errors were…" no).
	if end < len(t) && !strings.ContainsRune(" :]>)\"|,", rune(t[end])) {
		return "", false
	}
	if !keyed && (end == len(t) || t[end] == ' ') {
		// A bare capitalized word is prose ("Notice how…"): only
		// upper-case level words count without punctuation.
		if strings.ToUpper(word) != word {
			return "", false
		}
	}
	s, err := cortex.ParseSeverity(word)
	if err != nil {
		return "", false
	}
	return s, true
}

// Meta renders the message's extras (format, procid, msgid, structured
// data, parse error) plus extra pairs as the metadata_json object.
func (m *Message) Meta(extra map[string]string) string {
	kv := make(map[string]string, 6+len(extra))
	if m.Format != "" {
		kv["format"] = m.Format
	}
	if m.ProcID != "" {
		kv["procid"] = m.ProcID
	}
	if m.MsgID != "" {
		kv["msgid"] = m.MsgID
	}
	if len(m.StructuredData) > 0 {
		if b, err := json.Marshal(m.StructuredData); err == nil {
			kv["structured_data"] = string(b)
		}
	}
	if m.Err != nil {
		kv["parse_error"] = m.Err.Error()
	}
	for k, v := range extra {
		kv[k] = v
	}
	if len(kv) == 0 {
		return ""
	}
	b, err := json.Marshal(kv)
	if err != nil {
		return ""
	}
	return string(b)
}
