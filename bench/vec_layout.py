"""sqlite-vec layout for per-key vectors: partition key (by chunk_size) against a metadata column, then int8.

Three questions, one function each:

1. `measure_layout` over the grid: layout (partition key with chunk_size 8…256, some also with an index
   on the `_chunks` shadow table, or a metadata column) × shape (A = 1,000 keys × 100, B = 10 keys × 10,000,
   C = 10,000 keys × 2). DB size, bulk insert rate, single-row autocommit insert, per-key KNN latency.
2. `measure_int8`: partition layouts (chunk 8/16/32/64 + index) with an `int8[384]` column (scale fitted
   in numpy, bound with `vec_int8`, L2), recall@20 alone and with `k=100` rescored in float against the
   dequantised vectors read back from vec0, and the float/int8 size ratio of the vectors alone.
3. `measure_scale`: 1,000 vectors per key over 1,000 keys (1M vectors) with the chosen layout
   (partition key, chunk 32, `_chunks` index; int8 and float).

Plus `quirks`: sqlite-vec behaviours that matter to memroute, checked on a tiny table.

Vectors are clustered unit vectors (200 topics sharing a common direction, each key writing about a few of
them, gaussian noise), keys are UUID strings written interleaved in random order, one transaction per 1,000
rows, WAL with synchronous=normal; sizes are file + WAL after `PRAGMA wal_checkpoint(TRUNCATE)`.

    python -m bench.vec_layout                   # everything (~15-20 min on 2 cores, <6 GB under /tmp)
    python -m bench.vec_layout --quick           # small sizes, seconds
    python -m bench.vec_layout --parts 2 --int8-chunks 32          # one part, one layout
    python -m bench.vec_layout --parts 3 --scale-sizes 300000 --scale-dtypes int8 --no-chosen-index
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import sqlite_vec

from bench.common import Latency, Report, cpu_reference, log, ms, remove_database, table, time_calls, work_dir

DIM = 384
N_TOPICS = 200
TOPICS_PER_KEY = 8
BATCH = 1_000
QUERIES = 200
WARMUP = 20
SINGLE_INSERTS = 200
RESCORE_K = 100
INT8_QUANTILE = 0.999
CHUNK_SIZES = (8, 16, 32, 64, 128, 256)
INDEX_CHUNK_SIZES = (16, 32, 64)
INT8_CHUNK_SIZES = (8, 16, 32, 64)
DEFAULT_CHUNK = 32  # the layout part 3 uses unless --chunk says otherwise


def cpu_reference_ms() -> float:
    return cpu_reference()["median_ms"]


# -- data ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shape:
    name: str
    keys: int
    per_key: int
    ks: tuple[int, ...] = (20,)

    @property
    def total(self) -> int:
        return self.keys * self.per_key

    def label(self) -> str:
        return f"{self.name}: {self.keys:,} keys × {self.per_key:,}"


FULL_SHAPES = (
    Shape("A", 1_000, 100),
    Shape("B", 10, 10_000, (20, 100)),
    Shape("C", 10_000, 2),
)
QUICK_SHAPES = (
    Shape("A", 50, 40),
    Shape("B", 3, 1_000, (20, 100)),
    Shape("C", 500, 2),
)


@dataclass(slots=True)
class Corpus:
    """Unit vectors in insertion order, the key of each, and how to draw queries like them."""

    vecs: np.ndarray  # (n, DIM) float32, unit rows; row i has rowid i + 1
    owner: np.ndarray  # (n,) key index of each row
    keys: list[str]  # key index -> UUID string
    key_topics: np.ndarray  # (n_keys, TOPICS_PER_KEY) topic ids
    centroids: np.ndarray
    sigmas: np.ndarray
    rows_of_key: list[np.ndarray] = field(default_factory=list)

    def __post_init__(self) -> None:
        order = np.argsort(self.owner, kind="stable")
        bounds = np.searchsorted(self.owner[order], np.arange(len(self.keys) + 1))
        self.rows_of_key = [order[bounds[i] : bounds[i + 1]] for i in range(len(self.keys))]


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def _points(
    rng: np.random.Generator, centroids: np.ndarray, sigmas: np.ndarray, topics: np.ndarray
) -> np.ndarray:
    noise = rng.standard_normal((len(topics), DIM), dtype=np.float32)
    return _unit(centroids[topics] + noise * sigmas[topics, None])


def make_corpus(shape: Shape, seed: int) -> Corpus:
    """`shape.per_key` vectors for each of `shape.keys` keys, rows in a random (interleaved) key order.

    Topics: 200 random directions plus a shared one (real sentence embeddings all lean one way), so two
    topic centres have cos ~0.1; noise σ 0.045-0.075 per dimension gives cos 0.56-0.75 to the topic centre
    and 0.31-0.56 between two vectors of one topic. Each key writes about 8 topics."""
    rng = np.random.default_rng(seed)
    common = _unit(rng.standard_normal(DIM))
    centroids = _unit(_unit(rng.standard_normal((N_TOPICS, DIM))) + 0.35 * common)
    sigmas = rng.uniform(0.045, 0.075, N_TOPICS).astype(np.float32)
    key_topics = np.stack([rng.choice(N_TOPICS, TOPICS_PER_KEY, replace=False) for _ in range(shape.keys)])
    owner = np.repeat(np.arange(shape.keys, dtype=np.int64), shape.per_key)
    rng.shuffle(owner)
    topics = key_topics[owner, rng.integers(0, TOPICS_PER_KEY, len(owner))]
    vecs = np.empty((len(owner), DIM), dtype=np.float32)
    for start in range(0, len(owner), 100_000):
        vecs[start : start + 100_000] = _points(rng, centroids, sigmas, topics[start : start + 100_000])
    keys = [str(uuid.UUID(bytes=rng.bytes(16), version=4)) for _ in range(shape.keys)]
    return Corpus(vecs, owner, keys, key_topics, centroids, sigmas)


@dataclass(frozen=True, slots=True)
class Queries:
    vecs: np.ndarray  # (n, DIM) float32 unit
    key: np.ndarray  # (n,) key index


def make_queries(corpus: Corpus, n: int, seed: int) -> Queries:
    """Fresh points (not stored vectors) from the topics of a random key, one per query."""
    rng = np.random.default_rng(seed + 1)
    key = rng.integers(0, len(corpus.keys), n)
    topics = corpus.key_topics[key, rng.integers(0, TOPICS_PER_KEY, n)]
    return Queries(_points(rng, corpus.centroids, corpus.sigmas, topics), key)


def exact_topk(corpus: Corpus, queries: Queries, k: int) -> list[np.ndarray]:
    """Exact cosine top-k rowids inside each query's key (numpy, float32)."""
    out = []
    for q, key in zip(queries.vecs, queries.key, strict=True):
        rows = corpus.rows_of_key[key]
        sims = corpus.vecs[rows] @ q
        top = np.argsort(-sims, kind="stable")[:k]
        out.append(rows[top] + 1)
    return out


