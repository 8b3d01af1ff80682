package app

import (
	"context"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/assess"
	"github.com/cortexhq/cortex/incident"
	"github.com/cortexhq/cortex/llm"
)

// Limits of the LLM audit listing.
const (
	DefaultInvocationsLimit = 50
	MaxInvocationsLimit     = 500
)

// ProviderFactory returns the provider for a model ("" = the configured
// one).
type ProviderFactory func(model string) (llm.Provider, error)

// EnableLLM gives the service its one guarded runner (marking audit rows
// of dead processes interrupted) and the configured provider. Without it,
// assessments stop at findings and dry runs are refused. newProvider may
// be nil for the provider the configuration names.
func (s *Service) EnableLLM(ctx context.Context, cfg llm.Config, newProvider ProviderFactory, opts ...llm.Option) error {
	r, err := llm.NewRunner(ctx, cfg, s.DB, opts...)
	if err != nil {
		return err
	}
	if newProvider == nil {
		newProvider = ConfiguredProvider(cfg)
	}
	s.runner, s.newProvider, s.llmConfig = r, newProvider, cfg
	return nil
}

// ConfiguredProvider builds the providers [llm] provider names (gemini,
// claude, codex or openai).
func ConfiguredProvider(cfg llm.Config) ProviderFactory {
	return func(model string) (llm.Provider, error) { return llm.NewProvider(cfg, cfg.Provider, model) }
}

// providerFor returns the provider of an LLM action: the one its
// [llm.actions.<name>] section chooses, else the service's; model (when
// not "") replaces the action's or provider's model.
func (s *Service) providerFor(action, model string) (llm.Provider, error) {
	if model == "" {
		model = s.llmConfig.ModelFor(action)
	}
	if a, ok := s.llmConfig.Actions[action]; ok && a.Provider != "" {
		return llm.NewProvider(s.llmConfig, a.Provider, model)
	}
	return s.newProvider(model)
}

// GeminiProvider builds Gemini CLI providers from cfg.
func GeminiProvider(cfg llm.GeminiConfig) ProviderFactory {
	return func(model string) (llm.Provider, error) {
		if model != "" {
			cfg.Model = model
		}
		return llm.NewGemini(cfg)
	}
}

// Assess assesses the best matching incidents of a target (skill, abuse,
// mcp, hooks): deterministic findings always, then a dry-run preview or
// an LLM assessment through the guarded runner. Callers other than the
// local CLI never reach the LLM (they get the dry run).
func (s *Service) Assess(ctx context.Context, target string, p assess.Params) (assess.Result, error) {
	a := &assess.Assessor{Investigator: s, Rows: s.DB, Runner: s.runner, Available: lensAvailable}
	if t, ok := assess.Targets()[target]; ok && s.newProvider != nil {
		a.Provider = func(model string) (llm.Provider, error) { return s.providerFor(t.Action, model) }
	}
	if s.runner == nil && !p.NoLLM && !p.PrintPrompt {
		return assess.Result{}, cortex.Errorf(cortex.CodeUnavailable, "this Cortex process has no LLM runner; use --no-llm")
	}
	return a.Assess(ctx, target, p)
}

func lensAvailable(name string) bool {
	_, err := incident.LensByName(name)
	return err == nil
}

// Invocations lists the LLM audit, newest first.
func (s *Service) Invocations(ctx context.Context, p cortex.InvocationParams) (cortex.InvocationList, error) {
	limit, clamped, err := cortex.ClampLimit(p.Limit, DefaultInvocationsLimit, MaxInvocationsLimit)
	if err != nil {
		return cortex.InvocationList{}, err
	}
	p.Limit = limit
	list, err := s.DB.Invocations(ctx, p)
	if list.Invocations == nil {
		list.Invocations = []cortex.Invocation{}
	}
	list.LimitClampedTo = clamped
	return list, err
}
