"""Semantic memory: query embedding, vector retrieval, int8, re-indexing, RSS and quality per source.

Sources: `hashing` (model-free, tests and demo), `static` (Model2Vec; offline this is the stand-in
distilled from the bundled MiniLM, 256-d) and `transformers` (all-MiniLM-L6-v2 int8 ONNX, 384-d).

- Query embedding: `EmbeddingSources.embed_query` on distinct questions with the query cache cleared
  before every call (cold), then the same questions again (cache hit). The model load is timed apart.
- Retrieval: `mem.retrieve(key, q, strategy=s, max_tokens=2000, record_access=False)` on a copy of
  bench.dataset's database with a vector for every memory, for s in semantic and hybrid, the query
  embedding included: every question is distinct and the query cache is cleared before each timed
  call. "hybrid, cached query" is the same with the query vector already cached (what embedding
  costs is the difference). Cases are interleaved in rounds, each query goes to a random key.
  ONNX document vectors are real up to 100k memories (10k short memories embed in ~20 s) and
  stand-ins above (1M would take ~40 min; `--quick` always uses stand-ins): the static (else
  hashing) vectors through a fixed random projection to 384-d, unit length, written by memroute's
  own re-index path under the transformers signature. sqlite-vec searches by brute force, so the
  KNN time depends on the count and the width, not on the values; the query vector is always a
  real ONNX embedding.
- int8: the same databases with `MEMORY_VEC_QUANTIZATION=int8` (latency and size against float).
- Re-index: `mem.reindex(force=True, wait=True)` per source on a small database, model loaded first;
  and (MODERATE at 10k, FULL at 1M) the rate of its batches at the start and with 90 % done.
- RSS: one child process per source opens a database, loads the source, re-indexes it and runs a
  few hybrid retrieves, then reports VmRSS and VmHWM from /proc/self/status.
- Quality: recall@5/@10/@20 and MRR@10 from bench.quality_run (its paraphrase set).

    python -m bench.semantic                      # 10k memories in one key (a few minutes)
    python -m bench.semantic --full               # + 1M memories over 1,000 keys (~10–15 min)
    python -m bench.semantic --quick              # hashing + a tiny ONNX sample (seconds)
    python -m bench.semantic --data-dir /tmp/b    # keep the databases (and the static model)

The static model is distilled from MiniLM on first use (~30 s) into <data-dir>/embeddings, or
without --data-dir into <tmp>/memroute-bench-embeddings, and reused from there; `--quick` uses
static only when it is already there.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import numpy as np

import memroute
from bench import quality_run
from bench.common import (
    PROC_STATUS,
    Latency,
    Report,
    emit,
    environ,
    human_bytes,
    log,
    ms,
    parser,
    remove_database,
    table,
    verdict,
    work_dir,
)
from bench.corpus import queries
from bench.dataset import BuiltDb, build, measure_size
from bench.opened import BenchMemory, open_bench
from bench.retrieval import parse_size
from memroute.clock import days_ago, to_iso
from memroute.config import Config
from memroute.embeddings import DEFAULT_STATIC_MODEL, SourceChoice, l2_normalize
from memroute.embeddings import static as static_model
from memroute.embeddings.resolve import hashing_choice, static_choice
from memroute.errors import EmbeddingError
from memroute.models.records import MemoryFilter
from memroute.store.memories import filter_sql
from memroute.vectors import VectorHit

PARAPHRASE = "paraphrase"  # the quality set reported here (bench/quality_sets.py)
SOURCES = ("hashing", "static", "transformers")
LABELS = {"hashing": "hashing", "static": "static", "transformers": "ONNX MiniLM"}
TARGET_P99_MS = {"static": 10.0, "transformers": 40.0}  # hybrid, at 10k memories per key
TARGET_PER_KEY = 10_000
TARGET_RSS_MB = 150.0  # with static
CANDIDATES = 100  # what retrieval asks the vector tier for (memory.retrieval.KEYWORD_CANDIDATES)
RETENTION_DAYS = 30  # the default setting; retrieve() uses it
FILL_BATCH = 2_000
MEMO_MAX = 100_000  # document vectors of databases up to this size are embedded once for float and int8
SCALE_BATCHES = 40  # re-index batches timed at each point of bench_reindex_scale
MODEL_DIR_NAME = "memroute-bench-embeddings"
CASES = (("semantic", False), ("hybrid", False), ("hybrid", True))


@dataclass(frozen=True, slots=True)
class Size:
    size: str  # TOTALxKEYS
    sources: tuple[str, ...]  # float vectors
    int8: tuple[str, ...] = ()  # also an int8 copy


@dataclass(frozen=True, slots=True)
class Plan:
    sizes: tuple[Size, ...]
    queries: int  # timed retrieves per case and size
    warmup: int
    rounds: int
    embed_queries: dict[str, int]  # timed query embeddings per source
    reindex: dict[str, int]  # memories re-indexed per source
    rss_memories: dict[str, int]  # memories re-indexed in the RSS child, per source
    rss_queries: int
    quality: tuple[str, ...]  # sources for bench.quality_run
    build_static: bool  # distil the static model when it is not cached yet
    real_onnx_max: int = 0  # real ONNX document vectors up to this many memories, stand-ins above
    reindex_scale: str | None = None  # a size whose re-index rate is measured at 0 % and 90 % done


QUICK = Plan(
    sizes=(Size("2000x1", ("hashing", "static", "transformers"), ("hashing",)),),
    queries=30,
    warmup=5,
    rounds=2,
    embed_queries={"hashing": 100, "static": 100, "transformers": 30},
    reindex={"hashing": 1_000, "static": 1_000, "transformers": 48},
    rss_memories={"hashing": 200, "static": 200, "transformers": 48},
    rss_queries=10,
    quality=("hashing",),
    build_static=False,
)
SMOKE = replace(  # every step of QUICK on fewer items (bench.run_all --smoke)
    QUICK,
    sizes=(Size("500x1", ("hashing", "static", "transformers"), ("hashing",)),),
    queries=6,
    warmup=2,
    embed_queries={"hashing": 20, "static": 20, "transformers": 6},
    reindex={"hashing": 200, "static": 200, "transformers": 12},
    rss_memories={"hashing": 50, "static": 50, "transformers": 12},
    rss_queries=3,
)
MODERATE = Plan(
    sizes=(Size("10000x1", SOURCES, ("static", "transformers")),),
    queries=300,
    warmup=30,
    rounds=3,
    embed_queries={"hashing": 300, "static": 300, "transformers": 300},
    reindex={"hashing": 5_000, "static": 5_000, "transformers": 300},
    rss_memories={"hashing": 1_000, "static": 1_000, "transformers": 200},
    rss_queries=50,
    quality=SOURCES,
    build_static=True,
    real_onnx_max=100_000,
    reindex_scale="10000x1",
)
FULL = Plan(
    sizes=(
        Size("10000x1", SOURCES, ("static", "transformers")),
        Size("1000000x1000", ("static", "transformers")),
    ),
    queries=500,
    warmup=50,
    rounds=5,
    embed_queries={"hashing": 500, "static": 500, "transformers": 500},
    reindex={"hashing": 10_000, "static": 10_000, "transformers": 500},
    rss_memories={"hashing": 1_000, "static": 1_000, "transformers": 200},
    rss_queries=50,
    quality=SOURCES,
    build_static=True,
    real_onnx_max=100_000,
    reindex_scale="1000000x1000",
)


# -- setup ---------------------------------------------------------------------------------------------


def default_model_dir(data_dir: Path | None) -> Path:
    """Where the static model is distilled once: under --data-dir, else a persistent temp dir."""
    if data_dir is not None:
        return data_dir / "embeddings"
    return Path(tempfile.gettempdir()) / MODEL_DIR_NAME


def static_cached(model_dir: Path) -> bool:
    """Whether loading static needs no download and no distillation."""
    return static_model.locate(DEFAULT_STATIC_MODEL, model_dir) is not None or static_model.is_model_folder(
        static_model.distilled_folder(model_dir)
    )


def load_sources(directory: Path, model_dir: Path, plan: Plan) -> dict[str, str]:
    """Load each source once (static: distilled here on the first run); {source: why not} for those
    that cannot be used, which the run then leaves out, as bench.quality_run does."""
    skipped: dict[str, str] = {}
    for source in SOURCES:
        if source == "static" and not (plan.build_static or static_cached(model_dir)):
            skipped[source] = f"not cached in {model_dir} (a run without --quick distils it once, ~30 s)"
            continue
        mem = open_with(directory / f"load-{source}.db", model_dir, source)
        try:
            mem.parts.sources.embedder(choice_of(mem))
        except EmbeddingError as exc:
            skipped[source] = exc.message
            log(f"{source} unavailable: {exc.message}")
        finally:
            mem.close()
    return skipped


def config(path: Path, model_dir: Path, *, int8: bool = False) -> Config:
    """memroute's defaults (nothing from the caller's environment) plus the model cache dir."""
    env = {"MEMORY_STATIC_CACHE_DIR": str(model_dir)}
    if int8:
        env["MEMORY_VEC_QUANTIZATION"] = "int8"
    return Config.for_path(path, environ=env)


def open_with(path: Path, model_dir: Path, source: str | None, *, int8: bool = False) -> BenchMemory:
    mem = open_bench(path, config=config(path, model_dir, int8=int8), start_workers=False)
    if source is None:
        mem.update_settings(enabled=True, embedding_source="transformers", transformers_enabled=False)
    else:
        mem.update_settings(
            enabled=True, embedding_source=source, static_enabled=True, transformers_enabled=True
        )
    return mem


def choice_of(mem: BenchMemory) -> SourceChoice:
    return mem.source()


def copy_db(src: str | Path, dst: Path) -> None:
    """A consistent copy (the source's WAL checkpointed into it first)."""
    con = apsw.Connection(str(src))
    try:
        con.set_busy_timeout(10_000)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        con.close()
    remove_database(dst)
    shutil.copyfile(src, dst)


def distinct_queries(seed: int, count: int) -> list[str]:
    """`count` different questions (bench.corpus repeats some), so no query hits the cache."""
    out: dict[str, None] = {}
    round_ = 0
    while len(out) < count:
        out.update(dict.fromkeys(queries(seed + round_, count * 3)))
        round_ += 1
    return list(out)[:count]


def vec_bytes(breakdown: dict[str, int]) -> int:
    return sum(size for name, size in breakdown.items() if name.startswith("vec_memories"))


class ProjectedDocuments:
    """Stand-in for `EmbeddingSources.embed_documents`: the `base` source's vectors times a fixed
    random matrix, unit length, `dim` wide. Fast, and the neighbourhoods of the base survive."""

    def __init__(self, mem: BenchMemory, base: str, dim: int, seed: int) -> None:
        self._embed = mem.parts.sources.embed_documents  # the real method, bound
        self._base = hashing_choice() if base == "hashing" else static_choice(mem.config, "stand-in base")
        width = mem.parts.sources.embedder(self._base).dimensions or 0
        rng = np.random.default_rng(seed)
        self._matrix = rng.standard_normal((width, dim)).astype(np.float32)
        self.base = base

    def __call__(self, choice: SourceChoice, texts: Sequence[str]) -> np.ndarray:
        return l2_normalize(self._embed(self._base, texts) @ self._matrix)


class MemoDocuments:
    """`EmbeddingSources.embed_documents` remembering each text's vector in `memo`, so the float and
    the int8 copy of a database embed their texts once (small databases only: it holds them all)."""

    def __init__(self, mem: BenchMemory, memo: dict[str, np.ndarray]) -> None:
        self._embed = mem.parts.sources.embed_documents
        self._memo = memo
        self.reused = 0

    def __call__(self, choice: SourceChoice, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        self.reused += len(texts) - len(missing)
        if missing:
            self._memo.update(zip(missing, self._embed(choice, missing), strict=True))
        return np.stack([self._memo[t] for t in texts])


@dataclass(slots=True)
class VecDb:
    """A copy of a bench.dataset database with a vector per memory (described by a JSON file)."""

    path: str
    size: str
    source: str
    int8: bool
    proxy: str | None  # the base source of stand-in vectors, None for real ones
    model: str
    dims: int
    vectors: int
    fill_s: float
    bytes_total: int
    bytes_vec: int
    bytes_base: int
    owners: list[str] = field(default_factory=list)
    reused: int = 0  # vectors taken from the float copy instead of embedded again
    code: str = ""  # code_fingerprint() of the build

    @property
    def label(self) -> str:
        return self.source + ("-int8" if self.int8 else "")

    @property
    def bytes_per_vector(self) -> float:
        return self.bytes_vec / max(self.vectors, 1)


def fill(mem: BenchMemory, owners: Sequence[str], *, progress: str) -> int:
    """A vector for every memory, key by key, through memroute's own path (`embed_pending`:
    embed, quantise if int8, store under the source's signature). Returns the vectors stored."""
    choice = choice_of(mem)
    index, vectors = mem.parts.index, mem.parts.store.vectors
    index.sync(choice)
    stored = 0
    started = time.perf_counter()
    for i, owner in enumerate(owners, start=1):
        while vectors.pending(owner, 1):
            stored += index.embed_pending(choice, owner, FILL_BATCH).stored
        if len(owners) > 20 and i % (len(owners) // 10) == 0:
            log(
                f"  {progress}: {i:,}/{len(owners):,} keys, {stored:,} vectors, "
                f"{time.perf_counter() - started:.0f} s"
            )
    return stored


def vector_db(
    directory: Path,
    built: BuiltDb,
    size: str,
    source: str,
    *,
    int8: bool,
    model_dir: Path,
    proxy: str | None,
    seed: int,
    memo: dict[str, np.ndarray] | None = None,
) -> VecDb:
    """The `source` copy of `built` (reused when its JSON and its vectors match)."""
    name = f"sem-{built.total}-{built.keys}-{built.seed}-{source}" + (f"-via-{proxy}" if proxy else "")
    path = directory / (name + ("-int8" if int8 else "") + ".db")
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        info = VecDb(**json.loads(meta.read_text()))
        if still_valid(info, model_dir):
            log(f"reusing {path.name} ({info.vectors:,} vectors)")
            return info
        log(f"{path.name} was built by other memroute code (or lost vectors): rebuilding it")
    tmp = path.with_name(path.name + ".part")
    memo_docs: MemoDocuments | None = None
    copy_db(built.path, tmp)
    log(
        f"{path.name}: embedding {built.rows:,} memories"
        + (f" (stand-in vectors from {proxy})" if proxy else "")
    )
    mem = open_with(tmp, model_dir, source, int8=int8)
    try:
        if proxy is not None:
            mem.parts.sources.embed_documents = ProjectedDocuments(  # type: ignore[method-assign]
                mem, proxy, mem.parts.sources.embedder(choice_of(mem)).dimensions or 384, seed
            )
        elif memo is not None:
            memo_docs = MemoDocuments(mem, memo)
            mem.parts.sources.embed_documents = memo_docs  # type: ignore[method-assign]
        started = time.perf_counter()
        stored = fill(mem, built.owners, progress=path.name)
        fill_s = time.perf_counter() - started
        embedder = mem.parts.sources.embedder(choice_of(mem))
        model, dims = embedder.model, int(embedder.dimensions or 0)
        left = mem.parts.store.memories.count_needs_reindex()
        if left:
            raise RuntimeError(f"{left} memories left without a vector in {tmp}")
    finally:
        mem.close()
    sizes, breakdown = measure_size(tmp)
    for suffix in ("-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)
    tmp.rename(path)
    info = VecDb(
        str(path),
        size,
        source,
        int8,
        proxy,
        model,
        dims,
        stored,
        fill_s,
        sizes["total"],
        vec_bytes(breakdown),
        built.size["total"],
        list(built.owners),
        memo_docs.reused if memo_docs is not None else 0,
        code_fingerprint(),
    )
    meta.write_text(json.dumps(asdict(info)))
    log(f"{path.name}: {stored:,} vectors in {fill_s:.1f} s, {info.bytes_per_vector:,.0f} B/vector")
    return info


def code_fingerprint() -> str:
    """A hash of the memroute code that decides what a vector database holds (schema, vec0 layout,
    quantisation, embedders): a kept database built by other code is rebuilt."""
    root = Path(memroute.__file__).parent
    files = sorted(
        [
            root / "store" / "vectors.py",
            *(root / "store" / "migrations").glob("*.sql"),
            *(root / "vectors").glob("*.py"),
            *(root / "embeddings").glob("*.py"),
        ]
    )
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def still_valid(info: VecDb, model_dir: Path) -> bool:
    """Whether `info` was built by this code and opening it keeps its vectors."""
    if info.code != code_fingerprint():
        return False
    mem = open_with(Path(info.path), model_dir, info.source, int8=info.int8)
    try:
        mem.parts.index.sync(choice_of(mem))
        return (
            mem.parts.store.vectors.count() == info.vectors
            and not mem.parts.store.memories.count_needs_reindex()
        )
    finally:
        mem.close()


# -- timing --------------------------------------------------------------------------------------------


def timed(
    fn: Callable[[Any], object], items: Sequence[Any], *, before: Callable[[Any], object] | None = None
) -> list[int]:
    """Time `fn(item)` for each item; `before(item)` runs first, untimed."""
    gc.collect()
    clock = time.perf_counter_ns
    samples = []
    for item in items:
        if before is not None:
            before(item)
        start = clock()
        fn(item)
        samples.append(clock() - start)
    return samples


def blocks(items: Sequence[Any], rounds: int) -> list[Sequence[Any]]:
    per = -(-len(items) // max(rounds, 1))
    return [items[i : i + per] for i in range(0, len(items), per)]


def interleaved(
    cases: dict[str, tuple[Callable[[Sequence[Any]], list[int]], Sequence[Any]]], rounds: int, what: str
) -> dict[str, Latency]:
    """Each case runs its items in `rounds` blocks, the cases' order rotated every round, so drift of a
    shared VM hits every case alike. A case = (run a block → ns samples, its items)."""
    names = list(cases)
    samples: dict[str, list[int]] = {n: [] for n in names}
    split = {n: blocks(cases[n][1], rounds) for n in names}
    for r in range(max(len(b) for b in split.values())):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            if r < len(split[name]):
                samples[name] += cases[name][0](split[name][r])
        log(f"{what}: round {r + 1} done")
    return {n: Latency(s) for n, s in samples.items()}


# -- query embedding -----------------------------------------------------------------------------------


def bench_embedding(
    directory: Path,
    model_dir: Path,
    sources: Sequence[str],
    counts: dict[str, int],
    *,
    seed: int,
    rounds: int,
) -> dict[str, Any]:
    """Per source: model load time, cold query embedding, cache hit."""
    out: dict[str, Any] = {}
    mems: dict[str, BenchMemory] = {}
    try:
        for source in sources:
            mem = open_with(directory / f"embed-{source}.db", model_dir, source)
            mems[source] = mem
            choice = choice_of(mem)
            started = time.perf_counter()
            embedder = mem.parts.sources.embedder(choice)
            out[source] = {"load_s": time.perf_counter() - started, "model": embedder.model}
            out[source]["dims"] = embedder.dimensions
            log(f"query embedding: {source} loaded in {out[source]['load_s']:.2f} s ({embedder.model})")
        qs = distinct_queries(seed, max(counts[s] for s in sources) + 10)
        cases: dict[str, tuple[Callable[[Sequence[Any]], list[int]], Sequence[Any]]] = {}
        for source in sources:
            sources_ = mems[source].parts.sources
            choice = choice_of(mems[source])
            for q in qs[-10:]:  # warm-up: first calls of a fresh session are slower
                sources_.embed_query(choice, q)

            def cold(block: Sequence[str], s: Any = sources_, c: SourceChoice = choice) -> list[int]:
                return timed(lambda t: s.embed_query(c, t), block, before=lambda _: s.clear_cache())

            def hit(block: Sequence[str], s: Any = sources_, c: SourceChoice = choice) -> list[int]:
                for q in block:
                    s.embed_query(c, q)
                return timed(lambda q: s.embed_query(c, q), block)

            cases[f"{source}/cold"] = (cold, qs[: counts[source]])
            cases[f"{source}/hit"] = (hit, qs[: counts[source]])
        for name, lat in interleaved(cases, rounds, "query embedding").items():
            source, _, kind = name.partition("/")
            out[source][kind] = lat.to_dict()
    finally:
        for mem in mems.values():
            mem.close()
    return out


# -- retrieval -----------------------------------------------------------------------------------------


def flt_for(owner: str) -> MemoryFilter:
    now = datetime.now(UTC)
    return MemoryFilter(api_key_id=owner, now=to_iso(now), updated_since=days_ago(now, RETENTION_DAYS))


def bench_retrieval(
    dbs: Sequence[VecDb], model_dir: Path, *, seed: int, n_queries: int, warmup: int, rounds: int
) -> dict[str, Any]:
    """Every (database, case) pair, interleaved; then the hybrid breakdown per database."""
    owners = dbs[0].owners
    qs = distinct_queries(seed + 21, warmup + n_queries)
    rng = random.Random(seed + 22)
    work = [(rng.choice(owners), q) for q in qs]
    mems = {db.label: open_with(Path(db.path), model_dir, db.source, int8=db.int8) for db in dbs}
    results: dict[str, Any] = {}
    try:
        cases: dict[str, tuple[Callable[[Sequence[Any]], list[int]], Sequence[Any]]] = {}
        items: dict[str, list[int]] = {}
        for db in dbs:
            mem = mems[db.label]
            choice = choice_of(mem)
            sources = mem.parts.sources
            for q in qs[:warmup]:  # loads the model, warms the page cache
                mem.retrieve(rng.choice(owners), q, strategy="hybrid", max_tokens=2000, record_access=False)
            for (
                owner
            ) in owners:  # the in-memory copies of large keys, as the server's background thread builds
                mem.parts.index.key_cache.refresh(owner)
            mem.settle()  # ... and their in-process indexes (a big key's is built in the background)
            for strategy, cached in CASES:
                name = f"{db.label}/{strategy}" + (" cached" if cached else "")
                returned: list[int] = []
                items[name] = returned
                run = _retrieval_run(mem, strategy, cached, sources, choice, returned)
                cases[name] = (run, work[warmup:])
        for name, lat in interleaved(cases, rounds, f"retrieval {dbs[0].size}").items():
            results[name] = {**lat.to_dict(), "items": sum(items[name]) / max(len(items[name]), 1)}
        for db in dbs:
            results[f"{db.label}/breakdown"] = breakdown(mems[db.label], db, work[warmup:][:200])
    finally:
        for mem in mems.values():
            mem.close()
    return results


def index_search(mem: BenchMemory, choice: SourceChoice, query: str, flt: MemoryFilter) -> list[VectorHit]:
    """What retrieval's search step does with sqlite-vec: the query vector (cached after the first
    embedding), the key's catch-up (backfill check), then the index's KNN with its filter."""
    vector = mem.parts.sources.embed_query(choice, query)
    mem.parts.index.catch_up(choice, int(vector.shape[0]), flt.api_key_id)
    return mem.parts.index.search(vector, flt, CANDIDATES)


def _retrieval_run(
    mem: BenchMemory, strategy: str, cached: bool, sources: Any, choice: Any, returned: list[int]
) -> Callable[[Sequence[Any]], list[int]]:
    """Times `mem.retrieve` over a block of (owner, query), counting the items of each
    call in `returned`: with the block's query vectors embedded first (`cached`), or with
    the embedding cache cleared before every call."""

    def call(arg: tuple[str, str]) -> None:
        returned.append(
            len(mem.retrieve(arg[0], arg[1], strategy=strategy, max_tokens=2000, record_access=False))
        )

    def run_cached(block: Sequence[Any]) -> list[int]:
        for _, q in block:  # the whole block first: no ONNX run right before a timed call
            sources.embed_query(choice, q)
        return timed(call, block)

    def run_cold(block: Sequence[Any]) -> list[int]:
        return timed(call, block, before=lambda _: sources.clear_cache())

    return run_cached if cached else run_cold


def breakdown(mem: BenchMemory, db: VecDb, work: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Where a hybrid retrieve's time goes, p50 of each part on the same queries."""
    choice = choice_of(mem)
    sources = mem.parts.sources
    con = mem.parts.store.db.read()
    out: dict[str, Any] = {}
    log(f"breakdown {db.size} {db.label}")
    out["embed"] = Latency(
        timed(lambda a: sources.embed_query(choice, a[1]), work, before=lambda _: sources.clear_cache())
    ).p50
    for _, q in work:
        sources.embed_query(choice, q)  # cached from here on
    out["vector_tier"] = Latency(timed(lambda a: index_search(mem, choice, a[1], flt_for(a[0])), work)).p50
    out["fts"] = Latency(
        timed(lambda a: mem.parts.store.memories.keyword_search(flt_for(a[0]), a[1], limit=CANDIDATES), work)
    ).p50
    if not db.int8:
        blobs = [(o, np.asarray(sources.embed_query(choice, q), dtype=np.float32).tobytes()) for o, q in work]
        sql = (
            "SELECT rowid, distance FROM vec_memories WHERE embedding MATCH ? AND k = ?"
            " AND api_key_id = ? ORDER BY distance"
        )
        for k in (CANDIDATES, CANDIDATES * 4):

            def knn(a: tuple[str, bytes], k: int = k) -> object:
                return con.execute(sql, (a[1], k, a[0])).fetchall()

            out[f"knn_{k}"] = Latency(timed(knn, blobs)).p50
        short = 0
        for owner, blob in blobs:  # does the first round (k=100) leave fewer than 100 that pass the filter?
            near = [r[0] for r in con.execute(sql, (blob, CANDIDATES, owner))]
            where, params = filter_sql(flt_for(owner))
            marks = ",".join("?" * len(near))
            row = con.execute(
                f"SELECT COUNT(*) FROM memories WHERE rowid IN ({marks}) AND {where}", (*near, *params)
            ).fetchone()
            admitted = int(row[0]) if row else 0
            short += admitted < CANDIDATES and len(near) == CANDIDATES
        out["second_round_share"] = short / len(blobs)
    return out


# -- re-index, RSS -------------------------------------------------------------------------------------


def bench_reindex(
    directory: Path, model_dir: Path, sources: Sequence[str], counts: dict[str, int], *, seed: int
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for source in sources:
        built = build(directory, counts[source], 1, seed)
        path = directory / f"reindex-{source}.db"
        copy_db(built.path, path)
        mem = open_with(path, model_dir, source)
        try:
            choice = choice_of(mem)
            started = time.perf_counter()
            mem.parts.index.sync(choice)  # loads the model, creates the table
            load_s = time.perf_counter() - started
            log(f"re-index: {source}, {built.rows:,} memories")
            started = time.perf_counter()
            result = mem.reindex(force=True, wait=True)
            seconds = time.perf_counter() - started
        finally:
            mem.close()
        _, breakdown_ = measure_size(path)
        out[source] = {
            "processed": result.processed,
            "pending": result.pending,
            "errors": result.errors,
            "seconds": seconds,
            "per_s": result.processed / seconds if seconds else 0.0,
            "load_s": load_s,
            "bytes_vec": vec_bytes(breakdown_),
            "bytes_per_vector": vec_bytes(breakdown_) / max(result.processed, 1),
        }
        remove_database(path)
    return out


def bench_reindex_scale(directory: Path, built: BuiltDb, model_dir: Path) -> dict[str, Any]:
    """`reindex_batch` (what the worker and `mem.reindex` run) on a copy of `built` with static,
    timed when nothing is embedded yet and again with 90 % of the rows marked done."""
    path = directory / "reindex-scale.db"
    copy_db(built.path, path)
    out: dict[str, Any] = {"rows": built.rows, "keys": built.keys}
    mem = open_with(path, model_dir, "static")
    try:
        mem.parts.index.sync(choice_of(mem))
        vectors = mem.parts.store.vectors
        for point, done in (("start", 0), ("90% done", int(built.rows * 0.9))):
            if done:
                with mem.parts.store.db.write() as con:
                    con.execute("UPDATE memories SET needs_reindex = 0 WHERE rowid <= ?", (done,))
            log(f"re-index at {built.rows:,} memories, {point}: {SCALE_BATCHES} batches")
            pending = Latency(timed(lambda _: vectors.pending(None, 64), range(10)))
            started = time.perf_counter()
            stored = sum(mem.parts.reindexer.batch()[0] for _ in range(SCALE_BATCHES))
            seconds = time.perf_counter() - started
            out[point] = {"stored": stored, "per_s": stored / seconds, "pending_ms": pending.p50}
    finally:
        mem.close()
        remove_database(path)
    return out


RSS_CHILD = (
    r"""
import json, sys, time
args = json.loads(sys.argv[1])
"""
    + PROC_STATUS
    + r"""

from memroute import Memory
from memroute.clock import utc_now
from memroute.config import Config
from memroute.service.build import build

imported = status()
loaded, load_s = imported, 0.0
started = time.perf_counter()
parts = build(Config.for_path(args["db"], environ=args["env"]), utc_now)
mem = Memory(parts, start_workers=False)
source = args["source"]
if source is None:
    mem.update_settings(enabled=True, embedding_source="transformers", transformers_enabled=False)
else:
    mem.update_settings(enabled=True, embedding_source=source, static_enabled=True, transformers_enabled=True)
    choice = parts.semantic.source(mem.settings())
    loading = time.perf_counter()
    parts.sources.embedder(choice)
    load_s = time.perf_counter() - loading
    loaded = status()
    parts.sources.embed_documents(choice, args["queries"][:8])
    report = mem.reindex(force=True, wait=True)
    assert not report.pending, report
for q in args["queries"]:
    mem.retrieve(args["owner"], q, strategy="hybrid", max_tokens=2000, record_access=False)
done = status()
mem.close()
print(json.dumps({
    "imported": imported, "loaded": loaded, "load_s": load_s, "done": done,
    "seconds": time.perf_counter() - started,
}))
"""
)


def bench_rss(
    directory: Path,
    model_dir: Path,
    sources: Sequence[str | None],
    counts: dict[str, int],
    *,
    seed: int,
    n_queries: int,
) -> dict[str, Any]:
    """One fresh interpreter per source: only memroute imported, then the source loaded and used."""
    out: dict[str, Any] = {}
    qs = distinct_queries(seed + 31, n_queries)
    for source in sources:
        n = counts.get(source or "", 0) or max(counts.values())
        built = build(directory, n, 1, seed)
        path = directory / f"rss-{source or 'none'}.db"
        copy_db(built.path, path)
        args = {
            "db": str(path),
            "env": {"MEMORY_STATIC_CACHE_DIR": str(model_dir)},
            "source": source,
            "owner": built.owners[0],
            "queries": qs,
        }
        log(f"RSS: child process with {source or 'no source'}, {n:,} memories")
        done = subprocess.run(
            [sys.executable, "-c", RSS_CHILD, json.dumps(args)],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=Path(__file__).resolve().parent.parent,
        )
        remove_database(path)
        if done.returncode != 0:
            out[source or "none"] = {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
            continue
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        out[source or "none"] = {
            "memories": n,
            "imported_rss_mb": figures["imported"]["VmRSS"],
            "loaded_rss_mb": figures["loaded"]["VmRSS"],
            "load_s": figures["load_s"],
            "rss_mb": figures["done"]["VmRSS"],
            "hwm_mb": figures["done"]["VmHWM"],
            "seconds": figures["seconds"],
        }
    return out


def bench_quality(model_dir: Path, sources: Sequence[str]) -> dict[str, Any]:
    """bench.quality_run's modes on its paraphrase set; its databases read
    MEMORY_STATIC_CACHE_DIR from the environment."""
    with environ(MEMORY_STATIC_CACHE_DIR=str(model_dir)):
        return quality_run.run(list(sources), [PARAPHRASE])[PARAPHRASE]


# -- the run -------------------------------------------------------------------------------------------


def run(
    plan: Plan,
    *,
    seed: int,
    data_dir: Path | None,
    model_dir: Path | None = None,
) -> Report:
    model_dir = model_dir or default_model_dir(data_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    figures: dict[str, Any] = {"model_dir": str(model_dir), "sizes": {}}
    timings: dict[str, float] = {}

    def step(name: str) -> Iterator[None]:
        started = time.perf_counter()
        yield
        timings[name] = time.perf_counter() - started

    stepper = contextlib.contextmanager(step)
    with work_dir(data_dir) as directory, work_dir(None) as scratch:
        with stepper("loading the models"):
            skipped = figures["skipped"] = load_sources(scratch, model_dir, plan)
        usable = [s for s in SOURCES if s not in skipped]
        with stepper("query embedding"):
            figures["embed"] = bench_embedding(
                scratch, model_dir, usable, plan.embed_queries, seed=seed, rounds=plan.rounds
            )
        proxy_base = "static" if "static" in usable else "hashing"
        builds: dict[str, BuiltDb] = {}
        for size in plan.sizes:
            total, keys = parse_size(size.size)
            with stepper(f"build {size.size}"):
                built = builds[size.size] = build(directory, total, keys, seed)
            dbs = []
            memos: dict[str, dict[str, np.ndarray]] = {}
            with stepper(f"vectors {size.size}"):
                for source, int8 in [*((s, False) for s in size.sources), *((s, True) for s in size.int8)]:
                    if source not in usable:
                        continue
                    real = source != "transformers" or total <= plan.real_onnx_max
                    memo = memos.setdefault(source, {}) if real and total <= MEMO_MAX else None
                    dbs.append(
                        vector_db(
                            directory,
                            built,
                            size.size,
                            source,
                            int8=int8,
                            model_dir=model_dir,
                            proxy=None if real else proxy_base,
                            seed=seed,
                            memo=memo,
                        )
                    )
            memos.clear()
            with stepper(f"retrieval {size.size}"):
                results = bench_retrieval(
                    dbs, model_dir, seed=seed, n_queries=plan.queries, warmup=plan.warmup, rounds=plan.rounds
                )
            figures["sizes"][size.size] = {
                "rows": built.rows,
                "keys": built.keys,
                "per_key": built.per_key,
                "base_bytes": built.size["total"],
                "dbs": {
                    db.label: {
                        **{k: v for k, v in asdict(db).items() if k != "owners"},
                        "bytes_per_vector": db.bytes_per_vector,
                    }
                    for db in dbs
                },
                "results": results,
            }
        with stepper("re-index"):
            figures["reindex"] = bench_reindex(scratch, model_dir, usable, plan.reindex, seed=seed)
            if plan.reindex_scale in builds and "static" in usable:
                figures["reindex_scale"] = bench_reindex_scale(scratch, builds[plan.reindex_scale], model_dir)
        with stepper("RSS"):
            figures["rss"] = bench_rss(
                scratch, model_dir, [None, *usable], plan.rss_memories, seed=seed, n_queries=plan.rss_queries
            )
        with stepper("quality"):
            figures["quality"] = bench_quality(model_dir, [s for s in plan.quality if s in usable])
    figures["timings_s"] = timings
    return report(figures, plan)


# -- the report ----------------------------------------------------------------------------------------


def _source_of(label: str) -> str:
    return label.removesuffix("-int8")


def _vectors_note(db: dict[str, Any]) -> str:
    if db["proxy"]:
        return f"stand-in ({db['proxy']} → {db['dims']}-d)"
    return "real"


def report(figures: dict[str, Any], plan: Plan) -> Report:
    rep = Report("Semantic memory (embeddings and vectors)")
    data: dict[str, Any] = {"targets": {}}
    embed = figures["embed"]
    skipped = figures["skipped"]
    models = "; ".join(f"{LABELS[s]}: {e['model']}, {e['dims']}-d" for s, e in embed.items())
    rep.add(
        f"Embedding models loaded: {models}."
        + "".join(f" {LABELS[s]} skipped: {why}." for s, why in skipped.items())
    )

    _embedding_section(rep, data, embed)
    _retrieval_section(rep, data, figures, plan)
    _reindex_section(rep, data, figures)
    _rss_section(rep, data, figures, plan)
    _quality_section(rep, data, figures)
    steps = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in figures["timings_s"].items())
    rep.add(f"Run time per step: {steps}. Models cached in `{figures['model_dir']}`.")
    data["timings_s"] = figures["timings_s"]
    data["skipped"] = skipped
    rep.data = data
    return rep


def _embedding_section(rep: Report, data: dict[str, Any], embed: dict[str, Any]) -> None:
    """Query embedding: load time, cold and cached latency per source."""
    rows = []
    for source, e in embed.items():
        cold, hit = e["cold"], e["hit"]
        rows.append(
            [
                LABELS[source],
                f"{e['load_s'] * 1000:,.0f}",
                cold["n"],
                ms(cold["p50_ms"]),
                ms(cold["p99_ms"]),
                ms(hit["p50_ms"]),
                ms(hit["p99_ms"]),
            ]
        )
        data[f"embed/{source}"] = e
    rep.add(
        "**Query embedding** — `EmbeddingSources.embed_query` of distinct 5–15-word questions; cold = the "
        "query cache cleared before each call, cache hit = the same questions again. Load = the first "
        "`embedder()` call of a newly opened `Memory`, after a first load in this process (model files in "
        "the OS page cache; static: the unreachable Hub is remembered, so its probe is not in it). Times "
        "in ms."
    )
    rep.add(table(["source", "load", "n", "cold p50", "cold p99", "cache hit p50", "cache hit p99"], rows))


def _retrieval_section(rep: Report, data: dict[str, Any], figures: dict[str, Any], plan: Plan) -> None:
    """Retrieval latency per database and case, where a hybrid retrieve's time goes, and
    int8 against float."""
    rows, brows, irows = _retrieval_rows(data, figures)
    if rows:
        stand_ins = any(db["proxy"] for sz in figures["sizes"].values() for db in sz["dbs"].values())
        rep.add(
            "**Retrieval** — `mem.retrieve(key, q, strategy=s, max_tokens=2000, record_access=False)`, query "
            "embedding included: every question is distinct and the query cache is cleared before each "
            'timed call ("cached query": the vector was already cached, so the difference is the '
            f"embedding). {plan.queries} timed queries per row in {plan.rounds} interleaved rounds after "
            f"{plan.warmup} warm-up queries, each to a random key; times in ms. Keys of more than 1,024 "
            "vectors are searched in their in-memory copy (numpy), built before timing as the server's "
            "background thread builds it; smaller keys go to sqlite-vec."
            + (
                " **Stand-in vectors**: those ONNX document vectors are not MiniLM's but the named "
                "source's vectors through a fixed random projection to 384-d (unit length), stored by "
                "memroute's re-index path under the transformers signature (embedding that many texts "
                "with ONNX is out of reach here); sqlite-vec's KNN is brute force, so its time depends on "
                "count and width, not on the values — the query is always embedded by the real ONNX model."
                if stand_ins
                else ""
            )
        )
        rep.add(
            table(
                [
                    "memories",
                    "source",
                    "vectors",
                    "strategy",
                    "n",
                    "p50",
                    "p99",
                    "mean",
                    "max",
                    "items",
                    "target",
                ],
                rows,
            )
        )
        rep.add(
            "**Where a hybrid retrieve's time goes** (p50 of each part alone, ms, same queries): embedding "
            "the query (cold); the vector tier with the query cached (`SqliteVecIndex` catch-up and "
            "search: backfill "
            f"check, KNN with k={CANDIDATES} per key, filter, int8 re-scoring); a bare vec0 KNN at "
            f"k={CANDIDATES} and k={CANDIDATES * 4} (the tier asks for 4× more when fewer than {CANDIDATES} "
            "of the nearest pass the expiry/retention filter: share of queries that need it); FTS5 "
            "keyword search; then the whole hybrid retrieve with the query cached and cold."
        )
        rep.add(
            table(
                [
                    "memories",
                    "source",
                    "embed",
                    "vector tier",
                    f"vec0 k={CANDIDATES}",
                    f"vec0 k={CANDIDATES * 4}",
                    "2nd KNN round",
                    "FTS",
                    "hybrid cached",
                    "hybrid cold",
                ],
                brows,
            )
        )
    if irows:
        rep.add(
            "**int8 against float** (`MEMORY_VEC_QUANTIZATION=int8`, the 100 nearest re-scored in float): "
            "hybrid p50 / p99 in ms, bytes per vector in the vec0 tables (dbstat), whole database file."
        )
        rep.add(
            table(
                [
                    "memories",
                    "source",
                    "hybrid float",
                    "hybrid int8",
                    "B/vector float",
                    "B/vector int8",
                    "int8 / float",
                    "DB float",
                    "DB int8",
                ],
                irows,
            )
        )


def _retrieval_rows(
    data: dict[str, Any], figures: dict[str, Any]
) -> tuple[list[list[Any]], list[list[Any]], list[list[Any]]]:
    """The rows of the three retrieval tables (latency, breakdown, int8); fills `data`."""
    rows, brows, irows = [], [], []
    for size_label, sz in figures["sizes"].items():
        per_key = sz["per_key"]
        where = f"{sz['rows']:,} / {sz['keys']:,} key(s)"
        res = sz["results"]
        for label, db in sz["dbs"].items():
            source = _source_of(label)
            for strategy, cached in CASES:
                name = f"{label}/{strategy}" + (" cached" if cached else "")
                r = res[name]
                gated = (
                    per_key >= TARGET_PER_KEY
                    and strategy == "hybrid"
                    and not cached
                    and not db["int8"]
                    and source in TARGET_P99_MS
                )
                target = "—"
                if gated:
                    ok = r["p99_ms"] <= TARGET_P99_MS[source]
                    target = f"p99 ≤ {TARGET_P99_MS[source]:g} ms: {verdict(ok)}"
                    data["targets"][f"hybrid {source} p99 at {size_label}"] = {
                        "p99_ms": r["p99_ms"],
                        "p50_ms": r["p50_ms"],
                        "target_ms": TARGET_P99_MS[source],
                        "met": ok,
                    }
                rows.append(
                    [
                        where,
                        LABELS[source] + (" int8" if db["int8"] else ""),
                        _vectors_note(db),
                        strategy + (", cached query" if cached else ""),
                        r["n"],
                        ms(r["p50_ms"]),
                        ms(r["p99_ms"]),
                        ms(r["mean_ms"]),
                        ms(r["max_ms"]),
                        f"{r['items']:.0f}",
                        target,
                    ]
                )
                data[f"retrieve/{size_label}/{name}"] = r
            b = res[f"{label}/breakdown"]
            hybrid = res[f"{label}/hybrid"]["p50_ms"]
            cached_p50 = res[f"{label}/hybrid cached"]["p50_ms"]
            brows.append(
                [
                    where,
                    LABELS[source] + (" int8" if db["int8"] else ""),
                    ms(b["embed"]),
                    ms(b["vector_tier"]),
                    ms(b["knn_100"]) if "knn_100" in b else "—",
                    ms(b["knn_400"]) if "knn_400" in b else "—",
                    f"{b['second_round_share'] * 100:.0f} %" if "second_round_share" in b else "—",
                    ms(b["fts"]),
                    ms(cached_p50),
                    ms(hybrid),
                ]
            )
            data[f"breakdown/{size_label}/{label}"] = b
            data[f"db/{size_label}/{label}"] = db
        for label, db in sz["dbs"].items():
            if not db["int8"] or label.removesuffix("-int8") not in sz["dbs"]:
                continue
            flt = sz["dbs"][label.removesuffix("-int8")]
            f_h, q_h = res[f"{flt['source']}/hybrid"], res[f"{label}/hybrid"]
            irows.append(
                [
                    where,
                    LABELS[db["source"]],
                    f"{ms(f_h['p50_ms'])} / {ms(f_h['p99_ms'])}",
                    f"{ms(q_h['p50_ms'])} / {ms(q_h['p99_ms'])}",
                    f"{flt['bytes_per_vector']:,.0f}",
                    f"{db['bytes_per_vector']:,.0f}",
                    f"{db['bytes_vec'] / max(flt['bytes_vec'], 1):.2f}",
                    human_bytes(flt["bytes_total"]),
                    human_bytes(db["bytes_total"]),
                ]
            )
    return rows, brows, irows


def _reindex_section(rep: Report, data: dict[str, Any], figures: dict[str, Any]) -> None:
    """Re-index throughput per source, and at scale."""
    rows = []
    for source, r in figures["reindex"].items():
        rows.append(
            [
                LABELS[source],
                f"{r['processed']:,}",
                f"{r['seconds']:.2f}",
                f"{r['per_s']:,.0f}",
                f"{r['load_s']:.2f}",
                f"{r['bytes_per_vector']:,.0f}",
            ]
        )
        data[f"reindex/{source}"] = r
    fill_rows = []
    for sz in figures["sizes"].values():
        for db in sz["dbs"].values():
            copied = db["reused"] >= db["vectors"] / 2  # (a database repeats a few texts itself)
            how = " (stand-ins)" if db["proxy"] else " (embedded for the float copy)" if copied else ""
            fill_rows.append(
                f"{db['vectors']:,} {LABELS[db['source']]}{' int8' if db['int8'] else ''} vectors{how} "
                f"in {db['fill_s']:.1f} s ({db['vectors'] / max(db['fill_s'], 1e-9):,.0f}/s)"
            )
    rep.add(
        "**Re-index** — `mem.reindex(force=True, wait=True)` on a database of that many memories in one key, "
        "the model loaded first (load column, s); batches of 64 as the background worker does. B/vector: "
        "the vec0 tables' bytes over the vectors."
        + (
            " The retrieval databases were filled key by key (`embed_pending`, 2,000 per call): "
            + "; ".join(fill_rows)
            + "."
            if fill_rows
            else ""
        )
    )
    rep.add(table(["source", "memories", "seconds", "memories/s", "load s", "B/vector"], rows))
    scale = figures.get("reindex_scale")
    if scale:
        start, late = scale["start"], scale["90% done"]
        rep.add(
            f"Re-index at {scale['rows']:,} memories in {scale['keys']:,} key(s), static, "
            f"{SCALE_BATCHES} `reindex_batch()` calls (64 memories each, as the worker and `mem.reindex` "
            f"run them): {start['per_s']:,.0f} memories/s at the start, {late['per_s']:,.0f} memories/s "
            f"with 90 % of the rows already done; finding the next batch (`VectorRepository.pending(None, "
            f"64)`) takes {ms(start['pending_ms'])} → {ms(late['pending_ms'])} ms."
        )
        data["reindex_scale"] = scale


def _rss_section(rep: Report, data: dict[str, Any], figures: dict[str, Any], plan: Plan) -> None:
    """Resident memory per source."""
    rows = []
    for source, r in figures["rss"].items():
        label = "none (FTS5 only)" if source == "none" else LABELS[source]
        if "error" in r:
            rows.append([label, "", "", "", "", "", "", f"failed: {r['error']}"])
            continue
        target = "—"
        if source == "static":
            ok = r["hwm_mb"] <= TARGET_RSS_MB
            target = f"VmHWM ≤ {TARGET_RSS_MB:g} MB: {verdict(ok)}"
            data["targets"]["rss static"] = {"hwm_mb": r["hwm_mb"], "target_mb": TARGET_RSS_MB, "met": ok}
        rows.append(
            [
                label,
                f"{r['memories']:,}",
                f"{r['imported_rss_mb']:.0f}",
                f"{r['load_s']:.2f}",
                f"{r['loaded_rss_mb']:.0f}",
                f"{r['rss_mb']:.0f}",
                f"{r['hwm_mb']:.0f}",
                target,
            ]
        )
        data[f"rss/{source}"] = r
    rep.add(
        "**Memory (RSS)** — a fresh `python -c` per source: `import memroute` (imported), then open a "
        "database, load the source (timed: a process's first load, the model files in the OS page "
        f"cache), embed a few texts, re-index that many memories and run {plan.rss_queries} hybrid "
        "retrieves; VmRSS and VmHWM (peak) from /proc/self/status, MB. A server adds its web stack "
        "(FastAPI, uvicorn) on top."
    )
    headers = ["source", "memories", "after import", "load s", "loaded", "VmRSS", "VmHWM", "target"]
    rep.add(table(headers, rows))


def _quality_section(rep: Report, data: dict[str, Any], figures: dict[str, Any]) -> None:
    """Retrieval quality, as bench.quality_run reports it."""
    quality = figures["quality"]
    data["quality"] = {
        mode: {k: r.get(k) for k in ("status", "recall_at_5", "recall_at_10", "mrr_at_10", "ms_per_query")}
        for mode, r in quality["modes"].items()
    }
    rep.add(
        quality_run.markdown(PARAPHRASE, quality).replace(
            f"## Retrieval quality: {PARAPHRASE}",
            f"**Retrieval quality** (bench.quality_run, set `{PARAPHRASE}`)",
        )
    )


def summary_rows(rep: Report) -> list[list[str]]:
    """Rows for run_all's summary table."""
    d = rep.data
    rows = []
    for name, r in d.items():
        size, _, case = name.removeprefix("retrieve/").partition("/")
        if not name.startswith("retrieve/") or case not in ("static/hybrid", "transformers/hybrid"):
            continue
        source = case.partition("/")[0]
        total, keys = parse_size(size)
        gated = total // keys >= TARGET_PER_KEY
        ok = r["p99_ms"] <= TARGET_P99_MS[source]
        rows.append(
            [
                f"semantic: hybrid retrieve p50 / p99, {LABELS[source]} query embedding, "
                f"{total:,} memories in {keys:,} key(s)",
                f"p99 ≤ {TARGET_P99_MS[source]:g} ms" if gated else "— (target is for 10k/key)",
                f"{ms(r['p50_ms'])} / {ms(r['p99_ms'])} ms",
                verdict(ok) if gated else "—",
            ]
        )
    for source in SOURCES:
        e = d.get(f"embed/{source}")
        if e:
            rows.append(
                [
                    f"semantic: query embedding p50 / p99, {LABELS[source]}",
                    "—",
                    f"{ms(e['cold']['p50_ms'])} / {ms(e['cold']['p99_ms'])} ms",
                    "—",
                ]
            )
    for source in SOURCES:
        r = d.get(f"reindex/{source}")
        if r:
            rows.append([f"semantic: re-index, {LABELS[source]}", "—", f"{r['per_s']:,.0f} memories/s", "—"])
    t = d["targets"].get("rss static")
    if t:
        rows.append(
            [
                "semantic: peak RSS with static",
                f"≤ {TARGET_RSS_MB:g} MB",
                f"{t['hwm_mb']:.0f} MB",
                verdict(t["met"]),
            ]
        )
    quality = d["quality"]
    for source in SOURCES:
        modes = [(m, quality.get(f"{m}:{source}")) for m in ("vector", "hybrid")]
        shown = [
            f"{m} {q['recall_at_10']:.3f} / {q['mrr_at_10']:.3f}"
            for m, q in modes
            if q and q["status"] == "ok"
        ]
        if shown:
            rows.append(
                [f"semantic: quality recall@10 / MRR@10, {LABELS[source]}", "—", ", ".join(shown), "—"]
            )
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="also 1M memories over 1,000 keys (~10–15 min)")
    ap.add_argument("--queries", type=int, default=None, help="timed retrieves per case (plan default)")
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else FULL if args.full else MODERATE
    if args.queries:
        plan = replace(plan, queries=args.queries)
    started = time.perf_counter()
    rep = run(plan, seed=args.seed, data_dir=args.data_dir)
    log(f"semantic benchmark done in {time.perf_counter() - started:.0f} s")
    emit(rep, args.json)


if __name__ == "__main__":
    main()
