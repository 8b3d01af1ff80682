-- Candidate scans of the MCP lens: MCP calls by time (builtin tools,
-- mcp_server NULL, are never candidates and stay out of the index).
CREATE INDEX idx_ai_mcp_events_mcp_time ON ai_mcp_events(timestamp, id) WHERE mcp_server IS NOT NULL;
