"""Copying an SQLite file into a PostgreSQL database (`memroute store copy`).

Settings, providers (with their stored keys), client keys (their hashes), memories with
their ids, timestamps and access counts, their whole history (deleted memories' too) and
the extraction jobs still waiting are copied; vectors are not (the target embeds its
memories again, with pgvector or Qdrant), nor dashboard sessions (sign in again).

Resumable: each batch is one transaction on the target that also records how far the
copy of its table got (`store_copy_progress`), so a copy stopped at any moment goes on
from its last committed batch when run again, and nothing is copied twice. The source is
only read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memroute.store import SqliteStore
from memroute.store.postgres import PostgresStore

BATCH = 1000


@dataclass(frozen=True, slots=True)
class Table:
    """A table copied in the order of `order` (a column that only grows), its rows
    inserted as they are; a row already there (`conflict`) is left alone."""

    name: str
    columns: str
    order: str
    conflict: str


TABLES = (
    Table("settings", "key, value, updated_at", "rowid", "(key)"),
    Table(
        "providers",
        "id, base_url, api_key_env, api_key, is_default, created_at, updated_at, format",
        "rowid",
        "(id)",
    ),
    Table(
        "api_keys",
        "id, name, key_hash, prefix, created_at, last_used_at, revoked_at, max_concurrent,"
        " requests_per_minute, requires_user_id",
        "rowid",
        "(id)",
    ),
    Table(
        "memories",
        "id, api_key_id, session_id, type, key, content, metadata, created_at, updated_at, expires_at,"
        " access_count, last_accessed_at",
        "rowid",
        "(id)",
    ),
    Table(
        "memory_history",
        "memory_id, api_key_id, event, old_content, new_content, old_key, new_key, at, actor",
        "seq",
        "",
    ),
    Table(
        "extraction_jobs",
        "api_key_id, session_id, source, text, created_at, attempts, last_error, request_id, speaker,"
        " capture, facts",
        "id",
        "",
    ),
)

_PROGRESS = (
    "CREATE TABLE IF NOT EXISTS store_copy_progress ("
    " source text NOT NULL, name text NOT NULL, last bigint NOT NULL, PRIMARY KEY (source, name))"
)


@dataclass(frozen=True, slots=True)
class TableCopied:
    name: str
    copied: int  # rows inserted by this run
    source: int  # rows in the source
    target: int  # rows in the target afterwards


def copy_store(
    source: SqliteStore,
    target: PostgresStore,
    *,
    source_name: str,
    progress: Callable[[str, int], None] = lambda _name, _rows: None,
    batch: int = BATCH,
) -> list[TableCopied]:
    """Copy every table of `TABLES` from `source` into `target` (resuming a copy of the same
    `source_name` where it stopped); `progress(table, rows copied so far)` after each batch.
    Returns, per table, what was copied and the counts on both sides."""
    with target.db.write() as con:
        con.execute(_PROGRESS)
    report = []
    for table in TABLES:
        copied = _copy_table(source, target, table, source_name, progress, batch)
        report.append(TableCopied(table.name, copied, _count(source, table), _target_count(target, table)))
    with target.db.write() as con:  # replicas already running read the copied settings
        con.execute("SELECT nextval('settings_version')")
    with target.db.read() as con:  # the planner's statistics of the loaded tables, now
        con.execute("VACUUM ANALYZE")
    return report


def _copy_table(
    source: SqliteStore,
    target: PostgresStore,
    table: Table,
    source_name: str,
    progress: Callable[[str, int], None],
    batch: int,
) -> int:
    last = _last(target, source_name, table.name)
    copied = 0
    marks = ", ".join(["%s"] * len(table.columns.split(",")))
    conflict = f" ON CONFLICT {table.conflict} DO NOTHING" if table.conflict else ""
    insert = f"INSERT INTO {table.name} ({table.columns}) VALUES ({marks}){conflict}"
    while True:
        rows = (
            source.db.read()
            .execute(
                f"SELECT {table.order}, {table.columns} FROM {table.name} WHERE {table.order} > ?"
                f" ORDER BY {table.order} LIMIT ?",
                (last, batch),
            )
            .fetchall()
        )
        if not rows:
            return copied
        with target.db.write() as con, con.cursor() as cursor:
            cursor.executemany(insert, [tuple(row[1:]) for row in rows])
            copied += cursor.rowcount
            last = int(rows[-1][0])  # type: ignore[arg-type]
            con.execute(
                "INSERT INTO store_copy_progress (source, name, last) VALUES (%s, %s, %s)"
                " ON CONFLICT (source, name) DO UPDATE SET last = excluded.last",
                (source_name, table.name, last),
            )
        progress(table.name, copied)


def _last(target: PostgresStore, source_name: str, name: str) -> int:
    row = target.db.fetchone(
        "SELECT last FROM store_copy_progress WHERE source = %s AND name = %s", (source_name, name)
    )
    return int(row[0]) if row else 0


def _count(source: SqliteStore, table: Table) -> int:
    row = source.db.read().execute(f"SELECT count(*) FROM {table.name}").fetchone()
    return int(row[0]) if row else 0


def _target_count(target: PostgresStore, table: Table) -> int:
    row = target.db.fetchone(f"SELECT count(*) FROM {table.name}")
    return int(row[0]) if row else 0
