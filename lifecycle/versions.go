// Package lifecycle closes the loop for skill authors: which versions of
// a skill ran (by the content hash of the body each run loaded), how
// healthy each skill and version is, whether a change helped (exact
// statistics, honest verdicts), small evidence-linked edits to the
// SKILL.md as a unified diff, and evals in Anthropic skill-creator's
// format. It is pure code over runs, loads, bodies and findings; the
// service layer reads them from the store.
package lifecycle

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aymanbagabas/go-udiff"

	"github.com/cortexhq/cortex"
)

// Run is one run of a skill (a skill-lens group, with or without a
// negative signal) and what it is charged with.
type Run struct {
	IncidentID string
	Tool       cortex.Tool
	Project    string
	Session    string
	Host       string
	Start      time.Time
	End        time.Time
	// Incident is set when the run carries a negative signal.
	Incident bool
	Score    float64
	Label    string
	Signals  []string
	// Version is the body version the run loaded ("" unknown: no load
	// of the run showed its body).
	Version string
	// Friction counts the friction incidents charged to the skill during
	// the run.
	Friction int
}

// Severe reports whether the run's incident is labelled high or critical.
func (r Run) Severe() bool { return r.Incident && (r.Label == "high" || r.Label == "critical") }

// Load is a skill load that showed a body.
type Load struct {
	Version string
	At      time.Time
	Tool    cortex.Tool
	Session string
	Kind    string
	Path    string
}

// Body is a stored body.
type Body struct {
	Version  string
	Text     string
	Lines    int
	Bytes    int
	Complete bool
}

// Version is one version of a skill.
type Version struct {
	// Version is the SHA-256 of the body; Short its first 12 hex digits;
	// Ordinal counts versions by first appearance (1 = the oldest).
	Version   string   `json:"version"`
	Short     string   `json:"short"`
	Ordinal   int      `json:"ordinal"`
	FirstSeen string   `json:"first_seen"`
	LastSeen  string   `json:"last_seen"`
	Loads     int      `json:"loads"`
	Runs      int      `json:"runs"`
	Incidents int      `json:"incidents"`
	Sessions  int      `json:"sessions"`
	Agents    []string `json:"agents"`
	Paths     []string `json:"paths,omitempty"`
	Lines     int      `json:"lines"`
	Bytes     int      `json:"bytes"`
	// Complete is false when no load showed the whole body (a Codex read
	// that printed exactly the lines it asked for may have stopped
	// short).
	Complete bool `json:"complete"`
	// Partials lists the partial reads folded into this version (their
	// text is the start of its body).
	Partials []string `json:"partials,omitempty"`
}

// Canonical maps each body version to the version it stands for: a
// partial body whose text starts a complete body of the same skill stands
// for it (the longest such), every other body for itself.
func Canonical(bodies map[string]Body) map[string]string {
	out := make(map[string]string, len(bodies))
	for v, b := range bodies {
		out[v] = v
		if b.Complete || b.Text == "" {
			continue
		}
		best := ""
		for w, c := range bodies {
			if w != v && c.Complete && len(c.Text) > len(b.Text) && strings.HasPrefix(c.Text, b.Text) &&
				(best == "" || len(c.Text) > len(bodies[best].Text)) {
				best = w
			}
		}
		if best != "" {
			out[v] = best
		}
	}
	return out
}

// Versions lists a skill's versions by first appearance: its loads and
// runs counted per version (partial reads folded into the complete body
// they start).
func Versions(loads []Load, runs []Run, bodies map[string]Body) []Version {
	canon := Canonical(bodies)
	by := map[string]*Version{}
	sessions := map[string]map[string]bool{}
	first := map[string]time.Time{}
	last := map[string]time.Time{}
	var order []string
	get := func(v string) *Version {
		if c, ok := canon[v]; ok {
			v = c
		}
		if x, ok := by[v]; ok {
			return x
		}
		b := bodies[v]
		x := &Version{Version: v, Short: short(v), Lines: b.Lines, Bytes: b.Bytes, Complete: b.Complete, Agents: []string{}}
		by[v], sessions[v] = x, map[string]bool{}
		order = append(order, v)
		return x
	}
	seen := func(x *Version, t time.Time) {
		if f, ok := first[x.Version]; !ok || t.Before(f) {
			first[x.Version] = t
		}
		if t.After(last[x.Version]) {
			last[x.Version] = t
		}
	}
	for _, l := range loads {
		x := get(l.Version)
		x.Loads++
		seen(x, l.At)
		sessions[x.Version][l.Session] = true
		if a := string(l.Tool); a != "" && !slices.Contains(x.Agents, a) {
			x.Agents = append(x.Agents, a)
		}
		if l.Path != "" && !slices.Contains(x.Paths, l.Path) && len(x.Paths) < 5 {
			x.Paths = append(x.Paths, l.Path)
		}
		if canon[l.Version] != l.Version && !slices.Contains(x.Partials, short(l.Version)) {
			x.Partials = append(x.Partials, short(l.Version))
		}
	}
	for _, r := range runs {
		if r.Version == "" {
			continue
		}
		x := get(r.Version)
		x.Runs++
		if r.Incident {
			x.Incidents++
		}
		seen(x, r.Start)
		sessions[x.Version][r.Session] = true
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := first[order[i]], first[order[j]]
		if !a.Equal(b) {
			return a.Before(b)
		}
		return order[i] < order[j]
	})
	out := make([]Version, 0, len(order))
	for i, v := range order {
		x := by[v]
		x.Ordinal = i + 1
		x.Sessions = len(sessions[v])
		x.FirstSeen, x.LastSeen = cortex.FormatTime(first[v]), cortex.FormatTime(last[v])
		sort.Strings(x.Agents)
		out = append(out, *x)
	}
	return out
}

// RunVersions sets each run's version to the canonical version of the
// latest body among its skill events (events maps a run's event ids to the
// body versions they showed; a complete body wins over a partial one).
func RunVersions(runs []Run, eventIDs [][]int64, events map[int64]string, bodies map[string]Body) {
	canon := Canonical(bodies)
	for i := range runs {
		best, bestComplete := "", false
		for _, id := range eventIDs[i] {
			v, ok := events[id]
			if !ok {
				continue
			}
			if c, ok := canon[v]; ok {
				v = c
			}
			complete := bodies[v].Complete
			if best == "" || complete || !bestComplete {
				best, bestComplete = v, complete
			}
		}
		runs[i].Version = best
	}
}

// short is a version's short form.
func short(v string) string {
	if len(v) > 12 {
		return v[:12]
	}
	return v
}

// Short returns the short form of a version hash (its first 12 hex
// digits).
func Short(v string) string { return short(v) }

// Resolve finds the version a user names: a version hash or a prefix of
// at least 4 hex digits, or "v<N>" (the Nth version by first appearance).
// ok is false when nothing or more than one version matches.
func Resolve(vs []Version, name string) (Version, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if n, ok := strings.CutPrefix(name, "v"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
		for _, v := range vs {
			if "v"+strconv.Itoa(v.Ordinal) == name {
				return v, true
			}
		}
		return Version{}, false
	}
	if len(name) < 4 {
		return Version{}, false
	}
	var found []Version
	for _, v := range vs {
		if strings.HasPrefix(v.Version, name) {
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		return Version{}, false
	}
	return found[0], true
}

// Diff returns the unified diff from body a to body b, labelled with
// their versions ("" when equal).
func Diff(a, b Body) string {
	return udiff.Unified("a/"+short(a.Version)+"/SKILL.md", "b/"+short(b.Version)+"/SKILL.md",
		withNewline(a.Text), withNewline(b.Text))
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
