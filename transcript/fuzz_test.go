package transcript

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// seedLines adds every line of the testdata excerpts under dir as a seed.
// (Disk access happens here, never inside the fuzz function.)
func seedLines(f *testing.F, dir string) {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata/%s: %v", dir, err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, ln := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(ln)) > 0 {
				f.Add(ln)
			}
		}
		f.Add(data) // whole excerpts: several lines, and "}{" joins
	}
}

// checkResults asserts the properties every parser result must have.
func checkResults(t *testing.T, tool cortex.Tool, rs []Result) {
	t.Helper()
	for _, r := range rs {
		if r.Err != nil && r.Skip != "" {
			t.Fatalf("result with both Err (%v) and Skip (%q)", r.Err, r.Skip)
		}
		if r.Err != nil || r.Skip != "" {
			if !r.Events.Empty() {
				t.Fatalf("events on a record that is not stored: %+v", r.Events)
			}
			continue
		}
		// The backfill invariant: the stored raw record and entry fields
		// give exactly the parser's events.
		checkReextract(t, r.Entry.Kind, r)
		checkEvents(t, r.Entry.Kind, r.Events)
		e := r.Entry
		if !utf8.ValidString(e.Text) || strings.IndexByte(e.Text, 0) >= 0 {
			t.Fatalf("stored text is not clean UTF-8: %q", e.Text)
		}
		if len(e.Text) > maxEntryText {
			t.Fatalf("stored text is %d bytes, bound %d", len(e.Text), maxEntryText)
		}
		if !slices.Contains(cortex.Roles(), e.Role) {
			t.Fatalf("role %q is not a cortex role", e.Role)
		}
		if e.RecordKey == "" {
			t.Fatal("empty RecordKey")
		}
		if e.Tool != tool {
			t.Fatalf("tool %q, want %q", e.Tool, tool)
		}
		if e.Severity.Level() < 0 {
			t.Fatalf("severity %q", e.Severity)
		}
		// A text a store may leave out is given back by its record alone.
		if TextFromRecord(tool, r.Raw, &e) {
			if text, ok := StoredText(tool, r.Raw, e.ToolName); !ok || text != e.Text {
				t.Fatalf("TextFromRecord holds, StoredText gives %q (ok %v), want %q", text, ok, e.Text)
			}
		}
		for _, s := range []string{e.SessionID, e.Project, e.ToolName, e.Kind, e.AgentID, e.Model, e.RecordKey} {
			if !utf8.ValidString(s) {
				t.Fatalf("field is not valid UTF-8: %q", s)
			}
		}
	}
}

// fuzzExtract runs ExtractEvents on arbitrary input as any agent's record
// of a few kinds: it must not panic, and what it returns must hold the
// event invariants.
func fuzzExtract(t *testing.T, data []byte) {
	for _, tool := range cortex.Tools() {
		for _, kind := range []string{"", "user:meta", "progress:agent_progress:user:meta", "gemini:tool_result"} {
			e := cortex.Entry{Tool: tool, Kind: kind, Meta: map[string]string{"turn_id": "t"}}
			ev, err := ExtractEvents(tool, &e, data)
			if err == nil {
				checkEvents(t, string(tool)+" "+kind, ev)
			}
		}
	}
}

// fuzzJSONL runs the input as one line (terminated or not) and as a file
// of lines read with a LineReader, through parsers made by newParser.
func fuzzJSONL(t *testing.T, tool cortex.Tool, newParser func() RecordParser, data []byte) {
	for _, complete := range []bool{true, false} {
		checkResults(t, tool, ParseLine(newParser(), data, 1, complete))
	}
	p := newParser()
	lr := NewLineReader(bytes.NewReader(data), 0, 1)
	lr.SetLimit(1 << 20)
	var off int64
	for {
		l, err := lr.Next()
		if err != nil {
			break
		}
		if l.Start != off || l.End <= l.Start {
			t.Fatalf("line %d spans %d-%d after offset %d", l.No, l.Start, l.End, off)
		}
		off = l.End
		checkResults(t, tool, ParseLine(p, l.Data, l.No, l.Complete))
	}
	if off != int64(len(data)) {
		t.Fatalf("lines cover %d of %d bytes", off, len(data))
	}
	_, _ = SplitConcatenated(data)
	_, _ = Sniff(data)
	fuzzExtract(t, data)
}

