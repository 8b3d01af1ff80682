// Package config loads Cortex's configuration: a TOML file at the XDG
// config path (or --config), then CORTEX_* environment overrides, then
// defaults. Unknown keys in the file are an error, so typos do not pass
// silently.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/llm"
)

// Config is the typed configuration.
type Config struct {
	// DB is the database file (default: $XDG_DATA_HOME/cortex/cortex.db).
	DB string `toml:"db" json:"db"`
	// Hostname is stored on every ingested row (default: the machine's).
	Hostname string `toml:"hostname" json:"hostname"`
	// Store is the store the read commands, serve and mcp read: "" for
	// the local database, or a team's postgres:// URL (also --store).
	Store string `toml:"store" json:"store"`
	// Push configures `cortex push` to a team store.
	Push PushConfig `toml:"push" json:"push"`
	// Index configures transcript ingest.
	Index IndexConfig `toml:"index" json:"index"`
	// Server configures `cortex serve` (REST, MCP over HTTP, watcher).
	Server ServerConfig `toml:"server" json:"server"`
	// Syslog configures the syslog receiver (`cortex syslog`, and
	// `cortex serve` when enabled).
	Syslog SyslogConfig `toml:"syslog" json:"syslog"`
	// LLM configures the guarded LLM runner ([llm], [llm.actions.<name>],
	// [llm.gemini]).
	LLM llm.Config `toml:"llm" json:"llm"`
	// Prices are US dollars per million tokens by model ([prices.<model>]:
	// input, output, cache_read, cache_write), for the estimated cost of
	// sessions and incidents. A model's entry replaces its default
	// (cortex.DefaultPrices, dated cortex.PricesAsOf); other models keep
	// theirs.
	Prices cortex.Prices `toml:"prices" json:"prices"`

	// Path is the file the configuration was read from ("" if none).
	Path string `toml:"-" json:"config_file"`
	// Home is the user's home folder (for the default transcript roots).
	Home string `toml:"-" json:"-"`
}

// ServerConfig configures `cortex serve`.
type ServerConfig struct {
	// Listen is the HTTP address (default 127.0.0.1:3100). A non-loopback
	// address needs a token.
	Listen string `toml:"listen" json:"listen"`
	// ReadToken grants cortex:read; AdminToken cortex:read and
	// cortex:admin. Without tokens the server is read-only and
	// loopback-only.
	ReadToken  string `toml:"read_token" json:"read_token"`
	AdminToken string `toml:"admin_token" json:"admin_token"`
	// AllowedHosts are host names (or addresses) clients may use in the
	// Host and Origin headers besides localhost, loopback addresses and
	// the listen address (DNS rebinding protection).
	AllowedHosts []string `toml:"allowed_hosts" json:"allowed_hosts"`
	// MaxConnections caps open HTTP connections (default 256).
	MaxConnections int `toml:"max_connections" json:"max_connections"`
	// TLSCert and TLSKey, both set, serve HTTPS.
	TLSCert string `toml:"tls_cert" json:"tls_cert"`
	TLSKey  string `toml:"tls_key" json:"tls_key"`
}

// MinTokenLength is the shortest bearer token accepted: a short token can
// be guessed.
const MinTokenLength = 16

// DefaultMaxConnections is the default of [server] max_connections.
const DefaultMaxConnections = 256

// SyslogConfig configures the syslog receiver ([syslog]).
type SyslogConfig struct {
	// Enabled runs the receiver in `cortex serve` (also --syslog).
	Enabled bool `toml:"enabled" json:"enabled"`
	// UDP and TCP are the listen addresses ("off" disables one; default
	// 127.0.0.1:1514 each).
	UDP string `toml:"udp" json:"udp"`
	TCP string `toml:"tcp" json:"tcp"`
	// QueueSize bounds the messages waiting for the writer; more are
	// dropped and counted.
	QueueSize int `toml:"queue_size" json:"queue_size"`
	// MaxMessageBytes cuts longer messages (marked as cut).
	MaxMessageBytes int `toml:"max_message_bytes" json:"max_message_bytes"`
}

// PushConfig configures `cortex push` ([push]).
type PushConfig struct {
	// URL is the team's PostgreSQL store (postgres://…).
	URL string `toml:"url" json:"url"`
	// Content is how much text to send: full (default), redacted or none.
	Content string `toml:"content" json:"content"`
}

