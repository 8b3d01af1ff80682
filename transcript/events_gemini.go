package transcript

import (
	"bytes"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// geminiEvents extracts the events of a Gemini record. Only tool_result
// entries (whose raw record is one toolCalls[] object) carry events: one
// tool event holding both the call and its result. Message entries list
// the same calls and yield none, so no call is counted twice.
func geminiEvents(ev *cortex.Events, e *cortex.Entry, tc *fastjson.Value) {
	if e.Kind != "gemini:tool_result" {
		return
	}
	t := toolEvent(cortex.ToolGeminiToolCall, str(tc, "id"), str(tc, "name"))
	t.HasCall = true
	t.TurnID = turnID(e)
	if args := tc.Get("args"); args != nil {
		js, cut := jsonText(args, MaxEventArgs)
		setArguments(&t, js, cut)
	}
	status, failed := GeminiCallStatus(tc)
	body := geminiResultText(tc)
	switch {
	case status == "cancelled":
		// Cancelled calls carry an "[Operation Cancelled]" error response;
		// they are neither an error nor a success: IsError stays unknown.
		setResult(&t, cortex.CallCancelled, nil, body)
	case failed:
		setResult(&t, cortex.CallError, boolPtr(true), body)
	case status == "success":
		setResult(&t, cortex.CallSuccess, boolPtr(false), body)
	default:
		setResult(&t, cortex.CallUnknown, nil, body)
	}
	putMeta(&t.Meta, "status", cortex.CutUTF8(status, maxEventName))
	ev.Tools = append(ev.Tools, t)
}

// geminiResultText is a tool call's result: the function responses' error
// or output, else the text shown to the user. A single string response is
// returned without a copy (valid while tc is).
func geminiResultText(tc *fastjson.Value) []byte {
	var parts [][]byte
	for _, r := range arr(tc.Get("result")) {
		resp := r.Get("functionResponse", "response")
		if resp == nil {
			continue
		}
		x := resp.Get("error")
		if x == nil {
			x = resp.Get("output")
		}
		if x == nil {
			x = resp
		}
		if x.Type() == fastjson.TypeString {
			parts = append(parts, x.GetStringBytes())
		} else {
			parts = append(parts, []byte(valueText(x, MaxEventText*4)))
		}
	}
	if len(parts) == 0 {
		return rawStr(tc, "resultDisplay")
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return bytes.Join(parts, []byte("\n"))
}
