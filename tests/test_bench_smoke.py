"""The benchmarks still run: `make bench` and the figures in docs/benchmarks.md depend on
them, and nothing else imports `bench/`. A smoke run (`--smoke`: every step of every
benchmark on a handful of items, ~25 s of CPU) of every benchmark."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def bench(module: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m bench.<module> args…` from the repository; fails the test when it fails."""
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{module}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def body_rows(markdown: str) -> list[list[str]]:
    """The cells of every row of the markdown tables in `markdown` but the first (a header)."""
    lines = [line for line in markdown.splitlines() if line.startswith("| ") and "---" not in line]
    return [[cell.strip() for cell in line.strip().strip("|").split(" | ")] for line in lines[1:]]


@pytest.mark.slow(seconds=40)
def test_every_benchmark_runs_and_reports_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    done = bench("run_all", "--smoke", "--json", str(out), timeout=300)
    assert "memory on − memory off, p50 (sequential)" in done.stdout
    figures = json.loads(out.read_text())
    titles = " | ".join(figures)
    reports = ("Retrieval latency", "Insert throughput", "Extraction", "Database size", "Gateway overhead")
    for report in reports:
        assert report in titles
        assert all(figures[t] for t in figures if t.startswith(report)), f"{report} has no figures"
    routes = figures["Gateway overhead"]["routes"]
    assert list(routes) == ["chat", "responses", "messages"]  # every route by default
    assert all(set(ROUTE_FIGURES) <= set(figures) for figures in routes.values())
    for route in ("responses", "messages"):
        assert f"| gateway, {route}: streaming TTFT, memory on − direct, p50 | ≤ 5 ms |" in done.stdout


# What bench.gateway reports of each route it measured.
ROUTE_FIGURES = ("on_minus_off_p50_ms", "off_minus_direct_p50_ms", "ttft_on_minus_direct_p50_ms", "requests")


@pytest.mark.slow(seconds=12)
def test_the_gateway_benchmark_reports_the_routes_it_was_asked_for(tmp_path: Path) -> None:
    """`--routes responses,messages`: each route's sequential cases and streams, through the
    official SDKs, and its figures against the targets; the chat phases are not run."""
    out = tmp_path / "gateway.json"
    smoke = ("--requests", "8", "--stream", "4", "--rounds", "2", "--warmup", "2", "--memories", "50")
    done = bench("gateway", *smoke, "--in-process", "--routes", "messages,responses", "--json", str(out))
    figures = json.loads(out.read_text())["Gateway overhead"]
    assert list(figures["routes"]) == ["responses", "messages"]
    for route, t in figures["routes"].items():
        assert set(ROUTE_FIGURES) <= set(t) and t["requests"] == 8 and t["streamed"] == 4
        assert {f"{route}/sequential/{case}" for case in ("direct", "off", "on")} <= set(figures)
        assert {f"{route}/stream/{case}" for case in ("direct", "on")} <= set(figures)
        assert figures[f"{route}/sequential/on"]["n"] == 8
        assert f"**{route}: sequential**" in done.stdout and f"**{route}: streaming**" in done.stdout
        rows = [line for line in done.stdout.splitlines() if line.startswith(f"| {route}: ")]
        assert [row.split(" | ")[1] for row in rows] == ["≤ 3 ms", "—", "≤ 5 ms"]
        assert all(row.endswith((" met |", " **not met** |")) for row in (rows[0], rows[2]))
    assert "sequential/on" not in figures and "concurrent/on" not in figures  # no chat phase


def test_the_startup_benchmark_reports_each_case_against_its_target() -> None:
    rows = body_rows(bench("startup", "--runs", "1").stdout)
    assert [row[0] for row in rows] == ["bare Python", "import memroute", "memroute --help"]
    assert rows[1][-1].startswith("≤ 0.15 s: ") and rows[2][-1].startswith("≤ 0.25 s: ")


