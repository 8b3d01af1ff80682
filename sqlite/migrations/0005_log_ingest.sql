-- Non-AI logs: syslog messages and imported log files (rows of logs with
-- ai_tool NULL).

-- Non-AI rows by time, for `cortex logs` without a host filter: the
-- timestamp index would walk every transcript row to find them.
CREATE INDEX idx_logs_nonai_time ON logs(timestamp) WHERE ai_tool IS NULL;

-- Counters of the log receivers, by source ('syslog:udp', 'syslog:tcp',
-- 'file'), accumulated over runs: the syslog receiver adds its counters in
-- the transactions that store its rows (and periodically when it stores
-- none), so `cortex status` reports what a running server received,
-- stored, dropped and could not parse.
CREATE TABLE log_ingest_counters (
    source       TEXT    PRIMARY KEY,
    received     INTEGER NOT NULL DEFAULT 0,
    stored       INTEGER NOT NULL DEFAULT 0,
    dropped      INTEGER NOT NULL DEFAULT 0,
    malformed    INTEGER NOT NULL DEFAULT 0,
    oversized    INTEGER NOT NULL DEFAULT 0,
    kernel_drops INTEGER NOT NULL DEFAULT 0,
    first_at     TEXT    NOT NULL,
    updated_at   TEXT    NOT NULL
) WITHOUT ROWID;
