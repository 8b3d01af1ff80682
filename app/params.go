package app

import (
	"context"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/report"
)

// The parameters of the actions. Their JSON schemas (and so the MCP tool
// inputs, the REST query parameters and the generated docs) are derived
// from these structs; the wording is shared and short on purpose, because
// every agent session that lists Cortex's tools pays for it in tokens.
// Allowed values are enums (see enums in registry.go), not prose.

// ScopeParams are the filters every listing takes: which agent, project,
// session, host and time range.
type ScopeParams struct {
	// Agent was called tool before; tool is still accepted.
	Agent   string `json:"agent,omitempty" alias:"tool" doc:"only this agent: claude, codex or gemini (older name: tool)"`
	Project string `json:"project,omitempty" doc:"only this project (as stored, e.g. a repository path)"`
	Session string `json:"session,omitempty" doc:"only this session id"`
	Host    string `json:"host,omitempty" doc:"only this host" unlisted:"narrows by machine"`
	Since   string `json:"since,omitempty" jsonschema:"e.g. 7d, today, 2026-11-30" doc:"newer than: 30m, 7d, 2w, today, yesterday, 2026-11-30 or RFC 3339"`
	Until   string `json:"until,omitempty" doc:"older than (same forms as since)"`
}

// PageParams continue a listing where the previous page ended.
type PageParams struct {
	Cursor string `json:"cursor,omitempty" doc:"continue a listing: the next of the previous page"`
}

func (s *Service) scope(p ScopeParams) (cortex.Tool, time.Time, time.Time, error) {
	if err := checkTool(cortex.Tool(p.Agent)); err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	since, err := s.timeParam("since", p.Since)
	if err != nil {
		return "", time.Time{}, time.Time{}, err
	}
	until, err := s.timeParam("until", p.Until)
	return cortex.Tool(p.Agent), since, until, err
}

func (s *Service) timeParam(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := cortex.ParseTimeArg(v, s.Now())
	if err != nil {
		return time.Time{}, cortex.Errorf(cortex.CodeInvalid, "%s: %s", name, cortex.ErrorMessage(err))
	}
	return t, nil
}

func (s *Service) filter(p ScopeParams, limit int, pg PageParams) (cortex.EventFilter, error) {
	tool, since, until, err := s.scope(p)
	if err != nil {
		return cortex.EventFilter{}, err
	}
	after, err := cortex.DecodeCursor(pg.Cursor)
	return cortex.EventFilter{Tool: tool, Project: p.Project, Session: p.Session, Host: p.Host, Since: since, Until: until,
		Limit: limit, After: after}, err
}

// StatusParams are the parameters of status (none).
type StatusParams struct{}

// SearchParams are the parameters of search.
type SearchParams struct {
	Query   string `json:"query" jsonschema:"words, \"phrases\", prefix*, OR" doc:"words, \"quoted phrases\", prefix* and OR; never passed to FTS5 verbatim"`
	Agent   string `json:"agent,omitempty" alias:"tool" doc:"only this agent: claude, codex or gemini (older name: tool)"`
	Project string `json:"project,omitempty" doc:"only this project"`
	Session string `json:"session,omitempty" doc:"only this session id"`
	Host    string `json:"host,omitempty" doc:"only this host" unlisted:"narrows by machine"`
	Role    string `json:"role,omitempty" doc:"only rows of this role"`
	Since   string `json:"since,omitempty" jsonschema:"e.g. 7d, today, 2026-11-30" doc:"newer than: 30m, 7d, 2w, today, yesterday, 2026-11-30 or RFC 3339"`
	Until   string `json:"until,omitempty" doc:"older than (same forms as since)"`
	Rank    bool   `json:"rank,omitempty" jsonschema:"by relevance" doc:"order by relevance instead of newest first"`
	Limit   int    `json:"limit,omitempty" jsonschema:"20, max 500" doc:"maximum hits (default 20, max 500)"`
	PageParams
}

// SessionsParams are the parameters of sessions.
type SessionsParams struct {
	Agent   string `json:"agent,omitempty" alias:"tool" doc:"only this agent: claude, codex or gemini (older name: tool)"`
	Project string `json:"project,omitempty" doc:"only this project"`
	Host    string `json:"host,omitempty" doc:"only this host" unlisted:"narrows by machine"`
	Since   string `json:"since,omitempty" jsonschema:"active since: e.g. 7d, today" doc:"active since: 30m, 7d, 2w, today, yesterday, 2026-11-30 or RFC 3339"`
	Until   string `json:"until,omitempty" jsonschema:"started before (as since)" doc:"started before (same forms as since)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"50, max 1000" doc:"maximum sessions (default 50, max 1000)"`
	PageParams
}

