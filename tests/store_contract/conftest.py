"""The store contract suite (memroute/store/contract.py) runs every test on both stores:
an SQLite file and a database of its own on a real PostgreSQL (tests/postgres.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import postgres
import pytest

from memroute.store import SqliteStore, Store


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened: Store
    if request.param == "sqlite":
        opened = SqliteStore.open(tmp_path / "contract.db")
        yield opened
        opened.close()
        return
    from memroute.store.postgres import PostgresStore

    url = postgres.fresh_database()
    opened = PostgresStore.open(url)
    yield opened
    opened.close()
    postgres.drop_database(url)
