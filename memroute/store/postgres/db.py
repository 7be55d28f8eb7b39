"""Connections to one PostgreSQL database: a pool shared by the process's threads.

A write transaction holds one pooled connection on its thread; writes made on that
thread while it is open join it (as savepoints unless it was opened with
`savepoints=False`), and reads on that thread see them. Any other read takes a
connection from the pool for one statement batch (autocommit: it sees every commit), and
so may a write of one statement (`write_alone`): one round trip instead of three.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from memroute.config import without_password
from memroute.errors import StorageFull, StoreError

POOL_TIMEOUT_S = 30.0


@dataclass(slots=True)
class _Transaction:
    con: psycopg.Connection[Any]
    savepoints: bool
    after_commit: list[Callable[[], object]] = field(default_factory=list)
    locks: set[tuple[int, int]] = field(default_factory=set)  # advisory locks held until it ends


class PgDatabase:
    """The pool, and the write transaction open on each thread."""

    def __init__(self, url: str, *, max_connections: int = 10) -> None:
        self.url = url
        self._local = threading.local()
        self.full_since: float | None = None
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(2, max_connections),
            kwargs={"autocommit": True},
            open=False,
            name="memroute",
            timeout=POOL_TIMEOUT_S,
        )
        try:
            self._pool.open(wait=True, timeout=POOL_TIMEOUT_S)
        except PoolTimeout as exc:
            self._pool.close()
            raise StoreError(f"cannot connect to PostgreSQL at {without_password(url)}") from exc

    def _tx(self) -> _Transaction | None:
        tx: _Transaction | None = getattr(self._local, "tx", None)
        return tx

    @contextmanager
    def write(self, *, savepoints: bool = True) -> Iterator[psycopg.Connection[Any]]:
        """A write transaction on this thread; nested calls become savepoints (or join it,
        when it was opened with `savepoints=False`). A full disk becomes `StorageFull`."""
        tx = self._tx()
        if tx is not None:
            if tx.savepoints:
                try:
                    with tx.con.transaction():
                        yield tx.con
                except BaseException:
                    tx.locks.clear()  # a savepoint rolled back releases the locks it took
                    raise
            else:
                yield tx.con
            return
        with self._disk_full_raised(), self._connection() as con:
            tx = self._local.tx = _Transaction(con, savepoints)
            try:
                with con.transaction():
                    yield con
            finally:
                self._local.tx = None
        for callback in tx.after_commit:
            callback()

    @contextmanager
    def write_alone(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection for one writing statement: this thread's open transaction's (the
        statement joins it), else a pooled one in autocommit, where the statement is a
        transaction of its own. Only for a single statement, which is atomic alone."""
        if self._tx() is not None:
            with self.write() as con:
                yield con
            return
        with self._disk_full_raised(), self._connection() as con:
            yield con

    def lock_for_transaction(self, con: psycopg.Connection[Any], key: int, sub: int) -> None:
        """Take advisory lock (`key`, `sub`) until this thread's transaction ends; asked
        again in the same transaction, it is held already and costs no round trip."""
        tx = self._tx()
        if tx is not None and (key, sub) in tx.locks:
            return
        con.execute("SELECT pg_advisory_xact_lock(%s, %s)", (key, sub))
        if tx is not None:
            tx.locks.add((key, sub))

    @contextmanager
    def _disk_full_raised(self) -> Iterator[None]:
        """A full disk becomes `StorageFull` (nothing of the write was kept)."""
        try:
            yield
        except pg_errors.DiskFull as exc:
            self.full_since = self.full_since or time.time()
            raise StorageFull("the database or its disk is full: nothing was written") from exc
        self.full_since = None

    @contextmanager
    def read(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection to read with: this thread's write transaction's, else a pooled one."""
        tx = self._tx()
        if tx is not None:
            yield tx.con
            return
        with self._connection() as con:
            yield con

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self._pool.connection() as con:
                yield con
        except PoolTimeout as exc:
            raise StoreError("no PostgreSQL connection became free in time") from exc

    def fetchall(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        with self.read() as con:
            return con.execute(sql, params).fetchall()

    def fetchone(self, sql: str, params: Any = ()) -> tuple[Any, ...] | None:
        with self.read() as con:
            return con.execute(sql, params).fetchone()

    def after_commit(self, callback: Callable[[], object]) -> None:
        """Run `callback` once this thread's transaction commits (now, if none is open)."""
        tx = self._tx()
        if tx is None:
            callback()
        else:
            tx.after_commit.append(callback)

    def in_write_transaction(self) -> bool:
        return self._tx() is not None

    def close(self) -> None:
        self._pool.close()
