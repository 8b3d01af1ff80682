package store

import (
	"slices"

	"github.com/cortexhq/cortex"
)

// Content is how much text a push sends to a team store.
type Content string

// Content levels.
const (
	// ContentFull sends every row as stored: texts and the original
	// records (secret-redacted at ingest).
	ContentFull Content = "full"
	// ContentRedacted sends the texts redacted again with this binary's
	// rules, without the original records.
	ContentRedacted Content = "redacted"
	// ContentNone sends no text: counts, ids, names, statuses and
	// timestamps only.
	ContentNone Content = "none"
)

// Valid reports whether c is a content level.
func (c Content) Valid() bool { return c == ContentFull || c == ContentRedacted || c == ContentNone }

// Table describes a table a push copies row by row: its columns as both
// stores name them (the first is the row id), which of them hold row ids of
// the pushing store (renumbered on the team store), which hold text, and
// which metadata keys do.
type Table struct {
	Name    string
	Columns []string
	// IDs are the columns holding row ids of the pushing store.
	IDs []string
	// Texts are free-text columns: re-redacted (redacted) or emptied
	// (none). NotNull says which of them are NOT NULL ("" instead of NULL).
	Texts   []string
	NotNull []string
	// Raw is the original-record column, sent only with ContentFull.
	Raw string
	// MetaTexts are metadata_json keys that carry text.
	MetaTexts []string
	// Keys are text columns readers only compare for equality: redacted
	// (redacted) or replaced by a hash of them (none).
	Keys []string
	// Derived are values a push computes and sends after Columns (not
	// stored columns of the pushing store): logs' search text.
	Derived []string
}

// Index returns the position of column c, or -1.
func (t Table) Index(c string) int { return slices.Index(t.Columns, c) }

// PushTables are the tables a push copies, in the order it sends them:
// rows first, then the events that point at them.
var PushTables = []Table{
	{
		Name: "logs",
		Columns: []string{"id", "timestamp", "hostname", "facility", "severity", "app_name", "message", "raw", "received_at",
			"source", "ai_tool", "ai_project", "ai_session_id", "ai_transcript_path", "ai_role", "ai_kind", "ai_tool_name",
			"ai_agent_id", "is_error", "source_id", "source_line", "metadata_json", "claim", "claim_version"},
		IDs: []string{"id"}, Texts: []string{"message"}, NotNull: []string{"message"}, Raw: "raw",
		// search_text is what the row is found by: the full text of its
		// record (see transcript.RecordSearchText), a text.
		Derived: []string{"search_text"},
	},
	{
		Name: "ai_skill_events",
		Columns: []string{"id", "log_id", "ai_tool", "ai_project", "ai_session_id", "hostname", "timestamp", "skill_name",
			"skill_plugin", "skill_path", "event_kind", "evidence_kind", "metadata_json", "created_at", "ai_agent_id",
			"body_sha256"},
		IDs: []string{"id", "log_id"}, MetaTexts: []string{"args"},
	},
	{
		Name: "ai_mcp_events",
		Columns: []string{"id", "call_log_id", "result_log_id", "ai_tool", "ai_project", "ai_session_id", "hostname",
			"timestamp", "call_timestamp", "result_timestamp", "turn_id", "call_id", "tool_name", "mcp_server", "mcp_tool",
			"event_kind", "result_kind", "status", "duration_ms", "is_error", "exit_code", "arguments_json", "output_preview",
			"error_text", "metadata_json", "created_at", "ai_agent_id", "class", "why", "op", "loads_skill", "facts_version"},
		IDs: []string{"id", "call_log_id", "result_log_id"},
		// why is a line of the output; op names the operation (a
		// command, a file) and is compared, not shown (see Keys).
		Texts: []string{"arguments_json", "output_preview", "error_text", "why"},
		Keys:  []string{"op"},
	},
	{
		Name: "ai_hook_events",
		Columns: []string{"id", "log_id", "event_index", "ai_tool", "ai_project", "ai_session_id", "hostname", "timestamp",
			"last_seen", "hook_event", "hook_name", "hook_source", "hook_command", "status", "exit_code", "duration_ms",
			"stdout_preview", "stderr_preview", "persisted_output_path", "trusted_hash", "evidence_kind", "metadata_json",
			"created_at"},
		IDs: []string{"id", "log_id"}, Texts: []string{"stdout_preview", "stderr_preview"},
	},
	{
		Name: "ai_user_events",
		Columns: []string{"id", "log_id", "event_index", "ai_tool", "ai_project", "ai_session_id", "hostname", "ai_agent_id",
			"timestamp", "event_kind", "text", "call_id", "source", "metadata_json", "voice", "voice_version"},
		// voice is the stored reading of text: it quotes the phrases it
		// matched, so it is text too.
		IDs: []string{"id", "log_id"}, Texts: []string{"text", "voice"}, NotNull: []string{"text"},
		MetaTexts: []string{"command", "reason"},
	},
	{
		// The token usage of model responses (per session and response
		// key): counts, model names and times, no text.
		Name: "ai_token_usage",
		Columns: []string{"id", "ai_tool", "ai_session_id", "hostname", "usage_key", "timestamp", "model", "input_tokens",
			"output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"},
		IDs: []string{"id"},
	},
}

// SessionColumns are the columns of the ai_sessions rollup a push sends
// (its key is tool, session and host).
var SessionColumns = []string{"ai_tool", "ai_session_id", "hostname", "ai_project", "first_seen", "last_seen", "rows",
	"user_rows", "assistant_rows", "tool_calls", "error_rows", "subagent_rows", "tool_version", "transcript_path",
	"title", "first_prompt", "first_prompt_at"}

// SessionTable describes the session rollups a push sends: not a table of
// rows with ids (a rollup's key is its agent, session and host), but its
// texts — the title (an agent's summary) and the first typed prompt —
// follow the content level as the rows' texts do.
var SessionTable = Table{Name: "ai_sessions", Columns: SessionColumns, Texts: []string{"title", "first_prompt"}}

// Change is an update or delete of a row a push may have sent (see
// sqlite's push_changes), or a change of a session's texts (Table
// "ai_sessions", ID 0, Session set).
type Change struct {
	Seq     int64
	Table   string
	ID      int64
	Session SessionScope
}

// PushSnapshot is what a push sends about the pushing store as a whole,
// for status on the team store: its transcript sources, parse errors,
// unknown record types and log receivers, as its own status reports them.
type PushSnapshot struct {
	Sources       cortex.SourceStatus        `json:"sources"`
	ParseErrors   int64                      `json:"parse_errors"`
	RecentErrors  []cortex.SourceError       `json:"recent_parse_errors"`
	UnknownTypes  []cortex.UnknownTypeCount  `json:"unknown_types"`
	LastIndexedAt string                     `json:"last_indexed_at,omitempty"`
	LogIngest     []cortex.LogIngestCounters `json:"log_ingest"`
}
