"""The PostgreSQL store (`MEMROUTE_DATABASE_URL=postgresql://…`): several replicas on
one database. It keeps the contract of `store/contract.py`, as the SQLite store does;
psycopg 3 and its pool are needed (`pip install 'memroute[postgres]'`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

from memroute.config import without_password
from memroute.errors import WouldBlock
from memroute.store.postgres.admin_failures import PgAdminFailures
from memroute.store.postgres.changes import PgChangeFeed
from memroute.store.postgres.db import PgDatabase
from memroute.store.postgres.jobs import PgJobRepository
from memroute.store.postgres.keys import PgKeyRepository
from memroute.store.postgres.leases import PgLeaseRepository
from memroute.store.postgres.memories import PgMemoryRepository
from memroute.store.postgres.migrate import migrate
from memroute.store.postgres.providers import PgProviderRepository
from memroute.store.postgres.qdrant_sync import PgQdrantSyncRepository
from memroute.store.postgres.reserve import PgReserve
from memroute.store.postgres.sessions import PgSessionRepository
from memroute.store.postgres.settings import PgSettingsRepository
from memroute.store.postgres.vectors import PgVectorRepository
from memroute.store.records import StorageUsage

__all__ = ["PostgresStore"]


class PostgresStore:
    """One PostgreSQL database shared by any number of memroute processes."""

    kind = "postgresql"

    def __init__(self, db: PgDatabase, *, synchronous: str = "normal") -> None:
        """`synchronous`: `normal` (chat turns are queued without waiting for the log's
        flush) or `full` (every commit waits for it)."""
        self.db = db
        self.vectors = PgVectorRepository(db)
        self.memories = PgMemoryRepository(db, delete_vector=self.vectors.delete_in)
        self.changes = PgChangeFeed(db)
        self.settings = PgSettingsRepository(db)
        self.jobs = PgJobRepository(db, always_durable=synchronous == "full")
        self.keys = PgKeyRepository(db)
        self.providers = PgProviderRepository(db)
        self.qdrant = PgQdrantSyncRepository(db, self.settings)
        self.sessions = PgSessionRepository(db)
        self.leases = PgLeaseRepository(db)
        self.reserve = PgReserve()
        self.admin_failures = PgAdminFailures(db)

    @classmethod
    def open(cls, url: str, *, max_connections: int = 10, synchronous: str = "normal") -> PostgresStore:
        """Connect, and migrate the schema (under a lock replicas share)."""
        db = PgDatabase(url, max_connections=max_connections)
        try:
            migrate(db)
        except BaseException:
            db.close()
            raise
        return cls(db, synchronous=synchronous)

    @property
    def vec_error(self) -> str | None:
        return self.vectors.error

    @contextmanager
    def transaction(self, *, savepoints: bool = True) -> Iterator[None]:
        with self.db.write(savepoints=savepoints):
            yield

    def briefly(self) -> AbstractContextManager[None]:
        """A write waits for the server's answer: none is made briefly (WouldBlock at once)."""
        raise WouldBlock("a PostgreSQL write waits for its server")

    def config_checked_once(self) -> AbstractContextManager[None]:
        """Each copy of the settings and providers is checked at most every `FRESH_S` anyway."""
        return nullcontext()

    def after_commit(self, callback: Callable[[], object]) -> None:
        self.db.after_commit(callback)

    def storage(self) -> StorageUsage:
        """The database's size (the server's disk is not ours to see)."""
        row = self.db.fetchone("SELECT pg_database_size(current_database())")
        return StorageUsage(self.db.full_since, int(row[0]) if row else None, None)

    def describe(self) -> str:
        return without_password(self.db.url)

    def close(self) -> None:
        self.db.close()
