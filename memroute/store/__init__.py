"""Storage: the only package that holds SQL.

`open_store(...)` opens the configured store; both keep the contract of
`store/contract.py`. `SqliteStore.open(path)` opens (creating and migrating) one
SQLite file and exposes one repository per concern.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import apsw

from memroute.lru import LruTtlCache
from memroute.store.changes import SqliteChangeFeed
from memroute.store.config_version import ConfigVersion
from memroute.store.contract import Store
from memroute.store.db import Database
from memroute.store.jobs import JobRepository
from memroute.store.keys import KeyRepository
from memroute.store.leases import LeaseRepository
from memroute.store.memories import MemoryRepository
from memroute.store.migrate import migrate
from memroute.store.providers import ProviderRepository
from memroute.store.qdrant_sync import QdrantSyncRepository
from memroute.store.records import ExtractionJob, NewMemory, PendingMemory, StorageUsage, VecMeta
from memroute.store.reserve import SpaceReserve
from memroute.store.sessions import SessionRepository
from memroute.store.settings import SettingsRepository
from memroute.store.vectors import VectorRepository

__all__ = [
    "Database",
    "ExtractionJob",
    "NewMemory",
    "PendingMemory",
    "SqliteStore",
    "Store",
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
    """One SQLite file (see store/db.py): one writer, readers per thread."""

    kind = "sqlite"

    def __init__(self, db: Database) -> None:
        self.db = db
        self.changes = SqliteChangeFeed(db)
        self.vectors = VectorRepository(db)
        self.memories = MemoryRepository(db, _shared_cache(db.path), delete_vector=self.vectors.delete_in)
        self.config_version = ConfigVersion(db)
        self.settings = SettingsRepository(db, self.config_version)
        self.jobs = JobRepository(db)
        self.keys = KeyRepository(db)
        self.providers = ProviderRepository(db, self.config_version)
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

    admin_failures = None  # one machine: each process counts its share (web/throttle.py)

    @property
    def vec_error(self) -> str | None:
        return None if self.db.vec_available else self.db.vec_error

    @contextmanager
    def transaction(self, *, savepoints: bool = True) -> Iterator[None]:
        with self.db.write(savepoints=savepoints):
            yield

    def briefly(self) -> AbstractContextManager[None]:
        return self.db.briefly()

    def config_checked_once(self) -> AbstractContextManager[None]:
        return self.config_version.checked_once()

    def after_commit(self, callback: Callable[[], object]) -> None:
        self.db.after_commit(callback)

    def storage(self) -> StorageUsage:
        return self.db.storage()

    def describe(self) -> str:
        return self.db.path

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
