"""The records a store hands back and takes, the same for every store (`store/contract.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memroute.models.records import MemoryRecord


@dataclass(frozen=True, slots=True)
class StorageUsage:
    """The database's size and its disk's free space (None when unknown, e.g. in memory),
    and since when writes fail for lack of space (a Unix time; None: they succeed)."""

    full_since: float | None
    database_bytes: int | None
    disk_free_bytes: int | None


@dataclass(slots=True, frozen=True)
class ExtractionJob:
    id: int
    api_key_id: str
    session_id: str
    source: str
    text: str
    created_at: str
    attempts: int
    last_error: str | None
    request_id: str = ""
    speaker: str = ""
    capture: bool = False  # keep the text itself as the speaker's episodes
    facts: bool = True  # extract facts from it


@dataclass(slots=True)
class NewMemory:
    """A validated memory to write (see memory/validate.py)."""

    api_key_id: str
    content: str
    key: str = ""
    type: str = "factual"
    session_id: str = ""
    metadata: dict[str, Any] | None = None
    expires_at: str | None = None
    created_at: str | None = None  # imports set these three; `Memory.add` the first (createdAt)
    id: str | None = None
    updated_at: str | None = None


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    rowid: int  # changes whenever the memory is queued again
    memory_id: str
    api_key_id: str
    op: str  # upsert | delete


@dataclass(frozen=True, slots=True)
class SyncState:
    target: str | None  # the collection (and server) last back-filled
    backfill_next: int | None  # next memories.rowid to push; None when done
    backfill_total: int
    pushed: int
    orphans_removed: int
    serving: bool  # the target was completely filled once: Qdrant may answer searches


@dataclass(frozen=True, slots=True)
class VecMeta:
    active_dim: int | None
    signature: str | None
    last_reset_at: str | None
    ready: bool
    int8_scale: float | None

    @property
    def quantization(self) -> str:
        return "int8" if (self.signature or "").endswith(":int8") else "none"


@dataclass(frozen=True, slots=True)
class KeyVectors:
    generation: int
    rowids: NDArray[np.int64]
    vectors: NDArray[Any]  # float32, or int8 for a quantised table


@dataclass(slots=True)
class KeyWrite:
    """The vectors one write transaction stored for a key, in order, and the key's
    generation right before and right after it."""

    before: int
    after: int
    rowids: list[int]
    blobs: list[bytes]


@dataclass(frozen=True, slots=True)
class Neighbour:
    memory: MemoryRecord
    rowid: int
    distance: float
    vector: bytes | None = None

    @property
    def memory_id(self) -> str:
        return self.memory.id


@dataclass(frozen=True, slots=True)
class PendingMemory:
    rowid: int
    id: str
    api_key_id: str
    content: str


@dataclass(frozen=True, slots=True)
class FailureCounts:
    """Wrong admin tokens within a window: from one address, from everyone, and the time
    of the oldest of each (None without any)."""

    mine: int
    everyone: int
    oldest_mine: float | None
    oldest_everyone: float | None
