package hookconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cortexhq/cortex"
)

// member is one key of a JSON object, in file order.
type member struct {
	key string
	val json.RawMessage
}

// members lists the keys of a JSON object in file order; a repeated key
// keeps its first place and its last value (as JSON.parse does). raw must be
// valid JSON.
func members(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var out []member
	at := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("object key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if i, dup := at[key]; dup {
			out[i].val = v
			continue
		}
		at[key] = len(out)
		out = append(out, member{key, v})
	}
	return out, nil
}

// get returns the value of key.
func get(ms []member, key string) (json.RawMessage, bool) {
	for _, m := range ms {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// jsonKind is the first byte of a JSON value: '{', '[', '"', 't', 'f',
// 'n', or '0' for a number.
func jsonKind(raw json.RawMessage) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	switch c := raw[0]; c {
	case '{', '[', '"', 't', 'f', 'n':
		return c
	}
	return '0'
}

// kindName names a JSON value's type for messages.
func kindName(raw json.RawMessage) string {
	switch jsonKind(raw) {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '0':
		return "a number"
	}
	return "nothing"
}

// isNull reports an absent or null value.
func isNull(raw json.RawMessage, ok bool) bool { return !ok || jsonKind(raw) == 'n' }

// isFalse reports a literal false.
func isFalse(raw json.RawMessage, ok bool) bool { return ok && string(bytes.TrimSpace(raw)) == "false" }

// isTrue reports a literal true.
func isTrue(raw json.RawMessage, ok bool) bool { return ok && string(bytes.TrimSpace(raw)) == "true" }

// str decodes a JSON string.
func str(raw json.RawMessage) (string, bool) {
	if jsonKind(raw) != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// list decodes a JSON array.
func list(raw json.RawMessage) ([]json.RawMessage, bool) {
	if jsonKind(raw) != '[' {
		return nil, false
	}
	var l []json.RawMessage
	if json.Unmarshal(raw, &l) != nil {
		return nil, false
	}
	return l, true
}

// object decodes a JSON object into its ordered members.
func object(raw json.RawMessage) ([]member, bool) {
	if jsonKind(raw) != '{' {
		return nil, false
	}
	ms, err := members(raw)
	return ms, err == nil
}

// geminiSettingKeys are keys of the Gemini hooks object that are settings,
// not events.
var geminiSettingKeys = map[string]bool{"enabled": true, "disabled": true, "notifications": true}

// jsonFile is the state of one JSON settings or hooks file.
type jsonFile struct {
	// disabledBy names the switch that turns every hook of the file off.
	disabledBy string
	// disabledNames maps a Gemini hook name (or command) to the list that
	// disables it.
	disabledNames map[string]string
}

func (p *parser) parseJSON(data []byte) error {
	if p.src.Kind == KindGeminiSettings {
		data = stripJSONComments(data)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the bytes read, the offending one included;
			// a premature end is placed just past the last byte.
			pos := se.Offset - 1
			if se.Offset >= int64(len(data)) && strings.HasPrefix(se.Error(), "unexpected end") {
				pos = int64(len(data))
			}
			line, col := lineCol(data, pos)
			return cortex.WrapError(cortex.CodeInvalid, err, "%s: invalid JSON at line %d, column %d: %s",
				p.src.Path, line, col, se.Error())
		}
		return cortex.WrapError(cortex.CodeInvalid, err, "%s: invalid JSON: %v", p.src.Path, err)
	}
	top, ok := object(raw)
	if !ok {
		return p.fatal("expected a JSON object at the top level, got %s", kindName(raw))
	}
	var f jsonFile
	hooksRaw, hasHooks := get(top, "hooks")
	switch p.src.Kind {
	case KindClaudeSettings:
		if v, ok := get(top, "disableAllHooks"); isTrue(v, ok) {
			f.disabledBy = "disableAllHooks"
		}
	case KindGeminiSettings:
		f.gemini(p, top, hooksRaw, hasHooks)
	}
	var events []member
	prefix := "hooks."
	switch {
	case p.src.Kind == KindCodexHooks && !hasHooks:
		// Events at the top level: keys whose value is a list.
		prefix = ""
		for _, m := range top {
			if jsonKind(m.val) == '[' {
				events = append(events, m)
			}
		}
	case isNull(hooksRaw, hasHooks):
		return nil
	default:
		ms, ok := object(hooksRaw)
		if !ok {
			return p.fatal("\"hooks\": expected an object, got %s", kindName(hooksRaw))
		}
		events = ms
	}
	for _, ev := range events {
		if p.src.Kind == KindGeminiSettings && geminiSettingKeys[ev.key] {
			continue
		}
		p.event(&f, prefix+keyPath(ev.key), ev.key, ev.val)
	}
	return nil
}

// gemini reads the Gemini switches that turn hooks off.
func (f *jsonFile) gemini(p *parser, top []member, hooksRaw json.RawMessage, hasHooks bool) {
	hooksObj, _ := object(hooksRaw)
	cfgRaw, hasCfg := get(top, "hooksConfig")
	cfg, _ := object(cfgRaw)
	tools, _ := object(func() json.RawMessage { v, _ := get(top, "tools"); return v }())
	switch {
	case hasHooks && isFalse(get(hooksObj, "enabled")):
		f.disabledBy = "hooks.enabled"
	case hasCfg && isFalse(get(cfg, "enabled")):
		f.disabledBy = "hooksConfig.enabled"
	case isFalse(get(tools, "enableHooks")):
		f.disabledBy = "tools.enableHooks"
	}
	for _, src := range []struct {
		obj  []member
		name string
	}{{hooksObj, "hooks.disabled"}, {cfg, "hooksConfig.disabled"}} {
		raw, ok := get(src.obj, "disabled")
		if isNull(raw, ok) {
			continue
		}
		items, ok := list(raw)
		if !ok {
			p.problem("%s: expected a list of hook names, got %s; ignored", src.name, kindName(raw))
			continue
		}
		for i, it := range items {
			s, ok := str(it)
			if !ok {
				p.problem("%s[%d]: expected a hook name, got %s; ignored", src.name, i, kindName(it))
				continue
			}
			if f.disabledNames == nil {
				f.disabledNames = map[string]string{}
			}
			if _, dup := f.disabledNames[s]; !dup {
				f.disabledNames[s] = src.name
			}
		}
	}
}

// event reads one event's list of matcher groups.
func (p *parser) event(f *jsonFile, path, event string, raw json.RawMessage) {
	if event == "" {
		p.problem("%s: empty event name; skipped", path)
		return
	}
	if why := checkText(event, maxEventBytes, false); why != "" {
		p.problem("%s: event name %s; skipped", path, why)
		return
	}
	groups, ok := list(raw)
	if !ok {
		p.problem("%s: expected a list of hook groups, got %s; skipped", path, kindName(raw))
		return
	}
	for g, graw := range groups {
		gpath := fmt.Sprintf("%s[%d]", path, g)
		gm, ok := object(graw)
		if !ok {
			p.problem("%s: expected a hook group object, got %s; skipped", gpath, kindName(graw))
			continue
		}
		var matcher *string
		if mraw, ok := get(gm, "matcher"); !isNull(mraw, ok) {
			m, ok := str(mraw)
			if !ok {
				p.problem("%s.matcher: expected a string, got %s; group skipped", gpath, kindName(mraw))
				continue
			}
			if why := checkText(m, maxMatcherBytes, false); why != "" {
				p.problem("%s.matcher %s; group skipped", gpath, why)
				continue
			}
			matcher = &m
		}
		hraw, hasList := get(gm, "hooks")
		if isNull(hraw, hasList) {
			if _, hasCmd := get(gm, "command"); hasCmd && p.src.Kind == KindCodexHooks {
				p.hook(f, gpath, event, matcher, g, 0, gm)
				continue
			}
			p.problem("%s: no \"hooks\" list; group skipped", gpath)
			continue
		}
		hs, ok := list(hraw)
		if !ok {
			p.problem("%s.hooks: expected a list, got %s; group skipped", gpath, kindName(hraw))
			continue
		}
		for h, one := range hs {
			hpath := fmt.Sprintf("%s.hooks[%d]", gpath, h)
			hm, ok := object(one)
			if !ok {
				p.problem("%s: expected a hook object, got %s; skipped", hpath, kindName(one))
				continue
			}
			p.hook(f, hpath, event, matcher, g, h, hm)
		}
	}
}

// hook reads one hook entry.
func (p *parser) hook(f *jsonFile, path, event string, matcher *string, g, h int, hm []member) {
	meta := map[string]string{"position": fmt.Sprintf("%d.%d", g, h)}
	name := event
	if matcher != nil {
		meta["matcher"] = *matcher
		if *matcher != "" {
			name = event + ":" + *matcher
		}
	}
	typ := ""
	if raw, ok := get(hm, "type"); !isNull(raw, ok) {
		s, ok := str(raw)
		if !ok {
			p.problem("%s.type: expected a string, got %s; hook skipped", path, kindName(raw))
			return
		}
		if why := checkText(s, maxTypeBytes, false); why != "" {
			p.problem("%s.type %s; hook skipped", path, why)
			return
		}
		typ = s
		meta["type"] = s
	}
	cmd := ""
	raw, ok := get(hm, "command")
	switch {
	case isNull(raw, ok):
		if typ == "" || typ == "command" {
			p.problem("%s: no command; hook skipped", path)
			return
		}
	case jsonKind(raw) == '"':
		cmd, _ = str(raw)
	case jsonKind(raw) == '[':
		items, _ := list(raw)
		parts := make([]string, 0, len(items))
		for i, it := range items {
			s, ok := str(it)
			if !ok {
				p.problem("%s.command[%d]: expected a string, got %s; hook skipped", path, i, kindName(it))
				return
			}
			parts = append(parts, s)
		}
		cmd = strings.Join(parts, " ")
		meta["command_argv"] = "true"
	default:
		p.problem("%s.command: expected a string or a list of strings, got %s; hook skipped", path, kindName(raw))
		return
	}
	if hasControl(cmd, true) {
		p.problem("%s.command holds control characters other than tab and newline; hook skipped", path)
		return
	}
	if len(cmd) > MaxCommandBytes {
		meta["command_truncated"] = "true"
		meta["command_bytes"] = fmt.Sprint(len(cmd))
		cmd = cortex.CutUTF8(cmd, MaxCommandBytes)
	}
	if raw, ok := get(hm, "name"); !isNull(raw, ok) {
		s, ok := str(raw)
		switch {
		case !ok:
			p.problem("%s.name: expected a string, got %s; left out", path, kindName(raw))
		case checkText(s, maxNameBytes, false) != "":
			p.problem("%s.name %s; left out", path, checkText(s, maxNameBytes, false))
		default:
			meta["name"] = s
		}
	}
	for _, key := range []string{"timeout", "timeoutSec"} {
		raw, ok := get(hm, key)
		if isNull(raw, ok) {
			continue
		}
		switch jsonKind(raw) {
		case '0':
			meta["timeout"] = string(bytes.TrimSpace(raw))
		case '"':
			s, _ := str(raw)
			if why := checkText(s, maxTypeBytes, false); why != "" {
				p.problem("%s.%s %s; left out", path, key, why)
				continue
			}
			meta["timeout"] = s
		default:
			p.problem("%s.%s: expected a number, got %s; left out", path, key, kindName(raw))
			continue
		}
		break
	}
	switch {
	case f.disabledBy != "":
		meta["enabled"] = "false"
		meta["disabled_by"] = f.disabledBy
	case f.disabledNames != nil:
		by, ok := f.disabledNames[cmd]
		if n, named := meta["name"]; named {
			if b, hit := f.disabledNames[n]; hit {
				by, ok = b, true
			}
		}
		if ok {
			meta["enabled"] = "false"
			meta["disabled_by"] = by
		}
	}
	p.add(cortex.HookEvent{
		HookEvent:    event,
		HookName:     name,
		HookSource:   p.base,
		Command:      cmd,
		Status:       cortex.HookConfigured,
		EvidenceKind: cortex.EvidenceConfig,
		Meta:         meta,
	})
}
