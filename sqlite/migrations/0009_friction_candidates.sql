-- The friction lens scans only acts that can be friction: interrupts,
-- refusals, and acts whose stored reading says something (a correction, a
-- stop, swearing, an instruction…). The scan is valid when every reading
-- is of the binary's rules: which ones are not is found by version.
CREATE INDEX idx_ai_user_events_friction ON ai_user_events(timestamp, id, ai_tool, hostname, ai_session_id, ai_project, event_kind)
    WHERE event_kind IN ('interrupt', 'rejection') OR voice IS NOT NULL;
CREATE INDEX idx_ai_user_events_voice_version ON ai_user_events(voice_version);
