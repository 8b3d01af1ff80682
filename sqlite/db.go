// Package sqlite is Cortex's store: an embedded SQLite database (WAL, one
// writer, a pool of readers) holding transcript rows, their full-text index,
// ingest checkpoints and everything derived from them. It is the only
// package that contains SQL.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"

	"github.com/cortexhq/cortex"
	"github.com/cortexhq/cortex/internal/migrations"
	"github.com/cortexhq/cortex/rawcodec"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Options configures Open.
type Options struct {
	// ReadOnly opens the database for queries only: no migrations, no writes.
	ReadOnly bool
	// Readers is the size of the reader pool (default: 2 × CPUs, at least 4).
	Readers int
	// Logger receives diagnostics (default: discard).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// DB is an open Cortex store. It is safe for concurrent use: reads go
// through a pool, writes are serialized through one connection.
type DB struct {
	path  string
	w     *sql.DB
	r     *sql.DB
	wmu   sync.Mutex
	log   *slog.Logger
	now   func() time.Time
	ro    bool
	stmts *stmtCache
	reads readStmts
	// sw writes the search file (see search.go); searchAttached says
	// whether readers see it; searchMu serializes this process's indexers.
	sw             *sql.DB
	ir             *sql.DB // the indexer's readers
	searchAttached bool
	searchMu       sync.Mutex
	// noSearchMerge (tests) makes catch-ups leave their segments
	// unmerged; mergePages (tests), when set, replaces searchMergePages.
	noSearchMerge bool
	mergePages    int
	// reclaimPages (tests), when set, replaces searchReclaimPages.
	reclaimPages int64
	codec        *rawcodec.Codec
	blocks       blockCache // decoded raw blocks (see rawblocks.go)
	// readPar is how many queries of one batched read run at once, and
	// batch the most sessions one of them reads (see eachChunk).
	readPar, batch int
	// textReads and textBlocks count the row texts read from their
	// records and the blocks read for them (see texts.go).
	textReads, textBlocks atomic.Int64
	// onRead, when set (by tests), sees the engine's reads before they
	// run: the query-plan gates check them.
	onRead func(query string, args []any)
	// KickSearch's background catch-up.
	kickMu             sync.Mutex
	kicking, kickAgain bool
	kickWG             sync.WaitGroup
	kickCtx            context.Context
	kickStop           context.CancelFunc
}

// Open opens (creating if needed) the database at path and brings its
// schema up to date.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Readers <= 0 {
		opts.Readers = max(4, 2*runtime.NumCPU())
	}
	db := &DB{path: path, log: opts.Logger, now: opts.Now, ro: opts.ReadOnly}
	db.kickCtx, db.kickStop = context.WithCancel(context.WithoutCancel(ctx))
	codec, err := rawcodec.New()
	if err != nil {
		return nil, cortex.WrapError(cortex.CodeInternal, err, "raw record codec")
	}
	db.codec = codec
	if !opts.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot create the database folder %s", filepath.Dir(path))
		}
	} else if _, err := os.Stat(path); err != nil {
		return nil, cortex.WrapError(cortex.CodeNotFound, err, "no database at %s (run `cortex index` first)", path)
	}
	common := "_pragma=busy_timeout(5000)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(OFF)&_pragma=temp_store(MEMORY)"
	if !opts.ReadOnly {
		// The writer's page cache is 16 MiB: 64 MiB (with 32 for the
		// search writer) cost 180 MB of peak RSS on ingest and bought no
		// speed (docs/performance.md).
		w, err := sql.Open("sqlite", path+"?"+common+"&_pragma=cache_size(-16384)&_pragma=wal_autocheckpoint(16384)&_txlock=immediate")
		if err != nil {
			return nil, cortex.WrapError(cortex.CodeUnavailable, err, "cannot open database %s", path)
		}
		w.SetMaxOpenConns(1)
		w.SetMaxIdleConns(1)
		w.SetConnMaxLifetime(0)
		db.w = w
		db.stmts = newStmtCache(w)
		if err := db.ping(ctx, w); err != nil {
			w.Close()
			return nil, err
		}
		if err := db.initFile(ctx); err != nil {
			w.Close()
			return nil, err
		}
		if err := db.migrate(ctx); err != nil {
			w.Close()
			return nil, err
		}
		if err := db.openSearch(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	// Readers map the file (mmap_size): in WAL mode every commit makes a
	// reader drop its page cache, and refilling it through pread and
	// freeing it cost a quarter of the CPU under 50 readers during an
	// ingest (bench http); mapped pages are shared and cost neither.
	// Every reader connection attaches the search file as "search".
	conn, attached := newReaderConnector(path+"?"+common+"&_pragma=query_only(1)&_pragma=cache_size(-16384)&_pragma=mmap_size(1073741824)", path)
	r := sql.OpenDB(conn)
	db.searchAttached = attached
	r.SetMaxOpenConns(opts.Readers)
	r.SetMaxIdleConns(opts.Readers)
	db.r = r
	db.readPar, db.batch = max(1, min(runtime.GOMAXPROCS(0), opts.Readers/2)), sessionBatch
	db.reads.db = r
	if !opts.ReadOnly {
		// The search indexer reads every row once: through the page cache,
		// not mapped (mapped pages of a whole archive would count as the
		// process's memory).
		ic, _ := newReaderConnector(path+"?"+common+"&_pragma=query_only(1)&_pragma=cache_size(-8192)&_pragma=mmap_size(0)", path)
		db.ir = sql.OpenDB(ic)
		db.ir.SetMaxOpenConns(2)
		db.ir.SetMaxIdleConns(2)
	}
	if err := db.ping(ctx, r); err != nil {
		db.Close()
		return nil, err
	}
	if opts.ReadOnly {
		if err := db.checkSchema(ctx); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

func (db *DB) ping(ctx context.Context, c *sql.DB) error {
	if err := c.PingContext(ctx); err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "cannot open database %s: %v", db.path, err)
	}
	var mode string
	if err := c.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "database %s is not usable: %v", db.path, err)
	}
	return nil
}

