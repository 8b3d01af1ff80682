package incident

import (
	"context"
	"fmt"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/phrase"
	"github.com/cortexhq/cortex/sqlite"
)

// skillLens finds skills that went wrong: skill activations followed, in
// the same session, by a user correction, failing tool calls, scope
// confusion, an ignored instruction or an overlong loop.
type skillLens struct{}

// Bounds of the per-session detection reads.
const (
	sessionUserRowsCap  = 2_000
	sessionToolCallsCap = 10_000
)

func (skillLens) Name() string   { return cortex.LensSkill }
func (skillLens) prefix() string { return "skill-inc-" }

func (skillLens) signals() []string {
	return []string{cortex.SignalUserCorrection, cortex.SignalToolFailure, cortex.SignalScopeConfusion,
		cortex.SignalIgnoredPolicy, cortex.SignalOverlongLoop}
}

func (skillLens) prepare(p *cortex.IncidentParams) error {
	if len(p.Terms) > 0 {
		return cortex.Errorf(cortex.CodeInvalid, "terms apply to the abuse lens only")
	}
	return nil
}

func (skillLens) candidates(ctx context.Context, db *sqlite.DB, p *cortex.IncidentParams, capRows int) ([]member, int, bool, error) {
	cs, err := db.SkillCandidates(ctx, sqlite.CandidateFilter{Tool: p.Tool, Project: p.Project, Session: p.Session,
		Host: p.Host, Since: p.Since, Until: p.Until, Skill: p.Skill, Plugin: p.Plugin, Limit: capRows + 1})
	if err != nil {
		return nil, 0, false, err
	}
	ms, n, truncated := toMembers(cs, capRows, func(c sqlite.SkillCandidate) member {
		return member{ID: c.ID, LogID: c.LogID, At: c.Timestamp, Kind: c.Kind, Key: groupKey{
			Tool: c.Tool, Host: c.Host, Project: c.Project, Session: c.Session, Subject: [3]string{c.Skill, c.Plugin}}}
	})
	return ms, n, truncated, nil
}

// detect reads each session once — its user rows and failed tool calls
// over the span of all its groups — then, per group, checks whether a lone
// failure was recovered and, when the user was frustrated, counts the
// window's tool calls.
// Every read goes through a narrow index: the skill lens never scans a
// session's rows.
func (l skillLens) detect(ctx context.Context, db *sqlite.DB, _ *cortex.IncidentParams, groups []*group, window time.Duration) error {
	abuse := phrase.NewSet(defaultAbuseTerms...)
	for _, sg := range bySession(groups) {
		k := sg[0].Key
		s := sqlite.SessionScope{Tool: k.Tool, Session: k.Session, Host: k.Host}
		if s.Session == "" {
			for _, g := range sg {
				detectSkill(g, skillInput{}, window, abuse)
			}
			continue
		}
		from, to := signalWindow(sg[0], window)
		for _, g := range sg[1:] {
			f, t := signalWindow(g, window)
			from, to = minTime(from, f), maxTime(to, t)
		}
		rows, err := db.SessionUserRows(ctx, s, from, to, sessionUserRowsCap)
		if err != nil {
			return err
		}
		users := make([]textRow, 0, len(rows))
		for _, r := range rows {
			at, _ := cortex.ParseTimestamp(r.Timestamp)
			users = append(users, textRow{ID: r.ID, At: at, Text: r.Message})
		}
		fcs, err := db.SessionFailedCalls(ctx, s, from, to, sessionToolCallsCap)
		if err != nil {
			return err
		}
		failed := make([]call, 0, len(fcs))
		for _, c := range fcs {
			failed = append(failed, toCall(c))
		}
		for _, g := range sg {
			in := skillInput{users: users, failed: failed, recovered: map[int64]bool{}}
			f, t := signalWindow(g, window)
			var lone []call
			for _, c := range failed {
				if within(c.At, f, t) {
					lone = append(lone, c)
				}
			}
			if len(lone) == 1 {
				if in.recovered[lone[0].ID], err = db.CallSucceededAfter(ctx, s, lone[0].Name, lone[0].At, t); err != nil {
					return err
				}
			}
			if detectSkill(g, in, window, abuse) {
				n, err := db.CountSessionCalls(ctx, s, f, t)
				if err != nil {
					return err
				}
				markOverlong(g, n, true)
			}
		}
	}
	return nil
}

func toCall(c sqlite.ToolCall) call {
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

// isIncident: a skill group without a negative signal is usage, listed
// only on request (or when asked for by id).
func (skillLens) isIncident(g *group, p *cortex.IncidentParams) bool {
	return len(g.present()) > 0 || p.IncludeUsage || p.IncidentID != ""
}

func (skillLens) score(g *group) float64     { return skillScore(g.EventCount, g.Signals) }
func (skillLens) label(score float64) string { return skillLabel(score) }

func (skillLens) subject(k groupKey, inc *cortex.Incident) {
	inc.SkillName, inc.SkillPlugin = k.Subject[0], k.Subject[1]
}

// Bundle caps of the skill lens.
const capSkillEvents = 25

// extras adds the group's skill events (the first 25, chronological).
func (skillLens) extras(ctx context.Context, db *sqlite.DB, g *group, b *cortex.Bundle) error {
	ids := make([]int64, 0, min(len(g.Members), capSkillEvents))
	for _, m := range g.Members {
		if len(ids) == capSkillEvents {
			b.SkillEventsTruncated = true
			break
		}
		ids = append(ids, m.ID)
	}
	evs, err := db.SkillEventsByID(ctx, ids)
	if err != nil {
		return err
	}
	b.SkillEvents = evs
	if b.SkillEvents == nil {
		b.SkillEvents = []cortex.SkillEventRow{}
	}
	return nil
}

func (skillLens) subjectFirst(p *cortex.IncidentParams) bool { return p.Skill != "" || p.Plugin != "" }

func (skillLens) describe(p *cortex.IncidentParams) string {
	switch {
	case p.Skill != "":
		return fmt.Sprintf("skill %q", p.Skill)
	case p.Plugin != "":
		return fmt.Sprintf("plugin %q", p.Plugin)
	}
	return "the selection"
}

// usage summarizes the selected skills' events in the range.
func (skillLens) usage(ctx context.Context, db *sqlite.DB, p *cortex.IncidentParams) (usageReport, error) {
	usage, err := db.SkillSummaries(ctx, cortex.SkillEventParams{EventFilter: cortex.EventFilter{Tool: p.Tool,
		Project: p.Project, Session: p.Session, Host: p.Host, Since: p.Since, Until: p.Until, Limit: 20},
		Skill: p.Skill, Plugin: p.Plugin})
	if err != nil {
		return usageReport{}, err
	}
	u := usageReport{Noun: "skill events", Skills: usage.Events}
	for _, s := range usage.Events {
		u.Events, u.Sessions = u.Events+s.Events, u.Sessions+s.Sessions
	}
	return u, nil
}

func (l skillLens) suggest(ctx context.Context, db *sqlite.DB, p *cortex.IncidentParams) (string, []string) {
	var out []string
	if p.Skill != "" && p.Plugin != "" {
		out = append(out, "drop the plugin and filter by skill only")
	}
	if p.Skill != "" {
		if names, err := db.SkillNames(ctx); err == nil {
			for _, n := range nearestNames(p.Skill, names, 5) {
				out = append(out, fmt.Sprintf("did you mean skill %q?", n))
			}
		}
	}
	out = append(out, "list the skills that were used: cortex ai skills --summary")
	return fmt.Sprintf("no skill events match %s with these filters", l.describe(p)), out
}
