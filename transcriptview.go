package cortex

import "strings"

// TranscriptQuery selects a page of one session's rows, in time order.
// At most one of AfterID, BeforeID and AroundID is set: the rows after
// (before) that row, or a page holding that row; none is the first page.
type TranscriptQuery struct {
	Tool    Tool
	Session string
	Host    string
	// AfterID, BeforeID and AroundID are row ids of the session.
	AfterID  int64
	BeforeID int64
	AroundID int64
	Limit    int
	// MaxBytes cuts each row's text (0: the whole stored text).
	MaxBytes int
}

// TranscriptRow is one row of a session as a reader sees it. Empty
// thinking rows (reasoning the transcript does not carry) are left out of
// transcripts.
type TranscriptRow struct {
	ID        int64    `json:"id"`
	Timestamp string   `json:"timestamp"`
	Role      Role     `json:"role"`
	Kind      string   `json:"kind,omitempty"`
	ToolName  string   `json:"tool_name,omitempty"`
	AgentID   string   `json:"agent_id,omitempty"`
	Sidechain bool     `json:"sidechain,omitempty"`
	IsError   bool     `json:"is_error,omitempty"`
	Severity  Severity `json:"severity"`
	Model     string   `json:"model,omitempty"`
	Line      int64    `json:"line,omitempty"`
	Text      string   `json:"text"`
	// TextBytes is the stored text's length; TextTruncated says Text was
	// cut to the caller's bound, StoredTruncated that ingest kept only the
	// head and tail of a huge record.
	TextBytes       int  `json:"text_bytes"`
	TextTruncated   bool `json:"text_truncated,omitempty"`
	StoredTruncated bool `json:"stored_truncated,omitempty"`
	// Call is the tool call this row makes (role tool_call) or answers
	// (role tool_result), from ai_mcp_events: the other side's row id,
	// the outcome.
	Call *TranscriptCall `json:"call,omitempty"`
	// Skills are the skills this row loads or uses (ai_skill_events).
	Skills []string `json:"skills,omitempty"`
	// Hooks are the hook runs this row records, "event:name status".
	Hooks []string `json:"hooks,omitempty"`
	// Incidents are the ids of incidents whose signals this row carries.
	Incidents []string `json:"incidents,omitempty"`
}

// TranscriptCall is a tool call as seen from its call or result row.
type TranscriptCall struct {
	EventID     int64  `json:"mcp_event_id"`
	CallLogID   *int64 `json:"call_log_id"`
	ResultLogID *int64 `json:"result_log_id"`
	ToolName    string `json:"tool_name"`
	MCPServer   string `json:"mcp_server,omitempty"`
	Status      string `json:"status"`
	ExitCode    *int64 `json:"exit_code,omitempty"`
	DurationMS  *int64 `json:"duration_ms,omitempty"`
	ErrorText   string `json:"error_text,omitempty"`
}

// TranscriptPage is a page of a session's rows with where it sits.
type TranscriptPage struct {
	Rows []TranscriptRow `json:"rows"`
	// Offset is the position of the first row in the session (0-based);
	// RowsTotal counts the session's rows as transcripts show them.
	Offset    int  `json:"offset"`
	RowsTotal int  `json:"rows_total"`
	HasBefore bool `json:"has_before"`
	HasAfter  bool `json:"has_after"`
}

// SessionIncident is an incident of a session, short, with the rows that
// carry its signals.
type SessionIncident struct {
	ID           string   `json:"incident_id"`
	Lens         string   `json:"lens"`
	Subject      string   `json:"subject,omitempty"`
	Label        string   `json:"priority_label"`
	Score        float64  `json:"priority_score"`
	FirstSeen    string   `json:"first_seen"`
	LastSeen     string   `json:"last_seen"`
	Signals      []string `json:"signals_present"`
	AnchorLogIDs []int64  `json:"anchor_log_ids"`
}

// SessionTranscript is the answer of session_show: the session, a page of
// its rows, and the session's incidents.
type SessionTranscript struct {
	Session Session `json:"session"`
	TranscriptPage
	// NextAfterID and PrevBeforeID continue the reading (0: none).
	NextAfterID  int64 `json:"next_after_id,omitempty"`
	PrevBeforeID int64 `json:"prev_before_id,omitempty"`
	// Incidents are the session's incidents of every lens, best first;
	// IncidentsError says a lens could not be read (the rows still are).
	Incidents      []SessionIncident `json:"incidents"`
	IncidentsError string            `json:"incidents_error,omitempty"`
	// Detail says whether texts are whole (true) or cut to a summary.
	Detail         bool `json:"detail"`
	LimitClampedTo int  `json:"limit_clamped_to,omitempty"`
	// Truncated says the answer was cut to fit one result (see
	// next_after_id).
	Truncated bool `json:"truncated"`
}

// RowDetail is one stored row with everything known about it.
type RowDetail struct {
	ID             int64    `json:"id"`
	Timestamp      string   `json:"timestamp"`
	Hostname       string   `json:"hostname"`
	Tool           Tool     `json:"ai_tool,omitempty"`
	Project        string   `json:"ai_project,omitempty"`
	SessionID      string   `json:"ai_session_id,omitempty"`
	TranscriptPath string   `json:"ai_transcript_path,omitempty"`
	Line           int64    `json:"line,omitempty"`
	Role           Role     `json:"role,omitempty"`
	Kind           string   `json:"kind,omitempty"`
	ToolName       string   `json:"tool_name,omitempty"`
	AgentID        string   `json:"agent_id,omitempty"`
	IsError        bool     `json:"is_error,omitempty"`
	Severity       Severity `json:"severity"`
	AppName        string   `json:"app_name,omitempty"`
	Facility       string   `json:"facility,omitempty"`
	Source         string   `json:"source,omitempty"`
	ReceivedAt     string   `json:"received_at"`
	// Metadata is the row's metadata_json.
	Metadata      map[string]string `json:"metadata,omitempty"`
	Text          string            `json:"text"`
	TextBytes     int               `json:"text_bytes"`
	TextTruncated bool              `json:"text_truncated,omitempty"`
	// Raw is the original record (redacted), with detail only; RawBytes
	// its size, RawTruncated when cut.
	Raw          string `json:"raw,omitempty"`
	RawBytes     int    `json:"raw_bytes"`
	RawTruncated bool   `json:"raw_truncated,omitempty"`
	// PrevID and NextID are the neighbouring rows of the session (0: none).
	PrevID int64 `json:"prev_id,omitempty"`
	NextID int64 `json:"next_id,omitempty"`
	// The events extracted from the row.
	SkillEvents []SkillEventRow `json:"skill_events"`
	ToolEvents  []ToolEventRow  `json:"tool_events"`
	HookEvents  []HookEventRow  `json:"hook_events"`
	Detail      bool            `json:"detail"`
}

// Subject names what an incident is about: the skill, the MCP server and
// tool, the hook, what friction was attributed to ("-" for none), or the
// abuse terms.
func (inc Incident) Subject() string {
	switch inc.Lens {
	case LensSkill:
		return inc.SkillName
	case LensMCP:
		if inc.MCPTool != "" {
			return inc.MCPServer + "/" + inc.MCPTool
		}
		return inc.MCPServer
	case LensHook:
		if inc.HookName != "" {
			return inc.HookName
		}
		return inc.HookEvent
	case LensFriction:
		var parts []string
		for _, a := range inc.AttributedTo {
			parts = append(parts, a.Name)
		}
		if len(parts) == 0 {
			return "-"
		}
		return strings.Join(parts, ",")
	}
	return strings.Join(inc.Terms, ",")
}
