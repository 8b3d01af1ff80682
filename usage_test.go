package cortex

import (
	"math"
	"testing"
)

func TestPriceLookup(t *testing.T) {
	p := DefaultPrices()
	for model, want := range map[string]float64{
		"claude-opus-4-8":          5,
		"claude-opus-4-5-20251101": 5,
		"claude-opus-4-20250514":   15, // Opus 4, not 4.5
		"claude-sonnet-4-20250514": 3,
		"claude-sonnet-4-5[1m]":    3,
		"gpt-5.5":                  5,
		"gpt-5.1-codex":            1.25,
		"gemini-2.5-flash-lite":    0.10,
		"GPT-5.4":                  2.50,
	} {
		pr, ok := p.Lookup(model)
		if !ok || pr.Input != want {
			t.Errorf("%s: %+v %v, want input %v", model, pr, ok, want)
		}
	}
	// Unknown versions are not guessed from a family.
	for _, model := range []string{"claude-opus-4-9", "gpt-5.3-codex-spark", "gpt-5.55", "", "haiku"} {
		if pr, ok := p.Lookup(model); ok {
			t.Errorf("%s priced as %+v", model, pr)
		}
	}
	cost, ok := p.Cost("claude-opus-4-8", TokenCounts{Input: 1e6, Output: 1e6, CacheRead: 1e6, CacheWrite: 1e6})
	if !ok || math.Abs(cost-(5+25+0.5+6.25)) > 1e-9 {
		t.Errorf("cost %v %v", cost, ok)
	}
	s := p.Summarize(map[string]TokenCounts{"gpt-5.5": {Input: 1e6, Responses: 1}, "mystery": {Output: 10, Responses: 1}})
	if s.CostUSD != 5 || len(s.Unpriced) != 1 || s.Unpriced[0] != "mystery" || s.Total.Responses != 2 || len(s.Models()) != 2 {
		t.Errorf("summary %+v", s)
	}
	if p.Summarize(nil) != nil {
		t.Error("no usage must summarize to nil")
	}
}
