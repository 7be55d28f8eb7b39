"""Export and import throughput: a key's memories out as JSON Lines and into a fresh
database, through the library (`Memory.export`, `Memory.import_`: what the CLI's
`memroute export` / `memroute import`, the REST API and a backup and restore do).

Cases, each over every memory of a database built as bench.retrieval builds them
(`--data-dir` shares them), best of `--rounds`:

- export: every memory as its wire object (`to_wire`: camelCase, metadata decoded);
- export + encode: the same, each line JSON-encoded as `memroute export` writes it;
- import: those lines into a new database (parsed, validated, secrets masked, upserted
  500 records a transaction, with their FTS rows and history);
- re-import: the same lines again into that database (every record found identical: skipped).

    python -m bench.portability                  # 20,000 memories over 10 keys, 3 rounds
    python -m bench.portability --memories 100000 --keys 100
    python -m bench.portability --quick
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.common import Report, emit, log, parser, remove_database, table, work_dir
from bench.dataset import build
from bench.opened import open_bench


def best_of(rounds: int, work: Callable[[int], int]) -> tuple[float, int]:
    """The fastest of `rounds` calls of `work(round)` in seconds, and the count it returned."""
    best, count = float("inf"), 0
    for number in range(rounds):
        started = time.perf_counter()
        count = work(number)
        best = min(best, time.perf_counter() - started)
    return best, count


def run(directory: Path, memories: int, keys: int, seed: int, rounds: int) -> Report:
    built = build(directory, memories, keys, seed)
    source = open_bench(Path(built.path), start_workers=False)
    lines: list[str] = []
    try:
        log(f"export: {built.rows:,} memories, {rounds} rounds")
        export_s, exported = best_of(rounds, lambda _n: sum(1 for _ in source.export()))
        encode_s, _ = best_of(rounds, lambda _n: len([json.dumps(r) for r in source.export()]))
        lines = [json.dumps(record) for record in source.export()]
    finally:
        source.close()
    targets = [directory / f"import-{number}.db" for number in range(rounds)]
    opened: list[Any] = []

    def import_into(number: int) -> int:
        remove_database(targets[number])
        target = open_bench(targets[number], start_workers=False)
        opened.append(target)
        return int(target.import_(lines).imported)

    try:
        log(f"import: {len(lines):,} lines, {rounds} rounds")
        import_s, imported = best_of(rounds, import_into)
        reimport_s, _ = best_of(rounds, lambda n: int(opened[n].import_(lines).skipped))
    finally:
        for target in opened:
            target.close()
        for path in targets:
            remove_database(path)
    figures = {
        "memories": exported,
        "export_per_s": exported / export_s,
        "export_encoded_per_s": exported / encode_s,
        "import_per_s": imported / import_s,
        "reimport_per_s": imported / reimport_s,
        "imported": imported,
    }
    report = Report("Export and import")
    report.add(
        f"{exported:,} memories over {keys:,} keys (best of {rounds}): `Memory.export()` (wire objects), "
        "the same JSON-encoded per line, `Memory.import_()` of those lines into a new database, "
        "and again into that one (every record already there: skipped)."
    )
    report.add(
        table(
            ["case", "memories/s", "seconds"],
            [
                ["export", f"{figures['export_per_s']:,.0f}", f"{export_s:.3f}"],
                ["export + JSON encode", f"{figures['export_encoded_per_s']:,.0f}", f"{encode_s:.3f}"],
                ["import into a new database", f"{figures['import_per_s']:,.0f}", f"{import_s:.3f}"],
                ["re-import (all skipped)", f"{figures['reimport_per_s']:,.0f}", f"{reimport_s:.3f}"],
            ],
        )
    )
    report.data = figures
    return report


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__ or "")
    ap.add_argument("--memories", type=int, default=20_000, help="memories in the database (20000)")
    ap.add_argument("--keys", type=int, default=10, help="keys they are spread over (10)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds; the best counts (3)")
    args = ap.parse_args(argv)
    memories, keys, rounds = (500, 2, 1) if args.quick else (args.memories, args.keys, args.rounds)
    with work_dir(args.data_dir) as directory:
        emit(run(directory, memories, keys, args.seed, rounds), args.json)


if __name__ == "__main__":
    main()
