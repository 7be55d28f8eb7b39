"""Retrieval latency of the FTS tiers (no vector tier configured), or with static vectors.

For each database size (TOTALxKEYS: TOTAL memories spread over KEYS api keys) it
times `Memory.retrieve(key, query=q, strategy=s, max_tokens=2000,
record_access=False)` for s in exact, semantic, hybrid, then hybrid with
`record_access=True` (what the chat path does: it also bumps access counters in a
write transaction). Each query goes to a random key of the database.

`--static`: a copy of each database with every memory embedded by the static source
(the model distilled from the bundled MiniLM, built once into the data dir), opened
with the server's background threads (in-memory key copies, index builds); semantic
and hybrid then search vectors too, the query embedded at each call.

    python -m bench.retrieval                      # 10000x1 and 1000000x1000
    python -m bench.retrieval 10000x1 200000x200 --queries 500
    python -m bench.retrieval 1000000x1000 --queries 500 --static
    python -m bench.retrieval --quick
"""

from __future__ import annotations

import gc
import os
import random
import shutil
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from bench.common import (
    NO_MODEL,
    Latency,
    Report,
    emit,
    human_bytes,
    log,
    ms,
    parser,
    table,
    time_calls,
    verdict,
    work_dir,
)
from bench.corpus import queries
from bench.dataset import BuiltDb, build
from bench.opened import BenchMemory, open_bench
from memroute import Memory
from memroute.config import Config
from memroute.store.fts import match_expression

STRATEGIES = ("exact", "semantic", "hybrid")
TARGET_P99_MS = 5.0  # at 10,000 memories in one key
TARGET_PER_KEY = 10_000
TARGET_1M_HYBRID_P99_MS = 15.0  # at 1,000,000 memories over 1,000 keys
DEFAULT_SIZES = ("10000x1", "1000000x1000")
QUICK_SIZES = ("2000x1", "6000x6")


def parse_size(text: str) -> tuple[int, int]:
    total, _, keys = text.lower().partition("x")
    return int(total.replace("_", "")), int(keys or 1)


@dataclass(slots=True)
class Case:
    label: str
    latency: Latency
    items: float  # mean memories returned


def _diagnostics(built: BuiltDb, qs: Sequence[str]) -> dict[str, float]:
    """How many FTS rows a query matches over the whole file vs inside one key (read from the
    file on a connection of its own)."""
    con = apsw.Connection(built.path)
    try:
        return _fts_matches(con, built, qs)
    finally:
        con.close()


def _fts_matches(con: apsw.Connection, built: BuiltDb, qs: Sequence[str]) -> dict[str, float]:
    total, in_key = [], []
    for q in qs[:50]:
        expression = match_expression(q)
        if expression is None:
            continue
        total.append(
            con.execute("SELECT COUNT(*) FROM memory_fts WHERE memory_fts MATCH ?", (expression,)).fetchone()[
                0
            ]
        )
        in_key.append(
            con.execute(
                "SELECT COUNT(*) FROM memory_fts JOIN memories m ON m.rowid = memory_fts.rowid"
                " WHERE memory_fts MATCH ? AND m.api_key_id = ?",
                (expression, built.owners[0]),
            ).fetchone()[0]
        )
    return {
        "fts_matches_file": statistics.mean(total) if total else 0.0,
        "fts_matches_key": statistics.mean(in_key) if in_key else 0.0,
    }


def _with_static_vectors(directory: Path, built: BuiltDb) -> BenchMemory:
    """A `Memory` with its workers on a copy of `built` whose memories all have static vectors
    (embedded once; the copy is kept next to the database for the next run)."""
    path = Path(built.path).with_name(Path(built.path).stem + "-static.db")
    environ = {"MEMORY_STATIC_CACHE_DIR": str(directory / "embeddings")}
    for name in ("MEMORY_VEC_CACHE_MB", "MEMROUTE_RECALL_INDEX_MEMORIES"):  # to compare without them
        if name in os.environ:
            environ[name] = os.environ[name]
    config = Config.for_path(path, environ=environ)
    if not path.exists():
        log(f"embedding {built.rows:,} memories with the static source")
        partial = path.with_name(path.name + ".partial")
        shutil.copyfile(built.path, partial)
        side = Memory.open(partial, config=config.with_overrides(db_path=partial), start_workers=False)
        try:
            side.update_settings(embedding_source="static", static_enabled=True)
            started = time.perf_counter()
            report = side.reindex(wait=True)
            log(f"  {report.processed:,} vectors in {time.perf_counter() - started:.0f} s")
        finally:
            side.close()
        partial.rename(path)
    return open_bench(path, config=config, start_workers=True)


