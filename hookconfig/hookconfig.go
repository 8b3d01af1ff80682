// Package hookconfig is the hook configuration inventory collector: it reads
// the agents' configuration files and lists the hooks they configure
// (evidence kind cortex.EvidenceConfig, "config_inventory") and the Codex
// hook trust state (cortex.EvidenceTrust, "trusted_hash_state").
//
// A configured hook is not proof that it ran. Every row carries Status
// cortex.HookConfigured and no session, log id or timestamp: the caller adds
// the collection time.
//
// # Files
//
//   - Claude: ~/.claude/settings.json, ~/.claude/settings.local.json and the
//     same two files under each project (kind claude_settings).
//   - Codex: ~/.codex/hooks.json and <project>/.codex/hooks.json (kind
//     codex_hooks); ~/.codex/config.toml and <project>/.codex/config.toml
//     (kind codex_config: only its [hooks.state] table and, for context, its
//     [features] flags are read).
//   - Gemini: ~/.gemini/settings.json and <project>/.gemini/settings.json
//     (kind gemini_settings).
//
// # Rows
//
// One Hook per configured hook entry ({"hooks":{Event:[{matcher, hooks:[…]}]}}):
//
//   - HookEvent: the event key (SessionStart, PreToolUse, BeforeTool, …).
//   - HookName: "<Event>" when the group's matcher is absent, null or "",
//     else "<Event>:<matcher>" — the form Claude writes at runtime
//     (attachment hookName, e.g. "PostToolUse:Bash"). Runtime names carry the
//     tool or source that fired, so they equal config names only for literal
//     matchers; "*" or a regex matcher must be matched by the caller.
//   - Command: the command string, or an argv array joined by single spaces
//     (Meta["command_argv"] = "true"), bounded to MaxCommandBytes.
//   - HookSource: see below. Status: cortex.HookConfigured. EvidenceKind:
//     cortex.EvidenceConfig. Index: a running 0-based index of the rows of
//     one file, in file order.
//   - Meta: "matcher" (the raw matcher, kept even when "" and absent when
//     the matcher is absent or null), "type", "timeout" (from "timeout" or
//     else "timeoutSec", as written), "name" (Gemini), "position"
//     ("<group index>.<hook index>" in the event's list: two hooks under the
//     same event and matcher stay distinct), "config_path" (the file), and
//     when they apply "enabled" = "false" with "disabled_by",
//     "command_argv", "command_truncated" and "command_bytes".
//
// One Hook per key of Codex config.toml [hooks.state], with HookEvent
// "hook_trust_state" (EventTrustState), HookName = the key, TrustedHash = the
// key's string value or its table's "trusted_hash" (else "hash"), and
// EvidenceKind cortex.EvidenceTrust. A table's boolean "enabled" is kept in
// Meta["enabled"]. When the key has Codex's form
// "<hooks file>:<snake_case event>:<group>:<hook>", Meta["hook_config_path"],
// Meta["hook_event_key"] and Meta["position"] ("<group>.<hook>", the same
// form as the hooks.json rows) let a caller join trust rows to the hooks they
// trust. [features] codex_hooks and [features] hooks (its newer name) are
// copied to Meta["codex_hooks_feature"] and Meta["hooks_feature"] on every
// row of that file.
//
// # HookSource
//
// HookSource is "<tool>:<scope>:<file name>", with tool claude, codex or
// gemini, scope user or project, and the file's base name; trust rows append
// "[hooks.state]". Examples: "claude:user:settings.json",
// "claude:project:settings.local.json", "codex:user:hooks.json",
// "codex:project:hooks.json", "codex:user:config.toml[hooks.state]",
// "gemini:user:settings.json". The project folder itself is in
// Hook.Source.Project and the file in Meta["config_path"].
//
// # Disabled hooks
//
// Hooks of a file that turns hooks off are still listed (they are
// configured), each with Meta["enabled"] = "false" and Meta["disabled_by"]
// naming the switch: Claude "disableAllHooks": true; Gemini
// "hooks.enabled": false, "hooksConfig.enabled": false or
// "tools.enableHooks": false. A Gemini hook whose name or command is listed
// in "hooks.disabled" or "hooksConfig.disabled" gets the same marks. The Gemini keys "enabled", "disabled" and "notifications" of
// the hooks object are settings, not events.
//
// # Problems
//
// Nothing is dropped silently. A file that cannot be read or parsed (invalid
// JSON or TOML, with line and column; a top level or "hooks" value of the
// wrong type) yields no rows and an error. A bad entry inside a good file is
// skipped and the file's other hooks are kept: an event whose value is not a
// list, a group that is not an object or has no hooks list, a non-string
// matcher, a hook without a command, a command holding control characters
// other than tab and newline, a type, matcher or event name over its length
// bound or holding control characters, a [hooks.state] value that is neither
// a string nor a table. Optional metadata that is malformed (a timeout that
// is neither a number nor a short clean string; a name that is not a short
// clean string; a non-boolean trust "enabled") is left out of Meta and the
// hook is kept. Either way Parse returns the kept
// hooks together with an error listing every problem, which Collect puts in
// FileResult.Error. A command over MaxCommandBytes is kept, truncated at a
// UTF-8 boundary, with Meta["command_truncated"] = "true" and
// Meta["command_bytes"] = its full length.
//
// Lenient reading: a UTF-8 byte order mark is ignored; an empty (or
// whitespace-only) file and a "hooks": null configure nothing and are not
// errors; Gemini settings may hold // and /* */ comments (Gemini CLI
// strips them); a Codex hooks.json without a "hooks" object takes its events
// from the top level (keys whose value is a list), and a Codex event list may
// hold flat hooks ({"command": …} without a "hooks" list), each read as a
// group of one (position "<index>.0"). Duplicate JSON keys: the last value
// wins, as in the agents' JSON parsers. TOML [hooks.state] keys are listed
// in sorted order. Other [hooks] tables of config.toml are not read.
package hookconfig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cortexhq/cortex"
)

