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
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from memroute import baton
from memroute.errors import StorageFull, StoreError, WouldBlock
from memroute.store import key_rank
from memroute.store.permissions import prepare_database_file
from memroute.store.records import StorageUsage

log = logging.getLogger("memroute.store")

BUSY_TIMEOUT_MS = 10_000
# Ask the background checkpointer to run once the WAL holds this many pages (~4 MiB) ...
WAL_CHECKPOINT_PAGES = 1_000
# ... and checkpoint on the writer itself past this many (~12 MiB). The WAL starts over
# only once all of it is copied, which a checkpoint on another thread never achieves
# while the writer commits without pause (the WAL reached 50 MiB); by then that thread
# has copied most of it, so the writer's own checkpoint copies only the tail.
WAL_FORCE_CHECKPOINT_PAGES = 3_000
# The WAL's file is cut back to this once a checkpoint has copied it all (its high-water
# size otherwise stays on disk for good).
WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024
READER_CACHE_KIB = 256  # page cache of each read connection (SQLite's default is 2,000 KiB)
# A brief write (`Database.briefly`) waits this long at most for another thread of the
# process to end its transaction (the extraction worker's take a few ms): waiting on a
# thread lock lets that thread run, where handing the write to a thread costs its own CPU.
BRIEF_WAIT_S = 0.005


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


class _Checkpointer:
    """Copies the WAL back into the database file on its own connection and thread,
    so the writer never stalls on a checkpoint. PASSIVE mode never waits for
    readers or the writer; what it cannot copy now is copied next time."""

    def __init__(self, connect: Callable[[], apsw.Connection]) -> None:
        self._connect = connect
        self._wanted = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def request(self) -> None:
        with self._lock:
            if self._thread is None and not self._stopping.is_set():
                self._thread = threading.Thread(target=self._run, name="memroute-checkpoint", daemon=True)
                self._thread.start()
        self._wanted.set()

    def _run(self) -> None:
        con = self._connect()
        # A connection that has read nothing does not know the database is in WAL mode
        # yet, and every checkpoint on it fails (the WAL then grew without bound).
        con.execute("SELECT count(*) FROM sqlite_schema").fetchall()
        try:
            while True:
                self._wanted.wait()
                self._wanted.clear()  # before the check: a stop's wake-up is never cleared unseen
                if self._stopping.is_set():
                    return
                try:
                    con.wal_checkpoint("main", apsw.SQLITE_CHECKPOINT_PASSIVE)
                except apsw.Error as exc:  # busy or closed: the next request tries again
                    log.debug("store.checkpoint.skipped error=%s", exc)
        finally:
            con.close()

    def stop(self) -> None:
        with self._lock:
            self._stopping.set()
            self._wanted.set()
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(30)


