"""Per-key vector search cost against the number of memories in one key (when to move to Qdrant).

One API key holding N memories (1k, 10k, 100k, 300k; `--quick`: 1k and 5k), every memory with a 384-d
vector. Per N, bench.dataset builds the memories (one key) and bench.semantic's `vector_db` writes the
vectors twice, float and `MEMORY_VEC_QUANTIZATION=int8`, through memroute's own re-index path
(`embed_pending`) under the transformers signature (all-MiniLM-L6-v2, 384-d). The document vectors are
**stand-ins**: the hashing source's vectors through a fixed random projection to 384-d, unit length
(embedding 300k texts with ONNX is out of reach here). sqlite-vec's exact KNN and the numpy key copy are
brute force, so their time depends on the count and the width, not on the values. The query vector is a
real embedding by the bundled ONNX MiniLM (no download); its cost is timed apart
(`EmbeddingSources.embed_query`, cache cleared before each call) and is **not** in the retrieve times.

- Retrieve: `mem.retrieve(key, q, strategy="semantic", max_tokens=2000, record_access=False)`, every
  question distinct, its vector put in the query cache just before its block is timed (so the time is
  the search: backfill check, key-copy or vec0 KNN with k=100 and the expiry/retention filter, reading
  the rows, packing the budget). Cases, each its own `Memory` on the same database file (int8: its own
  file), interleaved in rounds so drift of a shared VM hits them alike:
  1. default config: keys over 1,024 vectors are searched in their in-memory numpy copy while it fits
     `MEMORY_VEC_CACHE_MB` (256). The copy is built before timing, as the server's background thread
     builds it after a key changes (its build time is reported). Where the copy does not fit, the
     default falls back to sqlite-vec, and case 1b raises `MEMORY_VEC_CACHE_MB` to the next power of
     two that holds it.
  2. `MEMORY_VEC_CACHE_MB=0`: sqlite-vec's own exact scan, float32.
  3. `MEMORY_VEC_QUANTIZATION=int8` and `MEMORY_VEC_CACHE_MB=0`: int8 scan, the 100 nearest re-scored
     against the float query.
  The search path each case really took is checked after timing (the key copy current or not), and one
  `retrieve_preview` per case must be answered by the vector tier (no silent fall-back to FTS5).
- Memory: per (N, case) a fresh `python -c` that imports memroute, opens the database with that case's
  environment, loads the model, builds the key copy (case 1) and runs a few semantic retrieves; VmRSS
  (after them) and VmHWM (peak) from /proc/self/status, and VmRSS before the first search (baseline:
  interpreter, memroute, ONNX model). DB = the database file after a TRUNCATE checkpoint.

    python -m bench.vec_scaling                      # 1k, 10k, 100k, 300k (~7 min on 2 cores)
    python -m bench.vec_scaling --quick              # 1k and 5k (well under a minute)
    python -m bench.vec_scaling --sizes 1000,50000 --queries 100 --data-dir /tmp/b --json out.json
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.common import PROC_STATUS, Report, emit, log, ms, parser, table, work_dir
from bench.dataset import build
from bench.opened import BenchMemory, open_bench
from bench.semantic import (
    VecDb,
    bench_embedding,
    choice_of,
    default_model_dir,
    distinct_queries,
    interleaved,
    timed,
    vector_db,
)
from memroute.config import Config
from memroute.vectors.key_cache import MIN_CHUNKS

SOURCE = "transformers"  # 384-d; the query is embedded by the real model
PROXY = "hashing"  # base of the stand-in document vectors
DIM = 384
FLOAT_CHUNK = 16  # float vectors per vec0 chunk (memroute.store.vectors)
COPY_MIN_VECTORS = MIN_CHUNKS * FLOAT_CHUNK  # keys with fewer stay on sqlite-vec even with the copy on
DEFAULT_CACHE_MB = 256  # Config.vec_cache_mb, checked against memroute at start
MAX_TOKENS = 2000
MIB = 1024 * 1024
DEFAULT_SIZES = (1_000, 10_000, 100_000, 300_000)
QUICK_SIZES = (1_000, 5_000)
Runner = Callable[[Sequence[Any]], list[int]]


@dataclass(frozen=True, slots=True)
class Plan:
    sizes: tuple[int, ...]
    queries: tuple[tuple[int, int], ...]  # (up to this many memories, timed retrieves per case)
    warmup: int
    rounds: int
    rss_queries: int
    embed_queries: int
    budget_s: float  # no new size is started after this much run time

    def queries_for(self, n: int) -> int:
        return next(q for limit, q in self.queries if n <= limit)


FULL = Plan(
    sizes=DEFAULT_SIZES,
    queries=((10_000, 300), (100_000, 200), (sys.maxsize, 100)),
    warmup=10,
    rounds=3,
    rss_queries=20,
    embed_queries=300,
    budget_s=25 * 60,
)
QUICK = Plan(
    sizes=QUICK_SIZES,
    queries=((sys.maxsize, 60),),
    warmup=5,
    rounds=2,
    rss_queries=10,
    embed_queries=60,
    budget_s=5 * 60,
)


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    label: str
    env: dict[str, str] = field(default_factory=dict)
    int8: bool = False
    copy: bool = False  # the key copy is enabled: build it before timing, as the server would


def copy_bytes(n: int) -> int:
    """What a key's numpy copy takes: float32 rows plus int64 rowids (KeyMatrix.nbytes)."""
    return n * (DIM * 4 + 8)


