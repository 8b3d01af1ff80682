-- Push to a team store (cortex push).

-- This store's identity: pushed rows are filed under it on the team store
-- (a store re-created from scratch is a new one).
CREATE TABLE store_info (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO store_info(key, value) VALUES ('store_id', lower(hex(randomblob(16))));

-- Changes to rows a push may already have sent: new rows are found by id
-- (ids only grow), but rows are also replaced in place (a record rewritten
-- by its agent), tool calls are completed by a later result, configured
-- hooks are seen again, and a replaced row's events are deleted. Each such
-- update or delete appends its table and row id here; a push re-sends the
-- changed rows (or deletes them) and entries every known team store has
-- received are pruned.
CREATE TABLE push_changes (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    tbl    TEXT    NOT NULL,
    row_id INTEGER NOT NULL
);
CREATE TRIGGER push_logs_update AFTER UPDATE ON logs BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('logs', NEW.id);
END;
CREATE TRIGGER push_skill_update AFTER UPDATE ON ai_skill_events BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('ai_skill_events', NEW.id);
END;
CREATE TRIGGER push_skill_delete AFTER DELETE ON ai_skill_events BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('ai_skill_events', OLD.id);
END;
CREATE TRIGGER push_mcp_update AFTER UPDATE ON ai_mcp_events BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('ai_mcp_events', NEW.id);
END;
CREATE TRIGGER push_mcp_delete AFTER DELETE ON ai_mcp_events BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('ai_mcp_events', OLD.id);
END;
CREATE TRIGGER push_hook_update AFTER UPDATE ON ai_hook_events BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('ai_hook_events', NEW.id);
END;
CREATE TRIGGER push_hook_delete AFTER DELETE ON ai_hook_events BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('ai_hook_events', OLD.id);
END;
CREATE TRIGGER push_user_update AFTER UPDATE ON ai_user_events BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('ai_user_events', NEW.id);
END;
CREATE TRIGGER push_user_delete AFTER DELETE ON ai_user_events BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('ai_user_events', OLD.id);
END;

-- The team stores this store pushed to and the change each has received
-- (push_changes is pruned up to the smallest).
CREATE TABLE push_targets (
    target     TEXT    PRIMARY KEY,
    change_seq INTEGER NOT NULL,
    pushed_at  TEXT    NOT NULL
) WITHOUT ROWID;
