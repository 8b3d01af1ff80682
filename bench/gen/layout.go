package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
)

// outFile is one planned output: a source file and where its copy goes
// (slash-separated, relative to Options.OutDir).
type outFile struct {
	src     *srcFile
	rel     string
	metaRel string // subagent .meta.json sidecar, if any
}

// planner names the outputs of one run and keeps names unique.
type planner struct {
	seed int64
	used map[string]struct{}
}

// claim reserves rel if it is free.
func (p *planner) claim(rel string) bool {
	if _, ok := p.used[rel]; ok {
		return false
	}
	p.used[rel] = struct{}{}
	return true
}

// plan returns the output paths of unit u in copy k shifted by sh.
func (p *planner) plan(u *unit, k int, sh shift) []outFile {
	switch u.tool {
	case toolCodex:
		return []outFile{{src: u.files[0], rel: p.codexName(u.files[0], k, sh)}}
	case toolGemini:
		return []outFile{{src: u.files[0], rel: p.geminiName(u.files[0], k, sh)}}
	}
	return p.claudeNames(u, k)
}

// claudeNames lays a Claude unit out as
// claude/projects/<encoded-cwd>/<session>.jsonl with subagents in
// <session>/subagents/ and 2.0.x agent files next to the session.
func (p *planner) claudeNames(u *unit, k int) []outFile {
	dir := "claude/projects/" + u.encCwd
	sess := ""
	outs := make([]outFile, 0, len(u.files))
	for _, f := range u.files {
		switch f.role {
		case roleSession:
			sess = p.claudeSession(dir, f, k)
			outs = append(outs, outFile{src: f, rel: dir + "/" + sess + ".jsonl"})
		case roleTopAgent:
			outs = append(outs, outFile{src: f, rel: p.agentName(dir, f, k)})
		case roleSubAgent:
			if sess == "" { // orphan subagents directory: name it after its folder
				sess = p.orphanSession(f, k)
			}
			rel := p.agentName(dir+"/"+sess+"/subagents", f, k)
			o := outFile{src: f, rel: rel}
			if f.meta != nil {
				o.metaRel = strings.TrimSuffix(rel, ".jsonl") + ".meta.json"
			}
			outs = append(outs, o)
		}
	}
	return outs
}

// claudeSession picks the session uuid used as file name: the transformed
// first sessionId of the file, else the transformed file stem, else a
// derived one; on a collision further uuids are derived.
func (p *planner) claudeSession(dir string, f *srcFile, k int) string {
	var name string
	switch hi, lo, ok := parseUUIDString(stem(f.rel)); {
	case f.hasSess:
		name = uuidString(mapUUID(p.seed, k, f.sessHi, f.sessLo))
	case ok:
		name = uuidString(mapUUID(p.seed, k, hi, lo))
	}
	for attempt := uint64(0); name == "" || !p.claim(dir+"/"+name+".jsonl"); attempt++ {
		name = p.derivedUUID(f.rel, k, attempt)
	}
	return name
}

// orphanSession names the session folder of subagents whose parent session
// file is not part of the corpus.
func (p *planner) orphanSession(f *srcFile, k int) string {
	folder := path.Base(path.Dir(path.Dir(f.rel)))
	if hi, lo, ok := parseUUIDString(folder); ok {
		return uuidString(mapUUID(p.seed, k, hi, lo))
	}
	return p.derivedUUID(folder, k, 0)
}

// agentName names a subagent transcript agent-<transformed id>.jsonl in dir.
func (p *planner) agentName(dir string, f *srcFile, k int) string {
	base := dir + "/agent-" + agentName(p.seed, k, f.agentID)
	rel := base + ".jsonl"
	for n := 2; !p.claim(rel); n++ {
		rel = fmt.Sprintf("%s-%d.jsonl", base, n)
	}
	return rel
}

// codexName lays a Codex rollout out as
// codex/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl using the
// shifted first timestamp and the transformed session_meta id.
func (p *planner) codexName(f *srcFile, k int, sh shift) string {
	id := p.sessionOrDerived(f, k)
	t := f.wallAt(f.firstTime, sh)
	for {
		y, mo, d, h, mi, s := splitWall(t)
		rel := fmt.Sprintf("codex/sessions/%04d/%02d/%02d/rollout-%04d-%02d-%02dT%02d-%02d-%02d-%s.jsonl",
			y, mo, d, y, mo, d, h, mi, s, id)
		if p.claim(rel) {
			return rel
		}
		t++ // collision: the next second
	}
}

// geminiName lays a Gemini chat out as
// gemini/tmp/<project hash>/chats/session-YYYY-MM-DDTHH-MM-<8 hex>.json using
// the shifted startTime and the transformed sessionId.
func (p *planner) geminiName(f *srcFile, k int, sh shift) string {
	id := p.sessionOrDerived(f, k)[:8]
	proj := f.projectHash
	if !isLowerHex(proj, 64) {
		sum := sha256.Sum256([]byte("cortex-synthetic:" + f.origin))
		proj = hex.EncodeToString(sum[:])
	}
	idx := f.startTime
	if idx < 0 {
		idx = f.firstTime
	}
	t := f.wallAt(idx, sh)
	for {
		y, mo, d, h, mi, _ := splitWall(t)
		rel := fmt.Sprintf("gemini/tmp/%s/chats/session-%04d-%02d-%02dT%02d-%02d-%s.json", proj, y, mo, d, h, mi, id)
		if p.claim(rel) {
			return rel
		}
		t += 60 // collision: the next minute
	}
}

// sessionOrDerived returns the transformed session id of f, or a derived one.
func (p *planner) sessionOrDerived(f *srcFile, k int) string {
	if f.hasSess {
		return uuidString(mapUUID(p.seed, k, f.sessHi, f.sessLo))
	}
	return p.derivedUUID(f.rel, k, 0)
}

// derivedUUID makes a v4 UUID from a name, the copy and an attempt counter.
func (p *planner) derivedUUID(name string, k int, attempt uint64) string {
	key := fnv64([]byte(name)) ^ mix64(attempt+1)
	return uuidString(mapUUID(p.seed, k, hash4(saltSession, p.seed, k, key), key))
}

// wallAt returns the shifted wall-clock seconds of time patch idx; without a
// timestamp it returns the unit's end time.
func (f *srcFile) wallAt(idx int, sh shift) int64 {
	if idx < 0 {
		return sh.end
	}
	return int64(f.patches[idx].a) + sh.delta
}

// splitWall splits wall-clock seconds into calendar fields.
func splitWall(t int64) (y, mo, d, h, mi, s int) {
	days, secs := t/86400, t%86400
	if secs < 0 {
		secs += 86400
		days--
	}
	y, mo, d = civilFromDays(days)
	return y, mo, d, int(secs / 3600), int(secs / 60 % 60), int(secs % 60)
}

// stem returns the file name of rel without its extension.
func stem(rel string) string {
	base := path.Base(rel)
	return strings.TrimSuffix(base, path.Ext(base))
}

// isLowerHex reports whether s is exactly n lower-case hex digits.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isDigit(c) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
