package sqlite

import (
	"bufio"
	"database/sql"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cortexhq/cortex/fts"
	"github.com/cortexhq/cortex/internal/testcorpus"
)

// ftsTokens returns the tokens FTS5's unicode61 tokenizer (with the
// store's options) makes of each text, read back through fts5vocab.
func ftsTokens(t *testing.T, texts []string) [][]string {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		if _, err := tx.Exec(`INSERT INTO t(rowid, x) VALUES (?, ?)`, i+1, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	out := make([][]string, len(texts))
	rows, err := db.Query(`SELECT doc, term FROM v ORDER BY doc, offset`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var doc int
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		out[doc-1] = append(out[doc-1], term)
	}
	return out
}

// TestTokensMatchFTS5 checks that fts.Tokens, which the PostgreSQL store
// indexes, splits text exactly as the SQLite store's FTS5 index does: on
// tricky strings and on every line of the real corpus.
func TestTokensMatchFTS5(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the whole real corpus")
	}
	texts := []string{
		"Hello, World!", "mcp__labby__search", "cargo-build --force", "/home/user/src/main.go:42",
		"Crème brûlée à la carte", "ÉCOLE Ǖber Ångström", "naïve café résumé", "e\u0301cole cafe\u0301s",
		"Straße ß Øresund æble", "İstanbul ΣΊΣΥΦΟΣ Москва", "日本語のテキスト 中文", "x²+y³ ½ ① ٣",
		"emoji 🚀 rocket", "tab\tnew\nline", "\uE000private\uF8FF", "K Ⱥ ǅ", "don't won’t",
	}
	{
		dir := testcorpus.Real(t)
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 4<<20)
			for sc.Scan() {
				if line := sc.Text(); len(line) <= 64<<10 {
					texts = append(texts, line)
				}
			}
			return nil
		})
	}
	want := ftsTokens(t, texts)
	bad := 0
	for i, s := range texts {
		if got := fts.Tokens(s); !slices.Equal(got, want[i]) {
			bad++
			if bad <= 5 {
				for j := range min(len(got), len(want[i])) {
					if got[j] != want[i][j] {
						t.Errorf("text %d: token %d is %q, FTS5 has %q (%d vs %d tokens)", i, j, got[j], want[i][j], len(got), len(want[i]))
						break
					}
				}
				if len(got) != len(want[i]) && slices.Equal(got[:min(len(got), len(want[i]))], want[i][:min(len(got), len(want[i]))]) {
					t.Errorf("text %d: %d tokens, FTS5 has %d", i, len(got), len(want[i]))
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts tokenized differently from FTS5", bad, len(texts))
	}
	t.Logf("%d texts tokenized as FTS5 does", len(texts))
}
