-- memroute on PostgreSQL: the schema of the SQLite store after its migration 0014, in
-- one step (store/contract.py is what both promise). Timestamps are ISO-8601 text, as in
-- SQLite, and every text column compares byte by byte (COLLATE "C", as SQLite does): an
-- end user's owner id is the key's id, a control character and the user's id, and the
-- owners of a key's users are read as one range of that order.

CREATE TABLE memories (
    rowid            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- vectors and the change log key on it
    id               text COLLATE "C" NOT NULL UNIQUE,                              -- public UUID
    api_key_id       text COLLATE "C" NOT NULL,
    session_id       text COLLATE "C" NOT NULL DEFAULT '',
    type             text COLLATE "C" NOT NULL CHECK (type IN ('factual', 'episodic', 'procedural', 'semantic')),
    key              text COLLATE "C" NOT NULL DEFAULT '',
    content          text COLLATE "C" NOT NULL,
    metadata         text COLLATE "C" NOT NULL DEFAULT '{}',
    created_at       text COLLATE "C" NOT NULL,
    updated_at       text COLLATE "C" NOT NULL,
    expires_at       text COLLATE "C",
    needs_reindex    integer NOT NULL DEFAULT 1,                        -- 1 = vector missing or stale
    access_count     integer NOT NULL DEFAULT 0,
    last_accessed_at text COLLATE "C",
    -- Keyword search: the content's and key's words (English stems), and the owner as one
    -- more lexeme ('o' || md5(owner)), so a key's matches are the intersection of its own
    -- posting list and the words' in the GIN index, however many keys share a word (with
    -- the words alone, a question matching 55,000 rows of 1M over 1,000 keys read them all
    -- to keep the key's 50: 12 ms against 1 ms).
    search           tsvector GENERATED ALWAYS AS (
        to_tsvector('english', content || ' ' || key) || array_to_tsvector(ARRAY['o' || md5(api_key_id)])
    ) STORED
);
CREATE UNIQUE INDEX memories_owner_key ON memories (api_key_id, key) WHERE key <> '';
CREATE INDEX memories_owner_created ON memories (api_key_id, created_at);
CREATE INDEX memories_owner_updated ON memories (api_key_id, updated_at);
CREATE INDEX memories_owner_updated_facts ON memories (api_key_id, updated_at)
    WHERE substr(key, 1, 5) <> 'turn:';
CREATE INDEX memories_updated ON memories (updated_at);
CREATE INDEX memories_session ON memories (session_id);
CREATE INDEX memories_needs_reindex ON memories (api_key_id, rowid) WHERE needs_reindex = 1;
CREATE INDEX memories_search ON memories USING gin (search);

CREATE TABLE memory_history (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id    text COLLATE "C" NOT NULL,
    api_key_id   text COLLATE "C" NOT NULL,
    event        text COLLATE "C" NOT NULL CHECK (event IN ('ADD', 'UPDATE', 'DELETE')),
    old_content  text COLLATE "C",
    new_content  text COLLATE "C",
    old_key      text COLLATE "C",
    new_key      text COLLATE "C",
    at           text COLLATE "C" NOT NULL,
    actor        text COLLATE "C" NOT NULL
);
CREATE INDEX memory_history_memory ON memory_history (memory_id, seq);
CREATE INDEX memory_history_owner ON memory_history (api_key_id);

CREATE TABLE settings (
    key        text COLLATE "C" PRIMARY KEY,
    value      text COLLATE "C" NOT NULL,          -- JSON
    updated_at text COLLATE "C" NOT NULL
);
-- Bumped by every settings write: replicas compare it to know their copy is current.
CREATE SEQUENCE settings_version;

CREATE TABLE api_keys (
    id                  text COLLATE "C" PRIMARY KEY,
    name                text COLLATE "C" NOT NULL,
    key_hash            text COLLATE "C" NOT NULL UNIQUE,  -- SHA-256 hex of the secret; the secret is never stored
    prefix              text COLLATE "C" NOT NULL,
    created_at          text COLLATE "C" NOT NULL,
    last_used_at        text COLLATE "C",
    revoked_at          text COLLATE "C",
    max_concurrent      integer,
    requests_per_minute integer,
    requires_user_id    integer NOT NULL DEFAULT 0
);

