package fts

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"strings"
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
// search index holds for them: the tokens of Tokens (FTS5's unicode61,
// checked against FTS5 itself), each reduced to its English stem by
// SQLite's FTS5 porter tokenizer (an in-memory table, so the stems are
// exactly the search file's; a token is stemmed once and remembered). The
// PostgreSQL store indexes and queries these terms, so both stores find
// the same rows for the same words. It is safe for concurrent use.
type Indexer struct {
	mu    sync.Mutex
	db    *sql.DB
	stems map[string]string
}

// maxStems bounds the remembered stems (forgotten all at once past it).
const maxStems = 1 << 18

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
	return &Indexer{db: db, stems: map[string]string{}}, nil
}

// Close releases the indexer.
func (x *Indexer) Close() error { return x.db.Close() }

// Postings returns the terms of each text with their positions, in
// position order.
func (x *Indexer) Postings(ctx context.Context, texts []string) ([][]Posting, error) {
	out := make([][]Posting, len(texts))
	x.mu.Lock()
	defer x.mu.Unlock()
	var unknown []string
	seen := map[string]bool{}
	for i, text := range texts {
		toks := Tokens(text)
		if len(toks) == 0 {
			continue
		}
		ps := make([]Posting, len(toks))
		for j, tok := range toks {
			ps[j] = Posting{Term: tok, Position: j}
			if _, ok := x.stems[tok]; !ok && !seen[tok] {
				seen[tok] = true
				unknown = append(unknown, tok)
			}
		}
		out[i] = ps
	}
	if len(x.stems)+len(unknown) > maxStems {
		clear(x.stems)
		unknown = unknown[:0]
		for tok := range seen {
			unknown = append(unknown, tok)
		}
		for _, ps := range out {
			for _, p := range ps {
				if !seen[p.Term] {
					seen[p.Term] = true
					unknown = append(unknown, p.Term)
				}
			}
		}
	}
	if err := x.stem(ctx, unknown); err != nil {
		return nil, err
	}
	for _, ps := range out {
		for j := range ps {
			ps[j].Term = x.stems[ps[j].Term]
		}
	}
	return out, nil
}

// stem learns the stems of tokens from FTS5: the tokens, separated by
// spaces, are one document whose i-th term is the i-th token's stem.
func (x *Indexer) stem(ctx context.Context, tokens []string) error {
	for len(tokens) > 0 {
		part := tokens[:min(len(tokens), 10_000)]
		tokens = tokens[len(part):]
		tx, err := x.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("full-text indexer: %w", err)
		}
		stems := make([]string, len(part))
		err = func() error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO t(t) VALUES ('delete-all')`); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO t(rowid, x) VALUES (1, ?)`, strings.Join(part, " ")); err != nil {
				return err
			}
			rows, err := tx.QueryContext(ctx, `SELECT term, offset FROM v`)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var term string
				var off int
				if err := rows.Scan(&term, &off); err != nil {
					return err
				}
				if off < 0 || off >= len(stems) {
					return fmt.Errorf("stem at %d of %d tokens", off, len(stems))
				}
				stems[off] = term
			}
			return rows.Err()
		}()
		tx.Rollback()
		if err != nil {
			return fmt.Errorf("full-text indexer: %w", err)
		}
		for i, tok := range part {
			x.stems[tok] = cmp.Or(stems[i], tok)
		}
	}
	return nil
}
