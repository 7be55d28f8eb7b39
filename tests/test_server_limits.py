"""The server cannot be starved of connections: slow and idle clients are cut off, a
connection cap answers 503 at once, `Too many open files` is survived, the open-files limit
is raised, `memroute serve` exits 1 when it can no longer serve, and forwarded headers are
believed only from trusted proxies. Real servers and raw sockets on 127.0.0.1."""

from __future__ import annotations

import os
import resource
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from error_shape import assert_error
from gateways import gateway_config
from memories import open_memory
from servers import ADMIN, TLS, LiveServer, app_server, wait_until

from memroute.config import Config
from memroute.errors import InvalidInput
from memroute.web.app import create_app
from memroute.web.serve import bound_socket, serving

HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
ON_LINUX = pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="reads /proc/<pid>/limits")


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setblocking(False)
    return sock


def _read_all(sock: socket.socket) -> bytes | None:
    """What the server sent before closing, or None while it keeps the connection open."""
    received = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except BlockingIOError:
            return None
        except ConnectionResetError:
            return received
        if not chunk:
            return received
        received += chunk


def _answer(sock: socket.socket, request: bytes) -> bytes:
    """Send `request` on a blocking socket and read its whole JSON answer."""
    sock.sendall(request)
    received = b""
    while not received.endswith(b"}"):
        chunk = sock.recv(65536)
        assert chunk, received
        received += chunk
    return received


def _drip_until_closed(
    socks: list[socket.socket], seconds: float, drip: bytes = b"X-Slow: 1\r\n"
) -> dict[socket.socket, bytes]:
    """Send `drip` (one more header line: a slow-header client) to each open socket every
    0.2 s until the server has closed all of them or `seconds` pass; what each received."""
    answers: dict[socket.socket, bytes] = {}
    deadline = time.monotonic() + seconds
    while len(answers) < len(socks) and time.monotonic() < deadline:
        for sock in socks:
            if sock in answers:
                continue
            got = _read_all(sock)
            if got is not None:
                answers[sock] = got
                continue
            try:
                sock.send(drip)
            except OSError:
                answers[sock] = b""
        select.select([s for s in socks if s not in answers], [], [], 0.2)
    return answers


def test_slow_header_clients_over_the_cap_make_room_for_a_real_request(tmp_path: Path) -> None:
    env = {"MEMROUTE_MAX_CONNECTIONS": "20", "MEMROUTE_HEADER_TIMEOUT": "1"}
    with app_server(tmp_path / "m.db", **env) as server:
        attackers = [_connect(server.port) for _ in range(30)]
        try:
            for sock in attackers:
                sock.send(HEAD)
            time.sleep(0.6)  # slow for half a second: no longer a client about to send its head
            # At the cap, a new connection takes the place of the longest-waiting slow one.
            assert httpx.get(f"{server.url}/healthz", timeout=5).json()["status"] == "ok"
            answers = _drip_until_closed(attackers, seconds=5)
            assert len(answers) == 30, "the server kept slow-header connections open"
            # The ten over the cap came while the others were still fresh: refused at once.
            refused = [a for a in answers.values() if a.startswith(b"HTTP/1.1 503")]
            assert len(refused) == 10
            assert all(a == b"" for a in answers.values() if a not in refused)  # cut off, no answer
            assert httpx.get(f"{server.url}/healthz", timeout=5).json()["status"] == "ok"
        finally:
            for sock in attackers:
                sock.close()


def test_a_connection_over_the_cap_is_refused_at_once_when_every_connection_is_in_a_request(
    tmp_path: Path,
) -> None:
    env = {"MEMROUTE_MAX_CONNECTIONS": "20", "MEMROUTE_BODY_TIMEOUT": "2"}
    with app_server(tmp_path / "m.db", **env) as server:
        uploads = [_connect(server.port) for _ in range(20)]
        try:
            for sock in uploads:  # each in a request: its head is in, its body is coming
                sock.send(
                    b"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                    b'content-length: 100\r\n\r\n{"token": '
                )
            # Until the server has accepted all twenty and read their heads (a moment on a busy
            # machine, well within the body timeout), a new connection is not over the cap.
            deadline = time.monotonic() + 1.5
            busy = httpx.get(f"{server.url}/healthz", timeout=5)
            while busy.status_code != 503 and time.monotonic() < deadline:
                time.sleep(0.05)
                busy = httpx.get(f"{server.url}/healthz", timeout=5)
            error = assert_error(busy, 503)
            assert "too many open connections" in error["message"]
            assert busy.headers["retry-after"] == "1"
            answers = _drip_until_closed(uploads, seconds=5, drip=b"")  # stalled bodies are cut
            assert len(answers) == 20
            assert httpx.get(f"{server.url}/healthz", timeout=5).json()["status"] == "ok"
        finally:
            for sock in uploads:
                sock.close()


