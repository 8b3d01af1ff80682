-- The provider process an LLM invocation started (its process group id)
-- and the temporary folder holding its copied credentials: a run whose
-- Cortex process was killed leaves them behind, and the next runner kills
-- the orphan (or counts it against the concurrency limit while it lives)
-- and removes the folder.
ALTER TABLE llm_invocations ADD COLUMN provider_pid INTEGER;
ALTER TABLE llm_invocations ADD COLUMN provider_dir TEXT;
