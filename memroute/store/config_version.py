"""The version number of an SQLite file's settings and providers (`config_version`):
triggers move it on in every transaction that writes either table, whichever process
writes. This process keeps a copy of each table (`VersionedCopy`) and asks for the number
at each read, so a change made anywhere is in force at the next read. Inside
`checked_once()` a thread asks once for the whole block: an admission reads the settings
and the providers with one small read."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from memroute.store.db import Database

_OUTSIDE = -1  # this thread is in no `checked_once` block


class ConfigVersion:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._block = threading.local()  # `version`: _OUTSIDE, None (not yet read in the block) or it

    def current(self) -> int:
        """The number now (inside `checked_once`, as first read in the block)."""
        version: int | None = getattr(self._block, "version", _OUTSIDE)
        if version == _OUTSIDE:
            return self._read()
        if version is None:
            version = self._block.version = self._read()
        return version

    @contextmanager
    def checked_once(self) -> Iterator[None]:
        """This thread's reads of the settings and providers in the block ask for the
        number once (at the first of them); a block inside another is part of it."""
        block = self._block
        if getattr(block, "version", _OUTSIDE) != _OUTSIDE:
            yield
            return
        block.version = None
        try:
            yield
        finally:
            block.version = _OUTSIDE

    def _read(self) -> int:
        row = self.db.read().execute("SELECT version FROM config_version").fetchone()
        return int(row[0]) if row else 0
