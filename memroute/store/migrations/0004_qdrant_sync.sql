-- Qdrant sync (SPEC §8). While Qdrant is enabled (setting `qdrantEnabled` = true), every
-- change to a memory queues its id here in the same transaction, whatever path made the
-- change (API, chat extraction, import, clear, decay, raw SQL). The sync worker pushes the
-- queue to Qdrant and removes an entry only if it was not queued again meanwhile (its
-- rowid changes on every re-queue). Nothing acknowledged can miss Qdrant this way, even
-- when Qdrant is down for a while or the process is killed.
CREATE TABLE qdrant_outbox (
    memory_id  TEXT PRIMARY KEY,
    api_key_id TEXT NOT NULL,
    op         TEXT NOT NULL CHECK (op IN ('upsert', 'delete'))
);
CREATE INDEX idx_qdrant_outbox_key ON qdrant_outbox (api_key_id);

-- The back-fill: which collection was last filled, and the next memories.rowid to push
-- (NULL = done). Enabling Qdrant, `reindex`, or a new collection (a changed embedding
-- dimension or server) restarts it at 0; it resumes where it stopped after a restart.
CREATE TABLE qdrant_sync_state (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    target         TEXT,
    backfill_next  INTEGER,
    backfill_total INTEGER NOT NULL DEFAULT 0,
    pushed         INTEGER NOT NULL DEFAULT 0,
    orphans_removed INTEGER NOT NULL DEFAULT 0,
    serving        INTEGER NOT NULL DEFAULT 0,    -- 1 once `target` was filled: Qdrant may answer
    updated_at     TEXT
);
INSERT INTO qdrant_sync_state (id) VALUES (1);

CREATE TRIGGER qdrant_outbox_ai AFTER INSERT ON memories
WHEN (SELECT value FROM settings WHERE key = 'qdrantEnabled') = 'true' BEGIN
    INSERT OR REPLACE INTO qdrant_outbox (memory_id, api_key_id, op) VALUES (new.id, new.api_key_id, 'upsert');
END;

-- Only what the Qdrant payload or vector holds (access counters do not re-sync).
CREATE TRIGGER qdrant_outbox_au
AFTER UPDATE OF api_key_id, session_id, type, key, content, metadata, created_at, updated_at, expires_at
ON memories
WHEN (SELECT value FROM settings WHERE key = 'qdrantEnabled') = 'true' BEGIN
    INSERT OR REPLACE INTO qdrant_outbox (memory_id, api_key_id, op) VALUES (new.id, new.api_key_id, 'upsert');
END;

CREATE TRIGGER qdrant_outbox_ad AFTER DELETE ON memories
WHEN (SELECT value FROM settings WHERE key = 'qdrantEnabled') = 'true' BEGIN
    INSERT OR REPLACE INTO qdrant_outbox (memory_id, api_key_id, op) VALUES (old.id, old.api_key_id, 'delete');
END;
