"""A `Memory` that keeps the parts it runs on, for benchmarks that time one part (the
sqlite-vec index, the embedding sources, the store) on its own. memroute's edges never
reach past the facade; a benchmark measuring the inside does, through here only."""

from __future__ import annotations

import time
from pathlib import Path

from memroute import Memory
from memroute.clock import utc_now
from memroute.config import Config
from memroute.embeddings import SourceChoice
from memroute.models.records import MemoryRecord
from memroute.service.build import Parts, build


class BenchMemory(Memory):
    def __init__(self, parts: Parts, *, start_workers: bool) -> None:
        super().__init__(parts, start_workers=start_workers)
        self.parts = parts

    def source(self) -> SourceChoice:
        """The memory embedding source the stored settings select."""
        return self.parts.semantic.source(self.settings())

    def settle(self, timeout_s: float = 180.0) -> float:
        """Index every key waiting for its in-process index (as a server a few seconds after
        a big key's first recall: its builder thread indexes it meanwhile, resting between
        builds) on this thread, without the rests; the seconds it took. Gives up after
        `timeout_s` on a key the builder thread is still indexing."""
        started = time.perf_counter()
        self.parts.key_indexes.build_waiting()
        while self.parts.key_indexes.building() and time.perf_counter() - started < timeout_s:
            time.sleep(0.05)
        return time.perf_counter() - started

    def by_meaning(self, api_key_id: str, query: str, limit: int) -> list[MemoryRecord]:
        """The key's memories nearest to `query` by meaning alone (store/key_meanings.py:
        the tier hybrid recall fuses with keywords), as retrieval reads them: from the key's
        index when it has one (none from SQL)."""
        flt = self._filter(api_key_id, "apiKey", None, self.settings().retention_days)
        reader = self.parts.key_indexes.reader(flt)
        return [memory for memory, _cosine in reader.meaning_search(flt, query, limit=limit)]


def open_bench(
    path: str | Path | None = None, *, config: Config | None = None, start_workers: bool = False
) -> BenchMemory:
    """Like `Memory.open`, keeping the parts."""
    if config is None:
        config = Config.for_path(path) if path is not None else Config.from_env()
    elif path is not None:
        config = config.with_overrides(db_path=Path(path))
    return BenchMemory(build(config, utc_now), start_workers=start_workers)
