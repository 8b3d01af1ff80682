package gen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Tool names, which are also the first path component of the source corpus
// and of the generated corpus.
const (
	toolClaude = "claude"
	toolCodex  = "codex"
	toolGemini = "gemini"
)

// fileRole says how a source file is laid out in the output.
type fileRole uint8

const (
	roleSession  fileRole = iota + 1 // a session transcript
	roleTopAgent                     // Claude 2.0.x agent-<hex>.jsonl next to the sessions
	roleSubAgent                     // Claude 2.1.x <session>/subagents/agent-<id>.jsonl
)

// srcFile is one source transcript, read and scanned once.
type srcFile struct {
	rel     string // slash-separated path relative to the source root
	tool    string
	origin  string
	role    fileRole
	data    []byte
	patches []patch
	lines   int64
	agentID string   // roleTopAgent / roleSubAgent
	meta    *srcFile // sidecar agent-<id>.meta.json of a subagent

	// Session identity, taken from the data (Claude: first sessionId; Codex:
	// session_meta.payload.id; Gemini: sessionId).
	sessHi, sessLo uint64
	hasSess        bool
	projectHash    string // Gemini
	firstTime      int    // index of the first kindTime patch, -1 if none
	startTime      int    // Gemini: index of the "startTime" patch, -1 if none
}

// unit is a group of files that is copied together with one time offset: a
// session plus its subagent transcripts.
type unit struct {
	key    string // rel path of the primary file
	keyH   uint64
	tool   string
	files  []*srcFile // primary first
	encCwd string     // Claude project folder name
	bytes  int64      // transcript bytes of the unit

	hasTime bool
	maxTime int64 // latest anchoring instant (Unix seconds)
	span    int64 // seconds between earliest and latest anchoring instant
}

// corpus is the discovered source corpus.
type corpus struct {
	units []*unit
	bytes int64
}

// discover walks root, reads and scans every transcript and groups them into
// units, sorted by path.
func discover(ctx context.Context, root string) (*corpus, error) {
	rels, metas, err := listSources(root)
	if err != nil {
		return nil, err
	}
	files := make([]*srcFile, 0, len(rels))
	for _, rel := range rels {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("discover: %w", err)
		}
		f, err := loadFile(root, rel)
		if err != nil {
			return nil, err
		}
		if f.role == roleSubAgent {
			if m := strings.TrimSuffix(rel, ".jsonl") + ".meta.json"; metas[m] {
				if f.meta, err = loadFile(root, m); err != nil {
					return nil, err
				}
			}
		}
		files = append(files, f)
	}
	c := &corpus{units: groupUnits(files)}
	for _, u := range c.units {
		u.finish()
		c.bytes += u.bytes
	}
	if c.bytes == 0 {
		return nil, fmt.Errorf("discover %s: no transcript bytes found", root)
	}
	return c, nil
}

// listSources returns the sorted transcript paths under root and an index of
// the subagent .meta.json sidecars, both relative and slash-separated.
func listSources(root string) ([]string, map[string]bool, error) {
	var rels []string
	metas := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "config" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		switch {
		case strings.HasSuffix(rel, ".meta.json"):
			metas[rel] = true
		case isTranscriptName(d.Name()) && toolOf(rel) != "":
			rels = append(rels, rel)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("walk source corpus %s: %w", root, err)
	}
	slices.Sort(rels)
	return rels, metas, nil
}

// isTranscriptName reports whether a file name denotes a transcript.
func isTranscriptName(name string) bool {
	switch {
	case strings.HasSuffix(name, ".meta.json"):
		return false
	case strings.HasSuffix(name, ".jsonl"), name == "raw_transcript":
		return true
	case strings.HasPrefix(name, "session-") && strings.HasSuffix(name, ".json"):
		return true
	}
	return false
}

