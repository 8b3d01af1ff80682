package incident

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/voice"
)

// Verdicts of a signal calibration.
const (
	VerdictSeparates       = "separates"
	VerdictNotSeparating   = "does_not_separate"
	VerdictInverse         = "inverse"
	VerdictTooFew          = "too_few_sessions"
	VerdictNeverFired      = "never_fired"
	MinCalibrationSessions = 5
	// separatingLift is the lift (or its inverse) a signal needs to
	// separate.
	separatingLift = 1.5
	// endActs is how many of a session's last acts make its ending.
	endActs = 3
	// calibrationActsCap bounds the user acts a calibration scans.
	calibrationActsCap = 1_000_000
)

// BadEndDefinition says what a bad end is, for the answer.
const BadEndDefinition = "the session's last 3 acts of the user (main thread: prompts, commands, interrupts, " +
	"refusals) include an interrupt, a refused tool call, or words that stop, revert or swear at the work; " +
	"or its very last act is a correction or a complaint (the user left after it)"

// endKinds are the acts that make a session's ending.
var endKinds = map[string]bool{cortex.UserPrompt: true, cortex.UserCommand: true, cortex.UserInterrupt: true,
	cortex.UserRejection: true}

// badEnd reports whether a session ends badly, given its last acts
// (newest first, at most endActs): see BadEndDefinition.
func badEnd(last []store.UserAct) bool {
	for i, a := range last {
		switch a.Kind {
		case cortex.UserInterrupt, cortex.UserRejection:
			return true
		}
		r := reading(a)
		if r.Has(voice.Stop) || r.Has(voice.Revert) || r.Has(voice.Abuse) {
			return true
		}
		if i == 0 && (r.Has(voice.Correction) || r.Has(voice.Scope) || r.Has(voice.Reminder) || r.Has(voice.Dissatisfied)) {
			return true
		}
	}
	return false
}

// sessionKey names a session across agents and hosts.
type sessionKey struct {
	tool    cortex.Tool
	host    string
	session string
}

// Calibrate measures every signal of every lens over the sessions in
// scope: how many sessions carry it (in an incident of its lens) and how
// often they end badly against the sessions without it. progress, when
// set, is told what is being read.
func (e *Engine) Calibrate(ctx context.Context, p cortex.CalibrationParams, progress func(string)) (cortex.SignalCalibration, error) {
	say := func(format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, args...))
		}
	}
	out := cortex.SignalCalibration{BadEnd: BadEndDefinition, MinSessions: MinCalibrationSessions, Signals: []cortex.SignalStat{}}

	// How each session ends.
	say("reading the user's acts")
	acts, err := e.db.UserActCandidates(ctx, store.CandidateFilter{Tool: p.Tool, Project: p.Project, Host: p.Host,
		Since: p.Since, Until: p.Until, Limit: calibrationActsCap + 1})
	if err != nil {
		return out, err
	}
	if len(acts) > calibrationActsCap {
		acts, out.Truncated = acts[:calibrationActsCap], true
	}
	last := map[sessionKey][]store.UserAct{}
	for _, a := range acts { // newest first
		k := sessionKey{a.Tool, a.Host, a.Session}
		if a.Session == "" || a.Thread != "" || !endKinds[a.Kind] || len(last[k]) == endActs {
			continue
		}
		last[k] = append(last[k], a)
	}
	bad := map[sessionKey]bool{}
	for k, l := range last {
		if badEnd(l) {
			bad[k] = true
		}
	}
	out.Sessions, out.BadEndSessions = len(last), len(bad)
	out.BaseRate = rate(len(bad), len(last))

	// Which sessions carry each signal.
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range Lenses() {
			if !yield(n) {
				return
			}
		}
	})
	for _, name := range names {
		l := Lenses()[name]
		say("reading %s incidents", name)
		list, err := e.All(ctx, l, cortex.IncidentParams{Tool: p.Tool, Project: p.Project, Host: p.Host, Since: p.Since, Until: p.Until})
		if err != nil {
			return out, err
		}
		out.Truncated = out.Truncated || list.CandidateWindowTruncated
		carriers := map[string]map[sessionKey]bool{}
		for _, inc := range list.Incidents {
			for _, s := range inc.SignalsPresent {
				if carriers[s] == nil {
					carriers[s] = map[sessionKey]bool{}
				}
				carriers[s][sessionKey{inc.Tool, inc.Hostname, inc.SessionID}] = true
			}
		}
		for _, sig := range l.signals() {
			out.Signals = append(out.Signals, stat(name, sig, carriers[sig], last, bad))
		}
	}
	sortSignals(&out)
	return out, nil
}

