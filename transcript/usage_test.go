package transcript

import (
	"testing"

	"github.com/cortexhq/cortex"
)

// Token usage as the agents write it; records shortened from
// ../shared/corpus/real (claude/planetfall-seed-signalkit/8e/da3033e7b0/3/full.jsonl,
// codex/agentv/…/full.jsonl, gemini/M-Gemini/chat_logs/…), content cut, the
// usage fields as written.
func TestTokenUsage(t *testing.T) {
	// Claude streams one response as several lines with the same
	// message.id, each repeating the usage: one key.
	claude := []string{
		`{"parentUuid":"p1","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"msg_01Aa7qmkGDNB9dRUC5w1nVCp","type":"message","role":"assistant","content":[{"type":"thinking","thinking":"","signature":"x"}],"usage":{"input_tokens":3372,"cache_creation_input_tokens":3540,"cache_read_input_tokens":8578,"output_tokens":191,"service_tier":"standard"}},"requestId":"req_1","type":"assistant","uuid":"u1","timestamp":"2026-06-17T17:13:30.000Z","sessionId":"3b5a9bec-34c4-48d5-9502-dd21f9e1e011"}`,
		`{"parentUuid":"u1","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"msg_01Aa7qmkGDNB9dRUC5w1nVCp","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":3372,"cache_creation_input_tokens":3540,"cache_read_input_tokens":8578,"output_tokens":191,"service_tier":"standard"}},"requestId":"req_1","type":"assistant","uuid":"u2","timestamp":"2026-06-17T17:13:31.000Z","sessionId":"3b5a9bec-34c4-48d5-9502-dd21f9e1e011"}`,
		`{"type":"assistant","uuid":"u3","timestamp":"2026-06-17T17:13:32.000Z","sessionId":"s","message":{"model":"<synthetic>","id":"msg_x","role":"assistant","content":[{"type":"text","text":"No response requested."}],"usage":{"input_tokens":0,"output_tokens":0}}}`,
	}
	p := NewClaudeParser(FileContext{SessionID: "f"})
	var keys []string
	for _, l := range claude {
		res := p.Parse([]byte(l), 1)
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if res.Usage == nil {
			continue
		}
		u := res.Usage
		want := cortex.TokenCounts{Input: 3372, Output: 191, CacheRead: 8578, CacheWrite: 3540, Responses: 1}
		if u.TokenCounts != want || u.Model != "claude-opus-4-8" || u.Tool != cortex.ToolClaude ||
			u.SessionID != "3b5a9bec-34c4-48d5-9502-dd21f9e1e011" || u.Timestamp.IsZero() {
			t.Errorf("claude usage %+v", u)
		}
		keys = append(keys, u.Key)
	}
	if len(keys) != 2 || keys[0] != keys[1] || keys[0] != "m:msg_01Aa7qmkGDNB9dRUC5w1nVCp" {
		t.Errorf("claude keys %v (the synthetic message has no usage)", keys)
	}

	// Codex: token_count events (bookkeeping, not rows) carry the
	// response's usage; a repeat of the same running total is the same key.
	c := NewCodexParser(FileContext{SessionID: "f"}, CodexState{})
	for _, l := range []string{
		`{"timestamp":"2026-06-25T13:03:58.961Z","type":"session_meta","payload":{"id":"019efee1-0000-7000-8000-000000000001","cwd":"/p"}}`,
		`{"timestamp":"2026-06-25T13:03:58.962Z","type":"turn_context","payload":{"turn_id":"t1","cwd":"/p","model":"gpt-5.5"}}`,
	} {
		c.Parse([]byte(l), 1)
	}
	tc := `{"timestamp":"2026-06-25T13:04:15.986Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":36560,"cached_input_tokens":20224,"output_tokens":456,"reasoning_output_tokens":228,"total_tokens":37016},"last_token_usage":{"input_tokens":18696,"cached_input_tokens":17792,"output_tokens":129,"reasoning_output_tokens":29,"total_tokens":18825},"model_context_window":258400}}}`
	a, b := c.Parse([]byte(tc), 3), c.Parse([]byte(tc), 4)
	if a.Skip != SkipBookkeeping || a.Usage == nil || b.Usage == nil || a.Usage.Key != b.Usage.Key || a.Usage.Key != "t:37016" {
		t.Fatalf("codex token_count: %+v / %+v", a, b.Usage)
	}
	if want := (cortex.TokenCounts{Input: 904, CacheRead: 17792, Output: 129, Reasoning: 29, Responses: 1}); a.Usage.TokenCounts != want ||
		a.Usage.Model != "gpt-5.5" || a.Usage.SessionID != "019efee1-0000-7000-8000-000000000001" {
		t.Errorf("codex usage %+v", a.Usage)
	}
	if r := c.Parse([]byte(`{"timestamp":"2026-06-25T13:04:16Z","type":"event_msg","payload":{"type":"token_count","info":null}}`), 5); r.Usage != nil {
		t.Errorf("token_count without info: %+v", r.Usage)
	}

	// Gemini counts cached input inside input and bills thoughts as output.
	doc := `{"sessionId":"g1","messages":[{"id":"m1","timestamp":"2026-01-22T20:54:40.000Z","type":"gemini","content":"ok","tokens":{"input":21191,"output":17,"cached":1000,"thoughts":83,"tool":0,"total":21291},"model":"gemini-2.5-flash-lite"}]}`
	rs, err := ParseGemini(FileContext{SessionID: "f"}, []byte(doc))
	if err != nil || len(rs) != 1 || rs[0].Usage == nil {
		t.Fatalf("gemini: %v %+v", err, rs)
	}
	if want := (cortex.TokenCounts{Input: 20191, CacheRead: 1000, Output: 100, Reasoning: 83, Responses: 1}); rs[0].Usage.TokenCounts != want ||
		rs[0].Usage.Key != "m:m1" || rs[0].Usage.Model != "gemini-2.5-flash-lite" {
		t.Errorf("gemini usage %+v", rs[0].Usage)
	}
}

// A Claude summary record is no row: it has no time and titles the session
// of its leaf message (../shared/corpus/real/claude/claude-code-log/
// -Users-dain-workspace-claude-code-log-sample/4e27c414-….jsonl is nothing
// else).
func TestClaudeSummaryIsATitle(t *testing.T) {
	res := NewClaudeParser(FileContext{SessionID: "4e27c414-a885-46a0-b5c8-d58e1417377d"}).Parse(
		[]byte(`{"type":"summary","summary":"TUI Cache Handling: Empty State Fix","leafUuid":"2369a617-e71c-48aa-8c5c-d53ad8274d71"}`), 1)
	if res.Skip != SkipSummary || res.Summary == nil || res.Summary.LeafUUID != "2369a617-e71c-48aa-8c5c-d53ad8274d71" ||
		res.Summary.Text != "TUI Cache Handling: Empty State Fix" || res.Entry.SessionID != "" {
		t.Fatalf("summary: %+v", res)
	}
}