func FuzzClaudeParse(f *testing.F) {
	seedLines(f, "claude")
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":"caf\xe9 \xff"}}`))
	f.Add([]byte(`{"type":"progress","data":{"type":"agent_progress","message":{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":"ls"}}]}}}}`))
	f.Add([]byte(`{"type":"assistant","attributionSkill":" p:s\u00e9 ","attributionPlugin":"p","message":{"content":[{"type":"mcp_tool_use","id":"m","name":"t","server_name":"srv","input":{"k":"\u0007\ud800"}}]}}`))
	f.Add([]byte(`{"type":"system","subtype":"stop_hook_summary","hookCount":2,"hookInfos":[{"command":"a","durationMs":1},"b"],"hookErrors":["x",{"y":1}],"preventedContinuation":true}`))
	f.Add([]byte(`{"type":"user","isMeta":true,"sourceToolUseID":"t","message":{"content":[{"type":"text","text":"Base directory for this skill: /a/b\\c/\nbody"}]}}`))
	ctx := FileContext{SessionID: "fuzz", Project: "/fuzz", AgentID: "", AgentType: "t"}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzJSONL(t, cortex.ToolClaude, func() RecordParser { return NewClaudeParser(ctx) }, data)
		_, _, _ = SlashCommand(string(data))
		_ = SessionFromHead(data, FormatClaude)
	})
}

func FuzzCodexParse(f *testing.F) {
	seedLines(f, "codex")
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call","name":"x","arguments":"not json \u0007","call_id":"c"}}`))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"{\"output\":\"a\\u0000\",\"metadata\":{\"exit_code\":1}}"}}`))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"< skill ><name>a:b</name><path>/p</path>x<skill><name>a:b</name></ skill>"}]}}`))
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call","name":"js","namespace":"mcp__node_repl","arguments":"{\"code\": 1}","call_id":"c","metadata":{"turn_id":"t"}}}`))
	f.Add([]byte(`{"type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c","invocation":{"server":"s","tool":"t","arguments":{"q":"\u00e9"}},"duration":{"secs":1,"nanos":5},"result":{"Err":{"code":1}}}}`))
	ctx := FileContext{SessionID: "fuzz"}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzJSONL(t, cortex.ToolCodex, func() RecordParser { return NewCodexParser(ctx, CodexState{}) }, data)
		if v, err := fastjson.ParseBytes(data); err == nil {
			o := CodexOutput(v)
			if !utf8.ValidString(o.Text) || strings.IndexByte(o.Text, 0) >= 0 {
				t.Fatalf("CodexOutput text not clean: %q", o.Text)
			}
			if o.ExitCode != nil && o.Failed != (*o.ExitCode != 0) {
				t.Fatalf("exit %d but Failed=%v", *o.ExitCode, o.Failed)
			}
		}
		_ = SessionFromHead(data, FormatCodex)
	})
}

func FuzzGemini(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "gemini", "*"))
	if err != nil || len(files) == 0 {
		f.Fatal("no gemini seeds")
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"sessionId":"s","projectHash":"h"}`))
	f.Add([]byte(`{"sessionId":"s","messages":[{"id":"m","type":"gemini","content":"","toolCalls":[{"id":"c","name":"mcp__s__t","args":{"command":"a\u001b[0m \u00e9 \/"},"status":"cancelled","result":[{"functionResponse":{"response":{"error":{"e":"\u0007"}}}}]}]}]}`))
	f.Add([]byte("{\"sessionId\":\"s\"}\n{\"id\":\"a\",\"type\":\"user\",\"content\":\"x\"}\n{\"$rewindTo\":\"a\"}\n"))
	ctx := FileContext{SessionID: "fuzz"}
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ParseGemini(ctx, data)
		checkResults(t, cortex.ToolGemini, rs)
		if len(bytes.TrimSpace(data)) == 0 && (err != nil || len(rs) != 0) {
			t.Fatalf("blank input: %d results, %v", len(rs), err)
		}
		keys := map[string]bool{}
		for _, r := range rs {
			if r.Err != nil || r.Skip != "" {
				continue
			}
			if keys[r.Entry.RecordKey] {
				t.Fatalf("duplicate record key %q in one file", r.Entry.RecordKey)
			}
			keys[r.Entry.RecordKey] = true
		}
		_, _ = Sniff(data)
		fuzzExtract(t, data)
	})
}

// FuzzElideBlobs: a JSON record stays JSON with its blobs elided, is kept
// byte for byte when it has none, and is elided once only.
func FuzzElideBlobs(f *testing.F) {
	random := make([]byte, 300)
	for i := range random {
		random[i] = byte(i*131 + i*i*7)
	}
	blob := base64.StdEncoding.EncodeToString(random)
	f.Add([]byte(`{"type":"image","source":{"data":"` + blob + `"}}`))
	f.Add([]byte(`{"a":"say \"hi\\\\\"","b":"` + blob + `","c":[1,"` + blob + `"]}`))
	f.Add([]byte(`{"` + blob + `":"x"}`))
	seedLines(f, "claude")
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, n := ElideBlobs(raw)
		if n == 0 && !bytes.Equal(out, raw) {
			t.Fatalf("nothing elided but %q became %q", raw, out)
		}
		if !json.Valid(raw) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%q became %q, not JSON", raw, out)
		}
		if again, m := ElideBlobs(out); m != 0 || !bytes.Equal(again, out) {
			t.Fatalf("elided twice: %q", out)
		}
	})
}
