-- What sessions were and cost (SQLite migrations 0013 and 0024): each
-- session's title (its agent's summary) and first typed prompt — texts,
-- NULL when the pushing store's content level sends none — and the token
-- usage of its model responses, one row per response (per session and
-- response key), pushed by id as the other tables.
ALTER TABLE ai_sessions ADD COLUMN title text COLLATE "C";
ALTER TABLE ai_sessions ADD COLUMN first_prompt text COLLATE "C";
ALTER TABLE ai_sessions ADD COLUMN first_prompt_at text COLLATE "C";

CREATE TABLE ai_token_usage (
    id                 bigint PRIMARY KEY,
    ai_tool            text COLLATE "C" NOT NULL,
    ai_session_id      text COLLATE "C" NOT NULL,
    hostname           text COLLATE "C" NOT NULL,
    usage_key          text COLLATE "C" NOT NULL,
    timestamp          text COLLATE "C" NOT NULL,
    model              text COLLATE "C" NOT NULL DEFAULT '',
    input_tokens       bigint NOT NULL DEFAULT 0,
    output_tokens      bigint NOT NULL DEFAULT 0,
    cache_read_tokens  bigint NOT NULL DEFAULT 0,
    cache_write_tokens bigint NOT NULL DEFAULT 0,
    reasoning_tokens   bigint NOT NULL DEFAULT 0
);
CREATE INDEX ai_token_usage_session_time ON ai_token_usage(ai_session_id, timestamp);

ALTER TABLE push_stores ADD COLUMN usage_done bigint NOT NULL DEFAULT 0;