def test_the_wake_cost_benchmark_reports_every_pause() -> None:
    """`python -m bench.wake_cost` (what a wake-up costs the machine): a row per pause, from
    back to back to 20 ms asleep, each with the work's CPU and the whole wake-up's."""
    rows = body_rows(bench("wake_cost", "--quick").stdout)
    assert [row[0] for row in rows] == ["back to back", "0.5 ms", "1.5 ms", "5 ms", "20 ms"]
    for row in rows:
        assert all(float(cell) > 0 for cell in row[1:])


def test_the_portability_benchmark_exports_and_imports_every_memory(tmp_path: Path) -> None:
    """`python -m bench.portability`: every memory exported, imported into a new database,
    then found already there on a second import."""
    out = tmp_path / "portability.json"
    done = bench("portability", "--quick", "--json", str(out))
    figures = json.loads(out.read_text())["Export and import"]
    assert figures["memories"] == figures["imported"] == 500
    assert all(figures[name] > 0 for name in ("export_per_s", "export_encoded_per_s", "import_per_s"))
    assert [row[0] for row in body_rows(done.stdout)] == [
        "export",
        "export + JSON encode",
        "import into a new database",
        "re-import (all skipped)",
    ]


def test_the_abuse_benchmark_reports_the_well_behaved_key_and_the_attacker(tmp_path: Path) -> None:
    out = tmp_path / "abuse.json"
    done = bench("abuse", "--quick", "--only", "login-throttle", "--seconds", "2", "--json", str(out))
    row = next(line for line in done.stdout.splitlines() if line.startswith("| login-throttle |"))
    for target in ("all answered, p99 ≤ 1 s", "normal ≤ 5 s after", "alive"):
        assert f"{target} met" in row or f"{target} **not met**" in row
    result = json.loads(out.read_text())["Abuse: a well-behaved key under attack"]["results"][
        "login-throttle"
    ]
    assert result["during"]["n"] > 0 and result["baseline"]["success"] == 1.0
    assert sum(result["spoofed_logins"].values()) > 0 and set(result["spoofed_logins"]) <= {"401", "429"}
    assert result["admin_login_after"] in ("200", "429")


def test_the_conversation_recall_baseline_finds_the_turns_it_stored(tmp_path: Path) -> None:
    """One session stored verbatim through the REST API, three questions through the gateway:
    the bench maps each injected memory back to its turn and finds every evidence turn."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench import conversation_recall as recall
    from bench.conversations import load_conversations, load_questions

    convs, questions = recall.first_sessions(load_conversations()[:1], load_questions(), 1)
    convs, questions = recall.select(convs, questions, 1, 3)
    opts = recall.Options(in_process=True)
    result = recall.run_mode("rest", convs, questions, opts, tmp_path)
    assert result["turns"] == result["memories"] == 28 and result["injected_without_request_id"] == 0
    assert result["summary"]["recall@budget"] == 1.0
    markdown = recall.report([result], opts, len(convs)).markdown()
    assert "| verbatim via REST (baseline) | 28 | 3 |" in markdown


def test_the_conversation_recall_replays_the_threads_set_too(tmp_path: Path) -> None:
    """`--set threads`: the long chats of bench/threads/ through the same harness; a turn
    that restates an evidence turn counts as finding it."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench import conversation_recall as recall
    from bench.conversations import load_conversations, load_questions

    threads_convs, threads_questions = recall.SETS["threads"]
    convs, questions = recall.first_sessions(
        load_conversations(threads_convs)[:1], load_questions(threads_questions), 2
    )
    convs, questions = recall.select(convs, questions, 1, 4)
    assert convs[0]["id"].startswith("t") and questions
    opts = recall.Options(in_process=True, data="threads")
    result = recall.run_mode("rest", convs, questions, opts, tmp_path)
    assert result["injected_without_request_id"] == 0
    assert result["summary"]["recall@budget"] == 1.0  # every turn was stored: each one is found
    assert "(bench/threads/)" in recall.report([result], opts, len(convs)).markdown()


