"""A model-free embedder for tests and the demo: the hashing trick over words and their
character trigrams. Deterministic across processes (blake2b, not Python's salted hash)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from memroute.embeddings.base import FloatMatrix, l2_normalize
from memroute.embeddings.resolve import DEFAULT_HASHING_DIMENSIONS

_WORD = re.compile(r"\w+")
#: Whole words dominate; trigrams make "memory" and "memories" land near each other.
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.35


@lru_cache(maxsize=65536)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    sign = 1.0 if digest >> 63 else -1.0
    return digest % dim, sign


def _features(text: str) -> list[tuple[str, float]]:
    features: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        features.append(("w:" + word, _WORD_WEIGHT))
        padded = f"<{word}>"
        features.extend(("t:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2))
    return features


class HashingEmbedder:
    """source "hashing", model "hashing-<dim>"; texts sharing words are closer than unrelated ones."""

    source = "hashing"

    def __init__(self, dim: int = DEFAULT_HASHING_DIMENSIONS) -> None:
        if dim < 1:
            raise ValueError("dim must be >= 1")
        self._dim = dim
        self.model = f"hashing-{dim}"

    @property
    def dimensions(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                index, sign = _bucket(feature, self._dim)
                out[row, index] += sign * weight
        return l2_normalize(out)
