package cortex

// Evidence kinds say how an event is known. Runtime facts and configuration
// facts must never be confused: a configured hook is not proof it ran.
const (
	// EvidenceStructured is a structured JSON field of a transcript record
	// (Claude attributionSkill, a Skill tool_use, an invoked_skills
	// attachment).
	EvidenceStructured = "structured_json_field"
	// EvidenceContent is text inside a transcript record (a Codex <skill>
	// block, a Claude skill body).
	EvidenceContent = "transcript_content"
	// EvidenceRuntime is a hook run written into a transcript: proof the
	// hook executed.
	EvidenceRuntime = "runtime_transcript"
	// EvidenceConfig is a hook found in an agent's configuration file.
	EvidenceConfig = "config_inventory"
	// EvidenceTrust is a hook's trusted-hash state (Codex config.toml
	// [hooks.state]).
	EvidenceTrust = "trusted_hash_state"
)

// Skill event kinds.
const (
	SkillClaudeAttribution = "claude_attribution"    // attributionSkill on an assistant record
	SkillClaudeTool        = "claude_skill_tool"     // a Skill tool_use (input.skill)
	SkillClaudeBody        = "claude_skill_body"     // the injected skill body after a Skill tool_use
	SkillClaudeSlash       = "claude_slash_command"  // a skill body injected for a user slash command
	SkillClaudeInvoked     = "claude_invoked_skills" // an invoked_skills attachment (re-injection)
	SkillCodexBlock        = "codex_skill_block"     // a <skill><name>…</name> block in a Codex rollout
	SkillClaudeCommand     = "claude_user_command"   // a slash command the user typed (a skill, or a custom command)
	SkillCodexRead         = "codex_skill_read"      // a Codex shell call printing an installed SKILL.md
	SkillCodexAnnounced    = "codex_skill_announced" // a Codex message opening "Using `name` …"
)

// SkillEvent is one use of a skill seen in a transcript record.
type SkillEvent struct {
	SkillName    string
	SkillPlugin  string
	SkillPath    string
	EventKind    string
	EvidenceKind string
	// Meta holds extras for metadata_json, e.g. skill_content_sha256 (the
	// SHA-256 of the skill body when it is visible), field, args.
	Meta map[string]string
}

// Tool-call event kinds: the transcript shape an event came from.
const (
	ToolClaudeUse       = "claude_tool_use"
	ToolClaudeResult    = "claude_tool_result"
	ToolCodexCall       = "codex_function_call"
	ToolCodexOutput     = "codex_function_call_output"
	ToolCodexMCPEnd     = "codex_mcp_tool_call_end"
	ToolCodexExecEnd    = "codex_exec_command_end"
	ToolCodexPatchApply = "codex_patch_apply_end"
	ToolGeminiToolCall  = "gemini_tool_call"
)

// Tool call statuses (ai_mcp_events.status).
const (
	CallPending   = "pending"   // the call is stored, no result yet
	CallSuccess   = "success"   // a result without failure
	CallError     = "error"     // is_error, a non-zero exit, a failed MCP result
	CallCancelled = "cancelled" // cancelled before completing
	CallUnknown   = "unknown"   // a result whose outcome cannot be derived
)

// ToolEvent is one side of a tool call — the call, its result, or both —
// seen in a transcript record. The store merges the sides of one call
// (same agent, session and call id) into one row, whichever arrives first.
type ToolEvent struct {
	CallID string
	// ToolName is the full name (e.g. Bash, exec_command,
	// mcp__server__tool); empty on a result-only event (the call names it).
	ToolName  string
	MCPServer string
	MCPTool   string
	EventKind string
	TurnID    string
	// HasCall and HasResult say which sides this event carries.
	HasCall   bool
	HasResult bool
	// Result side.
	Status   string
	IsError  *bool
	ExitCode *int
	// ArgumentsJSON, OutputPreview and ErrorText are bounded and redacted.
	ArgumentsJSON string
	OutputPreview string
	ErrorText     string
	Meta          map[string]string
}

// Hook statuses (ai_hook_events.status).
const (
	HookSuccess    = "success"
	HookFailed     = "failed"
	HookBlocked    = "blocked"
	HookCancelled  = "cancelled"
	HookError      = "error"
	HookUnknown    = "unknown"
	HookConfigured = "configured" // config inventory rows only
)

// HookEvent is one hook run seen in a transcript record, or one configured
// hook found in a configuration file.
type HookEvent struct {
	HookEvent  string // SessionStart, PreToolUse, Stop, …
	HookName   string // e.g. PostToolUse:Bash, or the matcher for config rows
	HookSource string // config rows: claude:settings.json, codex:hooks.json, …
	Command    string
	Status     string
	ExitCode   *int
	DurationMS *int64
	// StdoutPreview and StderrPreview are bounded and redacted.
	StdoutPreview       string
	StderrPreview       string
	PersistedOutputPath string
	TrustedHash         string
	EvidenceKind        string
	// Index orders several hook events of one record (a stop-hook summary
	// lists every hook it ran).
	Index int
	Meta  map[string]string
}

// User event kinds: what the human at the keyboard did, as the agent
// recorded it. They are the ground truth of every incident lens.
const (
	// UserPrompt is a prompt the human typed (queued while the agent
	// worked included); never injected context, skill bodies, command
	// output or a parent agent's prompt to a subagent.
	UserPrompt = "prompt"
	// UserCommand is a slash command the human typed (/name args).
	UserCommand = "command"
	// UserShell is a shell command the human ran themselves (Claude's !).
	UserShell = "shell"
	// UserInterrupt is the human stopping the agent (Esc, Ctrl-C): Claude
	// "[Request interrupted by user…]", Codex turn_aborted, Gemini
	// "Request cancelled.".
	UserInterrupt = "interrupt"
	// UserRejection is the human refusing a tool call (Claude's "The user
	// doesn't want to proceed with this tool use", a denied Codex
	// approval, a cancelled Gemini call), with their reason when given.
	UserRejection = "rejection"
	// UserClarify is the human answering a question in their own words
	// instead of choosing an option (Claude AskUserQuestion): not a
	// refusal.
	UserClarify = "clarify"
)

// UserEvent is one act of the human in a transcript record.
type UserEvent struct {
	Kind string
	// Text is the human's own words: the prompt without IDE context or
	// attachment lists, the command with its arguments, a rejection's
	// reason. Bounded and redacted.
	Text string
	// CallID is the refused tool call (rejections, clarifications).
	CallID string
	// Source is how the agent marks the prompt: "typed" (Claude
	// promptSource), "queued", or empty when the format does not say.
	Source string
	Meta   map[string]string
	// Voice is what Text says as package voice read it (its encoded
	// reading, "" when it says nothing), VoiceVersion the version of the
	// rules that read it (0: not read).
	Voice        string
	VoiceVersion int
}

// Events are the normalized events of one transcript record.
type Events struct {
	Skills []SkillEvent
	Tools  []ToolEvent
	Hooks  []HookEvent
	Users  []UserEvent
}

// Empty reports whether there are no events.
func (e *Events) Empty() bool { return len(e.Skills)+len(e.Tools)+len(e.Hooks)+len(e.Users) == 0 }