def test_the_quality_run_reports_every_set_by_mode_and_by_kind(tmp_path: Path) -> None:
    out = tmp_path / "quality.json"
    done = bench("quality_run", "--sources", "", "--json", str(out))
    assert "## Retrieval quality: paraphrase" in done.stdout
    assert "## Retrieval quality: conversations" in done.stdout
    assert "## Retrieval quality: many-keys" in done.stdout
    sets = json.loads(out.read_text())["quality"]
    paraphrase, conversations = sets["paraphrase"]["modes"], sets["conversations"]["modes"]
    # Keyword search finds what shares words with the question; newest-first finds little.
    assert paraphrase["fts"]["by_kind"]["lexical"]["recall_at_10"] >= 0.9
    assert conversations["fts"]["recall_at_10"] > 5 * conversations["exact"]["recall_at_10"]
    # Each question is asked as its own conversation's key: "who said …" is answered there.
    assert conversations["no-model"]["by_kind"]["who"]["recall_at_10"] >= 0.9
    assert sets["conversations"]["dataset"]["keys"] == 10
    for mode in ("exact", "fts", "no-model"):
        figures = conversations[mode]
        assert figures["recall_at_5"] <= figures["recall_at_10"] <= figures["recall_at_20"]
    # Keys of very different sizes, each question asked as its own chat's key.
    many = sets["many-keys"]
    fewest, most = many["dataset"]["memories_per_key"]
    assert many["dataset"]["keys"] == 40 and most >= 4 * fewest
    assert many["modes"]["fts"]["by_kind"]["who"]["recall_at_10"] >= 0.9


def test_the_quality_sets_can_be_stored_as_a_client_that_names_no_one() -> None:
    from bench.quality_run import without_speakers
    from bench.quality_sets import conversation_set

    kept = conversation_set()
    bare = without_speakers(kept)
    assert any("speaker" in (m.metadata or {}) for m in kept.memories)
    assert not any("speaker" in (m.metadata or {}) for m in bare.memories)
    assert [m.content for m in bare.memories] == [m.content for m in kept.memories]
    assert bare.questions == kept.questions


@pytest.mark.slow(seconds=15)
def test_the_recall_cost_benchmark_reports_every_case_it_switched(tmp_path: Path) -> None:
    out = tmp_path / "recall.json"
    done = bench("gateway_recall", "--quick", "--cases", "off,keywords", "--json", str(out))
    figures = json.loads(out.read_text())["Recall's cost per chat, one gateway"]
    assert set(figures) == {"off", "keywords"}
    assert all(f["p50_ms"] > 0 and f["cpu_ms"] >= 0 for f in figures.values())
    assert "| keywords |" in done.stdout


def test_the_admission_benchmark_times_every_step_of_a_chat_with_memory(tmp_path: Path) -> None:
    """Each step the gateway takes before forwarding is timed, and recall injects memories,
    with the long conversation a chat re-sends (`--history`)."""
    out = tmp_path / "admission.json"
    done = bench("admission", "--quick", "--history", "30", "--json", str(out))
    figures = json.loads(out.read_text())["Admission, step by step"]
    assert 30 * 1024 < figures["body_bytes"] < 40 * 1024 and figures["plan"]["history_kb"] == 30
    assert f"requests of {figures['body_bytes'] / 1024:.0f} KB" in done.stdout
    steps = figures["steps"]
    names = ["authenticate", "parse", "route", "settings", "recall", "inject", "encode", "queue turn"]
    assert list(steps) == names
    assert all(s["n"] == 60 and s["mean_ms"] > 0 for s in steps.values())  # 30 questions × 2 rounds
    assert figures["injected_per_chat"] > 10  # the install defaults inject memories into every chat
    assert figures["total_mean_ms"] == pytest.approx(sum(s["mean_ms"] for s in steps.values()))
    before = sum(s["mean_ms"] for name, s in steps.items() if name != "queue turn")
    assert figures["before_sending_mean_ms"] == pytest.approx(
        before
    )  # the turn's write overlaps the provider
    assert "| **before the request leaves** |" in done.stdout
    assert "| recall |" in done.stdout