CREATE TABLE providers (
    id          text COLLATE "C" PRIMARY KEY,
    base_url    text COLLATE "C" NOT NULL,
    api_key_env text COLLATE "C",
    api_key     text COLLATE "C",                  -- never returned by any API
    is_default  integer NOT NULL DEFAULT 0,
    created_at  text COLLATE "C" NOT NULL,
    updated_at  text COLLATE "C" NOT NULL,
    format      text COLLATE "C" NOT NULL DEFAULT 'openai' CHECK (format IN ('openai', 'anthropic'))
);
CREATE UNIQUE INDEX providers_default ON providers (is_default) WHERE is_default = 1;

-- The queue of chat turns to learn from. A replica claims a batch (`claimed_until`);
-- a claim of a replica that died expires and the jobs are handed out again.
CREATE TABLE extraction_jobs (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    api_key_id    text COLLATE "C" NOT NULL,
    session_id    text COLLATE "C" NOT NULL DEFAULT '',
    source        text COLLATE "C" NOT NULL CHECK (source IN ('user_message', 'llm_response')),
    text          text COLLATE "C" NOT NULL,
    created_at    text COLLATE "C" NOT NULL,
    attempts      integer NOT NULL DEFAULT 0,
    last_error    text COLLATE "C",
    request_id    text COLLATE "C" NOT NULL DEFAULT '',
    speaker       text COLLATE "C" NOT NULL DEFAULT '',
    capture       integer NOT NULL DEFAULT 0,
    facts         integer NOT NULL DEFAULT 1,
    claimed_until double precision NOT NULL DEFAULT 0  -- Unix time
);
CREATE INDEX extraction_jobs_pending ON extraction_jobs (attempts, id);

CREATE TABLE dashboard_sessions (
    id_hash           text COLLATE "C" PRIMARY KEY,
    token_fingerprint text COLLATE "C" NOT NULL,
    created_at        text COLLATE "C" NOT NULL,
    expires_at        text COLLATE "C" NOT NULL
);

CREATE TABLE worker_leases (
    name       text COLLATE "C" PRIMARY KEY,
    holder     text COLLATE "C" NOT NULL,
    expires_at double precision NOT NULL
);

-- Which memories changed, in commit order, per owner (see store/contract.py, ChangeFeed).
-- Commit order: every statement that writes memories first takes one transaction-level
-- advisory lock, so a transaction that gets a lower seq has committed before any
-- transaction with a higher one could write (a catch-up never skips a change that
-- commits late). Memory writes are serialised across replicas, as SQLite's writer is.
CREATE TABLE memory_changes (
    seq          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    api_key_id   text COLLATE "C" NOT NULL,
    memory_rowid bigint NOT NULL,
    at           double precision NOT NULL DEFAULT extract(epoch FROM clock_timestamp())
);
CREATE TABLE memory_changes_pruned (
    one  integer PRIMARY KEY CHECK (one = 1),
    upto bigint NOT NULL
);
INSERT INTO memory_changes_pruned (one, upto) VALUES (1, 0);

CREATE FUNCTION memroute_memory_write_lock() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(7202611, 1);
    RETURN NULL;
END $$;

CREATE TRIGGER memories_write_lock BEFORE INSERT OR UPDATE OR DELETE ON memories
    FOR EACH STATEMENT EXECUTE FUNCTION memroute_memory_write_lock();

CREATE FUNCTION memroute_memory_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO memory_changes (api_key_id, memory_rowid) VALUES (OLD.api_key_id, OLD.rowid);
        RETURN NULL;
    END IF;
    INSERT INTO memory_changes (api_key_id, memory_rowid) VALUES (NEW.api_key_id, NEW.rowid);
    IF TG_OP = 'UPDATE' AND OLD.api_key_id IS DISTINCT FROM NEW.api_key_id THEN
        INSERT INTO memory_changes (api_key_id, memory_rowid) VALUES (OLD.api_key_id, OLD.rowid);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER memory_changes_insert_delete AFTER INSERT OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memroute_memory_changed();