// toolOf returns the tool a relative source path belongs to, or "".
func toolOf(rel string) string {
	tool, _, _ := strings.Cut(rel, "/")
	switch tool {
	case toolClaude, toolCodex, toolGemini:
		return tool
	}
	return ""
}

// loadFile reads, classifies and scans one source file.
func loadFile(root, rel string) (*srcFile, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, fmt.Errorf("read source: %w", err)
	}
	if len(data) > math.MaxInt32 {
		return nil, fmt.Errorf("source %s: %d bytes is too large", rel, len(data))
	}
	parts := strings.Split(rel, "/")
	f := &srcFile{rel: rel, tool: parts[0], origin: "root", data: data, firstTime: -1, startTime: -1}
	if len(parts) > 2 {
		f.origin = parts[1]
	}
	f.role, f.agentID = classify(f.tool, parts)
	f.patches = scan(data)
	f.lines = countLines(data)
	f.indexTimes()
	f.readIdentity()
	return f, nil
}

// classify derives the role (and subagent id) of a file from its path.
func classify(tool string, parts []string) (fileRole, string) {
	name := parts[len(parts)-1]
	if tool != toolClaude || !strings.HasPrefix(name, "agent-") || !strings.HasSuffix(name, ".jsonl") {
		return roleSession, ""
	}
	id := strings.TrimSuffix(strings.TrimPrefix(name, "agent-"), ".jsonl")
	if len(parts) >= 3 && parts[len(parts)-2] == "subagents" {
		return roleSubAgent, id
	}
	return roleTopAgent, id
}

// countLines counts physical lines: newline-terminated ones plus a final
// unterminated one.
func countLines(b []byte) int64 {
	n := int64(bytes.Count(b, []byte{'\n'}))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// readIdentity extracts the session id (and Gemini project hash) from the data.
func (f *srcFile) readIdentity() {
	var id string
	switch f.tool {
	case toolClaude:
		id = firstJSONString(f.data, `"sessionId":"`)
	case toolCodex:
		id = codexSessionID(f.data)
	case toolGemini:
		var doc struct {
			SessionID   string `json:"sessionId"`
			ProjectHash string `json:"projectHash"`
		}
		if json.Unmarshal(f.data, &doc) == nil {
			id, f.projectHash = doc.SessionID, doc.ProjectHash
		}
	}
	if hi, lo, ok := parseUUIDString(id); ok {
		f.sessHi, f.sessLo, f.hasSess = hi, lo, true
	}
}

// firstJSONString returns the string value following the first occurrence of
// key (which must include the opening quote of the value), or "".
func firstJSONString(data []byte, key string) string {
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return ""
	}
	v := data[i+len(key):]
	j := bytes.IndexByte(v, '"')
	if j < 0 {
		return ""
	}
	return string(v[:j])
}

