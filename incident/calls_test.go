package incident

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/sqlite"
)

// shell builds a shell call's arguments as the agents store them.
func shell(cmd string) string {
	b, _ := json.Marshal(map[string]string{"command": cmd})
	return string(b)
}

// Recovery is per operation and thread; a sibling cancellation names its
// cause.
func TestClassifyCallsRecoveryAndCause(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	calls := []sqlite.SessionCall{
		{ToolCall: sqlite.ToolCall{ID: 1, Timestamp: at(0), ToolName: "Bash", Status: cortex.CallError, IsError: true, ErrorText: "Exit code 1\nboom"}, Arguments: shell("git push origin x")},
		{ToolCall: sqlite.ToolCall{ID: 2, Timestamp: at(0), ToolName: "Bash", Status: cortex.CallError, IsError: true,
			ErrorText: "<tool_use_error>Cancelled: parallel tool call Bash(git push origin x) errored</tool_use_error>"}, Arguments: shell("git status")},
		{ToolCall: sqlite.ToolCall{ID: 3, Timestamp: at(5), ToolName: "Bash", Status: cortex.CallSuccess}, Thread: "agent-1", Arguments: shell("git push origin x")},
		{ToolCall: sqlite.ToolCall{ID: 4, Timestamp: at(9), ToolName: "Bash", Status: cortex.CallError, IsError: true, ErrorText: "Exit code 1\nboom"}, Arguments: shell("npm test")},
		{ToolCall: sqlite.ToolCall{ID: 5, Timestamp: at(20), ToolName: "Bash", Status: cortex.CallSuccess}, Arguments: shell("npm test")},
		{ToolCall: sqlite.ToolCall{ID: 6, Timestamp: at(30), ToolName: "Bash", Status: cortex.CallError, IsError: true, ErrorText: "x"}, CallID: "toolu_r", Arguments: shell("rm -rf /")},
	}
	got := classifyCalls(calls, true, []act{{Kind: cortex.UserRejection, CallID: "toolu_r"}})
	want := []struct {
		class     string
		recovered bool
		cause     int64
	}{
		{classFailed, false, 0}, // the success is in another thread
		{classSibling, false, 1},
		{classOK, false, 0},
		{classFailed, true, 0},
		{classOK, false, 0},
		{classRejected, false, 0},
	}
	for i, w := range want {
		if got[i].Class != w.class || got[i].Recovered != w.recovered || got[i].Cause != w.cause {
			t.Errorf("call %d: %s recovered %v cause %d, want %+v", i+1, got[i].Class, got[i].Recovered, got[i].Cause, w)
		}
	}
}
