package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// CodexState is the sticky per-file state of a Codex rollout: later records
// inherit the session id, working directory and turn from earlier ones.
// Ingest persists it with the file checkpoint so an append resumes with the
// right context.
type CodexState struct {
	SessionID string    `json:"session_id,omitempty"`
	Cwd       string    `json:"cwd,omitempty"`
	TurnID    string    `json:"turn_id,omitempty"`
	Version   string    `json:"version,omitempty"`
	Model     string    `json:"model,omitempty"`
	LastTime  time.Time `json:"last_time,omitempty"`
	// Pending holds hashes of recently stored messages that Codex writes
	// twice (response_item and event_msg), keyed by hash with the source
	// that stored it.
	Pending []PendingMessage `json:"pending,omitempty"`
	// Calls are recent call ids and their tool names, oldest first.
	Calls [][2]string `json:"calls,omitempty"`
}

// PendingMessage is a message hash awaiting its twin record.
type PendingMessage struct {
	Hash   string `json:"h"`
	Source string `json:"s"`
}

// CodexParser parses Codex CLI / Codex Desktop rollout JSONL records.
type CodexParser struct {
	ctx   FileContext
	st    CodexState
	p     fastjson.Parser
	argsP fastjson.Parser
	clock clock
	calls *boundedSet
	// stored is set by StoredText: a result whose call the parser has
	// not seen is named toolName, and no events are extracted.
	stored   bool
	toolName string
}

// NewCodexParser returns a parser for one rollout file. st is the state
// saved at the checkpoint the read resumes from (zero for a fresh read).
func NewCodexParser(ctx FileContext, st CodexState) *CodexParser {
	c := &CodexParser{ctx: ctx, st: st, clock: clock{last: st.LastTime}, calls: newBoundedSet(recentToolIDs)}
	for _, cn := range st.Calls {
		c.calls.put(cn[0], cn[1])
	}
	return c
}

// State returns the parser's sticky state for checkpointing.
func (c *CodexParser) State() CodexState {
	st := c.st
	st.LastTime = c.clock.last
	st.Calls = c.calls.pairs()
	st.Pending = append([]PendingMessage(nil), c.st.Pending...)
	return st
}

var codexBookkeepingEvents = map[string]bool{
	"token_count": true, "task_started": true, "task_complete": true, "thread_name_updated": true,
	"turn_diff": true, "background_event": true, "session_configured": true, "exec_command_begin": true,
	"patch_apply_begin": true, "mcp_tool_call_begin": true, "web_search_begin": true,
	"exec_command_output_delta": true, "agent_message_delta": true, "agent_reasoning_delta": true,
	"get_history_entry_response": true, "plan_update": true, "entered_review_mode": true,
	"exited_review_mode": true, "item_started": true, "item_completed": true, "collab_agent_spawn_begin": true,
	"view_image_tool_call": true, "mcp_list_tools_response": true, "list_custom_prompts_response": true,
	"shutdown_complete": true, "undo_started": true, "undo_completed": true, "deprecation_notice": true,
}