def dequantised_topk(corpus: Corpus, queries: Queries, scale: float, k: int) -> list[np.ndarray]:
    """Exact cosine top-k of the float query against the key's dequantised int8 vectors: the best any
    rescore of int8 candidates can do (rounding of the stored vectors stays)."""
    out = []
    for q, key in zip(queries.vecs, queries.key, strict=True):
        rows = corpus.rows_of_key[key]
        deq = quantize(corpus.vecs[rows], scale).astype(np.float32) / scale
        sims = (deq @ q) / np.maximum(np.linalg.norm(deq, axis=1), 1e-12)
        out.append(rows[np.argsort(-sims, kind="stable")[:k]] + 1)
    return out


def recall(found: Sequence[Sequence[int]], truth: Sequence[np.ndarray], k: int) -> float:
    hits = sum(len(set(map(int, f[:k])) & set(map(int, t[:k]))) for f, t in zip(found, truth, strict=True))
    return hits / sum(min(k, len(t)) for t in truth)


# -- int8 ------------------------------------------------------------------------------------------------


def fit_int8_scale(vecs: np.ndarray, seed: int, sample: int = 20_000) -> float:
    """127 / the 0.999-quantile of |x| over a sample of the stored vectors."""
    rng = np.random.default_rng(seed + 2)
    rows = vecs if len(vecs) <= sample else vecs[rng.choice(len(vecs), sample, replace=False)]
    return float(127.0 / np.quantile(np.abs(rows), INT8_QUANTILE))


def quantize(x: np.ndarray, scale: float) -> np.ndarray:
    return np.clip(np.rint(x * scale), -127, 127).astype(np.int8)


def rescore(rows: Sequence[tuple[int, float, bytes]], q: np.ndarray, scale: float, k: int) -> list[int]:
    """Re-rank int8 candidates (rowid, distance, int8 blob) by cosine of the float query against the
    dequantised vectors; returns the best k rowids."""
    if not rows:
        return []
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    mat = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.int8).reshape(len(rows), DIM)
    deq = mat.astype(np.float32) / scale
    sims = (deq @ q) / np.maximum(np.linalg.norm(deq, axis=1), 1e-12)
    top = np.argsort(-sims, kind="stable")[:k]
    return ids[top].tolist()


# -- layouts and the database ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Layout:
    owner: str  # "partition" or "metadata"
    chunk: int | None = None  # None = sqlite-vec's default (1,024)
    dtype: str = "float"  # "float" or "int8"
    index: bool = False  # partition only: CREATE INDEX on the _chunks shadow table's partition column

    def label(self) -> str:
        parts = ["partition key" if self.owner == "partition" else "metadata `owner TEXT`"]
        parts.append(f"chunk {self.chunk}" if self.chunk else "default chunk")
        if self.index:
            parts.append("+ `_chunks` index")
        if self.dtype == "int8":
            parts.append("int8")
        return ", ".join(parts)

    def ddl(self) -> list[str]:
        owner = "owner TEXT partition key" if self.owner == "partition" else "owner TEXT"
        column = (
            f"embedding int8[{DIM}] distance_metric=l2"
            if self.dtype == "int8"
            else f"embedding float[{DIM}] distance_metric=cosine"
        )
        chunk = f", chunk_size={self.chunk}" if self.chunk else ""
        sql = [f"CREATE VIRTUAL TABLE v USING vec0({owner}, {column}{chunk})"]
        if self.index:
            sql.append("CREATE INDEX v_chunks_partition ON v_chunks(partition00, chunk_id)")
        return sql

    @property
    def bind(self) -> str:
        return "vec_int8(?)" if self.dtype == "int8" else "?"

    def blob(self, x: np.ndarray, scale: float | None) -> bytes:
        if self.dtype == "int8":
            assert scale is not None
            return quantize(x, scale).tobytes()
        return np.ascontiguousarray(x, dtype=np.float32).tobytes()


