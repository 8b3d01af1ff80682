-- Raw records in blocks: the records a write stores for one transcript file
-- are compressed together (one zstd frame per block of up to 1 MB, see
-- package rawcodec), and each row's logs.raw holds a reference (block id,
-- position) instead of a frame of its own. Rows stored before keep their
-- per-record frames; both forms are read.
--
-- first_log and last_log bound the ids of the rows that reference the
-- block, so the rows of a block are found by primary key. Ids are never
-- reused (AUTOINCREMENT): a block's content never changes under its id, so
-- readers may cache decoded blocks; a block rewritten by purge, redact or
-- a merge of small blocks gets a new id. bytes is the records' decoded
-- size: a file written a few records at a time (a live session) leaves
-- small blocks, which the writer merges (see sqlite/rawblocks.go).
CREATE TABLE raw_blocks (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    source_id INTEGER,
    bytes     INTEGER NOT NULL,
    first_log INTEGER NOT NULL,
    last_log  INTEGER NOT NULL,
    data      BLOB    NOT NULL
);
CREATE INDEX idx_raw_blocks_small ON raw_blocks(source_id) WHERE bytes < 262144;

-- A row pointed at another block (small blocks merged, a block rewritten
-- for another row's purge or redaction) holds the same record: the team
-- store has it already. Only those updates change raw from one block
-- reference (x'ff7262…') to another.
DROP TRIGGER push_logs_update;
CREATE TRIGGER push_logs_update AFTER UPDATE ON logs
WHEN NOT (OLD.raw IS NOT NEW.raw AND substr(OLD.raw, 1, 3) = x'ff7262' AND substr(NEW.raw, 1, 3) = x'ff7262')
BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('logs', NEW.id);
END;
