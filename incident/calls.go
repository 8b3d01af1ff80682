package incident

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
)

// Classes of a tool call's outcome. Only failed (and, weaker,
// failedInOutput) calls are failures of the agent's work: a probe that
// finds nothing is information, a call cancelled because a sibling failed
// is that sibling's failure, and a refused call is the user's verdict.
const (
	classOK             = "ok"
	classFailed         = "failed"            // an unexpected failure
	classProbe          = "expected_probe"    // a search or existence check that found nothing
	classSibling        = "sibling_cancelled" // cancelled because a parallel call failed
	classRejected       = "user_rejected"     // the user refused it
	classClarify        = "user_clarified"    // the user answered a question in words
	classFailedInOutput = "failed_in_output"  // exit 0, but the output shows a failure
	classCancelled      = "cancelled"         // cancelled otherwise (an interrupt)
	classUnknown        = "unknown"           // no outcome recorded
)

// tcall is a tool call of a session with its classified outcome.
type tcall struct {
	store.SessionCall
	Class string
	// Cause is the failed call that cancelled a sibling (its event id).
	Cause int64
	// Recovered is set when the same operation later succeeded in the
	// same thread.
	Recovered bool
	// Op names the operation for recovery ("Bash git push", "Edit a.go").
	Op string
	// Why is the line of output that shows the failure.
	Why string
}

// loadsSkill reports whether a call only loads a skill (the Skill tool, or
// a command printing a SKILL.md): not work the user could react to.
func loadsSkill(c tcall) bool {
	return c.ToolName == "Skill" || shellTools[c.ToolName] && strings.Contains(command(c.Arguments), "SKILL.md")
}

// failure reports whether the call is a failure of the agent's work.
func (c tcall) failure() bool { return c.Class == classFailed || c.Class == classFailedInOutput }

// shellTools run a command line.
var shellTools = map[string]bool{"Bash": true, "exec_command": true, "shell": true, "shell_command": true,
	"local_shell": true, "run_shell_command": true, "container.exec": true, "write_stdin": false}

// readTools read files or search them: their "not found" is a probe.
var readTools = map[string]bool{"Read": true, "Grep": true, "Glob": true, "LS": true, "read_file": true,
	"search_file_content": true, "list_directory": true, "glob": true, "view_image": true}

// probePrograms are commands that search or test for existence: a non-zero
// exit with nothing (or "not found") printed is their answer, not a failure.
var probePrograms = map[string]bool{"grep": true, "rg": true, "egrep": true, "fgrep": true, "ag": true, "ack": true,
	"test": true, "[": true, "[[": true, "which": true, "command": true, "type": true, "ls": true, "stat": true,
	"find": true, "diff": true, "cmp": true, "file": true, "pgrep": true, "lsof": true, "git": false}

// probeText is output that answers a probe negatively.
var probeText = regexp.MustCompile(`(?i)no such file or directory|not found|does not exist|no pull requests? found|cannot access|no such|EISDIR|is a directory|path does not exist|nothing to commit`)

// siblingCancel is Claude's error for a call cancelled because a parallel
// call failed: "Cancelled: parallel tool call Bash(gh pr view …) errored".
var siblingCancel = regexp.MustCompile(`Cancelled: parallel tool call (\w+)\((.*?)(?:…|\.\.\.)?\) errored`)

// outputFailure is a failure printed by a command that still exited 0 (a
// pipe into head, a script that swallows its exit status).
var outputFailure = regexp.MustCompile(`(?m)(ERR_[A-Z_]{4,}|Traceback \(most recent call last\)|ModuleNotFoundError|` +
	`command not found|Timeout \d+ms exceeded|\(HTTP [45]\d\d\)|npm ERR!|^fatal: |^panic: |Error: Cannot find module|` +
	`^Error: |^error: |Permission denied|Segmentation fault|Killed$)`)

// failureLiterals are the literal parts of outputFailure: one of them is
// in any text it matches (a test asserts it), so a text with none is not
// matched — most outputs, found with a few substring searches instead of
// the expression.
var failureLiterals = []string{"ERR_", "Traceback (most recent call last)", "ModuleNotFoundError", "command not found",
	"Timeout ", "(HTTP ", "npm ERR!", "fatal: ", "panic: ", "Error: ", "error: ", "Permission denied",
	"Segmentation fault", "Killed"}

