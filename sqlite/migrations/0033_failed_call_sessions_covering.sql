-- The friction lens finds the sessions with failures enough for a retry
-- loop by grouping the failed calls of its range by session: the index of
-- failures by time now carries the session's columns (and the project a
-- filter may name), so the grouping reads no table rows.
DROP INDEX idx_ai_mcp_events_error_time;
CREATE INDEX idx_ai_mcp_events_error_time ON ai_mcp_events(timestamp, ai_tool, hostname, ai_session_id, ai_project)
    WHERE is_error = 1;
