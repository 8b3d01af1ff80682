-- Token usage of model responses, deduplicated per session and response
-- key (Claude message id, Codex running total, Gemini message id): Claude
-- writes one response as several lines repeating its usage, Codex repeats
-- its token_count events. Derived from transcripts (and from records that
-- are not stored as rows, such as Codex token_count events).
CREATE TABLE ai_token_usage (
    ai_tool            TEXT    NOT NULL,
    ai_session_id      TEXT    NOT NULL,
    hostname           TEXT    NOT NULL,
    usage_key          TEXT    NOT NULL,
    timestamp          TEXT    NOT NULL,
    model              TEXT    NOT NULL DEFAULT '',
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (ai_tool, ai_session_id, hostname, usage_key)
) WITHOUT ROWID;
CREATE INDEX idx_ai_token_usage_session_time ON ai_token_usage(ai_session_id, timestamp);

-- Session summaries (Claude `summary` records): a conversation's title,
-- keyed by its last message. They carry no time and no session: the
-- session is the one of the leaf message, filled in once that message is
-- stored (before or after the summary).
CREATE TABLE ai_session_summaries (
    leaf_uuid     TEXT NOT NULL PRIMARY KEY,
    summary       TEXT NOT NULL,
    source_id     INTEGER,
    ai_tool       TEXT,
    ai_session_id TEXT,
    hostname      TEXT,
    seen_at       TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX idx_ai_session_summaries_unresolved ON ai_session_summaries(leaf_uuid) WHERE ai_session_id IS NULL;

-- A session's title (its newest summary) and its first typed prompt.
ALTER TABLE ai_sessions ADD COLUMN title TEXT;
ALTER TABLE ai_sessions ADD COLUMN first_prompt TEXT;
ALTER TABLE ai_sessions ADD COLUMN first_prompt_at TEXT;

UPDATE ai_sessions SET (first_prompt, first_prompt_at) = (
    SELECT substr(l.message, 1, 200), l.timestamp FROM logs l
    WHERE l.ai_session_id = ai_sessions.ai_session_id AND l.ai_tool = ai_sessions.ai_tool
      AND l.hostname = ai_sessions.hostname AND l.ai_role = 'user' AND l.message <> ''
    ORDER BY l.timestamp, l.id LIMIT 1);
