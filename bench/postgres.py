"""PostgreSQL as the store, side by side with the SQLite file in the same run.

Four parts (`--part`, all by default):

- `retrieval`: `Memory.retrieve` p50/p99 at each size (TOTALxKEYS), keyword tiers (the
  model off) and hybrid with vectors (the static source: sqlite-vec in the file, pgvector
  on PostgreSQL). The SQLite database is built as `bench.retrieval` builds it and copied
  into PostgreSQL with `memroute store copy`'s code; calls alternate between the stores.
- `writes`: `Memory.add` throughput, one thread and four.
- `gateway`: chat latency with memory off and on (1,000 memories for the key, keyword
  search), the scripted upstream, one client: memory on − off per store.
- `replicas`: requests/s with memory on at 16 and 64 concurrent clients: SQLite (one
  process), PostgreSQL with one replica and with three (`memroute serve` each, the load
  client spreading its connections over them), the gateways' and PostgreSQL's CPU per
  request from /proc. With `--wrk`, Debian's `wrk` sends the non-streamed load, one thread
  per replica (bench/wrk_load.py): on two cores it leaves more of the machine to them.

The server is `--database-url`, else a PostgreSQL 16 with pgvector started for the run by
the `pgserver` package (`pip install pgserver`; it is in memroute's test extras).

    python -m bench.postgres                                 # every part, 10000x1
    python -m bench.postgres --part retrieval --sizes 10000x1 1000000x1000 --queries 500
    python -m bench.postgres --part replicas --seconds 10
    python -m bench.postgres --part replicas --wrk
    python -m bench.postgres --quick
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg

from bench import wrk_load
from bench.common import NO_MODEL, Latency, Report, emit, log, ms, parser, table, verdict, work_dir
from bench.corpus import MemoryGenerator, queries
from bench.dataset import build
from bench.gateway import OFF, ON, SETTINGS, store_memories
from bench.gateway_load import Plan, Upstream, _cpu_s, drain, gateway, measure, upstream
from bench.opened import BenchMemory, open_bench
from bench.retrieval import parse_size
from memroute import Memory
from memroute.config import Config
from memroute.store import SqliteStore
from memroute.store.copy import copy_store
from memroute.store.postgres import PostgresStore

TARGET_KEYWORD_P99_MS = 10.0  # keyword retrieve at 10k memories in one key (the model off)
TARGET_ON_MINUS_OFF_MS = 5.0  # chat overhead, p50
TARGET_REPLICA_SCALING = 2.0  # 3 replicas against 1
STRATEGIES = ("exact", "semantic", "hybrid")
PARTS = ("retrieval", "writes", "gateway", "replicas")


# -- the server --------------------------------------------------------------------------------


@contextlib.contextmanager
def server(url: str | None) -> Iterator[str]:
    """`url`, or a PostgreSQL started for the run (pgserver) and removed after it."""
    if url:
        yield url
        return
    folder = tempfile.mkdtemp(prefix="memroute-bench-pg-")
    runtime = os.path.join(folder, "run")
    os.makedirs(runtime, mode=0o700)
    os.environ.setdefault("XDG_RUNTIME_DIR", runtime)
    try:
        import pgserver
    except ImportError as exc:
        raise SystemExit("bench.postgres needs --database-url or `pip install pgserver`") from exc
    started = pgserver.get_server(os.path.join(folder, "data"), cleanup_mode="stop")
    try:
        yield started.get_uri()
    finally:
        started.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def fresh_database(base: str, name: str) -> str:
    """Database `name` on `base`'s server, empty (dropped first when it exists): its URL."""
    with psycopg.connect(base, autocommit=True) as con:
        con.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")  # type: ignore[arg-type]
        con.execute(f"CREATE DATABASE {name}")  # type: ignore[arg-type]
    return urlsplit(base)._replace(path=f"/{name}").geturl()


