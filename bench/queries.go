package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/app"
)

// QueryOptions configures RunQueries.
type QueryOptions struct {
	// Runs is how many timed runs each query gets (after one warm-up).
	Runs int
	// Skill is the skill to investigate; empty picks the skill of the top
	// skill incident of the last 30 days.
	Skill string
	// Now anchors "the last 30 days".
	Now time.Time
	// Only, when set, names the queries to run (by name: skill-incidents,
	// friction-investigate, …).
	Only []string
}

// QueryTiming is the latency distribution of one query.
type QueryTiming struct {
	Name    string  `json:"name"`
	Command string  `json:"command"`
	Runs    int     `json:"runs"`
	P50MS   float64 `json:"p50_ms"`
	P95MS   float64 `json:"p95_ms"`
	MaxMS   float64 `json:"max_ms"`
	// Result describes the answer (how many incidents, bundles…).
	Result string `json:"result"`
}

// QueryReport is what RunQueries measured.
type QueryReport struct {
	Rows    int64         `json:"rows"`
	Queries []QueryTiming `json:"queries"`
}

// RunQueries times the incident queries, through the service layer (the
// CLI's own path): skill and friction incidents over 30 days, a skill's and
// the top friction investigation, MCP and hook incidents over 30 days,
// abuse incidents, abuse matches.
func RunQueries(ctx context.Context, s *app.Service, o QueryOptions) (QueryReport, error) {
	var rep QueryReport
	st, err := s.Status(ctx)
	if err != nil {
		return rep, err
	}
	rep.Rows = st.Rows
	if o.Runs <= 0 {
		o.Runs = 10
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	since := o.Now.Add(-30 * 24 * time.Hour)
	skill := o.Skill
	if skill == "" {
		list, err := s.Incidents(ctx, cortex.LensSkill, cortex.IncidentParams{Since: since, Limit: 1})
		if err != nil {
			return rep, err
		}
		if len(list.Incidents) == 0 {
			return rep, cortex.Errorf(cortex.CodeNotFound, "no skill incident in the last 30 days to investigate; pass --skill")
		}
		skill = list.Incidents[0].SkillName
	}
	queries := []query{
		{"skill-incidents", "cortex ai skill-incidents --since 30d", func() (string, error) {
			r, err := s.Incidents(ctx, cortex.LensSkill, cortex.IncidentParams{Since: since})
			return fmt.Sprintf("%d incidents from %d candidates (truncated scan: %v)", r.Total, r.CandidateRows, r.CandidateWindowTruncated), err
		}},
		{"skill-investigate", "cortex ai skill-investigate " + skill, func() (string, error) {
			r, err := s.Investigate(ctx, cortex.LensSkill, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Skill: skill}})
			return fmt.Sprintf("%d bundle(s), %d matching incidents", len(r.Bundles), r.Total), err
		}},
		{"friction-incidents", "cortex ai friction-incidents --since 30d", func() (string, error) {
			r, err := s.Incidents(ctx, cortex.LensFriction, cortex.IncidentParams{Since: since})
			return fmt.Sprintf("%d incidents from %d candidates (truncated scan: %v)", r.Total, r.CandidateRows, r.CandidateWindowTruncated), err
		}},
		{"friction-investigate", "cortex ai friction-investigate --since 30d", func() (string, error) {
			r, err := s.Investigate(ctx, cortex.LensFriction, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Since: since}})
			return fmt.Sprintf("%d bundle(s), %d matching incidents", len(r.Bundles), r.Total), err
		}},
		{"mcp-incidents", "cortex ai mcp-incidents --since 30d", func() (string, error) {
			r, err := s.Incidents(ctx, cortex.LensMCP, cortex.IncidentParams{Since: since})
			return fmt.Sprintf("%d incidents from %d candidates (truncated scan: %v)", r.Total, r.CandidateRows, r.CandidateWindowTruncated), err
		}},
		{"hook-incidents", "cortex ai hook-incidents --since 30d", func() (string, error) {
			r, err := s.Incidents(ctx, cortex.LensHook, cortex.IncidentParams{Since: since})
			return fmt.Sprintf("%d incidents from %d candidates (truncated scan: %v)", r.Total, r.CandidateRows, r.CandidateWindowTruncated), err
		}},
		{"abuse-incidents", "cortex ai abuse-incidents", func() (string, error) {
			r, err := s.Incidents(ctx, cortex.LensAbuse, cortex.IncidentParams{})
			return fmt.Sprintf("%d incidents from %d candidates (truncated scan: %v)", r.Total, r.CandidateRows, r.CandidateWindowTruncated), err
		}},
		{"abuse", "cortex ai abuse", func() (string, error) {
			r, err := s.AbuseMatches(ctx, cortex.AbuseParams{Before: 2, After: 2})
			return fmt.Sprintf("%d matches", len(r.Matches)), err
		}},
		{"mcp-investigate", "cortex ai mcp-investigate --since 30d", func() (string, error) {
			r, err := s.Investigate(ctx, cortex.LensMCP, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Since: since}})
			return fmt.Sprintf("%d bundle(s), %d matching incidents", len(r.Bundles), r.Total), err
		}},
		{"hook-investigate", "cortex ai hook-investigate --since 30d", func() (string, error) {
			r, err := s.Investigate(ctx, cortex.LensHook, cortex.InvestigateParams{IncidentParams: cortex.IncidentParams{Since: since}})
			return fmt.Sprintf("%d bundle(s), %d matching incidents", len(r.Bundles), r.Total), err
		}},
		{"search-common", "cortex search error", searchQuery(ctx, s, cortex.SearchParams{Query: "error"})},
		{"search-phrase", `cortex search "race condition"`, searchQuery(ctx, s, cortex.SearchParams{Query: `"race condition"`})},
		{"search-rank", "cortex search error --rank", searchQuery(ctx, s, cortex.SearchParams{Query: "error", Rank: true})},
		{"sessions", "cortex sessions", func() (string, error) {
			r, err := s.Sessions(ctx, cortex.SessionParams{Limit: 50})
			return fmt.Sprintf("%d sessions", r.Total), err
		}},
		{"status", "cortex status", func() (string, error) {
			r, err := s.Status(ctx)
			return fmt.Sprintf("%d rows", r.Rows), err
		}},
	}
	for _, name := range o.Only {
		if !slices.ContainsFunc(queries, func(q query) bool { return q.name == name }) {
			return rep, cortex.Errorf(cortex.CodeInvalid, "unknown query %q", name)
		}
	}
	for _, q := range queries {
		if len(o.Only) > 0 && !slices.Contains(o.Only, q.name) {
			continue
		}
		result, err := q.run() // warm-up
		if err != nil {
			return rep, fmt.Errorf("%s: %w", q.name, err)
		}
		d := make([]float64, 0, o.Runs)
		for range o.Runs {
			start := time.Now()
			if _, err := q.run(); err != nil {
				return rep, fmt.Errorf("%s: %w", q.name, err)
			}
			d = append(d, float64(time.Since(start).Microseconds())/1000)
		}
		slices.Sort(d)
		rep.Queries = append(rep.Queries, QueryTiming{Name: q.name, Command: q.command, Runs: o.Runs,
			P50MS: percentile(d, 50), P95MS: percentile(d, 95), MaxMS: d[len(d)-1], Result: result})
	}
	return rep, nil
}

// searchQuery times a search.
func searchQuery(ctx context.Context, s *app.Service, p cortex.SearchParams) func() (string, error) {
	return func() (string, error) {
		r, err := s.Search(ctx, p)
		return fmt.Sprintf("%d hits (truncated: %v, not yet searchable: %d)", r.Total, r.Truncated, r.NotYetSearchable), err
	}
}

// query is one timed query.
type query struct {
	name, command string
	run           func() (string, error)
}

// percentile returns the p-th percentile of sorted values (nearest rank).
func percentile(sorted []float64, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (p*len(sorted) + 99) / 100
	return sorted[min(max(i, 1), len(sorted))-1]
}