// Parse parses one rollout record.
func (c *CodexParser) Parse(raw []byte, line int64) Result {
	v, err := c.p.ParseBytes(raw)
	if err != nil {
		return Result{Raw: raw, Line: line, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	if v.Type() != fastjson.TypeObject {
		return Result{Raw: raw, Line: line, Err: fmt.Errorf("record is a JSON %s, not an object", v.Type())}
	}
	typ := str(v, "type")
	pl := v.Get("payload")
	pt := str(pl, "type")
	res := Result{Raw: raw, Line: line, Type: typ}
	if pt != "" {
		res.Type = typ + ":" + pt
	}
	switch typ {
	case "session_meta":
		c.sessionMeta(pl)
		res.Skip = SkipBookkeeping
	case "turn_context":
		if cwd := str(pl, "cwd"); cwd != "" {
			c.st.Cwd = NormalizeProject(cwd)
		}
		if t := str(pl, "turn_id"); t != "" {
			c.st.TurnID = t
		}
		if m := str(pl, "model"); m != "" {
			c.st.Model = m
		}
		res.Skip = SkipBookkeeping
	case "response_item":
		c.responseItem(v, pl, pt, &res)
	case "event_msg":
		c.eventMsg(v, pl, pt, &res)
		if pt == "token_count" {
			at := cortex.TokenUsage{Timestamp: c.clock.last}
			if t, err := cortex.ParseTimestamp(str(v, "timestamp")); err == nil {
				at.Timestamp = t
			}
			session := c.st.SessionID
			if session == "" {
				session = c.ctx.SessionID
			}
			res.Usage = codexUsage(pl, session, c.st.Model, at)
		}
	case "compacted":
		c.envelope(v, &res, cortex.RoleSystem, "compacted")
		t := newText(MaxContextText)
		t.add("Conversation compacted")
		t.add(str(pl, "message"))
		res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
	default:
		res.Skip = SkipUnknownType
	}
	res.Version = c.st.Version
	if res.Skip == "" && res.Err == nil {
		if id := str(pl, "id"); id != "" && typ == "response_item" {
			res.Entry.RecordKey = "p:" + id
		} else {
			res.Entry.RecordKey = ContentKey(raw)
		}
		if !c.stored {
			res.Events = extractEvents(cortex.ToolCodex, &res.Entry, v)
		}
	}
	return res
}

func (c *CodexParser) sessionMeta(pl *fastjson.Value) {
	if id := str(pl, "id"); id != "" {
		c.st.SessionID = id
	} else if id := str(pl, "session_id"); id != "" {
		c.st.SessionID = id
	}
	if cwd := str(pl, "cwd"); cwd != "" {
		c.st.Cwd = NormalizeProject(cwd)
	}
	if ver := str(pl, "cli_version"); ver != "" {
		c.st.Version = ver
	}
}

func (c *CodexParser) envelope(v *fastjson.Value, res *Result, role cortex.Role, kind string) {
	e := &res.Entry
	e.Tool = cortex.ToolCodex
	e.Role = role
	e.Kind = kind
	e.Severity = cortex.SevInfo
	ts, est, warn := c.clock.at(str(v, "timestamp"))
	e.Timestamp, e.TimestampEstimated = ts, est
	if warn != "" {
		res.Warn = warn
	}
	e.SessionID = c.st.SessionID
	if e.SessionID == "" {
		e.SessionID = c.ctx.SessionID
	}
	e.Project = c.st.Cwd
	if e.Project == "" {
		e.Project = c.ctx.Project
	}
	e.ToolVersion = c.st.Version
	putMeta(&e.Meta, "turn_id", c.st.TurnID)
}

// injected reports whether a role=user message is harness-injected context
// rather than typed text.
func injected(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "<") || strings.HasPrefix(t, "# AGENTS.md") || strings.HasPrefix(t, "# CLAUDE.md")
}

func messageText(pl *fastjson.Value) (string, int) {
	var b strings.Builder
	images := 0
	for _, part := range arr(pl.Get("content")) {
		switch str(part, "type") {
		case "input_text", "output_text", "text":
			text := str(part, "text")
			if imageTag(text) {
				// "<image name=[Image #1]>" … "</image>" wrap an input_image,
				// which is counted below; the event_msg twin has no such tags.
				continue
			}
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(text)
		case "input_image", "image":
			images++
		}
	}
	if c := pl.Get("content"); c != nil && c.Type() == fastjson.TypeString {
		b.WriteString(compactValue(c))
	}
	return b.String(), images
}

// imageTag reports whether a message part is only the tag Codex writes
// around an attached image.
func imageTag(text string) bool {
	t := strings.TrimSpace(text)
	return t == "</image>" || strings.HasPrefix(t, "<image ") && strings.HasSuffix(t, ">") && !strings.Contains(t, "\n")
}

// dedupe reports whether text was already stored from the other source
// (Codex writes typed prompts and assistant messages as both a
// response_item and an event_msg). It remembers text stored from src.
func (c *CodexParser) dedupe(kind, src, text string) bool {
	if kind == "assistant" {
		// The response_item copy of an agent_message appends the memory
		// citation that the event_msg copy carries as a separate field.
		if i := strings.LastIndex(text, "<oai-mem-citation>"); i >= 0 && strings.HasSuffix(strings.TrimSpace(text), "</oai-mem-citation>") {
			text = text[:i]
		}
	}
	key := kind + ":" + strings.TrimSpace(text)
	sum := ContentKey([]byte(key))
	for i, p := range c.st.Pending {
		if p.Hash == sum && p.Source != src {
			c.st.Pending = append(c.st.Pending[:i], c.st.Pending[i+1:]...)
			return true
		}
	}
	// Twins arrive within a few records of each other; keep the newest few.
	if len(c.st.Pending) >= 16 {
		c.st.Pending = c.st.Pending[1:]
	}
	c.st.Pending = append(c.st.Pending, PendingMessage{Hash: sum, Source: src})
	return false
}

func (c *CodexParser) responseItem(v, pl *fastjson.Value, pt string, res *Result) {
	switch pt {
	case "message":
		role := str(pl, "role")
		text, images := messageText(pl)
		if images > 0 {
			text = strings.TrimSpace(text + fmt.Sprintf("\n[%d image(s)]", images))
		}
		switch {
		case role == "assistant":
			if c.dedupe("assistant", "response_item", text) {
				res.Skip = SkipDuplicate
				return
			}
			c.envelope(v, res, cortex.RoleAssistant, "response_item:message:assistant")
			putMeta(&res.Entry.Meta, "phase", str(pl, "phase"))
			c.setText(res, text, MaxAssistantText)
			res.Entry.Model = c.st.Model
		case role == "user" && !injected(text):
			if c.dedupe("user", "response_item", text) {
				res.Skip = SkipDuplicate
				return
			}
			c.envelope(v, res, cortex.RoleUser, "response_item:message:user")
			c.setText(res, text, MaxUserText)
		case role == "user" && strings.HasPrefix(strings.TrimSpace(text), "<turn_aborted>"):
			c.envelope(v, res, cortex.RoleSystem, "response_item:message:turn_aborted")
			c.setText(res, stripTags(text), MaxContextText)
		default:
			c.envelope(v, res, cortex.RoleContext, "response_item:message:"+role)
			c.setText(res, text, MaxContextText)
		}
		if res.Skip == "" && strings.TrimSpace(res.Entry.Text) == "" {
			res.Skip = SkipEmpty
		}
	case "function_call", "custom_tool_call", "local_shell_call":
		name := codexToolName(pl, pt)
		c.envelope(v, res, cortex.RoleToolCall, "response_item:"+pt)
		callID := str(pl, "call_id")
		if callID != "" && name != "" {
			c.calls.put(callID, name)
		}
		var input *fastjson.Value
		if args := str(pl, "arguments"); args != "" {
			if a, err := c.argsP.Parse(args); err == nil {
				input = a
			} else {
				input = fastjson.MustParse(strconv.Quote(cortex.CutUTF8(args, MaxToolInputText)))
			}
		} else if in := pl.Get("input"); in != nil {
			input = in
		} else if act := pl.Get("action"); act != nil {
			input = act
		}
		res.Entry.Text = ToolCallText(name, input)
		res.Entry.ToolName = name
		putMeta(&res.Entry.Meta, "call_id", callID)
		if t := str(pl, "metadata", "turn_id"); t != "" {
			putMeta(&res.Entry.Meta, "turn_id", t)
		}
	case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
		callID := str(pl, "call_id")
		name, ok := c.calls.get(callID)
		if !ok && c.stored {
			name = c.toolName
		}
		c.envelope(v, res, cortex.RoleToolResult, "response_item:"+pt)
		out := CodexOutput(pl.Get("output"))
		res.Entry.ToolName = name
		putMeta(&res.Entry.Meta, "call_id", callID)
		if out.ExitCode != nil {
			putMeta(&res.Entry.Meta, "exit_code", strconv.Itoa(*out.ExitCode))
		}
		c.resultText(res, name, out.Text, out.Failed)
	case "reasoning":
		t := newText(MaxAssistantText)
		var parts []string
		for _, s := range arr(pl.Get("summary")) {
			parts = append(parts, str(s, "text"))
		}
		for _, s := range arr(pl.Get("content")) {
			parts = append(parts, str(s, "text"))
		}
		for _, p := range parts {
			t.add(p)
		}
		if t.String() == "" {
			res.Skip = SkipEmpty // encrypted reasoning only
			return
		}
		// The event_msg twins come one per part (agent_reasoning per
		// summary item), so parts are matched one by one.
		dup := true
		for _, p := range parts {
			if strings.TrimSpace(p) != "" && !c.dedupe("reasoning", "response_item", p) {
				dup = false
			}
		}
		if dup {
			res.Skip = SkipDuplicate
			return
		}
		c.envelope(v, res, cortex.RoleThinking, "response_item:reasoning")
		res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
	case "web_search_call":
		c.envelope(v, res, cortex.RoleToolCall, "response_item:web_search_call")
		res.Entry.ToolName = "web_search"
		res.Entry.Text = ToolCallText("web_search", pl.Get("action"))
	case "tool_search_call":
		c.envelope(v, res, cortex.RoleToolCall, "response_item:tool_search_call")
		res.Entry.ToolName = "tool_search"
		res.Entry.Text = ToolCallText("tool_search", pl.Get("arguments"))
		putMeta(&res.Entry.Meta, "call_id", str(pl, "call_id"))
	case "tool_search_output":
		c.envelope(v, res, cortex.RoleToolResult, "response_item:tool_search_output")
		res.Entry.ToolName = "tool_search"
		t := newText(MaxToolOutputHead)
		for _, tool := range arr(pl.Get("tools")) {
			t.add(str(tool, "name"))
		}
		res.Entry.Text = "[tool_search result] " + t.String()
		putMeta(&res.Entry.Meta, "call_id", str(pl, "call_id"))
	case "ghost_snapshot":
		res.Skip = SkipBookkeeping
	default:
		res.Skip = SkipUnknownType
	}
}

func (c *CodexParser) setText(res *Result, text string, max int) {
	t := newText(max)
	t.add(text)
	res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
}

func (c *CodexParser) resultText(res *Result, name, body string, failed bool) {
	var cut bool
	prefix := cortex.CutUTF8(name, 256)
	if prefix == "" {
		prefix = "tool"
	}
	if failed {
		body, cut = headTail(body, MaxErrorHead, MaxErrorTail)
		prefix += " error"
		res.Entry.IsError = true
		res.Entry.Severity = cortex.SevError
	} else {
		body, cut = headTail(body, MaxToolOutputHead, MaxToolOutputTail)
		prefix += " result"
	}
	res.Entry.Text = "[" + prefix + "] " + strings.TrimSpace(body)
	res.Entry.TextTruncated = cut
}

func (c *CodexParser) eventMsg(v, pl *fastjson.Value, pt string, res *Result) {
	switch pt {
	case "user_message":
		text := str(pl, "message")
		if n := len(arr(pl.Get("images"))) + len(arr(pl.Get("local_images"))); n > 0 {
			text = strings.TrimSpace(text + fmt.Sprintf("\n[%d image(s)]", n))
		}
		if c.dedupe("user", "event_msg", text) {
			res.Skip = SkipDuplicate
			return
		}
		c.envelope(v, res, cortex.RoleUser, "event_msg:user_message")
		c.setText(res, text, MaxUserText)
	case "agent_message":
		text := str(pl, "message")
		if c.dedupe("assistant", "event_msg", text) {
			res.Skip = SkipDuplicate
			return
		}
		c.envelope(v, res, cortex.RoleAssistant, "event_msg:agent_message")
		c.setText(res, text, MaxAssistantText)
	case "agent_reasoning", "agent_reasoning_raw_content":
		text := str(pl, "text")
		if c.dedupe("reasoning", "event_msg", text) {
			res.Skip = SkipDuplicate
			return
		}
		c.envelope(v, res, cortex.RoleThinking, "event_msg:"+pt)
		c.setText(res, text, MaxAssistantText)
	case "exec_command_end":
		c.envelope(v, res, cortex.RoleSystem, "event_msg:exec_command_end")
		exit, ok := intAt(pl, "exit_code")
		cmd := compactValue(pl.Get("command"))
		res.Entry.Text = fmt.Sprintf("command finished (exit %d): %s", exit, cortex.CutUTF8(cmd, 512))
		putMeta(&res.Entry.Meta, "call_id", str(pl, "call_id"))
		if ok {
			putMeta(&res.Entry.Meta, "exit_code", strconv.FormatInt(exit, 10))
		}
		if ok && exit != 0 {
			res.Entry.IsError = true
			res.Entry.Severity = cortex.SevError
		}
	case "patch_apply_end":
		c.envelope(v, res, cortex.RoleSystem, "event_msg:patch_apply_end")
		ok := boolAt(pl, "success")
		res.Entry.Text = "patch applied"
		if !ok {
			res.Entry.Text = "patch failed: " + cortex.CutUTF8(str(pl, "stderr"), 1024)
			res.Entry.IsError = true
			res.Entry.Severity = cortex.SevError
		}
		putMeta(&res.Entry.Meta, "call_id", str(pl, "call_id"))
	case "mcp_tool_call_end":
		inv := pl.Get("invocation")
		server, tool := str(inv, "server"), str(inv, "tool")
		name := "mcp__" + server + "__" + tool
		c.envelope(v, res, cortex.RoleToolResult, "event_msg:mcp_tool_call_end")
		res.Entry.ToolName = name
		putMeta(&res.Entry.Meta, "call_id", str(pl, "call_id"))
		body, failed := mcpResultText(pl.Get("result"))
		c.resultText(res, name, body, failed)
	case "web_search_end":
		c.envelope(v, res, cortex.RoleToolResult, "event_msg:web_search_end")
		res.Entry.ToolName = "web_search"
		res.Entry.Text = "[web_search result] " + cortex.CutUTF8(str(pl, "query"), MaxToolInputText)
		putMeta(&res.Entry.Meta, "call_id", str(pl, "call_id"))
	case "turn_aborted":
		c.envelope(v, res, cortex.RoleSystem, "event_msg:turn_aborted")
		res.Entry.Text = "Turn aborted: " + cortex.CutUTF8(str(pl, "reason"), MaxToolInputText)
	case "context_compacted":
		c.envelope(v, res, cortex.RoleSystem, "event_msg:context_compacted")
		res.Entry.Text = "Context compacted"
	case "error", "stream_error":
		c.envelope(v, res, cortex.RoleSystem, "event_msg:"+pt)
		c.setText(res, "Error: "+str(pl, "message"), MaxContextText)
		res.Entry.IsError = true
		res.Entry.Severity = cortex.SevError
	case "warning":
		c.envelope(v, res, cortex.RoleSystem, "event_msg:warning")
		c.setText(res, "Warning: "+str(pl, "message"), MaxContextText)
		res.Entry.Severity = cortex.SevWarning
	default:
		if codexBookkeepingEvents[pt] {
			res.Skip = SkipBookkeeping
			return
		}
		res.Skip = SkipUnknownType
	}
}

// mcpResultText flattens an mcp_tool_call_end result ({"Ok":{content,isError}}
// or {"Err":"…"}).
func mcpResultText(r *fastjson.Value) (string, bool) {
	if r == nil {
		return "", false
	}
	if e := r.Get("Err"); e != nil {
		return valueText(e, math.MaxInt), true
	}
	ok := r.Get("Ok")
	if ok == nil {
		ok = r
	}
	var b strings.Builder
	for _, p := range arr(ok.Get("content")) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if t := str(p, "text"); t != "" {
			b.WriteString(t)
		} else {
			b.WriteString(valueText(p, math.MaxInt))
		}
	}
	return b.String(), boolAt(ok, "isError") || boolAt(ok, "is_error")
}

