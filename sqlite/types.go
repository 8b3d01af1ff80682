package sqlite

import "github.com/cortexhq/cortex/store"

// The reads' filters and rows are the store package's, shared with the
// PostgreSQL store; these aliases keep their sqlite names valid.
type (
	SessionScope     = store.SessionScope
	FailedSpan       = store.FailedSpan
	CandidateFilter  = store.CandidateFilter
	SkillCandidate   = store.SkillCandidate
	TextCandidate    = store.TextCandidate
	ToolCall         = store.ToolCall
	SessionCall      = store.SessionCall
	CallWindow       = store.CallWindow
	CallTexts        = store.CallTexts
	UserAct          = store.UserAct
	SessionSkill     = store.SessionSkill
	HookRun          = store.HookRun
	StoredRaw        = store.StoredRaw
	MCPFilter        = store.MCPFilter
	MCPCandidate     = store.MCPCandidate
	MCPUsage         = store.MCPUsage
	MCPName          = store.MCPName
	HookFilter       = store.HookFilter
	HookCandidate    = store.HookCandidate
	HookName         = store.HookName
	HookRecord       = store.HookRecord
	HookRunSpan      = store.HookRunSpan
	SessionSpan      = store.SessionSpan
	SessionFilter    = store.SessionFilter
	HookUsage        = store.HookUsage
	TranscriptEvents = store.TranscriptEvents
	LogParams        = store.LogParams
	LogEntry         = store.LogEntry
	LogList          = store.LogList
	SkillLoad        = store.SkillLoad
	SkillBody        = store.SkillBody
	ClaimRow         = store.ClaimRow
)
