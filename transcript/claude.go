package transcript

import (
	"fmt"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// FileContext carries what a parser learns from a file's path and sidecar
// files rather than from its records: fallbacks for records that lack a
// session id, project or timestamp.
type FileContext struct {
	Path string
	// SessionID is the fallback session id (file stem, or the parent
	// session directory for subagent files).
	SessionID string
	// Project is the fallback project (decoded from the Claude project
	// directory name, or a Gemini project hash URI).
	Project string
	// AgentID and AgentType describe a subagent file.
	AgentID   string
	AgentType string
	// ModTime is the last-resort timestamp.
	ModTime time.Time
}

// ClaudeParser parses Claude Code session JSONL records. It keeps per-file
// state (the previous timestamp, tool-use ids → tool names); create one per
// file and feed it the file's records in order.
type ClaudeParser struct {
	ctx     FileContext
	p       fastjson.Parser
	clock   clock
	tools   *boundedSet
	version string
	session string // last session id seen in the file
	// stored is set by StoredText: a tool result whose tool_use the
	// parser has not seen is named toolName, and no events are extracted.
	stored   bool
	toolName string
}

// ClaudeState is the per-file state a Claude parser carries from record to
// record. Ingest stores it with the file checkpoint so a resumed read
// produces exactly the entries a full read would (tool results name the
// tool of their earlier tool_use).
type ClaudeState struct {
	SessionID string    `json:"session_id,omitempty"`
	Version   string    `json:"version,omitempty"`
	LastTime  time.Time `json:"last_time,omitempty"`
	// Tools are recent tool_use ids and their tool names, oldest first.
	Tools [][2]string `json:"tools,omitempty"`
}

// NewClaudeParser returns a parser for one Claude Code transcript file.
func NewClaudeParser(ctx FileContext) *ClaudeParser {
	return &ClaudeParser{ctx: ctx, tools: newBoundedSet(recentToolIDs)}
}

// NewClaudeParserAt returns a parser that continues from a saved state.
func NewClaudeParserAt(ctx FileContext, st ClaudeState) *ClaudeParser {
	c := NewClaudeParser(ctx)
	c.session, c.version, c.clock.last = st.SessionID, st.Version, st.LastTime
	for _, t := range st.Tools {
		c.tools.put(t[0], t[1])
	}
	return c
}

// State returns the parser's state for checkpointing.
func (c *ClaudeParser) State() ClaudeState {
	st := ClaudeState{SessionID: c.session, Version: c.version, LastTime: c.clock.last}
	st.Tools = c.tools.pairs()
	return st
}

// claudeBookkeeping are record types without conversational content.
var claudeBookkeeping = map[string]bool{
	"file-history-snapshot": true, "permission-mode": true, "last-prompt": true,
	"ai-title": true, "custom-title": true, "mode": true, "queue-operation": true,
	"bridge-session": true, "pr-link": true, "tag": true, "worktree-state": true,
}

// queuedPrompt is the words of a queue-operation record that enqueues a
// prompt the human typed ("" for other operations, harness notices and
// slash commands, which arrive as records of their own).
func queuedPrompt(v *fastjson.Value) string {
	if str(v, "operation") != "enqueue" {
		return ""
	}
	text := strings.TrimSpace(str(v, "content"))
	if text == "" || queuedNotice(text) || strings.HasPrefix(text, "/") {
		return ""
	}
	return text
}

// Parse parses one JSON record (one object; see SplitConcatenated for lines
// that hold several).
func (c *ClaudeParser) Parse(raw []byte, line int64) Result {
	v, err := c.p.ParseBytes(raw)
	if err != nil {
		return Result{Raw: raw, Line: line, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	if v.Type() != fastjson.TypeObject {
		return Result{Raw: raw, Line: line, Err: fmt.Errorf("record is a JSON %s, not an object", v.Type())}
	}
	if ver := str(v, "version"); ver != "" {
		c.version = ver
	}
	typ := str(v, "type")
	res := Result{Raw: raw, Line: line, Type: typ, Version: c.version}
	switch {
	case typ == "user" || typ == "assistant":
		c.parseMessage(v, v, &res, typ)
	case typ == "system":
		c.parseSystem(v, &res)
	case typ == "attachment":
		c.parseAttachment(v, &res)
	case typ == "progress":
		c.parseProgress(v, &res)
	case typ == "summary":
		// A summary has no time or session of its own: it titles the
		// session of its leaf message, wherever that is stored.
		res.Skip = SkipSummary
		if leaf, text := str(v, "leafUuid"), str(v, "summary"); leaf != "" && text != "" {
			t := newText(MaxContextText)
			t.add(text)
			res.Summary = &cortex.SessionSummary{LeafUUID: leaf, Text: t.String()}
		}
	case typ == "queue-operation" && queuedPrompt(v) != "":
		// A prompt the human typed while the agent worked. Versions that
		// deliver it later as a prompt or a queued_command record repeat
		// it there (the engine keeps one of the two); older ones deliver
		// it into the running turn and record nothing else.
		c.envelope(v, &res, cortex.RoleUser, "user:queued")
		t := newText(MaxUserText)
		t.add(queuedPrompt(v))
		res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
	case claudeBookkeeping[typ]:
		res.Skip = SkipBookkeeping
	case typ == "":
		// Old-style lines without a type but with a message are still messages.
		if m := v.Get("message"); m != nil {
			role := str(m, "role")
			if role == "user" || role == "assistant" {
				res.Type = role
				c.parseMessage(v, v, &res, role)
				break
			}
		}
		res.Skip = SkipUnknownType
	default:
		res.Skip = SkipUnknownType
	}
	if res.Skip == "" && res.Err == nil && res.Entry.RecordKey == "" {
		res.Entry.RecordKey = ContentKey(raw)
	}
	if res.Skip == "" && res.Err == nil && res.Entry.Role == cortex.RoleUser && res.Entry.Sidechain {
		// In a subagent's transcript the "user" is the parent agent: its
		// prompt is injected context, not text a human typed.
		res.Entry.Role = cortex.RoleContext
		res.Entry.Kind = "user:subagent_prompt"
	}
	if res.Skip == "" && res.Err == nil && !c.stored {
		res.Events = extractEvents(cortex.ToolClaude, &res.Entry, v)
	}
	return res
}

// envelope fills the fields every Claude record shares. src is the record
// that carries uuid/timestamp (the embedded message for agent_progress).
func (c *ClaudeParser) envelope(v *fastjson.Value, res *Result, role cortex.Role, kind string) {
	e := &res.Entry
	e.Tool = cortex.ToolClaude
	e.Role = role
	e.Kind = kind
	e.Severity = cortex.SevInfo
	e.ToolVersion = c.version
	ts, est, warn := c.clock.at(str(v, "timestamp"))
	e.Timestamp, e.TimestampEstimated = ts, est
	if warn != "" {
		res.Warn = warn
	}
	e.SessionID = str(v, "sessionId")
	switch {
	case e.SessionID != "":
		c.session = e.SessionID
	case c.session != "":
		e.SessionID = c.session
	default:
		e.SessionID = c.ctx.SessionID
	}
	e.Project = NormalizeProject(str(v, "cwd"))
	if e.Project == "" {
		e.Project = c.ctx.Project
	}
	if u := str(v, "uuid"); u != "" {
		e.RecordKey = "u:" + u
	}
	e.AgentID = str(v, "agentId")
	if e.AgentID == "" {
		e.AgentID = c.ctx.AgentID
	}
	e.Sidechain = boolAt(v, "isSidechain") || c.ctx.AgentID != ""
	putMeta(&e.Meta, "agent_type", c.ctx.AgentType)
	putMeta(&e.Meta, "git_branch", str(v, "gitBranch"))
}

// parseMessage handles user and assistant records. env is the record that
// carries the envelope fields, v the record with the message.
func (c *ClaudeParser) parseMessage(env, v *fastjson.Value, res *Result, typ string) {
	msg := v.Get("message")
	if typ == "assistant" {
		c.parseAssistant(env, v, msg, res)
		return
	}
	c.parseUser(env, v, msg, res)
}

func (c *ClaudeParser) parseAssistant(env, v, msg *fastjson.Value, res *Result) {
	texts := newText(MaxAssistantText)
	calls := newText(MaxAssistantText)
	thinking := newText(MaxAssistantText)
	var firstTool string
	content := msg.Get("content")
	if content != nil && content.Type() == fastjson.TypeString {
		texts.add(str(msg, "content"))
	}
	for _, b := range arr(content) {
		switch str(b, "type") {
		case "text":
			texts.add(str(b, "text"))
		case "thinking":
			thinking.add(str(b, "thinking"))
		case "redacted_thinking":
			thinking.add("[redacted thinking]")
		case "tool_use", "server_tool_use", "mcp_tool_use":
			name := str(b, "name")
			if firstTool == "" {
				firstTool = name
			}
			if id := str(b, "id"); id != "" && name != "" {
				c.tools.put(id, name)
			}
			calls.add(ToolCallText(name, b.Get("input")))
		case "web_search_tool_result", "mcp_tool_result":
			calls.add(compactValue(b.Get("content")))
		}
	}
	kind := "assistant"
	role := cortex.RoleAssistant
	switch {
	case calls.String() != "":
		role = cortex.RoleToolCall
		kind = "assistant:tool_use"
	case texts.String() != "":
	case thinking.String() != "":
		role = cortex.RoleThinking
		kind = "assistant:thinking"
	default:
		// Signature-only thinking or empty text: still stored, because the
		// record carries attribution and usage fields.
		role = cortex.RoleThinking
		kind = "assistant:empty"
	}
	c.envelope(env, res, role, kind)
	e := &res.Entry
	if v != env { // embedded subagent message
		c.embedded(v, res)
	}
	out := newText(MaxAssistantText + MaxAssistantText)
	out.add(texts.String())
	out.add(calls.String())
	if role == cortex.RoleThinking {
		out.add(thinking.String())
	}
	e.Text = out.String()
	e.TextTruncated = out.truncated || texts.truncated || calls.truncated || thinking.truncated
	e.ToolName = firstTool
	e.Model = str(msg, "model")
	res.Usage = claudeUsage(msg, e)
	putMeta(&e.Meta, "message_id", str(msg, "id"))
	putMeta(&e.Meta, "request_id", str(env, "requestId"))
	if boolAt(env, "isApiErrorMessage") || boolAt(v, "isApiErrorMessage") {
		e.Role = cortex.RoleSystem
		e.Kind = "assistant:api_error"
		e.IsError = true
		e.Severity = cortex.SevError
	}
}

func (c *ClaudeParser) parseUser(env, v, msg *fastjson.Value, res *Result) {
	isMeta := boolAt(v, "isMeta") || boolAt(v, "isCompactSummary") || boolAt(v, "isVisibleInTranscriptOnly")
	content := msg.Get("content")
	if content == nil || content.Type() == fastjson.TypeString {
		text := str(msg, "content")
		role, kind, display := classifyUserString(text, isMeta, boolAt(v, "isCompactSummary"))
		c.envelope(env, res, role, kind)
		if v != env {
			c.embedded(v, res)
		}
		max := MaxUserText
		if role == cortex.RoleContext {
			max = MaxContextText
		}
		t := newText(max)
		t.add(display)
		res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
		if src := str(v, "sourceToolUseID"); src != "" {
			putMeta(&res.Entry.Meta, "source_tool_use_id", src)
		}
		return
	}
	texts := newText(MaxUserText)
	results := newText(MaxErrorHead + MaxErrorTail + MaxUserText)
	var isError, hasResult bool
	var toolName string
	images := 0
	for _, b := range arr(content) {
		switch str(b, "type") {
		case "text":
			texts.add(str(b, "text"))
		case "image":
			images++
		case "tool_result":
			hasResult = true
			errFlag := boolAt(b, "is_error")
			isError = isError || errFlag
			name, ok := c.tools.get(str(b, "tool_use_id"))
			if !ok && c.stored {
				name = c.toolName
			}
			if toolName == "" {
				toolName = name
			}
			body := toolResultText(b.Get("content"))
			var cut bool
			if errFlag {
				body, cut = headTail(body, MaxErrorHead, MaxErrorTail)
			} else {
				body, cut = headTail(body, MaxToolOutputHead, MaxToolOutputTail)
			}
			prefix := name
			if prefix == "" {
				prefix = "tool"
			}
			if errFlag {
				prefix += " error"
			} else {
				prefix += " result"
			}
			results.add("[" + prefix + "] " + body)
			results.truncated = results.truncated || cut
		case "document":
			texts.add("[document]")
		}
	}
	if images > 0 {
		texts.add(fmt.Sprintf("[%d image(s)]", images))
	}
	var role cortex.Role
	var kind string
	switch {
	case hasResult:
		role, kind = cortex.RoleToolResult, "user:tool_result"
	case isMeta:
		role, kind = cortex.RoleContext, "user:meta"
	case strings.HasPrefix(strings.TrimSpace(texts.String()), "[Request interrupted by user"):
		role, kind = cortex.RoleSystem, "user:interrupt"
	default:
		role, kind = cortex.RoleUser, "user"
	}
	c.envelope(env, res, role, kind)
	if v != env {
		c.embedded(v, res)
	}
	e := &res.Entry
	max := MaxErrorHead + MaxErrorTail + MaxUserText
	if role == cortex.RoleContext {
		max = MaxContextText // as for string content (skill bodies are lists)
	}
	out := newText(max)
	out.add(results.String())
	out.add(texts.String())
	e.Text = out.String()
	e.TextTruncated = out.truncated || results.truncated || texts.truncated
	e.ToolName = toolName
	putMeta(&e.Meta, "source_tool_use_id", str(v, "sourceToolUseID"))
	if isError {
		e.IsError = true
		e.Severity = cortex.SevError
	}
}

// embedded applies the fields of an embedded subagent message (progress
// records) over the envelope's.
func (c *ClaudeParser) embedded(v *fastjson.Value, res *Result) {
	e := &res.Entry
	if u := str(v, "uuid"); u != "" {
		e.RecordKey = "u:" + u
	}
	if ts := str(v, "timestamp"); ts != "" {
		if t, err := cortex.ParseTimestamp(ts); err == nil {
			e.Timestamp, e.TimestampEstimated = t, false
		}
	}
	e.Sidechain = true
}

// classifyUserString decides what a string-content user record is.
func classifyUserString(text string, isMeta, compact bool) (cortex.Role, string, string) {
	t := strings.TrimSpace(text)
	switch {
	case compact:
		return cortex.RoleContext, "user:compact_summary", t
	case isMeta:
		return cortex.RoleContext, "user:meta", t
	case strings.HasPrefix(t, "<command-name>") || strings.HasPrefix(t, "<command-message>"):
		return cortex.RoleUser, "user:command", slashCommandText(t)
	case strings.HasPrefix(t, "<local-command-stdout>") || strings.HasPrefix(t, "<local-command-stderr>") ||
		strings.HasPrefix(t, "<bash-stdout>") || strings.HasPrefix(t, "<bash-stderr>"):
		return cortex.RoleSystem, "user:local_command", stripTags(t)
	case strings.HasPrefix(t, "<bash-input>"):
		return cortex.RoleUser, "user:bash", "! " + stripTags(t)
	case strings.HasPrefix(t, "[Request interrupted by user"):
		return cortex.RoleSystem, "user:interrupt", t
	case strings.HasPrefix(t, "<system-reminder>") || strings.HasPrefix(t, "Caveat: The messages below") ||
		strings.HasPrefix(t, "<local-command-caveat>") || strings.HasPrefix(t, "<system_instruction>"):
		return cortex.RoleContext, "user:meta", t
	case strings.HasPrefix(t, "<task-notification>") || strings.HasPrefix(t, "<teammate-message"):
		// A background task's or a teammate agent's message, delivered as
		// if typed: not the human's words.
		return cortex.RoleContext, "user:notification", t
	}
	return cortex.RoleUser, "user", t
}

// slashCommandText renders "<command-name>/x</command-name><command-args>y…"
// as "/x y".
func slashCommandText(t string) string {
	name := between(t, "<command-name>", "</command-name>")
	if name == "" {
		name = between(t, "<command-message>", "</command-message>")
	}
	name = strings.TrimSpace(name)
	if name != "" && !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	args := strings.TrimSpace(between(t, "<command-args>", "</command-args>"))
	if args != "" {
		return name + " " + args
	}
	if name == "" {
		return stripTags(t)
	}
	return name
}

// SlashCommand returns the command name (without "/") and arguments of a
// Claude slash-command user record text, or ok=false.
func SlashCommand(text string) (name, args string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "<command-") {
		return "", "", false
	}
	name = strings.TrimSpace(between(t, "<command-name>", "</command-name>"))
	if name == "" {
		name = strings.TrimSpace(between(t, "<command-message>", "</command-message>"))
	}
	name = strings.TrimPrefix(name, "/")
	if name == "" {
		return "", "", false
	}
	return name, strings.TrimSpace(between(t, "<command-args>", "</command-args>")), true
}

func between(s, open, close string) string {
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	s = s[i+len(open):]
	j := strings.Index(s, close)
	if j < 0 {
		return s
	}
	return s[:j]
}

// stripTags removes XML-ish tags, keeping their text.
func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
			b.WriteByte(' ')
		case !in:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func (c *ClaudeParser) parseSystem(v *fastjson.Value, res *Result) {
	sub := str(v, "subtype")
	res.Type = "system:" + sub
	if sub == "" {
		res.Type = "system"
	}
	switch sub {
	case "turn_duration", "bridge_status":
		res.Skip = SkipBookkeeping
		return
	case "stop_hook_summary":
		c.envelope(v, res, cortex.RoleHook, res.Type)
		t := newText(MaxHookText)
		n, _ := intAt(v, "hookCount")
		t.add(fmt.Sprintf("Stop hook summary: %d hook(s)", n))
		for _, h := range arr(v.Get("hookInfos")) {
			t.add("command: " + str(h, "command"))
		}
		errs := arr(v.Get("hookErrors"))
		for _, h := range errs {
			t.add("error: " + compactValue(h))
		}
		if boolAt(v, "preventedContinuation") {
			t.add("prevented continuation: " + str(v, "stopReason"))
		}
		res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
		if len(errs) > 0 {
			res.Entry.IsError = true
			res.Entry.Severity = cortex.SevWarning
		}
		return
	case "api_error":
		c.envelope(v, res, cortex.RoleSystem, res.Type)
		t := newText(MaxContextText)
		status, _ := intAt(v, "error", "status")
		t.add(fmt.Sprintf("API error (status %d)", status))
		t.add(str(v, "error", "error", "error", "message"))
		t.add(str(v, "error", "message"))
		t.add(str(v, "content"))
		res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
		res.Entry.IsError = true
		res.Entry.Severity = cortex.SevError
		return
	case "compact_boundary", "microcompact_boundary":
		c.envelope(v, res, cortex.RoleSystem, res.Type)
		meta := v.Get("compactMetadata")
		if meta == nil {
			meta = v.Get("microcompactMetadata")
		}
		pre, _ := intAt(meta, "preTokens")
		res.Entry.Text = fmt.Sprintf("Conversation compacted (%s, %s trigger, %d tokens before)", sub, cortex.CutUTF8(str(meta, "trigger"), 64), pre)
		return
	}
	role := cortex.RoleSystem
	if sub == "away_summary" {
		role = cortex.RoleContext
	}
	c.envelope(v, res, role, res.Type)
	t := newText(MaxContextText)
	t.add(stripLocalCommand(str(v, "content")))
	if t.String() == "" {
		res.Skip = SkipEmpty
		return
	}
	res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
	switch strings.ToLower(str(v, "level")) {
	case "error":
		res.Entry.Severity = cortex.SevError
		res.Entry.IsError = true
	case "warning", "warn":
		res.Entry.Severity = cortex.SevWarning
	}
}

func stripLocalCommand(s string) string {
	if strings.HasPrefix(strings.TrimSpace(s), "<") {
		return stripTags(s)
	}
	return s
}

// Hook attachment types and the status they map to.
var hookAttachmentStatus = map[string]string{
	"hook_success":                "success",
	"hook_non_blocking_error":     "failed",
	"hook_blocking_error":         "blocked",
	"hook_error_during_execution": "error",
	"hook_cancelled":              "cancelled",
	"hook_additional_context":     "success",
	"hook_system_message":         "success",
	"async_hook_response":         "success",
	"hook_stopped_continuation":   "blocked",
	"hook_permission_decision":    "success",
}

// HookStatus maps a Claude hook attachment type (and exit code) to the
// hook status vocabulary: success, failed, blocked, cancelled, error,
// unknown. A hook_success with a non-zero exit code is a failure.
func HookStatus(attachmentType string, exitCode int64, hasExit bool) string {
	st, ok := hookAttachmentStatus[attachmentType]
	if !ok {
		switch {
		case strings.Contains(attachmentType, "cancel"):
			return "cancelled"
		case strings.Contains(attachmentType, "block"):
			return "blocked"
		case strings.Contains(attachmentType, "error"), strings.Contains(attachmentType, "fail"):
			return "error"
		}
		return "unknown"
	}
	if st == "success" && hasExit && exitCode != 0 {
		return "failed"
	}
	return st
}

func (c *ClaudeParser) parseAttachment(v *fastjson.Value, res *Result) {
	a := v.Get("attachment")
	at := str(a, "type")
	res.Type = "attachment:" + at
	kind := res.Type
	if strings.HasPrefix(at, "hook_") || at == "async_hook_response" {
		c.envelope(v, res, cortex.RoleHook, kind)
		exit, hasExit := intAt(a, "exitCode")
		status := HookStatus(at, exit, hasExit)
		t := newText(MaxHookText)
		head := "hook " + str(a, "hookName")
		if ev := str(a, "hookEvent"); ev != "" && !strings.HasPrefix(str(a, "hookName"), ev) {
			head += " (" + ev + ")"
		}
		head += " " + status
		if hasExit {
			head += fmt.Sprintf(" exit %d", exit)
		}
		t.add(head)
		t.add(str(a, "command"))
		t.add(str(a, "stderr"))
		t.add(str(a, "stdout"))
		t.add(compactValue(a.Get("content")))
		if r := a.Get("response"); r != nil {
			t.add(compactValue(r))
		}
		res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
		putMeta(&res.Entry.Meta, "hook_status", status)
		switch status {
		case "failed", "cancelled":
			res.Entry.IsError = true
			res.Entry.Severity = cortex.SevWarning
		case "blocked", "error":
			res.Entry.IsError = true
			res.Entry.Severity = cortex.SevError
		}
		return
	}
	switch at {
	case "queued_command":
		role := cortex.RoleUser
		if queuedNotice(compactValue(a.Get("prompt"))) {
			// A background task's completion notice, queued as if typed.
			role = cortex.RoleContext
		}
		c.envelope(v, res, role, kind)
		t := newText(MaxUserText)
		t.add(compactValue(a.Get("prompt")))
		res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
		return
	case "invoked_skills":
		c.envelope(v, res, cortex.RoleContext, kind)
		t := newText(MaxContextText)
		var names []string
		for _, s := range arr(a.Get("skills")) {
			names = append(names, str(s, "name"))
		}
		t.add("Invoked skills: " + strings.Join(names, ", "))
		for _, s := range arr(a.Get("skills")) {
			t.add(str(s, "content"))
		}
		res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
		return
	}
	c.envelope(v, res, cortex.RoleContext, kind)
	t := newText(MaxContextText)
	t.add("[" + at + "]")
	for _, k := range []string{"filename", "content", "addedNames", "names", "addedTypes", "prompt", "snippet", "newDate"} {
		if x := a.Get(k); x != nil {
			t.add(attachmentValueText(x))
		}
	}
	res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
}

func attachmentValueText(x *fastjson.Value) string {
	switch x.Type() {
	case fastjson.TypeString:
		return compactValue(x)
	case fastjson.TypeArray:
		var parts []string
		for _, it := range arr(x) {
			parts = append(parts, attachmentValueText(it))
		}
		return strings.Join(parts, ", ")
	case fastjson.TypeObject:
		// File attachments nest their text: {"type":"text","file":{"filePath","content"}}.
		if f := x.Get("file"); f != nil {
			return str(f, "filePath") + "\n" + str(f, "content")
		}
		return compactValue(x)
	}
	return compactValue(x)
}

func (c *ClaudeParser) parseProgress(v *fastjson.Value, res *Result) {
	d := v.Get("data")
	dt := str(d, "type")
	res.Type = "progress:" + dt
	switch dt {
	case "hook_progress":
		c.envelope(v, res, cortex.RoleHook, res.Type)
		t := newText(MaxHookText)
		t.add("hook " + str(d, "hookName") + " started")
		t.add(str(d, "command"))
		res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
		putMeta(&res.Entry.Meta, "hook_status", "started")
	case "agent_progress":
		m := d.Get("message")
		mt := str(m, "type")
		if m == nil || (mt != "user" && mt != "assistant") {
			res.Skip = SkipEmpty
			return
		}
		c.parseMessage(v, m, res, mt)
		if res.Skip != "" {
			return
		}
		if id := str(d, "agentId"); id != "" {
			res.Entry.AgentID = id
		}
		if str(m, "uuid") == "" {
			res.Entry.RecordKey = ContentKey(m.MarshalTo(nil))
		}
		res.Entry.Kind = "progress:agent_progress:" + res.Entry.Kind
	case "bash_progress", "mcp_progress", "waiting_for_task", "query_update", "search_results_received", "task_progress":
		res.Skip = SkipBookkeeping
	default:
		res.Skip = SkipUnknownType
	}
}

// ToolCallText renders a tool invocation for the searchable text: the tool
// name followed by its most telling arguments, bounded.
func ToolCallText(name string, input *fastjson.Value) string {
	t := newText(MaxToolInputText)
	var b strings.Builder
	b.WriteString(name)
	if input != nil && input.Type() == fastjson.TypeObject {
		seen := map[string]bool{}
		for _, k := range toolArgPriority {
			if x := input.Get(k); x != nil {
				seen[k] = true
				writeArg(&b, k, x)
			}
		}
		input.GetObject().Visit(func(k []byte, x *fastjson.Value) {
			if !seen[string(k)] && b.Len() < MaxToolInputText {
				writeArg(&b, string(k), x)
			}
		})
	} else if input != nil {
		b.WriteString(" ")
		b.WriteString(cortex.CutUTF8(compactValue(input), 256))
	}
	t.add(b.String())
	return t.String()
}

var toolArgPriority = []string{"command", "cmd", "skill", "file_path", "path", "pattern", "url", "query", "description", "subagent_type", "prompt", "args"}

func writeArg(b *strings.Builder, k string, x *fastjson.Value) {
	val := compactValue(x)
	if val == "" {
		return
	}
	b.WriteString(" ")
	b.WriteString(clean(k))
	b.WriteString("=")
	b.WriteString(cortex.CutUTF8(val, 256))
}

// toolResultText flattens tool_result content: a string, or a list of text
// parts (images and tool references are summarized).
func toolResultText(x *fastjson.Value) string {
	if x == nil {
		return ""
	}
	if x.Type() == fastjson.TypeString {
		return compactValue(x)
	}
	var b strings.Builder
	for _, p := range arr(x) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		switch str(p, "type") {
		case "text":
			b.WriteString(str(p, "text"))
		case "image":
			b.WriteString("[image]")
		case "tool_reference":
			b.WriteString("[tool " + str(p, "tool_name") + "]")
		default:
			// Unknown part types (documents, …) may carry base64 payloads:
			// name them, keep the payload in the raw record only.
			b.WriteString("[" + cortex.CutUTF8(str(p, "type"), 64) + "]")
		}
	}
	return b.String()
}

func arr(v *fastjson.Value) []*fastjson.Value {
	if v == nil || v.Type() != fastjson.TypeArray {
		return nil
	}
	a, _ := v.Array()
	return a
}
