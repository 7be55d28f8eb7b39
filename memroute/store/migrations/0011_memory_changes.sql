-- Which memories changed, in commit order, per owner: each process keeps an in-memory
-- index of the keys it serves (memroute/store/key_index.py) and reads here what other
-- connections and processes changed since it last looked. An access bump is not a
-- change (no ranked or shown field moves). `memory_changes_pruned.upto`: changes up to
-- this seq were deleted; an index older than that rebuilds instead of catching up.
-- `seq` only grows: pruning never deletes the newest row, so a new row always gets a
-- higher rowid (no AUTOINCREMENT, whose bookkeeping row was written on every insert).
CREATE TABLE memory_changes (
    seq          INTEGER PRIMARY KEY,
    api_key_id   TEXT NOT NULL,
    memory_rowid INTEGER NOT NULL,
    at           REAL NOT NULL DEFAULT (unixepoch('subsec'))
);
-- No index on the owner: a catch-up reads the changes since its last look by `seq` (the
-- rowid) and keeps its key's; an index cost every memory insert ~9 % of its time.

CREATE TABLE memory_changes_pruned (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    upto INTEGER NOT NULL
);
INSERT INTO memory_changes_pruned (one, upto) VALUES (1, 0);

CREATE TRIGGER memory_changes_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memory_changes (api_key_id, memory_rowid) VALUES (new.api_key_id, new.rowid);
END;

CREATE TRIGGER memory_changes_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memory_changes (api_key_id, memory_rowid) VALUES (old.api_key_id, old.rowid);
END;

CREATE TRIGGER memory_changes_au AFTER UPDATE OF
    api_key_id, session_id, type, key, content, metadata, created_at, updated_at, expires_at
ON memories BEGIN
    INSERT INTO memory_changes (api_key_id, memory_rowid) VALUES (new.api_key_id, new.rowid);
    INSERT INTO memory_changes (api_key_id, memory_rowid)
        SELECT old.api_key_id, old.rowid WHERE old.api_key_id IS NOT new.api_key_id;
END;
