"""Room kept aside in the database file so space can be freed when it is full.

A delete is a write too: it moves the text into history, writes FTS5 tombstones and
queue entries, and on a database with no free page left it fails like any other write.
The reserve is one row of zeros (`RESERVE_BYTES`) in `storage_reserve`; a write that
frees space (a delete) or lets an admin in to free it (a dashboard sign-in) and fails
for lack of room runs again with the row dropped in the same transaction, so it has
pages to write to (after a checkpoint, so the WAL starts over in the space its file
already has instead of growing on a full disk). The row is put back as soon as the
database has room again.

The table is created here rather than by a numbered migration: it holds no data, and a
database that is already full when memroute starts still opens (the row is then simply
missing until space returns).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from memroute.errors import StorageFull
from memroute.store.db import Database

log = logging.getLogger("memroute.store")

RESERVE_BYTES = 256 * 1024

T = TypeVar("T")

_CREATE = "CREATE TABLE IF NOT EXISTS storage_reserve (id INTEGER PRIMARY KEY, filler BLOB NOT NULL)"
_HAS_TABLE = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'storage_reserve'"


class SpaceReserve:
    def __init__(self, db: Database) -> None:
        self.db = db
        db.on_room_returned(self.refill)

    def refill(self) -> bool:
        """Put the reserve back if it is missing; False when there is no room for it yet."""
        try:
            with self.db.write() as con:
                con.execute(_CREATE)
                con.execute(
                    "INSERT OR IGNORE INTO storage_reserve (id, filler) VALUES (1, zeroblob(?))",
                    (RESERVE_BYTES,),
                )
        except StorageFull:
            return False
        return True

    def freeing(self, work: Callable[[], T]) -> T:
        """Run `work` (a write); when the database is full, run it again in a transaction
        that first drops the reserve. Raises `StorageFull` if even that has no room."""
        try:
            return work()
        except StorageFull:
            log.warning("store.full.using_reserve")
            self.db.checkpoint()
            with self.db.write() as con:
                if con.execute(_HAS_TABLE).fetchone():
                    con.execute("DELETE FROM storage_reserve")
                return work()