// SkillEventsParams are the parameters of skill_events.
type SkillEventsParams struct {
	ScopeParams
	Skill   string `json:"skill,omitempty" doc:"only this skill (plugin:skill or skill)"`
	Plugin  string `json:"plugin,omitempty" doc:"only skills of this plugin"`
	Summary bool   `json:"summary,omitempty" jsonschema:"a row per skill" doc:"one row per skill: events, sessions, first and last seen"`
	Limit   int    `json:"limit,omitempty" jsonschema:"50, max 500" doc:"maximum rows (default 50, max 500)"`
	PageParams
}

// ToolEventsParams are the parameters of mcp_events.
type ToolEventsParams struct {
	ScopeParams
	ToolName  string `json:"tool_name,omitempty" jsonschema:"e.g. Bash" doc:"only this tool name (e.g. Bash or mcp__labby__search)"`
	MCPServer string `json:"mcp_server,omitempty" doc:"only calls to this MCP server"`
	MCPTool   string `json:"mcp_tool,omitempty" doc:"only calls of this MCP tool"`
	OnlyMCP   bool   `json:"only_mcp,omitempty" doc:"only calls classified as MCP"`
	Errors    bool   `json:"errors,omitempty" jsonschema:"failed calls only" doc:"only failed calls"`
	Limit     int    `json:"limit,omitempty" jsonschema:"50, max 500" doc:"maximum rows (default 50, max 500)"`
	PageParams
}

// HookEventsParams are the parameters of hook_events.
type HookEventsParams struct {
	ScopeParams
	Hook         string `json:"hook,omitempty" jsonschema:"e.g. PostToolUse:Bash" doc:"hook name (e.g. PostToolUse:Bash) or event"`
	HookEvent    string `json:"hook_event,omitempty" jsonschema:"e.g. PreToolUse" doc:"only this hook event (e.g. PreToolUse)"`
	HookSource   string `json:"hook_source,omitempty" doc:"only hooks from this source (settings file, plugin)"`
	Status       string `json:"status,omitempty" doc:"only this status"`
	EvidenceKind string `json:"evidence_kind,omitempty" doc:"only this evidence kind (runtime rows or configuration)"`
	Limit        int    `json:"limit,omitempty" jsonschema:"50, max 500" doc:"maximum rows (default 50, max 500)"`
	PageParams
}

// IncidentFilterParams are the parameters every incident action takes.
type IncidentFilterParams struct {
	ScopeParams
	WindowMinutes int      `json:"window_minutes,omitempty" jsonschema:"gap ending an incident (10)" doc:"minutes without a candidate that end an incident (default 10, 1..120)" tuning:"true"`
	Signals       []string `json:"signals,omitempty" doc:"only incidents with one of these signals"`
	MinScore      float64  `json:"min_score,omitempty" doc:"only incidents scoring at least this" tuning:"true"`
	IncidentID    string   `json:"incident_id,omitempty" doc:"only this incident (found at any rank)"`
}

// IncidentListParams bound an incident listing.
type IncidentListParams struct {
	Limit int `json:"limit,omitempty" jsonschema:"20, max 100" doc:"maximum incidents (default 20, max 100)"`
	PageParams
}

// AnySubjectParams are the subject filters of every lens, for the
// all-lens actions: a subject given picks its lens.
type AnySubjectParams struct {
	SkillSubjectParams
	MCPSubjectParams
	HookSubjectParams
	AbuseSubjectParams
}

func (a AnySubjectParams) apply(p *cortex.IncidentParams) {
	a.SkillSubjectParams.apply(p)
	a.MCPSubjectParams.apply(p)
	a.HookSubjectParams.apply(p)
	a.AbuseSubjectParams.apply(p)
}

// IncidentsParams are the parameters of incidents: every lens at once, or
// the lenses asked for, or the lens of the subject given.
type IncidentsParams struct {
	IncidentFilterParams
	Lens []string `json:"lens,omitempty" doc:"only these lenses (default: every lens; a subject filter picks its lens)"`
	AnySubjectParams
	UsageParams
	IncidentListParams
}

// InvestigateAnyParams are the parameters of investigate: an incident of
// any lens by id, or the top incidents of a lens (or of a subject's).
type InvestigateAnyParams struct {
	IncidentFilterParams
	Lens string `json:"lens,omitempty" doc:"the lens to investigate when no incident_id is given (a subject filter picks its lens)"`
	AnySubjectParams
	InvestigateBoundsParams
}

