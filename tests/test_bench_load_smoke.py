"""The load benchmark still runs (`python -m bench.gateway_load`, its figures in
docs/benchmarks.md): a short run of every case. In a file of its own, so the test runner
can run it beside the other benchmarks' smoke tests."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from environment import missing
from gateways import Gateway
from memories import NO_MODEL
from servers import LiveServer, ScriptedUpstream

from bench import load_upstream, wrk_load
from bench.gateway_load import upstream
from bench.relay_floor import bare_relay, wake_ups
from memroute.version import package_version

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow(seconds=12)
def test_the_load_benchmark_measures_every_case_through_real_processes(tmp_path: Path) -> None:
    """Upstream, gateway (`memroute serve`) and load generator each in a process: every
    case answers, the gateway's CPU per request and its memory are read, beside the
    upstream's and the load generator's CPU and how busy the machine was (several workers:
    tests/test_workers.py). With `--rounds 2` every run is made twice and each target is
    judged on the median of its two figures, both shown beside it."""
    out = tmp_path / "load.json"
    command = [sys.executable, "-m", "bench.gateway_load", "--quick", "--workers", "1", "--concurrency", "2"]
    command += ["--seconds", "0.5", "--rounds", "2", "--json", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(out.read_text())["Gateway under load"]
    cases = {(r["case"], r["stream"], r["chunks_back_to_back"], r["round"]) for r in data["runs"]}
    assert len(data["runs"]) == len(cases) == 16
    paced = {(c, s, False, n) for c in ("direct", "off", "on") for s in (False, True) for n in (1, 2)}
    # Direct and memory off also stream with the chunks back to back, as the issue measured.
    assert cases == paced | {(c, True, True, n) for c in ("direct", "off") for n in (1, 2)}
    assert all(r["latency"]["n"] > 0 and not r["refused"] for r in data["runs"])
    gateway_cpu = [r["cpu_ms_per_request"] for r in data["runs"] if r["case"] != "direct"]
    assert None not in gateway_cpu and sum(gateway_cpu) > 0  # /proc counts in 10 ms ticks: a run may read 0
    assert 0 <= data["idle_cpu_ms_per_s"]["1"] < 1000
    # Every run also reads what answering and sending cost: the load generator always works.
    assert all(r["client_cpu_ms_per_request"] > 0 for r in data["runs"])
    assert sum(r["upstream_cpu_ms_per_request"] for r in data["runs"]) > 0
    assert all(0 < r["machine_busy"] <= 1 for r in data["runs"])
    assert all(r["ttft"]["n"] > 0 for r in data["runs"] if r["stream"])
    idle, after = data["rss_mib"]["1"]
    assert len(idle) == len(after) == 1 and all(30 < mib < 1000 for mib in idle + after)
    assert "| memory on − memory off, p50 ms | ≤ 2 |" in done.stdout
    # Each target on the median of the rounds' figures, both shown: "2.38 (2.72 / 2.05)".
    name = "memory on: gateway CPU ms per request"
    each = [figures[name] for figures in data["rounds"]]
    assert len(each) == 2 and data[name] == pytest.approx(sum(each) / 2)
    row = next(line for line in done.stdout.splitlines() if line.startswith(f"| {name} |"))
    assert f"({each[0]:.2f} / {each[1]:.2f})" in row
    assert "| the upstream's CPU ms per 48-chunk stream (it only writes them) | — |" in done.stdout
    back_to_back = (
        "memory off: gateway CPU ms per 48-chunk stream, chunks back to back (the issue's upstream)"
    )
    assert f"| {back_to_back} | ≤ 3 |" in done.stdout
    assert "| off | yes, back to back | 2 |" in done.stdout  # its run in the table


def test_a_litellm_path_that_is_no_executable_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    """`--litellm` names LiteLLM Proxy's `litellm` in a virtual environment of its own; a
    wrong path is refused at once, saying how to install it, and nothing is started."""
    missing = tmp_path / "venv" / "bin" / "litellm"
    command = [sys.executable, "-m", "bench.gateway_load", "--quick", "--litellm", str(missing)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"--litellm {missing}: no executable there" in done.stderr
    assert "pip install 'litellm[proxy]'" in done.stderr
    assert "direct workers=" not in done.stderr  # no run was started


def _wrk() -> Path:
    """Debian's wrk: skipped without it here, failed without it in CI (.ci/run installs it)."""
    found = shutil.which("wrk")
    if found is None:
        missing("wrk is missing: apt-get install -y wrk")
    return Path(found)


