package transcript

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"

	"github.com/valyala/fastjson"
)

// ErrNotTranscript is returned by Sniff for content that is not a
// transcript of a supported agent.
var ErrNotTranscript = errors.New("not a recognized transcript")

// FormatFromPath guesses a file's format from the agents' default folder
// layout. ok is false when the path says nothing.
func FormatFromPath(path string) (Format, bool) {
	p := filepath.ToSlash(path)
	base := filepath.Base(p)
	switch {
	case strings.Contains(p, "/.codex/sessions/") || strings.Contains(p, "/.codex/archived_sessions/"):
		if strings.HasSuffix(base, ".jsonl") {
			return FormatCodex, true
		}
	case strings.Contains(p, "/.gemini/tmp/") && strings.Contains(p, "/chats/"):
		if strings.HasSuffix(base, ".jsonl") {
			return FormatGeminiJSONL, true
		}
		if strings.HasSuffix(base, ".json") {
			return FormatGeminiJSON, true
		}
	case strings.Contains(p, "/.claude/projects/"):
		if strings.HasSuffix(base, ".jsonl") {
			return FormatClaude, true
		}
	}
	return "", false
}

var codexTypes = map[string]bool{"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true, "compacted": true}

var claudeTypes = map[string]bool{
	"user": true, "assistant": true, "system": true, "summary": true, "progress": true, "attachment": true,
	"file-history-snapshot": true, "queue-operation": true, "permission-mode": true, "last-prompt": true,
	"ai-title": true, "mode": true, "bridge-session": true, "pr-link": true, "custom-title": true,
}

// Sniff identifies a transcript format from the first bytes of a file (64
// KiB is plenty). It returns ErrNotTranscript for anything else: binary
// files, other JSON, text.
func Sniff(head []byte) (Format, error) {
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	t = bytes.TrimPrefix(t, []byte("\xef\xbb\xbf"))
	if len(t) == 0 {
		return "", ErrNotTranscript
	}
	if t[0] != '{' {
		return "", ErrNotTranscript
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return "", ErrNotTranscript
	}
	var p fastjson.Parser
	lines := bytes.Split(t, []byte("\n"))
	// A pretty-printed document: the first line is just "{".
	if len(bytes.TrimSpace(lines[0])) == 1 {
		if bytes.Contains(t, []byte(`"messages"`)) && (bytes.Contains(t, []byte(`"sessionId"`)) || bytes.Contains(t, []byte(`"projectHash"`))) {
			return FormatGeminiJSON, nil
		}
		return "", ErrNotTranscript
	}
	for i, ln := range lines {
		if i >= 50 {
			break
		}
		ln = bytes.TrimSpace(ln)
		if len(ln) == 0 {
			continue
		}
		complete := i < len(lines)-1
		v, err := p.ParseBytes(ln)
		if err != nil {
			if !complete {
				return sniffPartial(ln)
			}
			if parts, err := SplitConcatenated(ln); err == nil {
				v, err = p.ParseBytes(parts[0])
				if err != nil {
					continue
				}
			} else {
				continue
			}
		}
		if f, ok := classify(v); ok {
			return f, nil
		}
	}
	return "", ErrNotTranscript
}

func classify(v *fastjson.Value) (Format, bool) {
	if v.Type() != fastjson.TypeObject {
		return "", false
	}
	typ := str(v, "type")
	switch {
	case codexTypes[typ] && v.Get("payload") != nil:
		return FormatCodex, true
	case v.Get("$set") != nil || v.Get("$rewindTo") != nil:
		return FormatGeminiJSONL, true
	case v.Get("sessionId") != nil && v.Get("projectHash") != nil && typ == "":
		if v.Get("messages") != nil && v.Get("messages").Type() == fastjson.TypeArray && len(arr(v.Get("messages"))) > 0 {
			return FormatGeminiJSON, true
		}
		return FormatGeminiJSONL, true
	case claudeTypes[typ]:
		return FormatClaude, true
	case typ == "" && v.Get("message") != nil && (v.Get("sessionId") != nil || v.Get("uuid") != nil):
		return FormatClaude, true
	}
	return "", false
}

// sniffPartial classifies a first line too long for the sniff buffer.
func sniffPartial(ln []byte) (Format, error) {
	s := string(ln)
	switch {
	case strings.Contains(s, `"payload"`) && (strings.Contains(s, `"type":"response_item"`) || strings.Contains(s, `"type":"session_meta"`) || strings.Contains(s, `"type":"event_msg"`)):
		return FormatCodex, nil
	case strings.Contains(s, `"sessionId"`) && (strings.Contains(s, `"uuid"`) || strings.Contains(s, `"parentUuid"`)):
		return FormatClaude, nil
	}
	return "", ErrNotTranscript
}

// ContextFromPath derives the fallbacks a parser needs from a transcript's
// path: the session id (file stem, or the parent session folder for
// subagent files), the subagent id, and for Claude the project decoded from
// the ~/.claude/projects/<encoded-cwd> folder name.
func ContextFromPath(path string, f Format) FileContext {
	ctx := FileContext{Path: path}
	base := filepath.Base(path)
	stem := strings.TrimSuffix(strings.TrimSuffix(base, ".jsonl"), ".json")
	dir := filepath.Dir(path)
	ctx.SessionID = stem
	switch f {
	case FormatClaude:
		if strings.HasPrefix(stem, "agent-") {
			ctx.AgentID = strings.TrimPrefix(stem, "agent-")
			if filepath.Base(dir) == "subagents" {
				ctx.SessionID = filepath.Base(filepath.Dir(dir))
				dir = filepath.Dir(filepath.Dir(dir))
			} else {
				ctx.SessionID = ""
			}
		}
		if p := filepath.ToSlash(dir); strings.Contains(p, "/.claude/projects/") {
			ctx.Project = decodeClaudeProject(filepath.Base(dir))
		}
	case FormatCodex:
		// rollout-2025-11-17T15-30-28-<uuid>.jsonl → <uuid>
		if strings.HasPrefix(stem, "rollout-") && len(stem) >= 36 {
			ctx.SessionID = stem[len(stem)-36:]
		}
	}
	// Copies (Entire's full.jsonl / raw_transcript) of any format carry no
	// session id in their name.
	if stem == "full" || stem == "raw_transcript" {
		ctx.SessionID = ""
	}
	return ctx
}

// SessionFromHead finds the session id stated near the start of a JSONL
// transcript (Claude "sessionId", Codex session_meta "id"). It is the
// fallback for files whose name carries no session id, such as copies
// named full.jsonl.
func SessionFromHead(head []byte, f Format) string {
	var p fastjson.Parser
	for i, ln := range bytes.Split(head, []byte("\n")) {
		if i >= 200 {
			break
		}
		v, err := p.ParseBytes(bytes.TrimSpace(ln))
		if err != nil {
			continue
		}
		switch f {
		case FormatClaude:
			if s := str(v, "sessionId"); s != "" {
				return s
			}
		case FormatCodex:
			if str(v, "type") == "session_meta" {
				if s := str(v, "payload", "id"); s != "" {
					return s
				}
			}
		}
	}
	return ""
}

// decodeClaudeProject reverses Claude's folder naming (every "/" and "."
// became "-"). The mapping is lossy for names that contain "-"; records
// carry their real cwd, so this is only a fallback (see
// ResolveClaudeProject for one checked against the file system).
func decodeClaudeProject(name string) string {
	if !strings.HasPrefix(name, "-") {
		return name
	}
	return "/" + strings.ReplaceAll(strings.TrimPrefix(name, "-"), "-", "/")
}

// ClaudeProjectFolder reports whether path is a transcript directly inside
// (or in a session folder of) ~/.claude/projects/<encoded-cwd>, and
// returns the encoded folder name.
func ClaudeProjectFolder(path string) (string, bool) {
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "subagents" {
		dir = filepath.Dir(filepath.Dir(dir))
	}
	if !strings.Contains(filepath.ToSlash(dir), "/.claude/projects/") {
		return "", false
	}
	return filepath.Base(dir), true
}

// ResolveClaudeProject decodes a Claude project folder name into the
// directory it was made from, using isDir to tell which of the readings
// exists: Claude turned every "/", "." and "_" of the path into "-", so
// "-Users-dain-workspace-claude-code-log" is /Users/dain/workspace/
// claude-code-log when that directory exists, not
// /Users/dain/workspace/claude/code/log. It returns "" when no reading
// exists (the machine is not the one the transcripts were written on).
func ResolveClaudeProject(name string, isDir func(string) bool) string {
	if !strings.HasPrefix(name, "-") {
		return ""
	}
	parts := strings.Split(strings.TrimPrefix(name, "-"), "-")
	steps := 0
	var walk func(dir string, i int) string
	walk = func(dir string, i int) string {
		if i == len(parts) {
			return dir
		}
		// The next path element is parts[i..j] joined by "-", "." or "_"
		// (one separator kind per element, the common case).
		for j := len(parts) - 1; j >= i; j-- {
			for _, sep := range []string{"-", ".", "_"} {
				if j == i && sep != "-" {
					continue
				}
				if steps++; steps > 10000 {
					return ""
				}
				elem := strings.Join(parts[i:j+1], sep)
				if elem == "" {
					continue
				}
				next := dir + "/" + elem
				if isDir(next) {
					if got := walk(next, j+1); got != "" {
						return got
					}
				}
			}
		}
		return ""
	}
	return walk("", 0)
}
