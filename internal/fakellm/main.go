// Command fakellm is a fake Gemini CLI for tests of the llm package. It
// speaks the CLI's --output-format stream-json protocol and behaves as its
// mode asks: --fake-mode=MODE (an argument, since the provider passes a
// minimal environment) or else the FAKE_LLM_MODE variable, default "ok".
//
// Except in mode nodrain it first reads standard input to its end. Modes:
//
//	ok         two assistant deltas ("Prompt had N bytes" counts stdin), success
//	sleep      starts "sleep 60" (same process group, holding stdout), writes
//	           its pid to --fake-pidfile=PATH, then sleeps 60 s itself
//	fail       writes a line with a fake secret to stderr and exits 3
//	tooluse    asks for run_shell_command
//	writefile  writes its answer with write_file
//	big        1 MiB of assistant text in 4 KiB deltas with multibyte runes
//	huge       40 MiB of assistant text in 1 MiB deltas, then a result
//	           repeating it as its response (a 40 MiB line)
//	nodrain    reports success at once without reading stdin
//	args       answers with a JSON report of its argv, environment names,
//	           home contents and settings.json
//	badjson    writes a line that is not JSON
//
// Tests build it with "go build -o DIR/gemini ./internal/fakellm".
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Fixed texts the tests compare against.
const (
	okHeading    = "# Skill Improvement Assessment\n"
	writtenText  = "# Skill Improvement Assessment\n\nWritten with write_file.\n"
	failStderr   = "boom: token sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA leaked\n"
	bigTotal     = 1 << 20
	bigChunkSize = 4 << 10
)

var out = bufio.NewWriter(os.Stdout)

func main() {
	mode, pidfile, model := os.Getenv("FAKE_LLM_MODE"), "", ""
	args := os.Args[1:]
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--fake-mode="):
			mode = strings.TrimPrefix(a, "--fake-mode=")
		case strings.HasPrefix(a, "--fake-pidfile="):
			pidfile = strings.TrimPrefix(a, "--fake-pidfile=")
		case a == "--model" && i+1 < len(args):
			model = args[i+1]
		}
	}
	if mode == "" {
		mode = "ok"
	}
	var n int64
	if mode != "nodrain" {
		var err error
		if n, err = io.Copy(io.Discard, os.Stdin); err != nil {
			fatal("read stdin: %v", err)
		}
	}
	emit(map[string]any{"type": "init", "session_id": "fake-session", "model": model})
	switch mode {
	case "ok", "nodrain":
		emit(map[string]any{"type": "message", "role": "user", "content": "(prompt)"})
		assistant(okHeading)
		assistant(fmt.Sprintf("Prompt had %d bytes\n", n))
		result()
	case "sleep":
		sleep(pidfile)
	case "fail":
		out.Flush()
		os.Stderr.WriteString(failStderr)
		os.Exit(3)
	case "tooluse":
		assistant("Let me look at the files.\n")
		emit(map[string]any{"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t1",
			"parameters": map[string]any{"command": "ls -la"}})
		emit(map[string]any{"type": "tool_result", "tool_id": "t1", "status": "success", "output": "x"})
		result()
	case "writefile":
		emit(map[string]any{"type": "tool_use", "tool_name": "write_file", "tool_id": "t1",
			"parameters": map[string]any{"file_path": "plans/assessment.md", "content": writtenText}})
		emit(map[string]any{"type": "tool_result", "tool_id": "t1", "status": "success"})
		assistant("I wrote the assessment to plans/assessment.md.\n")
		result()
	case "big":
		chunk := bigChunk()
		for range bigTotal / bigChunkSize {
			assistant(chunk)
		}
		result()
	case "huge":
		chunk := strings.Repeat(bigChunk(), (1<<20)/bigChunkSize)
		for range 40 {
			assistant(chunk)
		}
		emit(map[string]any{"type": "result", "status": "success", "response": strings.Repeat(chunk, 40)})
	case "args":
		assistant(report(n))
		result()
	case "badjson":
		out.WriteString("Loaded cached credentials.\n")
	default:
		fatal("unknown mode %q", mode)
	}
	if err := out.Flush(); err != nil {
		fatal("write stdout: %v", err)
	}
}

func emit(ev map[string]any) {
	ev["timestamp"] = time.Now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(ev)
	if err != nil {
		fatal("encode: %v", err)
	}
	out.Write(b)
	out.WriteByte('\n')
}

func assistant(text string) {
	emit(map[string]any{"type": "message", "role": "assistant", "content": text, "delta": true})
}

func result() {
	emit(map[string]any{"type": "result", "status": "success",
		"stats": map[string]any{"total_tokens": 10, "input_tokens": 7, "output_tokens": 3, "tool_calls": 0}})
}

// bigChunk returns bigChunkSize bytes of valid UTF-8 with two- and
// four-byte runes.
func bigChunk() string {
	var sb strings.Builder
	for sb.Len()+len("Café 🙂 ") <= bigChunkSize {
		sb.WriteString("Café 🙂 ")
	}
	for sb.Len() < bigChunkSize {
		sb.WriteByte('.')
	}
	return sb.String()
}

// sleep starts a grandchild that holds stdout, records its pid and sleeps.
func sleep(pidfile string) {
	out.Flush()
	c := exec.Command("sleep", "60")
	c.Stdout = os.Stdout
	if err := c.Start(); err != nil {
		fatal("start sleep: %v", err)
	}
	if pidfile != "" {
		tmp := pidfile + ".tmp"
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(c.Process.Pid)), 0o600); err != nil {
			fatal("write pidfile: %v", err)
		}
		if err := os.Rename(tmp, pidfile); err != nil {
			fatal("write pidfile: %v", err)
		}
	}
	time.Sleep(60 * time.Second)
}

// report describes how the fake was started, as JSON.
func report(stdin int64) string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		env = append(env, k)
	}
	sort.Strings(env)
	home := os.Getenv("HOME")
	files := map[string]string{}
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == home {
			return nil
		}
		rel, _ := filepath.Rel(home, p)
		if fi, err := d.Info(); err == nil {
			files[filepath.ToSlash(rel)] = fmt.Sprintf("%04o", fi.Mode().Perm())
		}
		return nil
	})
	var settings any
	if b, err := os.ReadFile(filepath.Join(home, ".gemini", "settings.json")); err == nil {
		json.Unmarshal(b, &settings)
	}
	wd, _ := os.Getwd()
	entries, _ := os.ReadDir(wd)
	b, err := json.Marshal(map[string]any{
		"argv":        os.Args[1:],
		"env":         env,
		"home":        home,
		"files":       files,
		"settings":    settings,
		"cwd":         wd,
		"cwd_entries": len(entries),
		"stdin_bytes": stdin,
	})
	if err != nil {
		fatal("encode report: %v", err)
	}
	return string(b)
}

func fatal(format string, args ...any) {
	out.Flush()
	fmt.Fprintf(os.Stderr, "fakellm: "+format+"\n", args...)
	os.Exit(2)
}
