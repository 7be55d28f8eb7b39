"""Shared fixtures: real SQLite files under tmp_path, a clock tests can move."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from clocks import ManualClock
from memories import open_memory

from memroute import Memory


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memroute.db"


@pytest.fixture
def mem(db_path: Path, clock: ManualClock) -> Iterator[Memory]:
    memory = open_memory(db_path, clock=clock, workers=True)
    yield memory
    memory.close()
