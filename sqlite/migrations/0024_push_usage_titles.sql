-- Push the sessions' token usage and titles (migration 0013) to a team
-- store (cortex push).

-- Token usage rows get an integer id, as the other pushed tables have: a
-- push finds new rows by id (ids only grow) and is told of the rows that
-- change (a response's counts growing as Claude streams it) or go (a
-- purged session) by push_changes. Its key stays unique.
CREATE TABLE ai_token_usage_ids (
    id                 INTEGER PRIMARY KEY,
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
    UNIQUE (ai_tool, ai_session_id, hostname, usage_key)
);
INSERT INTO ai_token_usage_ids(ai_tool, ai_session_id, hostname, usage_key, timestamp, model, input_tokens, output_tokens,
    cache_read_tokens, cache_write_tokens, reasoning_tokens)
    SELECT ai_tool, ai_session_id, hostname, usage_key, timestamp, model, input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens, reasoning_tokens
    FROM ai_token_usage ORDER BY timestamp, ai_tool, ai_session_id, hostname, usage_key;
DROP TABLE ai_token_usage;
ALTER TABLE ai_token_usage_ids RENAME TO ai_token_usage;
CREATE INDEX idx_ai_token_usage_session_time ON ai_token_usage(ai_session_id, timestamp);

-- Re-reading a response stores the same counts again: only a real change
-- is one a push sends.
CREATE TRIGGER push_usage_update AFTER UPDATE ON ai_token_usage
WHEN OLD.timestamp IS NOT NEW.timestamp OR OLD.model IS NOT NEW.model OR OLD.input_tokens IS NOT NEW.input_tokens
    OR OLD.output_tokens IS NOT NEW.output_tokens OR OLD.cache_read_tokens IS NOT NEW.cache_read_tokens
    OR OLD.cache_write_tokens IS NOT NEW.cache_write_tokens OR OLD.reasoning_tokens IS NOT NEW.reasoning_tokens BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('ai_token_usage', NEW.id);
END;
CREATE TRIGGER push_usage_delete AFTER DELETE ON ai_token_usage BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('ai_token_usage', OLD.id);
END;

-- A session's title can change without a row of it changing (a summary
-- written later, in another file; texts re-redacted by value): such a
-- change names the session (row_id 0), whose rollup a push sends again.
ALTER TABLE push_changes ADD COLUMN ai_tool TEXT;
ALTER TABLE push_changes ADD COLUMN ai_session_id TEXT;
ALTER TABLE push_changes ADD COLUMN hostname TEXT;
CREATE TRIGGER push_session_texts AFTER UPDATE OF title, first_prompt ON ai_sessions
WHEN OLD.title IS NOT NEW.title OR OLD.first_prompt IS NOT NEW.first_prompt BEGIN
    INSERT INTO push_changes(tbl, row_id, ai_tool, ai_session_id, hostname)
    VALUES ('ai_sessions', 0, NEW.ai_tool, NEW.ai_session_id, NEW.hostname);
END;
