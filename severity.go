package cortex

import (
	"fmt"
	"strings"
)

// Severity is the one severity vocabulary of Cortex: the eight syslog
// levels, stored by their short syslog names. Every writer stores these
// values and every reader filters with them, so "nearby errors" queries and
// stored rows always agree.
type Severity string

// The eight syslog severities, most severe first.
const (
	SevEmergency Severity = "emerg"
	SevAlert     Severity = "alert"
	SevCritical  Severity = "crit"
	SevError     Severity = "err"
	SevWarning   Severity = "warning"
	SevNotice    Severity = "notice"
	SevInfo      Severity = "info"
	SevDebug     Severity = "debug"
)

var severityOrder = [...]Severity{SevEmergency, SevAlert, SevCritical, SevError, SevWarning, SevNotice, SevInfo, SevDebug}

// Severities lists the vocabulary, most severe first.
func Severities() []Severity { return append([]Severity(nil), severityOrder[:]...) }

// Level is the syslog numeric level (0 = emerg … 7 = debug), or -1 when s is
// not part of the vocabulary.
func (s Severity) Level() int {
	for i, v := range severityOrder {
		if v == s {
			return i
		}
	}
	return -1
}

// AtLeast reports whether s is as severe as min or more.
func (s Severity) AtLeast(min Severity) bool {
	l := s.Level()
	return l >= 0 && l <= min.Level()
}

// ErrorSeverities are the levels counted as errors by evidence bundles
// ("nearby errors"): err and anything more severe.
func ErrorSeverities() []Severity { return severityOrder[:4:4] }

// ParseSeverity maps the spellings found in the wild (syslog names, full
// words, common log-level names, numeric levels) to the vocabulary.
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "emerg", "emergency", "panic", "0":
		return SevEmergency, nil
	case "alert", "1":
		return SevAlert, nil
	case "crit", "critical", "fatal", "2":
		return SevCritical, nil
	case "err", "error", "3":
		return SevError, nil
	case "warning", "warn", "4":
		return SevWarning, nil
	case "notice", "5":
		return SevNotice, nil
	case "info", "information", "informational", "6":
		return SevInfo, nil
	case "debug", "trace", "7":
		return SevDebug, nil
	}
	return "", Errorf(CodeInvalid, "unknown severity %q (use one of emerg, alert, crit, err, warning, notice, info, debug)", s)
}

// String implements fmt.Stringer.
func (s Severity) String() string { return string(s) }

var _ fmt.Stringer = SevInfo
