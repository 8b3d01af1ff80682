-- What each tool call shows by itself (SQLite migration 0025, package
-- toolcall): its class, the output line that shows it (why, a text: it
-- follows the content level), the operation it performed (op, compared
-- for "the same operation later succeeded": redacted with the content
-- level, a hash of it with content none), whether it only loads a skill
-- and the version of the rules that read it. A push sends the facts the
-- pushing store holds, derived again first when they are of other rules;
-- rows pushed before this migration have none, and readers derive them
-- from the call's texts (as for facts of other rules).
ALTER TABLE ai_mcp_events ADD COLUMN class text COLLATE "C";
ALTER TABLE ai_mcp_events ADD COLUMN why text COLLATE "C";
ALTER TABLE ai_mcp_events ADD COLUMN op text COLLATE "C";
ALTER TABLE ai_mcp_events ADD COLUMN loads_skill integer;
ALTER TABLE ai_mcp_events ADD COLUMN facts_version integer;

-- logs.fts now holds the words of the full text of every record (what
-- the SQLite store's search file indexes, SQLite migration 0027), with
-- English stems as its porter tokenizer makes them; rows pushed before
-- this migration keep the words of their message.
COMMENT ON COLUMN logs.fts IS 'stems of the full text of the record (sqlite search file tokens), with positions';
