"""Moving a memroute from its SQLite file to PostgreSQL (`memroute store copy`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from memroute.errors import InvalidInput, StoreError
from memroute.store import SqliteStore
from memroute.store.copy import TableCopied, copy_store

# Tables whose every row must be on the target once copied (the queue may have run meanwhile).
CHECKED = ("settings", "providers", "api_keys", "memories", "memory_history")


def copy_sqlite_to_postgres(
    sqlite_path: str | Path, url: str, *, progress: Callable[[str, int], None] = lambda _t, _n: None
) -> list[TableCopied]:
    """Copy the SQLite file at `sqlite_path` into the PostgreSQL database at `url` (migrated
    first; a copy that stopped resumes). Raises `StoreError` when a checked table has fewer
    rows on the target than in the file afterwards."""
    path = Path(sqlite_path).expanduser()
    if not path.is_file():
        raise InvalidInput(f"no SQLite database at {path}", "from")
    if not url.startswith(("postgresql://", "postgres://")):
        raise InvalidInput("must be a postgresql:// URL", "to")
    try:
        from memroute.store.postgres import PostgresStore
    except ImportError as exc:
        raise StoreError("copying to PostgreSQL needs psycopg: pip install 'memroute[postgres]'") from exc
    source = SqliteStore.open(path, load_vec=False)
    try:
        target = PostgresStore.open(url)
        try:
            report = copy_store(source, target, source_name=os.path.realpath(path), progress=progress)
        finally:
            target.close()
    finally:
        source.close()
    short = [t for t in report if t.name in CHECKED and t.target < t.source]
    if short:
        detail = ", ".join(f"{t.name} {t.target} of {t.source}" for t in short)
        raise StoreError(f"the copy is incomplete: {detail}")
    return report
