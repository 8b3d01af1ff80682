package transcript

import (
	"github.com/cortexhq/cortex"
)

// A row's text (Entry.Text) is extracted from its record, which the store
// keeps anyway: the SQLite store leaves the text of a long row out and
// reads it again from the record when it is read (StoredText), for the
// rows where that gives back exactly the text ingest extracted
// (TextFromRecord). Derived texts follow the parsers: a change to what a
// parser extracts changes what such rows show (TestStoredTextPinned pins
// the texts of the real corpus so that no such change goes unnoticed).

// MinStoredText is the shortest text a store leaves out: shorter texts
// cost less to keep than to read again.
const MinStoredText = 256

// StoredText returns the text that parsing the stored record raw of agent
// tool on its own gives, for a row named toolName (a tool result learns
// its tool's name from an earlier record, which the row keeps). ok is
// false when the record yields no row on its own, or the agent's records
// are not parsed one by one (Gemini).
func StoredText(tool cortex.Tool, raw []byte, toolName string) (text string, ok bool) {
	var t TextReader
	return t.Text(tool, raw, toolName)
}

// TextReader is StoredText with its parsers (and their buffers) reused
// from call to call; one per goroutine.
type TextReader struct {
	claude *ClaudeParser
	codex  *CodexParser
}

// Text is StoredText.
func (t *TextReader) Text(tool cortex.Tool, raw []byte, toolName string) (text string, ok bool) {
	var res Result
	switch tool {
	case cortex.ToolClaude:
		if t.claude == nil {
			t.claude = NewClaudeParser(FileContext{})
		}
		c := t.claude
		// A fresh parser's state, its JSON parser's buffers kept.
		*c = ClaudeParser{p: c.p, tools: c.tools.reset(), stored: true, toolName: toolName}
		res = c.Parse(raw, 0)
	case cortex.ToolCodex:
		if t.codex == nil {
			t.codex = NewCodexParser(FileContext{}, CodexState{})
		}
		c := t.codex
		*c = CodexParser{p: c.p, argsP: c.argsP, calls: c.calls.reset(), stored: true, toolName: toolName}
		res = c.Parse(raw, 0)
	default:
		return "", false
	}
	if res.Err != nil || res.Skip != "" {
		return "", false
	}
	return res.Entry.Text, true
}

// TextFromRecord reports whether a store may leave the text of row e
// (of agent tool, whose redacted record is raw) out and read it again
// with StoredText: a text of at least MinStoredText bytes that StoredText
// gives back byte for byte. What the user typed always stays (the
// friction lens reads it, and it is small).
func TextFromRecord(tool cortex.Tool, raw []byte, e *cortex.Entry) bool {
	var t TextReader
	return t.FromRecord(tool, raw, e)
}

// FromRecord is TextFromRecord.
func (t *TextReader) FromRecord(tool cortex.Tool, raw []byte, e *cortex.Entry) bool {
	if len(e.Text) < MinStoredText || e.Role == cortex.RoleUser {
		return false
	}
	text, ok := t.Text(tool, raw, e.ToolName)
	return ok && text == e.Text
}
