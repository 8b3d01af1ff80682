-- A transcript file's content identity: the SHA-256 of its first KiB (the
-- whole file when shorter). A file that appears under a new path with the
-- head of a known file whose path is gone was moved or renamed (Codex
-- archiving a rollout, a renamed Claude session): ingest follows it and
-- keeps one copy instead of storing every record again.
ALTER TABLE transcript_sources ADD COLUMN head_hash TEXT;
