package transcript

import (
	"regexp"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// MaxUserEventText bounds the words of a user event: enough for any
// correction or reason, not an archive of pasted logs (the full prompt is
// the event's logs row).
const MaxUserEventText = 4 << 10

// The texts agents write when the human refuses a tool call.
var (
	// Claude Code: a tool_result with is_error; the human's reason, when
	// they gave one, follows one of claudeReasonMarkers.
	claudeRejections = []string{
		"The user doesn't want to proceed with this tool use.",
		"The user doesn't want to take this action right now.",
	}
	claudeReasonMarkers = []string{
		"To tell you how to proceed, the user said:",
		"The user provided the following reason for the rejection:",
	}
	// claudeClarify is what AskUserQuestion records when the human
	// answers in their own words instead of picking an option: not a
	// refusal.
	claudeClarify = "The user wants to clarify these questions."
	// Codex CLI: the output of a call whose approval the human denied.
	codexRejections = []string{"exec command rejected by user", "unified exec command rejected by user",
		"patch rejected by user"}
)

// userEvent returns a user event of kind with text bounded and cleaned.
func userEvent(kind, text string) cortex.UserEvent {
	text = strings.TrimSpace(clean(text))
	if len(text) > MaxUserEventText {
		text = cortex.CutUTF8(text, MaxUserEventText)
	}
	return cortex.UserEvent{Kind: kind, Text: text}
}

// claudeUserEvents extracts what the human did in a Claude Code record:
// typed prompts (promptSource "typed" where the version marks it, else the
// string-content user records the parser classified as typed), slash
// commands, ! shell commands, queued prompts, interrupts, and tool-use
// rejections and clarifications (from tool_result blocks). Injected
// context (isMeta, skill bodies, compaction summaries, system reminders,
// command output, subagent prompts) is never the human's voice: the parser
// gives it another role.
func claudeUserEvents(ev *cortex.Events, e *cortex.Entry, v *fastjson.Value) {
	switch {
	case e.Kind == "user:queued" && e.Role == cortex.RoleUser:
		u := userEvent(cortex.UserPrompt, queuedPrompt(v))
		u.Source = "queued"
		if u.Text != "" {
			ev.Users = append(ev.Users, u)
		}
		return
	case e.Kind == "attachment:queued_command" && e.Role == cortex.RoleUser:
		a := v.Get("attachment")
		text := compactValue(a.Get("prompt"))
		if queuedNotice(text) {
			return
		}
		u := userEvent(cortex.UserPrompt, text)
		u.Source = "queued"
		if u.Text != "" {
			ev.Users = append(ev.Users, u)
		}
		return
	case e.Kind == "user:interrupt":
		text := claudeUserText(v.Get("message"))
		u := userEvent(cortex.UserInterrupt, "")
		if strings.Contains(text, "for tool use") {
			putMeta(&u.Meta, "for_tool_use", "true")
		}
		ev.Users = append(ev.Users, u)
		return
	case e.Kind == "user:tool_result":
		claudeRejectionEvents(ev, v)
		return
	case e.Role != cortex.RoleUser:
		return
	}
	msg := v.Get("message")
	text := claudeUserText(msg)
	var u cortex.UserEvent
	switch e.Kind {
	case "user:command":
		name, args, ok := SlashCommand(text)
		if !ok {
			return
		}
		u = userEvent(cortex.UserCommand, strings.TrimSpace(name+" "+args))
		putMeta(&u.Meta, "command", cortex.CutUTF8(name, MaxSkillField))
	case "user:bash":
		u = userEvent(cortex.UserShell, between(text, "<bash-input>", "</bash-input>"))
	default:
		u = userEvent(cortex.UserPrompt, stripIDEContext(text))
	}
	if src := str(v, "promptSource"); src != "" {
		u.Source = cortex.CutUTF8(src, maxEventName)
	}
	if u.Text == "" {
		return
	}
	ev.Users = append(ev.Users, u)
}

// claudeUserText is the text of a user message: its string content, or
// its text blocks joined.
func claudeUserText(msg *fastjson.Value) string {
	c := msg.Get("content")
	if c == nil {
		return ""
	}
	if c.Type() == fastjson.TypeString {
		return str(msg, "content")
	}
	var parts []string
	for _, b := range arr(c) {
		if string(rawStr(b, "type")) == "text" {
			parts = append(parts, str(b, "text"))
		}
	}
	return strings.Join(parts, "\n\n")
}

// queuedNotice reports whether a queued "prompt" is a harness notice
// (background task completion) rather than something the human typed.
func queuedNotice(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "<task-notification>") || strings.HasPrefix(t, "<system-reminder>")
}

// ideContext matches the context blocks an IDE extension puts in front of
// a typed prompt (the open file, the selection, diagnostics).
var ideContext = regexp.MustCompile(`(?s)<(ide_[a-z_]+|system-reminder)>.*?</(ide_[a-z_]+|system-reminder)>`)

