package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fastjson"

	"github.com/cortexhq/cortex"
)

// str returns the string at the given key path, or "".
func str(v *fastjson.Value, keys ...string) string {
	if v == nil {
		return ""
	}
	x := v.Get(keys...)
	if x == nil || x.Type() != fastjson.TypeString {
		return ""
	}
	return clean(string(x.GetStringBytes()))
}

// rawStr returns the decoded bytes of the string at the key path without
// copying them (nil when absent or not a string). They are only valid
// while v is; compare them with string(…) == "…" or in a switch, which
// does not allocate.
func rawStr(v *fastjson.Value, keys ...string) []byte {
	if v == nil {
		return nil
	}
	x := v.Get(keys...)
	if x == nil || x.Type() != fastjson.TypeString {
		return nil
	}
	return x.GetStringBytes()
}

// boolAt reports whether the value at the key path is JSON true.
func boolAt(v *fastjson.Value, keys ...string) bool {
	if v == nil {
		return false
	}
	x := v.Get(keys...)
	return x != nil && x.Type() == fastjson.TypeTrue
}

// intAt returns the integer at the key path (numbers or numeric strings).
func intAt(v *fastjson.Value, keys ...string) (int64, bool) {
	if v == nil {
		return 0, false
	}
	x := v.Get(keys...)
	if x == nil {
		return 0, false
	}
	switch x.Type() {
	case fastjson.TypeNumber:
		f, err := x.Float64()
		if err != nil {
			return 0, false
		}
		return int64(f), true
	case fastjson.TypeString:
		n, err := strconv.ParseInt(strings.TrimSpace(string(x.GetStringBytes())), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// compactValue renders a JSON value as short text: strings unquoted, other
// values as compact JSON.
func compactValue(v *fastjson.Value) string {
	if v == nil {
		return ""
	}
	if v.Type() == fastjson.TypeString {
		return clean(string(v.GetStringBytes()))
	}
	return clean(string(v.MarshalTo(nil)))
}

// ContentKey hashes a record for use as a ledger key when the agent gave it
// no id. Ingest appends an occurrence number so identical lines stay
// distinct records.
func ContentKey(raw []byte) string {
	sum := sha256.Sum256(bytes.TrimSpace(raw))
	return "h:" + hex.EncodeToString(sum[:16])
}

// clock assigns record timestamps: the record's own, else the previous
// record's (marked estimated). Before the first timestamped record of a file
// the time is unknown: at returns the zero time, estimated, and the caller
// (ingest) fills in the next known time.
type clock struct {
	last time.Time
}

func (c *clock) at(s string) (t time.Time, estimated bool, warn string) {
	if s != "" {
		if t, err := cortex.ParseTimestamp(s); err == nil {
			c.last = t
			return t, false, ""
		}
		warn = "invalid timestamp " + strconv.Quote(cortex.CutUTF8(s, 64)) + "; using a neighbouring record's time"
	}
	return c.last, true, warn
}

// SplitConcatenated splits a line holding several JSON objects written back
// to back ("…}{…", seen in real Claude files) into the individual objects.
// It returns an error when the line is not a sequence of JSON objects.
func SplitConcatenated(line []byte) ([][]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var parts [][]byte
	var prev int64
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, ErrTruncated
			}
			return nil, err
		}
		end := dec.InputOffset()
		part := bytes.TrimSpace(line[prev:end])
		if len(part) == 0 || part[0] != '{' {
			return nil, errors.New("line holds a JSON value that is not an object")
		}
		parts = append(parts, part)
		prev = end
	}
	if len(parts) == 0 {
		return nil, errors.New("empty line")
	}
	return parts, nil
}

// putMeta stores non-empty values in a lazily created map.
func putMeta(m *map[string]string, k, v string) {
	if v == "" {
		return
	}
	if *m == nil {
		*m = make(map[string]string, 4)
	}
	(*m)[k] = v
}

// recentToolIDs bounds the tool-call ids a parser remembers to name the
// tool of a later result. Saved parser states keep exactly as many, so a
// read resumed from a checkpoint and a full read agree.
const recentToolIDs = 256

// boundedSet remembers up to n recent strings (tool-use ids, prompt hashes).
type boundedSet struct {
	n     int
	order []string
	m     map[string]string
}

func newBoundedSet(n int) *boundedSet { return &boundedSet{n: n, m: make(map[string]string)} }

func (s *boundedSet) put(k, v string) {
	if _, ok := s.m[k]; !ok {
		s.order = append(s.order, k)
		if len(s.order) > s.n {
			delete(s.m, s.order[0])
			s.order = s.order[1:]
		}
	}
	s.m[k] = v
}

// pairs returns the remembered keys and values, oldest first.
func (s *boundedSet) pairs() [][2]string {
	if len(s.order) == 0 {
		return nil
	}
	out := make([][2]string, len(s.order))
	for i, k := range s.order {
		out[i] = [2]string{k, s.m[k]}
	}
	return out
}

// reset empties s for reuse.
func (s *boundedSet) reset() *boundedSet {
	clear(s.m)
	s.order = s.order[:0]
	return s
}

func (s *boundedSet) get(k string) (string, bool) {
	v, ok := s.m[k]
	return v, ok
}

// NormalizeProject trims a project path and maps worktree checkouts to their
// repository root (".../repo/.worktrees/x" → ".../repo").
func NormalizeProject(p string) string {
	p = strings.TrimSpace(p)
	if p == "" || strings.Contains(p, "://") {
		return p
	}
	for _, marker := range []string{"/.claude/worktrees/", "/.worktrees/"} {
		if i := strings.Index(p, marker); i > 0 {
			return p[:i]
		}
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	return p
}
