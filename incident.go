package cortex

import (
	"strings"
	"time"
)

// Lenses of the incident engine.
const (
	LensAbuse    = "abuse"
	LensSkill    = "skill"
	LensMCP      = "mcp"
	LensHook     = "hook"
	LensFriction = "friction"
)

// Skill lens signals.
const (
	SignalUserStopped    = "user_stopped_skill"
	SignalUserCorrection = "user_correction_after_skill"
	SignalToolFailure    = "tool_failure_after_skill"
	SignalScopeConfusion = "scope_or_source_confusion"
	SignalIgnoredPolicy  = "ignored_skill_or_policy_instruction"
	SignalOverlongLoop   = "overlong_loop_after_skill"
	// SignalSkillRetryLoop: in the run's scope the agent ran the same
	// failing operation again and again (or nothing succeeded for a long
	// stretch), whether or not the user said anything.
	SignalSkillRetryLoop = "retry_loop_after_skill"
	SignalAbuseTerm      = "abuse_term"
)

// MCP lens signals.
const (
	SignalRepeatedFailure        = "repeated_call_failure"
	SignalTimeoutOrRateLimit     = "timeout_or_rate_limit"
	SignalAuthFailure            = "auth_or_permission_failure"
	SignalSchemaError            = "schema_or_validation_error"
	SignalUnknownToolOrServer    = "unknown_tool_or_server"
	SignalCorrectionAfterCall    = "user_correction_after_tool_call"
	SignalToolClaimedUnavailable = "tool_claimed_unavailable"
	SignalResultContradicted     = "tool_result_contradicted"
)

// Friction lens signals: the user's verdicts, whatever was active.
const (
	SignalInterrupt       = "user_interrupt"
	SignalRejection       = "user_rejection"
	SignalStop            = "user_stop"
	SignalCorrection      = "user_correction"
	SignalRevert          = "revert_request"
	SignalRepeatedRequest = "repeated_request"
	SignalDissatisfied    = "user_dissatisfied"
	// SignalRetryLoop: the agent ran the same failing operation again and
	// again (or nothing succeeded for a long stretch) outside any skill's
	// run: friction the user may never have put into words.
	SignalRetryLoop = "retry_loop"
)

// Hook lens signals.
const (
	SignalHookFailed          = "hook_failed"
	SignalHookTimedOut        = "hook_timed_out"
	SignalHookOutputParse     = "hook_output_parse_error"
	SignalHookTooOften        = "hook_invoked_too_often"
	SignalCorrectionAfterHook = "user_correction_after_hook"
	SignalHookBlockedFlow     = "hook_blocked_agent_flow"
	SignalHookNotInvoked      = "hook_not_invoked"
)

// Incident is a group of related signals in one session and time window,
// scored and identified stably. Lens-specific subject fields are empty for
// other lenses.
type Incident struct {
	ID   string `json:"incident_id"`
	Lens string `json:"lens"`
	// Subject of the incident.
	SkillName   string `json:"skill_name,omitempty"`
	SkillPlugin string `json:"skill_plugin,omitempty"`
	MCPServer   string `json:"mcp_server,omitempty"`
	MCPTool     string `json:"mcp_tool,omitempty"`
	HookEvent   string `json:"hook_event,omitempty"`
	HookName    string `json:"hook_name,omitempty"`
	HookSource  string `json:"hook_source,omitempty"`
	// SubjectKind says what a skill-lens subject is: "skill", or "command"
	// (a custom slash command with no skill body).
	SubjectKind string `json:"subject_kind,omitempty"`
	// CoActive names the other skills whose runs overlapped this one in
	// its agent thread (skill lens): the user's verdicts are charged to
	// each of them, so read them side by side.
	CoActive []string `json:"co_active_skills,omitempty"`
	// AttributedTo names what was active when the user reacted (friction
	// lens): the skill runs, MCP tools and hooks, or nothing.
	AttributedTo []Attribution `json:"attributed_to,omitempty"`
	// EvidenceBasis says what proves the incident (hook lens): the
	// evidence kind EvidenceRuntime (it ran), or EvidenceConfig /
	// EvidenceTrust only (it was configured: not proof it ran).
	EvidenceBasis string `json:"evidence_basis,omitempty"`
	// Where.
	Tool      Tool   `json:"ai_tool"`
	Project   string `json:"ai_project,omitempty"`
	SessionID string `json:"ai_session_id,omitempty"`
	Hostname  string `json:"hostname"`
	// When: the first and last member event or anchor.
	FirstSeen    string  `json:"first_seen"`
	LastSeen     string  `json:"last_seen"`
	DurationSecs float64 `json:"duration_secs"`
	// EventCount counts the lens's member events as the score uses them
	// (skill activations, abuse anchors); EventIDs are the member events
	// themselves (skill event ids, or anchor log ids for abuse).
	EventCount int     `json:"event_count"`
	EventIDs   []int64 `json:"event_ids"`
	// AnchorLogIDs are the logs rows that carry a signal.
	AnchorLogIDs   []int64        `json:"anchor_log_ids"`
	SignalCounts   map[string]int `json:"signal_counts"`
	SignalsPresent []string       `json:"signals_present"`
	// Terms are the abuse terms found (abuse lens).
	Terms         []string `json:"terms,omitempty"`
	Score         float64  `json:"priority_score"`
	Label         string   `json:"priority_label"`
	WindowMinutes int      `json:"window_minutes"`
	// Usage is what the session spent on the model from the incident's
	// first to its last event: the cost of the failure (nil when the
	// transcript records no usage in that span).
	Usage *UsageSummary `json:"usage,omitempty"`
}