// stripIDEContext removes IDE context blocks from a typed prompt.
func stripIDEContext(text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	return ideContext.ReplaceAllString(text, "")
}

// claudeRejectionEvents emits a rejection (with the human's reason when the
// record carries one) or a clarification for every tool_result block that
// records the human refusing or redirecting a tool call.
func claudeRejectionEvents(ev *cortex.Events, v *fastjson.Value) {
	for _, b := range arr(v.Get("message", "content")) {
		if string(rawStr(b, "type")) != "tool_result" || !boolAt(b, "is_error") {
			continue
		}
		body := strings.TrimSpace(toolResultText(b.Get("content")))
		rejected := false
		for _, p := range claudeRejections {
			if strings.HasPrefix(body, p) {
				rejected = true
				break
			}
		}
		if !rejected {
			continue
		}
		reason := ""
		for _, m := range claudeReasonMarkers {
			if _, after, ok := strings.Cut(body, m); ok {
				reason = after
				break
			}
		}
		kind := cortex.UserRejection
		if strings.HasPrefix(strings.TrimSpace(reason), claudeClarify) {
			kind, reason = cortex.UserClarify, ""
		}
		u := userEvent(kind, reason)
		u.CallID = cortex.CutUTF8(str(b, "tool_use_id"), maxEventName)
		ev.Users = append(ev.Users, u)
	}
}

// codexRequestMarker introduces the typed request after the file list that
// Codex Desktop puts in front of a prompt with attachments.
const codexRequestMarker = "## My request for Codex:"

// codexUserEvents extracts what the human did in a Codex record: typed
// prompts (role user messages the parser did not classify as injected
// context), interrupts (event_msg turn_aborted) and denied approvals (a
// call output saying the user rejected it).
func codexUserEvents(ev *cortex.Events, e *cortex.Entry, v *fastjson.Value) {
	pl := v.Get("payload")
	switch string(rawStr(v, "type")) + "/" + string(rawStr(pl, "type")) {
	case "event_msg/turn_aborted":
		u := userEvent(cortex.UserInterrupt, "")
		putMeta(&u.Meta, "reason", cortex.CutUTF8(str(pl, "reason"), maxEventName))
		putMeta(&u.Meta, "turn_id", cortex.CutUTF8(str(pl, "turn_id"), maxEventName))
		ev.Users = append(ev.Users, u)
	case "event_msg/user_message":
		if e.Role == cortex.RoleUser {
			codexPrompt(ev, str(pl, "message"))
		}
	case "response_item/message":
		if e.Role == cortex.RoleUser {
			var parts []string
			for _, p := range arr(pl.Get("content")) {
				if t := string(rawStr(p, "type")); t == "input_text" || t == "text" {
					if text := str(p, "text"); !imageTag(text) {
						parts = append(parts, text)
					}
				}
			}
			codexPrompt(ev, strings.Join(parts, "\n\n"))
		}
	case "response_item/function_call_output", "response_item/custom_tool_call_output", "response_item/local_shell_call_output":
		out := pl.Get("output")
		text := ""
		if out != nil && out.Type() == fastjson.TypeString {
			text = strings.TrimSpace(str(pl, "output"))
		}
		for _, r := range codexRejections {
			if strings.HasPrefix(text, r) {
				u := userEvent(cortex.UserRejection, "")
				u.CallID = cortex.CutUTF8(str(pl, "call_id"), maxEventName)
				ev.Users = append(ev.Users, u)
				return
			}
		}
	}
}

// codexPrompt emits a typed prompt: the request after Codex Desktop's list
// of mentioned files when there is one.
func codexPrompt(ev *cortex.Events, text string) {
	if _, req, ok := strings.Cut(text, codexRequestMarker); ok {
		text = req
	}
	if u := userEvent(cortex.UserPrompt, text); u.Text != "" {
		ev.Users = append(ev.Users, u)
	}
}

// geminiUserEvents extracts what the human did in a Gemini chat record:
// user messages, "Request cancelled." (the human pressed Esc) and tool calls
// the human declined (status cancelled).
func geminiUserEvents(ev *cortex.Events, e *cortex.Entry, v *fastjson.Value) {
	switch e.Kind {
	case "gemini:user":
		if u := userEvent(cortex.UserPrompt, geminiContent(v)); u.Text != "" {
			ev.Users = append(ev.Users, u)
		}
	case "gemini:info":
		if strings.HasPrefix(strings.TrimSpace(geminiContent(v)), "Request cancelled") {
			ev.Users = append(ev.Users, userEvent(cortex.UserInterrupt, ""))
		}
	case "gemini:tool_result":
		if status, _ := GeminiCallStatus(v); status == "cancelled" {
			u := userEvent(cortex.UserRejection, "")
			u.CallID = cortex.CutUTF8(str(v, "id"), maxEventName)
			ev.Users = append(ev.Users, u)
		}
	}
}
