package incident

import (
	"context"
	"runtime"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/voice"
	"golang.org/x/sync/errgroup"
)

// DefaultAbuseTerms returns the default abuse term list.
func DefaultAbuseTerms() []string { return append([]string(nil), voice.DefaultAbuseTerms...) }

// textRow is a row with its text (user rows for the MCP and hook lenses,
// assistant rows for claims, triggers).
type textRow struct {
	ID   int64
	At   time.Time
	Text string
	// First marks the session's first prompt (user rows): it answers
	// nothing the agent did.
	First bool
	// Reading is what the user's words say, from the store (user rows);
	// nil: read Text when asked.
	Reading *voice.Reading
	// Norm is Text normalized as package voice matches it ("": normalize
	// when asked).
	Norm string
	// Plain is Text as package phrase normalizes it, quotes kept
	// (assistant rows; "": normalize when asked).
	Plain string
}

// plain is the row's text normalized by package phrase.
func (t textRow) plain() string {
	if t.Plain != "" {
		return t.Plain
	}
	return phrase.Normalize(t.Text)
}

// corrects reports whether the row's words correct or stop the agent: the
// stored reading when the row has one, else Text read now.
func (t textRow) corrects() bool {
	if t.Reading != nil {
		return readingCorrects(*t.Reading)
	}
	return corrects(t.Text)
}

// norm is the row's normalized text.
func (t textRow) norm() string {
	if t.Norm != "" {
		return t.Norm
	}
	return normalized(t.Text)
}

// call is a tool call as the MCP and hook lenses read it.
type call struct {
	ID    int64 // ai_mcp_events id
	LogID int64 // result row, else call row
	At    time.Time
	Name  string
}

// within reports whether t is in [from, to].
func within(t, from, to time.Time) bool { return !t.Before(from) && !t.After(to) }

// signalWindow is the span searched for a group's signals: from its first
// event to window after its last.
func signalWindow(g *group, window time.Duration) (time.Time, time.Time) {
	return g.First, g.Last.Add(window)
}

// corrects reports whether text the user typed corrects the agent (read
// by package voice: code and quotations are not the user's words).
func corrects(text string) bool { return readingCorrects(voice.Read(text, nil)) }

// readingCorrects reports whether a reading corrects or stops the agent.
func readingCorrects(r voice.Reading) bool {
	return r.Has(voice.Correction) || r.Has(voice.Revert) || r.Has(voice.Scope) || r.Has(voice.Reminder) || r.Has(voice.Stop)
}

// normalized is the user's text as package voice matches it.
func normalized(text string) string { return voice.Normalize(text) }

// mentions reports whether the row's text names one of the subject's
// names (a server, a tool, a hook).
func (t textRow) mentions(names *phrase.Set) bool {
	return names != nil && len(names.FindNormalized(t.norm())) > 0
}

// userTexts reads what the human said in a session span: typed prompts
// and commands, and the reasons they gave when refusing a call (as text
// rows on their logs rows, with their stored readings; normalized when
// asked: see textRow.norm), and when they interrupted the agent.
func userTexts(ctx context.Context, db Store, s store.SessionScope, from, to time.Time) ([]textRow, []time.Time, error) {
	acts, err := db.SessionUserActs(ctx, s, from, to, sessionUserRowsCap)
	if err != nil {
		return nil, nil, err
	}
	first, err := db.FirstPrompt(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	var texts []textRow
	var interrupts []time.Time
	for _, a := range acts {
		switch {
		case a.Kind == cortex.UserInterrupt:
			interrupts = append(interrupts, a.Timestamp)
		case a.Text != "" && (a.Kind == cortex.UserPrompt || a.Kind == cortex.UserCommand || a.Kind == cortex.UserRejection):
			rd := reading(a)
			texts = append(texts, textRow{ID: a.LogID, At: a.Timestamp, Text: a.Text, First: a.ID == first, Reading: &rd})
		}
	}
	return texts, interrupts, nil
}

func toCall(c store.ToolCall) call {
	out := call{ID: c.ID, At: c.Timestamp, Name: c.ToolName}
	switch {
	case c.ResultLogID != nil:
		out.LogID = *c.ResultLogID
	case c.CallLogID != nil:
		out.LogID = *c.CallLogID
	}
	return out
}

// bySession splits groups (ordered by key) into runs of one session.
func bySession(groups []*group) [][]*group {
	var out [][]*group
	idx := map[[3]string]int{}
	for _, g := range groups {
		k := [3]string{string(g.Key.Tool), g.Key.Host, g.Key.Session}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], g)
	}
	return out
}

