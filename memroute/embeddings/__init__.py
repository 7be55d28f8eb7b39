"""Embedding sources (remote, static, transformers, hashing) behind one protocol."""

from __future__ import annotations

from typing import Protocol


class Embedder(Protocol):
    source: str
    model: str

    def embed(self, texts: list[str]) -> list[list[float]]:
        """L2-normalised vectors, one per text."""
        ...
