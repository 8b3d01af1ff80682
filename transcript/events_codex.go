package transcript

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// codexEvents extracts the events of one Codex rollout record. Codex writes
// no hook runs into rollouts, so there are no hook events.
func codexEvents(ev *cortex.Events, e *cortex.Entry, v *fastjson.Value) {
	pl := v.Get("payload")
	switch string(rawStr(v, "type")) {
	case "response_item":
		switch string(rawStr(pl, "type")) {
		case "message":
			codexSkillBlocks(ev, pl)
			if e.Role == cortex.RoleAssistant {
				text, _ := messageText(pl)
				codexAnnouncements(ev, text)
			}
		case "function_call":
			codexCall(ev, e, pl, "function_call")
		case "custom_tool_call":
			codexCall(ev, e, pl, "custom_tool_call")
		case "local_shell_call":
			codexCall(ev, e, pl, "local_shell_call")
		case "function_call_output":
			codexOutput(ev, e, pl, "function_call_output")
		case "custom_tool_call_output":
			codexOutput(ev, e, pl, "custom_tool_call_output")
		case "local_shell_call_output":
			codexOutput(ev, e, pl, "local_shell_call_output")
		}
	case "event_msg":
		switch string(rawStr(pl, "type")) {
		case "agent_message":
			if e.Role == cortex.RoleAssistant {
				codexAnnouncements(ev, str(pl, "message"))
			}
		case "mcp_tool_call_end":
			codexMCPEnd(ev, e, pl)
		case "exec_command_end":
			codexExecEnd(ev, e, pl)
		case "patch_apply_end":
			codexPatchEnd(ev, e, pl)
		}
	}
}

// codexToolName is the full name of a Codex tool call. Newer rollouts name
// an MCP tool by its server namespace plus its own name
// ({"name":"js","namespace":"mcp__node_repl"} → "mcp__node_repl__js");
// other namespaces are not part of the name.
func codexToolName(pl *fastjson.Value, pt string) string {
	if pt == "local_shell_call" {
		return "local_shell"
	}
	name := str(pl, "name")
	ns := strings.TrimSuffix(str(pl, "namespace"), "__")
	if len(ns) > len("mcp__") && strings.HasPrefix(ns, "mcp__") && name != "" && !strings.HasPrefix(name, "mcp__") {
		return ns + "__" + name
	}
	return name
}

// codexCall emits the call side of a function_call, custom_tool_call or
// local_shell_call.
func codexCall(ev *cortex.Events, e *cortex.Entry, pl *fastjson.Value, pt string) {
	t := toolEvent(cortex.ToolCodexCall, str(pl, "call_id"), codexToolName(pl, pt))
	t.HasCall = true
	t.TurnID = turnID(e, str(pl, "metadata", "turn_id"))
	var js string
	var cut bool
	switch {
	case pl.Get("arguments") != nil:
		js, cut = codexArguments(pl.Get("arguments"))
	case pl.Get("input") != nil:
		js, cut = jsonText(pl.Get("input"), MaxEventArgs)
	case pl.Get("action") != nil:
		js, cut = jsonText(pl.Get("action"), MaxEventArgs)
	}
	if js != "" {
		setArguments(&t, js, cut)
	}
	if pt != "function_call" {
		putMeta(&t.Meta, "item_type", pt)
	}
	if ns := str(pl, "namespace"); ns != "" && t.MCPServer == "" {
		putMeta(&t.Meta, "namespace", cortex.CutUTF8(ns, maxEventName))
	}
	ev.Tools = append(ev.Tools, t)
	if a := pl.Get("arguments"); a != nil && bytes.Contains(rawStr(pl, "arguments"), []byte("SKILL.md")) {
		var p fastjson.Parser
		if args, err := p.ParseBytes(a.GetStringBytes()); err == nil {
			codexSkillRead(ev, t.ToolName, args)
		}
	} else if a != nil && a.Type() == fastjson.TypeObject {
		codexSkillRead(ev, t.ToolName, a)
	}
}