// Attribution is a subject a friction incident is charged to: what was
// active when the user reacted.
type Attribution struct {
	Kind string `json:"kind"` // skill, command, mcp, hook
	Name string `json:"name"`
	// Why says how it was active ("skill run in scope", "the refused call",
	// "the last call before the interrupt", "hook failed just before").
	Why string `json:"why"`
	// Acts counts the user's acts of the incident charged to it.
	Acts int `json:"acts"`
}

// IncidentParams select and bound incidents of any lens.
type IncidentParams struct {
	Tool    Tool
	Project string
	Session string
	Host    string
	Since   time.Time
	Until   time.Time
	// Lens subject filters: skill lens.
	Skill  string
	Plugin string
	// MCP lens: a server, an MCP tool, or a tool name as the agent saw it
	// (mcp__server__tool); Target takes any of the three forms
	// (server, mcp__server__tool, server/tool) and is resolved by the lens.
	MCPServer string
	MCPTool   string
	ToolName  string
	Target    string
	// Hook lens: Hook is a hook as users type it (PostToolUse,
	// post_tool_use, PostToolUse:Bash), resolved by event or event:matcher.
	Hook         string
	HookEvent    string
	HookSource   string
	EvidenceKind string
	// Terms replace the default abuse terms (abuse lens).
	Terms []string
	// WindowMinutes: a group ends after this long without a member event
	// (default 10, clamped to 1..120).
	WindowMinutes int
	// Signals keeps incidents with at least one of these signals.
	Signals []string
	// MinScore keeps incidents scoring at least this.
	MinScore float64
	// IncidentID finds one incident at any rank.
	IncidentID string
	// IncludeUsage also lists groups without a negative signal (skill lens).
	IncludeUsage bool
	Limit        int
	// After continues a listing (an offset into the ranking).
	After *Cursor
}

// IncidentList is the answer of an incident listing.
type IncidentList struct {
	Incidents []Incident `json:"incidents"`
	// Total counts incidents after filters, before the limit.
	Total int `json:"total_incidents"`
	// CandidateRows is the number of candidate events or anchors scanned,
	// at most CandidateCap; CandidateWindowTruncated says the cap was hit
	// (older candidates of the time range were not scanned).
	CandidateRows            int  `json:"candidate_rows"`
	CandidateCap             int  `json:"candidate_cap"`
	CandidateWindowTruncated bool `json:"candidate_window_truncated"`
	Truncated                bool `json:"truncated"`
	LimitClampedTo           int  `json:"limit_clamped_to,omitempty"`
	WindowMinutes            int  `json:"window_minutes"`
	// Next continues the listing (pass it as cursor); empty on the last page.
	Next string `json:"next,omitempty"`
}

