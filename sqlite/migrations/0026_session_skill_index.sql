-- A session's skill events in time order with every column the skill and
-- friction lenses scope runs by (not the metadata, read for a bundle's
-- skill document only): their reads, hundreds of sessions per answer,
-- never read the event rows. Agent and host come before the time (every
-- reader fixes them), so reads of many sessions at once need no sort.
DROP INDEX idx_ai_skill_events_session_time;
CREATE INDEX idx_ai_skill_events_session_time ON ai_skill_events(ai_session_id, ai_tool, hostname, timestamp, id,
    log_id, skill_name, skill_plugin, skill_path, event_kind, ai_agent_id, ai_project)
    WHERE ai_session_id IS NOT NULL;
