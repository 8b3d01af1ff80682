package llm

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/cortexhq/cortex"
)

// Config is the [llm] section of the configuration: every guard the
// runner applies. The zero value is not useful; start from DefaultConfig.
type Config struct {
	// Enabled is the global kill switch (env CORTEX_LLM_ENABLED).
	Enabled bool `toml:"enabled" json:"enabled"`
	// MaxConcurrent caps invocations in flight in this process.
	MaxConcurrent int `toml:"max_concurrent" json:"max_concurrent"`
	// MaxPerActionConcurrent caps invocations in flight per action.
	MaxPerActionConcurrent int `toml:"max_per_action_concurrent" json:"max_per_action_concurrent"`
	// MaxPerMinute and MaxPerHour cap started invocations per action over
	// sliding 60 s and 3600 s windows.
	MaxPerMinute int `toml:"max_invocations_per_minute" json:"max_invocations_per_minute"`
	MaxPerHour   int `toml:"max_invocations_per_hour" json:"max_invocations_per_hour"`
	// FailureThreshold consecutive failures or timeouts of an action open
	// its circuit for CooldownSecs.
	FailureThreshold int `toml:"failure_threshold" json:"failure_threshold"`
	CooldownSecs     int `toml:"cooldown_secs" json:"cooldown_secs"`
	// TimeoutSecs bounds one invocation; the provider's process group is
	// killed when it expires.
	TimeoutSecs int `toml:"timeout_secs" json:"timeout_secs"`
	// MaxPromptBytes rejects larger prompts before any provider starts.
	MaxPromptBytes int `toml:"max_prompt_bytes" json:"max_prompt_bytes"`
	// MaxOutputBytes truncates the answer (on a UTF-8 boundary).
	MaxOutputBytes int `toml:"max_output_bytes" json:"max_output_bytes"`
	// BackgroundEnabled allows invocations from the background surface.
	BackgroundEnabled bool `toml:"background_enrichment_enabled" json:"background_enrichment_enabled"`
	// Provider names the default provider: gemini, claude (claude -p),
	// codex (codex exec) or openai (an OpenAI-compatible endpoint).
	Provider string `toml:"provider" json:"provider"`
	// Actions enable or disable single actions ([llm.actions.<name>]);
	// an absent action is enabled.
	Actions map[string]ActionConfig `toml:"actions" json:"actions,omitempty"`
	// Gemini configures the Gemini CLI provider.
	Gemini GeminiConfig `toml:"gemini" json:"gemini"`
	// Claude and Codex configure the Claude Code and Codex CLI providers.
	Claude ProgramConfig `toml:"claude" json:"claude"`
	Codex  ProgramConfig `toml:"codex" json:"codex"`
	// OpenAI configures an OpenAI-compatible HTTP endpoint.
	OpenAI OpenAIConfig `toml:"openai" json:"openai"`
}

// ActionConfig configures one action.
type ActionConfig struct {
	// Enabled switches the action off when false (absent: on).
	Enabled *bool `toml:"enabled" json:"enabled,omitempty"`
	// Provider and Model choose the model of this action ("" = [llm]
	// provider and that provider's model).
	Provider string `toml:"provider" json:"provider,omitempty"`
	Model    string `toml:"model" json:"model,omitempty"`
}

// Actions that run an LLM.
const (
	ActionAbuseAssess = "ai_assess"
	ActionSkillAssess = "skill_assess"
	ActionMCPAssess   = "mcp_assess"
	ActionHookAssess  = "hook_assess"
	// ActionSkillPropose is an LLM proposal of SKILL.md edits
	// (cortex ai skill-propose --llm).
	ActionSkillPropose = "skill_propose"
	// ActionBackground is background enrichment, gated by
	// BackgroundEnabled like the background surface.
	ActionBackground = "background_enrich"
)

// KnownActions lists the actions an [llm.actions.<name>] section may name.
func KnownActions() []string {
	return []string{ActionAbuseAssess, ActionSkillAssess, ActionMCPAssess, ActionHookAssess, ActionSkillPropose, ActionBackground}
}

