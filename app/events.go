package app

import (
	"context"
	"slices"
	"strings"

	"github.com/cortexhq/cortex"
)

// Limits of the event listings.
const (
	DefaultEventsLimit = 50
	MaxEventsLimit     = 500
)

func (s *Service) eventFilter(f *cortex.EventFilter) (int, error) {
	if err := checkTool(f.Tool); err != nil {
		return 0, err
	}
	if err := checkRange(f.Since, f.Until); err != nil {
		return 0, err
	}
	limit, clamped, err := cortex.ClampLimit(f.Limit, DefaultEventsLimit, MaxEventsLimit)
	if err != nil {
		return 0, err
	}
	f.Limit = limit
	return clamped, nil
}

// SkillEvents lists skill events (which skills were loaded or used, where
// and when), newest first.
func (s *Service) SkillEvents(ctx context.Context, p cortex.SkillEventParams) (cortex.EventList[cortex.SkillEventRow], error) {
	clamped, err := s.eventFilter(&p.EventFilter)
	if err != nil {
		return cortex.EventList[cortex.SkillEventRow]{}, err
	}
	res, err := s.DB.SkillEvents(ctx, p)
	res.LimitClampedTo = clamped
	return res, err
}

// SkillSummaries summarizes skill use per skill.
func (s *Service) SkillSummaries(ctx context.Context, p cortex.SkillEventParams) (cortex.EventList[cortex.SkillSummary], error) {
	clamped, err := s.eventFilter(&p.EventFilter)
	if err != nil {
		return cortex.EventList[cortex.SkillSummary]{}, err
	}
	res, err := s.DB.SkillSummaries(ctx, p)
	res.LimitClampedTo = clamped
	return res, err
}

// ToolEvents lists tool calls with their outcome, newest first.
func (s *Service) ToolEvents(ctx context.Context, p cortex.ToolEventParams) (cortex.EventList[cortex.ToolEventRow], error) {
	clamped, err := s.eventFilter(&p.EventFilter)
	if err != nil {
		return cortex.EventList[cortex.ToolEventRow]{}, err
	}
	res, err := s.DB.ToolEvents(ctx, p)
	res.LimitClampedTo = clamped
	return res, err
}

// HookEvents lists hook runs and configured hooks, newest first.
func (s *Service) HookEvents(ctx context.Context, p cortex.HookEventParams) (cortex.EventList[cortex.HookEventRow], error) {
	clamped, err := s.eventFilter(&p.EventFilter)
	if err != nil {
		return cortex.EventList[cortex.HookEventRow]{}, err
	}
	switch p.EvidenceKind {
	case "", cortex.EvidenceRuntime, cortex.EvidenceConfig, cortex.EvidenceTrust:
	default:
		return cortex.EventList[cortex.HookEventRow]{}, cortex.Errorf(cortex.CodeInvalid,
			"unknown evidence kind %q (use runtime_transcript, config_inventory or trusted_hash_state)", p.EvidenceKind)
	}
	if p.Status != "" && !slices.Contains(hookStatuses, p.Status) {
		return cortex.EventList[cortex.HookEventRow]{}, cortex.Errorf(cortex.CodeInvalid,
			"unknown hook status %q (use %s)", p.Status, strings.Join(hookStatuses, ", "))
	}
	res, err := s.DB.HookEvents(ctx, p)
	res.LimitClampedTo = clamped
	return res, err
}
