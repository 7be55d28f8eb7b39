"""memroute: persistent per-API-key memory for OpenAI-compatible LLM clients.

from memroute import Memory, inject, extract_facts_from_text

The public names are imported on first use, so `import memroute` (and the CLI's
`--help`) stays instant: nothing heavy is loaded until it is needed.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

# numpy's BLAS would split each small product (a key's vectors or words against a
# question) over every core and then spin its threads there for milliseconds: several
# times the product's own CPU, taken from the requests beside it. One thread each, unless
# the environment says otherwise; it must be set before numpy is first imported.
for _pool in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_pool, "1")

if TYPE_CHECKING:
    from memroute.errors import (
        Conflict,
        EmbeddingError,
        InvalidInput,
        MemrouteError,
        NotFound,
        StoreError,
        UpstreamError,
    )
    from memroute.memory.extraction import extract_facts_from_text
    from memroute.memory.injection import inject
    from memroute.models.records import Fact, MemoryRecord, RetrievedItem
    from memroute.service import Memory

    __version__: str

#: public name → the module that defines it
_HOMES = {
    "Conflict": "memroute.errors",
    "EmbeddingError": "memroute.errors",
    "InvalidInput": "memroute.errors",
    "MemrouteError": "memroute.errors",
    "NotFound": "memroute.errors",
    "StoreError": "memroute.errors",
    "UpstreamError": "memroute.errors",
    "extract_facts_from_text": "memroute.memory.extraction",
    "inject": "memroute.memory.injection",
    "Fact": "memroute.models.records",
    "MemoryRecord": "memroute.models.records",
    "RetrievedItem": "memroute.models.records",
    "Memory": "memroute.service",
}

__all__ = [
    "Conflict",
    "EmbeddingError",
    "Fact",
    "InvalidInput",
    "Memory",
    "MemoryRecord",
    "MemrouteError",
    "NotFound",
    "RetrievedItem",
    "StoreError",
    "UpstreamError",
    "__version__",
    "extract_facts_from_text",
    "inject",
]


if not TYPE_CHECKING:  # type checkers see the imports above; at run time names load here

    def __getattr__(name: str) -> Any:
        if name == "__version__":
            from memroute.version import package_version

            return package_version()
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module 'memroute' has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES, "__version__"])