def postgres_cpu_s() -> float:
    """CPU seconds of every PostgreSQL process of the machine so far."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if (entry / "comm").read_text().strip() == "postgres":
                    pids.append(int(entry.name))
    return _cpu_s(pids)


def on_postgres(path: Path, url: str, **environ: str) -> Config:
    return Config.for_path(path, environ=environ).with_overrides(database_url=url)


# -- retrieval ---------------------------------------------------------------------------------


@dataclass
class Pair:
    """One case's latencies on each store."""

    label: str
    sqlite: Latency
    postgres: Latency


def _time_pair(
    calls: Sequence[tuple[Callable[[], object], Callable[[], object]]], warmup: int
) -> tuple[Latency, Latency]:
    """Alternate the two stores' calls (`calls[i]` is (sqlite, postgres) of query i)."""
    times: tuple[list[int], list[int]] = ([], [])
    for i, pair in enumerate(calls):
        for side, call in enumerate(pair):
            started = time.perf_counter_ns()
            call()
            if i >= warmup:
                times[side].append(time.perf_counter_ns() - started)
    return Latency(times[0]), Latency(times[1])


def _copied(built_path: str, url: str) -> float:
    """Copy the SQLite database at `built_path` into `url`; the seconds it took."""
    started = time.perf_counter()
    source, target = SqliteStore.open(built_path, load_vec=False), PostgresStore.open(url)
    try:
        copy_store(source, target, source_name=built_path, batch=5000)
    finally:
        source.close()
        target.close()
    return time.perf_counter() - started


def _vacuum(url: str) -> None:
    """What autovacuum does within a minute of a re-index (every memory row rewritten): the
    memories' dead rows gone and their statistics current. Until then the planner, seeing
    every memory still waiting for a vector, reads a key's pending memories (asked at each
    recall) along the primary key: 6 ms at 10,000 memories in one key instead of 0.1."""
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("VACUUM ANALYZE memories")


def _server_like(config: Config, phase: str, notes: list[str], size: str, rows: int) -> BenchMemory:
    """A memory on `config` as a server that has run for a while in `phase`: its settings
    stored (with "static vectors" every memory embedded with the static source and, on
    PostgreSQL, the table vacuumed; else the bundled model off) before its background
    workers start, so none of them embeds with the install's default model while recalls
    are timed; the workers then keep the busy keys' vector copies, as a server's do."""
    with open_bench(config=config, start_workers=False) as mem:
        if phase == "static vectors":
            started = time.perf_counter()
            mem.update_settings(embedding_source="static", static_enabled=True)
            mem.reindex(wait=True)
            took = time.perf_counter() - started
            notes.append(f"{size}: {mem.parts.store.kind} embedded {rows:,} in {took:.0f} s")
            if config.database_url is not None:
                _vacuum(config.database_url)
        else:
            mem.update_settings(**NO_MODEL)
    return open_bench(config=config, start_workers=True)


# (phase, what the phase sets in `Config`): the key indexes in process (a server's default),
# or every keyword search read from the database (no key index: `ts_rank` on PostgreSQL).
PHASES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("keywords", {}),
    ("keywords from SQL", {"recall_index_memories": 0}),
    ("static vectors", {}),
)


def retrieval(
    directory: Path,
    base: str,
    sizes: Sequence[str],
    *,
    seed: int,
    n_queries: int,
    warmup: int,
    phases: Sequence[str] = tuple(name for name, _ in PHASES),
) -> tuple[list[Pair], list[str]]:
    pairs: list[Pair] = []
    notes: list[str] = []
    environ = {"MEMORY_STATIC_CACHE_DIR": str(directory / "embeddings")}
    for text in sizes:
        total, keys = parse_size(text)
        built = build(directory, total, keys, seed)
        url = fresh_database(base, f"bench_{total}x{keys}")
        copy_s = _copied(built.path, url)
        notes.append(
            f"{text}: copied into PostgreSQL in {copy_s:.1f} s ({built.rows / copy_s:,.0f} memories/s)"
        )
        lite_path = Path(built.path).with_name(Path(built.path).stem + "-pg-bench.db")
        shutil.copyfile(built.path, lite_path)
        qs = queries(seed + 1, warmup + n_queries)
        rng = random.Random(seed + 2)
        work = [(rng.choice(built.owners), q) for q in qs]
        try:
            for phase, overrides in (p for p in PHASES if p[0] in phases):
                lite_config = Config.for_path(lite_path, environ=environ).with_overrides(**overrides)
                pg_config = on_postgres(directory / "pg" / "m.db", url, **environ).with_overrides(**overrides)
                pair = (
                    _server_like(lite_config, phase, notes, text, built.rows),
                    _server_like(pg_config, phase, notes, text, built.rows),
                )
                try:
                    for mem in pair:
                        for owner, q in work[:warmup]:
                            mem.retrieve(
                                owner, query=q, strategy="hybrid", max_tokens=2000, record_access=False
                            )
                        mem.settle()
                    for strategy in STRATEGIES:
                        log(f"{text} {phase}: {strategy}")
                        sqlite_lat, pg_lat = _time_pair(_calls(pair, work, strategy), warmup)
                        pairs.append(Pair(f"{text} {phase} {strategy}", sqlite_lat, pg_lat))
                finally:
                    for mem in pair:
                        mem.close()
        finally:
            lite_path.unlink(missing_ok=True)
    return pairs, notes


