package transcript

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/testcorpus"
)

// checkEvents asserts the properties every extracted event must have:
// known kinds and statuses, bounded clean text, call-only events without
// a status, result events with one.
func checkEvents(t *testing.T, where string, ev cortex.Events) {
	t.Helper()
	clean := func(field, s string, max int) {
		t.Helper()
		if len(s) > max || !utf8.ValidString(s) {
			t.Errorf("%s: %s is %d bytes (bound %d) or not UTF-8: %.80q", where, field, len(s), max, s)
		}
	}
	skillKinds := []string{cortex.SkillClaudeAttribution, cortex.SkillClaudeTool, cortex.SkillClaudeBody,
		cortex.SkillClaudeSlash, cortex.SkillClaudeInvoked, cortex.SkillCodexBlock, cortex.SkillClaudeCommand,
		cortex.SkillCodexRead, cortex.SkillCodexAnnounced}
	for _, s := range ev.Skills {
		if n, p, ok := NormalizeSkill(s.SkillName, s.SkillPlugin); !ok || n != s.SkillName || p != s.SkillPlugin {
			t.Errorf("%s: skill %q/%q is not normalized", where, s.SkillName, s.SkillPlugin)
		}
		if !slices.Contains(skillKinds, s.EventKind) || (s.EvidenceKind != cortex.EvidenceStructured && s.EvidenceKind != cortex.EvidenceContent) {
			t.Errorf("%s: skill kinds %q/%q", where, s.EventKind, s.EvidenceKind)
		}
		clean("skill path", s.SkillPath, maxSkillPath)
		for k, v := range s.Meta {
			clean("skill meta "+k, v, MaxSkillField)
		}
	}
	toolKinds := []string{cortex.ToolClaudeUse, cortex.ToolClaudeResult, cortex.ToolCodexCall, cortex.ToolCodexOutput,
		cortex.ToolCodexMCPEnd, cortex.ToolCodexExecEnd, cortex.ToolCodexPatchApply, cortex.ToolGeminiToolCall}
	statuses := []string{cortex.CallSuccess, cortex.CallError, cortex.CallCancelled, cortex.CallUnknown}
	for _, x := range ev.Tools {
		if !slices.Contains(toolKinds, x.EventKind) || !x.HasCall && !x.HasResult {
			t.Errorf("%s: tool event kind %q call %v result %v", where, x.EventKind, x.HasCall, x.HasResult)
		}
		switch {
		case !x.HasResult && x.Status != "":
			t.Errorf("%s: call-only event with status %q", where, x.Status)
		case x.HasResult && !slices.Contains(statuses, x.Status):
			t.Errorf("%s: result status %q", where, x.Status)
		case x.HasResult && (x.Status == cortex.CallError) != (x.IsError != nil && *x.IsError):
			t.Errorf("%s: status %q with IsError %v", where, x.Status, x.IsError)
		case x.Status == cortex.CallUnknown && x.IsError != nil:
			t.Errorf("%s: unknown status with IsError set", where)
		}
		// One classifier: a call is MCP exactly when its name reads as
		// mcp__<server>__<tool> with a server (so mcp____ is not).
		if _, _, mcp := SplitMCPName(x.ToolName); (x.MCPServer != "") != mcp {
			t.Errorf("%s: tool %q classified MCP server %q", where, x.ToolName, x.MCPServer)
		}
		for f, s := range map[string]string{"arguments": x.ArgumentsJSON, "output": x.OutputPreview, "error": x.ErrorText} {
			clean(f, s, MaxEventText)
		}
		clean("tool name", x.ToolName, maxEventName)
		clean("call id", x.CallID, maxEventName)
		if x.ArgumentsJSON != "" && x.Meta["arguments_truncated"] == "" && !json.Valid([]byte(x.ArgumentsJSON)) {
			t.Errorf("%s: arguments are not JSON: %.80q", where, x.ArgumentsJSON)
		}
	}
	hookStatuses := []string{cortex.HookSuccess, cortex.HookFailed, cortex.HookBlocked, cortex.HookCancelled, cortex.HookError, cortex.HookUnknown}
	for _, h := range ev.Hooks {
		if !slices.Contains(hookStatuses, h.Status) || h.EvidenceKind != cortex.EvidenceRuntime {
			t.Errorf("%s: hook status %q evidence %q", where, h.Status, h.EvidenceKind)
		}
		for f, s := range map[string]string{"command": h.Command, "stdout": h.StdoutPreview, "stderr": h.StderrPreview} {
			clean("hook "+f, s, MaxEventText)
		}
	}
	userKinds := []string{cortex.UserPrompt, cortex.UserCommand, cortex.UserShell, cortex.UserInterrupt,
		cortex.UserRejection, cortex.UserClarify}
	for _, u := range ev.Users {
		if !slices.Contains(userKinds, u.Kind) {
			t.Errorf("%s: user event kind %q", where, u.Kind)
		}
		if (u.Kind == cortex.UserPrompt || u.Kind == cortex.UserCommand || u.Kind == cortex.UserShell) && u.Text == "" {
			t.Errorf("%s: %s without text", where, u.Kind)
		}
		clean("user text", u.Text, MaxUserEventText)
		clean("user call id", u.CallID, maxEventName)
		clean("user source", u.Source, maxEventName)
	}
}

