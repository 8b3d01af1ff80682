-- What each assistant row's text claims about the agent's tools (SQLite
-- migration 0028, package claim): a set of kinds (0: nothing) and the
-- version of the rules that read it. A push sends the claims the pushing
-- store holds, read again first when they are of other rules; rows
-- pushed before this migration have none, and the MCP lens reads every
-- assistant row of a session until they are pushed again.
ALTER TABLE logs ADD COLUMN claim integer;
ALTER TABLE logs ADD COLUMN claim_version integer;
CREATE INDEX logs_claims ON logs(ai_session_id, ai_tool, hostname, timestamp, id) WHERE claim > 0;
CREATE INDEX logs_claim_version ON logs(claim_version) WHERE ai_role = 'assistant';
