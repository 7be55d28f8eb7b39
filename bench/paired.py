"""Two checkouts of memroute side by side, in pairs of short runs: does a change cost less
CPU per chat? On this host the same code's CPU per chat drifts by a third within minutes
(docs/benchmarks.md), so only runs made moments apart compare.

Each checkout serves its own copy of one database (`memroute serve` started from the
checkout's folder, one worker; both stay up for the whole run). `wrk` sends one client's
chats to one server, then to the other, S seconds each, N pairs; which one goes first
alternates. Per run: the server's CPU per chat (all its threads, from /proc) and the p50
latency; per pair, the ratio `--work` ÷ `--base`. The report gives each side's median and
the ratios' median, mean and spread, and in how many pairs `--work` cost less. Comparing a
checkout with itself (`--base .`) shows the noise floor: the smallest difference a run of
N pairs can tell from chance.

    python -m bench.paired --base /tmp/old                 # this checkout against /tmp/old
    python -m bench.paired --base A --work B --pairs 30 --case off --clients 16
    python -m bench.paired --base . --pairs 20             # this checkout against itself

(`git worktree add /tmp/old HEAD~1` makes a checkout of the commit before.)
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import urllib.request
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench import wrk_load
from bench.common import NO_MODEL, Report, emit, log, parser, remove_database, table, work_dir
from bench.corpus import queries
from bench.gateway import SETTINGS, store_memories
from bench.gateway_load import drain, gateway, upstream
from memroute import Memory

SIDES = ("base", "work")


def copy_database(source: Path, target: Path) -> None:
    remove_database(target)
    for suffix in ("", "-wal", "-shm"):
        found = Path(f"{source}{suffix}")
        if found.exists():
            shutil.copyfile(found, f"{target}{suffix}")


def thread_cpu_ns(pid: int) -> int:
    """The CPU time all of `pid`'s threads have used, in ns (schedstat: finer than /proc's ticks)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return total


