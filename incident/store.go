package incident

import (
	"context"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

// Store is what the engine reads. Both stores implement it — sqlite.DB on
// a laptop, postgres.DB for a team — and give the same answers for the
// same data (a parity test checks it), so no lens logic depends on the
// store. Times are UTC; rows come in (timestamp, id) order unless a method
// says otherwise; limits are caps the caller chose.
type Store interface {
	// Candidate scans, newest first, at most f.Limit rows.
	SkillCandidates(ctx context.Context, f store.CandidateFilter) ([]store.SkillCandidate, error)
	UserActCandidates(ctx context.Context, f store.CandidateFilter) ([]store.UserAct, error)
	// UserActKeys is UserActCandidates without the texts and readings; with
	// saying set, only interrupts, refusals and acts whose stored reading
	// says something (valid when VoicesCurrent reports true).
	UserActKeys(ctx context.Context, f store.CandidateFilter, saying bool) ([]store.UserAct, error)
	// VoicesCurrent reports whether every user event's stored reading was
	// made by the rules of the given version.
	VoicesCurrent(ctx context.Context, version int) (bool, error)
	MCPCandidates(ctx context.Context, f store.MCPFilter) ([]store.MCPCandidate, error)
	// FailedCallSessions returns the sessions with at least min failed
	// calls in f's range, each with the span its failures fill there, the
	// newest failure first, at most f.Limit.
	FailedCallSessions(ctx context.Context, f store.CandidateFilter, min int) ([]store.FailedSpan, error)
	// ConcessionSessions returns the sessions in f's range where the agent
	// conceded a mistake or granted the user a point (claim.Admission,
	// claim.Agreement), the newest first, at most f.Limit; valid when
	// ClaimsCurrent reports true.
	ConcessionSessions(ctx context.Context, f store.CandidateFilter) ([]store.SessionScope, error)
	HookCandidates(ctx context.Context, f store.HookFilter) ([]store.HookCandidate, error)
	HookConfigRows(ctx context.Context, f store.HookFilter) ([]store.HookCandidate, error)
	// UserTextMatches finds user-typed rows whose text holds any of terms
	// (each a phrase of the full-text index) — and, when few are, every
	// user row the index has not reached yet (the caller reads their
	// words); complete is false when rows not yet searchable were left
	// out.
	UserTextMatches(ctx context.Context, terms []string, f store.CandidateFilter) (rows []store.TextCandidate, complete bool, err error)

	// One session's reads (from/to bound the time; a zero time leaves a
	// side open where the method says so).
	SessionUserActs(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]store.UserAct, error)
	// SessionCalls returns a session's calls with their texts and stored
	// facts (package toolcall).
	SessionCalls(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]store.SessionCall, error)
	// SessionCallNames is SessionCalls from the session's call index
	// alone: which call, when, which tool and whether it failed.
	SessionCallNames(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]store.ToolCall, error)
	SessionMCPCalls(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]store.ToolCall, error)
	SessionToolEvents(ctx context.Context, s store.SessionScope, from, to time.Time, mcpOnly bool, limit int) ([]cortex.ToolEventRow, error)
	SessionHookRecords(ctx context.Context, s store.SessionScope) ([]store.HookRecord, error)
	SessionUserRows(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error)
	SessionAssistantRows(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error)
	// SessionClaimRows is SessionAssistantRows of the rows whose stored
	// claims (package claim) say something: every row that claims
	// something when ClaimsCurrent reports true.
	SessionClaimRows(ctx context.Context, s store.SessionScope, from, to time.Time, limit int) ([]cortex.EvidenceRow, error)
	// ClaimsCurrent reports whether every assistant row's stored claims
	// were read by the given rules version.
	ClaimsCurrent(ctx context.Context, version int) (bool, error)
	SessionRowsBefore(ctx context.Context, s store.SessionScope, t time.Time, id int64, limit int) ([]cortex.EvidenceRow, error)
	SessionRowsAfter(ctx context.Context, s store.SessionScope, t time.Time, id int64, limit int) ([]cortex.EvidenceRow, error)
	FirstPrompt(ctx context.Context, s store.SessionScope) (int64, error)
	NextContextRow(ctx context.Context, s store.SessionScope, t time.Time, afterID int64, within time.Duration) (int64, error)
	ResultRows(ctx context.Context, s store.SessionScope, callLogIDs []int64) (map[int64]int64, error)
	SessionsBetween(ctx context.Context, f store.SessionFilter) ([]store.SessionSpan, error)

	// Many sessions per query (the skill and friction lenses read
	// hundreds per answer). Whole sessions' user acts and skill events
	// (without metadata: see SkillEventMeta), at most limit per session,
	// in time order.
	SessionsUserActs(ctx context.Context, scopes []store.SessionScope, limit int) (map[store.SessionScope][]store.UserAct, error)
	SessionsSkillEvents(ctx context.Context, scopes []store.SessionScope, limit int) (map[store.SessionScope][]store.SessionSkill, error)
	// SessionCallFactsMany returns the calls of many windows (at most
	// limit each, the first) with their stored facts and no texts (see
	// CallTextsByID); SessionHookRunsMany the runtime hook runs that did
	// not succeed (a window's threads are ignored).
	SessionCallFactsMany(ctx context.Context, ws []store.CallWindow, limit int) ([][]store.SessionCall, error)
	SessionHookRunsMany(ctx context.Context, ws []store.CallWindow, limit int) ([][]store.HookRun, error)
	// SessionClaimsMany returns the assistant rows of many windows whose
	// stored claims are about the dialogue (claim.Dialogue: the agent
	// conceding, asking, saying it is done), at most limit each; valid
	// when ClaimsCurrent reports true.
	SessionClaimsMany(ctx context.Context, ws []store.CallWindow, limit int) ([][]store.ClaimRow, error)
	// CallTextsByID returns the texts of tool calls, by event id.
	CallTextsByID(ctx context.Context, ids []int64) (map[int64]store.CallTexts, error)
	// CallWhysByID returns the stored failure lines of tool calls, by
	// event id (calls without one left out): what loops compare, without
	// the calls' texts.
	CallWhysByID(ctx context.Context, ids []int64) (map[int64]string, error)
	// SkillEventMeta returns a skill event's stored metadata.
	SkillEventMeta(ctx context.Context, id int64) (map[string]string, error)
	// Sessions lists sessions (a labelled corpus's, by transcript path).
	Sessions(ctx context.Context, p cortex.SessionParams) (cortex.SessionList, error)

	// Rows and events by id.
	RowsByID(ctx context.Context, ids []int64) ([]cortex.EvidenceRow, error)
	RawRecords(ctx context.Context, ids []int64) (map[int64]store.StoredRaw, error)
	UserActsByLogID(ctx context.Context, logIDs []int64) ([]store.UserAct, error)
	SkillEventsByID(ctx context.Context, ids []int64) ([]cortex.SkillEventRow, error)
	ToolCallsByID(ctx context.Context, ids []int64) ([]store.ToolCall, error)
	ToolEventsByID(ctx context.Context, ids []int64) ([]cortex.ToolEventRow, error)
	HookEventsByID(ctx context.Context, ids []int64) ([]cortex.HookEventRow, error)
	// NearbyLogs are non-AI log rows of a host (or its short name).
	NearbyLogs(ctx context.Context, host string, from, to time.Time, errorsOnly bool, limit int) ([]cortex.EvidenceRow, error)

	// Names and usage, to resolve what a user typed and to explain empty
	// answers.
	SkillNames(ctx context.Context) ([]string, error)
	SkillNamesMatching(ctx context.Context, skill string) ([]string, error)
	KnownSkillNames(ctx context.Context) (map[string]bool, error)
	SkillSummaries(ctx context.Context, p cortex.SkillEventParams) (cortex.EventList[cortex.SkillSummary], error)
	MCPNames(ctx context.Context) ([]store.MCPName, error)
	MCPUsage(ctx context.Context, f store.MCPFilter) (store.MCPUsage, error)
	HookNames(ctx context.Context) ([]store.HookName, error)
	HookUsage(ctx context.Context, f store.HookFilter) (store.HookUsage, error)
	HookCommandRuns(ctx context.Context, tool cortex.Tool, host, event, command string, limit int) ([]store.HookRunSpan, error)
}
