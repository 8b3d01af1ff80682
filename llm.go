package cortex

import "time"

// Statuses of an LLM invocation (llm_invocations.status).
const (
	InvocationRunning     = "running"
	InvocationSuccess     = "success"
	InvocationError       = "error"
	InvocationTimeout     = "timeout"
	InvocationCancelled   = "cancelled"
	InvocationDisabled    = "disabled"
	InvocationRateLimited = "rate_limited"
	InvocationCircuitOpen = "circuit_open"
	InvocationDenied      = "denied"
	InvocationDryRun      = "dry_run"
	// InvocationInterrupted marks a row left running by a process that
	// died; it is set when the next process opens the audit.
	InvocationInterrupted = "interrupted"
)

// Caller surfaces of an LLM invocation.
const (
	SurfaceCLI        = "cli"
	SurfaceMCP        = "mcp"
	SurfaceREST       = "rest"
	SurfaceBackground = "background"
	SurfaceTest       = "test"
)

// EvidenceCounts describe the evidence an LLM was given.
type EvidenceCounts struct {
	TotalIncidents int  `json:"total_incidents"`
	Bundles        int  `json:"evidence_bundle_count"`
	Anchors        int  `json:"total_anchors"`
	EvidenceBytes  int  `json:"evidence_bytes"`
	Truncated      bool `json:"truncated"`
}

// Invocation is one LLM invocation as audited in llm_invocations: written
// before the provider starts and completed after it ends, fails, times
// out, is cancelled or is denied.
type Invocation struct {
	ID            string          `json:"id"`
	StartedAt     time.Time       `json:"started_at"`
	FinishedAt    *time.Time      `json:"finished_at,omitempty"`
	DurationMS    *int64          `json:"duration_ms,omitempty"`
	CallerSurface string          `json:"caller_surface"`
	Action        string          `json:"action"`
	Provider      string          `json:"provider"`
	Model         string          `json:"model,omitempty"`
	Program       string          `json:"program,omitempty"`
	IncidentID    string          `json:"incident_id,omitempty"`
	Tool          Tool            `json:"ai_tool,omitempty"`
	Project       string          `json:"ai_project,omitempty"`
	Session       string          `json:"ai_session_id,omitempty"`
	Evidence      *EvidenceCounts `json:"evidence_counts,omitempty"`
	PromptBytes   int64           `json:"prompt_bytes"`
	OutputBytes   *int64          `json:"output_bytes,omitempty"`
	Status        string          `json:"status"`
	// Error is redacted and bounded; it may hold a bounded stderr tail.
	Error string `json:"error,omitempty"`
	// Metadata holds small tags (skill name, MCP server…), redacted and
	// bounded; never prompts or evidence.
	Metadata map[string]any `json:"metadata,omitempty"`
	Hostname string         `json:"hostname"`
	PID      int            `json:"pid"`
	// ProviderPID is the process group of the provider's process (a CLI),
	// ProviderDir the temporary folder holding its copied credentials;
	// both are set once the provider started.
	ProviderPID int    `json:"provider_pid,omitempty"`
	ProviderDir string `json:"-"`
}

// InvocationFinish completes an audited invocation.
type InvocationFinish struct {
	ID          string
	FinishedAt  time.Time
	DurationMS  int64
	Status      string
	Error       string
	OutputBytes *int64
}

// InvocationParams filter the audit listing.
type InvocationParams struct {
	Since  time.Time
	Action string
	Status string
	Limit  int
	After  *Cursor
}

// InvocationList is the answer of an audit listing, newest first.
type InvocationList struct {
	Invocations    []Invocation `json:"invocations"`
	Total          int          `json:"total"`
	Truncated      bool         `json:"truncated"`
	LimitClampedTo int          `json:"limit_clamped_to,omitempty"`
	Next           string       `json:"next,omitempty"`
}
