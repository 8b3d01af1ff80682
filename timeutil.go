package cortex

import (
	"strconv"
	"strings"
	"time"
)

// TimeLayout is the one stored timestamp format: RFC 3339, UTC, milliseconds,
// "Z". Time filters compare these strings lexicographically, so every writer
// must use FormatTime.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime renders t in TimeLayout (UTC).
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTimestamp parses a timestamp as found in transcripts and log records:
// RFC 3339 with any fractional precision and offset, a space instead of "T",
// or Unix epoch seconds/milliseconds given as a number string.
func ParseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, Errorf(CodeInvalid, "empty timestamp")
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if len(s) > 10 && s[10] == ' ' {
		if t, err := time.Parse(time.RFC3339Nano, s[:10]+"T"+s[11:]); err == nil {
			return t.UTC(), nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
		return epochTime(n), nil
	}
	return time.Time{}, Errorf(CodeInvalid, "invalid timestamp %q", truncateForMessage(s, 64))
}

// EpochTime converts a Unix epoch number in seconds or milliseconds (guessed
// by magnitude) to UTC time.
func epochTime(n float64) time.Time {
	if n > 1e12 { // milliseconds
		return time.UnixMilli(int64(n)).UTC()
	}
	sec := int64(n)
	return time.Unix(sec, int64((n-float64(sec))*1e9)).UTC()
}

// ParseTimeArg parses a user-supplied time bound as every surface accepts
// it: a duration back from now ("90s", "30m", "2h", "7d", "2w"), "now",
// "today", "yesterday", a date ("2026-11-30"), a date and time
// ("2026-11-30 14:05") or RFC 3339. Dates are UTC.
func ParseTimeArg(s string, now time.Time) (time.Time, error) {
	v := strings.TrimSpace(strings.ToLower(s))
	now = now.UTC()
	switch v {
	case "":
		return time.Time{}, Errorf(CodeInvalid, "empty time value")
	case "now":
		return now, nil
	case "today":
		return now.Truncate(24 * time.Hour), nil
	case "yesterday":
		return now.Truncate(24*time.Hour).AddDate(0, 0, -1), nil
	}
	if d, ok := parseRelative(v); ok {
		return now.Add(-d), nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.UTC(), nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s)); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, Errorf(CodeInvalid,
		"invalid time %q: use a duration like 30m, 7d, 2w, or now, today, yesterday, a date (2026-11-30), a date and time (2026-11-30 14:05) or RFC 3339", truncateForMessage(s, 64))
}

func parseRelative(v string) (time.Duration, bool) {
	if len(v) < 2 {
		return 0, false
	}
	unit := v[len(v)-1]
	n, err := strconv.ParseFloat(v[:len(v)-1], 64)
	if err != nil || n < 0 || n > 1e6 {
		return 0, false
	}
	var d time.Duration
	switch unit {
	case 's':
		d = time.Second
	case 'm':
		d = time.Minute
	case 'h':
		d = time.Hour
	case 'd':
		d = 24 * time.Hour
	case 'w':
		d = 7 * 24 * time.Hour
	default:
		return 0, false
	}
	return time.Duration(n * float64(d)), true
}

func truncateForMessage(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
