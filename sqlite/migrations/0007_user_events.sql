-- The user's voice: what the human at the keyboard did, one row per act
-- (typed prompt, slash command, ! shell command, interrupt, tool-use
-- rejection, clarification), extracted from transcript records in the same
-- transaction as their logs rows (and by backfill from stored rows).
CREATE TABLE ai_user_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    log_id        INTEGER NOT NULL,
    event_index   INTEGER NOT NULL DEFAULT 0,
    ai_tool       TEXT    NOT NULL,
    ai_project    TEXT,
    ai_session_id TEXT,
    hostname      TEXT    NOT NULL,
    -- The agent thread: NULL for the main thread, the subagent id (or
    -- 'sidechain' for an inline subagent without an id) otherwise.
    ai_agent_id   TEXT,
    timestamp     TEXT    NOT NULL,
    event_kind    TEXT    NOT NULL,
    text          TEXT    NOT NULL DEFAULT '',
    call_id       TEXT,
    source        TEXT,
    metadata_json TEXT,
    UNIQUE (log_id, event_index)
);
-- Friction candidate scans (newest first) read their columns from the index.
CREATE INDEX idx_ai_user_events_time ON ai_user_events(timestamp, id, ai_tool, hostname, ai_session_id, ai_project, event_kind);
-- A session's acts in time order (every lens reads the user's reaction).
CREATE INDEX idx_ai_user_events_session_time ON ai_user_events(ai_session_id, timestamp) WHERE ai_session_id IS NOT NULL;

-- The agent thread of skill and tool-call events, so a skill run is
-- charged only with what happened in its own thread (main or subagent).
ALTER TABLE ai_skill_events ADD COLUMN ai_agent_id TEXT;
ALTER TABLE ai_mcp_events ADD COLUMN ai_agent_id TEXT;
UPDATE ai_skill_events SET ai_agent_id = (
    SELECT COALESCE(l.ai_agent_id, CASE WHEN json_extract(l.metadata_json, '$.sidechain') THEN 'sidechain' END)
    FROM logs l WHERE l.id = ai_skill_events.log_id);
UPDATE ai_mcp_events SET ai_agent_id = (
    SELECT COALESCE(l.ai_agent_id, CASE WHEN json_extract(l.metadata_json, '$.sidechain') THEN 'sidechain' END)
    FROM logs l WHERE l.id = COALESCE(ai_mcp_events.call_log_id, ai_mcp_events.result_log_id));

-- Rows stored before this migration have no user events: the next
-- backfill (run by index, watch and serve) extracts them from the stored
-- raw records.
CREATE TABLE pending_backfills (
    kind       TEXT PRIMARY KEY,
    created_at TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO pending_backfills(kind, created_at)
    SELECT 'users', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE EXISTS (SELECT 1 FROM logs WHERE ai_tool IS NOT NULL);
