package detection

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// Observed is an incident as the benchmark sees it: its lens and subject,
// the file it is in and the lines it rests on.
type Observed struct {
	Corpus string `json:"corpus"`
	// File is the file most of the incident's rows are in, Session its
	// session (a session's records may be spread over several files, as
	// Entire's checkpoints keep them).
	File    string `json:"file"`
	Session string `json:"session"`
	Lens    string `json:"lens"`
	ID      string `json:"incident_id"`
	// Subject is the skill, MCP server/tool or hook "event|name" ("" for
	// friction and abuse).
	Subject string   `json:"subject,omitempty"`
	Signals []string `json:"signals"`
	Score   float64  `json:"score"`
	// Lines are the lines of the rows the incident rests on (anchors, the
	// user's acts and reaction, its calls and events) in File; Locs all of
	// them, in whatever file; Shown the places whose text its default
	// (summary) answer shows.
	Lines []int64 `json:"lines"`
	Locs  []Loc   `json:"-"`
	Shown []Loc   `json:"shown,omitempty"`
	// First and Last bound the incident.
	First time.Time `json:"first_seen"`
	Last  time.Time `json:"last_seen"`
}

// Loc is a line of a corpus file.
type Loc struct {
	File string `json:"file"`
	Line int64  `json:"line"`
}

// Corpora is what Score knows of the labelled files: each file's lines'
// times (for matching a label to an incident's span) and its session.
type Corpora struct {
	Times     map[string]map[int64]time.Time // by fileKey
	SessionOf map[string]string              // by fileKey: its first session
	// Sessions are every session of each file (by fileKey): a reviewed
	// file's sessions are all reviewed.
	Sessions map[string][]string
}

func fileKey(corpus, file string) string { return corpus + "\x00" + file }

// Counts are the figures of one lens (or all) in one scope.
type Counts struct {
	Incidents int `json:"incidents"`
	True      int `json:"true_incidents"`
	Positives int `json:"labelled"`
	Found     int `json:"found"`
	// Decisive counts the found labels that name a decisive line, and
	// Shown those whose decisive line the answer shows.
	Decisive int `json:"decisive"`
	Shown    int `json:"decisive_shown"`
}

// Precision is true incidents / incidents (1 when there are none).
func (c Counts) Precision() float64 { return ratio(c.True, c.Incidents) }

// Recall is found labels / labelled moments (1 when there are none).
func (c Counts) Recall() float64 { return ratio(c.Found, c.Positives) }