class Database:
    """Owns the connections to one database file."""

    def __init__(self, path: str | Path, *, synchronous: str = "normal", load_vec: bool = True) -> None:
        self.path = str(path)
        # A commit waits for the disk unless WAL's commits are left to its checkpoints.
        self._commit_waits_for_disk = synchronous.lower() not in ("normal", "off")
        prepare_database_file(self.path)  # folder 0700, files 0600 (see store/permissions.py)
        self._vec_path, self.vec_error = sqlite_vec_path() if load_vec else (None, "disabled")
        self._lock = threading.RLock()
        # When a write last failed because the database or its disk was full (unix time),
        # until a commit shows room again (see `_room_returned`); engine-status reports it.
        self.full_since: float | None = None
        self._pages_when_full = 0
        self._on_room: list[Callable[[], object]] = []
        self._owner: int | None = None
        self._depth = 0
        self._savepoints = True  # whether nested writes of the open transaction are savepoints
        self._after_commit: list[Callable[[], object]] = []
        self._local = threading.local()
        # One read connection per live thread. Thread pools retire idle workers and start
        # new ones, so a connection whose thread has exited is closed when the next one
        # opens (else connections, their page caches and file descriptors pile up).
        self._readers: dict[threading.Thread, apsw.Connection] = {}
        self._readers_lock = threading.Lock()
        self._closed = False
        try:
            self._writer = self._connect(readonly=False)
            self._writer.pragma("journal_mode", "wal")
            self._writer.pragma("synchronous", synchronous)
            # When a checkpoint lets the WAL start over, it is cut back to this size.
            self._writer.pragma("journal_size_limit", WAL_SIZE_LIMIT_BYTES)
            # Checkpoints run in a background thread (see _Checkpointer): with SQLite's
            # automatic checkpoint, every ~45th add paid for one (measured add p99 7 ms).
            self._checkpointer = _Checkpointer(lambda: self._connect(readonly=False))
            self._writer.set_wal_hook(self._on_wal_commit)
        except apsw.Error as exc:
            raise StoreError(f"cannot open database {self.path}: {exc}") from exc

    def _on_wal_commit(self, con: apsw.Connection, name: str, pages: int) -> int:
        if pages >= WAL_FORCE_CHECKPOINT_PAGES and not self._brief():
            with contextlib.suppress(apsw.Error):
                con.wal_checkpoint(name, apsw.SQLITE_CHECKPOINT_PASSIVE)
        elif pages >= WAL_CHECKPOINT_PAGES:
            self._checkpointer.request()
        return apsw.SQLITE_OK

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
        key_rank.register(con)
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
    def write(self, *, savepoints: bool = True) -> Iterator[apsw.Connection]:
        """A write transaction; nested calls on the same thread become savepoints.

        `savepoints=False` (on the outermost call) makes nested calls join the transaction
        instead: for a caller that lets any error end the whole transaction, where a
        savepoint only costs (FTS5 writes its pending terms out at every savepoint, a new
        index segment each time). When SQLite has already rolled the whole transaction back
        itself (it does on a full disk), nothing is rolled back again: the original error is
        what the caller sees, and a full database becomes `StorageFull`."""
        self._check_open()
        waits = not self._brief()
        if waits:
            baton.acquire(self._lock)  # another thread's transaction is waited for outside the baton
        elif self._commit_waits_for_disk:
            raise WouldBlock("a commit waits for the disk")
        elif not self._lock.acquire(timeout=BRIEF_WAIT_S):
            raise WouldBlock("another thread is writing")
        try:
            if self._depth:
                with self._nested() as con:
                    yield con
                return
            self._begin(waits)
            self._owner, self._depth, self._savepoints = threading.get_ident(), 1, savepoints
            try:
                try:
                    yield self._writer
                    self._writer.execute("COMMIT")
                except BaseException:
                    if not self._writer.getautocommit():
                        self._writer.execute("ROLLBACK")
                    self._after_commit.clear()
                    raise
                finally:
                    self._owner, self._depth, self._savepoints = None, 0, True
            except apsw.FullError as exc:
                self._mark_full()
                raise StorageFull("the database or its disk is full: nothing was written") from exc
            callbacks, self._after_commit = self._after_commit, []
            if self.full_since is not None and self._room_returned():
                self.full_since = None
                callbacks += self._on_room
        finally:
            self._lock.release()
        for callback in callbacks:
            callback()

    def _begin(self, waits: bool) -> None:
        """Open the write transaction; without `waits`, WouldBlock when another process
        holds the write lock (nothing is waited for)."""
        if waits:
            self._writer.execute("BEGIN IMMEDIATE")
            return
        self._writer.set_busy_timeout(0)
        try:
            self._writer.execute("BEGIN IMMEDIATE")
        except apsw.BusyError as exc:
            raise WouldBlock("another process is writing") from exc
        finally:
            self._writer.set_busy_timeout(BUSY_TIMEOUT_MS)

    def _brief(self) -> bool:
        """Whether this thread's writes are brief now (see `briefly`)."""
        return bool(getattr(self._local, "brief", False))

    @contextmanager
    def briefly(self) -> Iterator[None]:
        """Writes on this thread within the block wait for nothing outside the process and
        for another thread of it `BRIEF_WAIT_S` at most: one that would wait longer (another
        thread's transaction, another process's write lock, a commit that waits for the
        disk: `synchronous` full) raises WouldBlock, having written nothing, and a commit
        leaves a due checkpoint to the background thread."""
        before = self._brief()
        self._local.brief = True
        try:
            yield
        finally:
            self._local.brief = before

    @contextmanager
    def _nested(self) -> Iterator[apsw.Connection]:
        """A write inside the open transaction: a savepoint, or joined when the transaction
        was opened with `savepoints=False` (caller holds the lock)."""
        self._depth += 1
        try:
            if not self._savepoints:
                yield self._writer
                return
            name = f"mr_sp{self._depth - 1}"
            self._writer.execute(f"SAVEPOINT {name}")
            try:
                yield self._writer
            except BaseException:
                if not self._writer.getautocommit():
                    self._writer.execute(f"ROLLBACK TO {name}")
                    self._writer.execute(f"RELEASE {name}")
                raise
            self._writer.execute(f"RELEASE {name}")
        finally:
            self._depth -= 1

    def _mark_full(self) -> None:
        if self.full_since is None:
            self.full_since = time.time()
            self._pages_when_full = self._pragma_int("page_count")

    def _room_returned(self) -> bool:
        """Whether the file grew since writes failed, or holds free pages again (a delete
        freed them). A small write that fits in a page's spare bytes proves neither, so it
        does not mark a full database writable."""
        return (
            self._pragma_int("page_count") > self._pages_when_full or self._pragma_int("freelist_count") > 0
        )

    def _pragma_int(self, name: str) -> int:
        row = self._writer.execute(f"PRAGMA {name}").fetchone()
        return int(row[0]) if row else 0

    def checkpoint(self) -> None:
        """Copy the WAL into the database file now, if no reader is in the way; after it,
        the next write starts the WAL over in the space the file already has (on a full
        disk the WAL cannot grow)."""
        with self._lock, contextlib.suppress(apsw.Error):
            self._writer.wal_checkpoint("main", apsw.SQLITE_CHECKPOINT_PASSIVE)

    def on_room_returned(self, callback: Callable[[], object]) -> None:
        """Call `callback` (outside the write lock) each time a full database takes writes again."""
        self._on_room.append(callback)

    def after_commit(self, callback: Callable[[], object]) -> None:
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
            # One reader per worker thread (up to ~40): each caches at most this much, so the
            # server's memory stays bounded as the database grows (the OS caches the file too).
            con.pragma("cache_size", -READER_CACHE_KIB)
            self._local.con = con
            with self._readers_lock:
                for thread in [t for t in self._readers if not t.is_alive()]:
                    self._readers.pop(thread).close()
                self._readers[threading.current_thread()] = con
        return con

    def fetchall(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        """Every row `sql` reads, on this thread's connection (as `read`)."""
        return self.read().execute(sql, params).fetchall()

    def fetchone(self, sql: str, params: Any = ()) -> tuple[Any, ...] | None:
        """The first row `sql` reads, if any, on this thread's connection (as `read`)."""
        return self.read().execute(sql, params).fetchone()

    def changed_since_asked(self) -> bool:
        """Whether anything was committed to the file (by this process's writer or by any
        other process) since this thread last asked; True the first time a thread asks."""
        version = self.read().pragma("data_version")
        last = getattr(self._local, "data_version", None)
        self._local.data_version = version
        return last is None or version != last

    def storage(self) -> StorageUsage:
        """The file's size and the free space of its disk, and whether writes fail for lack
        of space (set by a write that failed, cleared once a commit shows room again)."""
        size = free = None
        if self.path != ":memory:":
            with contextlib.suppress(OSError):
                size = sum(
                    os.path.getsize(self.path + suffix)
                    for suffix in ("", "-wal")
                    if os.path.exists(self.path + suffix)
                )
                free = shutil.disk_usage(Path(self.path).parent).free
        return StorageUsage(full_since=self.full_since, database_bytes=size, disk_free_bytes=free)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the database is closed")

    def close(self) -> None:
        if self._closed:
            return
        with self._lock:
            self._closed = True
            with self._readers_lock:
                for con in self._readers.values():
                    con.close()
                self._readers.clear()
            self._checkpointer.stop()
            with contextlib.suppress(apsw.Error):
                self._writer.pragma("optimize")
            self._writer.close()