def fitting_cache_mb(n: int) -> int:
    """The smallest power of two (MB) above `DEFAULT_CACHE_MB` that holds an `n`-vector key copy."""
    mb = DEFAULT_CACHE_MB
    while mb * MIB < copy_bytes(n):
        mb *= 2
    return mb


def cases_for(n: int) -> list[Case]:
    cases = [Case("default", f"1. default (key copy, {DEFAULT_CACHE_MB} MB)", copy=True)]
    if n > COPY_MIN_VECTORS and copy_bytes(n) > DEFAULT_CACHE_MB * MIB:
        mb = fitting_cache_mb(n)
        cases.append(
            Case(
                "copy-fit",
                f"1b. key copy, MEMORY_VEC_CACHE_MB={mb}",
                {"MEMORY_VEC_CACHE_MB": str(mb)},
                copy=True,
            )
        )
    cases.append(Case("float", "2. sqlite-vec float, copy off", {"MEMORY_VEC_CACHE_MB": "0"}))
    cases.append(
        Case(
            "int8",
            "3. sqlite-vec int8, copy off",
            {"MEMORY_VEC_CACHE_MB": "0", "MEMORY_VEC_QUANTIZATION": "int8"},
            int8=True,
        )
    )
    return cases


def case_env(case: Case, model_dir: Path) -> dict[str, str]:
    """memroute's defaults (nothing from the caller's environment), the model dir and the case's vars."""
    return {"MEMORY_STATIC_CACHE_DIR": str(model_dir), **case.env}


def open_case(path: Path, model_dir: Path, case: Case) -> BenchMemory:
    """`path` opened as bench.semantic's `open_with` does, with the case's environment."""
    mem = open_bench(
        path, config=Config.for_path(path, environ=case_env(case, model_dir)), start_workers=False
    )
    mem.update_settings(enabled=True, embedding_source=SOURCE, static_enabled=True, transformers_enabled=True)
    return mem


def search_path(mem: BenchMemory, owner: str) -> str:
    """Where `SqliteVecIndex.search` goes for `owner` right now (the same check it makes)."""
    index = mem.parts.index
    if index.key_cache.get(owner, index.vectors.generation(owner)) is not None:
        return "numpy copy"
    if index.int8:
        return "sqlite-vec int8 + re-score"
    return "sqlite-vec"


def path_note(case: Case, path: str, n: int) -> str:
    if not case.copy or path == "numpy copy":
        return path
    if n <= COPY_MIN_VECTORS:
        return f"{path} (≤ {COPY_MIN_VECTORS:,} vectors: no copy)"
    return f"{path} (copy {copy_bytes(n) / MIB:.0f} MB > {DEFAULT_CACHE_MB} MB)"


# -- timing --------------------------------------------------------------------------------------------