def test_idle_and_stalled_connections_are_closed_but_keep_alive_connections_stay_usable(
    tmp_path: Path,
) -> None:
    env = {"MEMROUTE_HEADER_TIMEOUT": "0.5", "MEMROUTE_BODY_TIMEOUT": "0.5"}
    with app_server(tmp_path / "m.db", **env) as server:
        silent = _connect(server.port)
        half_body = _connect(server.port)
        half_body.send(
            b"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b'content-length: 100\r\n\r\n{"token": '
        )
        assert _drip_until_closed([silent], seconds=5, drip=b"") == {silent: b""}
        assert _drip_until_closed([half_body], seconds=5, drip=b"") == {half_body: b""}
        kept = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        assert _answer(kept, HEAD + b"\r\n").startswith(b"HTTP/1.1 200")
        time.sleep(0.8)  # idle longer than the header timeout, shorter than keep-alive
        assert _answer(kept, HEAD + b"\r\n").startswith(b"HTTP/1.1 200")  # the same connection
        kept.setblocking(False)
        kept.send(b"GET /healthz HTTP/1.1\r\n")  # half of the next head, then nothing
        assert _drip_until_closed([kept], seconds=5, drip=b"") == {kept: b""}
        for sock in (silent, half_body, kept):
            sock.close()


def test_forwarded_headers_count_only_from_a_trusted_proxy(tmp_path: Path) -> None:
    with app_server(tmp_path / "m.db") as server, httpx.Client(base_url=server.url, timeout=5) as client:
        statuses = [
            client.post(
                "/api/session", json={"token": "wrong"}, headers={"X-Forwarded-For": f"203.0.113.{i}"}
            ).status_code
            for i in range(11)
        ]
        assert statuses[:10] == [401] * 10
        assert statuses[10] == 429  # rotating X-Forwarded-For does not reset the count
        login = client.post("/api/session", json={"token": ADMIN}, headers={"X-Forwarded-Proto": "https"})
        assert login.status_code == 429  # still the same address
    proxied = {"MEMROUTE_TRUSTED_PROXIES": "127.0.0.1, ::1"}
    with (
        app_server(tmp_path / "p.db", **proxied) as server,
        httpx.Client(base_url=server.url, timeout=5) as client,
    ):
        login = client.post("/api/session", json={"token": ADMIN}, headers={"X-Forwarded-Proto": "https"})
        assert login.status_code == 200
        assert "secure" in login.headers["set-cookie"].lower()  # the proxy said the client used https
    with (
        app_server(tmp_path / "q.db") as server,
        httpx.Client(base_url=server.url, timeout=5) as client,
    ):
        login = client.post("/api/session", json={"token": ADMIN}, headers={"X-Forwarded-Proto": "https"})
        assert login.status_code == 200
        assert "secure" not in login.headers["set-cookie"].lower()


def test_trusted_proxies_must_be_addresses_or_networks(tmp_path: Path) -> None:
    good = Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7"})
    assert good.trusted_proxies == ("10.0.0.0/8", "192.0.2.7")
    with pytest.raises(InvalidInput, match=r"proxy\.internal") as caught:
        Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_TRUSTED_PROXIES": "10.0.0.1,proxy.internal"})
    assert caught.value.field == "MEMROUTE_TRUSTED_PROXIES"
    with pytest.raises(InvalidInput):
        Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_HEADER_TIMEOUT": "0"})


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMROUTE_")}
    return {**env, "MEMROUTE_DATA_DIR": str(tmp_path), "MEMROUTE_ADMIN_TOKEN": ADMIN, **extra}


@contextmanager
def _serve(
    args: list[str], env: dict[str, str], log: Path, **popen: Any
) -> Iterator[subprocess.Popen[bytes]]:
    """`memroute serve ARGS`, its stderr (and stdout unless `popen` names one) into `log`."""
    with log.open("wb") as out:
        popen.setdefault("stdout", out)
        process = subprocess.Popen(
            [sys.executable, "-m", "memroute", "serve", *args], env=env, stderr=out, **popen
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{url}/healthz", timeout=1, verify=TLS).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)


def _low_fd_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 384))