// codexSessionID returns payload.id of the first session_meta line.
func codexSessionID(data []byte) string {
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		if !bytes.Contains(line, []byte(`"session_meta"`)) {
			continue
		}
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				ID string `json:"id"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "session_meta" {
			return rec.Payload.ID
		}
	}
	return ""
}

// parseUUIDString parses a canonical UUID string.
func parseUUIDString(s string) (hi, lo uint64, ok bool) {
	if len(s) != uuidLen {
		return 0, 0, false
	}
	hi, lo, _, ok = parseUUID([]byte(s), 0)
	return hi, lo, ok
}

// groupUnits attaches Claude subagent files to their parent session and
// returns the units sorted by primary path.
func groupUnits(files []*srcFile) []*unit {
	byPath := map[string]*unit{}
	bySession := map[string]*unit{} // "<dir>\x00<session uuid>" -> Claude session unit
	var units []*unit
	add := func(f *srcFile) *unit {
		u := &unit{key: f.rel, tool: f.tool, files: []*srcFile{f}}
		units = append(units, u)
		byPath[f.rel] = u
		return u
	}
	for _, f := range files {
		if f.role == roleSession {
			u := add(f)
			if f.tool == toolClaude && f.hasSess {
				bySession[sessionKey(path.Dir(f.rel), f)] = u
			}
		}
	}
	for _, f := range files {
		switch f.role {
		case roleSubAgent:
			sessDir := path.Dir(path.Dir(f.rel)) // <dir>/<stem>
			if u, ok := byPath[sessDir+".jsonl"]; ok {
				u.files = append(u.files, f)
			} else if u, ok := byPath[sessDir+"/"]; ok {
				u.files = append(u.files, f)
			} else {
				u := add(f)
				byPath[sessDir+"/"] = u
			}
		case roleTopAgent:
			if u, ok := bySession[sessionKey(path.Dir(f.rel), f)]; ok && f.hasSess {
				u.files = append(u.files, f)
			} else {
				add(f)
			}
		}
	}
	slices.SortFunc(units, func(a, b *unit) int { return strings.Compare(a.key, b.key) })
	return units
}

// sessionKey identifies a Claude session within a source directory.
func sessionKey(dir string, f *srcFile) string {
	return dir + "\x00" + uuidString(f.sessHi, f.sessLo)
}

// finish computes the unit's project folder, size, time anchor and the
// subagent-id patches (ids are rewritten per copy inside every file of the
// unit so they stay consistent with the renamed subagent files).
func (u *unit) finish() {
	u.keyH = fnv64([]byte(u.key))
	u.encCwd = encodedCwd(u.files[0])
	for _, f := range u.files {
		u.bytes += int64(len(f.data))
	}
	u.addAgentPatches()
	u.timeAnchor()
}

// encodedCwd returns the Claude project folder for a file: its source
// project folder when that already looks like an encoded cwd, else a
// synthetic one named after the origin.
func encodedCwd(f *srcFile) string {
	dir := path.Dir(f.rel)
	if f.role == roleSubAgent {
		dir = path.Dir(path.Dir(dir))
	}
	if base := path.Base(dir); len(base) > 1 && base[0] == '-' {
		return base
	}
	return "-synthetic-" + f.origin
}

// addAgentPatches adds kindAgent patches for every subagent id of the unit.
func (u *unit) addAgentPatches() {
	var ids []string
	for _, f := range u.files {
		if f.agentID != "" && len(f.agentID) < 256 {
			ids = append(ids, f.agentID)
		}
	}
	if len(ids) == 0 {
		return
	}
	slices.Sort(ids)
	for _, f := range u.files {
		for _, id := range ids {
			if extra := findAgentIDs(f.data, id, f.patches); len(extra) > 0 {
				f.patches = mergePatches(f.patches, extra)
			}
		}
		f.indexTimes()
	}
}

// indexTimes locates the first timestamp and the Gemini startTime patch.
func (f *srcFile) indexTimes() {
	f.firstTime, f.startTime = -1, -1
	for i := range f.patches {
		p := &f.patches[i]
		if p.kind != kindTime {
			continue
		}
		if f.firstTime < 0 {
			f.firstTime = i
		}
		if p.flags&flagStartTime != 0 && f.startTime < 0 {
			f.startTime = i
		}
	}
}

// timeAnchor computes the latest anchoring instant and the span of the unit.
// Structural timestamps (record timestamp / startTime / lastUpdated values)
// are preferred; timestamps quoted in free text (git logs, fixtures) are only
// used when a unit has no structural ones.
func (u *unit) timeAnchor() {
	for _, structural := range []bool{true, false} {
		lo, hi, ok := int64(math.MaxInt64), int64(math.MinInt64), false
		for _, f := range u.files {
			for i := range f.patches {
				p := &f.patches[i]
				if p.kind != kindTime || (structural && p.flags&flagStruct == 0) {
					continue
				}
				t := int64(p.a) - int64(p.zone)
				lo, hi, ok = min(lo, t), max(hi, t), true
			}
		}
		if ok {
			u.hasTime, u.maxTime, u.span = true, hi, hi-lo
			return
		}
	}
}
