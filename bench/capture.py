"""Turn capture: how fast the extraction worker keeps chat turns, and what a kept turn costs on disk.

Turns are realistic chat messages (one short sentence to a few sentences, some with a
first-person statement, ~10 % that say nothing such as "ok" or "thanks!"), spread over
10 keys, 50 sessions and two named speakers each, queued with `Memory.enqueue_turn` as
the gateway queues them (redacted, `captureTurns` user). The worker then drains the
queue alone; the figure is kept turns per second of that drain. Bytes per turn: the
database file plus its WAL after a TRUNCATE checkpoint, over the turns queued, with the
part of each table and index (`dbstat`).

    python -m bench.capture                  # 100,000 turns
    python -m bench.capture --turns 20000
    python -m bench.capture --quick          # 5,000 turns
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.common import NO_MODEL, Report, emit, human_bytes, log, parser, table, verdict, work_dir
from bench.corpus import Picker, chat_message
from bench.dataset import group_breakdown, measure_size
from memroute import Memory
from memroute.service.turn_queue import ChatTurn

TARGET_TURNS_PER_S = 1000.0
TARGET_BYTES_PER_TURN = 1536
KEYS = 10
SESSIONS = 50
_SHORT = (
    "We went hiking at the lake on Saturday and it rained the whole time.",
    "My sister is visiting next week, so the flat is chaos.",
    "Did you ever finish that book about the lighthouse keeper?",
    "Work has been intense, the release slipped again.",
    "The kids loved the museum, especially the dinosaur hall.",
    "I started running in the mornings before work.",
)
_NOTHING = ("ok", "thanks!", "lol", "haha yes", "\U0001f44d", "sure")


def turn_text(p: Picker, number: int) -> str:
    """One chat turn: short, a few sentences, or (one in ten) nothing worth keeping."""
    roll = p.rng.random()
    if roll < 0.1:
        return p.uniform(_NOTHING)
    if roll < 0.55:
        return f"{p.uniform(_SHORT)} ({number})"
    return chat_message(p)


def run(folder: Path, turns: int, seed: int) -> dict[str, float]:
    db = folder / "capture.db"
    mem = Memory.open(db, start_workers=False)
    try:
        settings = mem.update_settings(enabled=True, **NO_MODEL)
        p = Picker(seed)
        started = time.perf_counter()
        for n in range(turns):
            owner = f"key-{n % KEYS}"
            speaker = ("Caroline", "Melanie")[n % 2]
            turn = ChatTurn(turn_text(p, n), "", speaker, f"req-{n}", f"s{n % SESSIONS}")
            mem.enqueue_turn(owner, turn, settings=settings)
        queued_s = time.perf_counter() - started
        log(f"queued {turns:,} turns in {queued_s:.1f} s; draining")
        started = time.perf_counter()
        assert mem.wait_for_extraction(3600)
        drain_s = time.perf_counter() - started
        kept = sum(mem.stats(f"key-{k}").total for k in range(KEYS))
    finally:
        mem.close()
    size, breakdown = measure_size(db)
    groups = group_breakdown(breakdown)
    return {
        "turns": turns,
        "kept": kept,
        "queue_ms_per_turn": queued_s / turns * 1000,
        "turns_per_s": turns / drain_s,
        "bytes_per_turn": size["total"] / turns,
        **{f"bytes_per_turn[{name}]": value / turns for name, value in groups.items()},
    }


def report(figures: dict[str, float]) -> Report:
    rep = Report("Turn capture")
    turns = int(figures["turns"])
    rep.add(
        f"{turns:,} chat turns queued as the gateway queues them, then drained by the worker alone; "
        f"{int(figures['kept']):,} memories kept (turns that say nothing are skipped; facts are "
        f"stored beside the turns that state them); {figures['queue_ms_per_turn']:.3f} ms to queue a turn."
    )
    parts = [
        [name[len("bytes_per_turn[") : -1], f"{value:.0f}"] for name, value in figures.items() if "[" in name
    ]
    rep.add(table(["part of the file", "bytes per turn"], parts))
    rows = [
        [
            "worker: turns kept per second",
            f"≥ {TARGET_TURNS_PER_S:,.0f}",
            f"{figures['turns_per_s']:,.0f}",
            verdict(figures["turns_per_s"] >= TARGET_TURNS_PER_S),
        ],
        [
            f"database per turn (file + WAL) at {turns:,} turns",
            f"≤ {human_bytes(TARGET_BYTES_PER_TURN)}",
            human_bytes(figures["bytes_per_turn"]),
            verdict(figures["bytes_per_turn"] <= TARGET_BYTES_PER_TURN),
        ],
    ]
    rep.add(table(["figure", "target", "result", "verdict"], rows))
    rep.data = figures
    return rep


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=100_000)
    args = ap.parse_args()
    turns = 5_000 if args.quick else args.turns
    with work_dir(args.data_dir) as folder:
        emit(report(run(folder, turns, args.seed)), args.json)


if __name__ == "__main__":
    main()