def test_wrk_sends_every_question_with_the_key_and_counts_what_is_refused(gateway: Gateway) -> None:
    """`--wrk` sends the non-streamed load with wrk: each question in turn as a chat request
    with the client key, each answered request timed; with a wrong key every request is
    counted as refused and none is timed."""
    wrk = _wrk()
    # As the load benchmark runs it: keyword recall (the bundled model, loading in the
    # background from the first chat on, took the whole second on a busy CI machine) and
    # the key's per-minute limit lifted (a chat admitted on the event loop outruns it).
    gateway.memory.update_settings(**NO_MODEL)
    gateway.memory.keys.set_limits(gateway.key_id, max_concurrent=None, requests_per_minute=0)
    questions = ["Where did I park the blue van?", 'Which "quoted" ]=] words survive?']
    answered = wrk_load.run(wrk, gateway.url, gateway.secret, questions, 2, 1, 0)
    assert answered["refused"] == {}
    assert 0.9 < answered["timed_s"] < 3
    # Every request the provider answered was timed, but the last of each connection, which
    # wrk's second may cut off. (A count of answers would measure the machine: a CI run
    # whose other tests kept both cores busy answered 7 in the second, against ~400 alone.)
    timed = sorted(answered["latency_ns"])
    assert len(timed) >= len(questions) and 0 <= len(gateway.upstream.requests) - len(timed) <= 2
    assert 0 < timed[0] <= timed[len(timed) // 2] <= timed[-1] < 10 * 1e9
    said = {r["body"]["messages"][-1]["content"] for r in gateway.upstream.requests}
    assert said == set(questions)
    unheard = ["Was this ever sent with a wrong key?"]
    refused = wrk_load.run(wrk, gateway.url, "mr-not-a-key-of-this-gateway", unheard, 2, 1, 0)
    assert refused["latency_ns"] == [] and refused["refused"]["status_not_2xx"] > 10
    said = {r["body"]["messages"][-1]["content"] for r in gateway.upstream.requests}
    assert said == set(questions)  # refused before the provider is called


def test_a_missing_wrk_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    missing = tmp_path / "bin" / "wrk"
    command = [sys.executable, "-m", "bench.gateway_load", "--quick", "--wrk", str(missing)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"--wrk {missing}: no wrk there; install it (apt-get install wrk)" in done.stderr
    assert "direct workers=" not in done.stderr


def test_wrk_spreads_its_connections_over_replicas_as_the_load_client_does() -> None:
    """Given several servers (replicas of one memory), one wrk thread sends to each; one
    client sends to the first only."""
    wrk = _wrk()
    replicas = [ScriptedUpstream(), ScriptedUpstream()]
    with LiveServer(replicas[0].app()) as first, LiveServer(replicas[1].app()) as second:
        both = f"{first.url},{second.url}"
        spread = wrk_load.run(wrk, both, "a-key", ["Hello there"], 4, 1, 0)
        received = sum(len(r.requests) for r in replicas)  # the last of each connection may be cut off
        assert spread["refused"] == {} and 0 <= received - len(spread["latency_ns"]) <= 4
        assert all(len(r.requests) > 10 for r in replicas)
        alone = wrk_load.run(wrk, both, "a-key", ["Just one client here"], 1, 1, 0)
        heard = [{r["body"]["messages"][-1]["content"] for r in replica.requests} for replica in replicas]
        assert len(alone["latency_ns"]) > 10 and heard == [
            {"Hello there", "Just one client here"},
            {"Hello there"},
        ]


def test_the_bare_relay_passes_streams_through_unchanged() -> None:
    """`python -m bench.relay_floor` compares memroute with a bare relay (the floor of what
    relaying costs): the relay must deliver what the upstream sends, stream after stream on
    one kept-alive connection, gathering or not."""
    body = {"model": load_upstream.MODEL, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with upstream() as up:
        with httpx.Client() as direct:
            expected = direct.post(f"{up.url}/v1/chat/completions", json=body).text
        assert expected.count("data: ") == 49 and expected.endswith("data: [DONE]\n\n")
        for gather_ms in (0, 5):
            with bare_relay(up.url, gather_ms) as relay, httpx.Client() as client:
                for _ in range(2):
                    with client.stream("POST", f"{relay.url}/v1/chat/completions", json=body) as answer:
                        assert answer.status_code == 200
                        assert "".join(answer.iter_text()) == expected


def test_the_relay_floor_counts_each_time_a_process_is_woken() -> None:
    """`bench.relay_floor` reports a relay's wake-ups per request: a process that sleeps
    20 times between two reads is counted as woken at least 20 times more."""
    code = (
        "import sys, time\nsys.stdin.readline()\nfor _ in range(20): time.sleep(0.005)\n"
        "print('slept', flush=True)\nsys.stdin.readline()"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        time.sleep(0.3)  # started, and waiting for its first line
        before = wake_ups([child.pid])
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "slept\n"
        assert wake_ups([child.pid]) - before >= 20
    finally:
        child.kill()
        child.wait(10)


def test_the_load_upstream_takes_its_think_time_before_a_single_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`BENCH_THINK_MS` (bench/load_upstream.py): a non-streamed answer comes that much later,
    the same answer, through the bare relay too."""
    body = {"model": load_upstream.MODEL, "messages": [{"role": "user", "content": "hi"}]}
    monkeypatch.setenv("BENCH_THINK_MS", "60")
    with upstream() as up, bare_relay(up.url, 0) as relay, httpx.Client() as client:
        for url in (up.url, relay.url):
            started = time.perf_counter()
            answer = client.post(f"{url}/v1/chat/completions", json=body)
            assert time.perf_counter() - started >= 0.06
            assert answer.json()["choices"][0]["message"]["content"] == " ".join(load_upstream.REPLY_WORDS)


def test_the_paired_benchmark_serves_each_checkout_it_is_given(tmp_path: Path) -> None:
    """`python -m bench.paired --base DIR`: DIR's memroute serves one side, this checkout's
    the other (a checkout that says another version here), and every pair is counted."""
    wrk = _wrk()
    other = tmp_path / "other"
    shutil.copytree(ROOT / "memroute", other / "memroute", ignore=shutil.ignore_patterns("__pycache__"))
    says_other = 'def package_version() -> str:\n    return "0.0.0+other"\n'
    (other / "memroute" / "version.py").write_text(says_other)
    out = tmp_path / "paired.json"
    command = [sys.executable, "-m", "bench.paired", "--base", str(other), "--quick", "--wrk", str(wrk)]
    command += ["--json", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(out.read_text())["Paired runs"]
    assert data["base"]["version"] == "0.0.0+other"
    assert data["work"]["version"] == package_version()
    assert data["ratio"]["pairs"] == 2
    assert all(ms > 0 for side in ("base", "work") for ms in data[side]["cpu_ms_per_chat"])
    assert "work cost less in" in done.stdout


def test_the_paired_benchmark_refuses_a_folder_that_holds_no_memroute(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench.paired", "--base", str(tmp_path), "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "not a checkout of memroute" in done.stderr