// DefaultConfig returns the defaults: enabled, one call at a time, 3 per
// minute and 30 per hour per action, the circuit opening after 3
// consecutive failures for 5 minutes, 120 s timeout, 1 MiB prompts,
// 256 KiB answers, no background use, the Gemini CLI.
func DefaultConfig() Config {
	return Config{
		Enabled:                true,
		MaxConcurrent:          1,
		MaxPerActionConcurrent: 1,
		MaxPerMinute:           3,
		MaxPerHour:             30,
		FailureThreshold:       3,
		CooldownSecs:           300,
		TimeoutSecs:            120,
		MaxPromptBytes:         1 << 20,
		MaxOutputBytes:         256 << 10,
		Provider:               "gemini",
		Gemini:                 GeminiConfig{Program: DefaultGeminiProgram, Model: DefaultGeminiModel},
		Claude:                 ProgramConfig{Program: DefaultClaudeProgram},
		Codex:                  ProgramConfig{Program: DefaultCodexProgram},
		OpenAI:                 OpenAIConfig{BaseURL: DefaultOpenAIBaseURL},
	}
}

// Validate reports the first invalid setting.
func (c Config) Validate() error {
	pos := []struct {
		name string
		v    int
	}{
		{"max_concurrent", c.MaxConcurrent}, {"max_per_action_concurrent", c.MaxPerActionConcurrent},
		{"max_invocations_per_minute", c.MaxPerMinute}, {"max_invocations_per_hour", c.MaxPerHour},
		{"failure_threshold", c.FailureThreshold}, {"timeout_secs", c.TimeoutSecs},
		{"max_prompt_bytes", c.MaxPromptBytes}, {"max_output_bytes", c.MaxOutputBytes},
	}
	for _, p := range pos {
		if p.v <= 0 {
			return cortex.Errorf(cortex.CodeInvalid, "[llm] %s must be greater than 0, got %d", p.name, p.v)
		}
	}
	if c.CooldownSecs < 0 {
		return cortex.Errorf(cortex.CodeInvalid, "[llm] cooldown_secs must not be negative, got %d", c.CooldownSecs)
	}
	if !slices.Contains(Providers(), c.Provider) {
		return cortex.Errorf(cortex.CodeInvalid, "[llm] provider %q is not supported (supported: %s)", c.Provider,
			strings.Join(Providers(), ", "))
	}
	known := KnownActions()
	var unknown []string
	for name := range c.Actions {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return cortex.Errorf(cortex.CodeInvalid, "[llm.actions] unknown action(s) %s (known: %s)",
			strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	// The providers in use must build (the others may stay unconfigured:
	// an OpenAI endpoint needs a model only when it is used).
	used := map[string]string{c.Provider: ""}
	for name, a := range c.Actions {
		if a.Provider != "" && !slices.Contains(Providers(), a.Provider) {
			return cortex.Errorf(cortex.CodeInvalid, "[llm.actions.%s] provider %q is not supported (supported: %s)", name,
				a.Provider, strings.Join(Providers(), ", "))
		}
		if a.Provider != "" {
			used[a.Provider] = ""
		}
		if a.Model != "" && !geminiValidModel(a.Model) {
			return cortex.Errorf(cortex.CodeInvalid, "[llm.actions.%s] model %q is not a model name", name, a.Model)
		}
	}
	if _, err := NewGemini(c.Gemini); err != nil {
		return err
	}
	for name := range used {
		if _, err := NewProvider(c, name, ""); err != nil {
			return err
		}
	}
	return nil
}

// ApplyEnv applies CORTEX_LLM_ENABLED, the one environment override of
// [llm] (so a kill switch works without editing files).
func (c *Config) ApplyEnv(lookup func(string) (string, bool)) error {
	v, ok := lookup("CORTEX_LLM_ENABLED")
	if !ok || strings.TrimSpace(v) == "" {
		return nil
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		c.Enabled = false
	case "1", "true", "yes", "on":
		c.Enabled = true
	default:
		if b, err := strconv.ParseBool(v); err == nil {
			c.Enabled = b
			return nil
		}
		return cortex.Errorf(cortex.CodeInvalid, "CORTEX_LLM_ENABLED must be true or false, got %q", v)
	}
	return nil
}

// actionEnabled reports whether an action is enabled.
func (c Config) actionEnabled(action string) bool {
	a, ok := c.Actions[action]
	return !ok || a.Enabled == nil || *a.Enabled
}
