// Package toolcall reads what one tool call did from the call alone: its
// class (an unexpected failure, a probe that found nothing, a sibling's
// cancellation, a failure shown only in its output…), the line of output
// that shows it, the operation it performed (for "the same operation later
// succeeded") and whether it only loaded a skill. It is pure: ingest
// derives these facts once and stores them with Version; the incident
// engine reads them back, and derives them itself only for calls stored
// under other rules.
package toolcall

import (
	"encoding/json"
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// Classes of a tool call's outcome. Only Failed (and, weaker,
// FailedInOutput) calls are failures of the agent's work: a probe that
// finds nothing is information, a call cancelled because a sibling failed
// is that sibling's failure, and a refused call is the user's verdict.
const (
	ClassOK             = "ok"
	ClassFailed         = "failed"            // an unexpected failure
	ClassProbe          = "expected_probe"    // a search or existence check that found nothing
	ClassSibling        = "sibling_cancelled" // cancelled because a parallel call failed
	ClassRejected       = "user_rejected"     // the user refused it
	ClassClarify        = "user_clarified"    // the user answered a question in words
	ClassFailedInOutput = "failed_in_output"  // exit 0, but the output shows a failure
	ClassCancelled      = "cancelled"         // cancelled otherwise (an interrupt)
	ClassUnknown        = "unknown"           // no outcome recorded
)

// Call is what the facts are read from: one tool call, its call and its
// result merged.
type Call struct {
	ToolName  string
	Status    string
	IsError   bool
	ExitCode  *int64
	Arguments string
	Output    string
	ErrorText string
}

// Facts is what one call shows by itself. The user's refusal of a call is
// not among them: it is the user's act, read with the session.
type Facts struct {
	// Class is one of the Class constants.
	Class string
	// Why is the line of output that shows a failure, probe or
	// cancellation ("" for a success).
	Why string
	// Op names the operation, for recovery (see Operation).
	Op string
	// LoadsSkill is set when the call only loads a skill (see LoadsSkill).
	LoadsSkill bool
}

// Read derives a call's facts.
func Read(c Call) Facts {
	class, why := Classify(c)
	return Facts{Class: class, Why: why, Op: Operation(c.ToolName, c.Arguments), LoadsSkill: LoadsSkill(c.ToolName, c.Arguments)}
}

// logicVersion is bumped when how the rules are applied changes (the
// patterns and word lists themselves are hashed into Version).
const logicVersion = 1

// Version identifies the rules stored facts were derived with: every
// pattern and word list of this package and the logic version. Facts of
// another version are derived again.
var Version = func() int {
	h := fnv.New32a()
	for _, re := range []*regexp.Regexp{probeText, siblingCancel, outputFailure, boilerplate, codexExit} {
		h.Write([]byte(re.String() + "\x00"))
	}
	for _, m := range []map[string]bool{shellTools, readTools, probePrograms, filterPrograms, readerCommands} {
		keys := make([]string, 0, len(m))
		for k, v := range m {
			keys = append(keys, k+"="+strconv.FormatBool(v))
		}
		slices.Sort(keys)
		h.Write([]byte(strings.Join(keys, ",") + "\x00"))
	}
	h.Write([]byte(strings.Join(failureLiterals, ",") + "\x00"))
	h.Write([]byte{logicVersion, maxOpArgs})
	return int(h.Sum32()&0x7fffffff) | 1 // never 0: 0 is "not derived"
}()

// LoadsSkill reports whether a call only loads a skill (the Skill tool, or
// a command printing a SKILL.md): not work the user could react to.
func LoadsSkill(tool, args string) bool {
	return tool == "Skill" || shellTools[tool] && strings.Contains(Command(args), "SKILL.md")
}

// Failure reports whether a class is a failure of the agent's work.
func Failure(class string) bool { return class == ClassFailed || class == ClassFailedInOutput }

// shellTools run a command line.
var shellTools = map[string]bool{"Bash": true, "exec_command": true, "shell": true, "shell_command": true,
	"local_shell": true, "run_shell_command": true, "container.exec": true, "write_stdin": false}

// IsShell reports whether a tool runs a command line.
func IsShell(tool string) bool { return shellTools[tool] }

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

// Command returns the command line of a shell call's arguments.
func Command(args string) string {
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

// Programs returns the programs of a command line's pipeline stages and
// && / ; chains (first word of each, with cd, env assignments, sudo and
// timeout skipped), in order.
func Programs(cmdline string) []string {
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

// maxOpArgs bounds the arguments an operation names verbatim: longer
// arguments are named by their hash (only the same call again is the same
// operation, and a hash says that as well in fewer bytes).
const maxOpArgs = 96

// Operation names what a call does, for recovery: the tool and, for a
// shell call, its last program and first argument ("git push", "npm run");
// for file tools the file; for any other tool its exact arguments (their
// hash when long).
func Operation(tool, args string) string {
	if shellTools[tool] {
		cmd := Command(args)
		progs := Programs(cmd)
		if len(progs) == 0 {
			return tool
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
					return tool + " " + last + " " + f[i+1]
				}
			}
		}
		return tool + " " + last
	}
	var a struct {
		Path string `json:"file_path"`
	}
	if json.Unmarshal([]byte(args), &a) == nil && a.Path != "" {
		return tool + " " + a.Path
	}
	// Any other tool (an MCP tool running code, a web fetch): only the
	// same call again is the same operation.
	if len(args) > maxOpArgs {
		h := fnv.New64a()
		h.Write([]byte(args))
		return tool + " #" + strconv.FormatUint(h.Sum64(), 16)
	}
	return tool + " " + args
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

// Classify decides one call's class and the output line that shows it
// (without the user's refusals, which the session's acts carry).
func Classify(c Call) (string, string) {
	text := codexBody(strings.TrimSpace(c.ErrorText))
	switch {
	case c.Status == cortex.CallCancelled:
		return ClassCancelled, ""
	case c.Status == cortex.CallPending || c.Status == cortex.CallUnknown && !c.IsError:
		if c.Status == cortex.CallUnknown && c.Output != "" {
			return maskedOrOK(c)
		}
		return ClassUnknown, ""
	case !c.IsError && c.Status != cortex.CallError:
		return maskedOrOK(c)
	}
	if strings.HasPrefix(text, "The user doesn't want to") || strings.Contains(text, "rejected by user") {
		return ClassRejected, ""
	}
	if interruptsOwnProcess(c) {
		return ClassOK, ""
	}
	if siblingCancel.MatchString(text) {
		return ClassSibling, firstLine(text, nil)
	}
	if probe(c, text) {
		return ClassProbe, firstLine(text, nil)
	}
	if l := firstLine(text, outputFailure); l != "" {
		return ClassFailed, l
	}
	return ClassFailed, firstLine(text, nil)
}

// probe reports whether a failed call is a search or existence check that
// found nothing: a read tool's "not found", a search command's exit 1
// with no output, a probing command's "not found" / "no pull requests
// found", or a version check.
func probe(c Call, text string) bool {
	if readTools[c.ToolName] {
		return probeText.MatchString(text)
	}
	if !shellTools[c.ToolName] {
		return false
	}
	cmd := Command(c.Arguments)
	progs := Programs(cmd)
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
func interruptsOwnProcess(c Call) bool {
	return c.ToolName == "write_stdin" && strings.Contains(c.Arguments, `"chars":"\u0003"`)
}

// maskedOrOK finds a failure printed by a shell call that succeeded.
func maskedOrOK(c Call) (string, string) {
	if !shellTools[c.ToolName] || c.Output == "" {
		return ClassOK, ""
	}
	progs := Programs(Command(c.Arguments))
	if len(progs) == 0 || readerCommands[progs[0]] && len(progs) == 1 || progs[0] == "git" && len(progs) == 1 {
		return ClassOK, ""
	}
	out := codexBody(c.Output)
	if !mayShowFailure(out) {
		return ClassOK, ""
	}
	if l := firstLine(out, outputFailure); l != "" {
		return ClassFailedInOutput, l
	}
	return ClassOK, ""
}
