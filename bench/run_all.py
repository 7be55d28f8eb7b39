"""Run every benchmark at a moderate size and print a markdown summary (`make bench`).

python -m bench.run_all            # moderate sizes (a few minutes on 2 cores)
python -m bench.run_all --quick    # quick run (well under a minute)
python -m bench.run_all --smoke    # the smallest sizes that still run every step (the test suite's run)
python -m bench.run_all --full     # the sizes of docs/benchmarks.md (1M memories; ~30 min)
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from bench import db_size, extraction, gateway, insert, retrieval, semantic
from bench.common import (
    Report,
    cpu_reference,
    log,
    machine,
    machine_markdown,
    ms,
    parser,
    table,
    verdict,
    work_dir,
)

MODERATE = {
    "sizes": ("10000x1", "100000x100"),
    "queries": 300,
    "warmup": 50,
    "insert": {"n": 10_000, "keys": 100, "one_key_n": 5_000, "base": 100_000},
    "extraction": {"n_texts": 30, "repeats": 3, "n_messages": 2_000, "n_big": 50},
    "gateway": gateway.MODERATE,
    "semantic": semantic.MODERATE,
}
QUICK = {
    "sizes": retrieval.QUICK_SIZES,
    "queries": 40,
    "warmup": 10,
    "insert": {"n": 1_000, "keys": 10, "one_key_n": 1_000, "base": 2_000, "repeats": 1},
    "extraction": {"n_texts": 5, "repeats": 1, "n_messages": 100, "n_big": 5},
    "gateway": gateway.QUICK,
    "semantic": semantic.QUICK,
}
# Every benchmark end to end, each step on a handful of items: tests/test_bench_smoke.py.
SMOKE = {
    "sizes": ("500x1", "1500x3"),
    "queries": 10,
    "warmup": 2,
    "insert": {"n": 200, "keys": 5, "one_key_n": 200, "base": 500, "repeats": 1},
    "extraction": {"n_texts": 4, "repeats": 1, "n_messages": 20, "n_big": 2},
    "gateway": gateway.SMOKE,
    "semantic": semantic.SMOKE,
}
FULL = {
    "sizes": retrieval.DEFAULT_SIZES,
    "queries": 500,
    "warmup": 50,
    "insert": {"n": 20_000, "keys": 100, "one_key_n": 10_000, "base": 1_000_000},
    "extraction": {"n_texts": 30, "repeats": 3, "n_messages": 2_000, "n_big": 50},
    "gateway": gateway.FULL,
    "semantic": semantic.FULL,
}


def summary(
    ret: Report,
    ins: Report,
    ext: Report,
    size: Report,
    gw: Report | None = None,
    sem: Report | None = None,
) -> str:
    rows: list[list[Any]] = []
    for name, figures in ret.data.items():
        size_label, _, case = name.partition("/")
        total, keys = retrieval.parse_size(size_label)
        if case == "db":
            continue
        gated = total // keys >= retrieval.TARGET_PER_KEY and case in retrieval.STRATEGIES
        p99 = figures["p99_ms"]
        rows.append(
            [
                f"retrieval p50 / p99, {case}, {total:,} memories in {keys:,} key(s)",
                f"p99 ≤ {retrieval.TARGET_P99_MS:g} ms" if gated else "— (target is for 10k/key)",
                f"{ms(figures['p50_ms'])} / {ms(p99)} ms",
                verdict(p99 <= retrieval.TARGET_P99_MS) if gated else "—",
            ]
        )
    auto = ins.data["autocommit"]["per_s"]
    rows.append(
        [
            "insert, `mem.add` autocommit",
            f"≥ {insert.TARGET_PER_S:,}/s",
            f"{auto:,.0f}/s",
            verdict(auto >= insert.TARGET_PER_S),
        ]
    )
    for name, figures in ext.data.items():
        if name.startswith(("realistic", "worst")):
            p99 = figures["p99_ms"]
            rows.append(
                [
                    f"extraction p99, 64 KiB, {name}",
                    f"≤ {extraction.TARGET_MS:g} ms",
                    f"{ms(p99)} ms",
                    verdict(p99 <= extraction.TARGET_MS),
                ]
            )
    for name, figures in size.data.items():
        rows.append(
            [
                f"database size, {name.replace('x', ' memories / ')} keys",
                "—",
                f"{figures['bytes_per_memory']:,.0f} B/memory",
                "—",
            ]
        )
    if gw is not None:
        rows.extend(gateway.summary_rows(gw))
    if sem is not None:
        rows.extend(semantic.summary_rows(sem))
    return table(["benchmark", "target", "result", "verdict"], rows)


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the full sizes (1,000,000 memories over 1,000 keys)")
    ap.add_argument("--smoke", action="store_true", help="every step of --quick on fewer items")
    args = ap.parse_args(argv)
    plan = SMOKE if args.smoke else QUICK if args.quick else FULL if args.full else MODERATE
    info = machine()  # includes the CPU reference at the start of the run
    started = time.perf_counter()
    with work_dir(args.data_dir) as data_dir:
        ret = retrieval.run(
            plan["sizes"], seed=args.seed, n_queries=plan["queries"], warmup=plan["warmup"], data_dir=data_dir
        )
        size = db_size.run(plan["sizes"], seed=args.seed, data_dir=data_dir)
        ins = insert.run(**plan["insert"], seed=args.seed, data_dir=data_dir)
        ext = extraction.run(seed=args.seed, **plan["extraction"])
        gw = gateway.run(plan["gateway"], seed=args.seed, data_dir=data_dir)
        sem = semantic.run(
            plan["semantic"],
            seed=args.seed,
            data_dir=data_dir,
            model_dir=semantic.default_model_dir(args.data_dir),
        )
    log(f"all benchmarks done in {time.perf_counter() - started:.0f} s")
    print("# memroute benchmarks\n")
    end = cpu_reference()
    print(machine_markdown(info))
    print(
        f"(CPU reference again at the end of the run: best {end['best_ms']:.0f} ms, "
        f"median {end['median_ms']:.0f} ms.)\n"
    )
    print(summary(ret, ins, ext, size, gw, sem) + "\n")
    for rep in (ret, ins, ext, size, gw, sem):
        print(rep.markdown(level=2) + "\n")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {"machine": machine(), **{r.title: r.data for r in (ret, ins, ext, size, gw, sem)}},
                indent=2,
                default=str,
            )
        )


if __name__ == "__main__":
    main()
