"""Embedding sources (remote, static, transformers, hashing) behind one protocol.

`resolve_source` picks a source from the memory settings; `EmbeddingSources`
loads the embedders lazily and caches query vectors; `build_static_model` distils an
offline static model from the bundled MiniLM.
"""

from __future__ import annotations

from memroute.embeddings.base import Embedder, FloatMatrix, l2_normalize, static_cache_dir
from memroute.embeddings.distill import build_static_model
from memroute.embeddings.hashing import HashingEmbedder
from memroute.embeddings.resolve import (
    DEFAULT_STATIC_MODEL,
    DEFAULT_TRANSFORMERS_MODEL,
    SourceChoice,
    resolve_source,
)
from memroute.embeddings.sources import EmbeddingSources, cache_key
from memroute.embeddings.static import DISTILLED_STATIC_MODEL, DISTILLED_STATIC_NAME

__all__ = [
    "DEFAULT_STATIC_MODEL",
    "DEFAULT_TRANSFORMERS_MODEL",
    "DISTILLED_STATIC_MODEL",
    "DISTILLED_STATIC_NAME",
    "Embedder",
    "EmbeddingSources",
    "FloatMatrix",
    "HashingEmbedder",
    "SourceChoice",
    "build_static_model",
    "cache_key",
    "l2_normalize",
    "resolve_source",
    "static_cache_dir",
]
