-- The audit of every LLM invocation: one row per attempt (denials and dry
-- runs included), written before the provider starts and completed after.
CREATE TABLE llm_invocations (
    id                   TEXT    PRIMARY KEY,
    started_at           TEXT    NOT NULL,
    finished_at          TEXT,
    duration_ms          INTEGER,
    caller_surface       TEXT    NOT NULL,
    action               TEXT    NOT NULL,
    provider             TEXT    NOT NULL,
    model                TEXT,
    program              TEXT,
    incident_id          TEXT,
    ai_tool              TEXT,
    ai_project           TEXT,
    ai_session_id        TEXT,
    evidence_counts_json TEXT,
    prompt_bytes         INTEGER,
    output_bytes         INTEGER,
    status               TEXT    NOT NULL,
    error                TEXT,
    metadata_json        TEXT,
    hostname             TEXT    NOT NULL,
    pid                  INTEGER NOT NULL
);
CREATE INDEX idx_llm_invocations_started ON llm_invocations(started_at);
CREATE INDEX idx_llm_invocations_action_started ON llm_invocations(action, started_at);
CREATE INDEX idx_llm_invocations_status_started ON llm_invocations(status, started_at);
