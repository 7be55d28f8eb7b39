"""Shared fixtures: real SQLite files under tmp_path, a clock tests can move."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memroute import Memory


class ManualClock:
    """A clock that stands still until a test moves it (a real `Clock`, not a patch)."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 6, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)

    def tick(self) -> None:
        """Move one millisecond, so consecutive writes get distinct timestamps."""
        self.now += timedelta(milliseconds=1)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memroute.db"


@pytest.fixture
def mem(db_path: Path, clock: ManualClock) -> Iterator[Memory]:
    memory = Memory.open(db_path, clock=clock)
    yield memory
    memory.close()
