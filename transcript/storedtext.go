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
	var res Result
	switch tool {
	case cortex.ToolClaude:
		c := NewClaudeParser(FileContext{})
		c.stored, c.toolName = true, toolName
		res = c.Parse(raw, 0)
	case cortex.ToolCodex:
		c := NewCodexParser(FileContext{}, CodexState{})
		c.stored, c.toolName = true, toolName
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
	if len(e.Text) < MinStoredText || e.Role == cortex.RoleUser {
		return false
	}
	text, ok := StoredText(tool, raw, e.ToolName)
	return ok && text == e.Text
}