// DefaultListen is the default HTTP address of `cortex serve`.
const DefaultListen = "127.0.0.1:3100"

// IndexConfig configures `cortex index`.
type IndexConfig struct {
	// Paths replace the agents' default folders when set.
	Paths []string `toml:"paths" json:"paths"`
	// Workers parse files in parallel (0: one per CPU but one, at least
	// one; the writer keeps the other).
	Workers int `toml:"workers" json:"workers"`
}

// Env is the environment as a lookup function (os.LookupEnv in production).
type Env func(string) (string, bool)

// Load reads the configuration. explicitPath is --config ("" for the
// default location); a missing default file is fine, a missing explicit one
// is an error.
func Load(explicitPath string, env Env) (*Config, error) {
	home, _ := env("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err == nil {
			home = h
		}
	}
	cfg := &Config{Home: home, LLM: llm.DefaultConfig(), Prices: cortex.DefaultPrices()}
	path := explicitPath
	if path == "" {
		if p, ok := env("CORTEX_CONFIG"); ok && p != "" {
			path = p
			explicitPath = p
		} else {
			path = filepath.Join(xdg(env, "XDG_CONFIG_HOME", home, ".config"), "cortex", "config.toml")
		}
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		dec := toml.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(cfg); err != nil {
			var sm *toml.StrictMissingError
			if errors.As(err, &sm) {
				return nil, cortex.Errorf(cortex.CodeInvalid, "config %s: unknown setting(s):\n%s", path, sm.String())
			}
			var de *toml.DecodeError
			if errors.As(err, &de) {
				row, col := de.Position()
				return nil, cortex.Errorf(cortex.CodeInvalid, "config %s:%d:%d: %s", path, row, col, de.Error())
			}
			return nil, cortex.Errorf(cortex.CodeInvalid, "config %s: %v", path, err)
		}
		cfg.Path = path
	case errors.Is(err, fs.ErrNotExist) && explicitPath == "":
	default:
		return nil, cortex.WrapError(cortex.CodeInvalid, err, "cannot read config %s: %v", path, err)
	}
	if err := cfg.applyEnv(env); err != nil {
		return nil, err
	}
	if err := cfg.LLM.ApplyEnv(env); err != nil {
		return nil, err
	}
	if err := cfg.LLM.Validate(); err != nil {
		return nil, fmt.Errorf("config %s: %w", displayPath(cfg.Path), err)
	}
	cfg.LLM.Gemini.Home = expandHome(cfg.LLM.Gemini.Home, home)
	cfg.LLM.Gemini.Program = expandHome(cfg.LLM.Gemini.Program, home)
	cfg.LLM.Claude.Program = expandHome(cfg.LLM.Claude.Program, home)
	cfg.LLM.Codex.Program = expandHome(cfg.LLM.Codex.Program, home)
	if cfg.DB == "" {
		cfg.DB = filepath.Join(xdg(env, "XDG_DATA_HOME", home, filepath.Join(".local", "share")), "cortex", "cortex.db")
	}
	cfg.DB = expandHome(cfg.DB, home)
	for i, p := range cfg.Index.Paths {
		cfg.Index.Paths[i] = expandHome(p, home)
	}
	if cfg.Server.Listen == "" {
		cfg.Server.Listen = DefaultListen
	}
	if cfg.Push.Content == "" {
		cfg.Push.Content = "full"
	}
	switch cfg.Push.Content {
	case "full", "redacted", "none":
	default:
		return nil, cortex.Errorf(cortex.CodeInvalid, "[push] content must be full, redacted or none, got %q", cfg.Push.Content)
	}
	for _, u := range []struct{ name, v string }{{"store", cfg.Store}, {"[push] url", cfg.Push.URL}} {
		if u.v != "" && !strings.HasPrefix(u.v, "postgres://") && !strings.HasPrefix(u.v, "postgresql://") {
			return nil, cortex.Errorf(cortex.CodeInvalid, "%s must be a postgres:// URL, got %q", u.name, redactURL(u.v))
		}
	}
	for model, p := range cfg.Prices {
		if p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0 {
			return nil, cortex.Errorf(cortex.CodeInvalid, "config %s: [prices.%q]: prices must not be negative", displayPath(cfg.Path), model)
		}
	}
	if err := cfg.Server.validate(home); err != nil {
		return nil, err
	}
	if cfg.Hostname == "" {
		if h, err := os.Hostname(); err == nil && h != "" {
			cfg.Hostname = h
		} else {
			cfg.Hostname = "localhost"
		}
	}
	return cfg, nil
}