def bench_size(
    n: int, dbs: dict[bool, VecDb], cases: Sequence[Case], model_dir: Path, plan: Plan, *, seed: int
) -> dict[str, Any]:
    """Every case on the key of `n` memories, interleaved; the query vectors cached before each block."""
    count = plan.queries_for(n)
    qs = distinct_queries(seed + 21, plan.warmup + count)
    owner = dbs[False].owners[0]
    out: dict[str, Any] = {}
    mems: dict[str, BenchMemory] = {}
    try:
        runners: dict[str, tuple[Runner, Sequence[Any]]] = {}
        returned: dict[str, list[int]] = {}
        for case in cases:
            mem = mems[case.name] = open_case(Path(dbs[case.int8].path), model_dir, case)
            choice = choice_of(mem)
            sources = mem.parts.sources
            sources.embedder(choice)
            info: dict[str, Any] = {"label": case.label}
            if case.copy:
                started = time.perf_counter()
                mem.parts.index.key_cache.refresh(owner)
                info["copy_build_s"] = time.perf_counter() - started
                info["copy_bytes"] = mem.parts.index.key_cache.stats()["bytes"]
            for q in qs[: plan.warmup]:
                mem.retrieve(owner, q, strategy="semantic", max_tokens=MAX_TOKENS, record_access=False)
            check = mem.retrieve_preview(owner, qs[0], strategy="semantic", max_tokens=MAX_TOKENS)
            if check.resolution.vector_store != "sqlite-vec" or check.resolution.fallback_reason:
                raise RuntimeError(
                    f"{case.name} at {n:,}: not answered by the vector tier: {check.resolution}"
                )
            out[case.name] = info
            items = returned[case.name] = []

            def call(q: str, m: BenchMemory = mem, got: list[int] = items) -> None:
                got.append(
                    len(m.retrieve(owner, q, strategy="semantic", max_tokens=MAX_TOKENS, record_access=False))
                )

            def run_block(
                block: Sequence[Any], call: Any = call, src: Any = sources, c: Any = choice
            ) -> list[int]:
                for q in block:  # the whole block first: no ONNX run right before a timed call
                    src.embed_query(c, q)
                return timed(call, block)

            runners[case.name] = (run_block, qs[plan.warmup :])
        for name, lat in interleaved(runners, plan.rounds, f"{n:,} memories").items():
            case = next(c for c in cases if c.name == name)
            path = search_path(mems[name], owner)
            out[name].update(
                lat.to_dict(),
                items=sum(returned[name]) / max(len(returned[name]), 1),
                path=path,
                path_note=path_note(case, path, n),
            )
    finally:
        for mem in mems.values():
            mem.close()
    return out


# -- memory (RSS) --------------------------------------------------------------------------------------

RSS_CHILD = (
    r"""
import json, sys
args = json.loads(sys.argv[1])
"""
    + PROC_STATUS
    + r"""

from memroute import Memory
from memroute.clock import utc_now
from memroute.config import Config
from memroute.service.build import build

imported = status()
parts = build(Config.for_path(args["db"], environ=args["env"]), utc_now)
mem = Memory(parts, start_workers=False)
mem.update_settings(
    enabled=True, embedding_source=args["source"], static_enabled=True, transformers_enabled=True
)
choice = parts.semantic.source(mem.settings())
for q in args["queries"]:
    parts.sources.embed_query(choice, q)
ready = status()
if args["copy"]:
    parts.index.key_cache.refresh(args["owner"])
for q in args["queries"]:
    mem.retrieve(args["owner"], q, strategy="semantic", max_tokens=2000, record_access=False)
done = status()
copy = parts.index.key_cache.stats()
mem.close()
print(json.dumps({"imported": imported, "ready": ready, "done": done, "copy": copy}))
"""
)


def bench_rss(db: VecDb, case: Case, model_dir: Path, queries: Sequence[str]) -> dict[str, Any]:
    """One fresh interpreter: the case's `Memory` on `db`, model loaded, a few semantic retrieves."""
    args = {
        "db": db.path,
        "env": case_env(case, model_dir),
        "source": SOURCE,
        "owner": db.owners[0],
        "queries": list(queries),
        "copy": case.copy,
    }
    done = subprocess.run(
        [sys.executable, "-c", RSS_CHILD, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=Path(__file__).resolve().parent.parent,
    )
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "imported_rss_mb": figures["imported"]["VmRSS"],
        "ready_rss_mb": figures["ready"]["VmRSS"],
        "rss_mb": figures["done"]["VmRSS"],
        "hwm_mb": figures["done"]["VmHWM"],
        "copy_bytes": figures["copy"]["bytes"],
    }


