-- Normalized events extracted from transcript records, written in the same
-- transaction as their logs rows (and by backfill from stored rows).

-- One row per skill use seen in a record.
CREATE TABLE ai_skill_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    log_id        INTEGER NOT NULL,
    ai_tool       TEXT    NOT NULL,
    ai_project    TEXT,
    ai_session_id TEXT,
    hostname      TEXT    NOT NULL,
    timestamp     TEXT    NOT NULL,
    skill_name    TEXT    NOT NULL,
    skill_plugin  TEXT,
    skill_path    TEXT,
    event_kind    TEXT    NOT NULL,
    evidence_kind TEXT    NOT NULL,
    metadata_json TEXT,
    created_at    TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (log_id, skill_name, event_kind, evidence_kind)
);
CREATE INDEX idx_ai_skill_events_time ON ai_skill_events(timestamp);
CREATE INDEX idx_ai_skill_events_skill_time ON ai_skill_events(skill_name, timestamp);
CREATE INDEX idx_ai_skill_events_plugin_time ON ai_skill_events(skill_plugin, timestamp) WHERE skill_plugin IS NOT NULL;
CREATE INDEX idx_ai_skill_events_session_time ON ai_skill_events(ai_session_id, timestamp) WHERE ai_session_id IS NOT NULL;
CREATE INDEX idx_ai_skill_events_project_skill_time ON ai_skill_events(ai_project, skill_name, timestamp) WHERE ai_project IS NOT NULL;

-- One row per tool call: the call and its result merged (whichever arrives
-- first creates the row, the other completes it). call_log_id proves the
-- call happened, result_log_id proves its outcome.
CREATE TABLE ai_mcp_events (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    call_log_id      INTEGER,
    result_log_id    INTEGER,
    ai_tool          TEXT    NOT NULL,
    ai_project       TEXT,
    ai_session_id    TEXT,
    hostname         TEXT    NOT NULL,
    timestamp        TEXT    NOT NULL,
    call_timestamp   TEXT,
    result_timestamp TEXT,
    turn_id          TEXT,
    call_id          TEXT    NOT NULL,
    tool_name        TEXT    NOT NULL DEFAULT '',
    mcp_server       TEXT,
    mcp_tool         TEXT,
    event_kind       TEXT    NOT NULL,
    result_kind      TEXT,
    status           TEXT    NOT NULL,
    duration_ms      INTEGER,
    is_error         INTEGER,
    exit_code        INTEGER,
    arguments_json   TEXT,
    output_preview   TEXT,
    error_text       TEXT,
    metadata_json    TEXT,
    created_at       TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE UNIQUE INDEX idx_ai_mcp_events_call ON ai_mcp_events(ai_tool, hostname, COALESCE(ai_session_id, ''), call_id);
CREATE INDEX idx_ai_mcp_events_time ON ai_mcp_events(timestamp);
CREATE INDEX idx_ai_mcp_events_server_time ON ai_mcp_events(mcp_server, mcp_tool, timestamp) WHERE mcp_server IS NOT NULL;
CREATE INDEX idx_ai_mcp_events_session_time ON ai_mcp_events(ai_session_id, timestamp) WHERE ai_session_id IS NOT NULL;
CREATE INDEX idx_ai_mcp_events_error_time ON ai_mcp_events(timestamp) WHERE is_error = 1;

-- Hook runs seen in transcripts (log_id set, evidence runtime_transcript)
-- and hooks found in configuration files (log_id NULL, no session;
-- evidence config_inventory or trusted_hash_state; last_seen moves on
-- every collection that still finds them).
CREATE TABLE ai_hook_events (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    log_id                INTEGER,
    event_index           INTEGER NOT NULL DEFAULT 0,
    ai_tool               TEXT    NOT NULL,
    ai_project            TEXT,
    ai_session_id         TEXT,
    hostname              TEXT    NOT NULL,
    timestamp             TEXT    NOT NULL,
    last_seen             TEXT,
    hook_event            TEXT    NOT NULL,
    hook_name             TEXT,
    hook_source           TEXT,
    hook_command          TEXT,
    status                TEXT    NOT NULL,
    exit_code             INTEGER,
    duration_ms           INTEGER,
    stdout_preview        TEXT,
    stderr_preview        TEXT,
    persisted_output_path TEXT,
    trusted_hash          TEXT,
    evidence_kind         TEXT    NOT NULL,
    metadata_json         TEXT,
    created_at            TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE UNIQUE INDEX idx_ai_hook_events_runtime ON ai_hook_events(log_id, event_index) WHERE log_id IS NOT NULL;
CREATE UNIQUE INDEX idx_ai_hook_events_config ON ai_hook_events(ai_tool, hostname, COALESCE(ai_project, ''), COALESCE(hook_source, ''), hook_event,
    COALESCE(hook_name, ''), COALESCE(hook_command, ''), COALESCE(trusted_hash, ''), evidence_kind) WHERE log_id IS NULL;
CREATE INDEX idx_ai_hook_events_hook_time ON ai_hook_events(hook_event, hook_name, timestamp);
CREATE INDEX idx_ai_hook_events_status_time ON ai_hook_events(status, timestamp);
CREATE INDEX idx_ai_hook_events_session_time ON ai_hook_events(ai_session_id, timestamp) WHERE ai_session_id IS NOT NULL;
CREATE INDEX idx_ai_hook_events_evidence_time ON ai_hook_events(evidence_kind, timestamp);

-- Single-flight locks for maintenance jobs (backfills), across processes.
CREATE TABLE maintenance_locks (
    name        TEXT PRIMARY KEY,
    holder      TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    hostname    TEXT NOT NULL,
    acquired_at TEXT NOT NULL
) WITHOUT ROWID;
