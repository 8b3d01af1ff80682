package detection

import (
	"bytes"
	"context"
	"encoding/json"
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
	obs, corpora, err := Observe(ctx, db, roots, o.Labels, say)
	if err != nil {
		return Result{}, err
	}
	return Result{Report: Score(o.Labels, obs, corpora), Incidents: obs}, nil
}

// Observe lists the incidents of every lens in the sessions of the
// reviewed files of labels (roots: corpus name → absolute root) and says
// what Score needs of the files: their lines' times and sessions.
func Observe(ctx context.Context, db *sqlite.DB, roots map[string]string, labels []Label, say func(string, ...any)) ([]Observed, Corpora, error) {
	srcs, err := db.RowSources(ctx)
	if err != nil {
		return nil, Corpora{}, err
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
	c := Corpora{Times: map[string]map[int64]time.Time{}, SessionOf: map[string]string{}}
	locOf := map[int64]Loc{}
	fileSessions := map[string]map[string]bool{} // every session of each file
	for _, s := range srcs {
		r, ok := ref(s.Path)
		if !ok {
			continue
		}
		k := fileKey(r.corpus, r.file)
		locOf[s.ID] = Loc{r.file, s.Line}
		if c.Times[k] == nil {
			c.Times[k] = map[int64]time.Time{}
		}
		if _, seen := c.Times[k][s.Line]; !seen && !s.Timestamp.IsZero() {
			c.Times[k][s.Line] = s.Timestamp
		}
		if s.Session != "" && c.SessionOf[k] == "" {
			c.SessionOf[k] = s.Session
		}
		if s.Session != "" {
			if fileSessions[k] == nil {
				fileSessions[k] = map[string]bool{}
			}
			fileSessions[k][s.Session] = true
		}
	}
	// Lines the store holds no row of (bookkeeping, records another file
	// already held) still have their times in the file.
	sessions := map[string]bool{}
	for _, l := range labels {
		k := fileKey(l.Corpus, l.File)
		if l.Reviewed {
			if root, ok := roots[l.Corpus]; ok {
				fileTimes(filepath.Join(root, filepath.FromSlash(l.File)), c.Times, k)
			}
		}
		if l.Session != "" && c.SessionOf[k] == "" {
			c.SessionOf[k] = l.Session
		}
	}
	for _, l := range labels {
		k := fileKey(l.Corpus, l.File)
		if l.Reviewed {
			for s := range fileSessions[k] {
				sessions[l.Corpus+"\x00"+s] = true
			}
		}
		if l.Session != "" {
			sessions[l.Corpus+"\x00"+l.Session] = true
		}
	}
	c.Sessions = map[string][]string{}
	for k, ss := range fileSessions {
		for s := range ss {
			c.Sessions[k] = append(c.Sessions[k], s)
		}
		slices.Sort(c.Sessions[k])
	}
	var list []string
	for s := range sessions {
		list = append(list, s)
	}
	slices.Sort(list)
	eng := incident.New(db)
	var out []Observed
	for i, cs := range list {
		if i%25 == 0 {
			say("reading sessions %d/%d", i, len(list))
		}
		corpus, sess, _ := strings.Cut(cs, "\x00")
		for _, name := range Lenses {
			l, _ := incident.LensByName(name)
			inc, err := eng.Incidents(ctx, l, cortex.IncidentParams{Session: sess, Limit: incident.MaxLimit})
			if err != nil {
				return nil, Corpora{}, fmt.Errorf("%s incidents of session %s: %w", name, sess, err)
			}
			for _, x := range inc.Incidents {
				inv, err := eng.Investigate(ctx, l, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{
					Session: sess, IncidentID: x.ID}})
				if err != nil || len(inv.Bundles) != 1 {
					return nil, Corpora{}, fmt.Errorf("investigating %s: %v", x.ID, err)
				}
				o := observe(inv.Bundles[0], locOf)
				o.Corpus, o.Session = corpus, sess
				out = append(out, o)
			}
		}
	}
	return out, c, nil
}

// fileTimes adds the times of a file's lines that times lacks: a JSONL
// line's "timestamp", a chat document's messages' (by message index).
func fileTimes(path string, times map[string]map[int64]time.Time, k string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if times[k] == nil {
		times[k] = map[int64]time.Time{}
	}
	put := func(n int64, ts string) {
		if _, ok := times[k][n]; ok || ts == "" {
			return
		}
		if t, err := cortex.ParseTimestamp(ts); err == nil {
			times[k][n] = t
		}
	}
	var doc struct {
		Messages []struct {
			Timestamp string `json:"timestamp"`
		} `json:"messages"`
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' && json.Unmarshal(trimmed, &doc) == nil && len(doc.Messages) > 0 {
		for i, m := range doc.Messages {
			put(int64(i+1), m.Timestamp)
		}
		return
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		var rec struct {
			Timestamp string `json:"timestamp"`
		}
		if json.Unmarshal(line, &rec) == nil {
			put(int64(i+1), rec.Timestamp)
		}
	}
}

// observe turns an investigated incident into what Score compares.
func observe(b cortex.Bundle, locOf map[int64]Loc) Observed {
	inc := b.Incident
	o := Observed{Lens: inc.Lens, ID: inc.ID, Signals: inc.SignalsPresent, Score: inc.Score}
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
	o.Locs = locsOf(ids, locOf)
	perFile := map[string]int{}
	for _, l := range o.Locs {
		perFile[l.File]++
	}
	for f, n := range perFile {
		if n > perFile[o.File] || n == perFile[o.File] && f < o.File {
			o.File = f
		}
	}
	for _, l := range o.Locs {
		if l.File == o.File {
			o.Lines = append(o.Lines, l.Line)
		}
	}
	s := cortex.Summarize(b)
	var shown []int64
	for _, r := range s.SignalAnchors {
		shown = append(shown, r.ID)
	}
	for _, r := range s.UserWords {
		shown = append(shown, r.ID)
	}
	o.Shown = locsOf(shown, locOf)
	return o
}

// fileRef is a file as labels name it: its corpus and its path in it.
type fileRef struct{ corpus, file string }

func locsOf(ids []int64, locOf map[int64]Loc) []Loc {
	var out []Loc
	for _, id := range ids {
		if l, ok := locOf[id]; ok && l.Line > 0 && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b Loc) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return int(a.Line - b.Line)
	})
	return out
}
