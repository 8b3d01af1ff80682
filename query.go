package cortex

import "time"

// ClampLimit applies a default (for 0) and a maximum to a caller's limit;
// the second result is the maximum when it clamped (reported to callers as
// limit_clamped_to), else 0. A negative limit is invalid.
func ClampLimit(limit, def, maxLimit int) (int, int, error) {
	switch {
	case limit < 0:
		return 0, 0, Errorf(CodeInvalid, "limit must be positive, got %d", limit)
	case limit == 0:
		return def, 0, nil
	case limit > maxLimit:
		return maxLimit, maxLimit, nil
	}
	return limit, 0, nil
}

// SearchParams are the inputs of a full-text search.
type SearchParams struct {
	// Query is user text: words, "quoted phrases", word* prefixes and OR.
	// It is never passed to FTS5 verbatim.
	Query   string
	Tool    Tool
	Project string
	Session string
	Host    string
	Role    Role
	Since   time.Time
	Until   time.Time
	Limit   int
	// Rank orders by relevance (bm25) instead of newest first.
	Rank bool
	// After continues a listing (see Cursor).
	After *Cursor
}

// SearchHit is one matching row.
type SearchHit struct {
	ID             int64    `json:"id"`
	Timestamp      string   `json:"timestamp"`
	Tool           Tool     `json:"ai_tool,omitempty"`
	Project        string   `json:"ai_project,omitempty"`
	SessionID      string   `json:"ai_session_id,omitempty"`
	Role           Role     `json:"role,omitempty"`
	Kind           string   `json:"kind,omitempty"`
	ToolName       string   `json:"tool_name,omitempty"`
	Hostname       string   `json:"hostname"`
	Severity       Severity `json:"severity"`
	IsError        bool     `json:"is_error,omitempty"`
	TranscriptPath string   `json:"ai_transcript_path,omitempty"`
	Line           int64    `json:"line,omitempty"`
	// Snippet is an excerpt of the row's full text around the first match;
	// Highlights are the byte ranges [start, end) of the matched words in
	// it. The row's full record: `cortex show row ID`.
	Snippet    string   `json:"snippet"`
	Highlights [][2]int `json:"highlights,omitempty"`
}

// SearchResult is the answer to a search.
type SearchResult struct {
	Query          string      `json:"query"`
	FTSQuery       string      `json:"fts_query"`
	Hits           []SearchHit `json:"hits"`
	Total          int         `json:"total"`
	Truncated      bool        `json:"truncated"`
	LimitClampedTo int         `json:"limit_clamped_to,omitempty"`
	// NotYetSearchable counts the stored rows the search index has not
	// reached yet (it indexes behind the row writer): a search does not
	// see them. Beyond a few thousand it is an upper bound read from the
	// row ids (NotYetSearchableEstimated; the status action says so in
	// JSON: the search answer's schema stays small for agents).
	NotYetSearchable          int64 `json:"not_yet_searchable"`
	NotYetSearchableEstimated bool  `json:"-"`
	// RankWindow is set when --rank had more matches than it orders by
	// relevance: it ranked the newest RankWindow of them.
	RankWindow int `json:"rank_window,omitempty"`
	// Next continues the listing (pass it as cursor); empty on the last page.
	Next string `json:"next,omitempty"`
	// When nothing matched inside a time range: the newest match outside
	// it (if any) and the newest row stored at all, so an empty answer
	// says whether to widen the range or to index.
	NewestMatchOutsideRange string `json:"newest_match_outside_range,omitempty"`
	NewestRow               string `json:"newest_row,omitempty"`
}

// SessionParams filter the session list.
type SessionParams struct {
	Tool    Tool
	Project string
	Host    string
	Since   time.Time
	Until   time.Time
	Limit   int
	After   *Cursor
}

// Session is one agent session with its row counts.
type Session struct {
	Tool           Tool   `json:"ai_tool"`
	SessionID      string `json:"ai_session_id"`
	Hostname       string `json:"hostname"`
	Project        string `json:"ai_project,omitempty"`
	FirstSeen      string `json:"first_seen"`
	LastSeen       string `json:"last_seen"`
	Rows           int64  `json:"rows"`
	UserRows       int64  `json:"user_rows"`
	AssistantRows  int64  `json:"assistant_rows"`
	ToolCalls      int64  `json:"tool_calls"`
	ErrorRows      int64  `json:"error_rows"`
	SubagentRows   int64  `json:"subagent_rows"`
	ToolVersion    string `json:"tool_version,omitempty"`
	TranscriptPath string `json:"ai_transcript_path,omitempty"`
	// Title is the session's summary (TitleSource "summary"), else its
	// first typed prompt ("first_prompt").
	Title       string `json:"title,omitempty"`
	TitleSource string `json:"title_source,omitempty"`
	// DurationSecs is last seen minus first seen.
	DurationSecs float64 `json:"duration_secs"`
	// Models are the models that answered in the session.
	Models []string `json:"models,omitempty"`
	// Usage is the session's token usage and estimated cost (nil when
	// the transcript records none).
	Usage *UsageSummary `json:"usage,omitempty"`
}

