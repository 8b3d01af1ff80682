package llm

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// geminiMaxAnswer bounds the assistant text accumulated from one run: a
// runaway model must not grow the answer without limit. Text beyond it is
// dropped (the answer is cut, and the runner cuts it again to
// [llm] max_output_bytes), never an error.
const geminiMaxAnswer = 32 << 20

// geminiQuoteMax bounds how much of an offending line or upstream message
// an error quotes.
const geminiQuoteMax = 200

// geminiAllowedTools are the tools a model may call during an assessment:
// they only change the CLI's own state, never files or the network.
// write_file is handled separately (its content becomes the answer).
var geminiAllowedTools = map[string]bool{
	"activate_skill": true,
	"update_topic":   true,
}

// geminiStreamParser reads the Gemini CLI's --output-format stream-json
// output (one JSON event per line) and assembles the answer. It is a pure
// state machine: feed every stdout line to Line, then call Finish.
//
// Events, by type:
//   - init, tool_result, message with role user (or any role but
//     assistant): ignored.
//   - message with role assistant: its text (content as a string, or the
//     text of every non-thought part when content is an array) is appended
//     to the answer and returned as the delta.
//   - tool_use: activate_skill and update_topic are tolerated; write_file
//     with a non-empty parameters.content makes that content the preferred
//     answer (some models write their plan to a file in plan mode); any
//     other tool fails the run: an assessment may not use tools.
//   - error: severity "warning" is ignored (the CLI reports non-fatal
//     conditions that way and goes on); any other severity fails the run.
//   - result: status must be "success", otherwise the run fails with the
//     event's error; a non-empty response string is kept as the answer.
//   - any other type: ignored, unless the line mentions tool_use or
//     tool_result anywhere (a tool event in a shape we do not know fails
//     closed).
//
// Finish returns, in order of preference, the write_file content, the
// result's response, the accumulated assistant text. The first error is
// sticky: every later call returns it.
type geminiStreamParser struct {
	p         fastjson.Parser
	answer    strings.Builder
	written   string // content of the last write_file tool call
	response  string // response of the success result
	succeeded bool
	// cut is set once text was dropped at geminiMaxAnswer or with an
	// output line over geminiMaxLine: the answer stays a prefix of what
	// the model wrote.
	cut bool
	// skipped is set when an output line over geminiMaxLine was dropped.
	skipped bool
	err     error
}

// Line parses one line of output and returns the assistant text it adds
// (possibly ""). Blank lines are ignored.
func (s *geminiStreamParser) Line(b []byte) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	delta, err := s.line(b)
	if err != nil {
		s.err = err
		return "", err
	}
	return delta, nil
}

// Finish reports the answer once the output has ended.
func (s *geminiStreamParser) Finish() (string, error) {
	if s.err != nil {
		return "", s.err
	}
	if !s.succeeded && !(s.skipped && strings.TrimSpace(s.answer.String()) != "") {
		// (A dropped over-long line may have been the result itself; the
		// answer written before it is kept, cut.)
		return "", cortex.Errorf(cortex.CodeUnavailable, "gemini ended without a result")
	}
	for _, text := range []string{s.written, s.response, s.answer.String()} {
		if strings.TrimSpace(text) != "" {
			return text, nil
		}
	}
	return "", cortex.Errorf(cortex.CodeUnavailable, "gemini returned no assessment text")
}

// Answer returns the assistant text accumulated so far: the concatenation
// of every delta Line returned.
func (s *geminiStreamParser) Answer() string { return s.answer.String() }

