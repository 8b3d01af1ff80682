package findings

import (
	"slices"
	"testing"

	"github.com/cortexhq/cortex"
)

func TestAbuseCategoryOrder(t *testing.T) {
	want := []string{"tool_timeout", "auth_or_permission_failure", "stale_binary_or_version_drift", "test_failure",
		"docker_or_service_runtime_failure", "db_busy_or_performance_bottleneck", "command_failure",
		"unclear_instruction_or_scope_drift", "unknown"}
	if got := Abuse().Categories(); !slices.Equal(got, want) {
		t.Fatalf("Abuse().Categories() = %v, want %v", got, want)
	}
}

func TestAbusePositives(t *testing.T) {
	cases := []struct {
		cat  string
		row  cortex.EvidenceRow
		want string // a phrase Why must name
	}{
		{catToolTimeout, row(1, cortex.RoleToolResult, "Error: context deadline exceeded"), "deadline exceeded"},
		{catToolTimeout, logRow(1, "nginx: upstream timed out (110: Connection timed out)"), "timed out"},
		{catToolTimeout, row(1, cortex.RoleSystem, "API Error: Request timeout"), "request timeout"},
		{catAuth, row(1, cortex.RoleToolResult, "HTTP/1.1 401 Unauthorized"), "401 unauthorized"},
		{catAuth, row(1, cortex.RoleToolResult, "request failed: status 403"), "status 403"},
		{catAuth, row(1, cortex.RoleToolResult, "git@github.com: Permission denied (publickey)."), "permission denied"},
		{catAuth, row(1, cortex.RoleHook, "hook: sudo: a password is required"), "password is required"},
		{catStaleBinary, row(1, cortex.RoleToolResult, "client/server version mismatch: client 1.2, server 1.4"), "version mismatch"},
		{catTestFailure, row(1, cortex.RoleToolResult, "--- FAIL: TestTotal (0.00s)"), "--- fail:"},
		{catTestFailure, row(1, cortex.RoleToolResult, "thread 'main' panicked at src/lib.rs:4"), "panicked at"},
		{catTestFailure, row(1, cortex.RoleUser, "The test still fails."), "test still fails"},
		{catRuntime, logRow(1, "kubelet: Back-off restarting failed container; reason CrashLoopBackOff"), "crashloopbackoff"},
		{catRuntime, row(1, cortex.RoleToolResult, "app exited: OOMKilled"), "oomkilled"},
		{catDBBusy, row(1, cortex.RoleToolResult, "Error: database is locked"), "database is locked"},
		{catDBBusy, logRow(1, "sqlite: SQLITE_BUSY on write"), "sqlite_busy"},
		{catCommand, row(1, cortex.RoleToolResult, "bash: jq: command not found"), "command not found"},
		{catCommand, row(1, cortex.RoleToolResult, "Process exited with code 2"), "exited with code (non-zero)"},
		{catCommand, row(1, cortex.RoleToolResult, "make: *** [all] Error 1\nexit status: 1"), "exit status (non-zero)"},
		{catUnclear, row(1, cortex.RoleUser, "No, that's not what I asked for."), "that's not what i asked"},
		{catUnclear, row(1, cortex.RoleUser, "We are going in circles."), "going in circles"},
		{catUnclear, row(1, cortex.RoleUser, "You misunderstood the task."), "you misunderstood"},
	}
	for _, c := range cases {
		checkPositive(t, Abuse(), abuseBundle(c.row), c.cat, c.want)
	}
}

func TestAbuseNegatives(t *testing.T) {
	cases := []struct {
		name string
		row  cortex.EvidenceRow
		not  string // category that must not appear ("" = only unknown allowed)
	}{
		{"port number containing 401", row(1, cortex.RoleToolResult, "listening on :4010, order 14035 shipped"), catAuth},
		{"http 4010 is not http 401", row(1, cortex.RoleToolResult, "GET /x http 4010 status 4031 error 14030"), catAuth},
		{"bare numbers 401 and 403", row(1, cortex.RoleToolResult, "returned 401 rows in 403 ms"), catAuth},
		{"not foundation", row(1, cortex.RoleToolResult, "the command not foundation layer"), catCommand},
		{"exit code zero is success", row(1, cortex.RoleToolResult, "Process exited with code 0\nexit status: 0"), catCommand},
		{"exit code inside a word", row(1, cortex.RoleToolResult, "set myexit code 3 and preexit status 2"), catCommand},
		{"exit code glued to a word", row(1, cortex.RoleToolResult, "exit code 1a; exit status 2x"), catCommand},
		{"exit codes word", row(1, cortex.RoleToolResult, "exit codes 12 are documented"), catCommand},
		{"bare timeout setting", logRow(1, "config: timeout=30s retries=3"), catToolTimeout},
		{"user typing a technical phrase", row(1, cortex.RoleUser, "I get permission denied when I run it"), catAuth},
		{"assistant prose", row(1, cortex.RoleAssistant, "The tests failed and the request timed out: permission denied"), ""},
		{"tool call arguments", row(1, cortex.RoleToolCall, "curl --fail https://x | grep 'timed out'"), ""},
		{"thinking", row(1, cortex.RoleThinking, "maybe the database is locked"), ""},
		{"context (AGENTS.md)", row(1, cortex.RoleContext, "If you see 'permission denied' or 'database is locked', stop."), ""},
		{"user phrase in tool output", row(1, cortex.RoleToolResult, "grep: that's not what i asked: going in circles"), catUnclear},
		{"user phrase from assistant", row(1, cortex.RoleAssistant, "You said \"that's not what I asked\"; sorry."), ""},
		{"unrelated wrong", row(1, cortex.RoleUser, "Why is the cart total still wrong?"), ""},
		{"transcript row with a tool but no role", cortex.EvidenceRow{ID: 1, Tool: cortex.ToolCodex, Message: "permission denied"}, ""},
	}
	for _, c := range cases {
		b := abuseBundle(c.row)
		f := Abuse().Derive(b)
		checkInvariants(t, Abuse(), b, f)
		if c.not == "" {
			if got := cats(f); !slices.Equal(got, []string{CategoryUnknown}) {
				t.Errorf("%s: got %v, want only unknown", c.name, got)
			}
		} else if mode(f, c.not) != nil {
			t.Errorf("%s: unexpected %s: %+v", c.name, c.not, f.FailureModes)
		}
	}
}

// Two abuse rules (tool output and the user's words) share test_failure:
// one finding whose confidence counts both rows.
func TestAbuseSharedCategoryMerges(t *testing.T) {
	b := abuseBundle(
		row(3, cortex.RoleToolResult, "--- FAIL: TestTotal (0.00s)"),
		row(5, cortex.RoleUser, "the test still fails"),
	)
	f := Abuse().Derive(b)
	checkInvariants(t, Abuse(), b, f)
	if got := cats(f); !slices.Equal(got, []string{catTestFailure}) {
		t.Fatalf("got %v", got)
	}
	m := f.FailureModes[0]
	if !slices.Equal(m.EvidenceIDs, []int64{3, 5}) || m.Confidence != ConfidenceMedium {
		t.Fatalf("got %+v", m)
	}
	if m.Why != `matched "--- fail:", "test still fails"` {
		t.Fatalf("Why = %q", m.Why)
	}
}
