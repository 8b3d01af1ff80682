package lifecycle

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/stats"
)

// MinRunsForGrade is the number of runs below which a grade is
// provisional: one bad run in three is not yet a pattern.
const MinRunsForGrade = 5

// Grade weights (see Score).
const (
	weightIncidents = 50
	weightSevere    = 30
	weightFriction  = 20
)

// Score is a skill's (or version's) health on 0..100:
//
//	100 − 50 × incident rate − 30 × severe rate − 20 × min(1, friction per run)
//
// where the incident rate is the share of runs with an incident, the
// severe rate the share with a high or critical one, and friction per run
// the friction incidents (the user's own pushback) charged to the skill
// per run. No runs: 100.
func Score(runs, incidents, severe, friction int) float64 {
	if runs <= 0 {
		return 100
	}
	n := float64(runs)
	s := 100 - weightIncidents*float64(incidents)/n - weightSevere*float64(severe)/n -
		weightFriction*math.Min(1, float64(friction)/n)
	return math.Round(math.Max(0, s)*10) / 10
}

// Grade maps a score to a letter: A ≥ 90, B ≥ 75, C ≥ 60, D ≥ 40, else F.
func Grade(score float64) string {
	switch {
	case score >= 90:
		return "A"
	case score >= 75:
		return "B"
	case score >= 60:
		return "C"
	case score >= 40:
		return "D"
	}
	return "F"
}

// CategoryCount is a finding category, how many incidents showed it and
// the highest confidence it had.
type CategoryCount struct {
	Category   string `json:"category"`
	Incidents  int    `json:"incidents"`
	Confidence string `json:"confidence"`
}

var confidenceRank = map[string]int{"low": 1, "medium": 2, "high": 3}

// Week is one ISO week of a skill's runs.
type Week struct {
	Week      string `json:"week"` // 2026-W23
	Runs      int    `json:"runs"`
	Incidents int    `json:"incidents"`
}

// Stats are the health figures of a set of runs.
type Stats struct {
	Runs      int `json:"runs"`
	Incidents int `json:"incidents"`
	Severe    int `json:"severe_incidents"`
	Sessions  int `json:"sessions"`
	// IncidentRate is incidents per run, with its 95% Wilson interval.
	IncidentRate   float64        `json:"incident_rate"`
	IncidentRateCI stats.Interval `json:"incident_rate_ci95"`
	Friction       int            `json:"friction_incidents"`
	FrictionPerRun float64        `json:"friction_per_run"`
	Score          float64        `json:"score"`
	Grade          string         `json:"grade"`
	// Provisional is set below MinRunsForGrade runs.
	Provisional bool `json:"provisional"`
}

// VersionHealth is the health of one version of a skill.
type VersionHealth struct {
	Version string `json:"version"`
	Short   string `json:"short"`
	Ordinal int    `json:"ordinal"`
	Stats
}

// Health is the health of one skill.
type Health struct {
	Skill     string   `json:"skill"`
	Agents    []string `json:"agents"`
	FirstSeen string   `json:"first_seen"`
	LastSeen  string   `json:"last_seen"`
	Stats
	// TopFindings are the finding categories of its incidents, most
	// frequent first; FindingsFrom says how many incidents were read for
	// them (at most the investigation cap).
	TopFindings  []CategoryCount `json:"top_findings"`
	FindingsFrom int             `json:"findings_from_incidents"`
	Weekly       []Week          `json:"weekly"`
	Versions     []VersionHealth `json:"versions"`
	// UnknownVersionRuns counts runs whose body no load showed.
	UnknownVersionRuns int `json:"unknown_version_runs"`
}

