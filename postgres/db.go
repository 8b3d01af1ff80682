// Package postgres is Cortex's team store: a PostgreSQL database that
// laptops push their SQLite stores to (cortex push) and that the same
// actions read (cortex serve --store postgres://…). It implements the
// read interfaces of the incident engine and the service exactly as the
// sqlite package does — the same rows in the same order, the same full-text
// matches (message words indexed as FTS5 splits them) — and receives
// pushes: rows copied with COPY, renumbered per pushing store, with the
// store's watermarks in the same transaction. It is the only package with
// PostgreSQL's SQL.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/fts"
	"github.com/cortexhq/cortex/internal/migrations"
	"github.com/cortexhq/cortex/internal/sqlpart"
	"github.com/cortexhq/cortex/rawcodec"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Options configures Open.
type Options struct {
	// Migrate brings the schema up to date (cortex push does); without it
	// a store without the current schema is an error.
	Migrate bool
	// MaxConns bounds the connection pool (default 8).
	MaxConns int32
	// Logger receives diagnostics (default: discard).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// DB is an open team store. It is safe for concurrent use.
type DB struct {
	pool *pgxpool.Pool
	// name is the store's URL without its password, for messages.
	name string
	log  *slog.Logger
	now  func() time.Time
	// words cuts texts into the terms the SQLite store's search index
	// holds (pushed rows' search texts, search queries).
	words *fts.Indexer
	// codec decodes pushed records (for search snippets).
	codec *rawcodec.Codec
}

// IsURL reports whether s names a PostgreSQL store (postgres:// or
// postgresql://).
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Redact returns a store URL without its password.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "postgres://…"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// Open connects to the store at rawURL (a postgres:// URL, libpq
// parameters such as sslmode accepted) and checks, or with opts.Migrate
// brings up to date, its schema.
func Open(ctx context.Context, rawURL string, opts Options) (*DB, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 8
	}
	db := &DB{name: Redact(rawURL), log: opts.Logger, now: opts.Now}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, cortex.Errorf(cortex.CodeInvalid, "invalid PostgreSQL URL %s: %s", db.name, scrub(err.Error(), rawURL))
	}
	cfg.MaxConns = opts.MaxConns
	if cfg.ConnConfig.RuntimeParams == nil {
		cfg.ConnConfig.RuntimeParams = map[string]string{}
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "cortex"
	cfg.ConnConfig.RuntimeParams["timezone"] = "UTC"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, db.unavailable(err, rawURL)
	}
	db.pool = pool
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, db.unavailable(err, rawURL)
	}
	if opts.Migrate {
		err = db.migrate(ctx)
	} else {
		err = db.checkSchema(ctx)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	if db.codec, err = rawcodec.New(); err != nil {
		pool.Close()
		return nil, cortex.WrapError(cortex.CodeInternal, err, "raw record codec")
	}
	if db.words, err = fts.NewIndexer(); err != nil {
		pool.Close()
		return nil, cortex.WrapError(cortex.CodeInternal, err, "full-text indexer")
	}
	return db, nil
}

func (db *DB) unavailable(err error, rawURL string) error {
	return cortex.WrapError(cortex.CodeUnavailable, err, "cannot connect to PostgreSQL store %s: %s", db.name, scrub(err.Error(), rawURL))
}

// scrub removes the password of rawURL from a driver message.
func scrub(msg, rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "xxxxx")
		}
	}
	return msg
}

// Name is the store's URL without its password.
func (db *DB) Name() string { return db.name }

// Close closes the connections.
func (db *DB) Close() error {
	db.pool.Close()
	return db.words.Close()
}

func loadMigrations() ([]migrations.Migration, error) {
	return migrations.Load(migrationFS, "migrations")
}

// SchemaVersion is the newest team-store migration this binary knows.
func SchemaVersion() int {
	ms, _ := loadMigrations()
	return migrations.Newest(ms)
}

// migrationLock is the advisory lock key that serializes migrations of
// concurrent pushes.
const migrationLock = 0x636f7274 // "cort"