def run(
    directory: Path,
    checkouts: dict[str, Path],
    *,
    pairs: int,
    seconds: float,
    case: str,
    clients: int,
    memories: int,
    seed: int,
    wrk: Path,
    warm_s: float = 3.0,
) -> Report:
    first = directory / "base" / "load.db"
    first.parent.mkdir(parents=True, exist_ok=True)
    remove_database(first)
    setup = Memory.open(first, start_workers=False)
    key, secret = setup.keys.create("paired")
    setup.update_settings(enabled=False, **NO_MODEL)
    store_memories(setup, key.id, memories, seed)
    setup.close()
    databases = {"base": first, "work": directory / "work" / "load.db"}
    databases["work"].parent.mkdir(parents=True, exist_ok=True)
    copy_database(first, databases["work"])
    questions = queries(seed + 1, 400)
    cpu: dict[str, list[float]] = {side: [] for side in SIDES}
    p50: dict[str, list[float]] = {side: [] for side in SIDES}
    with ExitStack() as stack:
        up = stack.enter_context(upstream())
        servers: dict[str, tuple[str, int, Memory]] = {}
        versions: dict[str, str] = {}
        for side in SIDES:
            side_memory = Memory.open(databases[side], start_workers=False)
            stack.callback(side_memory.close)
            gw = stack.enter_context(gateway(databases[side], up.url, 1, checkout=checkouts[side]))
            side_memory.update_settings(SETTINGS[case])
            servers[side] = (gw.url, gw.servers()[0], side_memory)
            versions[side] = served_version(gw.url)
        for url, _pid, side_memory in servers.values():
            wrk_load.run(wrk, url, secret, questions, clients, warm_s, 0)  # the key's index built
            drain(side_memory)
        log(f"{pairs} pairs of {seconds:g} s, {case}, {clients} client(s)")
        for number in range(pairs):
            for side in SIDES if number % 2 == 0 else SIDES[::-1]:
                url, pid, _memory = servers[side]
                before = thread_cpu_ns(pid)
                done = wrk_load.run(wrk, url, secret, questions, clients, seconds, 0)
                used_ms = (thread_cpu_ns(pid) - before) / 1e6
                latencies = sorted(done["latency_ns"])
                cpu[side].append(used_ms / max(1, len(latencies)))
                p50[side].append(latencies[len(latencies) // 2] / 1e6 if latencies else float("nan"))
    return report(cpu, p50, checkouts, versions, pairs=pairs, seconds=seconds, case=case, clients=clients)


def served_version(url: str) -> str:
    """The version a server says it runs (`/healthz`): each side's own checkout's."""
    with urllib.request.urlopen(f"{url}/healthz", timeout=10) as answer:
        return str(json.loads(answer.read())["version"])


def report(
    cpu: dict[str, list[float]],
    p50: dict[str, list[float]],
    checkouts: dict[str, Path],
    versions: dict[str, str],
    *,
    pairs: int,
    seconds: float,
    case: str,
    clients: int,
) -> Report:
    ratios = [work / base for base, work in zip(cpu["base"], cpu["work"], strict=True)]
    wins = sum(ratio < 1.0 for ratio in ratios)
    figures: dict[str, Any] = {
        side: {
            "checkout": str(checkouts[side]),
            "version": versions[side],
            "cpu_ms_per_chat": cpu[side],
            "cpu_ms_median": statistics.median(cpu[side]),
            "p50_ms_median": statistics.median(p50[side]),
        }
        for side in SIDES
    }
    spread = statistics.stdev(ratios) if len(ratios) > 1 else 0.0
    figures["ratio"] = {
        "median": statistics.median(ratios),
        "mean": statistics.mean(ratios),
        "stdev": spread,
        "stderr_of_mean": spread / len(ratios) ** 0.5,
        "work_cheaper_in": wins,
        "pairs": len(ratios),
    }
    rep = Report("Paired runs")
    rep.add(
        f"{pairs} pairs of {seconds:g} s, memory {case}, {clients} client(s) (wrk), one worker each; "
        "CPU ms per chat of the whole server process, read from /proc."
    )
    rep.add(
        table(
            ["side", "checkout", "version", "CPU ms per chat, median (range)", "p50 ms, median"],
            [
                [
                    side,
                    f"`{checkouts[side]}`",
                    versions[side],
                    f"{figures[side]['cpu_ms_median']:.3f} ({min(cpu[side]):.3f}–{max(cpu[side]):.3f})",
                    f"{figures[side]['p50_ms_median']:.3f}",
                ]
                for side in SIDES
            ],
        )
    )
    r = figures["ratio"]
    rep.add(
        f"work ÷ base, per pair: median {r['median']:.3f}, mean {r['mean']:.3f} ± {r['stderr_of_mean']:.3f} "
        f"(standard error; each pair's spread {spread:.3f}); work cost less in {wins} of {len(ratios)} pairs."
    )
    rep.data = figures
    return rep


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser(__doc__ or "")
    ap.add_argument("--base", type=Path, required=True, help="the checkout to compare against")
    ap.add_argument("--work", type=Path, default=Path(), help="the checkout measured (this one)")
    ap.add_argument("--pairs", type=int, default=20, help="pairs of runs (20)")
    ap.add_argument("--seconds", type=float, default=2.0, help="seconds per run (2)")
    ap.add_argument("--case", choices=("on", "off"), default="on", help="memory on or off (on)")
    ap.add_argument("--clients", type=int, default=1, help="wrk's connections (1)")
    ap.add_argument("--memories", type=int, default=1000, help="memories stored for the key (1000)")
    ap.add_argument("--wrk", default="wrk", help="the wrk executable (wrk, on PATH)")
    args = ap.parse_args(argv)
    checkouts = {"base": args.base.resolve(), "work": args.work.resolve()}
    for side, folder in checkouts.items():
        if not (folder / "memroute" / "__init__.py").is_file():
            sys.exit(f"--{side} {folder}: not a checkout of memroute (no memroute/__init__.py)")
    pairs, seconds = (2, 0.5) if args.quick else (args.pairs, args.seconds)
    with work_dir(args.data_dir) as directory:
        rep = run(
            directory,
            checkouts,
            pairs=pairs,
            seconds=seconds,
            case=args.case,
            clients=args.clients,
            memories=200 if args.quick else args.memories,
            seed=args.seed,
            wrk=wrk_load.executable(args.wrk),
            warm_s=0.5 if args.quick else 3.0,
        )
        emit(rep, args.json)


if __name__ == "__main__":
    main()