-- An access bump is not a change (no ranked or shown field moves).
CREATE TRIGGER memory_changes_update AFTER UPDATE OF
    api_key_id, session_id, type, key, content, metadata, created_at, updated_at, expires_at
    ON memories FOR EACH ROW EXECUTE FUNCTION memroute_memory_changed();

-- The Qdrant sync (as SQLite's migrations 0004 and 0006): while `qdrantEnabled` is true,
-- every change to a memory queues its id in the same transaction. A re-queued entry gets
-- a new `queued` number, so a sync that read the older entry does not acknowledge it.
CREATE SEQUENCE qdrant_outbox_queued;
CREATE TABLE qdrant_outbox (
    memory_id  text COLLATE "C" PRIMARY KEY,
    api_key_id text COLLATE "C" NOT NULL,
    op         text COLLATE "C" NOT NULL CHECK (op IN ('upsert', 'delete')),
    queued     bigint NOT NULL DEFAULT nextval('qdrant_outbox_queued')
);
CREATE INDEX qdrant_outbox_key ON qdrant_outbox (api_key_id, queued);
CREATE INDEX qdrant_outbox_order ON qdrant_outbox (queued);

CREATE TABLE qdrant_sync_state (
    id              integer PRIMARY KEY CHECK (id = 1),
    target          text COLLATE "C",
    backfill_next   bigint,
    backfill_total  bigint NOT NULL DEFAULT 0,
    pushed          bigint NOT NULL DEFAULT 0,
    orphans_removed bigint NOT NULL DEFAULT 0,
    serving         integer NOT NULL DEFAULT 0,
    updated_at      text COLLATE "C"
);
INSERT INTO qdrant_sync_state (id) VALUES (1);

CREATE FUNCTION memroute_qdrant_queue() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    row_id text COLLATE "C";
    owner  text COLLATE "C";
    what   text COLLATE "C";
BEGIN
    IF (SELECT value FROM settings WHERE key = 'qdrantEnabled') IS DISTINCT FROM 'true' THEN
        RETURN NULL;
    END IF;
    IF TG_OP = 'DELETE' THEN
        row_id := OLD.id; owner := OLD.api_key_id; what := 'delete';
    ELSE
        row_id := NEW.id; owner := NEW.api_key_id; what := 'upsert';
    END IF;
    INSERT INTO qdrant_outbox (memory_id, api_key_id, op) VALUES (row_id, owner, what)
    ON CONFLICT (memory_id) DO UPDATE SET api_key_id = excluded.api_key_id, op = excluded.op,
        queued = nextval('qdrant_outbox_queued');
    RETURN NULL;
END $$;

CREATE TRIGGER qdrant_outbox_insert_delete AFTER INSERT OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memroute_qdrant_queue();
CREATE TRIGGER qdrant_outbox_update AFTER UPDATE OF
    api_key_id, session_id, type, key, content, metadata, created_at, updated_at, expires_at
    ON memories FOR EACH ROW EXECUTE FUNCTION memroute_qdrant_queue();

-- Vectors (pgvector) are created by the vector tier once their dimension is known; its
-- meta row says which model made them.
CREATE TABLE memory_vec_meta (
    id                  integer PRIMARY KEY CHECK (id = 1),
    active_dim          integer,
    embedding_signature text COLLATE "C",
    last_reset_at       text COLLATE "C",
    vec_ready           integer NOT NULL DEFAULT 0,
    int8_scale          double precision
);
INSERT INTO memory_vec_meta (id) VALUES (1);
CREATE TABLE vec_key_generations (
    api_key_id text COLLATE "C" PRIMARY KEY,
    generation bigint NOT NULL DEFAULT 0
);