// EvidenceRow is one logs row in an evidence bundle, its text bounded.
type EvidenceRow struct {
	ID        int64    `json:"id"`
	Timestamp string   `json:"timestamp"`
	Tool      Tool     `json:"ai_tool,omitempty"`
	SessionID string   `json:"ai_session_id,omitempty"`
	Hostname  string   `json:"hostname"`
	Role      Role     `json:"role,omitempty"`
	Kind      string   `json:"kind,omitempty"`
	ToolName  string   `json:"tool_name,omitempty"`
	Severity  Severity `json:"severity"`
	IsError   bool     `json:"is_error,omitempty"`
	AppName   string   `json:"app_name,omitempty"`
	Message   string   `json:"message"`
	// MessageTruncated is set when Message was cut to the bundle's
	// max-bytes bound.
	MessageTruncated bool `json:"message_truncated,omitempty"`
	// Signals names the signals this row carries (signal anchors).
	Signals []string `json:"signals,omitempty"`
	// Term is the abuse term found (abuse anchors).
	Term string `json:"term,omitempty"`
	// Reaction marks the user's reaction right after an incident (user
	// voice rows).
	Reaction bool `json:"reaction,omitempty"`
	// FollowsStop marks words the user typed right after interrupting the
	// agent or refusing its call, before it acted again: the reason.
	FollowsStop bool `json:"follows_stop,omitempty"`
}

// ToolFailure is a failed tool call near an incident (from ai_mcp_events).
type ToolFailure struct {
	EventID     int64  `json:"mcp_event_id"`
	CallLogID   *int64 `json:"call_log_id"`
	ResultLogID *int64 `json:"result_log_id"`
	Timestamp   string `json:"timestamp"`
	ToolName    string `json:"tool_name"`
	MCPServer   string `json:"mcp_server,omitempty"`
	Status      string `json:"status"`
	ExitCode    *int64 `json:"exit_code,omitempty"`
	ErrorText   string `json:"error_text,omitempty"`
	// Recovered is set when the same operation later succeeded in the
	// same agent thread.
	Recovered bool `json:"recovered"`
	// Class is the call's outcome class: failed, failed_in_output,
	// expected_probe, sibling_cancelled, user_rejected, …
	Class string `json:"class,omitempty"`
	// Command is the command line of a shell call (bounded).
	Command string `json:"command,omitempty"`
	// Operation names what failed in a few safe words: a shell call's
	// program and subcommand ("entire dispatch", "gh api"), else the
	// tool's name.
	Operation string `json:"operation,omitempty"`
	// Line is the line of output that shows the failure.
	Line string `json:"line,omitempty"`
}

