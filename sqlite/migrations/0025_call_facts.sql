-- What each tool call shows by itself, as package toolcall reads it: its
-- class (ok, failed, expected_probe, sibling_cancelled, failed_in_output,
-- cancelled, unknown…; the user's refusal is read from the user's acts),
-- the output line that shows it (why), the operation it performed (op,
-- for "the same operation later succeeded"), whether it only loads a
-- skill, and the version of the rules that read it. The writer derives
-- them when it stores a call; calls stored before this migration, or read
-- by other rules, are read again when the store is next opened for
-- writing, and readers derive them themselves until then.
ALTER TABLE ai_mcp_events ADD COLUMN class TEXT;
ALTER TABLE ai_mcp_events ADD COLUMN why TEXT;
ALTER TABLE ai_mcp_events ADD COLUMN op TEXT;
ALTER TABLE ai_mcp_events ADD COLUMN loads_skill INTEGER;
ALTER TABLE ai_mcp_events ADD COLUMN facts_version INTEGER;

-- A session's calls in time order with everything the skill and friction
-- lenses read of them (when, which thread, which call, which tool, and
-- the facts): their scans never read the (wide) event rows, and never
-- sort (agent and host come before the time: every reader fixes them);
-- texts are read only for the calls a bundle shows.
DROP INDEX idx_ai_mcp_events_session_time;
CREATE INDEX idx_ai_mcp_events_session_time ON ai_mcp_events(ai_session_id, ai_tool, hostname, timestamp, id,
    ai_agent_id, call_id, tool_name, mcp_server, mcp_tool, is_error, class, op, loads_skill, facts_version,
    call_log_id, result_log_id, result_timestamp)
    WHERE ai_session_id IS NOT NULL;

-- Which calls' facts are of other rules (refreshed on a write-open).
CREATE INDEX idx_ai_mcp_events_facts_version ON ai_mcp_events(facts_version);