@ON_LINUX
def test_serve_survives_running_out_of_files_and_exits_1_once_it_cannot_accept(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    url, log, fd = f"http://127.0.0.1:{listener.getsockname()[1]}", tmp_path / "serve.log", listener.fileno()
    env = _env(tmp_path, MEMROUTE_MAX_CONNECTIONS="1000", MEMROUTE_HEADER_TIMEOUT="1")
    popen = {"pass_fds": (fd,), "preexec_fn": _low_fd_limit, "stdout": subprocess.PIPE}
    with _serve(["--fd", str(fd)], env, log, **popen) as process:
        _wait_healthy(url, process, log)
        assert process.stdout is not None
        process.stdout.close()  # the access log now goes nowhere: each line fails to be written
        limits = Path(f"/proc/{process.pid}/limits").read_text().splitlines()
        assert any(
            line.startswith("Max open files") and line.split()[3:5] == ["384", "384"] for line in limits
        )
        flood = [socket.create_connection(listener.getsockname(), timeout=5) for _ in range(450)]
        try:
            # More idle connections than the server has files: accept fails with EMFILE
            # until the header timeout frees some; the server carries on by itself.
            assert httpx.get(f"{url}/healthz", timeout=15).json()["status"] == "ok"
        finally:
            for sock in flood:
                sock.close()
        assert process.poll() is None
        listener.shutdown(socket.SHUT_RDWR)  # the socket a supervisor handed over is gone
        assert process.wait(20) == 1  # so the supervisor restarts it
    listener.close()
    text = log.read_text()
    assert "open-files limit raised from 256 to 384" in text
    assert "Too many open files" in text
    assert "no longer accepts connections" in text
    assert "exiting with status 1" in text
    assert "Logging error" not in text


def test_serve_refuses_an_fd_that_is_not_a_listening_socket(tmp_path: Path) -> None:
    with open(tmp_path / "plain", "wb") as plain:
        done = subprocess.run(
            [sys.executable, "-m", "memroute", "serve", "--fd", str(plain.fileno())],
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            pass_fds=(plain.fileno(),),
            timeout=30,
        )
    assert done.returncode != 0
    assert "not an open socket" in done.stderr or "not a listening socket" in done.stderr


def test_a_free_port_is_held_from_the_moment_it_is_chosen_until_the_server_listens() -> None:
    """Choosing a free port and binding it later let another process take it in between
    (a bench's gateway once started on a port something else answered on, then refused)."""
    held = bound_socket()
    try:
        port = held.getsockname()[1]
        with socket.socket() as other, pytest.raises(OSError):
            other.bind(("127.0.0.1", port))
        with pytest.raises(ConnectionRefusedError):  # not serving yet: nothing is queued
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        assert held.proto == socket.IPPROTO_TCP  # asyncio turns Nagle's delay off only then
    finally:
        held.close()


def test_a_server_in_a_thread_answers_on_the_port_it_held() -> None:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"here"})

    with serving(app) as url:
        assert httpx.get(url, timeout=5).text == "here"
        with socket.socket() as other, pytest.raises(OSError):
            other.bind(("127.0.0.1", int(url.rsplit(":", 1)[1])))


def test_a_stopping_server_finishes_the_answer_in_flight_and_closes_idle_connections(
    tmp_path: Path, upstream: Any
) -> None:
    """Asked to stop while a chat waits for its provider, the server sends that answer,
    closes a kept-alive connection that waits for nothing, and runs the app's shutdown (the
    chat's turn is stored)."""
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        key, secret = side.keys.create("k")
        side.update_settings(enabled=True)
    upstream.stall(0.5)
    answers: list[Any] = []
    with LiveServer(create_app(gateway_config(db, upstream.url))) as server:
        idle = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        idle.sendall(HEAD + b"\r\n")
        assert idle.recv(65536).startswith(b"HTTP/1.1 200")  # kept alive, waiting for nothing
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)
        chat = threading.Thread(
            target=lambda: answers.append(
                client.chat.completions.create(
                    model="echo-1", messages=[{"role": "user", "content": "I keep bees on the roof."}]
                )
            )
        )
        chat.start()
        wait_until(lambda: len(upstream.requests) == 1)  # the answer is on its way
    chat.join(10)
    assert [a.choices[0].message.content for a in answers] == ["late"]
    idle.settimeout(5)
    assert idle.recv(65536) == b""  # closed by the server
    idle.close()
    with open_memory(db) as after:
        learned = after.list(api_key_id=key.id).items
        assert [m.content for m in learned if m.key.startswith("turn:")] == ["I keep bees on the roof."]