// SkillSubjectParams select skills.
type SkillSubjectParams struct {
	Skill  string `json:"skill,omitempty" jsonschema:"skill or plugin:skill" doc:"only this skill (plugin:skill, or a name matching skill or plugin:skill)"`
	Plugin string `json:"plugin,omitempty" doc:"only skills of this plugin"`
}

// AbuseSubjectParams select abuse terms.
type AbuseSubjectParams struct {
	Terms []string `json:"terms,omitempty" jsonschema:"abuse terms" doc:"abuse terms instead of the defaults (at most 16)"`
}

// MCPSubjectParams select MCP servers and tools.
type MCPSubjectParams struct {
	Target    string `json:"target,omitempty" jsonschema:"server or server/tool" doc:"an MCP server (labby), a tool name as the agent saw it (mcp__labby__search) or server/tool"`
	MCPServer string `json:"mcp_server,omitempty" doc:"only this MCP server"`
	MCPTool   string `json:"mcp_tool,omitempty" doc:"only this MCP tool of the server"`
	ToolName  string `json:"tool_name,omitempty" jsonschema:"e.g. mcp__labby__search" doc:"only this tool name as the agent saw it (mcp__server__tool)"`
}

// HookSubjectParams select hooks.
type HookSubjectParams struct {
	Hook         string `json:"hook,omitempty" jsonschema:"e.g. PostToolUse:Bash" doc:"a hook as typed: PostToolUse, post_tool_use or PostToolUse:Bash (event, or event:matcher)"`
	HookEvent    string `json:"hook_event,omitempty" jsonschema:"e.g. PreToolUse" doc:"only this hook event (e.g. PreToolUse)"`
	HookSource   string `json:"hook_source,omitempty" doc:"only hooks from this source"`
	EvidenceKind string `json:"evidence_kind,omitempty" doc:"only this evidence kind"`
}

// UsageParams ask a listing for use without a negative signal too.
type UsageParams struct {
	IncludeUsage bool `json:"include_usage,omitempty" jsonschema:"also use without a problem" doc:"also list use without a negative signal"`
}

// BundleBoundsParams bound the evidence bundles of investigations and
// assessments.
type BundleBoundsParams struct {
	Limit                    int  `json:"limit,omitempty" jsonschema:"incidents (1 or 3, max 10)" doc:"evidence bundles (default 1 for a subject or incident id, else 3; max 10)"`
	All                      bool `json:"all,omitempty" doc:"a bundle for every matching incident (up to 10)"`
	CorrelationWindowMinutes int  `json:"correlation_window_minutes,omitempty" jsonschema:"nearby window (5)" doc:"minutes around the incident for nearby logs, errors and tool failures (default 5, 1..120)" tuning:"true"`
	MaxBytes                 int  `json:"max_bytes,omitempty" jsonschema:"per row (1024)" doc:"bound on the text of each evidence row (default 1024, max 16384)" tuning:"true"`
}

// InvestigateBoundsParams bound investigations: bundles, and whether to
// return them whole.
type InvestigateBoundsParams struct {
	BundleBoundsParams
	ReportParams
	Detail bool `json:"detail,omitempty" jsonschema:"full evidence" doc:"the full evidence bundles instead of their summaries (findings, anchors, counts, ids)"`
}

// SkillIncidentsParams are the parameters of skill_incidents.
type SkillIncidentsParams struct {
	IncidentFilterParams
	SkillSubjectParams
	UsageParams
	IncidentListParams
}

// SkillInvestigateParams are the parameters of skill_investigate.
type SkillInvestigateParams struct {
	IncidentFilterParams
	SkillSubjectParams
	InvestigateBoundsParams
}

// SkillAssessParams are the parameters of skill_assess.
type SkillAssessParams struct {
	IncidentFilterParams
	SkillSubjectParams
	BundleBoundsParams
	ReportParams
}

// ReportParams ask for a Markdown report instead of the JSON evidence.
type ReportParams struct {
	Format string `json:"format,omitempty" doc:"json (default) or md: a Markdown report in the answer's report field (for an issue or a PR; the bundles are then left out)"`
}

// AbuseIncidentsParams are the parameters of abuse_incidents.
type AbuseIncidentsParams struct {
	IncidentFilterParams
	AbuseSubjectParams
	IncidentListParams
}

// AbuseInvestigateParams are the parameters of abuse_investigate.
type AbuseInvestigateParams struct {
	IncidentFilterParams
	AbuseSubjectParams
	InvestigateBoundsParams
}

