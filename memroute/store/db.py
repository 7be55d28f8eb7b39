"""SQLite connections: one writer behind a lock, a read connection per thread.

apsw is used because it bundles a current SQLite with FTS5 and can load
extensions (the interpreter's `sqlite3` here cannot). WAL mode lets readers run
while the single writer commits; `BEGIN IMMEDIATE` takes the write lock up front
so a second process (CLI next to the server) waits on the busy timeout instead
of failing with SQLITE_BUSY_SNAPSHOT.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from memroute.errors import StoreError

log = logging.getLogger("memroute.store")

BUSY_TIMEOUT_MS = 10_000
WAL_AUTOCHECKPOINT_PAGES = 10_000


def sqlite_vec_path() -> tuple[str | None, str | None]:
    """Path of the sqlite-vec loadable extension, or (None, reason)."""
    try:
        import sqlite_vec
    except ImportError:
        return None, "sqlite-vec is not installed"
    return sqlite_vec.loadable_path(), None


def _fold(value: Any) -> Any:
    """Unicode case folding for case-insensitive filters (SQLite's lower() is ASCII-only)."""
    return value.casefold() if isinstance(value, str) else value


class Database:
    """Owns the connections to one database file."""

    def __init__(self, path: str | Path, *, synchronous: str = "normal", load_vec: bool = True) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._vec_path, self.vec_error = sqlite_vec_path() if load_vec else (None, "disabled")
        self._lock = threading.RLock()
        self._owner: int | None = None
        self._depth = 0
        self._after_commit: list[Callable[[], None]] = []
        self._local = threading.local()
        self._readers: list[apsw.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        try:
            self._writer = self._connect(readonly=False)
            self._writer.pragma("journal_mode", "wal")
            self._writer.pragma("synchronous", synchronous)
            # Checkpoint every ~40 MiB of WAL instead of ~4 MiB: each add writes ~22 pages,
            # so the default made every ~45th add pay for a checkpoint (measured p99 7 ms → 0.7 ms).
            self._writer.pragma("wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES)
        except apsw.Error as exc:
            raise StoreError(f"cannot open database {self.path}: {exc}") from exc

    @property
    def vec_available(self) -> bool:
        return self._vec_path is not None

    def _connect(self, *, readonly: bool) -> apsw.Connection:
        flags = (
            apsw.SQLITE_OPEN_READONLY if readonly else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        )
        con = apsw.Connection(self.path, flags=flags)
        con.set_busy_timeout(BUSY_TIMEOUT_MS)
        con.create_scalar_function("mr_fold", _fold, 1, deterministic=True)  # type: ignore[arg-type]
        if self._vec_path is not None:
            try:
                con.enable_load_extension(True)
                con.load_extension(self._vec_path)
                con.enable_load_extension(False)
            except apsw.Error as exc:
                self._vec_path, self.vec_error = None, f"sqlite-vec failed to load: {exc}"
                log.warning("store.vec.load_failed error=%s", exc)
        return con

    @contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A write transaction; nested calls on the same thread become savepoints."""
        self._check_open()
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    with self._writer:
                        yield self._writer
                finally:
                    self._depth -= 1
                return
            self._writer.execute("BEGIN IMMEDIATE")
            self._owner, self._depth = threading.get_ident(), 1
            try:
                yield self._writer
            except BaseException:
                self._writer.execute("ROLLBACK")
                self._after_commit.clear()
                raise
            else:
                self._writer.execute("COMMIT")
            finally:
                self._owner, self._depth = None, 0
            callbacks, self._after_commit = self._after_commit, []
        for callback in callbacks:
            callback()

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run `callback` once the current outermost transaction commits (now, if none)."""
        if self.in_write_transaction():
            self._after_commit.append(callback)
        else:
            callback()

    def in_write_transaction(self) -> bool:
        """True on the thread that holds an open write transaction."""
        return bool(self._depth) and self._owner == threading.get_ident()

    def read(self) -> apsw.Connection:
        """The connection to read with on this thread (the writer inside a write transaction)."""
        self._check_open()
        if self.in_write_transaction():
            return self._writer
        con: apsw.Connection | None = getattr(self._local, "con", None)
        if con is None:
            con = self._connect(readonly=True)
            self._local.con = con
            with self._readers_lock:
                self._readers.append(con)
        return con

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the database is closed")

    def close(self) -> None:
        if self._closed:
            return
        with self._lock:
            self._closed = True
            with self._readers_lock:
                for con in self._readers:
                    con.close()
                self._readers.clear()
            with contextlib.suppress(apsw.Error):
                self._writer.pragma("optimize")
            self._writer.close()