// stat is one signal's figures and verdict.
func stat(lens, sig string, carriers map[sessionKey]bool, judged map[sessionKey][]store.UserAct, bad map[sessionKey]bool) cortex.SignalStat {
	s := cortex.SignalStat{Lens: lens, Signal: sig, Sessions: len(carriers)}
	for k := range carriers {
		if judged[k] != nil {
			s.Judged++
			if bad[k] {
				s.BadEnd++
			}
		}
	}
	withoutN, withoutBad := len(judged)-s.Judged, len(bad)-s.BadEnd
	s.Rate, s.RateWithout = rate(s.BadEnd, s.Judged), rate(withoutBad, withoutN)
	s.Lift = smoothed(s.BadEnd, s.Judged) / smoothed(withoutBad, withoutN)
	switch {
	case s.Sessions == 0:
		s.Verdict = VerdictNeverFired
	case s.Judged < MinCalibrationSessions:
		s.Verdict = VerdictTooFew
	case s.Lift >= separatingLift:
		s.Verdict = VerdictSeparates
	case s.Lift <= 1/separatingLift:
		s.Verdict = VerdictInverse
	default:
		s.Verdict = VerdictNotSeparating
	}
	return s
}

func rate(k, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

// smoothed is a rate with half a success and one trial added.
func smoothed(k, n int) float64 { return (float64(k) + 0.5) / (float64(n) + 1) }

// LabelledCase is one entry of a labelled corpus's expected.json: a
// transcript file, the lens and subject it is about, whether an incident
// must be found, and signals or abuse terms that must be among its own.
type LabelledCase struct {
	File           string   `json:"file"`
	Lens           string   `json:"lens"`
	Skill          string   `json:"skill,omitempty"`
	MCPServer      string   `json:"mcp_server,omitempty"`
	HookName       string   `json:"hook_name,omitempty"`
	Incident       bool     `json:"incident"`
	SignalsInclude []string `json:"signals_include,omitempty"`
	TermsInclude   []string `json:"terms_include,omitempty"`
}

// ReadLabelled reads dir/expected.json.
func ReadLabelled(dir string) ([]LabelledCase, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeInvalid, err, "labelled corpus: %v", err)
	}
	var doc struct {
		Cases []LabelledCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, cortex.WrapError(cortex.CodeInvalid, err, "labelled corpus %s: expected.json: %v", dir, err)
	}
	for i, c := range doc.Cases {
		if _, err := LensByName(c.Lens); err != nil || c.File == "" {
			return nil, cortex.Errorf(cortex.CodeInvalid, "labelled corpus %s: case %d: a file and a known lens are required", dir, i+1)
		}
	}
	return doc.Cases, nil
}

// CompareLabelled runs the lenses over a store holding exactly the
// labelled corpus dir (indexed from dir) and adds, to every signal of
// cal, its hits on the cases; cal.Labelled sums the cases that passed.
func (e *Engine) CompareLabelled(ctx context.Context, dir string, cases []LabelledCase, cal *cortex.SignalCalibration) error {
	sessions, err := e.db.Sessions(ctx, cortex.SessionParams{Limit: 1000})
	if err != nil {
		return err
	}
	byPath := map[string]string{}
	for _, s := range sessions.Sessions {
		byPath[filepath.Clean(s.TranscriptPath)] = s.SessionID
	}
	hits := map[string]*cortex.LabelledHits{}
	hit := func(lens, sig string) *cortex.LabelledHits {
		k := lens + "/" + sig
		if hits[k] == nil {
			hits[k] = &cortex.LabelledHits{}
		}
		return hits[k]
	}
	summary := &cortex.LabelledSummary{Dir: dir, Cases: len(cases)}
	root := dir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		root = real // stored paths have every link resolved
	}
	for _, c := range cases {
		l, _ := LensByName(c.Lens)
		session, ok := byPath[filepath.Clean(filepath.Join(root, c.File))]
		if !ok {
			return cortex.Errorf(cortex.CodeInvalid, "labelled corpus: no session stored for %s", c.File)
		}
		list, err := e.Incidents(ctx, l, cortex.IncidentParams{Session: session, Skill: c.Skill, Target: c.MCPServer, Hook: c.HookName})
		if err != nil {
			return err
		}
		fired := map[string]bool{}
		for _, inc := range list.Incidents {
			for _, s := range inc.SignalsPresent {
				fired[s] = true
			}
		}
		if (list.Total > 0) == c.Incident {
			summary.Passed++
		}
		for _, sig := range l.signals() {
			// Abuse cases list the terms they must find: the term signal.
			expected := slices.Contains(c.SignalsInclude, sig) || sig == cortex.SignalAbuseTerm && len(c.TermsInclude) > 0
			h := hit(c.Lens, sig)
			switch {
			case expected && fired[sig]:
				h.Expected++
				h.Found++
			case expected:
				h.Expected++
				h.Missed++
			case fired[sig] && !c.Incident:
				h.FalsePositives++
			case fired[sig]:
				h.Extra++
			}
		}
	}
	for i := range cal.Signals {
		s := &cal.Signals[i]
		if h := hits[s.Lens+"/"+s.Signal]; h != nil {
			s.Labelled = h
		} else {
			s.Labelled = &cortex.LabelledHits{}
		}
	}
	cal.Labelled = summary
	return nil
}

// sortSignals orders a calibration's signals: by lens, then lift, highest
// first, then name.
func sortSignals(cal *cortex.SignalCalibration) {
	sort.SliceStable(cal.Signals, func(i, j int) bool {
		a, b := cal.Signals[i], cal.Signals[j]
		if a.Lens != b.Lens {
			return a.Lens < b.Lens
		}
		if a.Lift != b.Lift {
			return a.Lift > b.Lift
		}
		return a.Signal < b.Signal
	})
}
