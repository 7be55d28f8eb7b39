"""`memroute serve --workers N`: several server processes on one port and one database.
Chats and the management API work whichever process answers; a process that dies is
replaced; the background jobs that must run once at a time run in one process, and move
to another when it dies; a turn queued once is stored once however many processes work;
a signal stops them all."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest
from servers import ScriptedUpstream, free_port, wait_until
from storage import open_parts, rows

from bench.common import process_cpu_s
from memroute import Memory
from memroute.config import parse_cpus
from memroute.errors import InvalidInput
from memroute.service.turn_queue import ChatTurn
from memroute.web.connection_share import MAX_HOLD_S

ADMIN = "admin-test-token-for-memroute-serve-workers"


@dataclass
class Workers:
    parent: subprocess.Popen[bytes]
    url: str
    db: Path
    secret: str

    def children(self) -> list[int]:
        """The pids of the server processes (children running a worker)."""
        found = []
        for pid in Path(f"/proc/{self.parent.pid}/task/{self.parent.pid}/children").read_text().split():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except FileNotFoundError:
                continue
            if b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
                found.append(int(pid))
        return sorted(found)

    def client(self) -> openai.OpenAI:
        return openai.OpenAI(base_url=self.url + "/v1", api_key=self.secret, max_retries=0)

    def api(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        headers = {"authorization": f"Bearer {ADMIN}", "connection": "close"}  # a new connection each time
        return httpx.request(method, self.url + path, headers=headers, timeout=10, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def workers(tmp_path: Path, upstream: ScriptedUpstream) -> Iterator[Workers]:
    with serving_workers(tmp_path, upstream) as running:
        yield running


@contextlib.contextmanager
def serving_workers(tmp_path: Path, upstream: ScriptedUpstream, *options: str) -> Iterator[Workers]:
    """`memroute serve --workers 2 [options]` on a fresh database with memory on, once
    both processes answer."""
    db = tmp_path / "memroute.db"
    side = Memory.open(db, start_workers=False)
    side.update_settings(enabled=True)
    _, secret = side.keys.create("workers")
    side.close()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMROUTE_")}
    env.update(
        MEMROUTE_DATA_DIR=str(tmp_path),
        MEMROUTE_ADMIN_TOKEN=ADMIN,
        MEMROUTE_UPSTREAM_BASE_URL=upstream.url + "/v1",  # type: ignore[attr-defined]
        MEMROUTE_ACCESS_LOG="false",
        MEMORY_REINDEX_POLL_S="0.5",
    )
    command = [
        sys.executable,
        "-m",
        "memroute",
        "--db",
        str(db),
        "serve",
        "--port",
        str(port),
        "--workers",
        "2",
    ]
    parent = subprocess.Popen(
        [*command, *options],
        env=env,
        stdout=(tmp_path / "serve.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    running = Workers(parent, f"http://127.0.0.1:{port}", db, secret)
    try:
        wait_until(lambda: parent.poll() is not None or len(running.children()) == 2, timeout=20)
        assert parent.poll() is None, (tmp_path / "serve.log").read_text()
        wait_until(lambda: _healthy(running.url), timeout=20)
        # One process answering is not both: the other may still be loading its models.
        wait_until(lambda: _started(tmp_path / "serve.log") == 2, timeout=30)
        yield running
    finally:
        if parent.poll() is None:  # a test left it running: its workers stop once it is gone
            parent.kill()
            parent.wait(10)


def _started(log: Path) -> int:
    """How many server processes have logged that they started."""
    return log.read_text(errors="replace").count("Application startup complete.")


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url + "/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _lease_holder_pids(db: Path) -> dict[str, int]:
    held = rows(db, "SELECT name, holder FROM worker_leases WHERE expires_at > ?", time.time())
    return {name: int(holder.rsplit(":", 2)[1]) for name, holder in held}


@pytest.mark.slow(seconds=20)
def test_two_processes_serve_one_memory_and_a_signal_stops_them_all(workers: Workers) -> None:
    first, second = workers.children()
    # Not held to CPUs by default (MEMROUTE_PIN_CPUS): each thread may run where this one may.
    assert _cpus_of_threads(first) == _cpus_of_threads(second) == _cpus_of_threads(os.getpid())
    client = workers.client()
    for n in range(6):
        client.with_options(default_headers={"connection": "close"}).chat.completions.create(
            model="echo-1", messages=[{"role": "user", "content": f"My locker number is {n}07 this term."}]
        )
    # Whichever process learned a turn, every process serves it.
    wait_until(lambda: len(workers.api("GET", "/api/memory?limit=100").json()["data"]) >= 6, timeout=20)
    listed = {workers.api("GET", "/api/memory?limit=100").json()["total"] for _ in range(6)}
    assert len(listed) == 1
    # A settings change made through one request is in force for the next, on any process.
    assert workers.api("PUT", "/api/settings/memory", json={"injectionEnabled": False}).status_code == 200
    for _ in range(6):
        raw = client.with_options(default_headers={"connection": "close"}).chat.completions.with_raw_response
        question = [{"role": "user", "content": "What is my locker number?"}]
        answer = raw.create(model="echo-1", messages=question)
        assert answer.headers["x-memroute-memory-count"] == "0"
    workers.parent.send_signal(signal.SIGTERM)
    assert workers.parent.wait(60) == 0
    for pid in (first, second):
        assert not Path(f"/proc/{pid}").exists() or b"zombie" in Path(f"/proc/{pid}/status").read_bytes()
    assert not _healthy(workers.url)


def _connections_held(pid: int, port: int) -> int:
    """How many established TCP connections to `port` process `pid` holds. The kernel's
    table is read in pieces while other tests open and close connections, so one reading
    may list a socket twice or miss one: its sockets are counted once, over two readings."""
    sockets = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                sockets.add(target[8:-1])
    held = set()
    for _reading in range(2):
        for table in ("tcp", "tcp6"):
            for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                fields = line.split()
                if (
                    int(fields[1].rsplit(":", 1)[1], 16) == port
                    and fields[3] == "01"
                    and fields[9] in sockets
                ):
                    held.add(fields[9])
    return len(held)


def _idle(pids: list[int], window_s: float = 0.5) -> bool:
    """Whether each of `pids` used under a tenth of a core over `window_s`."""
    before = [process_cpu_s(pid) for pid in pids]
    time.sleep(window_s)
    return all(process_cpu_s(pid) - then < 0.1 * window_s for pid, then in zip(pids, before, strict=True))


def _main_thread_ns(pid: int) -> tuple[int, int]:
    """The main thread (the event loop) of `pid` so far: nanoseconds it ran on a CPU, and
    nanoseconds it waited for one."""
    ran, waited, _runs = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
    return int(ran), int(waited)


def _cpu_wait_s(pid: int) -> float:
    """How long the main thread (the event loop) of `pid` has waited for a CPU so far."""
    return _main_thread_ns(pid)[1] / 1e9


def _resume(pid: int, after_s: float, resumed_at: list[float]) -> None:
    """SIGCONT the stopped process `pid` after `after_s`, then note when its main thread
    (its event loop) next ran: its CPU time, to the nanosecond, grows."""
    time.sleep(after_s)
    before = _main_thread_ns(pid)[0]
    os.kill(pid, signal.SIGCONT)
    wait_until(lambda: _main_thread_ns(pid)[0] != before, 10, 0.001)
    resumed_at.append(time.monotonic())


def _opened_at_once(url: str, count: int) -> list[socket.socket]:
    """`count` keep-alive connections opened in one burst, each answered once."""
    host, port = url.removeprefix("http://").split(":")
    pool = [socket.create_connection((host, int(port)), timeout=10) for _ in range(count)]
    for sock in pool:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: memroute\r\n\r\n")
    for sock in pool:
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    return pool


def test_a_pool_of_keep_alive_connections_is_shared_and_a_stalled_process_holds_none_back(
    workers: Workers,
) -> None:
    # A client's pool opens its connections in a burst and keeps them: each process must
    # take its share, or one serves every request while the other idles.
    port = int(workers.url.rsplit(":", 1)[1])

    def held() -> list[int]:
        return [_connections_held(pid, port) for pid in workers.children()]

    def close(pool: list[socket.socket]) -> None:
        for sock in pool:
            sock.close()
        wait_until(lambda: sum(held()) == 0, timeout=10)

    started: list[socket.socket] = []  # one connection at a time until both processes serve
    wait_until(lambda: bool(started.extend(_opened_at_once(workers.url, 1))) or min(held()) >= 1, timeout=20)
    close(started)
    # ... and until they are done starting (the bundled model loads in the background, and
    # a process busy with that answers late: the others take the connections meanwhile).
    wait_until(lambda: _idle(workers.children()), timeout=60, interval=0.1)
    for _round in range(3):
        pool = _opened_at_once(workers.url, 16)
        assert sum(held()) == 16 and min(held()) >= 7, held()
        close(pool)
    # A process that pauses for a moment in the middle of a burst (a loaded machine, a
    # collection) still gets its share: the other leaves it the connections meanwhile.
    # "A moment" is what the process was really away: a round in which the machine kept
    # it away longer than the hold (the resume fired late, or it waited for a CPU) checks
    # nothing, and another is run. So does one in which the machine kept the other process
    # waiting for a CPU that long: the paused one is then rightly left its connections.
    for paused in workers.children():
        others = [pid for pid in workers.children() if pid != paused]
        shares, attempts = [], 0
        while len(shares) < 2:
            attempts += 1
            assert attempts <= 8, f"a process was kept away past the hold in {attempts - 1} rounds"
            pool = _opened_at_once(workers.url, 10)
            waited = [_cpu_wait_s(pid) for pid in others]
            os.kill(paused, signal.SIGSTOP)
            stopped_at, resumed_at = time.monotonic(), []
            resume = threading.Thread(target=_resume, args=(paused, 0.1, resumed_at))
            resume.start()
            pool += _opened_at_once(workers.url, 6)
            resume.join()
            others_waited = max(_cpu_wait_s(pid) - then for pid, then in zip(others, waited, strict=True))
            if resumed_at[0] - stopped_at <= 0.8 * MAX_HOLD_S and others_waited <= 0.8 * MAX_HOLD_S:
                shares.append(held())
            close(pool)
        assert all(sum(share) == 16 and min(share) >= 7 for share in shares), shares
    # The process holding the fewest connections is the one the others leave new ones to;
    # stalled (stopped, or busy for long), it must not keep them waiting for long.
    stalled, serving = workers.children()
    os.kill(stalled, signal.SIGSTOP)
    try:
        opened_at = time.monotonic()
        pool = _opened_at_once(workers.url, 16)  # each answered, or the test fails on its timeout
        assert time.monotonic() - opened_at < 5
        assert _connections_held(serving, port) == 16
    finally:
        os.kill(stalled, signal.SIGCONT)
    close(pool)


def test_a_process_that_dies_is_replaced_and_its_background_jobs_move_to_another(workers: Workers) -> None:
    wait_until(lambda: {"reindex", "qdrant-sync"} <= set(_lease_holder_pids(workers.db)), timeout=20)
    holders = _lease_holder_pids(workers.db)
    assert set(holders.values()) <= set(workers.children())  # held by a serving process, once each
    victim = holders["reindex"]
    os.kill(victim, signal.SIGKILL)
    wait_until(lambda: len(workers.children()) == 2 and victim not in workers.children(), timeout=20)
    wait_until(lambda: _lease_holder_pids(workers.db).get("reindex") not in (None, victim), timeout=20)
    assert _lease_holder_pids(workers.db)["reindex"] in workers.children()
    reply = workers.client().chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "Still there?"}]
    )
    assert reply.choices[0].message.content


def test_a_queued_turn_is_stored_once_when_two_processes_take_the_same_job(tmp_path: Path) -> None:
    from memroute.config import Config

    config = Config.for_path(tmp_path / "memroute.db", environ={})
    one, parts_one = open_parts(config)
    two, parts_two = open_parts(config)
    one.update_settings(enabled=True)
    key, _ = one.keys.create("k")
    one.enqueue_turn(key.id, ChatTurn("My sister Ana lives in Porto now. I prefer tea.", "", "", "req-1", ""))
    # Both processes read the same job before either stores it.
    jobs_one = parts_one.store.jobs.next_batch(max_attempts=5, limit=10)
    jobs_two = parts_two.store.jobs.next_batch(max_attempts=5, limit=10)
    assert [j.id for j in jobs_one] == [j.id for j in jobs_two] != []
    parts_one.learner.process_jobs(jobs_one)
    parts_two.learner.process_jobs(jobs_two)
    assert rows(config.db_path, "SELECT count(*) FROM extraction_jobs") == [(0,)]
    learned = one.list(api_key_id=key.id).items
    assert sorted(m.key for m in learned if not m.key.startswith("turn:")) == [
        "family:sister:ana",
        "preference:tea",
    ]
    # Learned once: a fact stored again would cite the same request twice as its sources.
    assert [m.metadata.get("sources") for m in learned] == [None, None, None]
    assert {m.metadata["requestId"] for m in learned} == {"req-1"}
    one.close()
    two.close()


def test_a_memory_changed_by_another_process_is_never_served_stale(tmp_path: Path) -> None:
    import apsw

    mem = Memory.open(tmp_path / "memroute.db", start_workers=False)
    key, _ = mem.keys.create("k")
    memory = mem.add(key.id, "The spare key is under the blue pot.")
    assert mem.get(memory.id).content == "The spare key is under the blue pot."  # now cached
    other = apsw.Connection(str(tmp_path / "memroute.db"))  # as another process would write
    moved = "The spare key is with the neighbour."
    other.execute("UPDATE memories SET content = ? WHERE id = ?", (moved, memory.id))
    other.close()
    assert mem.get(memory.id).content == moved
    mem.close()


def _cpus_by_thread(pid: int) -> dict[int, str]:
    """The CPUs each thread of process `pid` may run on (`Cpus_allowed_list`), by thread id."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            for line in (task / "status").read_text().splitlines():
                if line.startswith("Cpus_allowed_list:"):
                    found[int(task.name)] = line.split(":", 1)[1].strip()
    return found


