-- Canonical row table: one row per transcript record or log line.
CREATE TABLE logs (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    timestamp          TEXT    NOT NULL,
    hostname           TEXT    NOT NULL,
    facility           TEXT,
    severity           TEXT    NOT NULL DEFAULT 'info'
        CHECK (severity IN ('emerg','alert','crit','err','warning','notice','info','debug')),
    app_name           TEXT,
    message            TEXT    NOT NULL DEFAULT '',
    raw                BLOB,
    received_at        TEXT    NOT NULL,
    source             TEXT    NOT NULL DEFAULT '',
    ai_tool            TEXT,
    ai_project         TEXT,
    ai_session_id      TEXT,
    ai_transcript_path TEXT,
    ai_role            TEXT,
    ai_kind            TEXT,
    ai_tool_name       TEXT,
    ai_agent_id        TEXT,
    is_error           INTEGER NOT NULL DEFAULT 0,
    source_id          INTEGER,
    source_line        INTEGER,
    metadata_json      TEXT
);
CREATE INDEX idx_logs_timestamp ON logs(timestamp);
CREATE INDEX idx_logs_session_time ON logs(ai_session_id, timestamp) WHERE ai_session_id IS NOT NULL;
CREATE INDEX idx_logs_nonai_host_time ON logs(hostname, timestamp) WHERE ai_tool IS NULL;

-- Full-text index over logs.message. Contentless (the text lives in logs);
-- rows are added by the writer in the same transaction as their logs row.
-- Thinking rows and empty messages are not indexed.
CREATE VIRTUAL TABLE logs_fts USING fts5(
    message,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO logs_fts(logs_fts, rank) VALUES ('automerge', 16);

-- One row per transcript file: its checkpoint.
CREATE TABLE transcript_sources (
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
    parser_state     TEXT,
    pending_bytes    INTEGER NOT NULL DEFAULT 0,
    complete         INTEGER NOT NULL DEFAULT 0,
    records          INTEGER NOT NULL DEFAULT 0,
    rewrites         INTEGER NOT NULL DEFAULT 0,
    first_indexed_at TEXT,
    last_indexed_at  TEXT,
    last_error       TEXT
);

-- Dedupe ledger: which records of a source are stored, and as which row.
CREATE TABLE transcript_import_records (
    source_id    INTEGER NOT NULL,
    record_key   TEXT    NOT NULL,
    content_hash TEXT    NOT NULL,
    log_id       INTEGER NOT NULL,
    PRIMARY KEY (source_id, record_key)
) WITHOUT ROWID;

CREATE TABLE transcript_parse_errors (
    id          INTEGER PRIMARY KEY,
    source_id   INTEGER NOT NULL,
    line_no     INTEGER NOT NULL,
    byte_offset INTEGER,
    error       TEXT    NOT NULL,
    preview     TEXT    NOT NULL,
    seen_at     TEXT    NOT NULL,
    UNIQUE (source_id, line_no, error)
);
CREATE INDEX idx_parse_errors_seen ON transcript_parse_errors(seen_at);

-- Record types this version does not understand, counted per source and
-- agent version (re-counted when a source is re-read from the start).
CREATE TABLE transcript_unknown_types (
    source_id    INTEGER NOT NULL,
    ai_tool      TEXT    NOT NULL,
    tool_version TEXT    NOT NULL,
    record_type  TEXT    NOT NULL,
    count        INTEGER NOT NULL,
    PRIMARY KEY (source_id, tool_version, record_type)
) WITHOUT ROWID;

-- Per-session rollup, maintained by the writer (derived; rebuildable).
CREATE TABLE ai_sessions (
    ai_tool         TEXT    NOT NULL,
    ai_session_id   TEXT    NOT NULL,
    hostname        TEXT    NOT NULL,
    ai_project      TEXT,
    first_seen      TEXT    NOT NULL,
    last_seen       TEXT    NOT NULL,
    rows            INTEGER NOT NULL DEFAULT 0,
    user_rows       INTEGER NOT NULL DEFAULT 0,
    assistant_rows  INTEGER NOT NULL DEFAULT 0,
    tool_calls      INTEGER NOT NULL DEFAULT 0,
    error_rows      INTEGER NOT NULL DEFAULT 0,
    subagent_rows   INTEGER NOT NULL DEFAULT 0,
    tool_version    TEXT,
    transcript_path TEXT,
    PRIMARY KEY (ai_tool, ai_session_id, hostname)
) WITHOUT ROWID;
CREATE INDEX idx_ai_sessions_last_seen ON ai_sessions(last_seen);

-- Row counts by tool and role, maintained by the writer (derived).
CREATE TABLE log_counts (
    ai_tool TEXT    NOT NULL,
    ai_role TEXT    NOT NULL,
    rows    INTEGER NOT NULL,
    PRIMARY KEY (ai_tool, ai_role)
) WITHOUT ROWID;
