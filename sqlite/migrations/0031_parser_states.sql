-- A parser's state (what a resumed read of a file needs: its open tool
-- calls, the session's last time, …) moves out of the checkpoints. Every
-- scan reads every checkpoint (the stat-only unchanged-file check) but only
-- the states of the few files it resumes; kept inline they were 77 MB of a
-- 5M-row store's 105 MB checkpoint table, and a scan read them all
-- (24,000 pages, mostly from disk on a cold start).
CREATE TABLE transcript_parser_states (
    source_id INTEGER PRIMARY KEY,
    state     TEXT    NOT NULL
);
INSERT INTO transcript_parser_states(source_id, state)
    SELECT id, parser_state FROM transcript_sources WHERE parser_state IS NOT NULL AND parser_state <> '';

-- The checkpoints are copied into a table without the column (DROP COLUMN
-- would rewrite the rows in place and leave their pages mostly empty).
CREATE TABLE transcript_sources_new (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    path             TEXT    NOT NULL UNIQUE,
    kind             TEXT    NOT NULL,
    ai_tool          TEXT,
    size             INTEGER NOT NULL DEFAULT 0,
    mtime_ns         INTEGER NOT NULL DEFAULT 0,
    prefix_hash      TEXT,
    anchor_hash      TEXT,
    last_offset      INTEGER NOT NULL DEFAULT 0,
    last_line        INTEGER NOT NULL DEFAULT 0,
    pending_bytes    INTEGER NOT NULL DEFAULT 0,
    complete         INTEGER NOT NULL DEFAULT 0,
    records          INTEGER NOT NULL DEFAULT 0,
    rewrites         INTEGER NOT NULL DEFAULT 0,
    first_indexed_at TEXT,
    last_indexed_at  TEXT,
    last_error       TEXT,
    head_hash        TEXT
);
INSERT INTO transcript_sources_new(id, path, kind, ai_tool, size, mtime_ns, prefix_hash, anchor_hash, last_offset,
    last_line, pending_bytes, complete, records, rewrites, first_indexed_at, last_indexed_at, last_error, head_hash)
    SELECT id, path, kind, ai_tool, size, mtime_ns, prefix_hash, anchor_hash, last_offset,
    last_line, pending_bytes, complete, records, rewrites, first_indexed_at, last_indexed_at, last_error, head_hash
    FROM transcript_sources ORDER BY id;
-- The next id continues after the highest ever given, as before.
UPDATE sqlite_sequence SET seq = max(seq, (SELECT seq FROM sqlite_sequence WHERE name = 'transcript_sources'))
    WHERE name = 'transcript_sources_new';
DROP TABLE transcript_sources;
ALTER TABLE transcript_sources_new RENAME TO transcript_sources;