// migrate applies the pending migrations, each in one transaction with its
// cortex_schema row, under an advisory lock (many laptops may push at
// once).
func (db *DB) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return cortex.WrapError(cortex.CodeInternal, err, "cannot load migrations")
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return db.failed(err, "migrate")
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return db.failed(err, "migrate")
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock)
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS cortex_schema (version integer PRIMARY KEY, name text NOT NULL,
		applied_at text NOT NULL)`); err != nil {
		return db.failed(err, "migrate")
	}
	var newest int
	if err := conn.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM cortex_schema`).Scan(&newest); err != nil {
		return db.failed(err, "migrate")
	}
	if newest > migrations.Newest(ms) {
		return cortex.Errorf(cortex.CodeUnavailable, "PostgreSQL store %s has schema version %d, newer than this cortex binary (%d); upgrade cortex",
			db.name, newest, migrations.Newest(ms))
	}
	for _, m := range ms {
		if m.Version <= newest {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO cortex_schema(version, name, applied_at) VALUES ($1, $2, $3)`,
				m.Version, m.Name, cortex.FormatTime(db.now()))
			return err
		})
		if err != nil {
			return db.failed(err, "migrate")
		}
		db.log.Info("migrated team store", "store", db.name, "migration", m.Name)
	}
	return nil
}

func (db *DB) schemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.pool.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM cortex_schema`).Scan(&v)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return 0, nil
	}
	return v, err
}

func (db *DB) checkSchema(ctx context.Context) error {
	v, err := db.schemaVersion(ctx)
	if err != nil {
		return db.failed(err, "read the schema")
	}
	switch {
	case v == 0:
		return cortex.Errorf(cortex.CodeNotFound, "PostgreSQL store %s holds no Cortex data yet (cortex push --url … creates it)", db.name)
	case v < SchemaVersion():
		return cortex.Errorf(cortex.CodeUnavailable, "PostgreSQL store %s has schema version %d, older than this binary (%d); a cortex push from this version upgrades it",
			db.name, v, SchemaVersion())
	case v > SchemaVersion():
		return cortex.Errorf(cortex.CodeUnavailable, "PostgreSQL store %s has schema version %d, newer than this cortex binary (%d); upgrade cortex",
			db.name, v, SchemaVersion())
	}
	return nil
}

// failed wraps a database error of an operation.
func (db *DB) failed(err error, what string) error {
	var ce *cortex.Error
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return cortex.WrapError(cortex.CodeUnavailable, err, "PostgreSQL store %s: cannot %s: %v", db.name, what, err)
}

// queryFailed wraps the error of a listing.
func queryFailed(err error, what string) error {
	var ce *cortex.Error
	if errors.As(err, &ce) {
		return err
	}
	return cortex.WrapError(cortex.CodeUnavailable, err, "cannot list %s: %v", what, err)
}

// rebind numbers the ? placeholders of q ($1, $2, …): queries are written
// with ? like the SQLite store's, conditions and all.
func rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	inStr := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			inStr = !inStr
		case c == '?' && !inStr:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// query runs q (with ? placeholders).
func (db *DB) query(ctx context.Context, q string, args ...any) (pgx.Rows, error) {
	return db.pool.Query(ctx, rebind(q), args...)
}

// queryRow runs q (with ? placeholders) for one row.
func (db *DB) queryRow(ctx context.Context, q string, args ...any) pgx.Row {
	return db.pool.QueryRow(ctx, rebind(q), args...)
}

// collect scans every row of a query with scan.
func collect[T any](rows pgx.Rows, err error, what string, scan func(pgx.Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, queryFailed(err, what)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, queryFailed(err, what)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, queryFailed(err, what)
	}
	return out, nil
}

// listRows runs a listing query (which must end in LIMIT ? with limit+1
// bound) and scans at most limit rows, reporting truncation; key, when
// set, gives the cursor of a row, and Next is then the cursor after the
// last row of a truncated page.
func listRows[T any](ctx context.Context, db *DB, what, q string, args []any, limit int,
	scan func(pgx.Rows) (T, error), key func(T) cortex.Cursor) (cortex.EventList[T], error) {
	out := cortex.EventList[T]{Events: []T{}}
	rows, err := db.query(ctx, q, append(args, limit+1)...)
	all, err := collect(rows, err, what, scan)
	if err != nil {
		return out, err
	}
	if len(all) > limit {
		all, out.Truncated = all[:limit], true
	}
	out.Events = append(out.Events, all...)
	out.Total = len(out.Events)
	if out.Truncated && key != nil && len(out.Events) > 0 {
		out.Next = key(out.Events[len(out.Events)-1]).Encode()
	}
	return out, nil
}

// where accumulates SQL conditions (the same builders as the SQLite
// store's).
type where = sqlpart.Where

// marks returns n comma-separated placeholders.
func marks(n int) string { return sqlpart.Marks(n) }

func anys[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func parseStoredTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := cortex.ParseTimestamp(s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// likeEscape escapes the LIKE wildcards of s (with backslash as escape).
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
