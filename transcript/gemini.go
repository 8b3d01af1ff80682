package transcript

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// ParseGemini parses a whole Gemini CLI chat file: either the legacy single
// JSON document ({sessionId, projectHash, startTime, messages:[…]}) or the
// newer JSONL operation log (a metadata line, message records that are
// rewritten in full whenever they change, {"$set":{…}} patches and
// {"$rewindTo":id} markers).
//
// Gemini files are rewritten in place, so they are always parsed whole and
// every message id yields its last version (last write wins). Messages
// removed by $rewindTo are still returned, marked rewound, so that a fresh
// read and an incremental one agree. Each message yields one entry, plus one
// tool_result entry per tool call.
func ParseGemini(ctx FileContext, data []byte) ([]Result, error) {
	var p fastjson.Parser
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if doc, err := p.ParseBytes(trimmed); err == nil {
		if doc.Type() != fastjson.TypeObject {
			return nil, fmt.Errorf("gemini chat file has no messages array (the format may have changed)")
		}
		if doc.Get("messages") != nil {
			g := newGeminiDoc(ctx, doc)
			for i, m := range arr(doc.Get("messages")) {
				g.add(m, int64(i+1))
			}
			return g.results(), nil
		}
		// A JSONL chat file that so far holds only its metadata line (or
		// one record) is a single JSON object too.
		if bytes.IndexByte(trimmed, '\n') >= 0 {
			return nil, fmt.Errorf("gemini chat file has no messages array (the format may have changed)")
		}
	}
	return parseGeminiJSONL(ctx, data)
}

type geminiMessage struct {
	raw     []byte
	line    int64
	rewound bool
}

type geminiDoc struct {
	ctx       FileContext
	sessionID string
	project   string
	start     string
	order     []string
	msgs      map[string]*geminiMessage
	errs      []Result
	anon      int
}

func newGeminiDoc(ctx FileContext, meta *fastjson.Value) *geminiDoc {
	g := &geminiDoc{ctx: ctx, msgs: map[string]*geminiMessage{}}
	g.meta(meta)
	return g
}

func (g *geminiDoc) meta(v *fastjson.Value) {
	if s := str(v, "sessionId"); s != "" {
		g.sessionID = s
	}
	if s := str(v, "startTime"); s != "" && g.start == "" {
		g.start = s
	}
	if dirs := arr(v.Get("directories")); len(dirs) > 0 {
		if d := compactValue(dirs[0]); d != "" {
			g.project = NormalizeProject(d)
		}
	}
	if s := str(v, "cwd"); s != "" {
		g.project = NormalizeProject(s)
	}
	if h := str(v, "projectHash"); h != "" && g.project == "" {
		g.project = "gemini://project/" + h
	}
}

// add records the latest version of a message.
func (g *geminiDoc) add(m *fastjson.Value, line int64) {
	id := str(m, "id")
	if id == "" {
		g.anon++
		id = "#" + strconv.Itoa(g.anon) + ":" + ContentKey(m.MarshalTo(nil))
	}
	raw := m.MarshalTo(nil)
	if old, ok := g.msgs[id]; ok {
		old.raw, old.line, old.rewound = raw, line, false
		return
	}
	g.order = append(g.order, id)
	g.msgs[id] = &geminiMessage{raw: raw, line: line}
}

func (g *geminiDoc) rewind(id string) {
	idx := -1
	for i, k := range g.order {
		if k == id {
			idx = i
			break
		}
	}
	from := idx
	if idx < 0 {
		from = 0
	}
	for _, k := range g.order[from:] {
		g.msgs[k].rewound = true
	}
}