def run_size(
    directory: Path, total: int, keys: int, *, seed: int, n_queries: int, warmup: int, static: bool = False
) -> dict[str, Any]:
    built = build(directory, total, keys, seed)
    qs = queries(seed + 1, warmup + n_queries)
    rng = random.Random(seed + 2)
    work = [(rng.choice(built.owners), q) for q in qs]
    cases: list[Case] = []
    mem = _with_static_vectors(directory, built) if static else open_bench(built.path, start_workers=False)
    if not static:
        mem.update_settings(**NO_MODEL)  # the keyword tiers are timed
    gc.collect()
    gc.freeze()  # as `memroute serve` does once started (key indexes built later are frozen too)
    try:
        # The keys' first recalls ask for their in-process indexes (a big key's is built in
        # the background); the figures are those of a server once they are built.
        for owner, q in work[:warmup]:
            mem.retrieve(owner, query=q, strategy="hybrid", max_tokens=2000, record_access=False)
        settled_s = mem.settle()
        log(f"{total}x{keys}: key indexes built {settled_s:.1f} s after the first recalls")
        for strategy, record in [*((s, False) for s in STRATEGIES), ("hybrid", True)]:
            returned: list[int] = []

            def call(
                arg: tuple[str, str],
                strategy: str = strategy,
                record: bool = record,
                returned: list[int] = returned,
            ) -> None:
                items = mem.retrieve(
                    arg[0], query=arg[1], strategy=strategy, max_tokens=2000, record_access=record
                )
                returned.append(len(items))

            log(f"{total}x{keys}: {strategy}{' + record_access' if record else ''}, {n_queries} queries")
            latency = time_calls(call, work, warmup=warmup)
            label = f"{strategy}{' + record_access' if record else ''}"
            cases.append(Case(label, latency, statistics.mean(returned[warmup:])))
        diag = _diagnostics(built, qs)
    finally:
        mem.close()
    return {"built": built, "cases": cases, "diag": diag, "settled_s": settled_s}


def report(results: list[dict[str, Any]], n_queries: int, *, static: bool = False) -> Report:
    rep = Report("Retrieval latency (static vectors and FTS)" if static else "Retrieval latency (FTS tiers)")
    rows, data = [], {}
    for res in results:
        built: BuiltDb = res["built"]
        size = f"{built.rows:,} / {built.keys:,} keys ({built.per_key:,}/key)"
        gated = built.per_key >= TARGET_PER_KEY
        for case in res["cases"]:
            lat = case.latency
            target = "—"
            if gated and "record" not in case.label:
                target = f"p99 ≤ {TARGET_P99_MS:g} ms: {verdict(lat.p99 <= TARGET_P99_MS)}"
            elif built.rows >= 1_000_000 and case.label == "hybrid":
                target = (
                    f"p99 ≤ {TARGET_1M_HYBRID_P99_MS:g} ms: {verdict(lat.p99 <= TARGET_1M_HYBRID_P99_MS)}"
                )
            rows.append(
                [
                    size,
                    case.label,
                    lat.n,
                    ms(lat.p50),
                    ms(lat.p99),
                    ms(lat.mean),
                    ms(lat.max),
                    f"{case.items:.0f}",
                    target,
                ]
            )
            data[f"{built.total}x{built.keys}/{case.label}"] = {**lat.to_dict(), "items": case.items}
        data[f"{built.total}x{built.keys}/db"] = {
            "rows": built.rows,
            "build_s": built.build_s,
            "bytes": built.size["total"],
            "indexes_settled_s": res["settled_s"],
            **res["diag"],
        }
    rep.add(
        f"`mem.retrieve(key, query=q, strategy=s, max_tokens=2000)` — {n_queries} timed queries per row "
        "after warm-up, each to a random key; times in ms. The warm-up's recalls ask for the keys' "
        "in-process indexes; the timing starts once those that fit are built (a big key's in the "
        "background, as a server does after a key's first recall)."
    )
    rep.add(table(["memories", "strategy", "n", "p50", "p99", "mean", "max", "items", "target"], rows))
    notes = []
    for res in results:
        built, diag = res["built"], res["diag"]
        notes.append(
            f"- {built.rows:,} memories / {built.keys:,} keys: built in {built.build_s:.0f} s "
            f"({built.rows / built.build_s:,.0f} memories/s in 10k-row transactions), "
            f"{human_bytes(built.size['total'])}; a query matches on average "
            f"{diag['fts_matches_file']:,.0f} FTS rows in the whole file, "
            f"{diag['fts_matches_key']:,.0f} of them in the queried key; the key indexes were "
            f"built {res['settled_s']:.1f} s after the first recalls."
        )
    rep.add("\n".join(notes))
    rep.data = data
    return rep


def run(
    sizes: Sequence[str],
    *,
    seed: int,
    n_queries: int,
    warmup: int,
    data_dir: Path | None,
    static: bool = False,
) -> Report:
    with work_dir(data_dir) as directory:
        results = []
        for text in sizes:
            total, keys = parse_size(text)
            started = time.perf_counter()
            results.append(
                run_size(directory, total, keys, seed=seed, n_queries=n_queries, warmup=warmup, static=static)
            )
            log(f"{text} done in {time.perf_counter() - started:.0f} s")
        return report(results, n_queries, static=static)


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", help=f"TOTALxKEYS, default {' '.join(DEFAULT_SIZES)}")
    ap.add_argument("--queries", type=int, default=300, help="timed queries per strategy (default 300)")
    ap.add_argument("--warmup", type=int, default=50, help="untimed queries first (default 50)")
    ap.add_argument("--static", action="store_true", help="every memory with a static vector; workers on")
    args = ap.parse_args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES)
    n_queries = 40 if args.quick else args.queries
    warmup = 10 if args.quick else args.warmup
    figures = run(
        sizes, seed=args.seed, n_queries=n_queries, warmup=warmup, data_dir=args.data_dir, static=args.static
    )
    emit(figures, args.json)


if __name__ == "__main__":
    main()