func (s *geminiStreamParser) line(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "", nil
	}
	v, err := s.p.ParseBytes(b)
	if err != nil {
		return "", cortex.WrapError(cortex.CodeUnavailable, err,
			"gemini wrote a line that is not JSON: %s", geminiQuote(b))
	}
	if v.Type() != fastjson.TypeObject {
		return "", cortex.Errorf(cortex.CodeUnavailable,
			"gemini wrote a line that is not a JSON object: %s", geminiQuote(b))
	}
	switch typ := string(v.GetStringBytes("type")); typ {
	case "init", "tool_result":
		return "", nil
	case "message":
		if string(v.GetStringBytes("role")) != "assistant" {
			return "", nil
		}
		return s.appendText(geminiMessageText(v.Get("content")))
	case "tool_use":
		return "", s.toolUse(v)
	case "error":
		if string(v.GetStringBytes("severity")) == "warning" {
			return "", nil
		}
		return "", cortex.Errorf(cortex.CodeUnavailable, "gemini reported an error: %s",
			geminiQuote(v.GetStringBytes("message")))
	case "result":
		if status := string(v.GetStringBytes("status")); status != "success" {
			return "", cortex.Errorf(cortex.CodeUnavailable, "gemini failed (result status %s): %s",
				geminiQuote([]byte(status)), geminiQuote(geminiResultError(v)))
		}
		s.succeeded = true
		if r := v.GetStringBytes("response"); len(bytes.TrimSpace(r)) > 0 {
			s.response = cortex.CutUTF8(string(r), geminiMaxAnswer)
		}
		return "", nil
	default:
		if bytes.Contains(b, []byte("tool_use")) || bytes.Contains(b, []byte("tool_result")) {
			return "", cortex.Errorf(cortex.CodeUnavailable,
				"gemini wrote an unknown event %s that mentions a tool; assessments may not use tools",
				geminiQuote([]byte(typ)))
		}
		return "", nil
	}
}

func (s *geminiStreamParser) appendText(text string) (string, error) {
	if s.cut {
		return "", nil
	}
	if left := geminiMaxAnswer - s.answer.Len(); len(text) > left {
		text, s.cut = cortex.CutUTF8(text, left), true
	}
	s.answer.WriteString(text)
	return text, nil
}

// Overlong notes an output line longer than geminiMaxLine, which was
// dropped unread: the answer is cut there.
func (s *geminiStreamParser) Overlong() {
	s.skipped, s.cut = true, true
}

func (s *geminiStreamParser) toolUse(v *fastjson.Value) error {
	name := string(v.GetStringBytes("tool_name"))
	switch {
	case geminiAllowedTools[name]:
		return nil
	case name == "write_file":
		content := v.GetStringBytes("parameters", "content")
		if len(bytes.TrimSpace(content)) > 0 {
			s.written = cortex.CutUTF8(string(content), geminiMaxAnswer)
		}
		return nil
	}
	return cortex.Errorf(cortex.CodeUnavailable,
		"the model tried to use tool %s; assessments may not use tools", geminiQuote([]byte(name)))
}

// geminiMessageText returns the text of a message's content: a string, or
// an array of parts whose text fields are concatenated (thought parts are
// the model's reasoning, not its answer, and are skipped).
func geminiMessageText(c *fastjson.Value) string {
	if c == nil {
		return ""
	}
	switch c.Type() {
	case fastjson.TypeString:
		return string(c.GetStringBytes())
	case fastjson.TypeArray:
		var sb strings.Builder
		for _, part := range c.GetArray() {
			if part.GetBool("thought") {
				continue
			}
			if part.Type() == fastjson.TypeString {
				sb.Write(part.GetStringBytes())
				continue
			}
			sb.Write(part.GetStringBytes("text"))
		}
		return sb.String()
	}
	return ""
}

// geminiResultError returns the message of a failed result's error, which
// upstream sends as {type, message} (a plain string is accepted too).
func geminiResultError(v *fastjson.Value) []byte {
	e := v.Get("error")
	switch {
	case e == nil:
		return []byte("no error message")
	case e.Type() == fastjson.TypeString:
		return e.GetStringBytes()
	}
	if m := e.GetStringBytes("message"); len(m) > 0 {
		return m
	}
	return []byte(e.String())
}

// geminiQuote quotes at most geminiQuoteMax bytes of b, redacted, for an
// error message.
func geminiQuote(b []byte) string {
	suffix := ""
	if len(b) > geminiQuoteMax {
		b, suffix = b[:geminiQuoteMax], "…"
	}
	s, _ := geminiRedactor().String(string(b))
	return fmt.Sprintf("%q%s", s, suffix)
}
