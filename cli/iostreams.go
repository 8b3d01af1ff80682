package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
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
}

// System returns streams bound to the process's stdio.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
}

// ColorEnabled reports whether Out takes colour: a terminal, and NO_COLOR
// (no-color.org) unset.
func (s *IOStreams) ColorEnabled() bool { return s.StdoutTTY && os.Getenv("NO_COLOR") == "" }

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
