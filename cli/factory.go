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
	"github.com/cortexhq/cortex/postgres"
	"github.com/cortexhq/cortex/sqlite"
)

// Factory builds what commands need. Fields are set once by NewFactory (or
// by tests).
type Factory struct {
	IO *IOStreams
	// ConfigPath and DBPath are the global --config and --db flags.
	ConfigPath string
	DBPath     string
	// StoreURL is the global --store flag.
	StoreURL string
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
	if f.StoreURL != "" {
		if !postgres.IsURL(f.StoreURL) {
			return nil, cortex.Errorf(cortex.CodeInvalid, "--store must be a postgres:// URL (the local database is --db)")
		}
		cfg.Store = f.StoreURL
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

// OpenStore opens the store the read commands read: the team's PostgreSQL
// store when --store (or [store], CORTEX_STORE) names one, else the local
// database — read-only, or with audit set for writing the LLM audit (an
// existing database only). close releases it.
func (f *Factory) OpenStore(ctx context.Context, audit bool) (st app.Store, close func() error, err error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, nil, err
	}
	if cfg.Store != "" {
		db, err := postgres.Open(ctx, cfg.Store, postgres.Options{Logger: f.Logger, Now: f.Now})
		if err != nil {
			return nil, nil, err
		}
		return db, db.Close, nil
	}
	var db *sqlite.DB
	if audit {
		db, err = f.OpenExistingDB(ctx)
	} else {
		db, err = f.OpenDB(ctx, true)
	}
	if err != nil {
		return nil, nil, err
	}
	return db, db.Close, nil
}

// LocalOnly fails when a team store is selected: cmd writes the local
// database.
func (f *Factory) LocalOnly(cmd string) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if cfg.Store != "" {
		return cortex.Errorf(cortex.CodeInvalid, "%s writes this machine's local store; --store (a team store) is for the read commands "+
			"and serve — send the local store to the team with cortex push", cmd)
	}
	return nil
}

// NewService returns the service over db with the factory's clock and
// logger and the configured hostname.
func (f *Factory) NewService(db app.Store) *app.Service {
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