// DecisiveRatio is decisive lines shown / decisive lines of found labels.
func (c Counts) DecisiveRatio() float64 { return ratio(c.Shown, c.Decisive) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func (c *Counts) add(o Counts) {
	c.Incidents += o.Incidents
	c.True += o.True
	c.Positives += o.Positives
	c.Found += o.Found
	c.Decisive += o.Decisive
	c.Shown += o.Shown
}

// Scope is the figures of one corpus or repository: per lens, and all
// lenses together.
type Scope struct {
	Name   string            `json:"name"`
	Lenses map[string]Counts `json:"lenses"`
	All    Counts            `json:"all"`
}

// Miss is a labelled moment no incident found; FalseIncident an incident
// no positive label supports (with the negative label it met, if any).
type Miss struct {
	Label Label `json:"label"`
	// Other is set when an incident of another lens found it.
	Other string `json:"found_by_other_lens,omitempty"`
}

// FalseIncident is an incident no positive label supports.
type FalseIncident struct {
	Incident Observed `json:"incident"`
	// Negative is the label that says it is not one, when there is one.
	Negative *Label `json:"negative_label,omitempty"`
}

// Report is what Score found.
type Report struct {
	Corpora []Scope `json:"corpora"`
	Repos   []Scope `json:"repositories"`
	// Unreviewed lists labelled files without a review record, and
	// Unlabelled incidents in files nobody reviewed (not scored).
	Unreviewed []string        `json:"unreviewed_files,omitempty"`
	Unscored   int             `json:"unscored_incidents"`
	Misses     []Miss          `json:"misses"`
	False      []FalseIncident `json:"false_incidents"`
	// DecisiveMissing are found labels whose decisive line the answer
	// does not show.
	DecisiveMissing []Label `json:"decisive_missing"`
}

// Score compares the incidents with the labels, session by session: only
// sessions with a reviewed file are scored (an incident elsewhere is
// counted in Unscored). An incident is true when a positive label of its
// session and lens (and subject) has a line among the incident's rows or
// within its span; a positive label is found when such an incident exists;
// its decisive line is shown when one of those incidents shows it.
func Score(labels []Label, obs []Observed, c Corpora) Report {
	var rep Report
	// A label's session: the file's session its id starts (readers write
	// short ids), else the file's first, else the label's own.
	sessionOf := func(l Label) string {
		k := fileKey(l.Corpus, l.File)
		if l.Session != "" {
			for _, s := range c.Sessions[k] {
				if strings.HasPrefix(s, l.Session) {
					return l.Corpus + "\x00" + s
				}
			}
		}
		if s := c.SessionOf[k]; s != "" {
			return l.Corpus + "\x00" + s
		}
		if l.Session != "" {
			return l.Corpus + "\x00" + l.Session
		}
		return k // a file without rows: its own unit
	}
	reviewed := map[string]bool{}
	repoOf := map[string]string{}
	corpusOf := map[string]string{}
	for _, l := range labels {
		units := []string{sessionOf(l)}
		if l.Reviewed {
			for _, s := range c.Sessions[fileKey(l.Corpus, l.File)] {
				units = append(units, l.Corpus+"\x00"+s)
			}
		}
		for _, u := range units {
			if l.Reviewed {
				reviewed[u] = true
			}
			if _, ok := repoOf[u]; !ok || l.Reviewed {
				repoOf[u], corpusOf[u] = l.Corpus+":"+RepoOf(l), l.Corpus
			}
		}
	}
	seen := map[string]bool{}
	byUnit := map[string][]Label{}
	for _, l := range labels {
		if !l.Moment() {
			continue
		}
		u := sessionOf(l)
		byUnit[u] = append(byUnit[u], l)
		if !reviewed[u] && !seen[u] {
			seen[u] = true
			rep.Unreviewed = append(rep.Unreviewed, l.Corpus+":"+l.File)
		}
	}
	type key struct{ scope, lens string }
	counts := map[key]*Counts{}
	get := func(scope, lens string) *Counts {
		k := key{scope, lens}
		if counts[k] == nil {
			counts[k] = &Counts{}
		}
		return counts[k]
	}
	bump := func(u, lens string, f func(*Counts)) {
		f(get("corpus:"+corpusOf[u], lens))
		f(get("repo:"+repoOf[u], lens))
	}
	for u := range reviewed {
		get("corpus:"+corpusOf[u], "")
		get("repo:"+repoOf[u], "")
	}
	unitOf := func(o Observed) string { return o.Corpus + "\x00" + o.Session }
	// Incidents.
	for _, o := range obs {
		u := unitOf(o)
		if !reviewed[u] {
			rep.Unscored++
			continue
		}
		var neg *Label
		hit := false
		for i, l := range byUnit[u] {
			if !matches(l, o, c.Times[fileKey(l.Corpus, l.File)]) {
				continue
			}
			if l.Positive() {
				hit = true
				break
			}
			if neg == nil {
				neg = &byUnit[u][i]
			}
		}
		bump(u, o.Lens, func(c *Counts) {
			c.Incidents++
			if hit {
				c.True++
			}
		})
		if !hit {
			rep.False = append(rep.False, FalseIncident{Incident: o, Negative: neg})
		}
	}
	// Labels.
	for u, ls := range byUnit {
		if !reviewed[u] {
			continue
		}
		for _, l := range ls {
			if !l.Positive() {
				continue
			}
			times := c.Times[fileKey(l.Corpus, l.File)]
			found, shown, other := false, false, ""
			for _, o := range obs {
				if unitOf(o) != u {
					continue
				}
				if !matches(l, o, times) {
					if other == "" && o.Lens != l.Lens && overlapsLines(l, o, times) {
						other = o.Lens + " " + o.ID
					}
					continue
				}
				found = true
				if l.DecisiveLine != nil && slices.Contains(o.Shown, Loc{l.File, *l.DecisiveLine}) {
					shown = true
				}
			}
			bump(u, l.Lens, func(c *Counts) {
				c.Positives++
				if found {
					c.Found++
					if l.DecisiveLine != nil {
						c.Decisive++
						if shown {
							c.Shown++
						}
					}
				}
			})
			if !found {
				rep.Misses = append(rep.Misses, Miss{Label: l, Other: other})
			} else if l.DecisiveLine != nil && !shown {
				rep.DecisiveMissing = append(rep.DecisiveMissing, l)
			}
		}
	}
	scopes := map[string]*Scope{}
	for k, c := range counts {
		s := scopes[k.scope]
		if s == nil {
			name := strings.SplitN(k.scope, ":", 2)[1]
			s = &Scope{Name: name, Lenses: map[string]Counts{}}
			scopes[k.scope] = s
		}
		if k.lens != "" {
			s.Lenses[k.lens] = *c
			s.All.add(*c)
		}
	}
	names := make([]string, 0, len(scopes))
	for n := range scopes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.HasPrefix(n, "corpus:") {
			rep.Corpora = append(rep.Corpora, *scopes[n])
		} else {
			rep.Repos = append(rep.Repos, *scopes[n])
		}
	}
	sort.Slice(rep.Misses, func(i, j int) bool { return labelLess(rep.Misses[i].Label, rep.Misses[j].Label) })
	sort.Slice(rep.DecisiveMissing, func(i, j int) bool { return labelLess(rep.DecisiveMissing[i], rep.DecisiveMissing[j]) })
	sort.Slice(rep.False, func(i, j int) bool {
		a, b := rep.False[i].Incident, rep.False[j].Incident
		if a.File != b.File {
			return a.File < b.File
		}
		return a.First.Before(b.First)
	})
	return rep
}