def _calls(
    pair: tuple[BenchMemory, BenchMemory], work: Sequence[tuple[str, str]], strategy: str
) -> list[tuple[Callable[[], object], Callable[[], object]]]:
    """For each (owner, query) of `work`: the retrieve call on each memory of `pair`."""

    def call(mem: BenchMemory, owner: str, query: str) -> Callable[[], object]:
        return lambda: mem.retrieve(
            owner, query=query, strategy=strategy, max_tokens=2000, record_access=False
        )

    return [(call(pair[0], owner, q), call(pair[1], owner, q)) for owner, q in work]


# -- writes ------------------------------------------------------------------------------------


def writes(directory: Path, base: str, *, n: int, seed: int) -> list[tuple[str, float, float]]:
    """(case, SQLite adds/s, PostgreSQL adds/s) for one thread and four."""
    rows = []
    for threads in (1, 4):
        rates = []
        for kind in ("sqlite", "postgresql"):
            path = directory / f"writes-{threads}.db"
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            config = Config.for_path(path, environ={})
            if kind == "postgresql":
                config = config.with_overrides(database_url=fresh_database(base, f"bench_writes_{threads}"))
            mem = Memory.open(config=config, start_workers=False)
            try:
                mem.update_settings(**NO_MODEL)
                generated = list(MemoryGenerator(seed).for_owner(n))

                def add_some(
                    part: int, mem: Memory = mem, generated: list[Any] = generated, threads: int = threads
                ) -> None:
                    for g in generated[part::threads]:
                        mem.add(f"key-{part}", g.content, key=g.key, type=g.type)

                started = time.perf_counter()
                workers = [threading.Thread(target=add_some, args=(i,)) for i in range(threads)]
                for worker in workers:
                    worker.start()
                for worker in workers:
                    worker.join()
                rates.append(n / (time.perf_counter() - started))
            finally:
                mem.close()
            log(f"writes {kind} threads={threads}: {rates[-1]:,.0f}/s")
        rows.append((f"{threads} thread{'s' if threads > 1 else ''}", rates[0], rates[1]))
    return rows


# -- the gateway and replicas -----------------------------------------------------------------


@dataclass
class Replicas:
    """Several gateways on one database, measured as one (the load client spreads its
    connections over their URLs)."""

    gateways: list[Any]

    @property
    def url(self) -> str:
        return ",".join(g.url for g in self.gateways)

    def cpu_s(self) -> float:
        return sum(g.cpu_s() for g in self.gateways)


@contextlib.contextmanager
def replicas(db: Path, up: Upstream, count: int, url: str | None) -> Iterator[Replicas]:
    env = {"MEMROUTE_DATABASE_URL": url} if url else {}
    with contextlib.ExitStack() as stack:
        started = [
            stack.enter_context(
                gateway(db.with_name(f"{db.stem}-{n}.db") if url else db, up.url, 1, extra_env=env)
            )
            for n in range(count)
        ]
        yield Replicas(started)