// Output is a Codex tool output with its derived failure status.
type Output struct {
	Text     string
	ExitCode *int
	// Failed is true for a non-zero exit code or a patch verification failure.
	Failed bool
}

// CodexOutput decodes a function_call_output / custom_tool_call_output
// value and derives its failure. Codex has no error flag; failure is read
// from (in this order) the JSON envelope {"output","metadata":{"exit_code"}},
// a "Process exited with code N" line, an "Exit code: N" line, and the
// "apply_patch verification failed" message.
func CodexOutput(out *fastjson.Value) Output {
	oc, body := codexOutcomeOf(out)
	return Output{Text: clean(string(body)), ExitCode: oc.exit, Failed: oc.failed}
}

// codexOutcome is what a tool output says about its call.
type codexOutcome struct {
	exit   *int
	failed bool
}

// codexOutcomeOf derives a tool output's outcome (see CodexOutput) and
// returns its text: the envelope's "output", the parts of a list, or the
// output itself — for a string output the decoded bytes without a copy
// (valid only while the parsed record is).
func codexOutcomeOf(out *fastjson.Value) (codexOutcome, []byte) {
	var oc codexOutcome
	if out == nil {
		return oc, nil
	}
	var text []byte
	switch out.Type() {
	case fastjson.TypeArray:
		var b strings.Builder
		for _, p := range arr(out) {
			switch str(p, "type") {
			case "input_image":
				b.WriteString("[image]\n")
			case "input_text", "output_text", "text":
				b.WriteString(str(p, "text"))
				b.WriteByte('\n')
			}
		}
		return oc, []byte(strings.TrimSpace(b.String()))
	case fastjson.TypeString:
		text = out.GetStringBytes()
	default:
		text = []byte(valueText(out, math.MaxInt))
	}
	body := text
	if trimmed := bytes.TrimSpace(text); bytes.HasPrefix(trimmed, []byte("{")) && bytes.Contains(trimmed, []byte(`"exit_code"`)) {
		var env struct {
			Output   string `json:"output"`
			Metadata struct {
				ExitCode *int `json:"exit_code"`
			} `json:"metadata"`
		}
		if json.Unmarshal(trimmed, &env) == nil && env.Metadata.ExitCode != nil {
			body = []byte(env.Output)
			oc.exit = env.Metadata.ExitCode
		}
	}
	if oc.exit == nil {
		head := text[:min(len(text), 4096)]
		for _, prefix := range []string{"Process exited with code ", "Exit code: "} {
			if n, found, ok := exitLine(head, prefix); found && ok {
				oc.exit = &n
				break
			}
		}
	}
	if oc.exit != nil {
		oc.failed = *oc.exit != 0
	} else {
		oc.failed = bytes.Contains(text, []byte("apply_patch verification failed"))
	}
	return oc, body
}