// MCPIncidentsParams are the parameters of mcp_incidents.
type MCPIncidentsParams struct {
	IncidentFilterParams
	MCPSubjectParams
	UsageParams
	IncidentListParams
}

// MCPInvestigateParams are the parameters of mcp_investigate.
type MCPInvestigateParams struct {
	IncidentFilterParams
	MCPSubjectParams
	InvestigateBoundsParams
}

// FrictionSubjectParams select friction by what it is charged to.
type FrictionSubjectParams struct {
	Skill string `json:"skill,omitempty" jsonschema:"skill or plugin:skill" doc:"only friction charged to this skill or command (plugin:skill, or the skill part)"`
}

func (f FrictionSubjectParams) apply(p *cortex.IncidentParams) { p.Skill = f.Skill }

// FrictionIncidentsParams are the parameters of friction_incidents.
type FrictionIncidentsParams struct {
	IncidentFilterParams
	FrictionSubjectParams
	IncidentListParams
}

// FrictionInvestigateParams are the parameters of friction_investigate.
type FrictionInvestigateParams struct {
	IncidentFilterParams
	FrictionSubjectParams
	InvestigateBoundsParams
}

// HookIncidentsParams are the parameters of hook_incidents.
type HookIncidentsParams struct {
	IncidentFilterParams
	HookSubjectParams
	UsageParams
	IncidentListParams
}

// HookInvestigateParams are the parameters of hook_investigate.
type HookInvestigateParams struct {
	IncidentFilterParams
	HookSubjectParams
	InvestigateBoundsParams
}

// subject is a lens's subject parameters.
type subject interface {
	apply(p *cortex.IncidentParams)
}

func (k SkillSubjectParams) apply(p *cortex.IncidentParams) { p.Skill, p.Plugin = k.Skill, k.Plugin }

func (a AbuseSubjectParams) apply(p *cortex.IncidentParams) { p.Terms = a.Terms }

func (m MCPSubjectParams) apply(p *cortex.IncidentParams) {
	p.Target, p.MCPServer, p.MCPTool, p.ToolName = m.Target, m.MCPServer, m.MCPTool, m.ToolName
}

func (h HookSubjectParams) apply(p *cortex.IncidentParams) {
	p.Hook, p.HookEvent, p.HookSource, p.EvidenceKind = h.Hook, h.HookEvent, h.HookSource, h.EvidenceKind
}

// noSubject is the subject of the all-lens actions: none.
type noSubject struct{}

func (noSubject) apply(*cortex.IncidentParams) {}

func (s *Service) incidentParams(f IncidentFilterParams, subj subject, limit int) (cortex.IncidentParams, error) {
	tool, since, until, err := s.scope(f.ScopeParams)
	p := cortex.IncidentParams{Tool: tool, Project: f.Project, Session: f.Session, Host: f.Host, Since: since, Until: until,
		WindowMinutes: f.WindowMinutes, Signals: f.Signals, MinScore: f.MinScore, IncidentID: f.IncidentID, Limit: limit}
	subj.apply(&p)
	return p, err
}

// listParams are an incident listing's parameters with its page.
func (s *Service) listParams(f IncidentFilterParams, subj subject, l IncidentListParams, u UsageParams) (cortex.IncidentParams, error) {
	ip, err := s.incidentParams(f, subj, l.Limit)
	if err != nil {
		return ip, err
	}
	ip.IncludeUsage = u.IncludeUsage
	ip.After, err = cortex.DecodeCursor(l.Cursor)
	return ip, err
}

// listIncidents runs an incident listing of a lens.
func (s *Service) listIncidents(ctx context.Context, lens string, f IncidentFilterParams, subj subject, l IncidentListParams,
	u UsageParams) (cortex.IncidentList, error) {
	ip, err := s.listParams(f, subj, l, u)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	return s.Incidents(ctx, lens, ip)
}

// investigateLens runs an investigation of a lens: summaries unless
// b.Detail.
func (s *Service) investigateLens(ctx context.Context, lens string, f IncidentFilterParams, subj subject,
	b InvestigateBoundsParams) (cortex.Investigation, error) {
	md, err := markdownFormat(b.Format)
	if err != nil {
		return cortex.Investigation{}, err
	}
	ip, err := s.investigateParams(f, subj, b.BundleBoundsParams)
	if err != nil {
		return cortex.Investigation{}, err
	}
	inv, err := s.Investigate(ctx, lens, ip)
	return reported(inv, md, b.Detail), err
}