// codexArguments renders function_call arguments: a JSON string holding
// JSON is re-compacted, any other string is kept as a JSON string. Both are
// bounded to MaxEventArgs.
func codexArguments(a *fastjson.Value) (string, bool) {
	if a.Type() != fastjson.TypeString {
		return jsonText(a, MaxEventArgs)
	}
	s := a.GetStringBytes()
	if fastjson.ValidateBytes(s) == nil {
		if js, cut, ok := compactJSON(s, MaxEventArgs); ok {
			return js, cut
		}
	}
	w := jsonWriter{max: MaxEventArgs}
	w.str(s)
	if w.full {
		return cortex.CutUTF8(string(w.b), MaxEventArgs), true
	}
	return string(w.b), false
}

// codexOutput emits the result side of a tool output. Codex has no error
// flag: the outcome is read from the output (see CodexOutput); an output
// without an exit code or a known failure message is "unknown".
func codexOutput(ev *cortex.Events, e *cortex.Entry, pl *fastjson.Value, pt string) {
	t := toolEvent(cortex.ToolCodexOutput, str(pl, "call_id"), "")
	t.TurnID = turnID(e, str(pl, "metadata", "turn_id"))
	oc, body := codexOutcomeOf(pl.Get("output"))
	body = execOutput(body)
	switch {
	case oc.exit != nil:
		code := *oc.exit
		t.ExitCode = &code
		if oc.failed {
			// "exit 1: <first output line>…": the status and what the
			// command said, not Codex's header.
			msg := "exit " + strconv.Itoa(code)
			if out := strings.TrimLeft(string(body), "\r\n"); out != "" {
				msg += ": " + out
			}
			setResult(&t, cortex.CallError, boolPtr(true), msg)
		} else {
			setResult(&t, cortex.CallSuccess, boolPtr(false), body)
		}
	case oc.failed:
		setResult(&t, cortex.CallError, boolPtr(true), body)
		putMeta(&t.Meta, "failure", "apply_patch_verification_failed")
	default:
		setResult(&t, cortex.CallUnknown, nil, body)
	}
	if pt != "function_call_output" {
		putMeta(&t.Meta, "item_type", pt)
	}
	ev.Tools = append(ev.Tools, t)
}

// codexMCPEnd emits the result of an MCP tool call (event_msg
// mcp_tool_call_end). The function_call of the same call_id is the call
// side, so HasCall stays false; the invocation's arguments are still kept
// in ArgumentsJSON, because they name what the failing call was asked to
// do even when the call side is missing or redacted (the store keeps the
// call side's arguments when it has them).
func codexMCPEnd(ev *cortex.Events, e *cortex.Entry, pl *fastjson.Value) {
	inv := pl.Get("invocation")
	server, tool := str(inv, "server"), str(inv, "tool")
	// Without a (readable) server the call is attributable to no MCP
	// server: it keeps its bare name (see mcpName).
	t := toolEvent(cortex.ToolCodexMCPEnd, str(pl, "call_id"), mcpName(server, tool))
	t.TurnID = turnID(e, str(pl, "turn_id"))
	if args := inv.Get("arguments"); args != nil {
		js, cut := jsonText(args, MaxEventArgs)
		setArguments(&t, js, cut)
	}
	r := pl.Get("result")
	body, failed := mcpResultText(r)
	switch {
	case r == nil:
		setResult(&t, cortex.CallUnknown, nil, body)
	case failed:
		setResult(&t, cortex.CallError, boolPtr(true), body)
	default:
		setResult(&t, cortex.CallSuccess, boolPtr(false), body)
	}
	putDuration(&t.Meta, pl.Get("duration"))
	ev.Tools = append(ev.Tools, t)
}

