// Package store holds what the readers of a Cortex store exchange with it:
// the filters and rows of the incident engine's and the viewers' reads.
// Both stores — sqlite (a laptop) and postgres (a team) — answer the same
// reads with these types, so the incident engine and the service layer
// never know which one they read. It has no I/O and no SQL; the read
// interfaces are declared where they are used (incident.Store,
// app.Store).
package store

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/toolcall"
	"github.com/valyala/fastjson"
)

// SessionScope is one session on one host.
type SessionScope struct {
	Tool    cortex.Tool
	Session string
	Host    string
}

// FailedSpan is a session with failed calls and the span of time they
// fill: its first and last failure in the range asked for.
type FailedSpan struct {
	SessionScope
	First, Last time.Time
}

// CandidateFilter bounds a candidate scan.
type CandidateFilter struct {
	Tool    cortex.Tool
	Project string
	Session string
	Host    string
	Since   time.Time
	Until   time.Time
	Skill   string
	Plugin  string
	// Skills, when set, selects any of these skill names (a name as typed
	// resolved to the plugin-qualified names it stands for).
	Skills []string
	// Limit is the cap + 1 (the extra row reveals truncation).
	Limit int
}

// SkillCandidate is a skill event as the incident engine groups it.
type SkillCandidate struct {
	ID        int64
	LogID     int64
	Skill     string
	Plugin    string
	Tool      cortex.Tool
	Project   string
	Session   string
	Host      string
	Timestamp time.Time
	Kind      string
}

// TextCandidate is a logs row found by a full-text query.
type TextCandidate struct {
	ID        int64
	Tool      cortex.Tool
	Project   string
	Session   string
	Host      string
	Timestamp time.Time
	Message   string
}

// ToolCall is a tool call of a session (from ai_mcp_events).
type ToolCall struct {
	ID          int64
	CallLogID   *int64
	ResultLogID *int64
	Timestamp   time.Time
	ToolName    string
	MCPServer   string
	MCPTool     string
	Status      string
	IsError     bool
	ExitCode    *int64
	ErrorText   string
}

// SessionCall is a tool call with what the engine classifies it by.
type SessionCall struct {
	ToolCall
	CallID    string
	Thread    string
	TurnID    string
	Arguments string
	Output    string
	// ResultTimestamp is when the result arrived (zero when pending).
	ResultTimestamp time.Time
	// Facts are the call's stored facts (package toolcall), FactsVersion
	// the version of the rules that derived them (0: none yet).
	toolcall.Facts
	FactsVersion int
}

// Input is what the call's facts are derived from.
func (c *SessionCall) Input() toolcall.Call {
	return toolcall.Call{ToolName: c.ToolName, Status: c.Status, IsError: c.IsError, ExitCode: c.ExitCode,
		Arguments: c.Arguments, Output: c.Output, ErrorText: c.ErrorText}
}

// ClaimRow is an assistant row's stored claims (package claim) as the
// friction lens reads the dialogue: when, in which agent thread, which
// kinds.
type ClaimRow struct {
	LogID     int64
	Timestamp time.Time
	Thread    string
	Kinds     int
}

// CallWindow is a span of a session's tool calls to read: calls made in
// [From, To] (a zero time leaves its side open), of the given agent
// threads (all when empty).
type CallWindow struct {
	Scope    SessionScope
	From, To time.Time
	Threads  []string
}

// CallTexts is what a tool call's texts and outcome say, for the calls a
// bundle shows (the lenses classify from the stored facts alone).
type CallTexts struct {
	Status    string
	ExitCode  *int64
	Arguments string
	Output    string
	ErrorText string
	// Why is the stored line that shows a failure.
	Why string
}

