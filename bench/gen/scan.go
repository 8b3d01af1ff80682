package gen

import (
	"bytes"
	"slices"
)

// patchKind says what a patch rewrites.
type patchKind uint8

const (
	kindUUID  patchKind = iota + 1 // 36-byte 8-4-4-4-12 hex UUID
	kindTime                       // the 19-byte "YYYY-MM-DDTHH:MM:SS" head of an RFC 3339 timestamp
	kindID                         // tail of a toolu_/msg_/req_/call_ id
	kindAgent                      // a Claude subagent id (hex, 7–17 chars)
)

// Patch flags.
const (
	flagUpper     uint8 = 1 << iota // UUID written with upper-case hex digits
	flagStruct                      // timestamp is the value of a record's timestamp/startTime/lastUpdated key
	flagStartTime                   // timestamp is the value of a "startTime" key (Gemini)
	flagHex                         // id suffix is lower-case hex only
)

// Scanner sizes.
const (
	uuidLen     = 36 // "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
	timeLen     = 19 // "2006-01-02T15:04:05"; fraction and zone are never touched
	idTail      = 6  // how many trailing id characters are mutated per copy
	minIDSuffix = 20 // shortest toolu_/msg_/req_/call_ suffix treated as an id
)

// patch is one same-length rewrite at a fixed offset of a source file. The
// scan happens once per source file; every copy then re-renders the patches
// with copy-specific values, so the per-copy cost is a memcpy plus small
// formatted writes.
type patch struct {
	a     uint64 // UUID: high 64 bits; time: wall-clock seconds; id/agent: token key
	b     uint64 // UUID: low 64 bits
	off   int32  // byte offset in the source file
	zone  int32  // time: zone offset east of UTC in seconds
	n     uint8  // byte length for kindID and kindAgent
	kind  patchKind
	flags uint8
}

// size returns how many source bytes the patch replaces.
func (p *patch) size() int {
	switch p.kind {
	case kindUUID:
		return uuidLen
	case kindTime:
		return timeLen
	default:
		return int(p.n)
	}
}

// scan finds every UUID, RFC 3339 timestamp and API-style id in src and
// returns the patches sorted by offset. It is a hand-written single pass per
// trigger byte ('-' for UUIDs and timestamps, '_' for ids) built on the
// vectorised bytes.IndexByte.
func scan(src []byte) []patch {
	out := scanDashes(src, nil)
	ids := scanIDs(src, nil)
	if len(ids) == 0 {
		return out
	}
	return mergePatches(out, ids)
}

// scanDashes finds UUIDs and timestamps. Both shapes are located from their
// first '-': a UUID has it at offset 8, a timestamp at offset 4.
func scanDashes(src []byte, out []patch) []patch {
	end := 0 // first byte not covered by a previous patch
	for i := 0; i < len(src); {
		j := bytes.IndexByte(src[i:], '-')
		if j < 0 {
			break
		}
		p := i + j
		i = p + 1
		if s := p - 8; s >= end {
			if hi, lo, upper, ok := parseUUID(src, s); ok {
				pt := patch{kind: kindUUID, off: int32(s), a: hi, b: lo}
				if upper {
					pt.flags |= flagUpper
				}
				out = append(out, pt)
				end, i = s+uuidLen, s+uuidLen
				continue
			}
		}
		if s := p - 4; s >= end {
			if wall, zone, ok := parseTimestamp(src, s); ok {
				out = append(out, patch{kind: kindTime, off: int32(s), a: uint64(wall), zone: int32(zone), flags: timeFlags(src, s)})
				end, i = s+timeLen, s+timeLen
			}
		}
	}
	return out
}

// timeFlags classifies the timestamp at s by the JSON key that precedes it:
// the values of timestamp/lastUpdated/startTime keys anchor a session in time.
func timeFlags(src []byte, s int) uint8 {
	head := src[max(0, s-16):s]
	switch {
	case hasKey(head, "startTime"):
		return flagStruct | flagStartTime
	case hasKey(head, "timestamp"), hasKey(head, "lastUpdated"):
		return flagStruct
	}
	return 0
}

// hasKey reports whether head ends with `"key":"` or `"key": "`.
func hasKey(head []byte, key string) bool {
	if !bytes.HasSuffix(head, []byte(`"`)) {
		return false
	}
	head = head[:len(head)-1]
	head = bytes.TrimSuffix(head, []byte(" "))
	if !bytes.HasSuffix(head, []byte(`":`)) {
		return false
	}
	head = head[:len(head)-2]
	return bytes.HasSuffix(head, []byte(key)) && len(head) > len(key) && head[len(head)-len(key)-1] == '"'
}

// scanIDs finds toolu_/msg_/req_/call_ ids with an alphanumeric suffix of at
// least minIDSuffix characters that contains a digit (so identifiers such as
// call_id or msg_count in code are left alone).
func scanIDs(src []byte, out []patch) []patch {
	for i := 0; i < len(src); {
		j := bytes.IndexByte(src[i:], '_')
		if j < 0 {
			break
		}
		p := i + j
		i = p + 1
		start, ok := idStart(src, p)
		if !ok {
			continue
		}
		e, digit, hex := p+1, false, true
		for e < len(src) && isAlnum(src[e]) {
			c := src[e]
			digit = digit || isDigit(c)
			hex = hex && (isDigit(c) || ('a' <= c && c <= 'f'))
			e++
		}
		if e-(p+1) < minIDSuffix || !digit {
			continue
		}
		pt := patch{kind: kindID, off: int32(e - idTail), n: idTail, a: fnv64(src[start:e])}
		if hex {
			pt.flags |= flagHex
		}
		out = append(out, pt)
		i = e
	}
	return out
}

