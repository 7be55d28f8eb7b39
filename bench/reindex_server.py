"""Re-index through the server: how fast a running gateway embeds its memories after the
bundled MiniLM is switched on.

The turns of the `conversations` quality set (2,703 memories, ten keys) are stored with no
embedding source; a server process starts on that file (as `memroute serve` runs it); then
`PUT /api/settings/memory` switches MiniLM on and the clock runs until no memory waits for a
vector. Reported: memories per second from the switch (the model's load included) and from
the first stored vector (the worker's own pace).

    python -m bench.reindex_server              # 2 runs
    python -m bench.reindex_server --runs 3
    python -m bench.reindex_server --quick      # 300 memories, 1 run

Target (issue 16): ≥ 300 memories/s through the server on 2 cores.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import apsw
import httpx

from bench.common import NO_MODEL, Report, emit, log, parser, remove_database, table, verdict, work_dir
from bench.gateway import ADMIN_TOKEN, launch
from bench.quality_sets import SETS
from memroute import Memory

TARGET_PER_S = 300.0
MINILM = {"embeddingSource": "transformers", "transformersEnabled": True}
QUICK_MEMORIES = 300


def store_turns(db: Path, limit: int | None) -> int:
    """The conversation set's turns stored in `db`, no embedding source on; how many."""
    remove_database(db)
    memories = SETS["conversations"]().memories[:limit]
    with Memory.open(db, start_workers=False) as side:
        side.update_settings(**NO_MODEL)  # the server starts with nothing to embed with
        for m in memories:
            side.add(
                m.owner, m.content, type=m.type, session_id=m.session_id, metadata=dict(m.metadata or {})
            )
    return len(memories)


def waiting(con: apsw.Connection) -> int:
    """Memories waiting for a vector (read from the file: asking the service for its status
    would load the model in this process too)."""
    return int(con.execute("SELECT count(*) FROM memories WHERE needs_reindex = 1").fetchone()[0])


def one_run(db: Path, stored: int) -> tuple[float, float]:
    """Seconds from the switch to the last vector, and from the first stored vector to it."""
    with (
        launch("echo", in_process=False) as upstream,
        launch("gateway", in_process=False, db=db, upstream_url=upstream.url) as gateway,
        httpx.Client(base_url=gateway.url, headers={"authorization": f"Bearer {ADMIN_TOKEN}"}) as api,
    ):
        con = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        switched = time.perf_counter()
        answer = api.put("/api/settings/memory", json=MINILM, timeout=60)
        answer.raise_for_status()
        first: float | None = None
        while (left := waiting(con)) > 0:
            if first is None and left < stored:
                first = time.perf_counter()
            if time.perf_counter() - switched > 1800:
                raise RuntimeError(f"the re-index did not finish ({left} memories waiting)")
            time.sleep(0.05)
        done = time.perf_counter()
        con.close()
    return done - switched, done - (first if first is not None else switched)


def run(runs: int, limit: int | None, data_dir: Path | None) -> Report:
    rep = Report("Re-index through the server")
    rows: list[list[str]] = []
    rates: list[float] = []
    with work_dir(data_dir) as directory:
        db = directory / "reindex-server.db"
        for number in range(1, runs + 1):
            stored = store_turns(db, limit)
            whole, paced = one_run(db, stored)
            rates.append(stored / whole)
            log(f"run {number}: {stored} memories in {whole:.1f} s ({stored / whole:.0f}/s)")
            rows.append(
                [str(number), f"{stored:,}", f"{whole:.1f}", f"{stored / whole:.0f}", f"{stored / paced:.0f}"]
            )
    rep.add(
        "The conversation set's turns stored with no embedding source; a server process on the file; "
        "`PUT /api/settings/memory` switches the bundled MiniLM on; timed until no memory waits for a vector."
    )
    rep.add(
        table(
            [
                "run",
                "memories",
                "seconds from the switch",
                "memories/s (model load included)",
                "memories/s after the first vector",
            ],
            rows,
        )
    )
    worst = min(rates)
    rep.add(
        table(
            ["figure", "target", "result", "verdict"],
            [
                [
                    "re-index with MiniLM through the server, memories/s (slowest run)",
                    f"≥ {TARGET_PER_S:g}",
                    f"{worst:.0f}",
                    verdict(worst >= TARGET_PER_S),
                ]
            ],
        )
    )
    rep.data = {"per_s": rates, "target_per_s": TARGET_PER_S}
    return rep


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2, help="runs, each on a fresh file (default 2)")
    args = ap.parse_args(argv)
    runs, limit = (1, QUICK_MEMORIES) if args.quick else (args.runs, None)
    emit(run(runs, limit, args.data_dir), args.json)


if __name__ == "__main__":
    main()