// pageSize is the page size of a database file this version creates (an
// existing file keeps its own). Rows of logs and ai_mcp_events run to
// 0.5–2 KB, and 4 KiB pages left an eighth of those tables unused: on the
// 1 GB corpus 8 KiB pages made the database 2.5% smaller at the same
// ingest speed; 16 KiB saved little more and cost 50 MB of peak RSS
// (docs/performance.md). Raw records are in blocks, so no longer spill one
// by one into mostly empty overflow pages, as they did when 16 KiB pages
// doubled the file.
const pageSize = 8192

// initFile gives a new file its page size (set before the first table, or
// it changes nothing) and switches the database to WAL (readers never
// block the writer).
func (db *DB) initFile(ctx context.Context) error {
	var mode string
	if _, err := db.w.ExecContext(ctx, "PRAGMA page_size = "+strconv.Itoa(pageSize)); err != nil {
		return db.openErr(err)
	}
	if err := db.w.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		return db.openErr(err)
	}
	if mode != "wal" {
		return cortex.Errorf(cortex.CodeUnavailable, "database %s cannot use WAL mode (journal mode %s); is it on a network file system?", db.path, mode)
	}
	return nil
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Close closes all connections. When the database was opened for writing it
// first runs PRAGMA optimize.
func (db *DB) Close() error {
	var errs []error
	db.kickStop()
	db.kickWG.Wait()
	if db.w != nil {
		db.stmts.close()
		_, _ = db.w.Exec("PRAGMA optimize")
		errs = append(errs, db.w.Close())
	}
	if db.sw != nil {
		errs = append(errs, db.sw.Close())
	}
	if db.r != nil {
		db.reads.close()
		errs = append(errs, db.r.Close())
	}
	if db.ir != nil {
		errs = append(errs, db.ir.Close())
	}
	return errors.Join(errs...)
}

// isBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED.
func isBusy(err error) bool {
	var se *sqlite3.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff
		return c == sqlite3lib.SQLITE_BUSY || c == sqlite3lib.SQLITE_LOCKED
	}
	return false
}