// SessionList is the answer to a session listing.
type SessionList struct {
	Sessions       []Session `json:"sessions"`
	Total          int       `json:"total"`
	Truncated      bool      `json:"truncated"`
	LimitClampedTo int       `json:"limit_clamped_to,omitempty"`
	Next           string    `json:"next,omitempty"`
}

// Status describes the store.
type Status struct {
	DBPath        string                      `json:"db_path"`
	DBBytes       int64                       `json:"db_bytes"`
	WALBytes      int64                       `json:"wal_bytes"`
	SchemaVersion int                         `json:"schema_version"`
	Rows          int64                       `json:"rows"`
	RowsByTool    map[string]int64            `json:"rows_by_tool"`
	RowsByRole    map[string]map[string]int64 `json:"rows_by_tool_and_role"`
	Sessions      int64                       `json:"sessions"`
	Sources       SourceStatus                `json:"sources"`
	ParseErrors   int64                       `json:"parse_errors"`
	RecentErrors  []SourceError               `json:"recent_parse_errors"`
	UnknownTypes  []UnknownTypeCount          `json:"unknown_types"`
	LastIndexedAt string                      `json:"last_indexed_at,omitempty"`
	Oldest        string                      `json:"oldest_row,omitempty"`
	Newest        string                      `json:"newest_row,omitempty"`
	// LogRows counts the non-AI log rows stored by the syslog receiver and
	// log-file imports (the sum of LogIngest's stored counters).
	LogRows int64 `json:"log_rows"`
	// LogIngest reports the log receivers' counters by source, accumulated
	// over runs: what they received, stored, dropped and could not parse.
	LogIngest []LogIngestCounters `json:"log_ingest"`
	// Search is the state of the search index.
	Search SearchStatus `json:"search"`
}

// SearchStatus describes the search index: its file, and how far behind
// the stored rows it is (it indexes behind the row writer).
type SearchStatus struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// Built is false when the store has no search index yet.
	Built bool `json:"built"`
	// NotYetSearchable counts stored rows the index has not reached
	// (Estimated: an upper bound from the row ids).
	NotYetSearchable int64 `json:"not_yet_searchable"`
	Estimated        bool  `json:"not_yet_searchable_estimated,omitempty"`
	// Segments counts the index's segments (SQLite's FTS5): a search for
	// a common word seeks each, and catch-ups keep them few by merging.
	Segments int `json:"segments,omitempty"`
}

// LogIngestCounters are the counters of one log source: "syslog:udp",
// "syslog:tcp" or "file". Received counts messages (or lines) read;
// Stored those written as rows; Dropped those discarded because the
// receiver's queue was full; Malformed those stored as raw rows with a
// parse-error note; Oversized those cut to the size limit; KernelDrops
// UDP datagrams the operating system discarded before Cortex read them
// (Linux only). The syslog receiver also passes these as deltas to the
// store.
type LogIngestCounters struct {
	Source      string `json:"source"`
	Received    int64  `json:"received"`
	Stored      int64  `json:"stored"`
	Dropped     int64  `json:"dropped"`
	Malformed   int64  `json:"malformed"`
	Oversized   int64  `json:"oversized"`
	KernelDrops int64  `json:"kernel_drops"`
	FirstAt     string `json:"first_at,omitempty"`
	UpdatedAt   string `json:"updated_at,omitempty"`
}

// Add adds o's counts to c.
func (c *LogIngestCounters) Add(o LogIngestCounters) {
	c.Received += o.Received
	c.Stored += o.Stored
	c.Dropped += o.Dropped
	c.Malformed += o.Malformed
	c.Oversized += o.Oversized
	c.KernelDrops += o.KernelDrops
}

// Zero reports whether c counts nothing.
func (c *LogIngestCounters) Zero() bool {
	return c.Received == 0 && c.Stored == 0 && c.Dropped == 0 && c.Malformed == 0 && c.Oversized == 0 && c.KernelDrops == 0
}

// SourceStatus counts transcript files by kind.
type SourceStatus struct {
	Files      int64            `json:"files"`
	ByKind     map[string]int64 `json:"by_kind"`
	Pending    int64            `json:"files_with_incomplete_last_record"`
	WithErrors int64            `json:"files_with_errors"`
	Rewrites   int64            `json:"rewrites_detected"`
}

// SourceError is a stored parse error.
type SourceError struct {
	Path    string `json:"path"`
	Line    int64  `json:"line"`
	Error   string `json:"error"`
	Preview string `json:"preview"`
	SeenAt  string `json:"seen_at"`
}

// UnknownTypeCount counts records of a type Cortex does not understand.
type UnknownTypeCount struct {
	Tool    Tool   `json:"ai_tool"`
	Version string `json:"tool_version"`
	Type    string `json:"record_type"`
	Count   int64  `json:"count"`
}

// EventFilter holds the filters shared by the event listings.
type EventFilter struct {
	Tool    Tool
	Project string
	Session string
	Host    string
	Since   time.Time
	Until   time.Time
	Limit   int
	// After continues a listing (see Cursor).
	After *Cursor
}

