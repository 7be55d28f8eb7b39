-- Named leases on background jobs that must run in one process at a time when several
-- processes serve one database (`memroute serve --workers N`): the re-index, the Qdrant
-- sync and the decay sweeps. `holder` names the process (host, pid and a random part);
-- a lease past `expires_at` (wall-clock seconds) may be taken by anyone.
CREATE TABLE worker_leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at REAL NOT NULL
) WITHOUT ROWID;