func labelLess(a, b Label) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Lines[0] < b.Lines[0]
}

// matches reports whether incident o stands for label l: the same lens,
// a compatible subject, and one of l's lines among o's lines or within
// o's span.
func matches(l Label, o Observed, times map[int64]time.Time) bool {
	return l.Lens == o.Lens && sameSubject(l.Lens, l.Subject, o.Subject) && overlapsLines(l, o, times)
}

func overlapsLines(l Label, o Observed, times map[int64]time.Time) bool {
	for _, n := range l.Lines {
		if slices.Contains(o.Locs, Loc{l.File, n}) {
			return true
		}
		if t, ok := times[n]; ok && !t.Before(o.First) && !t.After(o.Last) {
			return true
		}
	}
	return false
}

// sameSubject compares a label's subject with an incident's: friction
// and abuse have none; a skill matches with or without its plugin
// ("entire:search" and "search"); an MCP server matches its tools; a hook
// matches its event or its name.
func sameSubject(lens, want, got string) bool {
	want, got = strings.ToLower(strings.TrimSpace(want)), strings.ToLower(got)
	if want == "" {
		return true
	}
	switch lens {
	case "skill":
		return want == got || afterColon(want) == afterColon(got)
	case "mcp":
		ws, wt, _ := strings.Cut(want, "/")
		gs, gt, _ := strings.Cut(got, "/")
		return ws == gs && (wt == "" || wt == gt)
	case "hook":
		for _, part := range strings.Split(got, "|") {
			if strings.TrimSpace(part) == want {
				return true
			}
		}
		return strings.Contains(got, want)
	}
	return true
}

func afterColon(s string) string {
	if i := strings.LastIndex(s, ":"); i >= 0 {
		return s[i+1:]
	}
	return s
}
