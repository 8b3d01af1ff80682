package incident

import (
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
)

// The phrase lists of the skill lens. They match only text the user typed
// (role user): never tool output, injected context such as skill bodies,
// or assistant text quoting the user. They are deliberately narrow: a
// frustrating session is not an incident by itself.
var (
	// correctionPhrases: the user says the agent did the wrong thing.
	correctionPhrases = phrase.NewSet(
		"that's not what i asked", "that is not what i asked", "not what i asked for", "not what i meant",
		"you said you would", "you said you fixed", "but you didn't", "but you did not",
		"that's wrong", "that is wrong", "this is wrong", "no, that's", "no, that is", "no that's",
		"that's not right", "that is not right", "we wasted", "all you had to say",
		"stop, you", "you didn't need to", "you did not need to", "i didn't ask you", "i did not ask you",
		"i never asked", "you shouldn't have", "you should not have", "you ignored", "please revert", "undo that",
	)
	// scopePhrases: the agent worked on the wrong thing or from the wrong
	// source.
	scopePhrases = phrase.NewSet(
		"wrong repo", "wrong repository", "wrong branch", "wrong directory", "wrong folder", "wrong file",
		"wrong project", "wrong checkout", "wrong worktree", "wrong source", "wrong source of truth",
		"source of truth", "stale data", "outdated data", "memory-vs-live", "memory vs live", "not the live",
	)
	// ignoredPhrases: the user names an instruction the agent did not
	// follow. Explicit phrases only.
	ignoredPhrases = phrase.NewSet(
		"without any verification", "without verification", "claimed success without",
		"should have created a bead", "should have created an issue", "wrong transport", "wrong source for this call",
		"raw web instead of using axon", "instead of using axon", "stopped at the plan", "stopped at plan",
		"i asked you to implement", "the skill says", "the skill said", "the instructions say", "you didn't follow",
		"you did not follow", "i told you to", "i told you not to", "agents.md says", "claude.md says",
	)
)

// defaultAbuseTerms are the terms the abuse lens looks for when the caller
// gives none.
var defaultAbuseTerms = []string{
	"asshole", "bastard", "bitch", "biznitch", "bullshit", "crap", "damn", "dick",
	"fuck", "fucked", "fucker", "fucking", "hell", "piss", "shit", "shitty",
}

// DefaultAbuseTerms returns the default abuse term list.
func DefaultAbuseTerms() []string { return append([]string(nil), defaultAbuseTerms...) }

// Detector thresholds of the skill lens.
const (
	// overlongToolCalls is how many tool calls after a skill make a loop
	// overlong (with a correction or frustration).
	overlongToolCalls = 15
	// repeatedFailures is how many failed tool calls signal on their own.
	repeatedFailures = 2
)

// textRow is a user-typed row.
type textRow struct {
	ID   int64
	At   time.Time
	Text string
}

// call is a failed tool call.
type call struct {
	ID    int64 // ai_mcp_events id
	LogID int64 // result row, else call row
	At    time.Time
	Name  string
}

// skillInput is what the skill detectors read for one group: the user rows
// and failed tool calls of its session (chronological, any span covering
// the group's window) and which failed calls a later success of the same
// tool recovered.
type skillInput struct {
	users     []textRow
	failed    []call
	recovered map[int64]bool
}

// within reports whether t is in [from, to].
func within(t, from, to time.Time) bool { return !t.Before(from) && !t.After(to) }

// signalWindow is the span searched for a group's signals: from its first
// event to window after its last.
func signalWindow(g *group, window time.Duration) (time.Time, time.Time) {
	return g.First, g.Last.Add(window)
}

// detectSkill runs the skill detectors on g. It sets the group's signals,
// anchors and activation count, and reports whether the user was
// frustrated (a correction or an abuse term): only then does the caller
// count the window's tool calls for the overlong-loop signal (see
// markOverlong).
func detectSkill(g *group, in skillInput, window time.Duration, abuse *phrase.Set) (frustrated bool) {
	from, to := signalWindow(g, window)
	g.SignalEnd = to
	g.EventCount = activations(g.Members)
	g.Signals = map[string]int{}

	var corrections []time.Time
	for _, r := range in.users {
		if !within(r.At, from, to) {
			continue
		}
		norm := phrase.Normalize(unquoted(r.Text))
		if len(correctionPhrases.FindNormalized(norm)) > 0 {
			g.addAnchor(r.ID, r.At, cortex.SignalUserCorrection, "")
			corrections = append(corrections, r.At)
			frustrated = true
		}
		if len(scopePhrases.FindNormalized(norm)) > 0 {
			g.addAnchor(r.ID, r.At, cortex.SignalScopeConfusion, "")
		}
		if len(ignoredPhrases.FindNormalized(norm)) > 0 {
			g.addAnchor(r.ID, r.At, cortex.SignalIgnoredPolicy, "")
		}
		if abuse != nil && len(abuse.FindNormalized(norm)) > 0 {
			frustrated = true
		}
	}

	var failed []call
	for _, c := range in.failed {
		if within(c.At, from, to) {
			failed = append(failed, c)
		}
	}
	if failureSignals(failed, corrections, in.recovered) {
		for _, c := range failed {
			g.addAnchor(c.LogID, c.At, cortex.SignalToolFailure, "")
		}
	}
	return frustrated
}

