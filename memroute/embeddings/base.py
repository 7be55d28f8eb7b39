"""What every embedding source shares: the `Embedder` protocol, L2 normalisation, blank
texts and the model cache folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from memroute.config import Config

FloatMatrix = NDArray[np.float32]


class Embedder(Protocol):
    """One loaded embedding model. `embed` is safe to call from several threads."""

    source: str  # "remote" | "static" | "transformers" | "hashing"
    model: str  # as shown to users

    @property
    def dimensions(self) -> int | None:
        """The vector length, or None until known (remote: learned from the first vector)."""
        ...

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """float32 (len(texts), dim), every row L2-normalised; a text without tokens gives a
        zero row. Raises `EmbeddingError` with the reason and source."""
        ...


def static_cache_dir(config: Config) -> Path:
    """Where downloaded and distilled models live: MEMORY_STATIC_CACHE_DIR, else <data dir>/embeddings."""
    return config.static_cache_dir or config.data_dir / "embeddings"


def l2_normalize(matrix: NDArray[np.floating]) -> FloatMatrix:
    """Rows scaled to unit length, as float32; all-zero rows stay zero."""
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {out.shape}")
    out = np.nan_to_num(out, nan=0.0, posinf=0.0, neginf=0.0)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    safe = np.where(norms > 0, norms, 1.0).astype(np.float32)
    return np.ascontiguousarray(out / safe, dtype=np.float32)


def empty_matrix(dim: int | None) -> FloatMatrix:
    return np.zeros((0, dim or 0), dtype=np.float32)


def is_blank(text: str) -> bool:
    """Empty or whitespace only: nothing to embed, so the row stays zero (and providers,
    which reject empty input, never see it)."""
    return not text.strip()
