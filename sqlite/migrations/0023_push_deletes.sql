-- Rows deleted from logs (cortex purge) are changes a push sends too: the
-- team store deletes them and corrects the rollups of their sessions.
CREATE TRIGGER push_logs_delete AFTER DELETE ON logs BEGIN
    INSERT INTO push_changes(tbl, row_id) VALUES ('logs', OLD.id);
END;
