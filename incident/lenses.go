package incident

import (
	"slices"
	"strings"

	"github.com/cortexhq/cortex"
)

// Names returns the names of the engine's lenses, sorted. Surfaces that
// work on every lens (the all-lens incident listing, the lens enums of the
// action registry) iterate this, so a new lens appears there without edits.
func Names() []string {
	var names []string
	for name := range Lenses() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Signals returns the signal names a lens can report.
func Signals(l Lens) []string { return slices.Clone(l.signals()) }

// ForID returns the lens whose incident ids start like id (the longest
// matching prefix wins: "skill-inc-…" is a skill incident, "inc-…" an abuse
// one), or a not-found error naming the known prefixes.
func ForID(id string) (Lens, error) {
	var best Lens
	var prefixes []string
	for _, name := range Names() {
		l := Lenses()[name]
		prefixes = append(prefixes, l.prefix()+"…")
		if strings.HasPrefix(id, l.prefix()) && (best == nil || len(l.prefix()) > len(best.prefix())) {
			best = l
		}
	}
	if best == nil {
		return nil, cortex.Errorf(cortex.CodeNotFound, "%q is no incident id (ids start with %s)", id, strings.Join(prefixes, ", "))
	}
	return best, nil
}

// BySeverity orders incidents of different lenses: the most severe label
// first (labels mean the same on every lens), then as each lens ranks its
// own (score, newest, id).
func BySeverity(a, b cortex.Incident) int {
	if r := LabelRank(a.Label) - LabelRank(b.Label); r != 0 {
		return r
	}
	return byScore(a, b)
}

// LabelRank orders priority labels, most severe first (critical 0, high
// 1, medium 2, low 3; unknown labels last). Labels mean the same on every
// lens, so an all-lens listing sorts by them before the lens's own score.
func LabelRank(label string) int {
	switch label {
	case "critical":
		return 0
	case "high":
		return 1
	case "medium":
		return 2
	case "low":
		return 3
	}
	return 4
}
