-- Re-queue a memory for the Qdrant sync with an UPSERT instead of `INSERT OR REPLACE`.
-- Inside a trigger, the conflict policy of the statement that fired it overrides the
-- trigger's own `OR REPLACE`: when a memory still waiting in the queue was changed again
-- by the upsert in store/memories.py (`INSERT … ON CONFLICT (api_key_id, key) DO UPDATE`),
-- the re-queue failed with "UNIQUE constraint failed: qdrant_outbox.memory_id", and the
-- write with it (restating a fact by key, an extraction job, an import) while Qdrant was
-- enabled and its sync had not yet pushed the first change. An UPSERT clause is not
-- overridden. A re-queued entry gets a new rowid (the largest + 1), as REPLACE gave it, so
-- a sync that read the older entry does not acknowledge this one (store/qdrant_sync.py).
DROP TRIGGER qdrant_outbox_ai;
DROP TRIGGER qdrant_outbox_au;
DROP TRIGGER qdrant_outbox_ad;

CREATE TRIGGER qdrant_outbox_ai AFTER INSERT ON memories
WHEN (SELECT value FROM settings WHERE key = 'qdrantEnabled') = 'true' BEGIN
    INSERT INTO qdrant_outbox (memory_id, api_key_id, op) VALUES (new.id, new.api_key_id, 'upsert')
    ON CONFLICT (memory_id) DO UPDATE SET rowid = (SELECT MAX(rowid) + 1 FROM qdrant_outbox),
        api_key_id = excluded.api_key_id, op = excluded.op;
END;

-- Only what the Qdrant payload or vector holds (access counters do not re-sync).
CREATE TRIGGER qdrant_outbox_au
AFTER UPDATE OF api_key_id, session_id, type, key, content, metadata, created_at, updated_at, expires_at
ON memories
WHEN (SELECT value FROM settings WHERE key = 'qdrantEnabled') = 'true' BEGIN
    INSERT INTO qdrant_outbox (memory_id, api_key_id, op) VALUES (new.id, new.api_key_id, 'upsert')
    ON CONFLICT (memory_id) DO UPDATE SET rowid = (SELECT MAX(rowid) + 1 FROM qdrant_outbox),
        api_key_id = excluded.api_key_id, op = excluded.op;
END;

CREATE TRIGGER qdrant_outbox_ad AFTER DELETE ON memories
WHEN (SELECT value FROM settings WHERE key = 'qdrantEnabled') = 'true' BEGIN
    INSERT INTO qdrant_outbox (memory_id, api_key_id, op) VALUES (old.id, old.api_key_id, 'delete')
    ON CONFLICT (memory_id) DO UPDATE SET rowid = (SELECT MAX(rowid) + 1 FROM qdrant_outbox),
        api_key_id = excluded.api_key_id, op = excluded.op;
END;
