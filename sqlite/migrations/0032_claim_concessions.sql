-- The agent's reasoning (thinking rows) carries claims too: package claim
-- reads in it the agent noting the user's pushback ("the user is pointing
-- out that …"). The version index covers both roles; thinking rows stored
-- before this have no claims yet and are read at the next write-open.
DROP INDEX idx_logs_claim_version;
CREATE INDEX idx_logs_claim_version ON logs(claim_version) WHERE ai_role IN ('assistant', 'thinking');
-- The rows that concede (package claim: Admission = 4, Agreement = 32,
-- Noted = 64), by time: the friction lens reads the sessions where the
-- agent conceded, whatever the user's words said (a correction in any
-- language is one the agent concedes).
CREATE INDEX idx_logs_concessions ON logs(timestamp) WHERE (claim & 100) > 0;
