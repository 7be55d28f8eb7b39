"""Vector indexes (sqlite-vec, Qdrant) behind one small protocol.

An index takes a query vector and a `MemoryFilter`, never text: the service embeds
the query once and hands the vector to whichever index answers. Score semantics:
`VectorHit.score` is a similarity in [0, 1], higher is closer (cosine similarity
mapped from the backend's distance). Every index applies the same `MemoryFilter` as
the keyword search and searches per key inside the k-nearest query, so one tenant
cannot starve another. A zero vector (a query without a single known word) has no
direction and so no neighbours: every index returns nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from memroute.models.records import MemoryFilter, MemoryRecord

#: A query or document embedding: one float32 row.
Vector = NDArray[np.float32]

#: Which of these memories (by `memories.rowid`) the searcher admits: rowid → memory id.
RowAdmission = Callable[[Sequence[int]], dict[int, str]]


@dataclass(frozen=True, slots=True)
class VectorHit:
    memory_id: str
    score: float
    #: The memory as the index read it while checking the hit against the filter (the
    #: sqlite-vec table does), so the caller need not read it again; None when not read.
    memory: MemoryRecord | None = None


class VectorIndex(Protocol):
    #: "sqlite-vec" or "qdrant" (shown in resolutions and engine status)
    @property
    def name(self) -> str: ...

    #: True when hybrid retrieval should fuse this index's hits with FTS5 by RRF (both
    #: sqlite-vec and Qdrant do); False when the index answers alone.
    @property
    def fuse_with_keywords(self) -> bool: ...

    def search(
        self, vector: Vector, flt: MemoryFilter, k: int, admitted: RowAdmission | None = None
    ) -> list[VectorHit]:
        """The `k` memories nearest to `vector` among those `flt` admits, best first.
        `admitted`, when the searcher holds the key's memories itself, tells which rows
        `flt` admits without the index reading them (an index that does not find memories
        by rowid checks them its own way)."""
        ...
