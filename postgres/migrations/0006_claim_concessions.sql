-- The agent's reasoning (thinking rows) carries claims too (SQLite
-- migration 0032, package claim): the version index covers both roles.
DROP INDEX logs_claim_version;
CREATE INDEX logs_claim_version ON logs(claim_version) WHERE ai_role IN ('assistant', 'thinking');
-- The rows that concede (Admission = 4, Agreement = 32, Noted = 64), by
-- time: the friction lens's candidate sessions.
CREATE INDEX logs_concessions ON logs(timestamp) WHERE (claim & 100) > 0;