// maxBusyRetries bounds how often a write locked by another process is
// retried. With the 5 s busy timeout per attempt and the backoff, a write
// gives up with code busy after about half a minute.
const maxBusyRetries = 4

// isConstraint reports whether err is a constraint violation (bad data).
func isConstraint(err error) bool {
	var se *sqlite3.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3lib.SQLITE_CONSTRAINT
}

// write runs fn in one write transaction (BEGIN IMMEDIATE). Transactions are
// serialized in-process; a database locked by another process is retried
// with bounded, jittered backoff.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if db.w == nil {
		return cortex.Errorf(cortex.CodeInvalid, "the database is open read-only")
	}
	db.wmu.Lock()
	defer db.wmu.Unlock()
	defer db.stmts.prepareWanted(context.WithoutCancel(ctx))
	err := retryBusy(ctx, db.w, db.log, fn)
	if err != nil && isBusy(err) {
		return cortex.WrapError(cortex.CodeBusy, err, "the database is locked by another process; try again")
	}
	return err
}

// retryBusy runs fn in one transaction of conn (BEGIN IMMEDIATE), retrying
// a file locked by another process with bounded, jittered backoff.
func retryBusy(ctx context.Context, conn *sql.DB, log *slog.Logger, fn func(tx *sql.Tx) error) error {
	backoff := 50 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := writeOnce(ctx, conn, fn)
		if err == nil || !isBusy(err) || attempt >= maxBusyRetries {
			return err
		}
		log.Warn("database busy, retrying", "attempt", attempt+1, "err", err)
		sleep := backoff + time.Duration(rand.Int64N(int64(backoff)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(sleep):
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

func writeOnce(ctx context.Context, conn *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func loadMigrations() ([]migrations.Migration, error) {
	return migrations.Load(migrationFS, "migrations")
}

// SchemaVersion is the newest migration this binary knows.
func SchemaVersion() int {
	ms, _ := loadMigrations()
	return migrations.Newest(ms)
}

// migrate applies pending migrations, each in its own transaction together
// with its schema_migrations row, so a crash leaves the schema either
// before or after a migration, never half-way.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return cortex.WrapError(cortex.CodeInternal, err, "cannot load migrations")
	}
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return db.openErr(err)
	}
	// A newer binary's schema is left untouched.
	var newest int
	if err := db.w.QueryRowContext(ctx, "SELECT COALESCE(max(version), 0) FROM schema_migrations").Scan(&newest); err != nil {
		return db.openErr(err)
	}
	if newest > migrations.Newest(ms) {
		return cortex.Errorf(cortex.CodeUnavailable, "database %s has schema version %d, newer than this cortex binary (%d); upgrade cortex", db.path, newest, migrations.Newest(ms))
	}
	for _, m := range ms {
		err := db.write(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", m.Version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("migration %s: %w", m.Name, err)
			}
			_, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
				m.Version, m.Name, cortex.FormatTime(db.now()))
			return err
		})
		if err != nil {
			return db.openErr(err)
		}
	}
	return nil
}

func (db *DB) checkSchema(ctx context.Context) error {
	var v int
	if err := db.r.QueryRowContext(ctx, "SELECT COALESCE(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return cortex.WrapError(cortex.CodeUnavailable, err, "database %s is not a Cortex database", db.path)
	}
	if v < SchemaVersion() {
		return cortex.Errorf(cortex.CodeUnavailable, "database %s has schema version %d, older than this binary (%d); open it once for writing (e.g. `cortex index`) to upgrade", db.path, v, SchemaVersion())
	}
	if v > SchemaVersion() {
		return cortex.Errorf(cortex.CodeUnavailable, "database %s has schema version %d, newer than this cortex binary (%d); upgrade cortex", db.path, v, SchemaVersion())
	}
	return nil
}

func (db *DB) openErr(err error) error {
	var ce *cortex.Error
	if errors.As(err, &ce) {
		return err
	}
	return cortex.WrapError(cortex.CodeUnavailable, err, "cannot prepare database %s: %v", db.path, err)
}
