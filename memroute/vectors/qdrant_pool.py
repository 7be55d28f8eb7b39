"""The Qdrant connection in use, its replacement when settings change, and a short
circuit breaker, so a Qdrant that is down costs a chat no more than one failed call
per retry interval.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from memroute.errors import MemrouteError
from memroute.vectors.qdrant import QdrantConnection, client_installed
from memroute.vectors.qdrant_settings import LOCAL_MEMORY, QdrantSettings

log = logging.getLogger("memroute.qdrant")

RETIRE_GRACE_S = 10.0  # a replaced connection is closed this long after its last hand-out


class QdrantPool:
    """Hands out the connection for the current settings (`settings()` is read on every
    hand-out) and remembers the last failure: after one, `unavailable_for()` is positive
    for `retry_s` seconds and the connection is dropped, so the next use reconnects."""

    def __init__(self, settings: Callable[[], QdrantSettings], *, timeout_s: float, retry_s: float) -> None:
        self._settings = settings
        self.timeout_s = timeout_s
        self.retry_s = retry_s
        self._lock = threading.Lock()
        self._current: QdrantConnection | None = None
        self._current_key: tuple[Any, ...] | None = None
        self._retired: list[tuple[float, QdrantConnection]] = []  # (close after, connection)
        self._down_until = 0.0
        self.last_error: str | None = None
        self._installed: bool | None = None

    def installed(self) -> bool:
        """Whether qdrant-client can be imported (checked once: the import takes ~1 s)."""
        if self._installed is None:
            self._installed = client_installed()
        return self._installed

    def connection(self) -> QdrantConnection:
        """The connection for the current settings (read again here, so a caller holding an
        older read never switches back). A change of collection settings keeps the client;
        a change of connection retires the old one, which is closed a little later: another
        thread may still be using it. Raises QdrantError when it cannot connect."""
        with self._lock:
            self._close_retired()
            qs = self._settings()
            key = (
                qs.host,
                qs.port,
                qs.https,
                qs.api_key,
                qs.collection,
                qs.quantization,
                qs.hnsw_ef_construct,
            )
            if self._current is not None and self._current_key == key:
                return self._current
            old = self._current
            if old is not None and old.connection == (qs.host, qs.port, qs.https, qs.api_key, old.timeout_s):
                self._current = old.with_settings(qs)
            else:
                self._retire()
                self._current = QdrantConnection(qs, timeout_s=self.timeout_s)
            self._current_key = key
            return self._current

    def _retire(self) -> None:
        """Stop handing out the current connection (caller holds the lock). Local mode on a
        folder allows one client at a time, so that one is closed at once."""
        current, self._current, self._current_key = self._current, None, None
        if current is None:
            return
        if current.settings.local_location not in (None, LOCAL_MEMORY):
            current.close()
        else:
            self._retired.append((time.monotonic() + RETIRE_GRACE_S, current))

    def _close_retired(self, everything: bool = False) -> None:
        now = time.monotonic()
        keep = []
        for deadline, connection in self._retired:
            if everything or deadline <= now:
                connection.close()
            else:
                keep.append((deadline, connection))
        self._retired = keep

    # -- the circuit breaker ------------------------------------------------------------

    def trip(self, exc: MemrouteError) -> None:
        """Remember a failure, keep retrieval off Qdrant for `retry_s`, and drop the
        connection: the next use reconnects (a restarted server, a closed client)."""
        self.last_error = exc.message
        self._down_until = time.monotonic() + self.retry_s
        log.warning("memory.qdrant.fail error=%s", exc.message)
        with self._lock:
            self._retire()

    def note(self, message: str) -> None:
        """Remember an error that does not keep searches off Qdrant (an embedding failure)."""
        self.last_error = message

    def reset(self) -> None:
        """Forget the last failure (the settings changed: try again at once)."""
        self._down_until = 0.0
        self.last_error = None

    def recovered(self) -> None:
        """A call succeeded: close the breaker (and say so once)."""
        if self.last_error is not None:
            log.info("memory.qdrant.recovered")
        self.reset()

    def unavailable_for(self) -> float:
        """Seconds until Qdrant may be asked again after a failure (≤ 0: it may now)."""
        return self._down_until - time.monotonic()

    def close(self) -> None:
        """Close every connection, the current one and those retired."""
        with self._lock:
            self._retire()
            self._close_retired(everything=True)