// SkillDoc is the skill document a run loaded, as the transcript shows it.
type SkillDoc struct {
	Name string `json:"skill_name"`
	// Path is the SKILL.md path when known.
	Path string `json:"path,omitempty"`
	// SHA256 is the body's content hash when the record states it.
	SHA256 string `json:"sha256,omitempty"`
	// Source is the skill event the text comes from (claude_skill_body,
	// codex_skill_read, …) and LogID its row.
	Source string `json:"source"`
	LogID  int64  `json:"log_id"`
	// Text is the document (bounded); AsPrinted says it is what the agent
	// printed of the file (a Codex `sed -n '1,240p'`: lines outside the
	// range it printed are missing), Truncated that the bound cut it.
	Text      string `json:"text"`
	AsPrinted bool   `json:"as_printed,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// SkillQuote is a line of the skill document (or of what the skill's own
// command printed) that a finding is about.
type SkillQuote struct {
	Line int    `json:"line"`
	Text string `json:"text"`
	// Source is "skill_doc", or "command_output" with the row (LogID) of
	// the output.
	Source string `json:"source"`
	LogID  int64  `json:"log_id,omitempty"`
}

// Finding is one deterministic failure mode derived from a bundle.
type Finding struct {
	Category    string  `json:"category"`
	Confidence  string  `json:"confidence"` // low, medium, high
	EvidenceIDs []int64 `json:"evidence_ids"`
	// MCPEventIDs cite tool-call events (ai_mcp_events ids) when they
	// carry the evidence.
	MCPEventIDs []int64 `json:"mcp_event_ids,omitempty"`
	Hint        string  `json:"prevention_hint"`
	// HintValues are the values the hint names ({command}, {program},
	// {dep}, {code}, {value}, {verb}): safe words only.
	HintValues map[string]string `json:"hint_values,omitempty"`
	// Why says which phrases or signals matched.
	Why string `json:"why,omitempty"`
	// Cause is the line of evidence that shows the cause (a tool's error
	// line, the user's words), one line, bounded.
	Cause string `json:"cause,omitempty"`
	// SkillQuotes are the lines of the skill document the finding is
	// about, when the document is stored.
	SkillQuotes []SkillQuote `json:"skill_quotes,omitempty"`
}

// Factor is a contributing factor with its evidence.
type Factor struct {
	Factor      string  `json:"factor"`
	EvidenceIDs []int64 `json:"evidence_ids"`
}

// Findings are the deterministic findings of a bundle: no LLM, no database.
type Findings struct {
	FailureModes []Finding `json:"likely_failure_modes"`
	// EvidenceBasis says what the findings rest on (hook lens).
	EvidenceBasis string   `json:"evidence_basis,omitempty"`
	Factors       []Factor `json:"contributing_factors"`
	OpenQuestions []string `json:"open_questions"`
}

// Bundle is the bounded evidence for one incident. Every collection is
// capped; its *_truncated flag says when the cap was hit. Rows are in
// chronological order.
type Bundle struct {
	Incident Incident `json:"incident"`
	// SkillEvents are the incident's skill events (skill lens).
	SkillEvents          []SkillEventRow `json:"skill_events,omitempty"`
	SkillEventsTruncated bool            `json:"skill_events_truncated"`
	// Skill is the skill document the run loaded, when a record shows it
	// (skill lens).
	Skill *SkillDoc `json:"skill_doc,omitempty"`
	// SkillOutputs are the outputs of the skill's own command in the run
	// (`marvin work` for the marvin skill): instructions it prints are
	// the skill's too.
	SkillOutputs []EvidenceRow `json:"skill_outputs,omitempty"`
	// Failures are the failed tool calls in the incident's own scope,
	// classified (skill lens: the run's thread, activation to reaction).
	Failures          []ToolFailure `json:"failures,omitempty"`
	FailuresTruncated bool          `json:"failures_truncated,omitempty"`
	// RunCalls counts the tool calls in a skill run's scope (loading the
	// skill aside).
	RunCalls int `json:"run_calls,omitempty"`
	// MCPEvents are the incident's own tool calls (MCP lens): call and
	// result log rows prove the call happened and how it ended.
	MCPEvents          []ToolEventRow `json:"mcp_events,omitempty"`
	MCPEventsTruncated bool           `json:"mcp_events_truncated,omitempty"`
	// HookEvents are the incident's hook events (hook lens).
	HookEvents          []HookEventRow `json:"hook_events,omitempty"`
	HookEventsTruncated bool           `json:"hook_events_truncated,omitempty"`
	// NearbyToolCalls are the session's tool calls in the correlation
	// window (hook lens: what the hook ran around); NearbyMCPEvents those
	// classified as MCP.
	NearbyToolCalls          []ToolEventRow `json:"nearby_tool_calls,omitempty"`
	NearbyToolCallsTruncated bool           `json:"nearby_tool_calls_truncated,omitempty"`
	NearbyMCPEvents          []ToolEventRow `json:"nearby_mcp_events,omitempty"`
	NearbyMCPEventsTruncated bool           `json:"nearby_mcp_events_truncated,omitempty"`
	SignalAnchors            []EvidenceRow  `json:"signal_anchors"`
	SignalAnchorsTruncated   bool           `json:"signal_anchors_truncated"`
	// UserVoice is what the human did inside the incident's span — typed
	// prompts, interrupts, refusals — and their reaction right after it
	// (marked Reaction), in time order: the interior beside the anchors.
	UserVoice          []EvidenceRow `json:"user_voice"`
	UserVoiceTruncated bool          `json:"user_voice_truncated"`
	// UserWords are the user's decisive words: what they typed that
	// carries a signal, the words they typed after an interrupt or a
	// refusal (before the agent acted again: the reason), and their
	// reaction when it carries a signal — in time order, each with its
	// signals. A summary keeps them (cut short), so the default answer
	// says what the user said.
	UserWords                      []EvidenceRow `json:"user_words"`
	UserWordsTruncated             bool          `json:"user_words_truncated,omitempty"`
	TranscriptBefore               []EvidenceRow `json:"transcript_before"`
	TranscriptBeforeTruncated      bool          `json:"transcript_before_truncated"`
	TranscriptAfter                []EvidenceRow `json:"transcript_after"`
	TranscriptAfterTruncated       bool          `json:"transcript_after_truncated"`
	NearbyToolFailures             []ToolFailure `json:"nearby_tool_failures"`
	NearbyToolFailuresTruncated    bool          `json:"nearby_tool_failures_truncated"`
	NearbyUserCorrections          []EvidenceRow `json:"nearby_user_corrections"`
	NearbyUserCorrectionsTruncated bool          `json:"nearby_user_corrections_truncated"`
	// NearbyLogs are non-AI log rows of the same host within the
	// correlation window; NearbyErrors those of error severity or worse.
	NearbyLogs               []EvidenceRow `json:"nearby_logs"`
	NearbyLogsTruncated      bool          `json:"nearby_logs_truncated"`
	NearbyErrors             []EvidenceRow `json:"nearby_errors"`
	NearbyErrorsTruncated    bool          `json:"nearby_errors_truncated"`
	CorrelationWindowMinutes int           `json:"correlation_window_minutes"`
	Findings                 Findings      `json:"deterministic_findings"`
}

// IncidentSummary is a short line about another matching incident.
type IncidentSummary struct {
	ID        string  `json:"incident_id"`
	FirstSeen string  `json:"first_seen"`
	LastSeen  string  `json:"last_seen"`
	Score     float64 `json:"priority_score"`
	Label     string  `json:"priority_label"`
	SessionID string  `json:"ai_session_id,omitempty"`
}

// InvestigateParams select the incidents to investigate and bound their
// evidence.
type InvestigateParams struct {
	IncidentParams
	// All builds a bundle for every matching incident (up to the maximum).
	All bool
	// CorrelationWindowMinutes widens the incident's time span for nearby
	// logs, errors and tool failures (default 5, clamped to 1..120).
	CorrelationWindowMinutes int
	// MaxBytes bounds the text of each evidence row (default 1024).
	MaxBytes int
}

// Investigation is the answer of an investigation: evidence bundles for the
// top incidents, short summaries of the others, and, when nothing matched,
// what was found instead.
type Investigation struct {
	// Bundles are the full evidence bundles (Detail); Summaries their
	// short forms otherwise (see Summarized).
	Bundles   []Bundle        `json:"evidence,omitzero"`
	Summaries []BundleSummary `json:"evidence_summary,omitzero"`
	// Detail says which of the two the answer carries.
	Detail bool `json:"detail"`
	// Total counts the matching incidents; Truncated says some matched
	// but got no bundle (see OtherMatching) or the candidate scan was cut.
	Total                    int  `json:"total_incidents"`
	Truncated                bool `json:"truncated"`
	CandidateRows            int  `json:"candidate_rows"`
	CandidateWindowTruncated bool `json:"candidate_window_truncated"`
	LimitClampedTo           int  `json:"limit_clamped_to,omitempty"`
	// OtherMatching summarizes matching incidents without a bundle.
	OtherMatching []IncidentSummary `json:"other_matching_incidents"`
	// NoIncident is set when the subject has events but none carries a
	// negative signal: the bundle shown is plain usage, low severity.
	NoIncident bool `json:"no_incident_low_severity_summary"`
	// NoData is set when nothing matched at all; SuggestedFilters says
	// what to try instead.
	NoData           bool     `json:"no_data"`
	Message          string   `json:"message,omitempty"`
	SuggestedFilters []string `json:"suggested_filters"`
	// Matched says what the subject given resolved to (MCP and hook
	// lenses: "server labby", "hook PostToolUse:Bash").
	Matched string `json:"matched,omitempty"`
	// Usage summarizes the subject's events (skill lens).
	Usage                    []SkillSummary `json:"usage,omitempty"`
	WindowMinutes            int            `json:"window_minutes"`
	CorrelationWindowMinutes int            `json:"correlation_window_minutes"`
	// Report is the investigation as a Markdown report (format=md); the
	// evidence bundles are then left out of the answer.
	Report string `json:"report,omitempty"`
}

// MarkdownReport returns the Markdown report of the answer ("" unless
// asked for).
func (inv Investigation) MarkdownReport() string { return inv.Report }

// AbuseParams select abuse-term matches with their session context.
type AbuseParams struct {
	Tool    Tool
	Project string
	Session string
	Host    string
	Since   time.Time
	Until   time.Time
	Terms   []string
	// Before and After are the context rows around each match (at most
	// 20; zero means none — the CLI and API default them to 2).
	Before int
	After  int
	Limit  int
	// MaxBytes bounds the text of each row (default 1024).
	MaxBytes int
	// Cursor continues a listing (an offset into the matches).
	Cursor *Cursor
}

// AbuseMatch is one user row carrying an abuse term, with its context.
type AbuseMatch struct {
	Term   string        `json:"term"`
	Entry  EvidenceRow   `json:"entry"`
	Before []EvidenceRow `json:"before"`
	After  []EvidenceRow `json:"after"`
}

// AbuseMatches is the answer of an abuse-term search.
type AbuseMatches struct {
	Terms                    []string     `json:"terms"`
	Matches                  []AbuseMatch `json:"matches"`
	CandidateRows            int          `json:"candidate_rows"`
	CandidateCap             int          `json:"candidate_cap"`
	CandidateWindowTruncated bool         `json:"candidate_window_truncated"`
	Truncated                bool         `json:"truncated"`
	LimitClampedTo           int          `json:"limit_clamped_to,omitempty"`
	Next                     string       `json:"next,omitempty"`
}

// NoDataError is the not-found error of an investigation that matched
// nothing (NoData): its message and the suggested filters, so every
// surface that treats "nothing there" as an error says the same thing.
func (inv Investigation) NoDataError(lens string) error {
	msg := inv.Message
	if msg == "" {
		msg = "no " + lens + " incidents match these filters"
	}
	if len(inv.SuggestedFilters) > 0 {
		msg += "; try: " + strings.Join(inv.SuggestedFilters, "; ")
	}
	return Errorf(CodeNotFound, "%s", msg)
}

// CalibrationParams select the sessions a signal calibration reads.
type CalibrationParams struct {
	Tool    Tool
	Project string
	Host    string
	Since   time.Time
	Until   time.Time
}

// SignalCalibration is the tool's own check of its signals: for every
// signal of every lens, how often the sessions carrying it end badly
// against the sessions without it.
type SignalCalibration struct {
	// BadEnd says what a bad end is (see the docs).
	BadEnd string `json:"bad_end"`
	// Sessions counts the sessions judged (those with the user's acts in
	// scope); BadEndSessions how many of them ended badly.
	Sessions       int     `json:"sessions"`
	BadEndSessions int     `json:"bad_end_sessions"`
	BaseRate       float64 `json:"base_rate"`
	// MinSessions is the fewest sessions carrying a signal for a verdict.
	MinSessions int          `json:"min_sessions"`
	Signals     []SignalStat `json:"signals"`
	// Truncated says a scan was cut (the user acts or a lens's candidates):
	// the figures cover the newest part of the scope.
	Truncated bool `json:"truncated"`
	// Labelled is set when a labelled corpus was compared (CLI only).
	Labelled *LabelledSummary `json:"labelled,omitempty"`
}

// SignalStat is one signal's calibration.
type SignalStat struct {
	Lens   string `json:"lens"`
	Signal string `json:"signal"`
	// Sessions carrying the signal (in an incident of its lens), Judged of
	// them with the user's acts, BadEnd of those ending badly.
	Sessions int `json:"sessions"`
	Judged   int `json:"judged"`
	BadEnd   int `json:"bad_end"`
	// Rate and RateWithout are the bad-end rates of the sessions with and
	// without the signal; Lift their ratio, each rate smoothed by adding
	// half a bad end and one session, so that a zero never divides.
	Rate        float64 `json:"bad_end_rate"`
	RateWithout float64 `json:"bad_end_rate_without"`
	Lift        float64 `json:"lift"`
	// Verdict: separates, does_not_separate, inverse, too_few_sessions or
	// never_fired.
	Verdict string `json:"verdict"`
	// Labelled are its hits on a labelled corpus (when compared).
	Labelled *LabelledHits `json:"labelled,omitempty"`
}

// LabelledHits count one signal against a labelled corpus's expectations.
type LabelledHits struct {
	// Expected: cases listing the signal; Found of them where it fired on
	// the case's subject, Missed where it did not.
	Expected int `json:"expected"`
	Found    int `json:"found"`
	Missed   int `json:"missed"`
	// FalsePositives: cases expecting no incident where it fired; Extra:
	// incident cases where it fired without being listed.
	FalsePositives int `json:"false_positives"`
	Extra          int `json:"extra"`
}

// LabelledSummary sums a labelled comparison.
type LabelledSummary struct {
	Dir   string `json:"dir"`
	Cases int    `json:"cases"`
	// Passed counts the cases whose incident expectation held (an incident
	// found or not, as expected).
	Passed int `json:"passed"`
}
