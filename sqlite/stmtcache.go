package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps the writer's statements prepared for the life of the
// database: preparing the large multi-row statements in every transaction
// cost more than 5% of ingest. A statement first met inside a transaction
// is prepared there (the only connection is busy) and remembered; it is
// prepared on the writer pool once the transaction ends, and later
// transactions reuse it.
type stmtCache struct {
	mu     sync.Mutex
	db     *sql.DB
	ready  map[string]*sql.Stmt
	wanted map[string]bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, ready: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// bind returns query as a statement of tx.
func (c *stmtCache) bind(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	s, ok := c.ready[query]
	if !ok {
		c.wanted[query] = true
	}
	c.mu.Unlock()
	if ok {
		return tx.StmtContext(ctx, s), nil
	}
	return tx.PrepareContext(ctx, query)
}

// prepareWanted prepares the statements met since the last call. It must
// run outside any transaction (the writer has a single connection).
func (c *stmtCache) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q := range c.wanted {
		if s, err := c.db.PrepareContext(ctx, q); err == nil {
			c.ready[q] = s
		}
		delete(c.wanted, q)
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, s := range c.ready {
		s.Close()
		delete(c.ready, q)
	}
}

// readStmts keeps the statements of hot read queries (the incident
// engine's per-session reads run hundreds of times per answer) prepared on
// the reader pool; database/sql prepares each on a connection once.
type readStmts struct {
	mu sync.Mutex
	db *sql.DB
	m  map[string]*sql.Stmt
}

func (c *readStmts) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[query]; ok {
		return s, nil
	}
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[query] = s
	return s, nil
}

func (c *readStmts) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, s := range c.m {
		s.Close()
		delete(c.m, q)
	}
}

// query runs a hot read query through a cached statement.
func (db *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if db.onRead != nil {
		db.onRead(query, args)
	}
	s, err := db.reads.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

// scan runs a candidate scan (built anew each time: its filters vary).
func (db *DB) scan(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if db.onRead != nil {
		db.onRead(query, args)
	}
	return db.r.QueryContext(ctx, query, args...)
}

// queryRow is query for one row.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	s, err := db.reads.get(ctx, query)
	if err != nil {
		// A failed prepare surfaces through the row's Scan.
		return db.r.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}