func parseGeminiJSONL(ctx FileContext, data []byte) ([]Result, error) {
	var p fastjson.Parser
	g := &geminiDoc{ctx: ctx, msgs: map[string]*geminiMessage{}}
	lines := bytes.Split(data, []byte("\n"))
	seenMeta := false
	for i, ln := range lines {
		ln = bytes.TrimSpace(ln)
		if len(ln) == 0 {
			continue
		}
		lineNo := int64(i + 1)
		v, err := p.ParseBytes(ln)
		if err != nil {
			if i == len(lines)-1 && !bytes.HasSuffix(data, []byte("\n")) {
				break // a record still being written
			}
			g.errs = append(g.errs, Result{Raw: append([]byte(nil), ln...), Line: lineNo, Err: fmt.Errorf("invalid JSON: %w", err)})
			continue
		}
		switch {
		case v.Get("$rewindTo") != nil:
			g.rewind(str(v, "$rewindTo"))
		case v.Get("$set") != nil:
			set := v.Get("$set")
			g.meta(set)
			for j, m := range arr(set.Get("messages")) {
				g.add(m, lineNo*1000+int64(j))
			}
		case str(v, "id") != "" && str(v, "type") != "":
			g.add(v, lineNo)
		case !seenMeta && (v.Get("sessionId") != nil || v.Get("startTime") != nil):
			seenMeta = true
			g.meta(v)
			for j, m := range arr(v.Get("messages")) {
				g.add(m, lineNo*1000+int64(j))
			}
		default:
			g.errs = append(g.errs, Result{Raw: append([]byte(nil), ln...), Line: lineNo, Type: "gemini:unknown", Skip: SkipUnknownType})
		}
	}
	if !seenMeta && len(g.msgs) == 0 && len(g.errs) > 0 {
		return g.errs, fmt.Errorf("not a Gemini chat file")
	}
	return g.results(), nil
}

func (g *geminiDoc) results() []Result {
	var p fastjson.Parser
	out := append([]Result(nil), g.errs...)
	var c clock
	if g.start != "" {
		if t, err := cortex.ParseTimestamp(g.start); err == nil {
			c.last = t
		}
	}
	for _, id := range g.order {
		m := g.msgs[id]
		v, err := p.ParseBytes(m.raw)
		if err != nil {
			out = append(out, Result{Raw: m.raw, Line: m.line, Err: err})
			continue
		}
		out = append(out, g.message(&c, id, v, m)...)
	}
	return out
}

func (g *geminiDoc) envelope(c *clock, v *fastjson.Value, res *Result, role cortex.Role, kind string) {
	e := &res.Entry
	e.Tool = cortex.ToolGemini
	e.Role = role
	e.Kind = kind
	e.Severity = cortex.SevInfo
	ts, est, warn := c.at(str(v, "timestamp"))
	e.Timestamp, e.TimestampEstimated = ts, est
	if warn != "" {
		res.Warn = warn
	}
	e.SessionID = g.sessionID
	if e.SessionID == "" {
		e.SessionID = g.ctx.SessionID
	}
	e.Project = g.project
	if e.Project == "" {
		e.Project = g.ctx.Project
	}
	e.Model = str(v, "model")
}

func geminiContent(v *fastjson.Value) string {
	c := v.Get("content")
	if c == nil {
		return ""
	}
	if c.Type() == fastjson.TypeString {
		return compactValue(c)
	}
	if c.Type() == fastjson.TypeObject {
		return str(c, "text")
	}
	var b strings.Builder
	for _, p := range arr(c) {
		if t := str(p, "text"); t != "" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(t)
		}
	}
	return b.String()
}

func (g *geminiDoc) message(c *clock, id string, v *fastjson.Value, m *geminiMessage) []Result {
	typ := str(v, "type")
	res := Result{Raw: m.raw, Line: m.line, Type: "gemini:" + typ}
	key := "m:" + id
	text := geminiContent(v)
	calls := arr(v.Get("toolCalls"))
	// Each call's raw record is marshalled before any of its strings is
	// read: fastjson re-quotes strings that were read (Go-style, not
	// always valid JSON) but copies unread ones as written.
	raws := make([][]byte, len(calls))
	for i, tc := range calls {
		raws[i] = tc.MarshalTo(nil)
	}
	var role cortex.Role
	switch typ {
	case "user":
		role = cortex.RoleUser
	case "gemini", "model", "assistant":
		role = cortex.RoleAssistant
		if len(calls) > 0 {
			role = cortex.RoleToolCall
		}
	case "info", "warning", "error":
		role = cortex.RoleSystem
	default:
		res.Skip = SkipUnknownType
		return []Result{res}
	}
	g.envelope(c, v, &res, role, "gemini:"+typ)
	res.Entry.RecordKey = key
	if m.rewound {
		putMeta(&res.Entry.Meta, "rewound", "true")
	}
	max := MaxAssistantText
	if role == cortex.RoleUser {
		max = MaxUserText
	}
	t := newText(max)
	t.add(text)
	for _, tc := range calls {
		name := str(tc, "name")
		if res.Entry.ToolName == "" {
			res.Entry.ToolName = name
		}
		t.add(ToolCallText(name, tc.Get("args")))
	}
	res.Entry.Text, res.Entry.TextTruncated = t.String(), t.truncated
	switch typ {
	case "error":
		res.Entry.IsError = true
		res.Entry.Severity = cortex.SevError
	case "warning":
		res.Entry.Severity = cortex.SevWarning
	}
	if res.Entry.Text == "" && len(calls) == 0 {
		if len(arr(v.Get("thoughts"))) > 0 {
			res.Entry.Role = cortex.RoleThinking
			tt := newText(MaxAssistantText)
			for _, th := range arr(v.Get("thoughts")) {
				tt.add(str(th, "subject") + ": " + str(th, "description"))
			}
			res.Entry.Text, res.Entry.TextTruncated = tt.String(), tt.truncated
		} else {
			res.Skip = SkipEmpty
		}
	}
	if res.Skip == "" {
		res.Events = extractEvents(cortex.ToolGemini, &res.Entry, v)
	}
	if role != cortex.RoleUser {
		res.Usage = geminiUsage(v, &res.Entry, id)
	}
	out := []Result{res}
	for i, tc := range calls {
		out = append(out, g.toolResult(c, v, tc, raws[i], key, i, m))
	}
	return out
}