// idStart reports where the id whose '_' is at p starts, if the bytes before
// p are one of the API id prefixes (toolu, msg, req, call) preceded by a
// non-alphanumeric byte.
func idStart(src []byte, p int) (int, bool) {
	for _, pre := range [...]string{"toolu", "msg", "req", "call"} {
		s := p - len(pre)
		if s < 0 || string(src[s:p]) != pre {
			continue
		}
		if s > 0 && (isAlnum(src[s-1]) || src[s-1] == '_') {
			return 0, false
		}
		return s, true
	}
	return 0, false
}

// findAgentIDs returns patches for every occurrence of id in src that is not
// glued to other alphanumerics and does not overlap an existing patch.
func findAgentIDs(src []byte, id string, existing []patch) []patch {
	var out []patch
	key := fnv64([]byte(id))
	for i := 0; i < len(src); {
		j := bytes.Index(src[i:], []byte(id))
		if j < 0 {
			break
		}
		s := i + j
		e := s + len(id)
		i = e
		if (s > 0 && isAlnum(src[s-1])) || (e < len(src) && isAlnum(src[e])) {
			continue
		}
		if overlaps(existing, s, e) {
			continue
		}
		out = append(out, patch{kind: kindAgent, off: int32(s), n: uint8(len(id)), a: key})
	}
	return out
}

// overlaps reports whether [s, e) intersects any patch of the sorted list ps.
func overlaps(ps []patch, s, e int) bool {
	k, _ := slices.BinarySearchFunc(ps, s, func(p patch, off int) int { return int(p.off) - off })
	if k > 0 && int(ps[k-1].off)+ps[k-1].size() > s {
		return true
	}
	return k < len(ps) && int(ps[k].off) < e
}

// mergePatches merges two offset-sorted patch lists, dropping any patch of b
// that overlaps one of a.
func mergePatches(a, b []patch) []patch {
	out := make([]patch, 0, len(a)+len(b))
	i := 0
	for _, p := range b {
		for i < len(a) && a[i].off < p.off {
			out = append(out, a[i])
			i++
		}
		if overlaps(a, int(p.off), int(p.off)+p.size()) {
			continue
		}
		out = append(out, p)
	}
	return append(out, a[i:]...)
}

// parseUUID parses an 8-4-4-4-12 hex UUID starting at s.
func parseUUID(src []byte, s int) (hi, lo uint64, upper, ok bool) {
	if s < 0 || s+uuidLen > len(src) {
		return 0, 0, false, false
	}
	u := src[s : s+uuidLen]
	if u[8] != '-' || u[13] != '-' || u[18] != '-' || u[23] != '-' {
		return 0, 0, false, false
	}
	var v [2]uint64
	nib := 0
	for i, c := range u {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		d, isUp, good := unhex(c)
		if !good {
			return 0, 0, false, false
		}
		upper = upper || isUp
		v[nib/16] = v[nib/16]<<4 | uint64(d)
		nib++
	}
	return v[0], v[1], upper, true
}

// unhex decodes one hex digit and reports whether it was an upper-case letter.
func unhex(c byte) (v byte, upper, ok bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', false, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, false, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true, true
	}
	return 0, false, false
}

// parseTimestamp parses "YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)" at s and
// returns the wall-clock time as seconds since the Unix epoch (as if it were
// UTC) and the zone offset in seconds east of UTC.
func parseTimestamp(src []byte, s int) (wall int64, zone int, ok bool) {
	if s < 0 || s+timeLen+1 > len(src) {
		return 0, 0, false
	}
	t := src[s : s+timeLen]
	if t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' {
		return 0, 0, false
	}
	y, ok1 := digits(t[0:4])
	mo, ok2 := digits(t[5:7])
	d, ok3 := digits(t[8:10])
	h, ok4 := digits(t[11:13])
	mi, ok5 := digits(t[14:16])
	se, ok6 := digits(t[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || se > 60 {
		return 0, 0, false
	}
	zone, ok = parseZone(src, s+timeLen)
	if !ok {
		return 0, 0, false
	}
	wall = daysFromCivil(y, mo, d)*86400 + int64(h*3600+mi*60+se)
	return wall, zone, true
}

// parseZone skips an optional fraction at i and parses the mandatory zone
// designator that follows it.
func parseZone(src []byte, i int) (int, bool) {
	if i < len(src) && src[i] == '.' {
		j := i + 1
		for j < len(src) && isDigit(src[j]) {
			j++
		}
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i >= len(src) {
		return 0, false
	}
	switch src[i] {
	case 'Z':
		return 0, true
	case '+', '-':
		if i+6 > len(src) || src[i+3] != ':' {
			return 0, false
		}
		zh, ok1 := digits(src[i+1 : i+3])
		zm, ok2 := digits(src[i+4 : i+6])
		if !ok1 || !ok2 || zh > 23 || zm > 59 {
			return 0, false
		}
		off := zh*3600 + zm*60
		if src[i] == '-' {
			off = -off
		}
		return off, true
	}
	return 0, false
}

// digits parses a short run of ASCII digits.
func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// daysIn returns the number of days in month m of year y.
func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil converts a proleptic Gregorian date to days since 1970-01-01
// (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp + 3)
	if m > 12 {
		m -= 12
	}
	y = int(yoe + era*400)
	if m <= 2 {
		y++
	}
	return y, m, d
}
