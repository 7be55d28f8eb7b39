"""Test-only routes past the `Memory` facade, for tests that check a part or a storage
detail on purpose (edges and most tests use the facade):

- `open_parts`: a `Memory` together with the parts the composition root built for it
  (the sqlite-vec index, the embedding sources, ...), to test one part directly;
- `database`: the memory's SQLite file opened again on its own connections, to read
  what was really stored (rows, vector metadata, the Qdrant outbox).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import postgres
import psycopg

from memroute import Memory
from memroute.clock import Clock, utc_now
from memroute.config import Config
from memroute.service.build import Parts, build
from memroute.store import SqliteStore


def open_parts(
    config: Config, clock: Clock = utc_now, *, start_workers: bool = False
) -> tuple[Memory, Parts]:
    """A `Memory` on freshly built parts, and those parts."""
    parts = build(config, clock)
    return Memory(parts, start_workers=start_workers), parts


@contextmanager
def database(where: Memory | Path) -> Iterator[SqliteStore]:
    """The database of `where` (a `Memory` or a file), opened again; closed on exit."""
    config = where.config if isinstance(where, Memory) else Config.for_path(where, environ={})
    store = SqliteStore.open(config.db_path, load_vec=not config.disable_vec)
    try:
        yield store
    finally:
        store.close()


def rows(where: Memory | Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """The rows `sql` (with `?` placeholders) reads from the database of `where`: its SQLite
    file, or its PostgreSQL database when the test runs on one."""
    url = where.config.database_url if isinstance(where, Memory) else postgres.url_for(where)
    if url is not None:
        with psycopg.connect(url, autocommit=True) as con:
            return [tuple(row) for row in con.execute(sql.replace("?", "%s").encode(), params)]
    with database(where) as store:
        return [tuple(row) for row in store.db.read().execute(sql, params)]


def jobs_ever_queued(memory: Memory) -> int:
    """How many chat turns were ever put on the extraction queue (its id counter)."""
    if memory.config.database_url is not None:
        sql = "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM extraction_jobs_id_seq"
        return int(scalar(memory, sql))
    seq = scalar(memory, "SELECT seq FROM sqlite_sequence WHERE name = 'extraction_jobs'")
    return int(seq) if seq is not None else 0


def scalar(where: Memory | Path, sql: str, *params: Any) -> Any:
    """The first column of the first row `sql` reads."""
    found = rows(where, sql, *params)
    return found[0][0] if found else None
