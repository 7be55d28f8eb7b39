"""Insert throughput with FTS and history: `Memory.add`, one writer.

Cases (all through `mem.add`, so validation, the keyed upsert, the FTS trigger and
the history row are included):

- autocommit: one transaction per call, what the REST API does;
- batched: `with mem.transaction():` around BATCH calls (each call is then a savepoint);
- one key: every add goes to the same key, so the key grows to N memories;
- populated: autocommit adds into a database that already holds BASE memories;
- synchronous=full: autocommit with `MEMROUTE_SQLITE_SYNCHRONOUS=full` (an fsync per commit).

    python -m bench.insert                     # N=20000 over 100 keys, base 100000
    python -m bench.insert --n 50000 --keys 500 --base 1000000
    python -m bench.insert --quick
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import Latency, Report, emit, log, ms, parser, table, verdict, work_dir
from bench.corpus import GeneratedMemory, MemoryGenerator
from bench.dataset import build, owner_ids
from memroute import Memory
from memroute.config import Config

TARGET_PER_S = 2_000
BATCH = 1_000


@dataclass(slots=True)
class Case:
    label: str
    n: int
    seconds: float
    latency: Latency
    note: str = ""

    @property
    def per_s(self) -> float:
        return self.n / self.seconds


def workload(seed: int, owners: Sequence[str], n: int) -> list[tuple[str, GeneratedMemory]]:
    """`n` memories, dealt round-robin over `owners` (each owner's keys unique)."""
    gen = MemoryGenerator(seed)
    per_owner = -(-n // len(owners))
    streams: list[Iterator[GeneratedMemory]] = [gen.for_owner(per_owner) for _ in owners]
    out: list[tuple[str, GeneratedMemory]] = []
    while len(out) < n:
        for owner, stream in zip(owners, streams, strict=True):
            out.append((owner, next(stream)))
            if len(out) == n:
                break
    return out


def add_generated(mem: Memory, owner: str, g: GeneratedMemory) -> None:
    """`mem.add` of one generated memory, as the API would store it."""
    mem.add(
        owner,
        g.content,
        key=g.key,
        type=g.type,
        session_id=g.session_id,
        metadata=g.metadata,
        expires_at=g.expires_at,
    )


def autocommit(mem: Memory, work: list[tuple[str, GeneratedMemory]], label: str, note: str = "") -> Case:
    clock = time.perf_counter_ns
    samples = []
    start = clock()
    for owner, g in work:
        t = clock()
        add_generated(mem, owner, g)
        samples.append(clock() - t)
    return Case(label, len(work), (clock() - start) / 1e9, Latency(samples), note)


def batched(mem: Memory, work: list[tuple[str, GeneratedMemory]], label: str) -> Case:
    """Per-transaction times (BATCH adds each) are the samples."""
    clock = time.perf_counter_ns
    samples = []
    start = clock()
    for i in range(0, len(work), BATCH):
        t = clock()
        with mem.transaction():
            for owner, g in work[i : i + BATCH]:
                add_generated(mem, owner, g)
        samples.append(clock() - t)
    return Case(label, len(work), (clock() - start) / 1e9, Latency(samples), f"{BATCH} adds per transaction")


def _open(path: Path, synchronous: str = "normal") -> Memory:
    config = Config.for_path(path).with_overrides(sqlite_synchronous=synchronous)
    return Memory.open(config=config, start_workers=False)


def run(
    *, n: int, keys: int, one_key_n: int, base: int, seed: int, data_dir: Path | None, repeats: int = 3
) -> Report:
    cases: list[Case] = []
    with work_dir(None) as tmp, work_dir(data_dir) as cache:
        owners = owner_ids(seed + 7, keys)
        work = workload(seed + 8, owners, n)

        runs = []
        for i in range(repeats):
            log(f"autocommit: {n} adds over {keys} keys (run {i + 1}/{repeats})")
            with _open(tmp / f"auto-{i}.db") as mem:
                runs.append(autocommit(mem, work, "autocommit", f"empty database, {keys} keys"))
        runs.sort(key=lambda c: c.per_s)
        median = runs[len(runs) // 2]
        if repeats > 1:
            median.note += f"; median of {repeats} runs: " + ", ".join(f"{c.per_s:,.0f}" for c in runs) + "/s"
        cases.append(median)

        log(f"batched: {n} adds over {keys} keys")
        with _open(tmp / "batched.db") as mem:
            cases.append(batched(mem, work, "batched"))

        log(f"one key: {one_key_n} adds")
        single = workload(seed + 9, owner_ids(seed + 9, 1), one_key_n)
        with _open(tmp / "onekey.db") as mem:
            case = autocommit(mem, single, "autocommit, one key", f"one key grows 0 → {one_key_n:,}")
        tail = Latency(case.latency.samples[-max(1, one_key_n // 10) :])
        head = Latency(case.latency.samples[: max(1, one_key_n // 10)])
        case.note += f"; first 10 %: {1000 / head.mean:,.0f}/s, last 10 %: {1000 / tail.mean:,.0f}/s"
        cases.append(case)

        if base:
            base_keys = max(1, base // 1000)
            built = build(cache, base, base_keys, seed)
            path = tmp / "populated.db"
            shutil.copyfile(built.path, path)
            log(f"populated: {n} adds into {base} memories")
            pop_work = workload(seed + 10, built.owners[: min(keys, base_keys)], n)
            with _open(path) as mem:
                cases.append(
                    autocommit(
                        mem,
                        pop_work,
                        "autocommit, populated",
                        f"database already holds {built.rows:,} memories ({built.per_key:,}/key)",
                    )
                )

        small = work[: max(1, n // 10)]
        log(f"synchronous=full: {len(small)} adds")
        with _open(tmp / "full.db", "full") as mem:
            cases.append(autocommit(mem, small, "autocommit, synchronous=full", "fsync per commit"))
    return report(cases)


def report(cases: list[Case]) -> Report:
    rep = Report("Insert throughput (FTS + history)")
    rows = []
    data: dict[str, Any] = {}
    for c in cases:
        target = (
            f"≥ {TARGET_PER_S:,}/s: {verdict(c.per_s >= TARGET_PER_S)}" if c.label == "autocommit" else "—"
        )
        unit = "per transaction" if c.label == "batched" else "per add"
        rows.append(
            [
                c.label,
                f"{c.n:,}",
                f"{c.per_s:,.0f}",
                f"{ms(c.latency.p50)} / {ms(c.latency.p99)} / {ms(c.latency.max)} ({unit})",
                c.note,
                target,
            ]
        )
        data[c.label] = {"n": c.n, "seconds": c.seconds, "per_s": c.per_s, **c.latency.to_dict()}
    rep.add(
        "Single writer, `mem.add(key, content, key=…, type=…, metadata=…)`; the memories mix "
        "extraction-style keyed facts and free-text facts. p50 / p99 / max in ms."
    )
    rep.add(table(["case", "memories", "memories/s", "p50 / p99 / max ms", "notes", "target"], rows))
    rep.data = data
    return rep


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000, help="adds per case (default 20000)")
    ap.add_argument("--keys", type=int, default=100, help="api keys the adds are spread over (default 100)")
    ap.add_argument("--one-key", type=int, default=10_000, help="adds in the one-key case (default 10000)")
    ap.add_argument(
        "--base",
        type=int,
        default=100_000,
        help="memories already in the database of the populated case, 1000/key (0 = skip)",
    )
    ap.add_argument("--repeats", type=int, default=3, help="runs of the autocommit case, median reported")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.keys, args.one_key, args.base, args.repeats = 1_000, 10, 1_000, 5_000, 1
    emit(
        run(
            n=args.n,
            keys=args.keys,
            one_key_n=args.one_key,
            base=args.base,
            seed=args.seed,
            repeats=args.repeats,
            data_dir=args.data_dir,
        ),
        args.json,
    )


if __name__ == "__main__":
    main()