// eachSession runs detect on each session's groups (see bySession), a few
// sessions at once: a session's reads and detectors touch only its own
// groups, and on a large store the reads are most of a lens's time. The
// first error cancels the rest.
func eachSession(ctx context.Context, groups []*group, detect func(ctx context.Context, sg []*group) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, sg := range bySession(groups) {
		g.Go(func() error { return detect(gctx, sg) })
	}
	return g.Wait()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Score weights of the skill lens: what a run cost the user. Stopping or
// interrupting the agent costs most, then correcting it, then a failure
// that stayed failed, then one that recovered; a run without a negative
// signal scores nothing, however often the skill was loaded.
const (
	weightStopped     = 20 // per stop, interrupt or refusal, at most 3
	weightCorrection  = 15 // per correction, at most 3
	weightScope       = 12 // per wrong-target remark, at most 3
	weightIgnored     = 12 // per repeated instruction, at most 3
	weightUnrecovered = 4  // per failed call never recovered, at most 3
	weightRecovered   = 1  // per failed call later recovered, at most 3
	weightOverlong    = 10
	weightRetryLoop   = 15 // per retry loop, at most 3
	weightVariety     = 5
	capVoice          = 3
	capFailures       = 3
)

// skillScore is stops×20 + corrections×15 + scope×12 + ignored×12 (each
// at most 3) + unrecovered failures×4 + recovered failures×1 (each at most
// 3) + overlong×10 + distinct signals×5: failures alone stay below a
// user's verdict.
func skillScore(s map[string]int, unrecovered, recovered int) float64 {
	variety := 0
	for _, n := range s {
		if n > 0 {
			variety++
		}
	}
	return float64(min(s[cortex.SignalUserStopped], capVoice)*weightStopped +
		min(s[cortex.SignalUserCorrection], capVoice)*weightCorrection +
		min(s[cortex.SignalScopeConfusion], capVoice)*weightScope +
		min(s[cortex.SignalIgnoredPolicy], capVoice)*weightIgnored +
		min(unrecovered, capFailures)*weightUnrecovered + min(recovered, capFailures)*weightRecovered +
		s[cortex.SignalOverlongLoop]*weightOverlong + min(s[cortex.SignalSkillRetryLoop], capVoice)*weightRetryLoop +
		variety*weightVariety)
}

// skillLabel: < 15 low, < 35 medium, < 60 high, else critical.
func skillLabel(score float64) string { return label(score, 15, 35, 60) }

// abuseScore rates a burst of swearing by its intensity: the strongest
// message's intensity (1 a lone mild word … 5 several strong words aimed
// at the agent, shouted) ×8, plus 4 per further message, plus 2 per
// distinct term. A lone "crap" scores 10 (low); a tirade is critical.
func abuseScore(count, maxIntensity, terms int) float64 {
	return float64(maxIntensity*8 + max(count-1, 0)*4 + terms*2)
}

// abuseLabel: < 15 low, < 30 medium, < 50 high, else critical.
func abuseLabel(score float64) string { return label(score, 15, 30, 50) }

func label(score, medium, high, critical float64) string {
	switch {
	case score < medium:
		return "low"
	case score < high:
		return "medium"
	case score < critical:
		return "high"
	}
	return "critical"
}
