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
	File   string `json:"file"`
	Lens   string `json:"lens"`
	ID     string `json:"incident_id"`
	// Subject is the skill, MCP server/tool or hook "event|name" ("" for
	// friction and abuse).
	Subject string   `json:"subject,omitempty"`
	Signals []string `json:"signals"`
	Score   float64  `json:"score"`
	// Lines are the lines of the rows the incident rests on (anchors, the
	// user's acts and reaction, its calls and events); Shown those whose
	// text its default (summary) answer shows.
	Lines []int64 `json:"lines"`
	Shown []int64 `json:"shown,omitempty"`
	// First and Last bound the incident.
	First time.Time `json:"first_seen"`
	Last  time.Time `json:"last_seen"`
}

// Times maps a corpus file's lines to their rows' times (for matching a
// label to an incident's span).
type Times map[string]map[int64]time.Time

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

// Score compares the incidents with the labels. Only files with a review
// record are scored (an incident elsewhere is counted in Unscored). An
// incident is true when a positive label of its file and lens (and
// subject) has a line among the incident's lines or within its span; a
// positive label is found when such an incident exists; its decisive line
// is shown when one of those incidents shows it.
func Score(labels []Label, obs []Observed, times Times) Report {
	var rep Report
	reviewed := map[string]bool{}
	for _, l := range labels {
		if l.Reviewed {
			reviewed[fileKey(l.Corpus, l.File)] = true
		}
	}
	seenFile := map[string]bool{}
	for _, l := range labels {
		k := fileKey(l.Corpus, l.File)
		if l.Moment() && !reviewed[k] && !seenFile[k] {
			seenFile[k] = true
			rep.Unreviewed = append(rep.Unreviewed, l.Corpus+":"+l.File)
		}
	}
	byFile := map[string][]Label{}
	for _, l := range labels {
		if l.Moment() {
			k := fileKey(l.Corpus, l.File)
			byFile[k] = append(byFile[k], l)
		}
	}
	repoOfFile := map[string]string{}
	corpusOf := map[string]string{}
	for _, l := range labels {
		k := fileKey(l.Corpus, l.File)
		repoOfFile[k] = l.Corpus + ":" + RepoOf(l)
		corpusOf[k] = l.Corpus
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
	bump := func(k string, lens string, f func(*Counts)) {
		f(get("corpus:"+corpusOf[k], lens))
		f(get("repo:"+repoOfFile[k], lens))
	}
	for k := range reviewed {
		get("corpus:"+corpusOf[k], "")
		get("repo:"+repoOfFile[k], "")
	}
	// Incidents.
	for _, o := range obs {
		k := fileKey(o.Corpus, o.File)
		if !reviewed[k] {
			rep.Unscored++
			continue
		}
		var neg *Label
		hit := false
		for i, l := range byFile[k] {
			if !matches(l, o, times[k]) {
				continue
			}
			if l.Positive() {
				hit = true
				break
			}
			if neg == nil {
				neg = &byFile[k][i]
			}
		}
		bump(k, o.Lens, func(c *Counts) {
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
	for k, ls := range byFile {
		if !reviewed[k] {
			continue
		}
		for _, l := range ls {
			if !l.Positive() {
				continue
			}
			found, shown, other := false, false, ""
			for _, o := range obs {
				if fileKey(o.Corpus, o.File) != k {
					continue
				}
				if !matches(l, o, times[k]) {
					if other == "" && o.Lens != l.Lens && overlapsLines(l, o, times[k]) {
						other = o.Lens + " " + o.ID
					}
					continue
				}
				found = true
				if l.DecisiveLine != nil && slices.Contains(o.Shown, *l.DecisiveLine) {
					shown = true
				}
			}
			bump(k, l.Lens, func(c *Counts) {
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
		if slices.Contains(o.Lines, n) {
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
