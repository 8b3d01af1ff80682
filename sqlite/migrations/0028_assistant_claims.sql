-- What each assistant row's text claims about the agent's tools, as
-- package claim reads it (a set of kinds: a tool is unavailable, a call
-- failed; 0 when it claims nothing), and the version of the rules that
-- read it. The writer reads it when it stores a row; rows stored before
-- this migration, or read by other rules, are read again when the store
-- is next opened for writing, and the MCP lens reads every assistant row
-- itself until then.
ALTER TABLE logs ADD COLUMN claim INTEGER;
ALTER TABLE logs ADD COLUMN claim_version INTEGER;

-- The rows that claim something, by session and time: the MCP lens reads
-- these instead of every assistant row of a session.
CREATE INDEX idx_logs_claims ON logs(ai_session_id, ai_tool, hostname, timestamp, id) WHERE claim > 0;

-- Which assistant rows' readings are missing or of other rules.
CREATE INDEX idx_logs_claim_version ON logs(claim_version) WHERE ai_role = 'assistant';