// Source kinds.
const (
	// KindClaudeSettings is a Claude .claude/settings.json or
	// settings.local.json.
	KindClaudeSettings = "claude_settings"
	// KindCodexHooks is a Codex .codex/hooks.json.
	KindCodexHooks = "codex_hooks"
	// KindCodexConfig is a Codex .codex/config.toml ([hooks.state] only).
	KindCodexConfig = "codex_config"
	// KindGeminiSettings is a Gemini .gemini/settings.json.
	KindGeminiSettings = "gemini_settings"
)

// Scopes.
const (
	// ScopeUser is a file under the home folder.
	ScopeUser = "user"
	// ScopeProject is a file under a project folder.
	ScopeProject = "project"
)

// EventTrustState is the HookEvent of Codex [hooks.state] rows.
const EventTrustState = "hook_trust_state"

// Bounds.
const (
	// MaxFileBytes is the largest file Collect reads (4 MiB).
	MaxFileBytes = 4 << 20
	// MaxCommandBytes bounds Hook.Command; longer commands are truncated.
	MaxCommandBytes = 1024
	// maxEventBytes bounds an event name.
	maxEventBytes = 256
	// maxMatcherBytes bounds a matcher.
	maxMatcherBytes = 512
	// maxNameBytes bounds a hook name.
	maxNameBytes = 256
	// maxTypeBytes bounds a hook type and a string timeout.
	maxTypeBytes = 64
	// maxKeyBytes bounds a [hooks.state] key (it holds a file path).
	maxKeyBytes = 1024
	// maxHashBytes bounds a trusted hash.
	maxHashBytes = 256
	// maxProblems bounds the problems listed in one error.
	maxProblems = 10
)

// Source is one configuration file the collector reads.
type Source struct {
	// Path is the file.
	Path string `json:"path"`
	// Kind is claude_settings, codex_hooks, codex_config or gemini_settings.
	Kind string `json:"kind"`
	// Tool is the agent the file configures. Parse derives it from Kind when
	// empty.
	Tool cortex.Tool `json:"tool"`
	// Scope is user or project ("" is read as user).
	Scope string `json:"scope"`
	// Project is the project folder, for project files.
	Project string `json:"project,omitempty"`
}

// Hook is one configured hook (a cortex.HookEvent plus where it came from).
type Hook struct {
	cortex.HookEvent
	// Tool is the agent the hook is configured for.
	Tool cortex.Tool
	// Source is the file the hook was found in (with Tool and Scope filled
	// in when they were empty).
	Source Source
}