// mayShowFailure reports whether out holds one of failureLiterals.
func mayShowFailure(out string) bool {
	for _, l := range failureLiterals {
		if strings.Contains(out, l) {
			return true
		}
	}
	return false
}

// filterPrograms only reshape what the command before them printed.
var filterPrograms = map[string]bool{"head": true, "tail": true, "grep": true, "rg": true, "sed": true, "awk": true,
	"jq": true, "sort": true, "uniq": true, "wc": true, "cat": true, "tee": true, "less": true, "cut": true, "tr": true,
	"column": true, "echo": true, "printf": true, "true": true, "sleep": true}

// readerCommands print files or history: failures inside what they print
// are content, not outcomes.
var readerCommands = map[string]bool{"cat": true, "sed": true, "head": true, "tail": true, "nl": true, "less": true,
	"more": true, "bat": true, "grep": true, "rg": true, "jq": true, "awk": true, "diff": true, "wc": true, "sort": true}

// command returns the command line of a shell call's arguments.
func command(args string) string {
	if args == "" {
		return ""
	}
	p := argParsers.Get()
	defer argParsers.Put(p)
	v, err := p.Parse(args)
	if err != nil {
		return ""
	}
	for _, key := range []string{"cmd", "command"} {
		f := v.Get(key)
		if f == nil {
			continue
		}
		switch f.Type() {
		case fastjson.TypeString:
			if s := string(f.GetStringBytes()); s != "" {
				return s
			}
		case fastjson.TypeArray:
			var parts []string
			for _, e := range f.GetArray() {
				if e.Type() != fastjson.TypeString {
					parts = nil
					break
				}
				parts = append(parts, string(e.GetStringBytes()))
			}
			if len(parts) >= 3 && (parts[1] == "-lc" || parts[1] == "-c") {
				return parts[len(parts)-1]
			}
			if len(parts) > 0 {
				return strings.Join(parts, " ")
			}
		}
	}
	return ""
}

// argParsers parse tool-call arguments (fastjson parsers are reused, one
// per goroutine at a time).
var argParsers fastjson.ParserPool

