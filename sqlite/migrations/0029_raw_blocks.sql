-- Raw records in blocks: the records a write stores for one transcript file
-- are compressed together (one zstd frame per block of up to 1 MB, see
-- package rawcodec), and each row's logs.raw holds a reference (block id,
-- position) instead of a frame of its own. Rows stored before keep their
-- per-record frames; both forms are read.
--
-- first_log and last_log bound the ids of the rows that reference the
-- block (the rows of one write are consecutive ids), so the rows of a block
-- are found by primary key. Ids are never reused (AUTOINCREMENT): a block's
-- content never changes under its id, so readers may cache decoded blocks;
-- a block rewritten by purge or redact gets a new id.
CREATE TABLE raw_blocks (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    first_log INTEGER NOT NULL,
    last_log  INTEGER NOT NULL,
    data      BLOB    NOT NULL
);