// reported shapes an investigation's answer: a Markdown report (md) in
// place of the evidence, else the bundles whole (detail) or summarized.
func reported(inv cortex.Investigation, md, detail bool) cortex.Investigation {
	if md {
		inv.Report, inv.Bundles = report.Investigation(inv), []cortex.Bundle{}
		return inv
	}
	return inv.Summarized(detail)
}

// markdownFormat reads a format parameter: "json" (or empty) or "md".
func markdownFormat(f string) (bool, error) {
	switch f {
	case "", "json":
		return false, nil
	case "md", "markdown":
		return true, nil
	}
	return false, cortex.Errorf(cortex.CodeInvalid, "format must be json or md, not %q", f)
}

// maxRowBytes bounds max_bytes on the remote surfaces: ten bundles of
// bounded rows stay well under a megabyte.
const maxRowBytes = 16 << 10

func (s *Service) investigateParams(f IncidentFilterParams, subj subject, b BundleBoundsParams) (cortex.InvestigateParams, error) {
	ip, err := s.incidentParams(f, subj, b.Limit)
	return cortex.InvestigateParams{IncidentParams: ip, All: b.All, CorrelationWindowMinutes: b.CorrelationWindowMinutes,
		MaxBytes: min(b.MaxBytes, maxRowBytes)}, err
}

// AbuseParams are the parameters of abuse.
type AbuseParams struct {
	ScopeParams
	Terms    []string `json:"terms,omitempty" jsonschema:"abuse terms" doc:"abuse terms instead of the defaults (at most 16)"`
	Before   *int     `json:"before,omitempty" jsonschema:"context rows (2)" doc:"session rows before each match (default 2, max 20)"`
	After    *int     `json:"after,omitempty" jsonschema:"context rows (2)" doc:"session rows after each match (default 2, max 20)"`
	Limit    int      `json:"limit,omitempty" jsonschema:"20, max 100" doc:"maximum matches (default 20, max 100)"`
	MaxBytes int      `json:"max_bytes,omitempty" jsonschema:"per row (1024)" doc:"bound on the text of each row (default 1024)" tuning:"true"`
	PageParams
}

// LLMInvocationsParams are the parameters of llm_invocations.
type LLMInvocationsParams struct {
	Since  string `json:"since,omitempty" jsonschema:"30m, 24h, 7d, RFC 3339" doc:"newer than (30m, 24h, 7d, RFC 3339)"`
	Action string `json:"action,omitempty" doc:"only this action"`
	Status string `json:"status,omitempty" doc:"only this status"`
	Limit  int    `json:"limit,omitempty" jsonschema:"50, max 500" doc:"maximum rows (default 50, max 500)"`
	PageParams
}

// BackfillActionParams are the parameters of skills_backfill.
type BackfillActionParams struct {
	DryRun  *bool    `json:"dry_run" jsonschema:"required: true counts, false writes" doc:"required: true counts what would be extracted, false writes it"`
	Kinds   []string `json:"kinds,omitempty" jsonschema:"event kinds (default skills)" doc:"event kinds: skills, mcp, hooks, users, bodies (skill versions); default skills"`
	Since   string   `json:"since,omitempty" jsonschema:"only rows from this time" doc:"only rows newer than this"`
	AfterID int64    `json:"after_id,omitempty" jsonschema:"continue after this row id" doc:"continue a truncated run after this row id"`
	Limit   int      `json:"limit,omitempty" jsonschema:"rows to scan (default 100000, max 1000000)" doc:"rows to scan (default 100000, max 1000000)"`
}

// RescanActionParams are the parameters of redact_rescan.
type RescanActionParams struct {
	DryRun *bool `json:"dry_run" jsonschema:"required: true counts, false rewrites" doc:"required: true counts what the current rules would redact, false rewrites it"`
}

// PurgeActionParams are the parameters of purge.
type PurgeActionParams struct {
	DryRun  *bool  `json:"dry_run" jsonschema:"required: true counts, false deletes" doc:"required: true counts what would be deleted, false deletes it"`
	Session string `json:"session,omitempty" jsonschema:"this session's rows" doc:"delete the rows of this session id"`
	Source  string `json:"source,omitempty" jsonschema:"this transcript file's rows" doc:"delete the rows read from this transcript file (its path as indexed)"`
	Match   string `json:"match,omitempty" jsonschema:"rows containing this text (8+ chars)" doc:"delete every row whose text or raw record contains this literal text (at least 8 characters; scans every row)"`
	Agent   string `json:"agent,omitempty" alias:"tool" doc:"only rows of this agent: claude, codex or gemini (older name: tool)"`
}

// HelpParams are the parameters of help.
type HelpParams struct {
	Action string `json:"action,omitempty" doc:"describe this action only"`
}