// segments splits a command line into pipeline stages and chained
// commands (at |, ||, &&, ; and line breaks outside quotes).
func segments(cmdline string) []string {
	var out []string
	start, quote := 0, byte(0)
	for i := 0; i < len(cmdline); i++ {
		c := cmdline[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(cmdline) {
				i++
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '\\' && i+1 < len(cmdline):
			i++
		case c == '|' || c == ';' || c == '\n' || c == '&' && i+1 < len(cmdline) && cmdline[i+1] == '&':
			out = append(out, cmdline[start:i])
			if i+1 < len(cmdline) && (cmdline[i+1] == '|' || cmdline[i+1] == '&') {
				i++
			}
			start = i + 1
		}
	}
	return append(out, cmdline[start:])
}

// programs returns the programs of a command line's pipeline stages and
// && / ; chains (first word of each, with cd, env assignments, sudo and
// timeout skipped), in order.
func programs(cmdline string) []string {
	var out []string
	for _, seg := range segments(cmdline) {
		fields := strings.Fields(seg)
		for len(fields) > 0 {
			f := fields[0]
			if strings.Contains(f, "=") && !strings.HasPrefix(f, "=") || f == "sudo" || f == "env" || f == "time" ||
				f == "timeout" || f == "nohup" || f == "(" || f == "{" || strings.HasPrefix(f, "-") || isNumber(f) {
				fields = fields[1:]
				continue
			}
			break
		}
		if len(fields) == 0 {
			continue
		}
		p := strings.TrimLeft(fields[0], "({")
		if p == "cd" || p == "" {
			continue
		}
		if i := strings.LastIndexByte(p, '/'); i >= 0 && i < len(p)-1 {
			p = p[i+1:]
		}
		out = append(out, p)
	}
	return out
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// operation names what a call does, for recovery: the tool and, for a
// shell call, its last program and first argument ("git push", "npm run");
// for file tools the file; for any other tool its exact arguments.
func operation(c store.SessionCall) string {
	if shellTools[c.ToolName] {
		cmd := command(c.Arguments)
		progs := programs(cmd)
		if len(progs) == 0 {
			return c.ToolName
		}
		// The program that did the work: the last one that is not a
		// filter of its output (| head, | grep …) or an echo.
		last := progs[len(progs)-1]
		for i := len(progs) - 1; i >= 0; i-- {
			if !filterPrograms[progs[i]] {
				last = progs[i]
				break
			}
		}
		for _, seg := range segments(cmd) {
			f := strings.Fields(seg)
			for i, w := range f {
				if strings.HasSuffix(w, last) && i+1 < len(f) && !strings.HasPrefix(f[i+1], "-") {
					return c.ToolName + " " + last + " " + f[i+1]
				}
			}
		}
		return c.ToolName + " " + last
	}
	var a struct {
		Path string `json:"file_path"`
	}
	if json.Unmarshal([]byte(c.Arguments), &a) == nil && a.Path != "" {
		return c.ToolName + " " + a.Path
	}
	// Any other tool (an MCP tool running code, a web fetch): only the
	// same call again is the same operation.
	return c.ToolName + " " + c.Arguments
}

// codexExit is the head of the error text Cortex stores for a failed
// Codex command: "exit N", then ": " and what the command printed.
var codexExit = regexp.MustCompile(`^exit -?\d+(?::|$)`)

// codexBody drops Codex's exec boilerplate ("Chunk ID: … Output:", or the
// "exit N: " Cortex stores in its place) from a result text, keeping what
// the command printed.
func codexBody(text string) string {
	if m := codexExit.FindStringIndex(text); m != nil {
		return strings.TrimSpace(text[m[1]:])
	}
	if i := strings.Index(text, "\nOutput:"); i >= 0 && strings.Contains(text[:i], "Process exited with code") {
		return strings.TrimSpace(text[i+len("\nOutput:"):])
	}
	if strings.HasPrefix(text, "Exit code") || strings.HasPrefix(text, "Command:") {
		if i := strings.Index(text, "\nOutput:"); i >= 0 {
			return strings.TrimSpace(text[i+len("\nOutput:"):])
		}
	}
	return text
}

// boilerplate are the lines agents wrap command output in.
var boilerplate = regexp.MustCompile(`^(?:Exit code -?\d+|Chunk ID: \S+|Wall time: .*|Process exited with code -?\d+|Original token count: \d+|Output:|Command: .*|\[rerun: \w+\])$`)

// firstLine returns the first non-empty line of s matching re (or the
// first non-empty line), cut to 200 bytes.
func firstLine(s string, re *regexp.Regexp) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || boilerplate.MatchString(l) {
			continue
		}
		if re == nil || re.MatchString(l) {
			return cortex.CutUTF8(l, 200)
		}
	}
	return ""
}

// classifyCalls sets the class, operation and recovery of every call: acts
// are the session's user events (rejections and clarifications name the
// calls they refused). With need set, only the calls made at a time it
// needs are classified up front; another is classified only when a needed
// one's cause or recovery asks for it, and otherwise keeps an empty class.
func classifyCalls(calls []store.SessionCall, acts []act, need func(time.Time) bool) []tcall {
	refused := map[string]string{}
	for _, a := range acts {
		if a.CallID != "" && (a.Kind == cortex.UserRejection || a.Kind == cortex.UserClarify) {
			refused[a.CallID] = a.Kind
		}
	}
	out := make([]tcall, len(calls))
	hasOp, done := make([]bool, len(calls)), make([]bool, len(calls))
	// op names call i's operation, ensure classifies it (each once).
	op := func(i int) string {
		if !hasOp[i] {
			out[i].Op, hasOp[i] = operation(calls[i]), true
		}
		return out[i].Op
	}
	ensure := func(i int) *tcall {
		if !done[i] {
			op(i)
			out[i].Class, out[i].Why = classify(calls[i], refused[calls[i].CallID])
			done[i] = true
		}
		return &out[i]
	}
	for i, c := range calls {
		out[i].SessionCall = c
		if need == nil || need(c.Timestamp) {
			ensure(i)
		}
	}
	// A sibling cancellation names its cause: the failed call of the same
	// tool just before it (Claude runs parallel calls of one message).
	for i := range out {
		if out[i].Class != classSibling {
			continue
		}
		for j := i - 1; j >= 0 && out[i].Timestamp.Sub(out[j].Timestamp) <= time.Minute; j-- {
			if ensure(j).failure() && out[j].Thread == out[i].Thread {
				out[i].Cause = out[j].ID
				break
			}
		}
	}
	// Recovered: the same operation succeeded later in the same thread.
	for i := range out {
		if !out[i].failure() {
			continue
		}
		for j := i + 1; j < len(out); j++ {
			if out[j].Thread == out[i].Thread && op(j) == out[i].Op && ensure(j).Class == classOK {
				out[i].Recovered = true
				break
			}
		}
	}
	return out
}

