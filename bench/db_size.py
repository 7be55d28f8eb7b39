"""Database size per memory: file + WAL after `PRAGMA wal_checkpoint(TRUNCATE)`, over the count.

Also breaks the file down per table and index (SQLite's `dbstat`), so it shows
where the bytes go. Databases are built as in bench.retrieval (10k-row
transactions through the store), so `--data-dir` shares them with it.

    python -m bench.db_size                       # 10000x1 and 1000000x1000
    python -m bench.db_size 10000x1 200000x200
    python -m bench.db_size --quick
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench.common import Report, emit, human_bytes, parser, table, work_dir
from bench.dataset import BuiltDb, build, group_breakdown
from bench.retrieval import DEFAULT_SIZES, QUICK_SIZES, parse_size


def report(dbs: list[BuiltDb]) -> Report:
    rep = Report("Database size per memory")
    rows = []
    data = {}
    for b in dbs:
        groups = group_breakdown(b.breakdown)
        rows.append(
            [
                f"{b.rows:,} / {b.keys:,} keys",
                human_bytes(b.size["file"]),
                human_bytes(b.size["wal"]),
                f"{b.bytes_per_memory:,.0f}",
                *(f"{groups[g] / b.rows:,.0f}" for g in groups),
            ]
        )
        data[f"{b.total}x{b.keys}"] = {
            "rows": b.rows,
            **b.size,
            "bytes_per_memory": b.bytes_per_memory,
            "breakdown": b.breakdown,
        }
    groups_header = list(group_breakdown({}).keys())
    rep.add(
        "File + WAL after `PRAGMA wal_checkpoint(TRUNCATE)`, divided by the number of memories; "
        "the last columns split the bytes per memory by table (dbstat). Every memory also has one "
        "history row (its ADD event)."
    )
    rep.add(table(["memories", "file", "WAL", "bytes/memory", *(f"{g} B/mem" for g in groups_header)], rows))
    if dbs:
        b = dbs[-1]
        top = sorted(b.breakdown.items(), key=lambda kv: -kv[1])[:12]
        rep.add(
            f"Largest objects at {b.rows:,} memories:\n\n"
            + table(
                ["table / index", "size", "bytes/memory"],
                [[f"`{name}`", human_bytes(size), f"{size / b.rows:,.0f}"] for name, size in top],
            )
        )
    rep.data = data
    return rep


def run(sizes: Sequence[str], *, seed: int, data_dir: Path | None) -> Report:
    with work_dir(data_dir) as directory:
        return report([build(directory, *parse_size(s), seed) for s in sizes])


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", help=f"TOTALxKEYS, default {' '.join(DEFAULT_SIZES)}")
    args = ap.parse_args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES)
    emit(run(sizes, seed=args.seed, data_dir=args.data_dir), args.json)


if __name__ == "__main__":
    main()
