package app

import (
	"context"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/incident"
)

// Incidents lists the incidents of a lens (abuse or skill), best first.
func (s *Service) Incidents(ctx context.Context, lens string, p cortex.IncidentParams) (cortex.IncidentList, error) {
	l, err := incident.LensByName(lens)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	return incident.New(s.DB).Incidents(ctx, l, p)
}

// Investigate builds evidence bundles with deterministic findings for the
// best matching incidents of a lens. Given a skill or plugin it works
// skill-first: the top incident, the others summarized, a usage summary
// when the skill was used without a negative signal, suggestions when
// nothing matched.
func (s *Service) Investigate(ctx context.Context, lens string, p cortex.InvestigateParams) (cortex.Investigation, error) {
	l, err := incident.LensByName(lens)
	if err != nil {
		return cortex.Investigation{}, err
	}
	return incident.New(s.DB).Investigate(ctx, l, p)
}

// AbuseMatches lists user messages carrying abuse terms, with context.
func (s *Service) AbuseMatches(ctx context.Context, p cortex.AbuseParams) (cortex.AbuseMatches, error) {
	return incident.New(s.DB).AbuseMatches(ctx, p)
}

// AllIncidents lists every incident of a lens matching p, best first,
// without the listing limit: for views that count or chart incidents (the
// dashboard's overview and skill health). Its answer can be large; it is
// not an action of the remote surfaces.
func (s *Service) AllIncidents(ctx context.Context, lens string, p cortex.IncidentParams) (cortex.IncidentList, error) {
	l, err := incident.LensByName(lens)
	if err != nil {
		return cortex.IncidentList{}, err
	}
	return incident.New(s.DB).All(ctx, l, p)
}
