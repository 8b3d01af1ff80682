-- What the laptops' stores gained since 0001 that the team's reads use.

-- What each user event says, as the laptop's rules read it (an encoded
-- reading; NULL when it says nothing or was not sent) and the version of
-- those rules (SQLite migration 0008). The friction lens scans only acts
-- that can be friction when every reading is of the reading binary's
-- rules (SQLite migration 0009).
ALTER TABLE ai_user_events ADD COLUMN voice text COLLATE "C";
ALTER TABLE ai_user_events ADD COLUMN voice_version integer;
CREATE INDEX ai_user_events_friction ON ai_user_events(timestamp, id)
    WHERE event_kind IN ('interrupt', 'rejection') OR voice IS NOT NULL;
CREATE INDEX ai_user_events_voice_version ON ai_user_events(voice_version);

-- Skill versions (SQLite migration 0019): the body each load showed, by
-- its SHA-256 ('' when it showed none, NULL until the laptop looked), and
-- the bodies each pushing store holds (the same hash from two laptops is
-- the same text, unless a content level held it back: reads prefer a
-- store that sent it).
ALTER TABLE ai_skill_events ADD COLUMN body_sha256 text COLLATE "C";
CREATE INDEX ai_skill_events_skill_body ON ai_skill_events(skill_name, timestamp, id)
    WHERE body_sha256 IS NOT NULL AND body_sha256 <> '';
-- Which events show a body (a push removes the bodies of a store that no
-- event of it shows anymore).
CREATE INDEX ai_skill_events_body ON ai_skill_events(body_sha256) WHERE body_sha256 IS NOT NULL AND body_sha256 <> '';
CREATE TABLE ai_skill_bodies (
    sha256     text COLLATE "C" NOT NULL,
    store_no   integer NOT NULL,
    body       text COLLATE "C" NOT NULL,
    bytes      bigint NOT NULL,
    lines      bigint NOT NULL,
    complete   integer NOT NULL,
    first_seen text COLLATE "C" NOT NULL,
    PRIMARY KEY (sha256, store_no)
);

-- The provider process and credential folder of an LLM invocation
-- (SQLite migration 0011).
ALTER TABLE llm_invocations ADD COLUMN provider_pid bigint;
ALTER TABLE llm_invocations ADD COLUMN provider_dir text COLLATE "C";
