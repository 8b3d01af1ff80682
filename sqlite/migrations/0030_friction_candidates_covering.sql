-- The friction lens's candidate scan reads, besides the index's columns,
-- each act's logs row id and agent thread, and tests the reading (short:
-- at most a few hundred bytes): with them in the index the scan never
-- reads the event rows (up to 10,000 per answer).
DROP INDEX idx_ai_user_events_friction;
CREATE INDEX idx_ai_user_events_friction ON ai_user_events(timestamp, id, ai_tool, hostname, ai_session_id, ai_project,
    event_kind, log_id, ai_agent_id, voice)
    WHERE event_kind IN ('interrupt', 'rejection') OR voice IS NOT NULL;
