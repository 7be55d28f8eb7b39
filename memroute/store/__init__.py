"""SQLite storage: the only package that holds SQL.

`SqliteStore.open(path)` opens (creating and migrating) a database and exposes
one repository per concern. A PostgreSQL store would offer the same attributes.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import apsw

from memroute.lru import LruTtlCache
from memroute.store.db import Database
from memroute.store.jobs import ExtractionJob, JobRepository
from memroute.store.keys import KeyRepository
from memroute.store.leases import LeaseRepository
from memroute.store.memories import MemoryRepository, NewMemory
from memroute.store.migrate import migrate
from memroute.store.providers import ProviderRepository
from memroute.store.qdrant_sync import QdrantSyncRepository
from memroute.store.reserve import SpaceReserve
from memroute.store.sessions import SessionRepository
from memroute.store.settings import SettingsRepository
from memroute.store.vectors import PendingMemory, VecMeta, VectorRepository

__all__ = [
    "Database",
    "ExtractionJob",
    "NewMemory",
    "PendingMemory",
    "SqliteStore",
    "VecMeta",
    "VectorRepository",
    "sqlite_info",
]

# The read cache of `get` holds 500 entries for 60 s.
READ_CACHE_SIZE = 500
READ_CACHE_TTL_S = 60.0

_caches: dict[str, LruTtlCache[tuple[Any, ...]]] = {}
_caches_lock = threading.Lock()


def _shared_cache(path: str) -> LruTtlCache[tuple[Any, ...]]:
    """One read cache per database file per process, so every `Memory` object on the
    same file sees the invalidations of the others."""
    key = path if path == ":memory:" else os.path.realpath(path)
    with _caches_lock:
        cache = _caches.get(key)
        if cache is None:
            cache = _caches[key] = LruTtlCache(READ_CACHE_SIZE, READ_CACHE_TTL_S)
        return cache


class SqliteStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.vectors = VectorRepository(db)
        self.memories = MemoryRepository(db, _shared_cache(db.path), delete_vector=self.vectors.delete_in)
        self.settings = SettingsRepository(db)
        self.jobs = JobRepository(db)
        self.keys = KeyRepository(db)
        self.providers = ProviderRepository(db)
        self.qdrant = QdrantSyncRepository(db)
        self.sessions = SessionRepository(db)
        self.leases = LeaseRepository(db)
        self.reserve = SpaceReserve(db)

    @classmethod
    def open(cls, path: str | Path, *, synchronous: str = "normal", load_vec: bool = True) -> SqliteStore:
        db = Database(path, synchronous=synchronous, load_vec=load_vec)
        try:
            migrate(db)
        except BaseException:
            db.close()
            raise
        store = cls(db)
        store.reserve.refill()
        return store

    def close(self) -> None:
        self.db.close()


def sqlite_info() -> dict[str, object]:
    """What the SQLite library in use can do (for `memroute doctor`)."""
    con = apsw.Connection(":memory:")
    try:
        try:
            con.execute(
                "CREATE VIRTUAL TABLE t USING fts5(a, tokenize='porter unicode61 remove_diacritics 2')"
            )
            fts5 = True
        except apsw.Error:
            fts5 = False
        return {
            "sqliteVersion": apsw.sqlite_lib_version(),
            "apswVersion": apsw.apsw_version(),
            "fts5": fts5,
            "extensionLoading": hasattr(con, "enable_load_extension"),
        }
    finally:
        con.close()
