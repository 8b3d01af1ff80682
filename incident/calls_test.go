package incident

import (
	"encoding/json"
	"regexp/syntax"
	"slices"
	"strings"
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

func codexShell(cmd string) string {
	b, _ := json.Marshal(map[string]string{"cmd": cmd})
	return string(b)
}

func exit(n int64) *int64 { return &n }

// Calls and outcomes from the real corpus (agent, session prefix) and the
// class each must get.
func TestClassifyRealCalls(t *testing.T) {
	cases := []struct {
		origin string
		call   sqlite.SessionCall
		want   string
	}{
		{"codex 019eef3d: no branch is gone", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "exec_command", Status: cortex.CallError,
			IsError: true, ExitCode: exit(1), ErrorText: "Chunk ID: 94c2d6\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 0\nOutput:\n"},
			Arguments: codexShell(`git branch -vv | rg '\[gone\]'`)}, classProbe},
		{"codex 019eeca6: a pipe into rg with | inside the pattern", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "exec_command",
			Status: cortex.CallError, IsError: true, ExitCode: exit(1), ErrorText: "Chunk ID: dfde0f\nWall time: 0.3269 seconds\nProcess exited with code 1\nOriginal token count: 0\nOutput:\n"},
			Arguments: codexShell(`curl -L --silent https://docs.entire.io/api-reference/openapi.json | rg -n "drift|trail|stale|finding" -i -C 2`)}, classProbe},
		{"codex 019ed99c: rg on a path that does not exist", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "exec_command",
			Status: cortex.CallError, IsError: true, ExitCode: exit(2), ErrorText: "Chunk ID: 1b998d\nWall time: 0.0001 seconds\nProcess exited with code 2\nOriginal token count: 860\nOutput:\nrg: apps/cli/src/commands/trace: No such file or directory (os error 2)"},
			Arguments: codexShell(`rg -n -- "--trace|trace input" apps/cli/src/commands/grade apps/cli/src/commands/trace`)}, classProbe},
		// The same two as Cortex stores a failed Codex command: "exit N"
		// and what it printed.
		{"codex 019eeca6, as stored: exit 1, no output", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "exec_command",
			Status: cortex.CallError, IsError: true, ExitCode: exit(1), ErrorText: "exit 1"},
			Arguments: codexShell(`curl -L --silent https://docs.entire.io/api-reference/openapi.json | rg -n "drift|trail|stale|finding" -i -C 2`)}, classProbe},
		{"codex 019ed99c, as stored: exit 2 and rg's message", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "exec_command",
			Status: cortex.CallError, IsError: true, ExitCode: exit(2), ErrorText: "exit 2: rg: apps/cli/src/commands/trace: No such file or directory (os error 2)"},
			Arguments: codexShell(`rg -n -- "--trace|trace input" apps/cli/src/commands/grade apps/cli/src/commands/trace`)}, classProbe},
		{"claude a88641f6: no PR yet", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "Bash", Status: cortex.CallError, IsError: true,
			ErrorText: `Exit code 1
no pull requests found for branch "alisha/commit"`}, Arguments: shell("gh pr view --json number,isDraft,state 2>&1")}, classProbe},
		{"claude a7da6a22: pytest not installed", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "Bash", Status: cortex.CallError, IsError: true,
			ErrorText: "Exit code 127\n/bin/bash: line 1: pytest: command not found"}, Arguments: shell("pytest")}, classFailed},
		{"claude 0953ba2a: the skill's search needs a remote", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "Bash", Status: cortex.CallError,
			IsError: true, ErrorText: "Exit code 1\ncould not find 'origin' remote: remote not found\n[rerun: b2]"},
			Arguments: shell(`entire search "explain skill purpose intent source code transcript" --json`)}, classFailed},
		{"claude 3b5a9bec: zsh globbing in the skill's discovery snippet", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "Bash",
			Status: cortex.CallError, IsError: true, ErrorText: "Exit code 1\n(eval):2: no matches found: /Users/goose-guest/Documents/work/planetfall-seed-signalkit/.claude/skills/*/SKILL.md"},
			Arguments: shell("d=$PWD; while :; do\n  grep -Hm1 '^description:' \"$d\"/.claude/skills/*/SKILL.md 2>/dev/null\n  [ -e \"$d/.git\" ] || [ \"$d\" = / ] && break\n  d=$(dirname \"$d\")\ndone")}, classFailed},
		{"claude a88641f6: cancelled because its sibling failed", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "Bash", Status: cortex.CallError,
			IsError: true, ErrorText: "<tool_use_error>Cancelled: parallel tool call Bash(gh pr view --json number,isDraft,state 2…) errored</tool_use_error>"},
			Arguments: shell("git log -1 --format=%s")}, classSibling},
		{"claude d43002f0: a module error behind `| head`", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "Bash", Status: cortex.CallSuccess},
			Output:    "tmp@ /private/tmp\n└── (empty)\n\nnode:internal/modules/package_json_reader:266\n  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);",
			Arguments: shell("cd /tmp && npm ls playwright 2>/dev/null; NODE_PATH=$(npm root -g) node /tmp/l2-verify.mjs 2>&1 | head -60")}, classFailedInOutput},
		{"claude 4e46a154: HTTP 404 from the skill's reply script", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "Bash", Status: cortex.CallSuccess},
			Output:    `{"message":"Parent comment not found","documentation_url":"https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment","status":"404"}gh: Parent comment not found (HTTP 404)`,
			Arguments: shell(`cd /Users/alisha/.marvin/worktrees/skills/search-skills && gh api repos/o/r/pulls/1/comments -f body=x`)}, classFailedInOutput},
		{"codex 019efedf: a file printed with sed is content, not an outcome", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "exec_command",
			Status: cortex.CallSuccess, ExitCode: exit(0)}, Output: "Chunk ID: aa444d\nWall time: 0.0050 seconds\nProcess exited with code 0\nOriginal token count: 292\nOutput:\nError: Cannot find module x\n",
			Arguments: codexShell("sed -n '90,130p' packages/core/src/evaluation/graders/prompt-resolution.ts")}, classOK},
		{"codex 019ea8fa: Ctrl-C to its own dev server", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "write_stdin", Status: cortex.CallError,
			IsError: true, ExitCode: exit(1), ErrorText: "Chunk ID: 6c95c0\nWall time: 0.0000 seconds\nProcess exited with code 1\nOriginal token count: 1\nOutput:\n^C"},
			Arguments: `{"session_id":23234,"chars":"\u0003","yield_time_ms":1000,"max_output_tokens":12000}`}, classOK},
		{"claude fe5e1c67: Read of a directory", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "Read", Status: cortex.CallError, IsError: true,
			ErrorText: "EISDIR: illegal operation on a directory, read"}, Arguments: `{"file_path":"/path/to/Demo/todo-app/src/components"}`}, classProbe},
		{"gemini 320099a3: a refused command", sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "run_shell_command", Status: cortex.CallError,
			IsError: true, ErrorText: "Command rejected because it could not be parsed safely"}, Arguments: shell("echo hello")}, classFailed},
	}
	for _, c := range cases {
		got, _ := classify(c.call, "")
		if got != c.want {
			t.Errorf("%s: class %s, want %s", c.origin, got, c.want)
		}
	}
	// A call the user refused is their act, whatever its text.
	if got, _ := classify(sqlite.SessionCall{ToolCall: sqlite.ToolCall{ToolName: "Bash", Status: cortex.CallError, IsError: true}}, cortex.UserRejection); got != classRejected {
		t.Errorf("refused call: %s", got)
	}
}