// checkReextract asserts the backfill invariant for one result: extracting
// from the stored raw record and the stored entry fields gives exactly the
// events the parser produced.
func checkReextract(t *testing.T, where string, r Result) {
	t.Helper()
	e := cortex.Entry{Tool: r.Entry.Tool, Kind: r.Entry.Kind, Role: r.Entry.Role}
	if id, ok := r.Entry.Meta["turn_id"]; ok {
		e.Meta = map[string]string{"turn_id": id}
	}
	got, err := ExtractEvents(e.Tool, &e, r.Raw)
	if err != nil {
		t.Fatalf("%s: ExtractEvents: %v", where, err)
	}
	if !reflect.DeepEqual(got, r.Events) {
		t.Fatalf("%s: ExtractEvents differs from the parser's events:\n got %+v\nwant %+v", where, got, r.Events)
	}
}

// eventCounts tallies events by tool and kind.
type eventCounts map[string]int

func (c eventCounts) add(tool cortex.Tool, ev cortex.Events) {
	for _, s := range ev.Skills {
		c[string(tool)+" skill "+s.EventKind]++
	}
	for _, x := range ev.Tools {
		side := "call+result"
		switch {
		case !x.HasResult:
			side = "call"
		case !x.HasCall:
			side = "result"
		}
		c[string(tool)+" tool "+x.EventKind+" "+side+" "+x.Status]++
		if x.MCPServer != "" {
			c[string(tool)+" tool mcp "+x.EventKind]++
		}
	}
	for _, h := range ev.Hooks {
		source := h.Meta["attachment_type"]
		switch {
		case h.Meta["phase"] != "":
			source = "hook_progress"
		case h.Meta["hook_count"] != "":
			source = "stop_hook_summary"
		}
		c[string(tool)+" hook "+source+" "+h.Status]++
	}
}

func (c eventCounts) log(t *testing.T, corpus string) {
	keys := make([]string, 0, len(c))
	totals := map[string]int{}
	for k, n := range c {
		keys = append(keys, k)
		if f := strings.Fields(k); len(f) > 2 && f[2] != "mcp" {
			totals[f[0]+" "+f[1]] += n
		}
	}
	sort.Strings(keys)
	t.Logf("%s corpus: claude %d skill / %d tool / %d hook events; codex %d skill / %d tool; gemini %d tool", corpus,
		totals["claude skill"], totals["claude tool"], totals["claude hook"], totals["codex skill"], totals["codex tool"], totals["gemini tool"])
	for _, k := range keys {
		t.Logf("%-75s %5d", k, c[k])
	}
}

// parseLabelled parses every labelled transcript.
func parseLabelled(t *testing.T) []parsedFile {
	t.Helper()
	root := testcorpus.Labelled(t)
	var out []parsedFile
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		folder, _, _ := strings.Cut(rel, "/")
		f, rs, err := parseFile(t, p, data)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		out = append(out, parsedFile{corpusFile: corpusFile{Rel: rel, Path: p, Folder: folder}, data: data, format: f, results: rs})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no labelled transcripts")
	}
	return out
}

// TestEventsCorpus checks, over every real and labelled transcript, that
// re-extraction from stored rows reproduces the parser's events and that
// the events match counts taken independently with encoding/json.
func TestEventsCorpus(t *testing.T) {
	for _, set := range []struct {
		name  string
		files func(*testing.T) []parsedFile
	}{{"real", parseCorpus}, {"labelled", parseLabelled}} {
		t.Run(set.name, func(t *testing.T) {
			counts := eventCounts{}
			for _, pf := range set.files(t) {
				for _, r := range pf.results {
					if r.Err != nil || r.Skip != "" {
						if !r.Events.Empty() {
							t.Errorf("%s:%d: events on a record that is not stored", pf.Rel, r.Line)
						}
						continue
					}
					where := fmt.Sprintf("%s:%d (%s)", pf.Rel, r.Line, r.Entry.Kind)
					checkReextract(t, where, r)
					checkEvents(t, where, r.Events)
					counts.add(r.Entry.Tool, r.Events)
				}
				checkEventCounts(t, pf)
			}
			counts.log(t, set.name)
		})
	}
}