def chats(
    directory: Path, base: str, plan: Plan, *, seed: int, counts: Sequence[tuple[str, int]]
) -> list[dict[str, Any]]:
    """Every (store, replicas) of `counts`: memory off and on, one client and `plan`'s
    concurrency; the runs with the PostgreSQL CPU per request beside the gateways'."""
    results = []
    with upstream() as up:
        for kind, count in counts:
            db = directory / f"chat-{kind}.db"
            url = fresh_database(base, f"bench_chat_{count}") if kind == "postgresql" else None
            for stale in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
                stale.unlink(missing_ok=True)
            config = Config.for_path(db, environ={}).with_overrides(database_url=url)
            side = Memory.open(config=config, start_workers=False)
            key, secret = side.keys.create("bench")
            side.update_settings(enabled=False, **NO_MODEL)
            store_memories(side, key.id, plan.memories, seed)
            qs = queries(seed + 1, plan.questions)
            with replicas(db, up, count, url) as gw:
                for case in (OFF, ON):
                    side.update_settings(SETTINGS[case])
                    pg_before = postgres_cpu_s()
                    runs = measure(plan, up, secret, qs, case, count, gw, 0.0, lambda side=side: drain(side))
                    pg_cpu = postgres_cpu_s() - pg_before
                    sent = sum(r.latency.n for r in runs) or 1
                    results.append(
                        {
                            "store": kind,
                            "replicas": count,
                            "case": case,
                            "runs": runs,
                            "postgres_cpu_ms": pg_cpu * 1000 / sent if kind == "postgresql" else 0.0,
                        }
                    )
            side.close()
    return results


# -- the report --------------------------------------------------------------------------------


def report(parts: dict[str, Any], plan: Plan) -> Report:
    rep = Report("PostgreSQL as the store, beside SQLite")
    if "retrieval" in parts:
        _retrieval_report(rep, *parts["retrieval"])
    if "writes" in parts:
        rep.data["writes"] = parts["writes"]
        rep.add("`mem.add` throughput (memories/s), the model off:")
        rep.add(
            table(
                ["threads", "SQLite", "PostgreSQL"],
                [[c, f"{a:,.0f}", f"{b:,.0f}"] for c, a, b in parts["writes"]],
            )
        )
    if "chats" in parts:
        _chats_report(rep, parts["chats"], plan)
    return rep


def _retrieval_report(rep: Report, pairs: Sequence[Pair], notes: Sequence[str]) -> None:
    rows = []
    for pair in pairs:
        gate = "—"
        if pair.label.startswith("10000x1 keywords") and pair.label.endswith(("semantic", "hybrid")):
            met = pair.postgres.p99 <= TARGET_KEYWORD_P99_MS
            gate = f"p99 ≤ {TARGET_KEYWORD_P99_MS:g}: {verdict(met)}"
        rows.append(
            [
                pair.label,
                ms(pair.sqlite.p50),
                ms(pair.sqlite.p99),
                ms(pair.postgres.p50),
                ms(pair.postgres.p99),
                gate,
            ]
        )
        rep.data[f"retrieve/{pair.label}"] = {
            "sqlite": pair.sqlite.to_dict(),
            "postgresql": pair.postgres.to_dict(),
        }
    rep.add(
        "`mem.retrieve(key, query, strategy, max_tokens=2000)`, each query to a random key,"
        " the two stores in turn; ms."
    )
    rep.add(table(["case", "SQLite p50", "SQLite p99", "PostgreSQL p50", "PostgreSQL p99", "target"], rows))
    rep.add("\n".join(f"- {n}" for n in notes))


