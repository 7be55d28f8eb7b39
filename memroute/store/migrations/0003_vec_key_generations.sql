-- A counter per key, bumped in every transaction that changes one of the key's vectors,
-- so a process can tell (cheaply, across processes) whether its in-memory copy of a
-- key's vectors is still current.
CREATE TABLE vec_key_generations (
    api_key_id TEXT PRIMARY KEY,
    generation INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
