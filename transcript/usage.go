package transcript

import (
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// Token usage as the agents record it. Every vendor counts differently;
// the result is cortex.TokenCounts (Input without cached input, Output
// with reasoning).

// claudeUsage reads message.usage of a Claude assistant record. The key
// is the message id: Claude streams one API response as several lines
// sharing it, each repeating the usage (the store keeps the largest count
// of each kind).
func claudeUsage(msg *fastjson.Value, e *cortex.Entry) *cortex.TokenUsage {
	u := msg.Get("usage")
	model := str(msg, "model")
	if u == nil || u.Type() != fastjson.TypeObject || model == "<synthetic>" {
		return nil
	}
	key := str(msg, "id")
	if key == "" {
		key = e.RecordKey
	}
	if key == "" {
		return nil
	}
	c := cortex.TokenCounts{Input: num(u, "input_tokens"), Output: num(u, "output_tokens"),
		CacheRead: num(u, "cache_read_input_tokens"), CacheWrite: num(u, "cache_creation_input_tokens"), Responses: 1}
	if c.Total() == 0 {
		return nil
	}
	return &cortex.TokenUsage{Tool: cortex.ToolClaude, SessionID: e.SessionID, Timestamp: e.Timestamp, Key: "m:" + key,
		Model: model, TokenCounts: c}
}

// codexUsage reads a Codex token_count event: info.last_token_usage is the
// response's usage, info.total_token_usage.total_tokens the session's
// running total, which keys it (Codex repeats the same event; a repeat has
// the same total). OpenAI counts cached input inside input_tokens and
// reasoning inside output_tokens.
func codexUsage(pl *fastjson.Value, session, model string, at cortex.TokenUsage) *cortex.TokenUsage {
	info := pl.Get("info")
	last := info.Get("last_token_usage")
	total := info.Get("total_token_usage")
	if last == nil || total == nil || session == "" {
		return nil
	}
	in, cached := num(last, "input_tokens"), num(last, "cached_input_tokens")
	c := cortex.TokenCounts{Input: max(in-cached, 0), CacheRead: cached, Output: num(last, "output_tokens"),
		Reasoning: num(last, "reasoning_output_tokens"), Responses: 1}
	if c.Total() == 0 {
		return nil
	}
	at.Tool, at.SessionID, at.Model, at.TokenCounts = cortex.ToolCodex, session, model, c
	at.Key = "t:" + strconv.FormatInt(num(total, "total_tokens"), 10)
	return &at
}

// geminiUsage reads the tokens of a Gemini CLI message: Google counts
// cached tokens inside input and bills thoughts as output.
func geminiUsage(v *fastjson.Value, e *cortex.Entry, id string) *cortex.TokenUsage {
	t := v.Get("tokens")
	if t == nil || t.Type() != fastjson.TypeObject {
		return nil
	}
	in, cached := num(t, "input"), num(t, "cached")
	c := cortex.TokenCounts{Input: max(in-cached, 0), CacheRead: cached, Output: num(t, "output") + num(t, "thoughts"),
		Reasoning: num(t, "thoughts"), Responses: 1}
	if c.Total() == 0 {
		return nil
	}
	return &cortex.TokenUsage{Tool: cortex.ToolGemini, SessionID: e.SessionID, Timestamp: e.Timestamp, Key: "m:" + id,
		Model: str(v, "model"), TokenCounts: c}
}

// num reads a non-negative integer field (0 when absent or not a number).
func num(v *fastjson.Value, key string) int64 {
	f := v.Get(key)
	if f == nil {
		return 0
	}
	switch f.Type() {
	case fastjson.TypeNumber:
		if n, err := f.Int64(); err == nil && n > 0 {
			return n
		}
		if x, err := f.Float64(); err == nil && x > 0 && x < 1e15 {
			return int64(x)
		}
	}
	return 0
}