// SkillEventParams filter skill events.
type SkillEventParams struct {
	EventFilter
	Skill  string
	Plugin string
}

// SkillEventRow is a stored skill event.
type SkillEventRow struct {
	ID           int64             `json:"id"`
	LogID        int64             `json:"log_id"`
	Tool         Tool              `json:"ai_tool"`
	Project      string            `json:"ai_project,omitempty"`
	SessionID    string            `json:"ai_session_id,omitempty"`
	Hostname     string            `json:"hostname"`
	Timestamp    string            `json:"timestamp"`
	SkillName    string            `json:"skill_name"`
	SkillPlugin  string            `json:"skill_plugin,omitempty"`
	SkillPath    string            `json:"skill_path,omitempty"`
	EventKind    string            `json:"event_kind"`
	EvidenceKind string            `json:"evidence_kind"`
	Metadata     map[string]string `json:"metadata,omitempty"`
}

// SkillSummary is one skill's usage.
type SkillSummary struct {
	SkillName   string `json:"skill_name"`
	SkillPlugin string `json:"skill_plugin,omitempty"`
	Events      int64  `json:"events"`
	Sessions    int64  `json:"sessions"`
	Tools       string `json:"ai_tools"`
	FirstSeen   string `json:"first_seen"`
	LastSeen    string `json:"last_seen"`
}

// ToolEventParams filter tool-call events.
type ToolEventParams struct {
	EventFilter
	ToolName  string
	MCPServer string
	MCPTool   string
	// OnlyMCP keeps calls classified as MCP; ErrorsOnly failed calls.
	OnlyMCP    bool
	ErrorsOnly bool
}

// ToolEventRow is a stored tool call (call and result merged).
type ToolEventRow struct {
	ID              int64             `json:"id"`
	CallLogID       *int64            `json:"call_log_id"`
	ResultLogID     *int64            `json:"result_log_id"`
	Tool            Tool              `json:"ai_tool"`
	Project         string            `json:"ai_project,omitempty"`
	SessionID       string            `json:"ai_session_id,omitempty"`
	Hostname        string            `json:"hostname"`
	Timestamp       string            `json:"timestamp"`
	CallTimestamp   string            `json:"call_timestamp,omitempty"`
	ResultTimestamp string            `json:"result_timestamp,omitempty"`
	TurnID          string            `json:"turn_id,omitempty"`
	CallID          string            `json:"call_id"`
	ToolName        string            `json:"tool_name"`
	MCPServer       string            `json:"mcp_server,omitempty"`
	MCPTool         string            `json:"mcp_tool,omitempty"`
	EventKind       string            `json:"event_kind"`
	ResultKind      string            `json:"result_kind,omitempty"`
	Status          string            `json:"status"`
	DurationMS      *int64            `json:"duration_ms"`
	IsError         *bool             `json:"is_error"`
	ExitCode        *int64            `json:"exit_code"`
	ArgumentsJSON   string            `json:"arguments_json,omitempty"`
	OutputPreview   string            `json:"output_preview,omitempty"`
	ErrorText       string            `json:"error_text,omitempty"`
	Metadata        map[string]string `json:"metadata,omitempty"`
}

// HookEventParams filter hook events.
type HookEventParams struct {
	EventFilter
	// Hook matches hook_event or hook_name (see the service's resolution).
	Hook         string
	HookEvent    string
	HookSource   string
	Status       string
	EvidenceKind string
}

// HookEventRow is a stored hook event.
type HookEventRow struct {
	ID                  int64             `json:"id"`
	LogID               *int64            `json:"log_id"`
	Tool                Tool              `json:"ai_tool"`
	Project             string            `json:"ai_project,omitempty"`
	SessionID           string            `json:"ai_session_id,omitempty"`
	Hostname            string            `json:"hostname"`
	Timestamp           string            `json:"timestamp"`
	LastSeen            string            `json:"last_seen,omitempty"`
	HookEvent           string            `json:"hook_event"`
	HookName            string            `json:"hook_name,omitempty"`
	HookSource          string            `json:"hook_source,omitempty"`
	HookCommand         string            `json:"hook_command,omitempty"`
	Status              string            `json:"status"`
	ExitCode            *int64            `json:"exit_code"`
	DurationMS          *int64            `json:"duration_ms"`
	StdoutPreview       string            `json:"stdout_preview,omitempty"`
	StderrPreview       string            `json:"stderr_preview,omitempty"`
	PersistedOutputPath string            `json:"persisted_output_path,omitempty"`
	TrustedHash         string            `json:"trusted_hash,omitempty"`
	EvidenceKind        string            `json:"evidence_kind"`
	Metadata            map[string]string `json:"metadata,omitempty"`
}

// EventList is the answer of an event listing: {events, total, truncated}.
type EventList[T any] struct {
	Events         []T  `json:"events"`
	Total          int  `json:"total"`
	Truncated      bool `json:"truncated"`
	LimitClampedTo int  `json:"limit_clamped_to,omitempty"`
	// Next continues the listing (pass it as cursor); empty on the last page.
	Next string `json:"next,omitempty"`
}
