"""What `memroute doctor` reports: which storage and search features are active."""

from __future__ import annotations

from memroute.config import Config
from memroute.models.status import QdrantStatus
from memroute.vectors.qdrant import INSTALL_HINT, client_installed


def _vec_status(config: Config) -> str:
    if config.disable_vec:
        return "disabled (VECTOR_STORE_DISABLE_VEC=true)"
    import apsw

    from memroute.store.db import sqlite_vec_path

    path, reason = sqlite_vec_path()
    if path is None:
        return f"not available: {reason}"
    con = apsw.Connection(":memory:")
    try:
        con.enable_load_extension(True)
        con.load_extension(path)
        row = con.execute("SELECT vec_version()").fetchone()
        return f"available ({row[0] if row else '?'})"
    except apsw.Error as exc:
        return f"not available: failed to load ({exc})"
    finally:
        con.close()


def _qdrant_line(status: QdrantStatus) -> str:
    if not status.enabled:
        return "disabled"
    if not status.healthy:
        return f"enabled, NOT reachable at {status.where}: {status.error}"
    state = "serving" if status.serving else f"back-filling ({status.backfill.pending} memories left)"
    return (
        f"{state} at {status.where}, collection {status.collection}, {status.points} points,"
        f" {status.outbox} changes queued"
    )


def diagnose(config: Config) -> dict[str, str | int | bool]:
    """The doctor's table: a label and its value per line."""
    from memroute.store import sqlite_info

    info = sqlite_info()
    report: dict[str, str | int | bool] = {
        "sqlite": str(info["sqliteVersion"]),
        "apsw": str(info["apswVersion"]),
        "fts5": "yes" if info["fts5"] else "NO (keyword search unavailable)",
        "extension loading": "yes" if info["extensionLoading"] else "no",
        "sqlite-vec": _vec_status(config),
        "embedding source": "none configured (keyword search only)",
        "qdrant": "not configured" if client_installed() else f"not configured ({INSTALL_HINT})",
        "data dir": str(config.data_dir),
        "database": config.database_shown,
    }
    if config.database_url is not None or config.db_path.exists():
        from memroute.service import Memory

        mem = Memory.open(config=config, start_workers=False)
        try:
            stats = mem.stats()
            queue = mem.extraction_queue()
            report["memories"] = stats.total
            report["extraction queue"] = f"{queue.pending} pending, {queue.failed} failed"
            report["memory enabled"] = mem.settings().enabled
            status = mem.engine_status()
            embedding, vectors = status.embedding, status.vector_store
            report["embedding source"] = (
                f"{embedding.source} ({embedding.model})" if embedding.source else "none"
            ) + f" — {embedding.reason}"
            report["vectors"] = f"{vectors.row_count} stored, {vectors.needs_reindex} waiting for a vector"
            report["qdrant"] = _qdrant_line(status.qdrant)
        finally:
            mem.close()
    else:
        report["memories"] = "database not created yet (created on first use)"
    return report
