package detection

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/incident"
	"github.com/cortexhq/cortex/ingest"
	"github.com/cortexhq/cortex/sqlite"
)

// Corpus is a labelled corpus: its name (the labels' corpus) and root.
type Corpus struct {
	Name string
	Root string
}

// Options configure Run.
type Options struct {
	Corpora []Corpus
	Labels  []Label
	// DBPath is the database to build (it must not exist); empty: a
	// temporary one, removed afterwards.
	DBPath string
	// Progress, when set, hears what Run is doing.
	Progress func(string)
}

// Result is a run's report and the incidents it scored.
type Result struct {
	Report
	Incidents []Observed `json:"incidents,omitempty"`
}

// Run indexes the corpora into a fresh store, lists every lens's incidents
// session by session (every session of a reviewed file), investigates each
// one (its default summary is what a user reads first) and scores them
// against the labels.
func Run(ctx context.Context, o Options) (Result, error) {
	say := func(format string, a ...any) {
		if o.Progress != nil {
			o.Progress(fmt.Sprintf(format, a...))
		}
	}
	path := o.DBPath
	if path == "" {
		dir, err := os.MkdirTemp("", "cortex-detection-")
		if err != nil {
			return Result{}, cortex.WrapError(cortex.CodeInternal, err, "temporary store")
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "cortex.db")
	} else if _, err := os.Stat(path); err == nil {
		return Result{}, cortex.Errorf(cortex.CodeConflict, "database %s already exists; the detection benchmark needs a fresh one", path)
	}
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		return Result{}, err
	}
	defer db.Close()
	roots := map[string]string{}
	for _, c := range o.Corpora {
		abs, err := filepath.Abs(c.Root)
		if err != nil {
			return Result{}, cortex.WrapError(cortex.CodeInvalid, err, "corpus %s: %v", c.Name, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return Result{}, cortex.Errorf(cortex.CodeInvalid, "corpus %s: %s is not a folder", c.Name, c.Root)
		}
		roots[c.Name] = abs
		say("indexing %s (%s)", c.Name, abs)
		if _, err := ingest.Index(ctx, db, ingest.Options{Paths: []string{abs}, Hostname: "bench"}); err != nil {
			return Result{}, err
		}
	}
	obs, times, err := Observe(ctx, db, roots, o.Labels, say)
	if err != nil {
		return Result{}, err
	}
	return Result{Report: Score(o.Labels, obs, times), Incidents: obs}, nil
}

// Observe lists the incidents of every lens in the sessions of the
// reviewed files of labels (roots: corpus name → absolute root) and maps
// the files' lines to times.
func Observe(ctx context.Context, db *sqlite.DB, roots map[string]string, labels []Label, say func(string, ...any)) ([]Observed, Times, error) {
	srcs, err := db.RowSources(ctx)
	if err != nil {
		return nil, nil, err
	}
	// A row's file as the labels name it: the corpus whose root holds it.
	refOf := map[string]fileRef{}
	ref := func(p string) (fileRef, bool) {
		if r, ok := refOf[p]; ok {
			return r, r.corpus != ""
		}
		for name, root := range roots {
			if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
				refOf[p] = fileRef{name, filepath.ToSlash(rel)}
				return refOf[p], true
			}
		}
		refOf[p] = fileRef{}
		return fileRef{}, false
	}
	wanted := map[string]bool{}
	for _, l := range labels {
		if l.Reviewed {
			wanted[fileKey(l.Corpus, l.File)] = true
		}
	}
	times := Times{}
	lineOf := map[int64]int64{}
	fileOfSession := map[string]fileRef{}
	var sessions []string
	for _, s := range srcs {
		r, ok := ref(s.Path)
		if !ok {
			continue
		}
		k := fileKey(r.corpus, r.file)
		lineOf[s.ID] = s.Line
		if times[k] == nil {
			times[k] = map[int64]time.Time{}
		}
		if _, seen := times[k][s.Line]; !seen {
			times[k][s.Line] = s.Timestamp
		}
		if s.Session != "" && wanted[k] {
			if _, seen := fileOfSession[s.Session]; !seen {
				fileOfSession[s.Session] = r
				sessions = append(sessions, s.Session)
			}
		}
	}
	slices.Sort(sessions)
	eng := incident.New(db)
	var out []Observed
	for i, sess := range sessions {
		if i%25 == 0 {
			say("reading sessions %d/%d", i, len(sessions))
		}
		for _, name := range Lenses {
			l, _ := incident.LensByName(name)
			list, err := eng.Incidents(ctx, l, cortex.IncidentParams{Session: sess, Limit: incident.MaxLimit})
			if err != nil {
				return nil, nil, fmt.Errorf("%s incidents of session %s: %w", name, sess, err)
			}
			for _, inc := range list.Incidents {
				inv, err := eng.Investigate(ctx, l, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{
					Session: sess, IncidentID: inc.ID}})
				if err != nil || len(inv.Bundles) != 1 {
					return nil, nil, fmt.Errorf("investigating %s: %v", inc.ID, err)
				}
				out = append(out, observe(inv.Bundles[0], lineOf, fileOfSession[sess]))
			}
		}
	}
	return out, times, nil
}

// observe turns an investigated incident into what Score compares.
func observe(b cortex.Bundle, lineOf map[int64]int64, f fileRef) Observed {
	inc := b.Incident
	o := Observed{Corpus: f.corpus, File: f.file, Lens: inc.Lens, ID: inc.ID, Signals: inc.SignalsPresent, Score: inc.Score}
	o.First, _ = cortex.ParseTimestamp(inc.FirstSeen)
	o.Last, _ = cortex.ParseTimestamp(inc.LastSeen)
	switch inc.Lens {
	case cortex.LensSkill:
		o.Subject = inc.SkillName
	case cortex.LensMCP:
		o.Subject = inc.MCPServer + "/" + inc.MCPTool
	case cortex.LensHook:
		o.Subject = inc.HookEvent + "|" + inc.HookName
	}
	var ids []int64
	add := func(p *int64) {
		if p != nil {
			ids = append(ids, *p)
		}
	}
	ids = append(ids, inc.AnchorLogIDs...)
	for _, r := range b.SignalAnchors {
		ids = append(ids, r.ID)
	}
	for _, r := range b.UserVoice {
		ids = append(ids, r.ID)
	}
	for _, r := range b.UserWords {
		ids = append(ids, r.ID)
	}
	for _, f := range b.Failures {
		add(f.CallLogID)
		add(f.ResultLogID)
	}
	for _, e := range b.MCPEvents {
		add(e.CallLogID)
		add(e.ResultLogID)
	}
	for _, e := range b.HookEvents {
		add(e.LogID)
	}
	for _, e := range b.SkillEvents {
		ids = append(ids, e.LogID)
	}
	o.Lines = linesOf(ids, lineOf)
	s := cortex.Summarize(b)
	var shown []int64
	for _, r := range s.SignalAnchors {
		shown = append(shown, r.ID)
	}
	for _, r := range s.UserWords {
		shown = append(shown, r.ID)
	}
	o.Shown = linesOf(shown, lineOf)
	return o
}

// fileRef is a file as labels name it: its corpus and its path in it.
type fileRef struct{ corpus, file string }

func linesOf(ids []int64, lineOf map[int64]int64) []int64 {
	var out []int64
	for _, id := range ids {
		if n, ok := lineOf[id]; ok && n > 0 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
