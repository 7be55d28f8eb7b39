"""What a wake-up costs a process on this machine: the same small piece of work (a JSON round
trip of a short chat body), done back to back and after sleeping 0.5 to 20 ms, once and ten
times per wake-up. For each pause: the CPU of the work alone (`time.thread_time_ns` around
it) and all the process's CPU per wake-up (`getrusage`: the wake-up and the work). A relay
at one client wakes once per relayed piece, so this is what each piece costs before any
of its own work (see `bench/relay_floor.py`).

    python -m bench.wake_cost               # 3 rounds
    python -m bench.wake_cost --rounds 5
"""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from bench.common import Report, emit, parser, table

PAUSES_MS = (0.0, 0.5, 1.5, 5.0, 20.0)
REPEATS = (1, 10)  # pieces of work per wake-up
_BODY = {
    "model": "echo-1",
    "messages": [{"role": "user", "content": "hello " * 20}] * 5,
    "n": list(range(50)),
}


def _work() -> int:
    text = json.dumps(_BODY)
    return len(text) + sum(json.loads(text)["n"])


@dataclass(frozen=True)
class Cost:
    """µs per wake-up: the work alone, and everything the process spent."""

    work_us: float
    all_us: float


def cost(pause_s: float, repeats: int, wakes: int) -> Cost:
    """Sleep `pause_s`, then do the work `repeats` times; `wakes` times over."""
    work_ns = 0
    before = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(wakes):
        if pause_s:
            time.sleep(pause_s)
        started = time.thread_time_ns()
        for _ in range(repeats):
            _work()
        work_ns += time.thread_time_ns() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    spent_s = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Cost(work_ns / wakes / 1000, spent_s * 1e6 / wakes)


def run(rounds: int, wakes: int) -> Report:
    report = Report("What a wake-up costs here")
    costs: dict[tuple[float, int], list[Cost]] = {}
    for _ in range(rounds):
        for pause_ms in PAUSES_MS:
            for repeats in REPEATS:
                # Fewer wake-ups for the long pauses: each takes its pause in wall time.
                n = wakes if pause_ms < 5 else max(1, wakes // 5)
                costs.setdefault((pause_ms, repeats), []).append(cost(pause_ms / 1000, repeats, n))
    report.add(
        f"µs per wake-up, median of {rounds} rounds: the work alone and all the process's CPU "
        "(the wake-up and the work), for one and ten pieces of work per wake-up."
    )
    rows = []
    for pause_ms in PAUSES_MS:
        cells = []
        for field in ("work_us", "all_us"):
            for repeats in REPEATS:
                cells.append(f"{median(getattr(c, field) for c in costs[(pause_ms, repeats)]):.1f}")
        rows.append(["back to back" if not pause_ms else f"{pause_ms:g} ms", *cells])
    headers = ["asleep before the work", "the work, 1 ×", "the work, 10 ×", "all, 1 ×", "all, 10 ×"]
    report.add(table(headers, rows))
    report.data["us_per_wake"] = {
        f"{pause_ms:g} ms x{repeats}": [[c.work_us, c.all_us] for c in values]
        for (pause_ms, repeats), values in costs.items()
    }
    return report


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__ or "")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, every pause once per round (3)")
    ap.add_argument(
        "--wakes", type=int, default=1000, help="wake-ups per pause under 5 ms (1000; a fifth above)"
    )
    parsed = ap.parse_args(argv)
    rounds, wakes = (1, 20) if parsed.quick else (parsed.rounds, parsed.wakes)
    emit(run(rounds, wakes), parsed.json)


if __name__ == "__main__":
    main()
