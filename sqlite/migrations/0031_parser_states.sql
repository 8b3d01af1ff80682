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
-- Rewrites the table without the column (and without the space it took).
ALTER TABLE transcript_sources DROP COLUMN parser_state;
