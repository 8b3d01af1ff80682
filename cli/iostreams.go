package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/term"

	"github.com/cortexhq/cortex"
)

// IOStreams is the one output abstraction of the CLI: commands never touch
// os.Stdout directly, so tests drive them with buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// StdoutTTY and StderrTTY say whether the streams are terminals
	// (progress bars and colour only then).
	StdoutTTY bool
	StderrTTY bool
	// Width is the terminal width in columns (0: not a terminal, no
	// fitting); NoColor turns colour off (NO_COLOR, TERM=dumb).
	Width   int
	NoColor bool
}

// System returns streams bound to the process's stdio.
func System() *IOStreams {
	s := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
	if s.StdoutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			s.Width = w
		}
	}
	if v, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && v > 0 {
		s.Width = v
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	s.NoColor = noColor || os.Getenv("TERM") == "dumb"
	return s
}

// TerminalWidth is the width tables fit (0: unlimited).
func (s *IOStreams) TerminalWidth() int { return s.Width }

// Color reports whether output may be coloured: stdout is a terminal and
// NO_COLOR is not set.
func (s *IOStreams) Color() bool { return s.StdoutTTY && !s.NoColor }

// Bold renders a header in bold when colour is on.
func (s *IOStreams) Bold(text string) string {
	if !s.Color() {
		return text
	}
	return ansi("1", text)
}

// WriteJSON writes v as indented JSON.
func (s *IOStreams) WriteJSON(v any) error {
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Printf writes to Out.
func (s *IOStreams) Printf(format string, args ...any) {
	fmt.Fprintf(s.Out, format, args...)
}

// Safe strips control characters (ANSI escapes, carriage returns) from
// untrusted text before it reaches a terminal; newlines and tabs stay.
func Safe(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return (unicode.IsControl(r) && r != '\n' && r != '\t') || r == '\u2028' || r == '\u2029'
	}) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case unicode.IsControl(r), r == '\u2028', r == '\u2029':
			return -1
		}
		return r
	}, s)
}

// OneLine makes untrusted text safe for a single table cell.
func OneLine(s string, max int) string {
	s = strings.Join(strings.Fields(Safe(s)), " ")
	if max > 0 && len(s) > max {
		s = cortex.CutUTF8(s, max) + "…"
	}
	return s
}
