"""Vector tiers (sqlite-vec, Qdrant) behind one small protocol.

Score semantics: `VectorHit.score` is a similarity in [0, 1], higher is closer
(cosine similarity mapped from the backend's distance). Every tier must apply the
same `MemoryFilter` as the keyword tiers and search per key inside the k-nearest
query, so one tenant cannot starve another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from memroute.models import MemoryFilter


@dataclass(frozen=True, slots=True)
class VectorHit:
    memory_id: str
    score: float


class VectorTier(Protocol):
    #: "sqlite-vec" or "qdrant" (shown in resolutions and engine status)
    name: str
    #: True when hybrid retrieval should fuse this tier with FTS5 by RRF
    #: (sqlite-vec); False when the tier answers alone (Qdrant, REF §4.7).
    fuse_with_keywords: bool

    def search(self, query: str, flt: MemoryFilter, k: int) -> list[VectorHit]:
        """Nearest memories to `query` among those `flt` admits, best first."""
        ...