// UserAct is a stored user event (ai_user_events): one thing the human did.
type UserAct struct {
	ID        int64
	LogID     int64
	Tool      cortex.Tool
	Project   string
	Session   string
	Host      string
	Thread    string
	Timestamp time.Time
	Kind      string
	Text      string
	CallID    string
	Source    string
	// MetaJSON is the event's metadata as stored (see Meta).
	MetaJSON string
	// Voice is the stored reading of Text (see cortex.UserEvent),
	// VoiceVersion the rules' version that read it (0: not read).
	Voice        string
	VoiceVersion int
}

// Meta decodes the event's metadata (decoded on demand: most readers
// need none of it).
func (a *UserAct) Meta() map[string]string { return DecodeMeta(a.MetaJSON) }

// SessionSkill is a skill event as the engine scopes runs with it.
type SessionSkill struct {
	ID        int64
	LogID     int64
	Timestamp time.Time
	Skill     string
	Plugin    string
	Path      string
	Kind      string
	Thread    string
	Project   string
	Meta      map[string]string
}

// HookRun is a runtime hook run as the friction lens attributes with it.
type HookRun struct {
	ID        int64
	LogID     int64
	Timestamp time.Time
	Event     string
	Name      string
	Status    string
	ExitCode  *int64
}

// StoredRaw is a row's stored original record (compressed by rawcodec) and
// what it is.
type StoredRaw struct {
	Tool cortex.Tool
	Kind string
	Raw  []byte
}

// MCPFilter bounds an MCP candidate scan or usage count: the common
// candidate filter (its Skill and Plugin are ignored) plus the MCP subject,
// matched exactly against the stored names (resolve user input with
// MCPNames first).
type MCPFilter struct {
	CandidateFilter
	Server  string
	MCPTool string
}

// MCPCandidate is an MCP call as the incident engine groups it.
type MCPCandidate struct {
	ID int64
	// LogID is the call's row, else its result's.
	LogID     int64
	CallID    string
	Server    string
	MCPTool   string
	Tool      cortex.Tool
	Project   string
	Session   string
	Host      string
	Timestamp time.Time
}

// MCPUsage is how much an MCP subject was used.
type MCPUsage struct {
	Calls    int64
	Sessions int64
	Failed   int64
}

// MCPName is a stored MCP server and tool pair.
type MCPName struct {
	Server string
	Tool   string
}

// HookFilter bounds a hook candidate scan: the common filters plus the hook
// subject. Events and Names are resolved stored values (hook_event IN …,
// hook_name IN …); a nil slice does not filter, an empty non-nil one
// matches nothing.
type HookFilter struct {
	CandidateFilter
	Events []string
	Names  []string
	Source string
	// EvidenceKind keeps one evidence kind (configuration scans only:
	// runtime scans always read runtime_transcript rows).
	EvidenceKind string
}

// MatchesNothing reports whether a subject filter can match no row (an
// empty, non-nil Events or Names).
func (f HookFilter) MatchesNothing() bool {
	return f.Events != nil && len(f.Events) == 0 || f.Names != nil && len(f.Names) == 0
}

// HookCandidate is a hook event as the incident engine groups it.
type HookCandidate struct {
	ID           int64
	LogID        int64 // 0 for configuration rows
	Tool         cortex.Tool
	Project      string
	Session      string
	Host         string
	Timestamp    time.Time
	LastSeen     time.Time // configuration rows: the last collection that found it
	Event        string
	Name         string
	Source       string
	Command      string
	Status       string
	EvidenceKind string
	Meta         map[string]string
	// ExitCode and DurationMS are the run's outcome (nil: not recorded);
	// HasOutput says it printed something (stdout or stderr), read with
	// the rest of the event when needed.
	ExitCode   *int64
	DurationMS *int64
	HasOutput  bool
}

// HookName is a stored hook event and name pair.
type HookName struct {
	Event string
	Name  string
}

// HookRecord is a kind of runtime hook record seen in a session: the hook
// event and name, and the record kind — the attachment type
// (hook_success, …), "hook_progress" (a start record), "stop_hook_summary"
// or "" — which tells which hook runs the session's transcript format
// records at all.
type HookRecord struct {
	Event string
	Name  string
	Kind  string
}

