-- What each user event says, as package voice reads it (an encoded
-- reading; NULL when it says nothing) and the version of the rules that
-- read it. Events stored before this migration, or read by other rules,
-- are read again when the store is next opened for writing.
ALTER TABLE ai_user_events ADD COLUMN voice TEXT;
ALTER TABLE ai_user_events ADD COLUMN voice_version INTEGER;
