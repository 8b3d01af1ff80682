package fts

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"

	_ "modernc.org/sqlite" // the "sqlite" driver: FTS5 cuts and stems words
)

// Tokenizer is the tokenizer of the SQLite store's search index (its
// search file): unicode61 tokens with diacritics removed, reduced to
// their English stems by the porter tokenizer ("leaks", "leaked" and
// "leaking" index as "leak").
const Tokenizer = `porter unicode61 remove_diacritics 2`

// Posting is a term of a text at a position (0-based, in tokens).
type Posting struct {
	Term     string
	Position int
}

// Indexer cuts texts into the terms and positions the SQLite store's
// search index holds for them, by asking SQLite's FTS5 itself (an
// in-memory database with the same tokenizer): the PostgreSQL store
// indexes and queries these terms, so both stores find the same rows
// for the same words. It is safe for concurrent use (one text batch at a
// time).
type Indexer struct {
	mu sync.Mutex
	db *sql.DB
}

// NewIndexer opens an Indexer.
func NewIndexer() (*Indexer, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, fmt.Errorf("full-text indexer: %w", err)
	}
	// One connection: an in-memory database is per connection.
	db.SetMaxOpenConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(x, content = '', tokenize = '` + Tokenizer + `');
		CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`); err != nil {
		db.Close()
		return nil, fmt.Errorf("full-text indexer: %w", err)
	}
	return &Indexer{db: db}, nil
}

// Close releases the indexer.
func (x *Indexer) Close() error { return x.db.Close() }

// Postings returns the terms of each text with their positions, in
// position order.
func (x *Indexer) Postings(ctx context.Context, texts []string) ([][]Posting, error) {
	out := make([][]Posting, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	tx, err := x.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("full-text indexer: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO t(t) VALUES ('delete-all')`); err != nil {
		return nil, fmt.Errorf("full-text indexer: %w", err)
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO t(rowid, x) VALUES (?, ?)`)
	if err != nil {
		return nil, fmt.Errorf("full-text indexer: %w", err)
	}
	for i, text := range texts {
		if text == "" {
			continue
		}
		if _, err := st.ExecContext(ctx, i+1, text); err != nil {
			st.Close()
			return nil, fmt.Errorf("full-text indexer: %w", err)
		}
	}
	st.Close()
	rows, err := tx.QueryContext(ctx, `SELECT doc, term, offset FROM v`)
	if err != nil {
		return nil, fmt.Errorf("full-text indexer: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var doc int
		var p Posting
		if err := rows.Scan(&doc, &p.Term, &p.Position); err != nil {
			return nil, fmt.Errorf("full-text indexer: %w", err)
		}
		out[doc-1] = append(out[doc-1], p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("full-text indexer: %w", err)
	}
	for _, ps := range out {
		slices.SortFunc(ps, func(a, b Posting) int {
			return cmp.Or(cmp.Compare(a.Position, b.Position), cmp.Compare(a.Term, b.Term))
		})
	}
	return out, nil
}