// classify decides one call's class and the output line that shows it.
func classify(c store.SessionCall, refused string) (string, string) {
	switch refused {
	case cortex.UserRejection:
		return classRejected, ""
	case cortex.UserClarify:
		return classClarify, ""
	}
	text := codexBody(strings.TrimSpace(c.ErrorText))
	switch {
	case c.Status == cortex.CallCancelled:
		return classCancelled, ""
	case c.Status == cortex.CallPending || c.Status == cortex.CallUnknown && !c.IsError:
		if c.Status == cortex.CallUnknown && c.Output != "" {
			return maskedOrOK(c)
		}
		return classUnknown, ""
	case !c.IsError && c.Status != cortex.CallError:
		return maskedOrOK(c)
	}
	if strings.HasPrefix(text, "The user doesn't want to") || strings.Contains(text, "rejected by user") {
		return classRejected, ""
	}
	if interruptsOwnProcess(c) {
		return classOK, ""
	}
	if siblingCancel.MatchString(text) {
		return classSibling, firstLine(text, nil)
	}
	if probe(c, text) {
		return classProbe, firstLine(text, nil)
	}
	if l := firstLine(text, outputFailure); l != "" {
		return classFailed, l
	}
	return classFailed, firstLine(text, nil)
}

// probe reports whether a failed call is a search or existence check that
// found nothing: a read tool's "not found", a search command's exit 1
// with no output, a probing command's "not found" / "no pull requests
// found", or a version check.
func probe(c store.SessionCall, text string) bool {
	if readTools[c.ToolName] {
		return probeText.MatchString(text)
	}
	if !shellTools[c.ToolName] {
		return false
	}
	cmd := command(c.Arguments)
	progs := programs(cmd)
	if len(progs) == 0 {
		return false
	}
	last := progs[len(progs)-1]
	body := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(text, "Exit code 1"), "Exit code 2"))
	exit := int64(-1)
	if c.ExitCode != nil {
		exit = *c.ExitCode
	} else if strings.HasPrefix(text, "Exit code ") {
		exit = 1
	}
	search := last == "grep" || last == "rg" || last == "egrep" || last == "fgrep" || last == "ag" || last == "ack"
	switch {
	case search && exit == 1 && body == "":
		return true // no match
	case search && probeText.MatchString(body):
		return true // searched a path that does not exist
	case last == "ls" || last == "test" || last == "[" || last == "[[" || last == "stat" || last == "which" ||
		last == "command" || last == "type" || last == "file" || last == "pgrep":
		return true // does it exist?
	case strings.Contains(cmd, "--version") || strings.Contains(cmd, "command -v ") || strings.HasPrefix(cmd, "which "):
		return true // is it installed?
	case probePrograms[last] && (body == "" || probeText.MatchString(body)):
		return true
	case strings.Contains(cmd, "gh pr view") || strings.Contains(cmd, "gh pr list"):
		return probeText.MatchString(body)
	case last == "git" && probeText.MatchString(body) && (strings.Contains(cmd, "rev-parse") || strings.Contains(cmd, "show-ref") ||
		strings.Contains(cmd, "ls-remote") || strings.Contains(cmd, "config --get")):
		return true
	}
	return false
}

// interruptsOwnProcess reports whether a call sends Ctrl-C to a process
// the agent started (Codex write_stdin "\u0003"): its exit status is the
// agent stopping its own dev server, not a failure.
func interruptsOwnProcess(c store.SessionCall) bool {
	return c.ToolName == "write_stdin" && strings.Contains(c.Arguments, `"chars":"\u0003"`)
}

// maskedOrOK finds a failure printed by a shell call that succeeded.
func maskedOrOK(c store.SessionCall) (string, string) {
	if !shellTools[c.ToolName] || c.Output == "" {
		return classOK, ""
	}
	progs := programs(command(c.Arguments))
	if len(progs) == 0 || readerCommands[progs[0]] && len(progs) == 1 || progs[0] == "git" && len(progs) == 1 {
		return classOK, ""
	}
	out := codexBody(c.Output)
	if !mayShowFailure(out) {
		return classOK, ""
	}
	if l := firstLine(out, outputFailure); l != "" {
		return classFailedInOutput, l
	}
	return classOK, ""
}