// codexExecEnd emits the result of a command (event_msg exec_command_end,
// written by some frontends next to the function_call_output).
func codexExecEnd(ev *cortex.Events, e *cortex.Entry, pl *fastjson.Value) {
	t := toolEvent(cortex.ToolCodexExecEnd, str(pl, "call_id"), "")
	t.TurnID = turnID(e, str(pl, "turn_id"))
	body := str(pl, "aggregated_output")
	if body == "" {
		body = strings.TrimSpace(str(pl, "stdout") + "\n" + str(pl, "stderr"))
	}
	if exit, ok := intAt(pl, "exit_code"); ok {
		t.ExitCode = intPtr(exit)
		if exit != 0 {
			setResult(&t, cortex.CallError, boolPtr(true), body)
		} else {
			setResult(&t, cortex.CallSuccess, boolPtr(false), body)
		}
	} else {
		setResult(&t, cortex.CallUnknown, nil, body)
	}
	putDuration(&t.Meta, pl.Get("duration"))
	ev.Tools = append(ev.Tools, t)
}

// codexPatchEnd emits the result of an apply_patch (event_msg
// patch_apply_end).
func codexPatchEnd(ev *cortex.Events, e *cortex.Entry, pl *fastjson.Value) {
	t := toolEvent(cortex.ToolCodexPatchApply, str(pl, "call_id"), "")
	t.TurnID = turnID(e, str(pl, "turn_id"))
	switch x := pl.Get("success"); {
	case x != nil && x.Type() == fastjson.TypeTrue:
		setResult(&t, cortex.CallSuccess, boolPtr(false), str(pl, "stdout"))
	case x != nil && x.Type() == fastjson.TypeFalse:
		body := str(pl, "stderr")
		if strings.TrimSpace(body) == "" {
			body = str(pl, "stdout")
		}
		setResult(&t, cortex.CallError, boolPtr(true), body)
	default:
		setResult(&t, cortex.CallUnknown, nil, str(pl, "stdout"))
	}
	ev.Tools = append(ev.Tools, t)
}

// putDuration stores a Codex duration ({"secs":S,"nanos":N}) as
// Meta["duration_ms"].
func putDuration(m *map[string]string, d *fastjson.Value) {
	secs, ok1 := intAt(d, "secs")
	nanos, ok2 := intAt(d, "nanos")
	if !ok1 && !ok2 {
		return
	}
	putMeta(m, "duration_ms", strconv.FormatInt(secs*1000+nanos/1e6, 10))
}

// codexSkillBlocks emits one skill event per distinct skill named by a
// <skill><name>…</name> block in a response_item message (any role). Tool
// outputs, event_msg copies and compaction history are never scanned, and
// prose that merely mentions a skill has no tags to match.
func codexSkillBlocks(ev *cortex.Events, pl *fastjson.Value) {
	var texts []string
	add := func(v *fastjson.Value) {
		// Most messages name no skill: look before copying the text.
		if v != nil && v.Type() == fastjson.TypeString && bytes.Contains(v.GetStringBytes(), []byte("skill")) {
			texts = append(texts, clean(string(v.GetStringBytes())))
		}
	}
	add(pl.Get("content"))
	for _, part := range arr(pl.Get("content")) {
		switch string(rawStr(part, "type")) {
		case "input_text", "output_text", "text":
			add(part.Get("text"))
		}
	}
	first := len(ev.Skills)
	for _, text := range texts {
		scanSkillBlocks(text, func(b skillBlock) {
			name, plugin, ok := NormalizeSkill(b.name, "")
			if !ok {
				return
			}
			for _, s := range ev.Skills[first:] {
				if s.SkillName == name {
					return // the same skill twice in one record
				}
			}
			s := cortex.SkillEvent{SkillName: name, SkillPlugin: plugin,
				EventKind: cortex.SkillCodexBlock, EvidenceKind: cortex.EvidenceContent}
			if p := strings.TrimSpace(b.path); p != "" && !hasControl(p) {
				s.SkillPath = cortex.CutUTF8(p, maxSkillPath)
			}
			if body := strings.TrimSpace(b.body); body != "" {
				putMeta(&s.Meta, "skill_content_sha256", sha256Hex(body))
			}
			ev.Skills = append(ev.Skills, s)
		})
	}
}