# -- the run -------------------------------------------------------------------------------------------


def check_defaults(directory: Path) -> None:
    """The constants here describe memroute's defaults: fail loudly if memroute changed them."""
    cfg = Config.for_path(directory / "defaults.db", environ={})
    if cfg.vec_cache_mb != DEFAULT_CACHE_MB or cfg.vec_quantization != "none":
        raise RuntimeError(f"memroute defaults changed: {cfg.vec_cache_mb} MB, {cfg.vec_quantization}")


def run(plan: Plan, *, seed: int, data_dir: Path | None) -> Report:
    model_dir = default_model_dir(data_dir)
    model_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    figures: dict[str, Any] = {"sizes": {}, "skipped": [], "loadavg": {"start": os.getloadavg()}}
    with work_dir(data_dir) as directory, work_dir(None) as scratch:
        check_defaults(scratch)
        log("query embedding (ONNX MiniLM)")
        figures["embed"] = bench_embedding(
            scratch, model_dir, [SOURCE], {SOURCE: plan.embed_queries}, seed=seed, rounds=plan.rounds
        )[SOURCE]
        for n in plan.sizes:
            elapsed = time.perf_counter() - started
            if elapsed > plan.budget_s:
                log(f"{n:,}: skipped, {elapsed:.0f} s spent (budget {plan.budget_s:.0f} s)")
                figures["skipped"].append(n)
                continue
            size_started = time.perf_counter()
            built = build(directory, n, 1, seed)
            dbs = {
                int8: vector_db(
                    directory, built, f"{n}x1", SOURCE, int8=int8, model_dir=model_dir, proxy=PROXY, seed=seed
                )
                for int8 in (False, True)
            }
            cases = cases_for(n)
            results = bench_size(n, dbs, cases, model_dir, plan, seed=seed)
            rss_queries = distinct_queries(seed + 31, plan.rss_queries)
            for case in cases:
                log(f"{n:,}: RSS child, {case.name}")
                results[case.name]["rss"] = bench_rss(dbs[case.int8], case, model_dir, rss_queries)
                results[case.name]["db_bytes"] = dbs[case.int8].bytes_total
            figures["sizes"][n] = {
                "base_bytes": built.size["total"],
                "build_s": built.build_s,
                "dbs": {
                    ("int8" if int8 else "float"): {
                        **{k: v for k, v in asdict(db).items() if k != "owners"},
                        "bytes_per_vector": db.bytes_per_vector,
                    }
                    for int8, db in dbs.items()
                },
                "cases": results,
                "seconds": time.perf_counter() - size_started,
            }
            log(f"{n:,} memories done in {figures['sizes'][n]['seconds']:.0f} s")
    figures["loadavg"]["end"] = os.getloadavg()
    figures["seconds"] = time.perf_counter() - started
    return report(figures, plan)


# -- the report ----------------------------------------------------------------------------------------


