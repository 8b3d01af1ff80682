-- The full-text index moves out of the row writer's way, into a file of
-- its own next to the database (<db>-search): a second writer indexes the
-- full text of every record there behind the row writer, from a watermark
-- (see sqlite/search.go). The old index of the bounded messages goes.
DROP TABLE logs_fts;

-- Rows whose text changed in place (a record rewritten, re-redacted) or
-- that were deleted (purge): the search indexer takes them out of its index
-- and indexes what they hold now. Entries are kept until the indexer is
-- past them (it prunes them).
CREATE TABLE search_changes (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    log_id INTEGER NOT NULL
);

-- Facts about the store itself: its identity (a search file built for
-- another database is rebuilt, never trusted).
CREATE TABLE store_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO store_meta(key, value) VALUES ('id', lower(hex(randomblob(16))));