// FileResult reports one file: how many hooks, or the problem.
type FileResult struct {
	// Path is the file.
	Path string `json:"path"`
	// Kind is the source kind.
	Kind string `json:"kind"`
	// Hooks counts the rows read from the file.
	Hooks int `json:"hooks"`
	// Error is why the file, or some of its entries, could not be used.
	Error string `json:"error,omitempty"`
}

// layout is one configuration file relative to a home or project folder.
var layout = []struct {
	rel  string
	kind string
	tool cortex.Tool
}{
	{filepath.Join(".claude", "settings.json"), KindClaudeSettings, cortex.ToolClaude},
	{filepath.Join(".claude", "settings.local.json"), KindClaudeSettings, cortex.ToolClaude},
	{filepath.Join(".codex", "hooks.json"), KindCodexHooks, cortex.ToolCodex},
	{filepath.Join(".codex", "config.toml"), KindCodexConfig, cortex.ToolCodex},
	{filepath.Join(".gemini", "settings.json"), KindGeminiSettings, cortex.ToolGemini},
}

// Sources lists the files to read for a home folder and a set of project
// folders (e.g. the projects seen in transcripts): ~/.claude/settings.json,
// ~/.claude/settings.local.json, <project>/.claude/settings.json,
// <project>/.claude/settings.local.json, ~/.codex/hooks.json,
// ~/.codex/config.toml, <project>/.codex/hooks.json,
// <project>/.codex/config.toml, ~/.gemini/settings.json,
// <project>/.gemini/settings.json. Missing files are simply not listed
// (Sources stats them).
//
// The home files come first, then each project's in the order given. Paths
// are made absolute and cleaned. A file is listed once: a project equal to
// home (or a path reached twice through a symlink) adds nothing, and the
// first listing — the user one for home — wins. An empty home or project is
// ignored. A file that exists but cannot be stat'ed for another reason
// (e.g. permission denied) is listed, so that Collect reports the problem.
func Sources(home string, projects []string) []Source {
	var out []Source
	seen := map[string]bool{}
	var infos []os.FileInfo
	add := func(dir, scope string) {
		if dir == "" {
			return
		}
		dir = absClean(dir)
		for _, l := range layout {
			path := filepath.Join(dir, l.rel)
			if seen[path] {
				continue
			}
			fi, err := os.Stat(path)
			if err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
				continue
			}
			if err == nil {
				if slices.ContainsFunc(infos, func(o os.FileInfo) bool { return os.SameFile(o, fi) }) {
					continue
				}
				infos = append(infos, fi)
			}
			seen[path] = true
			s := Source{Path: path, Kind: l.kind, Tool: l.tool, Scope: scope}
			if scope == ScopeProject {
				s.Project = dir
			}
			out = append(out, s)
		}
	}
	add(home, ScopeUser)
	for _, p := range projects {
		add(p, ScopeProject)
	}
	return out
}

