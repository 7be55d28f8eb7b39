"""Background jobs that run in one process at a time.

Several processes may serve one database (`memroute serve --workers N`, or a CLI beside a
server). The re-index, the Qdrant sync and the decay sweeps must not run in two of them
at once (double the embedding work, pushes that race), so each runs only while its
process holds the job's lease (`worker_leases`). A lease lasts `LEASE_TTL_S` and is
renewed by each pass; when its holder stops it is given back, and when its holder dies
another process takes it over: at once on the same machine (the holder's pid is gone),
else once it expires. Instances in one process (a test, a script with two `Memory`
objects on one file) do not exclude each other.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Callable
from typing import TypeVar

from memroute.store.contract import LeaseStore

log = logging.getLogger("memroute.service.lease")

LEASE_TTL_S = 30.0
T = TypeVar("T")


def new_holder() -> str:
    """A name for one service instance: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def replaceable(holder: str) -> bool:
    """Whether the lease of `holder` (see `new_holder`) may be taken before it expires: it
    is held in this same process (another service instance on the file: they take turns,
    as they did before leases) or by a process of this machine that has exited."""
    parts = holder.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    if int(parts[1]) == os.getpid():
        return True
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # e.g. another user's process: it exists
        return False
    return False


class Lease:
    """This instance's claim on one background job (see the module docstring)."""

    def __init__(
        self,
        repo: LeaseStore,
        name: str,
        holder: str,
        *,
        ttl_s: float = LEASE_TTL_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._repo = repo
        self.name = name
        self._holder = holder
        self._ttl_s = ttl_s
        self._clock = clock
        self._until = 0.0

    def held(self) -> bool:
        """Whether this instance may run the job now: it holds the lease with more than half
        its time left, or has just taken or renewed it. A database error counts as no."""
        now = self._clock()
        if self._until - now > self._ttl_s / 2:
            return True
        try:
            taken = self._repo.take(
                self.name, self._holder, ttl_s=self._ttl_s, now=now, replaceable=replaceable
            )
        except Exception as exc:  # busy, full or closing: the job waits for its next pass
            log.warning("worker.lease.failed lease=%s error=%s", self.name, type(exc).__name__)
            taken = False
        self._until = now + self._ttl_s if taken else 0.0
        return taken

    def release(self) -> None:
        """Give the lease back (when this instance stops), so another takes over at once."""
        if self._until:
            self._until = 0.0
            try:
                self._repo.release(self.name, self._holder)
            except Exception as exc:
                log.warning("worker.lease.release_failed lease=%s error=%s", self.name, type(exc).__name__)

    def run(self, job: Callable[[], T], otherwise: T) -> T:
        """`job()` while this instance holds the lease, else `otherwise` (nothing done here)."""
        return job() if self.held() else otherwise