// markOverlong sets the overlong-loop signal when the window held at least
// overlongToolCalls tool calls and the user was frustrated.
func markOverlong(g *group, calls int, frustrated bool) {
	if frustrated && calls >= overlongToolCalls {
		g.Signals[cortex.SignalOverlongLoop] = 1
	}
}

// maxQuoted bounds a quoted span that unquoted blanks: longer "quotes" are
// more likely an unbalanced quote character than a quotation.
const maxQuoted = 300

// unquoted blanks code and quotations in what the user typed — ```fenced
// blocks```, `inline code` and "double-quoted" spans on one line — so that
// words the user quotes (an error string to log, a test name) are not read
// as the user's own voice.
func unquoted(s string) string {
	if !strings.ContainsAny(s, "`\"“") {
		return s
	}
	b := []byte(s)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '`' && strings.HasPrefix(string(b[i:]), "```"):
			end := strings.Index(string(b[i+3:]), "```")
			if end < 0 {
				blank(i, len(b))
				return string(b)
			}
			blank(i, i+3+end+3)
			i += 3 + end + 2
		case b[i] == '`' || b[i] == '"':
			end := strings.IndexAny(string(b[i+1:]), string(b[i])+"\n")
			if end < 0 || end > maxQuoted || b[i+1+end] == '\n' {
				continue
			}
			blank(i, i+1+end+1)
			i += end + 1
		case strings.HasPrefix(string(b[i:]), "“"):
			end := strings.Index(string(b[i:]), "”")
			if end < 0 || end > maxQuoted || strings.Contains(string(b[i:i+end]), "\n") {
				continue
			}
			blank(i, i+end+len("”"))
			i += end + len("”") - 1
		}
	}
	return string(b)
}

// failureSignals decides whether failed tool calls are a signal: one
// expected failure is normal work (a red test before the fix, a grep
// without matches), so failures count only when they repeat, when one is
// never followed by a success of the same tool, or when a user correction
// follows one.
func failureSignals(failed []call, corrections []time.Time, recovered map[int64]bool) bool {
	switch {
	case len(failed) == 0:
		return false
	case len(failed) >= repeatedFailures:
		return true
	}
	f := failed[0]
	for _, t := range corrections {
		if t.After(f.At) {
			return true
		}
	}
	return !recovered[f.ID]
}

// activations counts skill activations: explicit loads (a Skill tool call,
// a slash command, a Codex <skill> block), else injected skill bodies,
// else one (a run of attributed assistant lines is one activation: Claude
// tags every line while a skill is active).
func activations(ms []member) int {
	explicit, bodies := 0, 0
	for _, m := range ms {
		switch m.Kind {
		case cortex.SkillClaudeTool, cortex.SkillClaudeSlash, cortex.SkillCodexBlock:
			explicit++
		case cortex.SkillClaudeBody:
			bodies++
		}
	}
	switch {
	case explicit > 0:
		return explicit
	case bodies > 0:
		return bodies
	}
	return 1
}

// Score weights of the skill lens.
const (
	weightActivation = 2
	weightCorrection = 15
	weightFailure    = 8
	weightScope      = 12
	weightIgnored    = 12
	weightOverlong   = 10
	weightVariety    = 5
)

// skillScore is activations*2 + corrections*15 + tool failures*8 +
// scope*12 + ignored*12 + overlong*10 + distinct signals*5.
func skillScore(activations int, s map[string]int) float64 {
	variety := 0
	for _, n := range s {
		if n > 0 {
			variety++
		}
	}
	return float64(activations*weightActivation + s[cortex.SignalUserCorrection]*weightCorrection +
		s[cortex.SignalToolFailure]*weightFailure + s[cortex.SignalScopeConfusion]*weightScope +
		s[cortex.SignalIgnoredPolicy]*weightIgnored + s[cortex.SignalOverlongLoop]*weightOverlong + variety*weightVariety)
}

// skillLabel: < 15 low, < 35 medium, < 60 high, else critical.
func skillLabel(score float64) string { return label(score, 15, 35, 60) }

// abuseScore is count*10 + density*2 + distinct terms, where density is
// anchors per minute of the incident's duration, floored at one minute (so
// two terms a second apart do not score like a tirade).
func abuseScore(count int, duration time.Duration, terms int) float64 {
	density := float64(count) / max(duration.Minutes(), 1)
	return float64(count*10) + density*2 + float64(terms)
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
