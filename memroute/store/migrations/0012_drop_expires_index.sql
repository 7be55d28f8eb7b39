-- No query reads memories through `expires_at`: reads filter it with `+expires_at` (so the
-- planner stays on the owner indexes) and nothing sweeps by it. The index only cost every
-- insert one more B-tree write and ~15 bytes per memory.
DROP INDEX IF EXISTS idx_memories_expires;
