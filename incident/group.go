package incident

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
)

// groupKey is what a group shares besides time: the place (agent, host,
// project, session) and the lens's subject (skill name and plugin; MCP
// server and tool; hook event, name and source; nothing for abuse).
type groupKey struct {
	Tool    cortex.Tool
	Host    string
	Project string
	Session string
	Subject [3]string
}

func (k groupKey) compare(o groupKey) int {
	for _, c := range [...]int{
		strings.Compare(string(k.Tool), string(o.Tool)),
		strings.Compare(k.Host, o.Host),
		strings.Compare(k.Project, o.Project),
		strings.Compare(k.Session, o.Session),
		strings.Compare(k.Subject[0], o.Subject[0]),
		strings.Compare(k.Subject[1], o.Subject[1]),
		strings.Compare(k.Subject[2], o.Subject[2]),
	} {
		if c != 0 {
			return c
		}
	}
	return 0
}

// member is one candidate of a lens: a skill event (skill lens) or an
// anchor row (abuse lens).
type member struct {
	ID    int64 // skill event id, or anchor log id
	LogID int64 // the logs row it comes from
	At    time.Time
	Key   groupKey
	Kind  string // event kind (skill lens)
	Term  string // abuse term (abuse lens)
	// Intensity rates the member's swearing (abuse lens, 1..5).
	Intensity int
	// until is the last failure of a loop candidate (friction lens; At
	// is its first): the span a loop there can fill.
	until time.Time
	// hook is the run as the hook lens's candidate read it, when that is
	// all the detectors need (it printed nothing); nil: read the event.
	hook *cortex.HookEventRow
}

// anchor is a logs row that carries one or more signals of a group.
type anchor struct {
	LogID   int64
	At      time.Time
	Signals []string
	Term    string
}

// group is a candidate incident: members with one key, none further apart
// than the window from the previous one.
type group struct {
	Key     groupKey
	Members []member // chronological
	First   time.Time
	Last    time.Time

	// Set by the lens's detection.
	EventCount int
	Signals    map[string]int
	Anchors    []anchor
	Terms      []string
	// SignalEnd is the end of the span searched for signals.
	SignalEnd time.Time
	// Voice are the rows of the user's acts in the group's scope, and
	// Reaction the row of their reaction right after it (0: none).
	Voice    []int64
	Reaction int64
	// Calls are the classified tool calls of the group's scope (skill
	// lens).
	Calls []tcall
	// Attributed is what a friction group is charged to.
	Attributed []cortex.Attribution
	// CoActive are the other skills active in a skill run's scope.
	CoActive []string
	// lens holds a lens's own state for scoring and evidence.
	lens any
}

// addAnchor records signal on row (merging with an earlier anchor of the
// same row).
func (g *group) addAnchor(logID int64, at time.Time, signal, term string) {
	if g.Signals == nil {
		g.Signals = map[string]int{}
	}
	g.Signals[signal]++
	for i := range g.Anchors {
		if g.Anchors[i].LogID == logID {
			if !slices.Contains(g.Anchors[i].Signals, signal) {
				g.Anchors[i].Signals = append(g.Anchors[i].Signals, signal)
			}
			return
		}
	}
	g.Anchors = append(g.Anchors, anchor{LogID: logID, At: at, Signals: []string{signal}, Term: term})
}

// addAnchorRow marks row as evidence of signal without counting the
// signal again (the further calls of one loop).
func (g *group) addAnchorRow(logID int64, at time.Time, signal string) {
	for i := range g.Anchors {
		if g.Anchors[i].LogID == logID {
			if !slices.Contains(g.Anchors[i].Signals, signal) {
				g.Anchors[i].Signals = append(g.Anchors[i].Signals, signal)
			}
			return
		}
	}
	g.Anchors = append(g.Anchors, anchor{LogID: logID, At: at, Signals: []string{signal}})
}

