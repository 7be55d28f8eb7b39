"""Start-up cost: `import memroute` and `memroute --help` against a bare Python, each a
fresh interpreter, timed side by side (interleaved) so a busy machine slows all alike.

python -m bench.startup              # 20 runs of each
python -m bench.startup --runs 50

Targets: `import memroute` ≤ 0.15 s and `memroute --help` ≤ 0.25 s more than bare Python
(medians), and the modules each loads.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

CASES = {
    "bare Python": ["-c", "pass"],
    "import memroute": ["-c", "import memroute"],
    "memroute --help": ["-m", "memroute", "--help"],
}
TARGETS_S = {"import memroute": 0.15, "memroute --help": 0.25}
COUNT_MODULES = "import sys; n = len(sys.modules); {code}; print(len(sys.modules) - n)"


def wall_times(runs: int) -> dict[str, list[float]]:
    """Seconds per fresh interpreter for every case, the cases interleaved run by run."""
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(runs):
        for name, args in CASES.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, *args], check=True, capture_output=True)
            times[name].append(time.perf_counter() - started)
    return times


def modules_loaded(code: str) -> int:
    """How many modules `code` adds to a fresh interpreter's."""
    probe = COUNT_MODULES.format(code=code)
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return int(out.stdout.strip())


def report(times: dict[str, list[float]]) -> list[str]:
    bare = statistics.median(times["bare Python"])
    loaded = {
        "import memroute": modules_loaded("import memroute"),
        "memroute --help": modules_loaded("import memroute.cli"),
    }
    lines = [
        "| case | runs | median s | min s | over bare Python (median) | modules loaded | target |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, values in times.items():
        median = statistics.median(values)
        extra = median - bare
        target = TARGETS_S.get(name)
        verdict = "—" if target is None else f"≤ {target} s: {'met' if extra <= target else '**not met**'}"
        over = "—" if name == "bare Python" else f"{extra:.3f}"
        modules = loaded.get(name, "—")
        lines.append(
            f"| {name} | {len(values)} | {median:.3f} | {min(values):.3f} | {over} | {modules} | {verdict} |"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20, help="fresh interpreters per case (20)")
    ap.add_argument("--json", default=None, help="also write the raw times to this file")
    args = ap.parse_args(argv)
    times = wall_times(args.runs)
    print("\n".join(report(times)))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(times, f, indent=2)


if __name__ == "__main__":
    main()
