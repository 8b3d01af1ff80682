// Package transcript turns AI coding-agent transcript records (Claude Code
// JSONL, Codex rollout JSONL, Gemini CLI chat JSON/JSONL) into normalized
// cortex.Entry values. It is pure: no I/O beyond the readers it is handed,
// no clock, no database. One record in, one Result out.
package transcript

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
)

// Format identifies a transcript file format.
type Format string

// Supported formats.
const (
	FormatClaude      Format = "claude"       // Claude Code session JSONL
	FormatCodex       Format = "codex"        // Codex CLI / Desktop rollout JSONL
	FormatGeminiJSON  Format = "gemini-json"  // Gemini CLI chat file, one JSON document
	FormatGeminiJSONL Format = "gemini-jsonl" // newer Gemini CLI chat JSONL with $set/$rewindTo
)

// Tool is the agent that writes files of this format.
func (f Format) Tool() cortex.Tool {
	switch f {
	case FormatCodex:
		return cortex.ToolCodex
	case FormatGeminiJSON, FormatGeminiJSONL:
		return cortex.ToolGemini
	}
	return cortex.ToolClaude
}

// Skip reasons: records that are understood but deliberately not stored.
const (
	// SkipBookkeeping marks harness bookkeeping with no conversational
	// content (snapshots, token counts, mode switches, titles).
	SkipBookkeeping = "bookkeeping"
	// SkipDuplicate marks a record that repeats content already stored from
	// an earlier record of the same file (Codex writes typed prompts twice).
	SkipDuplicate = "duplicate"
	// SkipUnknownType marks a record type this version of Cortex does not
	// know. Such records are counted per agent version.
	SkipUnknownType = "unknown_type"
	// SkipEmpty marks a record without content.
	SkipEmpty = "empty"
	// SkipSummary marks a session summary: not a row of its own, but the
	// title of the session of its leaf message (Result.Summary).
	SkipSummary = "summary"
)

// Result is the outcome of parsing one record.
type Result struct {
	// Entry is the normalized record (valid when Skip == "" and Err == nil).
	Entry cortex.Entry
	// Raw is the record's original JSON. For JSONL formats it aliases the
	// line buffer and is only valid until the next line is read.
	Raw []byte
	// Skip, when set, says why the record is not stored.
	Skip string
	// Type is the record's type path (also for skipped records), used for
	// unknown-type counters.
	Type string
	// Version is the agent version stated by or inherited for this record.
	Version string
	// Err is set when the record could not be parsed; the rest of the file
	// is unaffected.
	Err error
	// Warn notes a problem with a record that is still stored (for example
	// an invalid timestamp replaced by an estimate).
	Warn string
	// Line is the 1-based physical line (or message index for JSON documents).
	Line int64
	// Events are the record's normalized skill, tool-call and hook events
	// (see ExtractEvents).
	Events cortex.Events
	// Usage is the token usage the record reports (also set on skipped
	// records: Codex token_count events are bookkeeping, not rows).
	Usage *cortex.TokenUsage
	// Summary is a session summary (Claude `summary` records, which are
	// skipped as rows: they belong to the session of their leaf message).
	Summary *cortex.SessionSummary
}

// ErrTruncated is returned for a final line that is not (yet) complete JSON:
// the writer may still be appending to it.
var ErrTruncated = errors.New("incomplete trailing record")

// Text bounds. Full content always stays in the stored raw JSON; these bound
// what is full-text indexed, because FTS5 indexing dominates ingest cost.
const (
	MaxUserText       = 32 << 10
	MaxAssistantText  = 16 << 10
	MaxToolInputText  = 1 << 10
	MaxToolOutputHead = 2 << 10
	MaxToolOutputTail = 512
	MaxErrorHead      = 6 << 10
	MaxErrorTail      = 2 << 10
	MaxContextText    = 2 << 10
	MaxHookText       = 2 << 10
)

// textBuilder joins text parts with blank-line separators under an overall
// bound.
type textBuilder struct {
	sb        strings.Builder
	max       int
	truncated bool
}

func newText(max int) *textBuilder { return &textBuilder{max: max} }

func (b *textBuilder) add(s string) {
	s = strings.TrimSpace(clean(s))
	if s == "" {
		return
	}
	if b.sb.Len() > 0 {
		if b.sb.Len()+2 >= b.max {
			b.truncated = true
			return
		}
		b.sb.WriteString("\n\n")
	}
	room := b.max - b.sb.Len()
	if len(s) > room {
		s = cortex.CutUTF8(s, room)
		b.truncated = true
	}
	b.sb.WriteString(s)
}

func (b *textBuilder) String() string { return b.sb.String() }

// tailUTF8 returns the longest suffix of s of at most n bytes that starts on
// a rune boundary.
func tailUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// headTail bounds s to head bytes from its start plus tail bytes from its
// end, with a marker saying how much was left out. Errors usually sit at
// the end of command output, so both ends stay searchable.
func headTail(s string, head, tail int) (string, bool) {
	if len(s) <= head+tail+64 {
		return s, false
	}
	h := cortex.CutUTF8(s, head)
	t := tailUTF8(s, tail)
	return fmt.Sprintf("%s\n[… %d bytes omitted …]\n%s", h, len(s)-len(h)-len(t), t), true
}

// clean makes text safe to index: valid UTF-8, no NUL bytes.
func clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s
}
