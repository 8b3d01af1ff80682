package incident

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
	"github.com/cortexhq/cortex/store"
	"github.com/cortexhq/cortex/voice"
)

// abuseLens finds bursts of abusive terms in what users typed: the plainest
// sign that an agent is failing its user.
type abuseLens struct{}

// Bounds of abuse terms.
const (
	maxAbuseTerms   = 16
	maxAbuseTermLen = 64
)

func (abuseLens) Name() string   { return cortex.LensAbuse }
func (abuseLens) prefix() string { return "inc-" }

func (abuseLens) signals() []string { return []string{cortex.SignalAbuseTerm} }

// NormalizeTerms validates caller terms (which replace the defaults):
// trimmed, lower-cased, letters, digits, '_' and '-' only, at most 64
// bytes each and 16 in all; sorted and deduplicated. No terms means the
// defaults.
func NormalizeTerms(terms []string) ([]string, error) {
	var out []string
	for _, t := range terms {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			continue
		}
		if len(t) > maxAbuseTermLen {
			return nil, cortex.Errorf(cortex.CodeInvalid, "abuse term %.20q… is longer than %d bytes", t, maxAbuseTermLen)
		}
		for _, r := range t {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return nil, cortex.Errorf(cortex.CodeInvalid, "abuse term %q may hold only letters, digits, '_' and '-'", t)
			}
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return DefaultAbuseTerms(), nil
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxAbuseTerms {
		return nil, cortex.Errorf(cortex.CodeInvalid, "too many abuse terms (%d); the maximum is %d", len(out), maxAbuseTerms)
	}
	return out, nil
}

func (abuseLens) prepare(p *cortex.IncidentParams) error {
	if p.Skill != "" || p.Plugin != "" || p.IncludeUsage {
		return cortex.Errorf(cortex.CodeInvalid, "skill, plugin and include_usage apply to the skill lens only")
	}
	terms, err := NormalizeTerms(p.Terms)
	p.Terms = terms
	return err
}