// skillBlock is one <skill> block of a Codex message.
type skillBlock struct {
	name, path, body string
}

// scanSkillBlocks calls f for every <skill><name>…</name> block of text, in
// order. Tags may hold whitespace ("< skill >", "</ name>") and be separated
// by whitespace; <name> must be the first thing in the block. An optional
// <path>…</path> follows the name. The body runs from after the name (or
// path) to </skill> — or, when the block is not closed, to the next <skill>
// or the end of the text.
func scanSkillBlocks(text string, f func(skillBlock)) {
	if !strings.Contains(text, "skill") {
		return
	}
	s := text
	for {
		i, n := findTag(s, "skill", false)
		if i < 0 {
			return
		}
		s = s[i+n:]
		r := strings.TrimLeft(s, " \t\r\n")
		k, ok := matchTag(r, "name", false)
		if !ok {
			continue
		}
		r = r[k:]
		j, m := findTag(r, "name", true)
		if j < 0 || strings.IndexByte(r[:j], '<') >= 0 {
			continue // no complete <name>…</name>
		}
		b := skillBlock{name: r[:j]}
		r = r[j+m:]
		if pr := strings.TrimLeft(r, " \t\r\n"); len(pr) > 0 {
			if k, ok := matchTag(pr, "path", false); ok {
				if j, m := findTag(pr[k:], "path", true); j >= 0 && strings.IndexByte(pr[k:k+j], '<') < 0 {
					b.path = pr[k : k+j]
					r = pr[k+j+m:]
				}
			}
		}
		end := len(r)
		if j, _ := findTag(r, "skill", true); j >= 0 {
			end = j
		}
		if j, _ := findTag(r[:end], "skill", false); j >= 0 {
			end = j
		}
		b.body = r[:end]
		f(b)
		s = r[end:]
	}
}

// findTag returns the offset and length of the first <name> (or </name>
// when closing) tag in s, or -1.
func findTag(s, name string, closing bool) (int, int) {
	off := 0
	for {
		j := strings.IndexByte(s[off:], '<')
		if j < 0 {
			return -1, 0
		}
		if n, ok := matchTag(s[off+j:], name, closing); ok {
			return off + j, n
		}
		off += j + 1
	}
}

// matchTag reports whether s starts with the tag <name> (or </name>),
// allowing whitespace inside the brackets, and returns its length.
func matchTag(s, name string, closing bool) (int, bool) {
	if s == "" || s[0] != '<' {
		return 0, false
	}
	i := skipSpace(s, 1)
	if closing {
		if i >= len(s) || s[i] != '/' {
			return 0, false
		}
		i = skipSpace(s, i+1)
	}
	if !strings.HasPrefix(s[i:], name) {
		return 0, false
	}
	i = skipSpace(s, i+len(name))
	if i >= len(s) || s[i] != '>' {
		return 0, false
	}
	return i + 1, true
}

// skipSpace returns the index of the first non-whitespace byte of s at or
// after i.
func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

// compactJSON removes the insignificant whitespace of JSON that
// fastjson validated, stopping once the output passes max bytes (then cut
// on a UTF-8 boundary). ok is false when a string holds a raw control
// byte, which fastjson's validator lets through after some escapes but
// JSON forbids: the caller then keeps the text as a JSON string.
func compactJSON(b []byte, max int) (js string, cut, ok bool) {
	out := make([]byte, 0, min(len(b), max+1))
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString && c < 0x20:
			return "", false, false
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		case c == '"':
			inString = true
		}
		if len(out) == max {
			return cortex.CutUTF8(clean(string(out)), max), true, true
		}
		out = append(out, c)
	}
	if s := clean(string(out)); len(s) <= max {
		return s, false, true
	}
	return cortex.CutUTF8(clean(string(out)), max), true, true
}
