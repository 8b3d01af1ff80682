package transcript

import (
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// skillBodyHeader starts the user record Claude Code injects with a skill's
// SKILL.md body.
const skillBodyHeader = "Base directory for this skill:"

// claudeEvents extracts the events of one Claude Code record.
func claudeEvents(ev *cortex.Events, e *cortex.Entry, v *fastjson.Value) {
	switch string(rawStr(v, "type")) {
	case "user":
		claudeMessageEvents(ev, e, v, false)
	case "assistant":
		claudeMessageEvents(ev, e, v, true)
	case "":
		// Old-style lines without a type (see ClaudeParser.Parse).
		switch string(rawStr(v, "message", "role")) {
		case "user":
			claudeMessageEvents(ev, e, v, false)
		case "assistant":
			claudeMessageEvents(ev, e, v, true)
		}
	case "attachment":
		claudeAttachmentEvents(ev, v)
	case "progress":
		d := v.Get("data")
		switch string(rawStr(d, "type")) {
		case "hook_progress":
			claudeHookProgress(ev, v, d)
		case "agent_progress":
			// A subagent's message embedded in the main file: the same
			// rules apply to the embedded record.
			m := d.Get("message")
			switch string(rawStr(m, "type")) {
			case "user":
				claudeMessageEvents(ev, e, m, false)
			case "assistant":
				claudeMessageEvents(ev, e, m, true)
			}
		}
	case "system":
		if string(rawStr(v, "subtype")) == "stop_hook_summary" {
			claudeStopHookSummary(ev, v)
		}
	}
}

// claudeMessageEvents extracts the events of a user or assistant record
// (rec is the record that holds "message": the line itself or the message
// embedded in an agent_progress record).
func claudeMessageEvents(ev *cortex.Events, e *cortex.Entry, rec *fastjson.Value, assistant bool) {
	msg := rec.Get("message")
	if assistant {
		claudeAttribution(ev, rec, msg)
	} else if strings.HasSuffix(e.Kind, "user:meta") {
		claudeSkillBody(ev, rec, msg)
	} else if e.Kind == "user:command" {
		claudeCommandEvent(ev, msg)
	}
	for _, b := range arr(msg.Get("content")) {
		switch string(rawStr(b, "type")) {
		case "tool_use":
			if assistant {
				claudeToolUse(ev, e, b, "tool_use")
			}
		case "server_tool_use":
			if assistant {
				claudeToolUse(ev, e, b, "server_tool_use")
			}
		case "mcp_tool_use":
			if assistant {
				claudeToolUse(ev, e, b, "mcp_tool_use")
			}
		case "tool_result":
			claudeToolResult(ev, e, b, "tool_result")
		case "mcp_tool_result":
			claudeToolResult(ev, e, b, "mcp_tool_result")
		case "web_search_tool_result":
			claudeToolResult(ev, e, b, "web_search_tool_result")
		}
	}
}

// claudeAttribution emits the skill named by attributionSkill (with
// attributionPlugin from the same object): on the record itself, or under
// message / payload when a version puts it there. Field first: nothing is
// inferred when the fields are absent.
func claudeAttribution(ev *cortex.Events, rec, msg *fastjson.Value) {
	for _, src := range []struct {
		prefix string
		v      *fastjson.Value
	}{{"", rec}, {"message.", msg}, {"payload.", rec.Get("payload")}} {
		if src.v == nil || src.v.Get("attributionSkill") == nil {
			continue
		}
		name, plugin, ok := NormalizeSkill(str(src.v, "attributionSkill"), str(src.v, "attributionPlugin"))
		if !ok {
			return
		}
		s := cortex.SkillEvent{SkillName: name, SkillPlugin: plugin,
			EventKind: cortex.SkillClaudeAttribution, EvidenceKind: cortex.EvidenceStructured}
		putMeta(&s.Meta, "field", src.prefix+"attributionSkill")
		putMeta(&s.Meta, "agent", cortex.CutUTF8(str(src.v, "attributionAgent"), MaxSkillField))
		ev.Skills = append(ev.Skills, s)
		return
	}
}

// claudeSkillBody emits the skill whose SKILL.md body a meta user record
// injects ("Base directory for this skill: <dir>" then the body). With a
// sourceToolUseID a Skill tool_use loaded it; without one the user's slash
// command did.
func claudeSkillBody(ev *cortex.Events, rec, msg *fastjson.Value) {
	text := ""
	if c := msg.Get("content"); c != nil && c.Type() == fastjson.TypeString {
		text = str(msg, "content")
	}
	for _, b := range arr(msg.Get("content")) {
		if string(rawStr(b, "type")) == "text" {
			if t := str(b, "text"); strings.HasPrefix(strings.TrimLeft(t, " \t\r\n"), skillBodyHeader) {
				text = t
				break
			}
		}
	}
	text = strings.TrimLeft(text, " \t\r\n")
	rest, ok := strings.CutPrefix(text, skillBodyHeader)
	if !ok {
		return
	}
	dir, body, _ := strings.Cut(rest, "\n")
	dir = strings.TrimRight(strings.TrimSpace(dir), `/\`)
	name, plugin, ok := SkillFromPath(dir)
	if !ok {
		return
	}
	s := cortex.SkillEvent{SkillName: name, SkillPlugin: plugin, EvidenceKind: cortex.EvidenceContent,
		EventKind: cortex.SkillClaudeSlash}
	if p := dir + "/SKILL.md"; !hasControl(p) {
		s.SkillPath = cortex.CutUTF8(p, maxSkillPath)
	}
	if src := str(rec, "sourceToolUseID"); src != "" {
		s.EventKind = cortex.SkillClaudeBody
		putMeta(&s.Meta, "source_tool_use_id", cortex.CutUTF8(src, maxEventName))
	}
	if body = strings.TrimSpace(body); body != "" {
		putMeta(&s.Meta, "skill_content_sha256", sha256Hex(body))
	}
	ev.Skills = append(ev.Skills, s)
}

// claudeToolUse emits the call side of a tool_use block (or a
// server_tool_use / mcp_tool_use block), plus a skill event when it is the
// Skill tool.
func claudeToolUse(ev *cortex.Events, e *cortex.Entry, b *fastjson.Value, blockType string) {
	name := str(b, "name")
	if blockType == "mcp_tool_use" {
		// The API's MCP connector names the server separately.
		name = mcpName(str(b, "server_name"), name)
	}
	t := toolEvent(cortex.ToolClaudeUse, str(b, "id"), name)
	t.HasCall = true
	t.TurnID = turnID(e)
	if in := b.Get("input"); in != nil {
		js, cut := jsonText(in, MaxEventArgs)
		setArguments(&t, js, cut)
	}
	if blockType != "tool_use" {
		putMeta(&t.Meta, "block_type", blockType)
	}
	ev.Tools = append(ev.Tools, t)
	if name != "Skill" {
		return
	}
	in := b.Get("input")
	sname, plugin, ok := NormalizeSkill(str(in, "skill"), "")
	if !ok {
		return
	}
	s := cortex.SkillEvent{SkillName: sname, SkillPlugin: plugin,
		EventKind: cortex.SkillClaudeTool, EvidenceKind: cortex.EvidenceStructured}
	if args := in.Get("args"); args != nil {
		putMeta(&s.Meta, "args", cortex.CutUTF8(valueText(args, MaxSkillField), MaxSkillField))
	}
	putMeta(&s.Meta, "tool_use_id", t.CallID)
	ev.Skills = append(ev.Skills, s)
}

// claudeToolResult emits the result side of a tool_result block (or an
// assistant-side MCP / web search result). An absent is_error means false,
// as in the Messages API.
func claudeToolResult(ev *cortex.Events, e *cortex.Entry, b *fastjson.Value, blockType string) {
	t := toolEvent(cortex.ToolClaudeResult, str(b, "tool_use_id"), "")
	t.TurnID = turnID(e)
	isErr := boolAt(b, "is_error")
	status := cortex.CallSuccess
	if isErr {
		status = cortex.CallError
	}
	if c := b.Get("content"); c != nil && c.Type() == fastjson.TypeString {
		setResult(&t, status, boolPtr(isErr), c.GetStringBytes())
	} else {
		setResult(&t, status, boolPtr(isErr), toolResultText(c))
	}
	if blockType != "tool_result" {
		putMeta(&t.Meta, "block_type", blockType)
	}
	ev.Tools = append(ev.Tools, t)
}

// claudeAttachmentEvents extracts hook runs and re-injected skills from an
// attachment record.
func claudeAttachmentEvents(ev *cortex.Events, v *fastjson.Value) {
	a := v.Get("attachment")
	at := str(a, "type")
	switch {
	case strings.HasPrefix(at, "hook_") || at == "async_hook_response":
		claudeHookAttachment(ev, a, at)
	case at == "invoked_skills":
		for _, sk := range arr(a.Get("skills")) {
			name, plugin, ok := NormalizeSkill(str(sk, "name"), "")
			if !ok {
				continue
			}
			s := cortex.SkillEvent{SkillName: name, SkillPlugin: plugin,
				EventKind: cortex.SkillClaudeInvoked, EvidenceKind: cortex.EvidenceStructured}
			if p := str(sk, "path"); !hasControl(p) {
				s.SkillPath = cortex.CutUTF8(strings.TrimSpace(p), maxSkillPath)
			}
			if c := str(sk, "content"); c != "" {
				putMeta(&s.Meta, "skill_content_sha256", sha256Hex(c))
			}
			ev.Skills = append(ev.Skills, s)
		}
	}
}

// claudeHookAttachment emits the hook run of a hook_* or
// async_hook_response attachment.
func claudeHookAttachment(ev *cortex.Events, a *fastjson.Value, at string) {
	h := hookEvent(str(a, "hookEvent"), str(a, "hookName"))
	h.Command = cortex.CutUTF8(str(a, "command"), MaxEventText)
	exit, hasExit := intAt(a, "exitCode")
	h.Status = HookStatus(at, exit, hasExit)
	if hasExit {
		h.ExitCode = intPtr(exit)
	}
	if d, ok := intAt(a, "durationMs"); ok {
		h.DurationMS = &d
	}
	out := str(a, "stdout")
	if at == "hook_additional_context" || at == "hook_system_message" || out == "" {
		out = valueText(a.Get("content"), MaxEventText)
	}
	setHookOutput(&h, out, str(a, "stderr"))
	for _, k := range []string{"persistedOutputPath", "outputPath", "persisted_output_path"} {
		if p := str(a, k); p != "" {
			h.PersistedOutputPath = cortex.CutUTF8(p, maxSkillPath)
			break
		}
	}
	putMeta(&h.Meta, "attachment_type", cortex.CutUTF8(at, maxEventName))
	putMeta(&h.Meta, "tool_use_id", cortex.CutUTF8(str(a, "toolUseID"), maxEventName))
	putMeta(&h.Meta, "process_id", cortex.CutUTF8(str(a, "processId"), maxEventName))
	ev.Hooks = append(ev.Hooks, h)
}

// hookEvent starts a runtime hook event: the event from hookEvent, else
// from the hook name up to its ":" (PostToolUse:Bash → PostToolUse).
func hookEvent(event, name string) cortex.HookEvent {
	if event == "" {
		event, _, _ = strings.Cut(name, ":")
	}
	return cortex.HookEvent{HookEvent: cortex.CutUTF8(event, maxEventName), HookName: cortex.CutUTF8(name, maxEventName),
		EvidenceKind: cortex.EvidenceRuntime}
}

// setHookOutput stores bounded stdout and stderr previews (head and tail
// kept: hook failures usually end their output with the error).
func setHookOutput(h *cortex.HookEvent, stdout, stderr string) {
	var cut bool
	if h.StdoutPreview, cut = preview(strings.TrimSpace(stdout), MaxEventText, true); cut {
		putMeta(&h.Meta, "stdout_truncated", "true")
	}
	if h.StderrPreview, cut = preview(strings.TrimSpace(stderr), MaxEventText, true); cut {
		putMeta(&h.Meta, "stderr_truncated", "true")
	}
}

// claudeHookProgress emits the start of a hook run (progress/hook_progress,
// Claude Code 2.1.7–2.1.50): its outcome is not recorded.
func claudeHookProgress(ev *cortex.Events, v, d *fastjson.Value) {
	h := hookEvent(str(d, "hookEvent"), str(d, "hookName"))
	h.Command = cortex.CutUTF8(str(d, "command"), MaxEventText)
	h.Status = cortex.HookUnknown
	putMeta(&h.Meta, "phase", "started")
	putMeta(&h.Meta, "tool_use_id", cortex.CutUTF8(str(v, "toolUseID"), maxEventName))
	ev.Hooks = append(ev.Hooks, h)
}

// claudeStopHookSummary emits one Stop hook run per hookInfos element of a
// system/stop_hook_summary record: blocked when the hooks prevented
// continuation, failed when they reported errors (listed in every event's
// stderr), else success.
func claudeStopHookSummary(ev *cortex.Events, v *fastjson.Value) {
	infos := arr(v.Get("hookInfos"))
	if len(infos) == 0 {
		return
	}
	var errs []string
	for _, x := range arr(v.Get("hookErrors")) {
		errs = append(errs, valueText(x, MaxEventText))
	}
	status := cortex.HookSuccess
	switch {
	case boolAt(v, "preventedContinuation"):
		status = cortex.HookBlocked
	case len(errs) > 0:
		status = cortex.HookFailed
	}
	count, ok := intAt(v, "hookCount")
	if !ok {
		count = int64(len(infos))
	}
	for i, info := range infos {
		h := hookEvent("Stop", "Stop")
		h.Index = i
		h.Status = status
		if info.Type() == fastjson.TypeString {
			h.Command = cortex.CutUTF8(str(info), MaxEventText)
		} else {
			h.Command = cortex.CutUTF8(str(info, "command"), MaxEventText)
		}
		if d, ok := intAt(info, "durationMs"); ok {
			h.DurationMS = &d
		}
		setHookOutput(&h, "", strings.Join(errs, "\n"))
		putMeta(&h.Meta, "hook_count", strconv.FormatInt(count, 10))
		putMeta(&h.Meta, "tool_use_id", cortex.CutUTF8(str(v, "toolUseID"), maxEventName))
		putMeta(&h.Meta, "stop_reason", cortex.CutUTF8(str(v, "stopReason"), MaxSkillField))
		ev.Hooks = append(ev.Hooks, h)
	}
}
