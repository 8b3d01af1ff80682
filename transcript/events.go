package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// Event bounds. Previews are evidence, not archives: the full record stays
// in the stored raw JSON.
const (
	// MaxEventText bounds ArgumentsJSON, OutputPreview, ErrorText, hook
	// commands and hook stdout/stderr previews (bytes, cut on a UTF-8
	// boundary).
	MaxEventText = 2 << 10
	// MaxEventArgs bounds ArgumentsJSON and MaxEventOutput a successful
	// call's OutputPreview: the full text is one join away (the result's
	// logs row), and failures keep MaxEventText with head and tail.
	MaxEventArgs   = 1 << 10
	MaxEventOutput = 512
	// MaxSkillField bounds skill names, plugins and small metadata values.
	MaxSkillField = 256
	// maxEventName bounds tool names, call ids and hook names.
	maxEventName = 256
	// maxSkillPath bounds a skill path.
	maxSkillPath = 1 << 10
)

// ExtractEvents returns the events of one stored record: tool is the agent, e the record's Entry (its Kind, Role
// and Meta["turn_id"] give context; all of these are stored on the logs row, so backfill can rebuild e), raw the
// record's JSON exactly as stored (already secret-redacted by the caller). Pure and deterministic.
//
// The parsers fill Result.Events with exactly what ExtractEvents returns for
// the stored record (they share extractEvents and skip the second JSON
// parse). Extraction reads only tool, e.Kind, e.Role, e.Meta["turn_id"] and
// raw — never parser state or other records — so a backfill from stored rows
// reproduces the events of an ingest that extracted them.
func ExtractEvents(tool cortex.Tool, e *cortex.Entry, raw []byte) (cortex.Events, error) {
	if !tool.Valid() {
		return cortex.Events{}, fmt.Errorf("unknown agent %q", tool)
	}
	var p fastjson.Parser
	v, err := p.ParseBytes(raw)
	if err != nil {
		return cortex.Events{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if v.Type() != fastjson.TypeObject {
		return cortex.Events{}, fmt.Errorf("record is a JSON %s, not an object", v.Type())
	}
	return extractEvents(tool, e, v), nil
}

// extractEvents is the one extraction both ExtractEvents and the parsers
// run, on the record's parsed value. It must read JSON values only through
// their logical content (str, jsonText, …), never through fastjson's
// MarshalTo, whose output depends on which strings were read before.
func extractEvents(tool cortex.Tool, e *cortex.Entry, v *fastjson.Value) cortex.Events {
	if e == nil {
		e = &cortex.Entry{}
	}
	var ev cortex.Events
	switch tool {
	case cortex.ToolClaude:
		claudeEvents(&ev, e, v)
		claudeUserEvents(&ev, e, v)
	case cortex.ToolCodex:
		codexEvents(&ev, e, v)
		codexUserEvents(&ev, e, v)
	case cortex.ToolGemini:
		geminiEvents(&ev, e, v)
		geminiUserEvents(&ev, e, v)
	}
	return ev
}

// NormalizeSkill normalizes a skill name and plugin as stored in
// ai_skill_events: both are trimmed; an empty name or a control character
// in either rejects the pair (ok=false). A name of the form "plugin:skill"
// with a non-empty plugin and skill part and no separate plugin sets the
// plugin and keeps the full name; a name without a colon is never
// combined with a separately given plugin. Both are clamped to
// MaxSkillField bytes on a UTF-8 boundary; invalid UTF-8 becomes U+FFFD.
func NormalizeSkill(name, plugin string) (skillName, skillPlugin string, ok bool) {
	name = strings.TrimSpace(name)
	plugin = strings.TrimSpace(plugin)
	if name == "" || hasControl(name) || hasControl(plugin) {
		return "", "", false
	}
	name = strings.ToValidUTF8(name, "\uFFFD")
	plugin = strings.ToValidUTF8(plugin, "\uFFFD")
	if plugin == "" {
		if p, s, found := strings.Cut(name, ":"); found && strings.TrimSpace(p) != "" && strings.TrimSpace(s) != "" {
			plugin = strings.TrimSpace(p)
		}
	}
	return strings.TrimSpace(cortex.CutUTF8(name, MaxSkillField)), strings.TrimSpace(cortex.CutUTF8(plugin, MaxSkillField)), true
}

// hasControl reports whether s holds a control character (C0, DEL, C1).
func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// SplitMCPName splits an MCP tool name "mcp__<server>__<tool>" into its
// server (up to the first "__" after the prefix) and tool (the rest). ok is
// false for names of any other shape (builtin tools).
func SplitMCPName(name string) (server, tool string, ok bool) {
	rest, found := strings.CutPrefix(name, "mcp__")
	if !found {
		return "", "", false
	}
	server, tool, _ = strings.Cut(rest, "__")
	if server == "" {
		return "", "", false
	}
	return server, tool, true
}

// mcpName is the name an agent shows for tool of an MCP server named
// separately (Claude's mcp_tool_use, Codex's mcp_tool_call_end):
// mcp__<server>__<tool>. A server that cannot be read back from that
// shape — none, or one containing "__" — names no MCP server: the call
// keeps its bare tool name, so a call is never classified MCP without a
// server.
func mcpName(server, tool string) string {
	name := "mcp__" + server + "__" + tool
	if s, _, ok := SplitMCPName(name); !ok || s != server {
		return tool
	}
	return name
}

// toolEvent returns a tool event named name with the MCP server and tool
// split off when the name has the MCP shape.
func toolEvent(kind, callID, name string) cortex.ToolEvent {
	t := cortex.ToolEvent{EventKind: kind, CallID: cortex.CutUTF8(callID, maxEventName), ToolName: cortex.CutUTF8(name, maxEventName)}
	t.MCPServer, t.MCPTool, _ = SplitMCPName(t.ToolName)
	return t
}

// turnID is the turn of an event: the payload's own, else the entry's.
func turnID(e *cortex.Entry, own ...string) string {
	for _, t := range own {
		if t != "" {
			return cortex.CutUTF8(t, maxEventName)
		}
	}
	return cortex.CutUTF8(e.Meta["turn_id"], maxEventName)
}

// setArguments stores the bounded arguments JSON.
func setArguments(t *cortex.ToolEvent, js string, truncated bool) {
	if len(js) > MaxEventArgs {
		js, truncated = cortex.CutUTF8(js, MaxEventArgs), true
	}
	t.ArgumentsJSON = js
	if truncated {
		putMeta(&t.Meta, "arguments_truncated", "true")
	}
}

// setResult fills the result side of a tool event: its status, error flag
// and bounded output (OutputPreview, or ErrorText keeping head and tail).
func setResult[T string | []byte](t *cortex.ToolEvent, status string, isError *bool, body T) {
	t.HasResult = true
	t.Status = status
	t.IsError = isError
	if status == cortex.CallError {
		var cut bool
		if t.ErrorText, cut = preview(body, MaxEventText, true); cut {
			putMeta(&t.Meta, "error_truncated", "true")
		}
		return
	}
	var cut bool
	if t.OutputPreview, cut = preview(body, MaxEventOutput, false); cut {
		putMeta(&t.Meta, "output_truncated", "true")
	}
}

// boolPtr returns a pointer to a copy of b.
func boolPtr(b bool) *bool { return &b }

// intPtr returns a pointer to n as an int, or nil when it does not fit.
func intPtr(n int64) *int {
	if int64(int(n)) != n {
		return nil
	}
	i := int(n)
	return &i
}

// preview bounds text to max bytes of clean UTF-8 (see clean): its head,
// or with keepTail its head and tail around an omission marker (errors
// usually end with the message that matters). Only the bytes kept are
// copied, so a large tool output is never copied whole. cut reports that
// text was left out.
func preview[T string | []byte](b T, max int, keepTail bool) (s string, cut bool) {
	if len(b) <= max {
		if s = clean(string(b)); len(s) <= max {
			return s, false
		}
		return preview(s, max, keepTail) // invalid UTF-8 grew when replaced
	}
	if !keepTail {
		return cortex.CutUTF8(clean(string(b[:runeFloor(b, max)])), max), true
	}
	// The marker is at most 46 bytes ("\n[… " + 20 digits + " bytes
	// omitted …]\n").
	room := max - 64
	head, tail := room*3/4, room-room*3/4
	h := cortex.CutUTF8(clean(string(b[:runeFloor(b, head)])), head)
	i := len(b) - tail
	for i < len(b) && !utf8.RuneStart(b[i]) {
		i++
	}
	tl := tailUTF8(clean(string(b[i:])), tail)
	return cortex.CutUTF8(fmt.Sprintf("%s\n[… %d bytes omitted …]\n%s", h, len(b)-len(h)-len(tl), tl), max), true
}

// runeFloor is the largest n <= max (and < len(b)) at which b can be cut
// without splitting a rune.
func runeFloor[T string | []byte](b T, max int) int {
	n := max
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// sha256Hex is the lowercase hex SHA-256 of s.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// valueText renders a JSON value as text from its logical content: strings
// as themselves, arrays of strings joined by newlines, anything else as
// compact JSON (jsonText).
func valueText(v *fastjson.Value, max int) string {
	if v == nil {
		return ""
	}
	switch v.Type() {
	case fastjson.TypeString:
		return clean(string(v.GetStringBytes()))
	case fastjson.TypeArray:
		parts := arr(v)
		var b strings.Builder
		for i, p := range parts {
			if p.Type() != fastjson.TypeString {
				s, _ := jsonText(v, max)
				return s
			}
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(clean(string(p.GetStringBytes())))
			if b.Len() > max {
				break
			}
		}
		return b.String()
	}
	s, _ := jsonText(v, max)
	return s
}

// jsonText renders v as compact JSON from its logical content (keys and
// strings re-escaped the encoding/json way, numbers as written), stopping
// once the output passes max bytes. truncated reports that it did; the
// output is then cut on a UTF-8 boundary and need not be valid JSON.
//
// fastjson's own MarshalTo is not used: it writes strings that were never
// read in their original escaped form and strings that were read with Go
// quoting, so its output depends on what was read before.
func jsonText(v *fastjson.Value, max int) (string, bool) {
	w := jsonWriter{b: make([]byte, 0, min(max, 511)+1), max: max}
	w.value(v)
	if w.full {
		return cortex.CutUTF8(clean(string(w.b)), max), true
	}
	return string(w.b), false
}

// jsonWriter appends compact JSON up to a budget.
type jsonWriter struct {
	b    []byte
	max  int
	full bool
}

func (w *jsonWriter) value(v *fastjson.Value) {
	if w.full {
		return
	}
	if len(w.b) > w.max {
		w.full = true
		return
	}
	switch v.Type() {
	case fastjson.TypeObject:
		w.b = append(w.b, '{')
		n := 0
		v.GetObject().Visit(func(k []byte, x *fastjson.Value) {
			if w.full {
				return
			}
			if n > 0 {
				w.b = append(w.b, ',')
			}
			n++
			w.str(k)
			w.b = append(w.b, ':')
			w.value(x)
		})
		w.b = append(w.b, '}')
	case fastjson.TypeArray:
		w.b = append(w.b, '[')
		for i, x := range arr(v) {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.value(x)
			if w.full {
				break
			}
		}
		w.b = append(w.b, ']')
	case fastjson.TypeString:
		w.str(v.GetStringBytes())
	case fastjson.TypeNumber:
		w.b = v.MarshalTo(w.b) // numbers are kept as written
	case fastjson.TypeTrue:
		w.b = append(w.b, "true"...)
	case fastjson.TypeFalse:
		w.b = append(w.b, "false"...)
	default:
		w.b = append(w.b, "null"...)
	}
	if len(w.b) > w.max {
		w.full = true
	}
}

const hexDigits = "0123456789abcdef"

// str appends s as a JSON string: invalid UTF-8 becomes U+FFFD, control
// characters are escaped. Escaping only grows the text, so no more of s
// than the budget left is read.
func (w *jsonWriter) str(s []byte) {
	if room := w.max - len(w.b); len(s) > room {
		// With the opening quote, room bytes pass the budget.
		s = s[:max(room, 0)]
		w.full = true
	}
	w.b = append(w.b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			if r, size := utf8.DecodeRune(s[i:]); r != utf8.RuneError || size > 1 {
				i += size
				continue
			}
		}
		w.b = append(w.b, s[start:i]...)
		switch {
		case c >= utf8.RuneSelf:
			w.b = append(w.b, "\uFFFD"...)
		case c == '"' || c == '\\':
			w.b = append(w.b, '\\', c)
		case c == '\n':
			w.b = append(w.b, '\\', 'n')
		case c == '\r':
			w.b = append(w.b, '\\', 'r')
		case c == '\t':
			w.b = append(w.b, '\\', 't')
		default:
			w.b = append(w.b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	w.b = append(w.b, s[start:]...)
	if !w.full {
		w.b = append(w.b, '"')
	}
}