// termMatches runs the FTS candidate query (stemmed, so it over-matches)
// over user rows (and those the search index has not reached yet) and keeps the rows where the user used a term — read by
// package voice from the user's own words (the row's user event: no IDE
// context, no quotations, no term talked about rather than used). It
// returns the rows scanned (at most capRows), the matches with their
// strongest term and intensity, and whether older candidates were left.
func termMatches(ctx context.Context, db Store, f store.CandidateFilter, terms []string, capRows int) ([]store.TextCandidate, []voice.Reading, int, bool, error) {
	f.Limit = capRows + 1
	rows, complete, err := db.UserTextMatches(ctx, terms, f)
	if err != nil {
		return nil, nil, 0, false, err
	}
	// Rows the search index has not reached were read as candidates when
	// few; when many, they were not scanned.
	truncated := len(rows) > capRows || !complete
	if truncated {
		rows = rows[:capRows]
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	acts, err := db.UserActsByLogID(ctx, ids)
	if err != nil {
		return nil, nil, 0, false, err
	}
	words := map[int64]string{}
	for _, a := range acts {
		if a.Kind == cortex.UserPrompt || a.Kind == cortex.UserCommand {
			words[a.LogID] = a.Text
		}
	}
	set := phrase.NewSet(terms...)
	var kept []store.TextCandidate
	var found []voice.Reading
	for _, r := range rows {
		text, ok := words[r.ID]
		if !ok && len(acts) == 0 {
			text = r.Message // a store without user events yet
		}
		rd := voice.Read(text, set)
		if !rd.Has(voice.Abuse) {
			continue
		}
		kept = append(kept, r)
		found = append(found, rd)
	}
	return kept, found, len(rows), truncated, nil
}

func (abuseLens) candidates(ctx context.Context, db Store, p *cortex.IncidentParams, capRows int) ([]member, int, bool, error) {
	rows, reads, scanned, truncated, err := termMatches(ctx, db, store.CandidateFilter{Tool: p.Tool, Project: p.Project,
		Session: p.Session, Host: p.Host, Since: p.Since, Until: p.Until}, p.Terms, capRows)
	if err != nil {
		return nil, 0, false, err
	}
	ms := make([]member, len(rows))
	for i, r := range rows {
		ms[i] = member{ID: r.ID, LogID: r.ID, At: r.Timestamp, Kind: "user", Term: reads[i].Terms[0],
			Intensity: reads[i].Intensity, Key: groupKey{Tool: r.Tool, Host: r.Host, Project: r.Project, Session: r.Session}}
	}
	return ms, scanned, truncated, nil
}

// detect: every member is an anchor of the abuse_term signal.
func (abuseLens) detect(_ context.Context, _ Store, _ *cortex.IncidentParams, groups []*group, _ time.Duration) error {
	for _, g := range groups {
		g.EventCount = len(g.Members)
		g.SignalEnd = g.Last
		for _, m := range g.Members {
			g.addAnchor(m.LogID, m.At, cortex.SignalAbuseTerm, m.Term)
			if !slices.Contains(g.Terms, m.Term) {
				g.Terms = append(g.Terms, m.Term)
			}
		}
		slices.Sort(g.Terms)
	}
	return nil
}

func (abuseLens) isIncident(*group, *cortex.IncidentParams) bool { return true }

func (abuseLens) score(g *group) float64 {
	strongest := 0
	for _, m := range g.Members {
		strongest = max(strongest, m.Intensity)
	}
	return abuseScore(g.EventCount, strongest, len(g.Terms))
}

func (abuseLens) label(score float64) string { return abuseLabel(score) }

func (abuseLens) subject(groupKey, *cortex.Incident) {}

func (abuseLens) extras(context.Context, Store, *group, *cortex.Bundle) error { return nil }

// Bounds of abuse-term searches.
const (
	DefaultAbuseLimit   = 20
	MaxAbuseLimit       = 100
	DefaultAbuseContext = 2
	MaxAbuseContext     = 20
)

// AbuseMatches lists user rows carrying an abuse term, newest first, with
// the session rows around each.
func (e *Engine) AbuseMatches(ctx context.Context, p cortex.AbuseParams) (cortex.AbuseMatches, error) {
	ip := cortex.IncidentParams{Tool: p.Tool, Project: p.Project, Session: p.Session, Host: p.Host,
		Since: p.Since, Until: p.Until, Terms: p.Terms}
	l := abuseLens{}
	if err := normalize(l, &ip); err != nil {
		return cortex.AbuseMatches{}, err
	}
	limit, clamped, err := cortex.ClampLimit(p.Limit, DefaultAbuseLimit, MaxAbuseLimit)
	if err != nil {
		return cortex.AbuseMatches{}, err
	}
	before, err := contextRows(p.Before, "before")
	if err != nil {
		return cortex.AbuseMatches{}, err
	}
	after, err := contextRows(p.After, "after")
	if err != nil {
		return cortex.AbuseMatches{}, err
	}
	maxBytes, err := clampMaxBytes(p.MaxBytes)
	if err != nil {
		return cortex.AbuseMatches{}, err
	}
	rows, reads, scanned, truncated, err := termMatches(ctx, e.db, store.CandidateFilter{Tool: ip.Tool, Project: ip.Project,
		Session: ip.Session, Host: ip.Host, Since: ip.Since, Until: ip.Until}, ip.Terms, e.candidateCap())
	if err != nil {
		return cortex.AbuseMatches{}, err
	}
	out := cortex.AbuseMatches{Terms: ip.Terms, Matches: []cortex.AbuseMatch{}, CandidateRows: scanned,
		CandidateCap: e.candidateCap(), CandidateWindowTruncated: truncated, LimitClampedTo: clamped}
	off := min(p.Cursor.OffsetOf(), len(rows))
	rows, reads = rows[off:], reads[off:]
	if len(rows) > limit {
		rows, out.Truncated = rows[:limit], true
		out.Next = cortex.Cursor{Offset: off + limit}.Encode()
	}
	out.Truncated = out.Truncated || truncated
	for i, r := range rows {
		entry, err := e.db.RowsByID(ctx, []int64{r.ID})
		if err != nil {
			return out, err
		}
		if len(entry) == 0 {
			continue // purged meanwhile
		}
		m := cortex.AbuseMatch{Term: reads[i].Terms[0], Entry: entry[0], Before: []cortex.EvidenceRow{}, After: []cortex.EvidenceRow{}}
		m.Entry.Term = m.Term
		s := store.SessionScope{Tool: r.Tool, Session: r.Session, Host: r.Host}
		if before > 0 {
			if m.Before, err = e.db.SessionRowsBefore(ctx, s, r.Timestamp, r.ID, before); err != nil {
				return out, err
			}
		}
		if after > 0 {
			if m.After, err = e.db.SessionRowsAfter(ctx, s, r.Timestamp, r.ID, after); err != nil {
				return out, err
			}
		}
		boundRows([]*cortex.EvidenceRow{&m.Entry}, maxBytes)
		boundRows(ptrs(m.Before), maxBytes)
		boundRows(ptrs(m.After), maxBytes)
		out.Matches = append(out.Matches, m)
	}
	return out, nil
}

func contextRows(n int, name string) (int, error) {
	switch {
	case n < 0:
		return 0, cortex.Errorf(cortex.CodeInvalid, "%s must not be negative, got %d", name, n)
	case n > MaxAbuseContext:
		return MaxAbuseContext, nil
	}
	return n, nil
}

func (abuseLens) subjectFirst(*cortex.IncidentParams) bool { return false }

func (abuseLens) describe(*cortex.IncidentParams) string { return "the selection" }

func (abuseLens) usage(context.Context, Store, *cortex.IncidentParams) (usageReport, error) {
	return usageReport{}, nil
}

func (abuseLens) suggest(context.Context, Store, *cortex.IncidentParams) (string, []string) {
	return "no abuse terms found in user messages with these filters", []string{"search other terms (terms=…)"}
}
