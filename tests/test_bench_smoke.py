"""The benchmarks still run: `make bench` and the figures in docs/benchmarks.md depend on
them, and nothing else imports `bench/`. A quick run (~15 s) of every benchmark."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_every_benchmark_runs_and_reports_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.run_all", "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "memory on − memory off, p50 (sequential)" in done.stdout
    figures = json.loads(out.read_text())
    titles = " | ".join(figures)
    reports = ("Retrieval latency", "Insert throughput", "Extraction", "Database size", "Gateway overhead")
    for report in reports:
        assert report in titles
        assert all(figures[t] for t in figures if t.startswith(report)), f"{report} has no figures"


def test_the_startup_benchmark_reports_each_case_against_its_target() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.startup", "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r.split("|")[1].strip() for r in rows[1:]] == [
        "bare Python",
        "import memroute",
        "memroute --help",
    ]
    assert "≤ 0.15 s" in rows[2] and "≤ 0.25 s" in rows[3]
