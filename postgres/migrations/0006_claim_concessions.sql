-- The assistant rows that concede a mistake or grant the user a point
-- (SQLite migration 0032, package claim: Admission = 4, Agreement = 32),
-- by time: the friction lens's candidate sessions.
CREATE INDEX logs_concessions ON logs(timestamp) WHERE (claim & 36) > 0;
