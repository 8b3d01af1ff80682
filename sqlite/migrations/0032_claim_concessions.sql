-- The assistant rows that concede a mistake or grant the user a point
-- (package claim: Admission = 4, Agreement = 32), by time: the friction
-- lens reads the sessions where the agent conceded, whatever the user's
-- words said (a correction in any language is one the agent concedes).
CREATE INDEX idx_logs_concessions ON logs(timestamp) WHERE (claim & 36) > 0;
