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

	"github.com/cortexhq/cortex"
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
	// UTC shows times in UTC instead of the local zone (--utc).
	UTC    bool
	Env    config.Env
	Now    func() time.Time
	Logger *slog.Logger
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

// OpenExistingDB opens the configured database for writing (for audit
// rows) without creating it: a missing store is a not-found error, as for
// the read-only commands.
func (f *Factory) OpenExistingDB(ctx context.Context) (*sqlite.DB, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(cfg.DB); err != nil {
		return nil, cortex.WrapError(cortex.CodeNotFound, err, "no database at %s (run `cortex index` first)", cfg.DB)
	}
	return f.OpenDB(ctx, false)
}

// NewService returns the service over db with the factory's clock and
// logger and the configured hostname.
func (f *Factory) NewService(db *sqlite.DB) *app.Service {
	s := app.New(db)
	if f.Now != nil {
		s.Now = f.Now
	}
	s.Logger = f.Logger
	if f.cfg != nil {
		s.Host = f.cfg.Hostname
		s.Prices = f.cfg.Prices
	}
	return s
}
