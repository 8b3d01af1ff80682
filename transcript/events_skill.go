package transcript

import (
	"regexp"
	"strings"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// SkillFromPath names the skill of a SKILL.md path (or its folder) as the
// agents do: "plugin:skill" when the path shows the plugin —
// …/plugins/cache/<marketplace>/<plugin>/<version>/skills/<skill> (Claude
// Code and Codex plugin caches) or …/plugins/<plugin>/skills/<skill>
// (marketplace and plugin checkouts) — else the folder name.
func SkillFromPath(path string) (name, plugin string, ok bool) {
	p := strings.TrimRight(strings.ReplaceAll(path, `\`, "/"), "/")
	if strings.EqualFold(p[strings.LastIndexByte(p, '/')+1:], "SKILL.md") {
		p = p[:strings.LastIndexByte(p, '/')+1]
		p = strings.TrimRight(p, "/")
	}
	segs := strings.Split(p, "/")
	n := len(segs)
	if n == 0 || segs[n-1] == "" {
		return "", "", false
	}
	skill := segs[n-1]
	if n >= 3 && segs[n-2] == "skills" {
		switch {
		case segs[n-3] != "" && n >= 4 && segs[n-4] == "plugins":
			plugin = segs[n-3]
		case n >= 6 && versionLike(segs[n-3]) && segs[n-6] == "cache":
			plugin = segs[n-4]
		}
	}
	if plugin != "" {
		return NormalizeSkill(plugin+":"+skill, "")
	}
	return NormalizeSkill(skill, "")
}

// versionLike reports whether a path segment is a plugin cache's version
// folder: a version number (1.4.1, 26.608.12217) or a commit hash.
func versionLike(s string) bool {
	if s == "" {
		return false
	}
	digits, hex := true, len(s) >= 7
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r == '.') {
			digits = false
		}
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			hex = false
		}
	}
	return digits && strings.ContainsAny(s, "0123456789") || hex
}

// claudeBuiltinCommands are Claude Code's own slash commands: typing one is
// not using a skill or a custom command.
var claudeBuiltinCommands = map[string]bool{
	"add-dir": true, "agents": true, "bashes": true, "btw": true, "bug": true, "clear": true, "compact": true,
	"config": true, "context": true, "copy": true, "cost": true, "doctor": true, "exit": true, "export": true,
	"fast": true, "feedback": true, "help": true, "hooks": true, "ide": true, "init": true,
	"install-github-app": true, "keybindings": true, "login": true, "logout": true, "mcp": true, "memory": true,
	"migrate-installer": true, "model": true, "output-style": true, "permissions": true, "plugin": true,
	"plugins": true, "pr-comments": true, "privacy-settings": true, "quit": true, "release-notes": true,
	"reload-plugins": true, "remote-env": true, "resume": true, "review": true, "rewind": true, "sandbox": true,
	"security-review": true, "stats": true, "status": true, "statusline": true, "tasks": true,
	"terminal-setup": true, "theme": true, "todos": true, "upgrade": true, "usage": true, "vim": true,
}

// claudeCommandEvent emits the slash command a user typed (not one of
// Claude Code's own): a skill when a skill body follows it, else a custom
// command (the incident engine tells them apart).
func claudeCommandEvent(ev *cortex.Events, msg *fastjson.Value) {
	name, args, ok := SlashCommand(claudeUserText(msg))
	if !ok || claudeBuiltinCommands[strings.ToLower(name)] {
		return
	}
	sname, plugin, ok := NormalizeSkill(name, "")
	if !ok {
		return
	}
	s := cortex.SkillEvent{SkillName: sname, SkillPlugin: plugin, EventKind: cortex.SkillClaudeCommand,
		EvidenceKind: cortex.EvidenceContent}
	if args != "" {
		putMeta(&s.Meta, "args", cortex.CutUTF8(args, MaxSkillField))
	}
	ev.Skills = append(ev.Skills, s)
}

// skillReader matches a shell command that prints one SKILL.md (and only
// reads it): sed -n 'a,bp', cat, head, nl, bat, less, Get-Content, with an
// optional cd first and an optional pipe into sed or head.
var skillReader = regexp.MustCompile(`^(?:cd \S+ &&\s*)?(?:sed -n ['"]?\d+,\d+p['"]?|cat|head(?: -n ?\d+| -\d+)?|nl(?: -ba)?|bat(?: -p| --plain)?|less|more|Get-Content|type)\s+(['"]?)([^\s'"|;&]*SKILL\.md)(['"]?)(?:\s*\|\s*(?:sed -n ['"]?\d+,\d+p['"]?|head(?: -n ?\d+| -\d+)?))?\s*$`)

// agentDirs are the folders agents install skills under: a skill read from
// one of them is being loaded, while a SKILL.md elsewhere (a repository
// that develops skills) is being edited or browsed.
var agentDirs = []string{".codex/", ".agents/", ".claude/", ".gemini/", ".cursor/"}

// SkillRead returns the skill whose installed SKILL.md a shell command
// reads, or ok=false: the command must only read one SKILL.md, and the
// file must sit in an agent's skill folder (~/.codex/skills,
// ~/.agents/skills, a plugin cache, a project's .codex/skills …).
func SkillRead(command string) (name, plugin, path string, ok bool) {
	c := strings.TrimSpace(command)
	if !strings.Contains(c, "SKILL.md") || strings.Count(c, "SKILL.md") != 1 {
		return "", "", "", false
	}
	m := skillReader.FindStringSubmatch(c)
	if m == nil || m[1] != m[3] {
		return "", "", "", false
	}
	path = m[2]
	inAgentDir := false
	for _, d := range agentDirs {
		if strings.Contains(path, "/"+d) || strings.HasPrefix(path, d) {
			inAgentDir = true
			break
		}
	}
	if !inAgentDir {
		return "", "", "", false
	}
	name, plugin, ok = SkillFromPath(path)
	return name, plugin, path, ok
}

// shellCommand returns the command line of a shell tool call's arguments
// ({"cmd": "…"}, {"command": "…"} or {"command": ["bash", "-lc", "…"]}).
func shellCommand(args *fastjson.Value) string {
	if args == nil {
		return ""
	}
	if c := args.Get("cmd"); c != nil && c.Type() == fastjson.TypeString {
		return string(c.GetStringBytes())
	}
	c := args.Get("command")
	switch {
	case c == nil:
		return ""
	case c.Type() == fastjson.TypeString:
		return string(c.GetStringBytes())
	case c.Type() == fastjson.TypeArray:
		parts := arr(c)
		if len(parts) >= 3 && (str(parts[1]) == "-lc" || str(parts[1]) == "-c") {
			return str(parts[len(parts)-1])
		}
		var out []string
		for _, p := range parts {
			out = append(out, str(p))
		}
		return strings.Join(out, " ")
	}
	return ""
}

// codexSkillRead emits the skill a Codex shell call loads by reading its
// installed SKILL.md.
func codexSkillRead(ev *cortex.Events, name string, args *fastjson.Value) {
	switch name {
	case "exec_command", "shell", "shell_command", "local_shell", "container.exec":
	default:
		return
	}
	sname, plugin, path, ok := SkillRead(shellCommand(args))
	if !ok {
		return
	}
	s := cortex.SkillEvent{SkillName: sname, SkillPlugin: plugin, EventKind: cortex.SkillCodexRead,
		EvidenceKind: cortex.EvidenceStructured}
	if !hasControl(path) {
		s.SkillPath = cortex.CutUTF8(path, maxSkillPath)
	}
	ev.Skills = append(ev.Skills, s)
}

// announcement matches a Codex message that opens by naming the skills it
// uses: "Using `agentv-dev` because …", "Using `using-superpowers` and
// `writing-skills` for this edit.", "I'm using the `worktree` skill".
var announcement = regexp.MustCompile("^(?:I(?:'m| am|’m) |I(?:'ll| will|’ll) (?:be )?)?[Uu]sing (?:the )?((?:`[A-Za-z0-9][A-Za-z0-9._:-]{0,100}`(?:,? and |, )?)+)(?: skills?)?(?:[ ,.:;]|$)")

var backticked = regexp.MustCompile("`([^`]+)`")

// Announced returns the skill names an assistant message announces it is
// using, from its opening words only.
func Announced(text string) []string {
	m := announcement.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return nil
	}
	var out []string
	for _, b := range backticked.FindAllStringSubmatch(m[1], -1) {
		out = append(out, b[1])
	}
	return out
}

// codexAnnouncements emits the skills an assistant message of a Codex
// rollout announces ("Using `x` …"). The engine counts an announced name as
// a skill only when it is known as one (loaded somewhere as a skill).
func codexAnnouncements(ev *cortex.Events, text string) {
	for _, a := range Announced(text) {
		name, plugin, ok := NormalizeSkill(a, "")
		if !ok {
			continue
		}
		ev.Skills = append(ev.Skills, cortex.SkillEvent{SkillName: name, SkillPlugin: plugin,
			EventKind: cortex.SkillCodexAnnounced, EvidenceKind: cortex.EvidenceContent})
	}
}

// SkillDocText returns the text of a skill document as a stored record
// shows it: the body of a Claude skill load ("Base directory for this
// skill: …" then the SKILL.md body), a custom command's expanded body (a
// meta user record without that header), the body of a Codex <skill>
// block, or what a Codex shell call printed reading a SKILL.md (the exec
// boilerplate dropped; a partial read shows only the lines it printed).
// The text is bounded to max bytes. ok is false when the record holds no
// skill document.
func SkillDocText(tool cortex.Tool, raw []byte, max int) (text string, ok bool) {
	var p fastjson.Parser
	v, err := p.ParseBytes(raw)
	if err != nil || v.Type() != fastjson.TypeObject {
		return "", false
	}
	switch tool {
	case cortex.ToolClaude:
		msg := v.Get("message")
		if msg == nil {
			return "", false
		}
		t := strings.TrimLeft(claudeUserText(msg), " \t\r\n")
		if rest, found := strings.CutPrefix(t, skillBodyHeader); found {
			_, t, _ = strings.Cut(rest, "\n")
		}
		t = strings.TrimSpace(t)
		return cortex.CutUTF8(clean(t), max), t != ""
	case cortex.ToolCodex:
		pl := v.Get("payload")
		switch string(rawStr(pl, "type")) {
		case "message":
			text, _ := messageText(pl)
			var body string
			scanSkillBlocks(text, func(b skillBlock) {
				if body == "" {
					body = strings.TrimSpace(b.body)
				}
			})
			return cortex.CutUTF8(clean(body), max), body != ""
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			out := pl.Get("output")
			if out == nil || out.Type() != fastjson.TypeString {
				return "", false
			}
			t := string(out.GetStringBytes())
			if i := strings.Index(t, "\nOutput:\n"); i >= 0 && strings.Contains(t[:i], "exited with code") {
				t = t[i+len("\nOutput:\n"):]
			} else if fastjson.Validate(t) == nil {
				var q fastjson.Parser
				if o, err := q.Parse(t); err == nil && o.Get("output") != nil {
					t = str(o, "output")
				}
			}
			t = strings.TrimSpace(t)
			return cortex.CutUTF8(clean(t), max), t != ""
		}
	}
	return "", false
}
