-- Indexes for the incident engine.

-- What users typed, per session and time: the skill and abuse lenses read
-- only these rows (4% of rows), without touching the others.
CREATE INDEX idx_logs_user_session_time ON logs(ai_session_id, timestamp) WHERE ai_role = 'user';

-- Tool calls per session and time, covering the session scope, so that
-- counting a window's calls never reads the (wide) event rows.
DROP INDEX idx_ai_mcp_events_session_time;
CREATE INDEX idx_ai_mcp_events_session_time ON ai_mcp_events(ai_session_id, timestamp, ai_tool, hostname)
    WHERE ai_session_id IS NOT NULL;

-- Failed tool calls per session and time.
CREATE INDEX idx_ai_mcp_events_session_errors ON ai_mcp_events(ai_session_id, timestamp) WHERE is_error = 1;

-- Skill-event candidate scans (newest first, by time or by skill) read
-- their columns from the index alone.
DROP INDEX idx_ai_skill_events_time;
CREATE INDEX idx_ai_skill_events_time ON ai_skill_events(timestamp, id, ai_tool, hostname, ai_session_id, ai_project,
    skill_name, skill_plugin, event_kind, log_id);
DROP INDEX idx_ai_skill_events_skill_time;
CREATE INDEX idx_ai_skill_events_skill_time ON ai_skill_events(skill_name, timestamp, id, skill_plugin, ai_tool, hostname,
    ai_session_id, ai_project, event_kind, log_id);
