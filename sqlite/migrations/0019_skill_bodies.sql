-- Skill versions: the body each skill load showed (Claude skill and slash
-- bodies, invoked_skills re-injections, custom command expansions, Codex
-- <skill> blocks and SKILL.md reads), normalized and deduplicated by its
-- SHA-256. A version is a body hash; the diff between two versions is
-- computed from the stored bodies.
CREATE TABLE ai_skill_bodies (
    sha256     TEXT    PRIMARY KEY,
    body       TEXT    NOT NULL,
    bytes      INTEGER NOT NULL,
    lines      INTEGER NOT NULL,
    -- 0 while no load proved the body whole (a Codex read that printed as
    -- many lines as it asked for may have stopped short of the end).
    complete   INTEGER NOT NULL,
    first_seen TEXT    NOT NULL
) WITHOUT ROWID;

-- The body a load event showed: NULL until the skill-body pass looked at
-- it (it runs after every index and watch pass, so the events stored
-- before this migration are resolved by the next one), '' when it showed
-- none.
ALTER TABLE ai_skill_events ADD COLUMN body_sha256 TEXT;
CREATE INDEX idx_ai_skill_events_body_pending ON ai_skill_events(id)
    WHERE body_sha256 IS NULL AND event_kind IN ('claude_skill_body', 'claude_slash_command', 'claude_invoked_skills',
        'codex_skill_block', 'codex_skill_read', 'claude_user_command');
-- A skill's versions in time order.
CREATE INDEX idx_ai_skill_events_skill_body ON ai_skill_events(skill_name, timestamp, body_sha256)
    WHERE body_sha256 IS NOT NULL AND body_sha256 <> '';