// HookRunSpan is where and when one hook command ran: the runtime events of
// one session and hook name.
type HookRunSpan struct {
	Session string
	Project string
	Name    string
	First   time.Time
	Last    time.Time
	Runs    int
}

// SessionSpan is a stored session and its time span.
type SessionSpan struct {
	Session string
	Project string
	First   time.Time
	Last    time.Time
}

// SessionFilter selects sessions of one agent and host lying strictly
// between two instants (first seen after After, last seen before Before),
// optionally in one project or one session, and overlapping [Since, Until)
// when set.
type SessionFilter struct {
	Tool          cortex.Tool
	Host          string
	Project       string
	Session       string
	After, Before time.Time
	Since, Until  time.Time
	Limit         int
}

// HookUsage is how much a hook selection was used.
type HookUsage struct {
	// Runs counts runtime hook runs (output-only records excluded) and
	// Sessions the sessions they ran in.
	Runs, Sessions int64
	// ConfigRows counts configuration rows (config_inventory and
	// trusted_hash_state): configured, not proof of a run.
	ConfigRows int64
	// Sources are the configuration sources (at most 5).
	Sources []string
}

// AddConfig counts configuration rows (of HookConfigRows) into u, with
// their first five sources.
func (u *HookUsage) AddConfig(rows []HookCandidate) {
	u.ConfigRows = int64(len(rows))
	for _, r := range rows {
		if len(u.Sources) < 5 && r.Source != "" && !slices.Contains(u.Sources, r.Source) {
			u.Sources = append(u.Sources, r.Source)
		}
	}
}

// TranscriptEvents are the events of a span of a session.
type TranscriptEvents struct {
	Tools  []cortex.ToolEventRow
	Skills []cortex.SkillEventRow
	Hooks  []cortex.HookEventRow
}

// LogParams filter the non-AI log listing.
type LogParams struct {
	Host string
	App  string
	// Severity keeps rows of this severity or worse.
	Severity cortex.Severity
	// Source keeps rows whose source starts with it ("syslog",
	// "syslog:udp", "file:/var/log/syslog").
	Source string
	Since  time.Time
	Until  time.Time
	// Limit must already be clamped.
	Limit int
	// After continues a listing.
	After *cortex.Cursor
}

// LogEntry is one stored non-AI log row.
type LogEntry struct {
	ID         int64             `json:"id"`
	Timestamp  string            `json:"timestamp"`
	Hostname   string            `json:"hostname"`
	Facility   string            `json:"facility,omitempty"`
	Severity   cortex.Severity   `json:"severity"`
	AppName    string            `json:"app_name,omitempty"`
	Message    string            `json:"message"`
	Source     string            `json:"source"`
	ReceivedAt string            `json:"received_at"`
	Metadata   map[string]string `json:"metadata,omitempty"`
}

// LogList is the answer of a log listing: {logs, total, truncated}.
type LogList struct {
	Logs           []LogEntry `json:"logs"`
	Total          int        `json:"total"`
	Truncated      bool       `json:"truncated"`
	LimitClampedTo int        `json:"limit_clamped_to,omitempty"`
	Next           string     `json:"next,omitempty"`
}

// MatchSkillNames returns the stored skill names a skill as typed stands
// for: itself and the plugin-qualified names whose skill part it is
// ("search" → "entire:search"), ignoring case.
func MatchSkillNames(names []string, skill string) []string {
	want := strings.ToLower(strings.TrimSpace(skill))
	var out []string
	for _, n := range names {
		l := strings.ToLower(n)
		if l == want || strings.HasSuffix(l, ":"+want) {
			out = append(out, n)
		}
	}
	return out
}

