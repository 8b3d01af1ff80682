package llm

import (
	"context"
	"io"
)

// Provider runs one prompt through a model. Implementations must stop
// (and kill any process they started, with its children) when ctx is
// done, and write the answer's text to stream as it arrives when stream
// is not nil. The runner, not the provider, applies every guard.
type Provider interface {
	// Name is the provider's audit name ("gemini").
	Name() string
	// Program is the executable run, for the audit ("" if none).
	Program() string
	// Model is the model asked, for the audit.
	Model() string
	// Run sends prompt and returns the complete answer text.
	Run(ctx context.Context, prompt string, stream io.Writer) (string, error)
}

// GeminiConfig configures the Gemini CLI provider ([llm.gemini]).
type GeminiConfig struct {
	// Program is the gemini executable (a name on PATH or a path).
	Program string `toml:"program" json:"program"`
	// Model is the model passed with --model.
	Model string `toml:"model" json:"model"`
	// Home is the directory whose .gemini auth files are copied into the
	// isolated home ("" = the user's home).
	Home string `toml:"home" json:"home"`
	// Args are extra arguments appended to the command (checked against
	// the forbidden flags).
	Args []string `toml:"args" json:"args,omitempty"`
}

// Default Gemini settings.
const (
	DefaultGeminiProgram = "gemini"
	DefaultGeminiModel   = "gemini-3.1-flash-lite-preview"
)