func TestSegmentsAndPrograms(t *testing.T) {
	cases := []struct {
		cmd  string
		want []string
	}{
		{`git branch -vv | rg '\[gone\]'`, []string{"git", "rg"}},
		{`rg -n "a|b|c" docs && sed -n '1,20p' x | head -5`, []string{"rg", "sed", "head"}},
		{`cd /tmp && FOO=1 sudo timeout 5 ./run.sh; echo done`, []string{"run.sh", "echo"}},
		{"a\nb || c", []string{"a", "b", "c"}},
		{`echo "x; y" | wc -l`, []string{"echo", "wc"}},
	}
	for _, c := range cases {
		if got := programs(c.cmd); !slices.Equal(got, c.want) {
			t.Errorf("programs(%q) = %v, want %v", c.cmd, got, c.want)
		}
	}
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
	got := classifyCalls(calls, []act{{Kind: cortex.UserRejection, CallID: "toolu_r"}}, nil)
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

// Every alternative of outputFailure holds one of failureLiterals, so the
// substring prefilter never hides a match.
func TestFailureLiteralsCoverOutputFailure(t *testing.T) {
	re, err := syntax.Parse(outputFailure.String(), syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	for re.Op == syntax.OpCapture || re.Op == syntax.OpConcat && len(re.Sub) == 1 {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpAlternate {
		t.Fatalf("outputFailure is not an alternation: %v", re.Op)
	}
	for _, alt := range re.Sub {
		lit := ""
		for _, part := range append([]*syntax.Regexp{alt}, alt.Sub...) {
			if part.Op == syntax.OpLiteral {
				lit += string(part.Rune)
			}
		}
		ok := false
		for _, l := range failureLiterals {
			ok = ok || strings.Contains(lit, l)
		}
		if !ok {
			t.Errorf("alternative %v (literal %q) holds no failure literal", alt, lit)
		}
	}
	for _, out := range []string{"npm ERR! code E404", "fatal: not a git repository", "Error [ERR_MODULE_NOT_FOUND]: x",
		"page.goto: Timeout 30000ms exceeded.", "gh: Not Found (HTTP 404)", "zsh: command not found: jq"} {
		if !outputFailure.MatchString(out) || !mayShowFailure(out) {
			t.Errorf("%q: regexp %v, prefilter %v", out, outputFailure.MatchString(out), mayShowFailure(out))
		}
	}
}
