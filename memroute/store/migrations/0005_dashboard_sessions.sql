-- Dashboard login sessions (SPEC §13). The cookie holds a random secret; only its
-- SHA-256 is stored, with a fingerprint of the admin token it was opened with, so
-- changing the admin token ends every session.
CREATE TABLE dashboard_sessions (
    id_hash           TEXT PRIMARY KEY,
    token_fingerprint TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    expires_at        TEXT NOT NULL
) WITHOUT ROWID;
