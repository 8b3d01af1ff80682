package cortex

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Tool names the AI coding agent that wrote a transcript. The values are
// stored in logs.ai_tool.
type Tool string

// The supported agents.
const (
	ToolClaude Tool = "claude"
	ToolCodex  Tool = "codex"
	ToolGemini Tool = "gemini"
)

// Valid reports whether t is one of the supported agents.
func (t Tool) Valid() bool {
	switch t {
	case ToolClaude, ToolCodex, ToolGemini:
		return true
	}
	return false
}

// Tools lists the supported agents in a stable order.
func Tools() []Tool { return []Tool{ToolClaude, ToolCodex, ToolGemini} }

// Role says who or what produced a transcript entry. Detectors rely on it:
// user corrections are only ever read from RoleUser text.
type Role string

// Roles of transcript entries.
const (
	// RoleUser is text a human typed (prompts, slash commands, queued prompts).
	RoleUser Role = "user"
	// RoleAssistant is assistant text shown to the user.
	RoleAssistant Role = "assistant"
	// RoleToolCall is an assistant line that invokes one or more tools.
	RoleToolCall Role = "tool_call"
	// RoleToolResult is the output of a tool call.
	RoleToolResult Role = "tool_result"
	// RoleThinking is model reasoning; it is stored but not full-text indexed.
	RoleThinking Role = "thinking"
	// RoleContext is text injected into the conversation by the harness:
	// AGENTS.md/CLAUDE.md instructions, skill bodies, compaction summaries,
	// attachments, environment context.
	RoleContext Role = "context"
	// RoleHook is a hook run or hook summary.
	RoleHook Role = "hook"
	// RoleSystem is a harness notice: API errors, compaction boundaries,
	// interruptions, informational messages.
	RoleSystem Role = "system"
)

// Roles lists every role in a stable order.
func Roles() []Role {
	return []Role{RoleUser, RoleAssistant, RoleToolCall, RoleToolResult, RoleThinking, RoleContext, RoleHook, RoleSystem}
}

// Entry is one normalized transcript record: what every parser produces and
// what the store keeps as a logs row (next to the redacted original JSON).
type Entry struct {
	Tool Tool
	// Timestamp is the record's time in UTC. When the record carries none (or
	// an invalid one) the parser estimates it and sets TimestampEstimated.
	Timestamp          time.Time
	TimestampEstimated bool
	Role               Role
	// Kind is the record's own type path, e.g. "assistant", "attachment:hook_success",
	// "response_item:function_call", "gemini:gemini".
	Kind string
	// Text is the searchable text (bounded; see the transcript package).
	Text string
	// TextTruncated is set when Text was cut to its bound.
	TextTruncated bool
	// ToolName is the (first) tool invoked or answered by this record.
	ToolName string
	// IsError marks failed tool results, API errors and failed hooks.
	IsError   bool
	SessionID string
	// Project is the working directory / repository the session ran in.
	Project string
	// RecordKey identifies the record inside its transcript file; it is the
	// idempotency key of the import ledger.
	RecordKey string
	// AgentID names the subagent that wrote the record ("" for the main thread).
	AgentID string
	// Sidechain is set for subagent records.
	Sidechain bool
	// ToolVersion is the agent's CLI version when the record states it.
	ToolVersion string
	// Model is the model that produced an assistant record, when stated.
	Model string
	// Severity of the record (info unless the record reports a failure).
	Severity Severity
	// Meta holds small parser-specific extras (ids, subtypes) for metadata_json.
	Meta map[string]string
}

// MetadataJSON renders the entry's extras as the JSON object stored in
// logs.metadata_json: the parser's Meta plus version, model and flags, with
// keys in a stable order.
func (e *Entry) MetadataJSON() string {
	var b strings.Builder
	b.Grow(128)
	b.WriteByte('{')
	n := 0
	key := func(k string) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		quoteTo(&b, k, strconv.Quote)
		b.WriteByte(':')
	}
	field := func(k string, raw string) {
		key(k)
		b.WriteString(raw)
	}
	keys := make([]string, 0, len(e.Meta)+2)
	for k := range e.Meta {
		keys = append(keys, k)
	}
	if e.ToolVersion != "" && e.Meta["version"] == "" {
		keys = append(keys, "version")
	}
	if e.Model != "" && e.Meta["model"] == "" {
		keys = append(keys, "model")
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := e.Meta[k]
		if !ok {
			switch k {
			case "version":
				v = e.ToolVersion
			case "model":
				v = e.Model
			}
		}
		key(k)
		quoteTo(&b, v, jsonString)
	}
	if e.Sidechain {
		field("sidechain", "true")
	}
	if e.TimestampEstimated {
		field("timestamp_estimated", "true")
	}
	if e.TextTruncated {
		field("text_truncated", "true")
	}
	b.WriteByte('}')
	return b.String()
}

// quoteTo writes s quoted: as is between quotes when it is plain ASCII,
// else as quote writes it.
func quoteTo(b *strings.Builder, s string, quote func(string) string) {
	if plainASCII(s) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	b.WriteString(quote(s))
}

// plainASCII reports whether s is printable ASCII that both
// strconv.Quote and encoding/json write as is between quotes: no '"',
// '\\', and none of the '<', '>', '&' that encoding/json escapes.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	out, err := json.Marshal(s)
	if err != nil {
		return `""`
	}
	return string(out)
}
