package cortex

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// TokenUsage is the token usage of one model response, as a transcript
// records it. Key identifies the response within its session, so a
// response written several times (Claude streams one API response as
// several lines sharing message.id, each repeating its usage; Codex
// repeats token_count events) is counted once: Claude's message id,
// Codex's cumulative total of the session at that response, Gemini's
// message id.
type TokenUsage struct {
	Tool      Tool
	SessionID string
	Timestamp time.Time
	Key       string
	Model     string
	TokenCounts
}

// SessionSummary is a summary an agent wrote of a conversation (Claude
// Code's `summary` record, which carries no time of its own): the title of
// the session of its last message, LeafUUID, once that message is stored.
type SessionSummary struct {
	LeafUUID string
	Text     string
}

// TokenCounts are token counts, split as the vendors bill them. Input
// excludes cached input (CacheRead) and cache writes (CacheWrite); Output
// includes reasoning (Reasoning is the part of it the model thought).
type TokenCounts struct {
	Input      int64 `json:"input_tokens"`
	Output     int64 `json:"output_tokens"`
	CacheRead  int64 `json:"cache_read_tokens"`
	CacheWrite int64 `json:"cache_write_tokens"`
	Reasoning  int64 `json:"reasoning_tokens,omitempty"`
	// Responses counts the model responses summed.
	Responses int64 `json:"responses"`
}

// Add adds o to c.
func (c *TokenCounts) Add(o TokenCounts) {
	c.Input += o.Input
	c.Output += o.Output
	c.CacheRead += o.CacheRead
	c.CacheWrite += o.CacheWrite
	c.Reasoning += o.Reasoning
	c.Responses += o.Responses
}

// Total is every token counted once: input, cache reads and writes, output.
func (c TokenCounts) Total() int64 { return c.Input + c.CacheRead + c.CacheWrite + c.Output }

// ModelUsage is the usage of one model, with its estimated cost.
type ModelUsage struct {
	Model string `json:"model"`
	TokenCounts
	// CostUSD is the estimated cost from the price table; nil when the
	// model has no price.
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// UsageSummary is the token usage of a session or an incident: per model
// and in total, with the estimated cost of the priced models. Unpriced
// lists models the price table has no price for (their tokens count in
// Total, not in CostUSD).
type UsageSummary struct {
	Total    TokenCounts  `json:"total"`
	ByModel  []ModelUsage `json:"by_model"`
	CostUSD  float64      `json:"cost_usd"`
	Unpriced []string     `json:"unpriced_models,omitempty"`
}

// Summarize prices per-model counts and totals them (models by name).
func (p Prices) Summarize(byModel map[string]TokenCounts) *UsageSummary {
	if len(byModel) == 0 {
		return nil
	}
	s := &UsageSummary{ByModel: []ModelUsage{}}
	for _, m := range slices.Sorted(maps.Keys(byModel)) {
		c := byModel[m]
		mu := ModelUsage{Model: m, TokenCounts: c}
		if cost, ok := p.Cost(m, c); ok {
			mu.CostUSD = &cost
			s.CostUSD += cost
		} else if c.Total() > 0 {
			name := m
			if name == "" {
				name = "(unknown model)"
			}
			s.Unpriced = append(s.Unpriced, name)
		}
		s.Total.Add(c)
		s.ByModel = append(s.ByModel, mu)
	}
	return s
}

// Models lists the models of a summary.
func (s *UsageSummary) Models() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, m := range s.ByModel {
		if m.Model != "" {
			out = append(out, m.Model)
		}
	}
	return out
}

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input      float64 `toml:"input" json:"input"`
	Output     float64 `toml:"output" json:"output"`
	CacheRead  float64 `toml:"cache_read" json:"cache_read"`
	CacheWrite float64 `toml:"cache_write" json:"cache_write"`
}

// Prices maps model names to prices. A model matches its own name, or a
// name followed by a date or version suffix ("claude-sonnet-4-20250514"
// matches "claude-sonnet-4"; "claude-opus-4-9" does not match
// "claude-opus-4", because "9" is no date).
type Prices map[string]Price

// PricesAsOf dates DefaultPrices: the vendors' published list prices
// (standard tier, prompts under the long-context thresholds) as collected
// on this day. They are estimates: override them in the configuration.
const PricesAsOf = "2026-11-30"

// DefaultPrices returns the default price table (see PricesAsOf).
func DefaultPrices() Prices {
	opus45 := Price{Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25}
	opus4 := Price{Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75}
	sonnet := Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75}
	gpt51 := Price{Input: 1.25, Output: 10, CacheRead: 0.125}
	gpt52 := Price{Input: 1.75, Output: 14, CacheRead: 0.175}
	return Prices{
		// Anthropic.
		"claude-fable-5":    {Input: 10, Output: 50, CacheRead: 1, CacheWrite: 12.50},
		"claude-opus-4-8":   opus45,
		"claude-opus-4-7":   opus45,
		"claude-opus-4-6":   opus45,
		"claude-opus-4-5":   opus45,
		"claude-opus-4-1":   opus4,
		"claude-opus-4":     opus4,
		"claude-sonnet-4-6": sonnet,
		"claude-sonnet-4-5": sonnet,
		"claude-sonnet-4":   sonnet,
		"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25},
		"claude-3-5-haiku":  {Input: 0.80, Output: 4, CacheRead: 0.08, CacheWrite: 1},
		// OpenAI (cached input is billed as CacheRead; no cache writes).
		"gpt-5.5":       {Input: 5, Output: 30, CacheRead: 0.50},
		"gpt-5.4":       {Input: 2.50, Output: 15, CacheRead: 0.25},
		"gpt-5.3-codex": gpt52,
		"gpt-5.2-codex": gpt52,
		"gpt-5.2":       gpt52,
		"gpt-5.1-codex": gpt51,
		"gpt-5.1":       gpt51,
		"gpt-5-codex":   gpt51,
		"gpt-5":         gpt51,
		// Google (prompts up to 200k tokens).
		"gemini-3-pro-preview":   {Input: 2, Output: 12, CacheRead: 0.20},
		"gemini-3-flash-preview": {Input: 0.50, Output: 3, CacheRead: 0.05},
		"gemini-2.5-pro":         {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gemini-2.5-flash":       {Input: 0.30, Output: 2.50, CacheRead: 0.03},
		"gemini-2.5-flash-lite":  {Input: 0.10, Output: 0.40, CacheRead: 0.01},
	}
}

// versionSuffix is what may follow a priced model name: a date
// (-20250514, -2025-08-07), a context tag ([1m]) or nothing.
var versionSuffix = regexp.MustCompile(`^(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)?(\[[0-9a-z]+\])?$`)

// Lookup finds the price of a model: the longest priced name the model
// is, or starts with followed by a date suffix.
func (p Prices) Lookup(model string) (Price, bool) {
	model = strings.ToLower(strings.TrimSpace(model))
	if pr, ok := p[model]; ok {
		return pr, true
	}
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
	for _, n := range names {
		if strings.HasPrefix(model, n) && versionSuffix.MatchString(model[len(n):]) {
			return p[n], true
		}
	}
	return Price{}, false
}

// Cost is the estimated cost of counts on a model in US dollars.
func (p Prices) Cost(model string, c TokenCounts) (float64, bool) {
	pr, ok := p.Lookup(model)
	if !ok {
		return 0, false
	}
	return (float64(c.Input)*pr.Input + float64(c.Output)*pr.Output + float64(c.CacheRead)*pr.CacheRead +
		float64(c.CacheWrite)*pr.CacheWrite) / 1e6, true
}