def _cpus_of_threads(pid: int) -> set[str]:
    return set(_cpus_by_thread(pid).values())


@pytest.mark.slow(seconds=10)
def test_pinned_workers_hold_their_event_loop_and_chat_threads_to_a_cpu_of_their_own(
    tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    """`--pin-cpus auto`: worker k's event loop and the threads that admit its chats run on
    the k-th CPU this machine lets memroute use (round robin); its background threads
    (learning, re-index) still run on any CPU; chats are answered as before. (Without it the
    workers run anywhere: see the first test.)"""
    allowed = sorted(os.sched_getaffinity(0))
    everywhere = _cpus_by_thread(os.getpid())[os.getpid()]
    with serving_workers(tmp_path, upstream, "--pin-cpus", "auto") as running:
        for n in range(6):  # a new connection each: both workers answer some
            answer = (
                running.client()
                .with_options(default_headers={"connection": "close"})
                .chat.completions.create(
                    model="echo-1", messages=[{"role": "user", "content": f"My locker number is {n}07."}]
                )
            )
            assert answer.choices[0].message.content
        cpus = {str(allowed[index % len(allowed)]) for index in range(2)}
        pinned = [
            f"worker {index} runs on CPU {allowed[index % len(allowed)]} (MEMROUTE_PIN_CPUS)"
            for index in range(2)
        ]
        # Each process logs its CPU just after it has started.
        wait_until(lambda: all(line in (tmp_path / "serve.log").read_text() for line in pinned), timeout=10)
        threads = {pid: _cpus_by_thread(pid) for pid in running.children()}
        assert {by_thread[pid] for pid, by_thread in threads.items()} == cpus  # each event loop
        # Beside its event loop, a worker that answered chats holds the threads that admitted them.
        held = [
            sum(cpus == by_thread[pid] for cpus in by_thread.values()) for pid, by_thread in threads.items()
        ]
        assert max(held) >= 2
        for by_thread in threads.values():
            assert set(by_thread.values()) <= cpus | {everywhere}
            assert everywhere in by_thread.values()  # the background threads


def test_cpus_to_pin_to_are_checked_before_anything_starts(tmp_path: Path) -> None:
    """A CPU list memroute may not use, or that is not one, stops `serve` at once with the
    reason; nothing is served."""
    beyond = max(os.sched_getaffinity(0)) + 1
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMROUTE_")}
    env.update(MEMROUTE_DATA_DIR=str(tmp_path), MEMROUTE_ADMIN_TOKEN=ADMIN)
    serve = [sys.executable, "-m", "memroute", "serve", "--port", str(free_port())]
    cases = [
        (
            [*serve, "--pin-cpus", str(beyond)],
            env,
            f"--pin-cpus: CPU {beyond} is not one this process may use",
        ),
        (
            serve,
            {**env, "MEMROUTE_PIN_CPUS": "0-x"},
            "MEMROUTE_PIN_CPUS: must be off, auto or CPUs such as 0,2-3",
        ),
        ([*serve, "--pin-cpus", "1-0"], env, "--pin-cpus: the range 1-0 runs backwards"),
    ]
    for command, environment, reason in cases:
        done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=60)
        assert done.returncode != 0
        assert reason in done.stderr
        assert "OpenAI base URL" not in done.stdout  # the banner of a server that starts


def test_a_cpu_list_names_cpus_and_ranges_in_the_order_given() -> None:
    """`MEMROUTE_PIN_CPUS`: worker k takes the k-th CPU named; a CPU named twice counts once."""
    allowed = (0, 1, 2, 3)
    assert parse_cpus("0,2-3", allowed) == (0, 2, 3)
    assert parse_cpus(" 3, 1-2, 2 ", allowed) == (3, 1, 2)
    assert parse_cpus("auto", allowed) == allowed
    assert parse_cpus("", allowed) == parse_cpus("off", allowed) == ()
    with pytest.raises(InvalidInput, match="CPU 4 is not one this process may use"):
        parse_cpus("2-4", allowed)