// checkEventCounts compares a file's events with counts read from its
// records with encoding/json.
func checkEventCounts(t *testing.T, pf parsedFile) {
	t.Helper()
	var want, got struct {
		attribution, calls, results, errors, skillBlocks, hooks, gemini int
	}
	attrByKey := map[string]int{}
	for _, r := range stored(pf.results) {
		n := 0
		for _, s := range r.Events.Skills {
			switch s.EventKind {
			case cortex.SkillClaudeAttribution:
				n++
			case cortex.SkillCodexBlock:
				got.skillBlocks++
			}
		}
		if n > 0 || attrByKey[r.Entry.RecordKey] > 0 {
			attrByKey[r.Entry.RecordKey] = n // last record with the key wins
		}
		for _, x := range r.Events.Tools {
			switch x.EventKind {
			case cortex.ToolClaudeUse, cortex.ToolCodexCall:
				got.calls++
			case cortex.ToolClaudeResult:
				got.results++
				if *x.IsError {
					got.errors++
				}
			case cortex.ToolGeminiToolCall:
				got.gemini++
			}
		}
		got.hooks += len(r.Events.Hooks)
	}
	for _, n := range attrByKey {
		got.attribution += n
	}

	switch pf.format {
	case FormatClaude:
		attr := map[string]bool{}
		for _, line := range jsonRecords(t, pf.data) {
			for _, rec := range line {
				countClaudeRecord(rec, attr, &want.calls, &want.results, &want.errors, &want.hooks)
			}
		}
		for _, a := range attr {
			if a {
				want.attribution++
			}
		}
	case FormatCodex:
		for _, line := range jsonRecords(t, pf.data) {
			for _, rec := range line {
				typ, pt := strAt(rec, "type"), strAt(rec, "payload", "type")
				switch {
				case typ == "response_item" && (pt == "function_call" || pt == "custom_tool_call" || pt == "local_shell_call"):
					want.calls++
				case typ == "response_item" && pt == "message":
					want.skillBlocks += codexSkillNames(rec)
				}
			}
		}
	default:
		var doc struct {
			Messages []struct {
				ToolCalls []json.RawMessage `json:"toolCalls"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(pf.data, &doc); err != nil {
			t.Fatalf("%s: %v", pf.Rel, err)
		}
		for _, m := range doc.Messages {
			want.gemini += len(m.ToolCalls)
		}
	}
	if got != want {
		t.Errorf("%s: events %+v, records say %+v", pf.Rel, got, want)
	}
}

// countClaudeRecord counts one Claude record's expected events: attribution
// by uuid (last record wins), tool_use blocks of assistant messages,
// result blocks, failed results and hook runs — also inside agent_progress
// records, whose embedded message is the record.
func countClaudeRecord(rec map[string]any, attr map[string]bool, calls, results, errors, hooks *int) {
	typ := strAt(rec, "type")
	msgRec := rec
	switch {
	case typ == "attachment":
		if at := strAt(rec, "attachment", "type"); strings.HasPrefix(at, "hook_") || at == "async_hook_response" {
			*hooks++
		}
		return
	case typ == "system" && strAt(rec, "subtype") == "stop_hook_summary":
		infos, _ := rec["hookInfos"].([]any)
		*hooks += len(infos)
		return
	case typ == "progress" && strAt(rec, "data", "type") == "hook_progress":
		*hooks++
		return
	case typ == "progress" && strAt(rec, "data", "type") == "agent_progress":
		msgRec, _ = mapAt(rec, "data", "message").(map[string]any)
		typ = strAt(msgRec, "type")
	case typ == "":
		typ = strAt(rec, "message", "role")
	}
	if typ != "user" && typ != "assistant" {
		return
	}
	if typ == "assistant" {
		key := strAt(msgRec, "uuid")
		s := strings.TrimSpace(strAt(msgRec, "attributionSkill"))
		attr[key] = s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r >= 0x7f && r < 0xa0 })
	}
	blocks, _ := mapAt(msgRec, "message", "content").([]any)
	for _, b := range blocks {
		switch strAt(b, "type") {
		case "tool_use", "server_tool_use", "mcp_tool_use":
			if typ == "assistant" {
				*calls++
			}
		case "tool_result", "mcp_tool_result", "web_search_tool_result":
			*results++
			if mapAt(b, "is_error") == true {
				*errors++
			}
		}
	}
}

var reSkillBlock = regexp.MustCompile(`<\s*skill\s*>\s*<\s*name\s*>([^<]*)<\s*/\s*name\s*>`)

// codexSkillNames counts the distinct skill names of <skill><name> blocks
// in a response_item message.
func codexSkillNames(rec map[string]any) int {
	names := map[string]bool{}
	parts, _ := mapAt(rec, "payload", "content").([]any)
	for _, p := range parts {
		for _, m := range reSkillBlock.FindAllStringSubmatch(strAt(p, "text"), -1) {
			if n := strings.TrimSpace(m[1]); n != "" {
				names[n] = true
			}
		}
	}
	return len(names)
}