def connect(path: Path) -> apsw.Connection:
    con = apsw.Connection(str(path))
    con.enable_load_extension(True)
    con.load_extension(sqlite_vec.loadable_path())
    con.enable_load_extension(False)
    con.pragma("journal_mode", "wal")
    con.pragma("synchronous", "normal")
    return con


def remove_db(path: Path) -> None:
    remove_database(path)


def db_bytes(con: apsw.Connection, path: Path) -> int:
    """File + WAL after a truncating checkpoint."""
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    wal = Path(f"{path}-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def create(path: Path, layout: Layout) -> apsw.Connection:
    remove_db(path)
    con = connect(path)
    for sql in layout.ddl():
        con.execute(sql)
    return con


def empty_bytes(directory: Path, layout: Layout) -> int:
    path = directory / "empty.db"
    con = create(path, layout)
    size = db_bytes(con, path)
    con.close()
    remove_db(path)
    return size


def bulk_insert(
    con: apsw.Connection, layout: Layout, corpus: Corpus, scale: float | None, *, progress: str = ""
) -> float:
    """Every row in corpus order, one transaction per BATCH rows. Returns seconds."""
    sql = f"INSERT INTO v(rowid, owner, embedding) VALUES (?, ?, {layout.bind})"
    keys, owner, n = corpus.keys, corpus.owner, len(corpus.owner)
    elapsed = 0.0
    next_log = time.monotonic() + 30
    for start in range(0, n, BATCH):
        stop = min(n, start + BATCH)
        chunk = corpus.vecs[start:stop]
        if layout.dtype == "int8":
            assert scale is not None
            chunk = quantize(chunk, scale)
        rows = [(start + i + 1, keys[owner[start + i]], chunk[i].tobytes()) for i in range(stop - start)]
        t0 = time.perf_counter()
        with con:
            con.executemany(sql, rows)
        elapsed += time.perf_counter() - t0
        if progress and time.monotonic() > next_log:
            log(f"  {progress}: {stop:,}/{n:,} rows, {stop / elapsed:,.0f} rows/s")
            next_log = time.monotonic() + 30
    return elapsed


def single_inserts(
    con: apsw.Connection, layout: Layout, corpus: Corpus, scale: float | None, seed: int
) -> Latency:
    """SINGLE_INSERTS autocommit inserts of new rows into random existing keys (a service adding a memory)."""
    rng = np.random.default_rng(seed + 3)
    first = len(corpus.owner) + 1
    key = rng.integers(0, len(corpus.keys), SINGLE_INSERTS)
    topics = corpus.key_topics[key, rng.integers(0, TOPICS_PER_KEY, SINGLE_INSERTS)]
    vecs = _points(rng, corpus.centroids, corpus.sigmas, topics)
    sql = f"INSERT INTO v(rowid, owner, embedding) VALUES (?, ?, {layout.bind})"
    args = [(first + i, corpus.keys[key[i]], layout.blob(vecs[i], scale)) for i in range(SINGLE_INSERTS)]
    return time_calls(lambda a: con.execute(sql, a), args)


def knn_sql(layout: Layout, *, with_vector: bool = False) -> str:
    cols = "rowid, distance, embedding" if with_vector else "rowid, distance"
    return f"SELECT {cols} FROM v WHERE embedding MATCH {layout.bind} AND k = ? AND owner = ?"


def knn(
    con: apsw.Connection, layout: Layout, corpus: Corpus, queries: Queries, k: int, scale: float | None
) -> tuple[Latency, list[list[int]]]:
    """Per-key KNN for every query (WARMUP extra untimed ones first). Returns latency and rowids."""
    sql = knn_sql(layout)
    args = [
        (layout.blob(q, scale), k, corpus.keys[key]) for q, key in zip(queries.vecs, queries.key, strict=True)
    ]
    found: list[list[int]] = []

    def one(a: tuple[bytes, int, str]) -> None:
        found.append([r[0] for r in con.execute(sql, a)])

    warm = args[:WARMUP]
    lat = time_calls(one, warm + args, warmup=len(warm))
    return lat, found[len(warm) :]


def knn_rescored(
    con: apsw.Connection, layout: Layout, corpus: Corpus, queries: Queries, k: int, scale: float
) -> tuple[Latency, list[list[int]]]:
    """int8 KNN for RESCORE_K candidates returning their int8 vectors, then a float rescore to k in numpy.
    Timed end to end (quantise the query, query, dequantise, rescore)."""
    sql = knn_sql(layout, with_vector=True)
    found: list[list[int]] = []
    pairs = list(zip(queries.vecs, queries.key, strict=True))

    def one(pair: tuple[np.ndarray, int]) -> None:
        q, key = pair
        rows = con.execute(sql, (quantize(q, scale).tobytes(), RESCORE_K, corpus.keys[key])).fetchall()
        found.append(rescore(rows, q, scale, k))

    warm = pairs[:WARMUP]
    lat = time_calls(one, warm + pairs, warmup=len(warm))
    return lat, found[len(warm) :]


# -- 1. the layout grid ----------------------------------------------------------------------------------


def grid_layouts(chunks: Sequence[int], index_chunks: Sequence[int]) -> list[Layout]:
    out = [Layout("partition", c) for c in chunks]
    out += [Layout("partition", c, index=True) for c in index_chunks]
    out.append(Layout("metadata"))
    return out


def measure_layout(
    directory: Path,
    shape: Shape,
    layout: Layout,
    corpus: Corpus,
    queries: Queries,
    seed: int,
    scale: float | None = None,
) -> dict[str, Any]:
    """Build one database and measure it; the file is removed afterwards."""
    path = directory / "grid.db"
    baseline = empty_bytes(directory, layout)
    con = create(path, layout)
    secs = bulk_insert(con, layout, corpus, scale, progress=f"{shape.name} {layout.label()}")
    size = db_bytes(con, path)
    res: dict[str, Any] = {
        "shape": shape.name,
        "layout": layout.label(),
        "rows": shape.total,
        "db_bytes": size,
        "vector_bytes": size - baseline,
        "insert_rows_s": shape.total / secs,
        "knn": {},
    }
    for k in shape.ks:
        lat, found = knn(con, layout, corpus, queries, k, scale)
        res["knn"][k] = {**lat.to_dict(), "recall": recall(found, exact_topk(corpus, queries, k), k)}
    res["single_insert"] = single_inserts(con, layout, corpus, scale, seed).to_dict()
    con.close()
    remove_db(path)
    return res


def grid_report(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        k20 = r["knn"][20]
        k100 = r["knn"].get(100)
        rows.append(
            [
                r["shape"],
                r["layout"],
                f"{r['db_bytes'] / 1e6:,.1f}",
                f"{r['insert_rows_s']:,.0f}",
                f"{ms(r['single_insert']['p50_ms'])} / {ms(r['single_insert']['p99_ms'])}",
                f"{ms(k20['p50_ms'])} / {ms(k20['p99_ms'])}",
                f"{ms(k100['p50_ms'])} / {ms(k100['p99_ms'])}" if k100 else "",
                f"{k20['recall']:.3f}",
            ]
        )
    return table(
        [
            "shape",
            "layout",
            "DB MB",
            "insert rows/s",
            "1-row insert p50 / p99 ms",
            "KNN k=20 p50 / p99 ms",
            "KNN k=100 p50 / p99 ms",
            "recall@20",
        ],
        rows,
    )


def part_grid(
    directory: Path, shapes: Sequence[Shape], layouts: Sequence[Layout], seed: int
) -> list[dict[str, Any]]:
    results = []
    for shape in shapes:
        corpus = make_corpus(shape, seed)
        queries = make_queries(corpus, QUERIES + WARMUP, seed)
        for layout in layouts:
            log(f"grid {shape.label()} / {layout.label()}")
            results.append(measure_layout(directory, shape, layout, corpus, queries, seed))
    return results


# -- 2. int8 ---------------------------------------------------------------------------------------------


def measure_int8(
    directory: Path,
    shape: Shape,
    layout: Layout,
    corpus: Corpus,
    queries: Queries,
    seed: int,
    float_vector_bytes: int | None,
) -> dict[str, Any]:
    """The int8 twin of `layout`: size, insert, KNN, recall@20 alone and with rescoring."""
    int8 = Layout(layout.owner, layout.chunk, "int8", layout.index)
    scale = fit_int8_scale(corpus.vecs, seed)
    path = directory / "int8.db"
    baseline = empty_bytes(directory, int8)
    con = create(path, int8)
    secs = bulk_insert(con, int8, corpus, scale, progress=f"{shape.name} {int8.label()}")
    size = db_bytes(con, path)
    truth = exact_topk(corpus, queries, 20)
    lat, found = knn(con, int8, corpus, queries, 20, scale)
    lat_r, found_r = knn_rescored(con, int8, corpus, queries, 20, scale)
    single = single_inserts(con, int8, corpus, scale, seed)
    con.close()
    remove_db(path)
    clipped = float(np.mean(np.abs(corpus.vecs[: min(len(corpus.vecs), 100_000)] * scale) > 127))
    return {
        "shape": shape.name,
        "layout": int8.label(),
        "scale": scale,
        "clipped_fraction": clipped,
        "db_bytes": size,
        "vector_bytes": size - baseline,
        "float_vector_bytes": float_vector_bytes,
        "insert_rows_s": shape.total / secs,
        "single_insert": single.to_dict(),
        "knn20": {**lat.to_dict(), "recall": recall(found, truth, 20)},
        "rescored": {**lat_r.to_dict(), "recall": recall(found_r, truth, 20)},
        "ceiling_recall": recall(dequantised_topk(corpus, queries, scale, 20), truth, 20),
    }


def int8_report(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        ratio = r["float_vector_bytes"] / r["vector_bytes"] if r["float_vector_bytes"] else float("nan")
        rows.append(
            [
                r["shape"],
                r["layout"],
                f"{r['scale']:.0f} ({r['clipped_fraction'] * 100:.2f} % clipped)",
                f"{r['db_bytes'] / 1e6:,.1f}",
                f"{ratio:.2f}×",
                f"{r['insert_rows_s']:,.0f}",
                f"{ms(r['knn20']['p50_ms'])} / {ms(r['knn20']['p99_ms'])}",
                f"{r['knn20']['recall']:.3f}",
                f"{ms(r['rescored']['p50_ms'])} / {ms(r['rescored']['p99_ms'])}",
                f"{r['rescored']['recall']:.3f}",
                f"{r['ceiling_recall']:.3f}",
            ]
        )
    return table(
        [
            "shape",
            "layout",
            "scale",
            "DB MB",
            "float/int8 (vectors)",
            "insert rows/s",
            "int8 k=20 p50 / p99 ms",
            "recall@20",
            f"int8 k={RESCORE_K} + rescore p50 / p99 ms",
            "recall@20",
            "ceiling",
        ],
        rows,
    )


def part_int8(
    directory: Path,
    shapes: Sequence[Shape],
    layouts: Sequence[Layout],
    seed: int,
    float_sizes: dict[tuple[str, str], int],
) -> list[dict[str, Any]]:
    """int8 twins of `layouts` (float layouts) on every shape; a float twin is built for the size ratio
    when part 1 did not measure that (shape, layout)."""
    out = []
    for shape in shapes:
        corpus = make_corpus(shape, seed)
        queries = make_queries(corpus, QUERIES + WARMUP, seed)
        for layout in layouts:
            key = (shape.name, layout.label())
            if key not in float_sizes:
                log(f"int8: float twin of {shape.label()} / {layout.label()} (for the size ratio)")
                res = measure_layout(directory, shape, layout, corpus, queries, seed)
                float_sizes[key] = res["vector_bytes"]
            log(f"int8 {shape.label()} / {layout.label()}")
            out.append(measure_int8(directory, shape, layout, corpus, queries, seed, float_sizes[key]))
    return out


def chunk_bytes(chunks: Sequence[int], keys: int = 200) -> list[dict[str, Any]]:
    """Bytes one chunk takes in the file (dbstat on `v_vector_chunks00`, one chunk per key, 4 KiB pages):
    a chunk blob is one row, and SQLite rounds a row to its leaf slot plus whole overflow pages."""
    out = []
    for dtype in ("float", "int8"):
        for chunk in chunks:
            layout = Layout("partition", chunk, dtype)
            con = apsw.Connection(":memory:")
            con.enable_load_extension(True)
            con.load_extension(sqlite_vec.loadable_path())
            for sql in layout.ddl():
                con.execute(sql)
            blob = layout.blob(np.zeros(DIM, dtype=np.float32), 1.0)
            sql = f"INSERT INTO v(rowid, owner, embedding) VALUES (?, ?, {layout.bind})"
            con.executemany(sql, [(i + 1, f"k{i}", blob) for i in range(keys)])
            used = con.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'v_vector_chunks00'").fetchone()[
                0
            ]
            payload = chunk * DIM * (1 if dtype == "int8" else 4)
            out.append({"dtype": dtype, "chunk": chunk, "payload": payload, "bytes": used / keys})
            con.close()
    return out


def chunk_bytes_report(rows: list[dict[str, Any]]) -> str:
    return table(
        ["column", "chunk_size", "vector bytes per chunk", "file bytes per chunk", "overhead"],
        [
            [
                r["dtype"],
                r["chunk"],
                f"{r['payload']:,}",
                f"{r['bytes']:,.0f}",
                f"{(r['bytes'] / r['payload'] - 1) * 100:.0f} %",
            ]
            for r in rows
        ],
    )


# -- 3. scale --------------------------------------------------------------------------------------------


def measure_scale(directory: Path, shape: Shape, layout: Layout, seed: int) -> dict[str, Any]:
    """One big per-key database: size, insert rate, per-key KNN (and the rescore recipe for int8)."""
    corpus = make_corpus(shape, seed)
    queries = make_queries(corpus, QUERIES + WARMUP, seed)
    scale = fit_int8_scale(corpus.vecs, seed) if layout.dtype == "int8" else None
    path = directory / "scale.db"
    con = create(path, layout)
    t0 = time.perf_counter()
    secs = bulk_insert(con, layout, corpus, scale, progress=f"scale {shape.label()} {layout.label()}")
    size = db_bytes(con, path)
    log(f"  built in {time.perf_counter() - t0:.0f} s, {size / 1e6:,.0f} MB")
    truth = exact_topk(corpus, queries, 20)
    lat, found = knn(con, layout, corpus, queries, 20, scale)
    res: dict[str, Any] = {
        "shape": shape.label(),
        "layout": layout.label(),
        "rows": shape.total,
        "db_bytes": size,
        "insert_rows_s": shape.total / secs,
        "knn20": {**lat.to_dict(), "recall": recall(found, truth, 20)},
    }
    if scale is not None:
        lat_r, found_r = knn_rescored(con, layout, corpus, queries, 20, scale)
        res["rescored"] = {**lat_r.to_dict(), "recall": recall(found_r, truth, 20)}
    # A query without the partition constraint searches every partition (the global k-nearest).
    glob = Queries(queries.vecs[:20], queries.key[:20])
    sql = f"SELECT rowid, distance FROM v WHERE embedding MATCH {layout.bind} AND k = 20"
    res["global_knn"] = time_calls(
        lambda q: con.execute(sql, (layout.blob(q, scale),)).fetchall(), list(glob.vecs)
    ).to_dict()
    con.close()
    remove_db(path)
    return res


def scale_report(results: list[dict[str, Any]]) -> str:
    rows = []
    for r in results:
        resc, k20 = r.get("rescored"), r["knn20"]
        rows.append(
            [
                r["shape"],
                r["layout"],
                f"{r['db_bytes'] / 1e6:,.0f}",
                f"{r['insert_rows_s']:,.0f}",
                f"{ms(k20['p50_ms'])} / {ms(k20['p99_ms'])} (recall {k20['recall']:.3f})",
                f"{ms(resc['p50_ms'])} / {ms(resc['p99_ms'])} (recall {resc['recall']:.3f})" if resc else "",
                ms(r["global_knn"]["p50_ms"]),
            ]
        )
    return table(
        [
            "vectors",
            "layout",
            "DB MB",
            "insert rows/s",
            "per-key k=20 p50 / p99 ms",
            f"int8 k={RESCORE_K} + rescore p50 / p99 ms",
            "no-key k=20 p50 ms",
        ],
        rows,
    )


# -- quirks ----------------------------------------------------------------------------------------------


def quirks() -> list[str]:
    """sqlite-vec 0.1.9 behaviours that matter to memroute, each checked on a tiny in-memory table."""
    con = apsw.Connection(":memory:")
    con.enable_load_extension(True)
    con.load_extension(sqlite_vec.loadable_path())
    out: list[str] = []

    def attempt(fn: Callable[[], object]) -> str:
        try:
            return f"ok → {fn()!r}"
        except apsw.Error as exc:
            return f"error: {exc}"

    out.append(
        "`chunk_size=12`: "
        + attempt(lambda: con.execute("CREATE VIRTUAL TABLE bad USING vec0(e float[4], chunk_size=12)"))
    )
    con.execute(
        "CREATE VIRTUAL TABLE v USING vec0(owner TEXT partition key, embedding float[4], chunk_size=8)"
    )
    con.execute("CREATE VIRTUAL TABLE m USING vec0(owner TEXT, embedding float[4], chunk_size=8)")
    x = np.random.default_rng(7).standard_normal((20, 4)).astype(np.float32)
    for i in range(20):
        owner = "a" if i < 3 else "b"
        con.execute("INSERT INTO v(rowid, owner, embedding) VALUES (?, ?, ?)", (i + 1, owner, x[i].tobytes()))
        con.execute("INSERT INTO m(rowid, owner, embedding) VALUES (?, ?, ?)", (i + 1, owner, x[i].tobytes()))
    q = x[0].tobytes()

    def ids(sql: str, *args: object) -> list[int]:
        return [r[0] for r in con.execute(sql, (q, *args))]

    knn_v = "SELECT rowid FROM v WHERE embedding MATCH ? AND k = ?"
    knn_m = "SELECT rowid FROM m WHERE embedding MATCH ? AND k = ?"
    out.append(
        f"k=10 on a key with 3 vectors: partition → {len(ids(knn_v + ' AND owner = ?', 10, 'a'))} rows, "
        f"metadata → {len(ids(knn_m + ' AND owner = ?', 10, 'a'))} rows (no padding, no error)"
    )
    out.append(f"k=5 for an unknown key: {ids(knn_v + ' AND owner = ?', 5, 'zz')} (empty, no error)")
    no_key = ids(knn_v, 5)
    out.append(
        f"k=5 without the partition constraint: {len(no_key)} rows from keys "
        f"{sorted({('a' if r <= 3 else 'b') for r in no_key})} (a global search over every partition)"
    )
    both = [
        (r[0], r[1])
        for r in con.execute(knn_v.replace("rowid", "rowid, distance") + " AND owner IN ('a','b')", (q, 2))
    ]
    out.append(
        f"k=2 with `owner IN ('a','b')`: {len(both)} rows (k per listed key), "
        f"sorted by distance: {all(both[i][1] <= both[i + 1][1] for i in range(len(both) - 1))}"
    )
    out.append("k=5000: " + attempt(lambda: con.execute(knn_v, (q, 5000)).fetchall()))
    out.append(
        "UPDATE of the partition key: " + attempt(lambda: con.execute("UPDATE v SET owner='b' WHERE rowid=2"))
    )
    con.execute("UPDATE m SET owner = 'b' WHERE rowid = 2")
    out.append(f"UPDATE of a metadata column: ok; key 'a' now finds {ids(knn_m + ' AND owner = ?', 10, 'a')}")
    con.execute("UPDATE v SET embedding = ? WHERE rowid = 2", (x[10].tobytes(),))
    out.append("UPDATE of the vector in place: ok")
    out.append(
        "INSERT of an existing rowid: "
        + attempt(lambda: con.execute("INSERT INTO v(rowid, owner, embedding) VALUES (3, 'a', ?)", (q,)))
    )
    freed = con.execute("SELECT chunk_id, chunk_offset FROM v_rowids WHERE rowid = 5").fetchone()
    con.execute("DELETE FROM v WHERE rowid = 5")
    con.execute("INSERT INTO v(rowid, owner, embedding) VALUES (100, 'b', ?)", (q,))
    slot = con.execute("SELECT chunk_id, chunk_offset FROM v_rowids WHERE rowid = 100").fetchone()
    latest = con.execute("SELECT max(chunk_id) FROM v_chunks WHERE partition00 = 'b'").fetchone()[0]
    out.append(
        f"DELETE of a row in an older chunk (chunk, offset) {freed}, then INSERT into the same key: "
        "the new row "
        f"went to {slot} ({'the freed slot' if slot == freed else 'not the freed slot'}; the key's latest "
        f"chunk is {latest}). Inserts only fill the key's latest chunk, so holes elsewhere stay until the "
        "whole chunk is empty"
    )
    for r in range(1, 4):
        con.execute("DELETE FROM v WHERE rowid = ?", (r,))
    left = con.execute("SELECT count(*) FROM v_chunks WHERE partition00 = 'a'").fetchone()[0]
    out.append(
        f"deleting every row of key 'a': its chunks left = {left} (an empty chunk is dropped; the file "
        "keeps the pages on its freelist until VACUUM)"
    )
    plan = con.execute("EXPLAIN QUERY PLAN SELECT chunk_id FROM v_chunks WHERE partition00 = 'b'").fetchall()
    out.append(
        f"`v_chunks` has no index on the partition column: `{plan[0][-1]}`; every per-key KNN and every "
        "insert scans the chunk list (one row per chunk of every key)"
    )
    con.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 1)
    con.execute("CREATE INDEX v_chunks_partition ON v_chunks(partition00, chunk_id)")
    plan = con.execute("EXPLAIN QUERY PLAN SELECT chunk_id FROM v_chunks WHERE partition00 = 'b'").fetchone()
    con.execute("INSERT INTO v(rowid, owner, embedding) VALUES (101, 'c', ?)", (q,))
    found = ids(knn_v + " AND owner = ?", 3, "c")
    out.append(
        f"with `CREATE INDEX v_chunks_partition ON v_chunks(partition00, chunk_id)` (accepted with "
        f"SQLITE_DBCONFIG_DEFENSIVE on): `{plan[-1]}`; inserts and KNN still work (new key 'c' finds {found})"
    )
    plan = con.execute("EXPLAIN QUERY PLAN SELECT rowid, embedding FROM v WHERE rowid IN (4, 6)").fetchall()
    out.append(
        f"`WHERE rowid IN (…)` on vec0: `{plan[0][-1]}` (idxStr 1 = full scan); read vectors back with the "
        "KNN query itself (`SELECT rowid, distance, embedding … MATCH …`) or with one `rowid = ?` each"
    )
    con.execute("DROP TABLE v")
    left = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'v%'")]
    out.append(f"DROP TABLE v with that index: objects named v* left = {left}")
    con.close()
    return out


# -- main ------------------------------------------------------------------------------------------------


def run(args: Any) -> Report:
    rep = Report("sqlite-vec layout for per-key vectors")
    shapes = QUICK_SHAPES if args.quick else FULL_SHAPES
    chunks = tuple(args.chunks) if args.chunks else CHUNK_SIZES
    index_chunks = tuple(args.index_chunks) if args.index_chunks is not None else INDEX_CHUNK_SIZES
    int8_layouts = [Layout("partition", c, index=args.chosen_index) for c in args.int8_chunks]
    parts = set(args.parts)
    load0 = os.getloadavg()
    with work_dir(args.data_dir) as directory:
        rep.add(
            f"Vectors: {DIM}-d unit, {N_TOPICS} topics sharing a common direction, "
            f"{TOPICS_PER_KEY} topics per key, gaussian noise; keys are UUIDs written interleaved; "
            f"one transaction per {BATCH:,} rows; WAL, synchronous=normal; "
            "DB MB = file + WAL after `wal_checkpoint(TRUNCATE)`. "
            f"KNN: {QUERIES} per-key queries (fresh points from the key's topics) after {WARMUP} warm-up "
            f"ones; 1-row insert: {SINGLE_INSERTS} autocommit inserts into random keys after the bulk load. "
            "Recall is against exact float cosine top-20 of the key in numpy."
        )
        float_sizes: dict[tuple[str, str], int] = {}
        if "1" in parts:
            results = part_grid(directory, shapes, grid_layouts(chunks, index_chunks), args.seed)
            rep.add("### 1. Layouts\n\n" + grid_report(results))
            rep.data["grid"] = results
            float_sizes = {(r["shape"], r["layout"]): r["vector_bytes"] for r in results}
        if "2" in parts:
            results = part_int8(directory, shapes, int8_layouts, args.seed, float_sizes)
            rep.add(
                "### 2. int8\n\n"
                f"scale = 127 / {INT8_QUANTILE}-quantile of |x| over a sample, "
                f"clip to ±127, `vec_int8(?)`, L2. Rescore: int8 `k={RESCORE_K}` returning the int8 vectors "
                "(`SELECT rowid, distance, embedding`), cosine of the float query against the dequantised "
                "vectors in numpy, top 20 (timed end to end). float/int8 = vector bytes (DB minus the empty "
                "table) of the float layout over the int8 one. Ceiling = recall@20 of an exact cosine search "
                "over the dequantised vectors (what rescoring can reach at most).\n\n" + int8_report(results)
            )
            rep.data["int8"] = results
            sizes = chunk_bytes(sorted({8, 16, 32, 64, *args.int8_chunks}))
            rep.add(
                "Why small int8 chunks miss 4×: bytes per chunk in the file (dbstat, 4 KiB pages). A chunk's "
                "vectors are one blob row, so SQLite rounds it to a leaf slot plus whole overflow pages.\n\n"
                + chunk_bytes_report(sizes)
            )
            rep.data["chunk_bytes"] = sizes
        if "3" in parts:
            sizes = (
                [int(s) for s in args.scale_sizes.split(",")]
                if args.scale_sizes
                else ([20_000] if args.quick else [1_000_000])
            )
            per_key = 1_000
            dtypes = args.scale_dtypes.split(",")
            results = []
            for n in sizes:
                shape = Shape("S", max(1, n // per_key), min(per_key, n))
                for dtype in dtypes:
                    layout = Layout("partition", args.chunk, dtype, args.chosen_index)
                    log(f"scale {shape.label()} / {layout.label()}")
                    results.append(measure_scale(directory, shape, layout, args.seed))
            rep.add("### 3. Scale (1,000 vectors per key)\n\n" + scale_report(results))
            rep.data["scale"] = results
        if "quirks" in parts:
            rep.add("### sqlite-vec 0.1.9 quirks\n\n" + "\n".join(f"- {q}" for q in quirks()))
    load1 = os.getloadavg()
    rep.add(
        f"Load average (1/5/15 min) at start {load0[0]:.2f}/{load0[1]:.2f}/{load0[2]:.2f}, "
        f"at end {load1[0]:.2f}/{load1[1]:.2f}/{load1[2]:.2f}."
    )
    return rep


def machine_line(ref_before: float, ref_after: float) -> str:
    cpu = platform.processor() or "?"
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as f:
        cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.lower().startswith("model name")), cpu)
    con = apsw.Connection(":memory:")
    con.enable_load_extension(True)
    con.load_extension(sqlite_vec.loadable_path())
    vec = con.execute("SELECT vec_version()").fetchone()[0]
    con.close()
    return (
        f"Machine: {cpu} × {os.cpu_count()} CPUs, Python {platform.python_version()}, SQLite "
        f"{apsw.sqlite_lib_version()} (apsw {apsw.apsw_version()}), sqlite-vec {vec}, "
        f"numpy {np.__version__}; "
        f"CPU reference (1M-iteration Python loop, median of 5) {ref_before:.0f} ms before the run, "
        f"{ref_after:.0f} ms after"
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, seconds")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--data-dir", type=Path, help="put the databases here (default: a temp dir under /tmp)")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON to this file")
    ap.add_argument("--parts", nargs="+", default=["1", "2", "3", "quirks"], help="any of 1 2 3 quirks")
    ap.add_argument("--chunks", type=int, nargs="+", help=f"partition chunk sizes (default {CHUNK_SIZES})")
    ap.add_argument(
        "--index-chunks",
        type=int,
        nargs="*",
        help=f"chunk sizes also run with the _chunks index (default {INDEX_CHUNK_SIZES})",
    )
    ap.add_argument(
        "--int8-chunks",
        type=int,
        nargs="+",
        default=INT8_CHUNK_SIZES,
        help=f"partition chunk sizes for part 2 (default {INT8_CHUNK_SIZES})",
    )
    ap.add_argument("--chunk", type=int, default=DEFAULT_CHUNK, help="chunk_size of the part 3 layout")
    ap.add_argument(
        "--no-chosen-index",
        dest="chosen_index",
        action="store_false",
        help="parts 2 and 3 without the _chunks index",
    )
    ap.add_argument("--scale-sizes", help="comma-separated vector counts for part 3 (default 1000000)")
    ap.add_argument("--scale-dtypes", default="int8,float", help="part 3 column types (default int8,float)")
    args = ap.parse_args(argv)
    before = cpu_reference_ms()
    rep = run(args)
    print(machine_line(before, cpu_reference_ms()))
    print()
    print(rep.markdown())
    sys.stdout.flush()
    if args.json is not None:
        args.json.write_text(json.dumps(rep.data, indent=2, default=str))


if __name__ == "__main__":
    main()