func absClean(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// Collect reads every source (bounded: skip files over 4 MiB with an error)
// and returns the hooks and a result per file. A file that cannot be read or
// parsed is reported (FileResult.Error), never silently skipped, and does
// not stop the others.
//
// Results are sorted by path (then kind); hooks follow the same order, and
// within a file their Index order. A file with some bad entries yields its
// good hooks and an Error. Once ctx is done the remaining files are not read
// and their results say so.
func Collect(ctx context.Context, srcs []Source) ([]Hook, []FileResult) {
	order := slices.Clone(srcs)
	slices.SortStableFunc(order, func(a, b Source) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	var hooks []Hook
	results := make([]FileResult, 0, len(order))
	for _, src := range order {
		res := FileResult{Path: src.Path, Kind: src.Kind}
		if err := ctx.Err(); err != nil {
			res.Error = fmt.Sprintf("%s: not read: collection cancelled (%v)", src.Path, err)
			results = append(results, res)
			continue
		}
		data, err := readBounded(src.Path)
		if err != nil {
			res.Error = err.Error()
			results = append(results, res)
			continue
		}
		got, err := Parse(src, data)
		res.Hooks = len(got)
		if err != nil {
			res.Error = err.Error()
		}
		hooks = append(hooks, got...)
		results = append(results, res)
	}
	return hooks, results
}

// readBounded reads a regular file of at most MaxFileBytes.
func readBounded(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, readError(path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, cortex.Errorf(cortex.CodeInvalid, "%s: not a regular file", path)
	}
	if fi.Size() > MaxFileBytes {
		return nil, tooBig(path, fi.Size())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, readError(path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, readError(path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, tooBig(path, int64(len(data)))
	}
	return data, nil
}

func tooBig(path string, size int64) error {
	return cortex.Errorf(cortex.CodeInvalid, "%s: file is %d bytes, over the %d-byte (4 MiB) limit; not read", path, size, MaxFileBytes)
}

func readError(path string, err error) error {
	var pe *fs.PathError
	reason := err
	if errors.As(err, &pe) {
		reason = pe.Err
	}
	code := cortex.CodeUnavailable
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return cortex.WrapError(cortex.CodeNotFound, err, "%s: cannot read: file not found", path)
	case errors.Is(err, fs.ErrPermission):
		code = cortex.CodeForbidden
	}
	return cortex.WrapError(code, err, "%s: cannot read: %v", path, reason)
}

// Parse parses one file's bytes (pure: no I/O) into hooks.
//
// It returns the hooks it could read and, when the file is unusable or some
// entries were skipped or incomplete, an error (a *cortex.Error, code
// invalid, whose message names the file and every problem). When the whole
// file is unusable the hook list is empty.
func Parse(src Source, data []byte) ([]Hook, error) {
	tool, ok := kindTool[src.Kind]
	if !ok {
		return nil, cortex.Errorf(cortex.CodeInvalid, "%s: unknown source kind %q", src.Path, src.Kind)
	}
	if src.Tool != "" && src.Tool != tool {
		return nil, cortex.Errorf(cortex.CodeInvalid, "%s: source kind %s is for %s, not %s", src.Path, src.Kind, tool, src.Tool)
	}
	src.Tool = tool
	switch src.Scope {
	case "":
		src.Scope = ScopeUser
	case ScopeUser, ScopeProject:
	default:
		return nil, cortex.Errorf(cortex.CodeInvalid, "%s: unknown scope %q", src.Path, src.Scope)
	}
	data = stripBOM(data)
	p := &parser{src: src, base: string(tool) + ":" + src.Scope + ":" + filepath.Base(src.Path)}
	var err error
	if src.Kind == KindCodexConfig {
		err = p.parseTOML(data)
	} else {
		err = p.parseJSON(data)
	}
	if err != nil {
		return nil, err
	}
	return p.hooks, p.err()
}

var kindTool = map[string]cortex.Tool{
	KindClaudeSettings: cortex.ToolClaude,
	KindCodexHooks:     cortex.ToolCodex,
	KindCodexConfig:    cortex.ToolCodex,
	KindGeminiSettings: cortex.ToolGemini,
}

// parser accumulates the rows and problems of one file.
type parser struct {
	src      Source
	base     string // HookSource
	hooks    []Hook
	problems []string
}

func (p *parser) problem(format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

// fatal builds the error of an unusable file.
func (p *parser) fatal(format string, args ...any) error {
	return cortex.Errorf(cortex.CodeInvalid, "%s: %s", p.src.Path, fmt.Sprintf(format, args...))
}

// err lists the problems of a file whose good hooks were kept.
func (p *parser) err() error {
	n := len(p.problems)
	if n == 0 {
		return nil
	}
	list := p.problems
	more := ""
	if n > maxProblems {
		list = list[:maxProblems]
		more = fmt.Sprintf(" | and %d more", n-maxProblems)
	}
	noun := "problems"
	if n == 1 {
		noun = "problem"
	}
	return cortex.Errorf(cortex.CodeInvalid, "%s: %d %s (%d hooks kept): %s%s",
		p.src.Path, n, noun, len(p.hooks), strings.Join(list, " | "), more)
}

// add appends a row with the fields common to every row of the file.
func (p *parser) add(ev cortex.HookEvent) {
	ev.Index = len(p.hooks)
	if ev.Meta == nil {
		ev.Meta = map[string]string{}
	}
	ev.Meta["config_path"] = p.src.Path
	p.hooks = append(p.hooks, Hook{HookEvent: ev, Tool: p.src.Tool, Source: p.src})
}