def _chats_report(rep: Report, results: Sequence[dict[str, Any]], plan: Plan) -> None:
    rows = []
    by: dict[tuple[str, int, str, bool, int], Any] = {}
    for result in results:
        for run in result["runs"]:
            by[(result["store"], result["replicas"], result["case"], run.stream, run.concurrency)] = run
            pg_cpu = f"{result['postgres_cpu_ms']:.1f}" if result["store"] == "postgresql" else "—"
            rows.append(
                [
                    result["store"],
                    result["replicas"],
                    result["case"],
                    "stream" if run.stream else "—",
                    run.concurrency,
                    ms(run.latency.p50),
                    ms(run.latency.p99),
                    f"{run.per_s:.0f}",
                    "—" if run.cpu_ms is None else f"{run.cpu_ms:.1f}",
                    pg_cpu,
                ]
            )
    rep.add(
        "Chats through the gateway (scripted upstream, "
        + ("wrk for the non-streamed runs, " if plan.wrk is not None else "")
        + "`bench.load_client` in its own process); latency in"
        " ms, gateway CPU per request, PostgreSQL's CPU per request over the case's runs."
    )
    headers = ["store", "replicas", "case", "stream", "clients", "p50", "p99", "req/s", "gateway CPU ms"]
    rep.add(table([*headers, "PostgreSQL CPU ms"], rows))
    lines = []
    for kind in ("sqlite", "postgresql"):
        on, off = by.get((kind, 1, ON, False, 1)), by.get((kind, 1, OFF, False, 1))
        if on and off:
            over = on.latency.p50 - off.latency.p50
            gate = f" (target ≤ {TARGET_ON_MINUS_OFF_MS:g} ms: {verdict(over <= TARGET_ON_MINUS_OFF_MS)})"
            gate = "" if kind == "sqlite" else gate
            lines.append(f"- {kind}: memory on − off at one client, p50 {ms(over)} ms{gate}")
            rep.data[f"on_minus_off/{kind}"] = over
    top = max(plan.concurrency)
    one, three = by.get(("postgresql", 1, ON, False, top)), by.get(("postgresql", 3, ON, False, top))
    if one and three:
        scale = three.per_s / max(one.per_s, 1e-9)
        met = verdict(scale >= TARGET_REPLICA_SCALING)
        lines.append(
            f"- PostgreSQL, memory on, {top} clients: 3 replicas {three.per_s:.0f}/s against 1 replica"
            f" {one.per_s:.0f}/s = ×{scale:.2f} (target ×{TARGET_REPLICA_SCALING:g}: {met})"
        )
        rep.data["replica_scaling"] = scale
    rep.add("\n".join(lines))


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__ or "")
    ap.add_argument("--part", choices=PARTS, action="append", help="what to run (default: every part)")
    ap.add_argument("--sizes", nargs="*", default=["10000x1"])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument(
        "--phases",
        default=",".join(name for name, _ in PHASES),
        help="retrieval phases, comma-separated (default: all)",
    )
    ap.add_argument("--writes", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=5.0)
    wrk_load.add_option(ap)
    ap.add_argument(
        "--database-url", default=None, help="a PostgreSQL server to use (a database is made per part)"
    )
    args = ap.parse_args(argv)
    chosen = args.part or list(PARTS)
    quick = args.quick
    plan = Plan(concurrency=(1, 16, 64), seconds=args.seconds, memories=1000, questions=400)
    if quick:
        plan = Plan(concurrency=(1, 8), seconds=1.0, warmup_s=0.3, memories=200, questions=100)
    if args.wrk:
        plan = replace(plan, wrk=wrk_load.executable(args.wrk))
    sizes = ["2000x1"] if quick else args.sizes
    n_queries, warmup = (30, 10) if quick else (args.queries, 50)
    parts: dict[str, Any] = {}
    with server(args.database_url) as base, work_dir(args.data_dir) as directory:
        if "retrieval" in chosen:
            phases = [name.strip() for name in args.phases.split(",") if name.strip()]
            parts["retrieval"] = retrieval(
                directory, base, sizes, seed=args.seed, n_queries=n_queries, warmup=warmup, phases=phases
            )
        if "writes" in chosen:
            parts["writes"] = writes(directory, base, n=200 if quick else args.writes, seed=args.seed)
        counts = []
        if "gateway" in chosen or "replicas" in chosen:
            counts = [("sqlite", 1), ("postgresql", 1)]
            if "replicas" in chosen:
                counts.append(("postgresql", 3))
            parts["chats"] = chats(directory, base, plan, seed=args.seed, counts=counts)
    emit(report(parts, plan), args.json)


if __name__ == "__main__":
    main()