// DecodeMeta reads a stored metadata_json object as strings (non-string
// values as their JSON); nil when empty or not an object. Objects of plain
// strings (nearly all of them) are read by fastjson, the rest as
// encoding/json reads them (see decodeMetaJSON), with the same result.
func DecodeMeta(s string) map[string]string {
	if s == "" {
		return nil
	}
	if !plainJSON(s) {
		return decodeMetaJSON(s)
	}
	var p fastjson.Parser
	v, err := p.Parse(s)
	if err != nil || v.Type() != fastjson.TypeObject {
		return decodeMetaJSON(s)
	}
	o, _ := v.Object()
	m := make(map[string]string, o.Len())
	plain := true
	o.Visit(func(k []byte, v *fastjson.Value) {
		if v.Type() != fastjson.TypeString {
			plain = false
			return
		}
		b, _ := v.StringBytes()
		m[string(k)] = string(b)
	})
	if !plain {
		return decodeMetaJSON(s)
	}
	return m
}

// plainJSON reports whether s has none of what fastjson reads otherwise
// than encoding/json: escapes (fastjson keeps invalid ones, encoding/json
// rejects them; lone surrogates), control characters (encoding/json
// rejects them raw) and invalid UTF-8 (encoding/json replaces it).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '\\' {
			return false
		}
	}
	return utf8.ValidString(s)
}

// decodeMetaJSON is DecodeMeta by encoding/json.
func decodeMetaJSON(s string) map[string]string {
	var raw map[string]any
	if json.Unmarshal([]byte(s), &raw) != nil {
		return nil
	}
	m := make(map[string]string, len(raw))
	for k, v := range raw {
		switch x := v.(type) {
		case string:
			m[k] = x
		default:
			b, _ := json.Marshal(x)
			m[k] = string(b)
		}
	}
	return m
}

// SkillLoad is a skill event that shows a body, with where it was seen.
type SkillLoad struct {
	SessionSkill
	Tool    cortex.Tool
	Host    string
	Session string
	// SHA256 is the body's version ("" when it showed none).
	SHA256 string
}

// Scope is the session a load belongs to.
func (l SkillLoad) Scope() SessionScope {
	return SessionScope{Tool: l.Tool, Session: l.Session, Host: l.Host}
}

// SkillBody is one stored skill body (a version).
type SkillBody struct {
	SHA256    string
	Body      string
	Bytes     int
	Lines     int
	Complete  bool
	FirstSeen time.Time
}

// SetTitle gives a session read from a store its title — its summary
// (TitleSource "summary"), else its first typed prompt ("first_prompt") —
// and its duration (last seen minus first seen).
func SetTitle(s *cortex.Session, title, prompt string) {
	switch {
	case title != "":
		s.Title, s.TitleSource = title, "summary"
	case prompt != "":
		s.Title, s.TitleSource = prompt, "first_prompt"
	}
	if first, err := cortex.ParseTimestamp(s.FirstSeen); err == nil {
		if last, err := cortex.ParseTimestamp(s.LastSeen); err == nil {
			s.DurationSecs = last.Sub(first).Seconds()
		}
	}
}

// SessionIDs returns the distinct session ids of scopes, in order: what a
// read of many sessions selects by (its rows are then kept by Wanted).
func SessionIDs(scopes []SessionScope) []string {
	return Distinct(scopes, func(s SessionScope) string { return s.Session })
}

// Distinct returns the distinct keys of xs, in order.
func Distinct[T any](xs []T, key func(T) string) []string {
	seen := make(map[string]bool, len(xs))
	var out []string
	for _, x := range xs {
		if k := key(x); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// Wanted is the set of scopes (a session id is shared by agents and hosts:
// rows of other scopes read with it are dropped).
func Wanted(scopes []SessionScope) map[SessionScope]bool {
	m := make(map[SessionScope]bool, len(scopes))
	for _, s := range scopes {
		m[s] = true
	}
	return m
}

// PerSession gathers rows of many sessions into the wanted scopes, at most
// limit per scope (the first ones, rows coming in time order).
func PerSession[T any](out map[SessionScope][]T, want map[SessionScope]bool, k SessionScope, row T, limit int) {
	if want[k] && len(out[k]) < limit {
		out[k] = append(out[k], row)
	}
}
