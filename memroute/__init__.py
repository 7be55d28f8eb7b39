"""memroute: persistent per-API-key memory for OpenAI-compatible LLM clients.

from memroute import Memory, inject, extract_facts_from_text
"""

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
from memroute.models import Fact, MemoryRecord, RetrievedItem
from memroute.service import Memory

__version__ = "0.1.0"

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
    "extract_facts_from_text",
    "inject",
]