// present returns the sorted names of the signals counted at least once.
func (g *group) present() []string {
	out := make([]string, 0, len(g.Signals))
	for s, n := range g.Signals {
		if n > 0 {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// span returns the first and last instant of the group: its members and
// anchors.
func (g *group) span() (time.Time, time.Time) {
	first, last := g.First, g.Last
	for _, a := range g.Anchors {
		if a.At.IsZero() {
			continue
		}
		if a.At.Before(first) {
			first = a.At
		}
		if a.At.After(last) {
			last = a.At
		}
	}
	return first, last
}

// groupMembers sessionizes members: per key, in time order, a member more
// than window after the previous member starts a new group (a gap of
// exactly window stays in the group). The result is ordered by key, then
// time. ms is sorted in place.
func groupMembers(ms []member, window time.Duration) []*group {
	slices.SortFunc(ms, func(a, b member) int {
		if c := a.Key.compare(b.Key); c != 0 {
			return c
		}
		if c := a.At.Compare(b.At); c != 0 {
			return c
		}
		return cmpInt64(a.ID, b.ID)
	})
	var out []*group
	var cur *group
	for _, m := range ms {
		if cur == nil || cur.Key.compare(m.Key) != 0 || m.At.Sub(cur.Last) > window {
			cur = &group{Key: m.Key, First: m.At}
			out = append(out, cur)
		}
		cur.Members = append(cur.Members, m)
		cur.Last = m.At
	}
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// idHexLen is how many hex digits of the SHA-256 an incident id keeps
// (128 bits).
const idHexLen = 32

// identity is what a member contributes to its incident's id: its instant
// (milliseconds, UTC) and kind. Database row ids would do within one store
// but differ between two stores built from the same files (ingest order is
// concurrent), and an id must survive re-indexing.
func (m member) identity() string { return cortex.FormatTime(m.At) + "/" + m.Kind }

// stableID returns prefix + the first 32 hex digits of the SHA-256 of the
// canonical string
//
//	cortex-incident/v1 \n lens \n len:tool \n len:host \n len:project \n
//	len:session \n len:subject0 \n len:subject1 \n len:subject2 \n members
//
// where each field is preceded by its byte length (so no field can forge
// another) and members are the sorted member identities (see identity)
// joined by commas. Only the group's own members enter the hash: the id
// does not change with limits, search terms, filters, data outside the
// group, or a re-index of the same files into a new store.
func stableID(prefix, lens string, k groupKey, members []string) string {
	ids := slices.Clone(members)
	slices.Sort(ids)
	var b strings.Builder
	b.WriteString("cortex-incident/v1\n")
	b.WriteString(lens)
	for _, f := range [...]string{string(k.Tool), k.Host, k.Project, k.Session, k.Subject[0], k.Subject[1], k.Subject[2]} {
		b.WriteByte('\n')
		b.WriteString(strconv.Itoa(len(f)))
		b.WriteByte(':')
		b.WriteString(f)
	}
	b.WriteByte('\n')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(id)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return prefix + hex.EncodeToString(sum[:])[:idHexLen]
}

// sortIncidents orders incidents totally: score descending, then last seen
// descending, then id.
func sortIncidents(incs []cortex.Incident) { slices.SortFunc(incs, byScore) }

// byScore orders a lens's incidents: highest score, then newest, then id.
func byScore(a, b cortex.Incident) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	}
	if c := strings.Compare(b.LastSeen, a.LastSeen); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// toMembers turns the candidate rows a lens read (at most capRows+1, so
// that one more says the scan was cut) into members: it returns them,
// the rows scanned and whether more were left.
func toMembers[T any](cs []T, capRows int, toMember func(T) member) ([]member, int, bool) {
	truncated := len(cs) > capRows
	if truncated {
		cs = cs[:capRows]
	}
	ms := make([]member, len(cs))
	for i, c := range cs {
		ms[i] = toMember(c)
	}
	return ms, len(cs), truncated
}