// validate checks the server settings and expands ~ in the TLS paths.
func (s *ServerConfig) validate(home string) error {
	if s.ReadToken != "" && s.ReadToken == s.AdminToken {
		return cortex.Errorf(cortex.CodeInvalid, "[server] read_token and admin_token must differ")
	}
	for name, tok := range map[string]string{"read_token (CORTEX_READ_TOKEN)": s.ReadToken, "admin_token (CORTEX_ADMIN_TOKEN)": s.AdminToken} {
		if tok != "" && len(tok) < MinTokenLength {
			return cortex.Errorf(cortex.CodeInvalid,
				"[server] %s is %d characters; use at least %d (for example: openssl rand -hex 24)", name, len(tok), MinTokenLength)
		}
	}
	if s.MaxConnections == 0 {
		s.MaxConnections = DefaultMaxConnections
	}
	if s.MaxConnections < 0 {
		return cortex.Errorf(cortex.CodeInvalid, "[server] max_connections must be positive, got %d", s.MaxConnections)
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return cortex.Errorf(cortex.CodeInvalid, "[server] tls_cert and tls_key must be set together")
	}
	s.TLSCert, s.TLSKey = expandHome(s.TLSCert, home), expandHome(s.TLSKey, home)
	return nil
}

// applyEnv applies CORTEX_* overrides.
func (c *Config) applyEnv(env Env) error {
	if v, ok := env("CORTEX_DB"); ok && v != "" {
		c.DB = v
	}
	if v, ok := env("CORTEX_HOSTNAME"); ok && v != "" {
		c.Hostname = v
	}
	if v, ok := env("CORTEX_INDEX_PATHS"); ok && v != "" {
		c.Index.Paths = filepath.SplitList(v)
	}
	if v, ok := env("CORTEX_STORE"); ok && v != "" {
		c.Store = v
	}
	if v, ok := env("CORTEX_PUSH_URL"); ok && v != "" {
		c.Push.URL = v
	}
	if v, ok := env("CORTEX_PUSH_CONTENT"); ok && v != "" {
		c.Push.Content = v
	}
	if v, ok := env("CORTEX_LISTEN"); ok && v != "" {
		c.Server.Listen = v
	}
	if v, ok := env("CORTEX_READ_TOKEN"); ok && v != "" {
		c.Server.ReadToken = v
	}
	if v, ok := env("CORTEX_ADMIN_TOKEN"); ok && v != "" {
		c.Server.AdminToken = v
	}
	if v, ok := env("CORTEX_ALLOWED_HOSTS"); ok && v != "" {
		c.Server.AllowedHosts = strings.Split(v, ",")
	}
	if v, ok := env("CORTEX_INDEX_WORKERS"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return cortex.Errorf(cortex.CodeInvalid, "CORTEX_INDEX_WORKERS must be a non-negative integer, got %q", v)
		}
		c.Index.Workers = n
	}
	return nil
}

func displayPath(p string) string {
	if p == "" {
		return "(defaults)"
	}
	return p
}

func xdg(env Env, name, home, fallback string) string {
	if v, ok := env(name); ok && filepath.IsAbs(v) {
		return v
	}
	return filepath.Join(home, fallback)
}

func expandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// String renders the effective configuration as TOML (for `cortex config`).
func (c *Config) String() string {
	b, err := toml.Marshal(c.Redacted())
	if err != nil {
		return fmt.Sprintf("# cannot render config: %v", err)
	}
	return string(b)
}

// Redacted returns the configuration as it may be shown: tokens as
// "(set)", store URLs without their passwords.
func (c Config) Redacted() Config {
	for _, tok := range []*string{&c.Server.ReadToken, &c.Server.AdminToken} {
		if *tok != "" {
			*tok = "(set)"
		}
	}
	c.Store, c.Push.URL = redactURL(c.Store), redactURL(c.Push.URL)
	return c
}

// redactURL hides the password of a store URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}