// execHeaderKeys start the lines Codex puts before a command's output
// ("Command: …" (which may span lines), "Chunk ID: 95b0f4", "Wall time: 0.4
// seconds", "Process exited with code 1", "Original token count: 52"),
// ended by an "Output:" line.
var execHeaderKeys = []string{"Command:", "Chunk ID:", "Wall time:", "Process exited with code", "Process running with session ID",
	"Original token count:", "Exit code:", "Total output lines:"}

// execOutput returns a command output without Codex's header: the text
// after the "Output:" line that ends it, when the text starts with a
// header line and has a "Wall time:" line before "Output:"; otherwise the
// text as it is. The exit code is read from the header before
// (codexOutcomeOf); the stored row keeps the whole output, the tool event
// the command's own.
func execOutput(b []byte) []byte {
	known := func(line []byte) bool {
		for _, k := range execHeaderKeys {
			if bytes.HasPrefix(line, []byte(k)) {
				return true
			}
		}
		return false
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	if !known(first) {
		return b
	}
	head := b[:min(len(b), 64<<10)]
	wall := false
	for rest := head; len(rest) > 0; {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		switch {
		case string(line) == "Output:":
			if wall {
				return b[len(head)-len(after):]
			}
			return b
		case bytes.HasPrefix(line, []byte("Wall time:")):
			wall = true
		}
		if !found {
			break
		}
		rest = after
	}
	return b
}

// exitLine finds the first line of b that starts with prefix and an
// integer, like the regular expression (?m)^prefix(-?[0-9]+). found
// reports a match, ok that its integer fits an int.
func exitLine(b []byte, prefix string) (n int, found, ok bool) {
	for start := 0; start < len(b); {
		line := b[start:]
		if len(line) >= len(prefix) && string(line[:len(prefix)]) == prefix {
			d := line[len(prefix):]
			k := 0
			if k < len(d) && d[k] == '-' {
				k++
			}
			m := k
			for m < len(d) && d[m] >= '0' && d[m] <= '9' {
				m++
			}
			if m > k {
				v, err := strconv.Atoi(string(d[:m]))
				return v, true, err == nil
			}
		}
		j := bytes.IndexByte(line, '\n')
		if j < 0 {
			break
		}
		start += j + 1
	}
	return 0, false, false
}
