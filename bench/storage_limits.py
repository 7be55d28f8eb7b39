"""Bounded work and a full database, at sizes too large for the test suite.

- `summarize_at(folder, count)`: `count` old memories of one key summarised while another
  key keeps adding memories; how long the run took, how many summaries it wrote, how
  big the response was, and how long the other key's adds waited at worst.
- `full_disk_recovery(folder)`: a database filled to its size limit, chat turns queued
  while full, deletes while full, then space returns; how many queued facts were stored
  and how long that took.

Both return plain dicts, for `python -m bench.storage_limits` and for the abuse suite.

    python -m bench.storage_limits                 # 12,000 memories
    python -m bench.storage_limits --count 3000
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memroute.clock import to_iso
from memroute.config import Config
from memroute.errors import StorageFull
from memroute.models.wire import to_wire
from memroute.service.build import build
from memroute.service.facade import Memory
from memroute.store import NewMemory

UNLIMITED_PAGES = 1073741823


class _Clock:
    """Now, or later: `now` is moved forward to make memories old."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> datetime:
        return datetime.fromtimestamp(self.now, UTC)


def _seed(mem: Memory, owner: str, count: int, now: str) -> None:
    store = mem._store
    for start in range(0, count, 1000):
        with store.db.write():
            for n in range(start, min(start + 1000, count)):
                content = f"note {n}: the build of service {n} uses cache layer {n % 17}. It runs nightly."
                new = NewMemory(api_key_id=owner, content=content, key=f"note:{n}")
                store.memories.upsert(new, now=now, actor="bench")


def summarize_at(folder: Path, count: int = 12_000) -> dict[str, Any]:
    """Summarise `count` old memories of one key while another key adds memories."""
    clock = _Clock()
    config = Config.for_path(folder / "summarize.db", environ={})
    mem = Memory(build(config, clock), start_workers=False)
    try:
        _seed(mem, "big", count, to_iso(clock()))
        clock.now += 40 * 86400
        waits: list[float] = []
        done = threading.Event()

        def other_tenant() -> None:
            n = 0
            while not done.is_set():
                start = time.perf_counter()
                mem.add("small", f"other tenant note {n}")
                waits.append(time.perf_counter() - start)
                n += 1

        writer = threading.Thread(target=other_tenant)
        writer.start()
        start = time.perf_counter()
        report = mem.summarize(30, api_key_id="big")
        seconds = time.perf_counter() - start
        done.set()
        writer.join()
        return {
            "memories": count,
            "seconds": round(seconds, 2),
            "summaries": len(report.summaries),
            "deleted": report.deleted_count,
            "responseBytes": len(json.dumps(to_wire(report))),
            "largestSummaryBytes": max(len(mem.get(s.summary_id).content.encode()) for s in report.summaries),  # type: ignore[union-attr]
            "otherKeyAdds": len(waits),
            "otherKeyAddMaxMs": round(max(waits, default=0.0) * 1000, 1),
        }
    finally:
        mem.close()


def full_disk_recovery(folder: Path, turns: int = 50) -> dict[str, Any]:
    """Queue `turns` chat turns, fill the database, let space return: what was stored."""
    config = Config.for_path(folder / "full.db", environ={})
    parts = build(config, _Clock())
    mem = Memory(parts, start_workers=False)
    writer = parts.store.db._writer
    try:
        doomed = [mem.add("k", "an old note to delete " * 20).id for _ in range(50)]
        mem.enqueue_extractions("k", [(f"I like tool{n}.", "user_message") for n in range(turns)])
        pages = writer.execute("PRAGMA page_count").fetchone()[0]  # type: ignore[index]
        writer.execute(f"PRAGMA max_page_count = {pages}")
        for n in range(100_000):
            try:
                mem.add("filler", f"filler {n}")
            except StorageFull:
                break
        parts.extraction.start()
        parts.extraction.notify()
        stored_while_full = mem.wait_for_extraction(timeout=2)
        deleted_while_full = sum(mem.delete(i) for i in doomed)
        writer.execute(f"PRAGMA max_page_count = {UNLIMITED_PAGES}")
        start = time.perf_counter()
        drained = mem.wait_for_extraction(timeout=60)
        learned = {m.key for m in mem.list("k", limit=200).items if m.key.startswith("preference:")}
        return {
            "queued": turns,
            "drainedWhileFull": stored_while_full,
            "deletedWhileFull": deleted_while_full,
            "drained": drained,
            "secondsToDrain": round(time.perf_counter() - start, 2),
            "stored": len(learned),
            "lost": turns - len(learned),
            "queue": to_wire(mem.extraction_queue()),
        }
    finally:
        mem.close()


def main() -> None:
    import argparse

    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--count", type=int, default=12_000)
    options = args.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        print(json.dumps({"summarize": summarize_at(Path(folder), options.count)}, indent=2))
        print(json.dumps({"fullDisk": full_disk_recovery(Path(folder))}, indent=2))


if __name__ == "__main__":
    main()