// Summarize computes the figures of a set of runs.
func Summarize(runs []Run) Stats {
	var s Stats
	sessions := map[string]bool{}
	for _, r := range runs {
		s.Runs++
		if r.Incident {
			s.Incidents++
		}
		if r.Severe() {
			s.Severe++
		}
		s.Friction += r.Friction
		sessions[string(r.Tool)+"\x00"+r.Host+"\x00"+r.Session] = true
	}
	s.Sessions = len(sessions)
	if s.Runs > 0 {
		s.IncidentRate = round3(float64(s.Incidents) / float64(s.Runs))
		s.FrictionPerRun = round3(float64(s.Friction) / float64(s.Runs))
	}
	s.IncidentRateCI = stats.Wilson(s.Incidents, s.Runs, stats.Z95)
	s.IncidentRateCI.Low, s.IncidentRateCI.High = round3(s.IncidentRateCI.Low), round3(s.IncidentRateCI.High)
	s.Score = Score(s.Runs, s.Incidents, s.Severe, s.Friction)
	s.Grade = Grade(s.Score)
	s.Provisional = s.Runs < MinRunsForGrade
	return s
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// SkillHealth computes a skill's health from its runs, versions and the
// findings of its investigated incidents (from = incidents read).
func SkillHealth(skill string, runs []Run, versions []Version, findings []Finding, from int) Health {
	h := Health{Skill: skill, Stats: Summarize(runs), Agents: []string{}, TopFindings: []CategoryCount{},
		Weekly: []Week{}, Versions: []VersionHealth{}, FindingsFrom: from}
	var first, last time.Time
	weeks := map[string]*Week{}
	for _, r := range runs {
		if a := string(r.Tool); !slices.Contains(h.Agents, a) {
			h.Agents = append(h.Agents, a)
		}
		if first.IsZero() || r.Start.Before(first) {
			first = r.Start
		}
		if end := maxTime(r.Start, r.End); end.After(last) {
			last = end
		}
		y, w := r.Start.UTC().ISOWeek()
		k := fmt.Sprintf("%04d-W%02d", y, w)
		if weeks[k] == nil {
			weeks[k] = &Week{Week: k}
		}
		weeks[k].Runs++
		if r.Incident {
			weeks[k].Incidents++
		}
		if r.Version == "" {
			h.UnknownVersionRuns++
		}
	}
	sort.Strings(h.Agents)
	if !first.IsZero() {
		h.FirstSeen, h.LastSeen = cortex.FormatTime(first), cortex.FormatTime(last)
	}
	for _, w := range weeks {
		h.Weekly = append(h.Weekly, *w)
	}
	sort.Slice(h.Weekly, func(i, j int) bool { return h.Weekly[i].Week < h.Weekly[j].Week })
	cats := map[string]*CategoryCount{}
	seen := map[string]bool{}
	for _, f := range findings {
		if f.Category == "unknown" {
			continue
		}
		c := cats[f.Category]
		if c == nil {
			c = &CategoryCount{Category: f.Category}
			cats[f.Category] = c
		}
		if k := f.IncidentID + "\x00" + f.Category; !seen[k] {
			seen[k] = true
			c.Incidents++
		}
		if confidenceRank[f.Confidence] > confidenceRank[c.Confidence] {
			c.Confidence = f.Confidence
		}
	}
	for _, c := range cats {
		h.TopFindings = append(h.TopFindings, *c)
	}
	sort.Slice(h.TopFindings, func(i, j int) bool {
		a, b := h.TopFindings[i], h.TopFindings[j]
		if a.Incidents != b.Incidents {
			return a.Incidents > b.Incidents
		}
		if ra, rb := confidenceRank[a.Confidence], confidenceRank[b.Confidence]; ra != rb {
			return ra > rb
		}
		return a.Category < b.Category
	})
	for _, v := range versions {
		var vr []Run
		for _, r := range runs {
			if r.Version == v.Version {
				vr = append(vr, r)
			}
		}
		h.Versions = append(h.Versions, VersionHealth{Version: v.Version, Short: v.Short, Ordinal: v.Ordinal, Stats: Summarize(vr)})
	}
	return h
}

// WorstFirst orders health reports worst first: lowest score, then more
// runs (more evidence of the same score), then name.
func WorstFirst(hs []Health) {
	sort.SliceStable(hs, func(i, j int) bool {
		a, b := hs[i], hs[j]
		if a.Score != b.Score {
			return a.Score < b.Score
		}
		if a.Runs != b.Runs {
			return a.Runs > b.Runs
		}
		return a.Skill < b.Skill
	})
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