// GeminiCallStatus returns a Gemini tool call's status and whether it failed.
func GeminiCallStatus(tc *fastjson.Value) (status string, failed bool) {
	status = strings.ToLower(str(tc, "status"))
	failed = status == "error"
	for _, r := range arr(tc.Get("result")) {
		if r.Get("functionResponse", "response", "error") != nil {
			failed = true
		}
	}
	return status, failed
}

func (g *geminiDoc) toolResult(c *clock, msg, tc *fastjson.Value, raw []byte, msgKey string, i int, m *geminiMessage) Result {
	name := str(tc, "name")
	res := Result{Raw: raw, Line: m.line, Type: "gemini:tool_call"}
	ts := str(tc, "timestamp")
	if ts == "" {
		ts = str(msg, "timestamp")
	}
	g.envelope(c, msg, &res, cortex.RoleToolResult, "gemini:tool_result")
	if ts != "" {
		if t, err := cortex.ParseTimestamp(ts); err == nil {
			res.Entry.Timestamp, res.Entry.TimestampEstimated = t, false
		}
	}
	callID := str(tc, "id")
	if callID == "" {
		callID = strconv.Itoa(i)
	}
	res.Entry.RecordKey = msgKey + "/t:" + callID
	res.Entry.ToolName = name
	res.Entry.Model = ""
	putMeta(&res.Entry.Meta, "call_id", str(tc, "id"))
	status, failed := GeminiCallStatus(tc)
	putMeta(&res.Entry.Meta, "status", status)
	if m.rewound {
		putMeta(&res.Entry.Meta, "rewound", "true")
	}
	var b strings.Builder
	for _, r := range arr(tc.Get("result")) {
		resp := r.Get("functionResponse", "response")
		if e := resp.Get("error"); e != nil {
			b.WriteString(compactValue(e))
		} else if o := resp.Get("output"); o != nil {
			b.WriteString(compactValue(o))
		} else if resp != nil {
			b.WriteString(compactValue(resp))
		}
	}
	if b.Len() == 0 {
		b.WriteString(str(tc, "resultDisplay"))
	}
	body := b.String()
	var cut bool
	label := cortex.CutUTF8(name, 256)
	switch {
	case failed:
		body, cut = headTail(body, MaxErrorHead, MaxErrorTail)
		label += " error"
		res.Entry.IsError = true
		res.Entry.Severity = cortex.SevError
	case status == "cancelled":
		body, cut = headTail(body, MaxToolOutputHead, MaxToolOutputTail)
		label += " cancelled"
		res.Entry.Severity = cortex.SevWarning
	default:
		body, cut = headTail(body, MaxToolOutputHead, MaxToolOutputTail)
		label += " result"
	}
	res.Entry.Text = strings.TrimSpace("[" + label + "] " + body)
	res.Entry.TextTruncated = cut
	res.Events = extractEvents(cortex.ToolGemini, &res.Entry, tc)
	return res
}
