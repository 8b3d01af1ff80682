// Package cli is Cortex's command-line surface (cobra). Every command is an
// Options struct, a NewCmdX constructor that only parses flags, and a run
// function that does the work through the Factory — so tests can check flag
// parsing with a stub run function and output with buffers.
package cli

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/cortexhq/cortex/app"
	"github.com/cortexhq/cortex/config"
	"github.com/cortexhq/cortex/sqlite"
)

// Factory builds what commands need. Fields are set once by NewFactory (or
// by tests).
type Factory struct {
	IO *IOStreams
	// ConfigPath and DBPath are the global --config and --db flags.
	ConfigPath string
	DBPath     string
	Env        config.Env
	Now        func() time.Time
	Logger     *slog.Logger
	// Provider builds LLM providers (nil: the configured Gemini CLI);
	// tests inject fakes.
	Provider app.ProviderFactory
	cfg      *config.Config
}

// NewFactory returns a factory for a real process.
func NewFactory() *Factory {
	return &Factory{
		IO:     System(),
		Env:    os.LookupEnv,
		Now:    time.Now,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

// Config loads the configuration once, applying --db.
func (f *Factory) Config() (*config.Config, error) {
	if f.cfg != nil {
		return f.cfg, nil
	}
	cfg, err := config.Load(f.ConfigPath, f.Env)
	if err != nil {
		return nil, err
	}
	if f.DBPath != "" {
		cfg.DB = f.DBPath
	}
	f.cfg = cfg
	return cfg, nil
}

// OpenDB opens the configured database. readOnly commands never create or
// migrate it.
func (f *Factory) OpenDB(ctx context.Context, readOnly bool) (*sqlite.DB, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, cfg.DB, sqlite.Options{ReadOnly: readOnly, Logger: f.Logger, Now: f.Now})
}
