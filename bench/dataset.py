"""Building large benchmark databases fast, and measuring their size.

Rows go in through the store itself (`MemoryRepository.upsert`, so FTS triggers and
history rows are written exactly as in production), but thousands per transaction
instead of one autocommit each. A finished database is described by a JSON file
next to it, so `--data-dir` runs can reuse it.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw

from bench.common import log
from bench.corpus import MemoryGenerator
from bench.opened import open_bench
from memroute.clock import to_iso
from memroute.store import NewMemory

BATCH = 10_000
BUILD_CACHE_KIB = 512 * 1024


def owner_ids(seed: int, count: int) -> list[str]:
    """API key ids look like the UUIDs of the api_keys table."""
    rng = random.Random(seed ^ 0x5EED)
    return [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(count)]


@dataclass(slots=True)
class BuiltDb:
    path: str
    total: int
    keys: int
    seed: int
    owners: list[str]
    build_s: float
    rows: int
    size: dict[str, int]  # bytes: file, wal, total (after a TRUNCATE checkpoint)
    breakdown: dict[str, int]  # bytes per table / index (dbstat)

    @property
    def per_key(self) -> int:
        return self.total // self.keys

    @property
    def bytes_per_memory(self) -> float:
        return self.size["total"] / max(self.rows, 1)


def db_name(total: int, keys: int, seed: int) -> str:
    return f"mem-{total}-{keys}-{seed}.db"


def interleaved(
    gen: MemoryGenerator, owners: list[str], per_key: int, seed: int
) -> Iterator[tuple[str, Any]]:
    """Every owner's memories, in bursts of 5–50 (one conversation's worth) from random owners,
    so a key's rows are spread over the file as they are after months of real traffic."""
    rng = random.Random(seed ^ 0xB0057)
    streams = {owner: gen.for_owner(per_key) for owner in owners}
    left = dict.fromkeys(owners, per_key)
    active = list(owners)
    while active:
        i = rng.randrange(len(active))
        owner = active[i]
        burst = min(left[owner], rng.randint(5, 50))
        for g in itertools.islice(streams[owner], burst):
            yield owner, g
        left[owner] -= burst
        if not left[owner]:
            active[i] = active[-1]
            active.pop()


def build(directory: Path, total: int, keys: int, seed: int) -> BuiltDb:
    """A database with `total` memories spread evenly over `keys` owners (reused if present)."""
    path = directory / db_name(total, keys, seed)
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        info = BuiltDb(**json.loads(meta.read_text()))
        log(f"reusing {path} ({info.rows:,} memories)")
        return info
    for stale in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        stale.unlink(missing_ok=True)
    owners = owner_ids(seed, keys)
    per_key = total // keys
    now = to_iso(datetime.now(UTC))
    stream = interleaved(MemoryGenerator(seed, now=datetime.now(UTC)), owners, per_key, seed)
    log(f"building {path.name}: {total:,} memories over {keys:,} keys")
    start = time.perf_counter_ns()
    mem = open_bench(path, start_workers=False)
    try:
        repo, db = mem.parts.store.memories, mem.parts.store.db
        with db.write() as con:
            # Setup only: a big page cache on this connection keeps the build fast; every
            # measurement opens its own connections with memroute's defaults.
            con.execute(f"PRAGMA cache_size = {-BUILD_CACHE_KIB}")
        done = 0
        while done < per_key * keys:
            with db.write():
                for owner, g in itertools.islice(stream, BATCH):
                    new = NewMemory(
                        api_key_id=owner,
                        content=g.content,
                        key=g.key,
                        type=g.type,
                        session_id=g.session_id,
                        metadata=g.metadata,
                        expires_at=g.expires_at,
                        created_at=g.created_at,
                        updated_at=g.updated_at,
                    )
                    repo.upsert(new, now=now, actor="api")
                    done += 1
            if done % (BATCH * 10) == 0:
                log(f"  {done:,} memories, {(time.perf_counter_ns() - start) / 1e9:.0f} s")
        rows = mem.stats().total
    finally:
        mem.close()
    build_s = (time.perf_counter_ns() - start) / 1e9
    size, breakdown = measure_size(path)
    info = BuiltDb(str(path), total, keys, seed, owners, build_s, rows, size, breakdown)
    meta.write_text(json.dumps(asdict(info)))
    log(f"built in {build_s:.1f} s ({rows / build_s:,.0f} memories/s), {size['total'] / rows:.0f} B/memory")
    return info


def measure_size(path: Path | str) -> tuple[dict[str, int], dict[str, int]]:
    """File sizes after `PRAGMA wal_checkpoint(TRUNCATE)`, and bytes per table/index."""
    con = apsw.Connection(str(path))
    try:
        con.set_busy_timeout(10_000)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        breakdown = {
            name: int(size)
            for name, size in con.execute(
                "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"
            )
        }
    finally:
        con.close()
    file_size = os.path.getsize(path)
    wal = Path(f"{path}-wal")
    wal_size = wal.stat().st_size if wal.exists() else 0
    return {"file": file_size, "wal": wal_size, "total": file_size + wal_size}, breakdown


def group_breakdown(breakdown: dict[str, int]) -> dict[str, int]:
    """Bytes per concern: memories table, its indexes, FTS index, history, other."""
    groups = {
        "memories table": 0,
        "memories indexes": 0,
        "FTS5 index": 0,
        "history (table + indexes)": 0,
        "other": 0,
    }
    for name, size in breakdown.items():
        if name == "memories":
            groups["memories table"] += size
        elif name.startswith(("idx_memories", "sqlite_autoindex_memories")):
            groups["memories indexes"] += size
        elif name.startswith("memory_fts"):
            groups["FTS5 index"] += size
        elif "history" in name:
            groups["history (table + indexes)"] += size
        else:
            groups["other"] += size
    return groups
