package transcript

import (
	"strings"
	"testing"

	"github.com/cortexhq/cortex"
)

// Codex's exec outputs start with a header (Chunk ID, Wall time, Process
// exited with code N, Original token count, Output:); a failed call's
// error text is "exit N: <the command's output>", not the header. Lines
// from ../shared/corpus/real/codex/agentv/00/34f597b72d/1/full.jsonl and
// …/4f/7325a9ab13/0/full.jsonl.
func TestCodexExecOutputs(t *testing.T) {
	for _, tc := range []struct {
		name, line       string
		status, errText  string
		exit             int
		output, rowStart string
	}{{
		name:   "failed",
		line:   `{"timestamp":"2026-06-26T13:36:54.186Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_Opa03rZqpDEFSIWGOLchbPJr","output":"Chunk ID: 7020a4\nWall time: 0.4805 seconds\nProcess exited with code 1\nOriginal token count: 52\nOutput:\nGraphQL: Projects (classic) is being deprecated in favor of the new Projects experience, see: https://github.blog/changelog/2024-05-23-sunset-notice-projects-classic/. (repository.pullRequest.projectCards)\n","internal_chat_message_metadata_passthrough":{"turn_id":"019f041d-c5d8-75f1-9773-ecfe229b46ae"}}}`,
		status: cortex.CallError, exit: 1, errText: "exit 1: GraphQL: Projects (classic) is being deprecated",
		rowStart: "Process exited with code 1",
	}, {
		name:   "failed without output",
		line:   `{"timestamp":"2026-06-26T12:24:58.665Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_PAlkejMi08UdOtNVqiWZ5YCO","output":"Chunk ID: e5c847\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 0\nOutput:\n","internal_chat_message_metadata_passthrough":{"turn_id":"019f03e3-3ddb-72c0-93d8-59a737f12c3b"}}}`,
		status: cortex.CallError, exit: 1, errText: "exit 1",
	}, {
		name:   "succeeded",
		line:   `{"timestamp":"2026-06-26T01:26:35.485Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"call_GRCOhbFusSsC92wujkEokcae","output":"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM .entire/settings.json\n"}}`,
		status: cortex.CallSuccess, exit: 0, output: "Success. Updated the following files:",
		rowStart: "Exit code: 0",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			res := NewCodexParser(FileContext{SessionID: "s"}, CodexState{}).Parse([]byte(tc.line), 1)
			if res.Err != nil || len(res.Events.Tools) != 1 {
				t.Fatalf("parse: %v, %d tool events", res.Err, len(res.Events.Tools))
			}
			ev := res.Events.Tools[0]
			if ev.Status != tc.status || ev.ExitCode == nil || *ev.ExitCode != tc.exit {
				t.Errorf("status %s exit %v, want %s %d", ev.Status, ev.ExitCode, tc.status, tc.exit)
			}
			if tc.errText != "" && (!strings.HasPrefix(ev.ErrorText, tc.errText) || strings.Contains(ev.ErrorText, "Chunk ID")) {
				t.Errorf("error text %q, want it to start %q", ev.ErrorText, tc.errText)
			}
			if tc.errText == "exit 1" && ev.ErrorText != "exit 1" {
				t.Errorf("error text %q", ev.ErrorText)
			}
			if tc.output != "" && !strings.HasPrefix(ev.OutputPreview, tc.output) {
				t.Errorf("output %q, want it to start %q", ev.OutputPreview, tc.output)
			}
			if tc.rowStart != "" && !strings.Contains(res.Entry.Text, tc.rowStart) {
				t.Errorf("row text %q lacks %q", res.Entry.Text, tc.rowStart)
			}
		})
	}
	// A header that starts with the command (over several lines) goes too.
	if got := string(execOutput([]byte("Command: /bin/zsh -lc 'cat <<EOF\na\nEOF'\nChunk ID: 266e25\nWall time: 0.0000 seconds\n" +
		"Process exited with code 1\nOriginal token count: 0\nOutput:\nboom\n"))); got != "boom\n" {
		t.Errorf("command header: %q", got)
	}
	// Text that only looks like a header stays whole.
	for _, s := range []string{"Output:\nx", "Chunk ID: 1\nsomething else\nOutput:\nx", "plain output", "Command: x\nOutput:\ny"} {
		if got := string(execOutput([]byte(s))); got != s {
			t.Errorf("execOutput(%q) = %q", s, got)
		}
	}
}