def report(figures: dict[str, Any], plan: Plan) -> Report:
    rep = Report("Vector search cost per key (sqlite-vec and the key copy)")
    rows = []
    for n, sz in figures["sizes"].items():
        for r in sz["cases"].values():
            rss = r["rss"]
            rss_cell = f"{rss['rss_mb']:.0f}" if "rss_mb" in rss else f"failed: {rss['error']}"
            hwm_cell = f"{rss['hwm_mb']:.0f}" if "hwm_mb" in rss else "—"
            rows.append(
                [
                    f"{n:,}",
                    r["label"],
                    r["path_note"],
                    ms(r["p50_ms"]),
                    ms(r["p99_ms"]),
                    rss_cell,
                    hwm_cell,
                    f"{r['db_bytes'] / MIB:.0f}",
                ]
            )
    queries = ", ".join(
        f"{q} up to {limit:,}" if limit < sys.maxsize else f"{q} above" for limit, q in plan.queries
    )
    rep.add(
        f"One key holding N memories, 384-d stand-in vectors ({PROXY} → random projection), "
        f'`mem.retrieve(key, q, strategy="semantic", max_tokens={MAX_TOKENS}, record_access=False)` '
        "with the query vector already cached (embedding not included, see below). p50/p99 in ms over "
        f"distinct questions ({queries} per case) in {plan.rounds} interleaved rounds after "
        f"{plan.warmup} warm-up retrieves. RSS = VmRSS after {plan.rss_queries} retrieves in a fresh "
        "process for that case, peak = VmHWM; DB = the database file (int8 rows: the int8 database). "
        "MB = 2^20 bytes."
    )
    rep.add(table(["N", "case", "search path", "p50", "p99", "RSS MB", "peak MB", "DB MB"], rows))

    e = figures["embed"]
    notes = [
        f"Query embedding ({e['model']}, {e['dims']}-d, cache cleared before each call, not in the times "
        f"above): p50 {ms(e['cold']['p50_ms'])} ms, p99 {ms(e['cold']['p99_ms'])} ms over {e['cold']['n']} "
        f"questions; model load {e['load_s']:.2f} s."
    ]
    measured = [
        r["rss"] for sz in figures["sizes"].values() for r in sz["cases"].values() if "rss_mb" in r["rss"]
    ]
    if measured:
        imported = [r["imported_rss_mb"] for r in measured]
        ready = [r["ready_rss_mb"] for r in measured]
        notes.append(
            f"RSS after `import memroute`: {min(imported):.0f}–{max(imported):.0f} MB; before the first "
            "search (database open, ONNX model loaded, query vectors embedded): "
            f"{min(ready):.0f}–{max(ready):.0f} MB — the RSS column includes that baseline."
        )
    for n, sz in figures["sizes"].items():
        copies = [copy_note(r) for r in sz["cases"].values() if copy_note(r)]
        flt, i8 = sz["dbs"]["float"], sz["dbs"]["int8"]
        notes.append(
            f"{n:,}: memories alone {sz['base_bytes'] / MIB:.0f} MB (built in {sz['build_s']:.1f} s); "
            f"vectors {flt['bytes_per_vector']:,.0f} B float / {i8['bytes_per_vector']:,.0f} B int8 each, "
            f"written in {flt['fill_s']:.1f} s / {i8['fill_s']:.1f} s"
            + (f"; key copy ({', '.join(copies)})" if copies else "")
            + f"; {sz['seconds']:.0f} s for this size."
        )
    if figures["skipped"]:
        notes.append(
            "Not measured (run-time budget of "
            f"{plan.budget_s / 60:.0f} min spent): " + ", ".join(f"{n:,}" for n in figures["skipped"]) + "."
        )
    start, end = figures["loadavg"]["start"], figures["loadavg"]["end"]
    notes.append(
        f"Load average at start {start[0]:.2f} / {start[1]:.2f} / {start[2]:.2f}, at end "
        f"{end[0]:.2f} / {end[1]:.2f} / {end[2]:.2f}; whole run {figures['seconds']:.0f} s."
    )
    rep.add("\n".join(f"- {note}" for note in notes))
    rep.data = figures
    return rep


def copy_note(r: dict[str, Any]) -> str:
    """How long building the key copy took, and whether it was kept ("" when nothing was loaded)."""
    case = r["label"].split(".")[0]
    if r.get("copy_bytes"):
        return f"case {case}: {r['copy_bytes'] / MIB:.0f} MB, built in {r['copy_build_s']:.2f} s"
    if r.get("copy_build_s", 0) > 0.05:  # loaded, then dropped: over MEMORY_VEC_CACHE_MB
        return f"case {case}: loaded in {r['copy_build_s']:.2f} s, then dropped (over the limit)"
    return ""


def parse_sizes(text: str) -> tuple[int, ...]:
    return tuple(int(part.replace("_", "").strip()) for part in text.split(",") if part.strip())


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=parse_sizes, default=None, help="memories in the key, e.g. 1000,50000")
    ap.add_argument("--queries", type=int, default=None, help="timed retrieves per case and size")
    args = ap.parse_args(argv)
    plan = QUICK if args.quick else FULL
    if args.sizes:
        plan = replace(plan, sizes=args.sizes)
    if args.queries:
        plan = replace(plan, queries=((sys.maxsize, args.queries),))
    started = time.perf_counter()
    rep = run(plan, seed=args.seed, data_dir=args.data_dir)
    log(f"vec_scaling done in {time.perf_counter() - started:.0f} s")
    emit(rep, args.json)


if __name__ == "__main__":
    main()
