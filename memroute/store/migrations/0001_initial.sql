-- memroute schema v1: every table of SPEC §1 except vec_memories, which the
-- vector tier creates at runtime once the embedding dimension is known.

CREATE TABLE memories (
    rowid            INTEGER PRIMARY KEY AUTOINCREMENT,  -- internal id; FTS and vectors key on it
    id               TEXT NOT NULL UNIQUE,                -- public UUID
    api_key_id       TEXT NOT NULL,
    session_id       TEXT NOT NULL DEFAULT '',
    type             TEXT NOT NULL CHECK (type IN ('factual', 'episodic', 'procedural', 'semantic')),
    key              TEXT NOT NULL DEFAULT '',
    content          TEXT NOT NULL,
    metadata         TEXT NOT NULL DEFAULT '{}',
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    expires_at       TEXT,
    needs_reindex    INTEGER NOT NULL DEFAULT 1,          -- 1 = vector missing or stale
    access_count     INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    -- The owner as one FTS token, so keyword search runs inside one key's documents
    -- instead of scoring every key's matches and filtering afterwards.
    fts_owner        TEXT GENERATED ALWAYS AS ('o' || hex(api_key_id)) VIRTUAL
);

-- (api_key_id, created_at) also serves lookups by api_key_id alone.
CREATE UNIQUE INDEX idx_memories_owner_key ON memories (api_key_id, key) WHERE key <> '';
CREATE INDEX idx_memories_owner_created ON memories (api_key_id, created_at);
CREATE INDEX idx_memories_owner_updated ON memories (api_key_id, updated_at);
CREATE INDEX idx_memories_updated ON memories (updated_at);
CREATE INDEX idx_memories_session ON memories (session_id);
CREATE INDEX idx_memories_expires ON memories (expires_at);
CREATE INDEX idx_memories_needs_reindex ON memories (api_key_id) WHERE needs_reindex = 1;

CREATE VIRTUAL TABLE memory_fts USING fts5(
    content, key, fts_owner,
    content = 'memories', content_rowid = 'rowid',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memory_fts_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memory_fts (rowid, content, key, fts_owner)
    VALUES (new.rowid, new.content, new.key, 'o' || hex(new.api_key_id));
END;

CREATE TRIGGER memory_fts_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, content, key, fts_owner)
    VALUES ('delete', old.rowid, old.content, old.key, 'o' || hex(old.api_key_id));
END;

-- Only a change of the indexed text touches FTS (REF §15: an unconditional
-- trigger rewrote the FTS row on every access bump and bloated a database).
CREATE TRIGGER memory_fts_au AFTER UPDATE OF content, key, api_key_id ON memories
WHEN old.content IS NOT new.content OR old.key IS NOT new.key OR old.api_key_id IS NOT new.api_key_id BEGIN
    INSERT INTO memory_fts (memory_fts, rowid, content, key, fts_owner)
    VALUES ('delete', old.rowid, old.content, old.key, 'o' || hex(old.api_key_id));
    INSERT INTO memory_fts (rowid, content, key, fts_owner)
    VALUES (new.rowid, new.content, new.key, 'o' || hex(new.api_key_id));
END;

CREATE TABLE memory_history (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id    TEXT NOT NULL,
    api_key_id   TEXT NOT NULL,
    event        TEXT NOT NULL CHECK (event IN ('ADD', 'UPDATE', 'DELETE')),
    old_content  TEXT,
    new_content  TEXT,
    old_key      TEXT,
    new_key      TEXT,
    at           TEXT NOT NULL,
    actor        TEXT NOT NULL
);
CREATE INDEX idx_memory_history_memory ON memory_history (memory_id, seq);
CREATE INDEX idx_memory_history_owner ON memory_history (api_key_id);

CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,          -- JSON
    updated_at TEXT NOT NULL
);

CREATE TABLE memory_vec_meta (
    id                  INTEGER PRIMARY KEY CHECK (id = 1),
    active_dim          INTEGER,
    embedding_signature TEXT,
    last_reset_at       TEXT,
    vec_ready           INTEGER NOT NULL DEFAULT 0   -- 1 = vec_memories exists with active_dim
);
INSERT INTO memory_vec_meta (id, active_dim, embedding_signature, last_reset_at, vec_ready)
VALUES (1, NULL, NULL, NULL, 0);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,     -- UUID; the owner id of this key's memories
    name         TEXT NOT NULL,
    key_hash     TEXT NOT NULL UNIQUE, -- SHA-256 hex of the secret; the secret is never stored
    prefix       TEXT NOT NULL,        -- first 8 characters, for display
    created_at   TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at   TEXT
);

CREATE TABLE providers (
    id          TEXT PRIMARY KEY,      -- e.g. 'openai'; the prefix of 'provider/model'
    base_url    TEXT NOT NULL,
    api_key_env TEXT,                  -- name of an environment variable holding the key
    api_key     TEXT,                  -- or a stored key; never returned by any API
    is_default  INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE UNIQUE INDEX idx_providers_default ON providers (is_default) WHERE is_default = 1;

CREATE TABLE extraction_jobs (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    api_key_id  TEXT NOT NULL,
    session_id  TEXT NOT NULL DEFAULT '',
    source      TEXT NOT NULL CHECK (source IN ('user_message', 'llm_response')),
    text        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    attempts    INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT
);
CREATE INDEX idx_extraction_jobs_pending ON extraction_jobs (attempts, id);
