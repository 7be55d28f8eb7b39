"""Helpers shared by the embedding tests (plain functions, no fixtures)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memroute.config import Config
from memroute.errors import UpstreamError
from memroute.upstream.route import Route

#: Small enough to distil in a few seconds, large enough to hold common English words.
SMALL_VOCAB = 3000


class FakeTimer:
    """A monotonic clock that stands still until a test moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_config(tmp: Path, **changes: object) -> Config:
    return Config(data_dir=tmp, db_path=tmp / "memroute.db").with_overrides(**changes)


def no_routes(model: str) -> Route:
    raise UpstreamError(f"no upstream provider is configured for {model}")


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
