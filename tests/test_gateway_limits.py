"""The gateway under abuse: per-key and total limits on upstream calls, requests a
minute, calls cancelled when their client disconnects, a total deadline, a cap on an
answer's size, a cap on a chat's messages. memroute under uvicorn, a scripted upstream
(`echo`) and a TCP-level one (`slow`) that hangs or drips, the openai SDK as the client;
limits and deadlines are small so every test ends in a second or two."""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import uvicorn
from error_shape import assert_error
from memories import open_memory
from servers import ADMIN, AUTH, LiveServer, RawUpstream, ScriptedUpstream, wait_until

from memroute import Memory
from memroute.config import Config
from memroute.errors import TooManyAttempts
from memroute.gateway.limits import GatewayLimiter, KeyLimits
from memroute.models.records import ApiKey
from memroute.web.app import create_app

HI = [{"role": "user", "content": "hi"}]
SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
FIRST_EVENT = (
    b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "x", '
    b'"choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": null}]}\n\n'
)


#: One server for the module, with small limits. Every test has keys of its own (so
#: their minutes and slots never mix) and its own providers.
ENV = {
    "MEMROUTE_KEY_MAX_CONCURRENT": "2",
    "MEMROUTE_MAX_CONCURRENT": "3",
    "MEMROUTE_KEY_RPM": "5",
    "MEMROUTE_UPSTREAM_TOTAL_TIMEOUT": "2",
    "MEMROUTE_MAX_UPSTREAM_BODY_BYTES": "2048",
    "MEMROUTE_MAX_CHAT_MESSAGES": "3",
}


@dataclass
class Server:
    url: str
    side: Memory  # a second Memory on the server's database, to add keys and providers
    echo: ScriptedUpstream


@dataclass
class Gateway:
    server: Server
    secrets: dict[str, str]  # key name → secret
    ids: dict[str, str]  # key name → key id
    clients: dict[str, openai.OpenAI] = field(default_factory=dict)
    sockets: list[socket.socket] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def echo(self) -> ScriptedUpstream:
        return self.server.echo

    def provider(self, upstream: RawUpstream) -> str:
        """Add `upstream` as a provider; returns a model name that goes to it."""
        provider_id = f"slow-{uuid.uuid4().hex[:8]}"
        self.server.side.providers.add(provider_id, upstream.url + "/v1")
        return f"{provider_id}/x"

    def limit(self, name: str, **limits: int | None) -> None:
        """The key's own limits (`max_concurrent`, `requests_per_minute`)."""
        self.server.side.keys.set_limits(
            self.ids[name],
            max_concurrent=limits.get("max_concurrent"),
            requests_per_minute=limits.get("requests_per_minute"),
        )

    def client(self, name: str) -> openai.OpenAI:
        if name not in self.clients:
            self.clients[name] = openai.OpenAI(
                base_url=self.url + "/v1", api_key=self.secrets[name], max_retries=0, timeout=10
            )
        return self.clients[name]

    def post(self, name: str, body: dict[str, Any], path: str = "/v1/chat/completions") -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.secrets[name]}"}
        return httpx.post(self.url + path, json=body, headers=headers, timeout=10)

    def refused(self, reason: str) -> float:
        """`memroute_gateway_refused_total` of `reason` in /metrics."""
        pattern = rf'^memroute_gateway_refused_total\{{reason="{reason}"\}} (\S+)$'
        found = re.search(pattern, httpx.get(self.url + "/metrics").text, re.M)
        return float(found[1]) if found else 0.0

    def chat_works(self, name: str) -> bool:
        reply = self.client(name).chat.completions.create(model="echo-1", messages=HI)
        return reply.choices[0].message.content == "hi"

    def hang_up_later(self, name: str, body: dict[str, Any]) -> socket.socket:
        """A chat sent on a raw socket and not read: closing the socket is the client leaving."""
        payload = json.dumps(body).encode()
        sock = socket.create_connection(("127.0.0.1", int(self.url.rsplit(":", 1)[1])))
        self.sockets.append(sock)
        head = (
            "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            f"authorization: Bearer {self.secrets[name]}\r\ncontent-length: {len(payload)}\r\n\r\n"
        )
        sock.sendall(head.encode() + payload)
        return sock


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """memroute with the echo upstream as its default provider and the limits of ENV."""
    db = tmp_path_factory.mktemp("limits") / "m.db"
    echo = ScriptedUpstream()
    with open_memory(db) as side, LiveServer(echo.app()) as upstream:
        environ = {"MEMROUTE_UPSTREAM_BASE_URL": upstream.url + "/v1", "MEMROUTE_ADMIN_TOKEN": ADMIN, **ENV}
        with LiveServer(create_app(Config.for_path(db, environ=environ))) as app:
            yield Server(app.url, side, echo)


@pytest.fixture
def gw(server: Server) -> Iterator[Gateway]:
    """Keys `a`, `b` and `c` of this test's own."""
    server.echo.requests.clear()
    secrets, ids = {}, {}
    for name in ("a", "b", "c"):
        key, secrets[name] = server.side.keys.create(name)
        ids[name] = key.id
    gateway = Gateway(server, secrets, ids)
    yield gateway
    for sock in gateway.sockets:
        sock.close()
    for client in gateway.clients.values():
        client.close()


def assert_refused(response: httpx.Response, *words: str) -> None:
    error = assert_error(response, 429, openai=True)
    assert error["type"] == "rate_limit_error"
    assert int(response.headers["retry-after"]) >= 1
    for word in words:
        assert word in error["message"]


# -- concurrent calls per key and in total ---------------------------------------------------


def test_a_key_at_its_limit_is_refused_at_once_while_other_keys_are_served(gw: Gateway) -> None:
    with RawUpstream(hold=True) as slow:
        model = gw.provider(slow)
        held = [gw.hang_up_later("a", {"model": model, "messages": HI}) for _ in range(2)]
        wait_until(lambda: slow.requests == 2)  # both of key a's calls wait on the provider
        refused_before = gw.refused("key_concurrent")

        with pytest.raises(openai.RateLimitError) as refused:
            gw.client("a").chat.completions.create(model="echo-1", messages=HI)
        assert refused.value.response.headers["retry-after"] == "1"
        assert "already has 2 requests running" in refused.value.message
        assert_refused(gw.post("a", {"model": "echo-1", "messages": HI}), "its limit")
        assert_refused(gw.post("a", {"model": "echo-1", "input": "x"}, "/v1/embeddings"))
        assert gw.chat_works("b")  # another key is served meanwhile
        assert gw.client("b").embeddings.create(model="echo-1", input="x").data[0].embedding == [
            0.1,
            0.2,
            0.3,
        ]
        assert len(gw.echo.requests) == 2  # the refused requests never reached a provider
        assert gw.refused("key_concurrent") == refused_before + 3  # and /metrics counts them

        for sock in held:
            sock.close()
        wait_until(lambda: slow.closed_by_client == 2)  # their upstream calls were cancelled
        assert gw.chat_works("a")  # and their slots are free again


def test_the_total_limit_holds_for_all_keys(gw: Gateway) -> None:
    with RawUpstream(hold=True) as slow:
        model = gw.provider(slow)
        held = [gw.hang_up_later(name, {"model": model, "messages": HI}) for name in ("a", "a", "b")]
        wait_until(lambda: slow.requests == 3)
        assert_refused(gw.post("c", {"model": "echo-1", "messages": HI}), "running 3 requests for all keys")
        held[2].close()
        wait_until(lambda: slow.closed_by_client == 1)
        assert gw.chat_works("c")


def test_a_failed_upstream_call_gives_its_slot_back(gw: Gateway) -> None:
    # The provider hangs up without answering: a 502, and the key's only slot is free again.
    gw.limit("a", max_concurrent=1)
    with RawUpstream() as broken:
        model = gw.provider(broken)
        for stream in (False, True):
            response = gw.post("a", {"model": model, "messages": HI, "stream": stream})
            error = assert_error(response, 502, openai=True)
            assert error["message"].startswith(f"upstream provider '{model[:-2]}' broke off its answer")
        assert gw.chat_works("a")


# -- requests a minute ------------------------------------------------------------------------


def test_a_key_over_its_requests_a_minute_is_told_when_to_retry(gw: Gateway) -> None:
    assert all(gw.chat_works("a") for _ in range(5))  # MEMROUTE_KEY_RPM=5: a burst of five
    refused_before = gw.refused("key_rpm")
    sixth = gw.post("a", {"model": "echo-1", "messages": HI})
    assert_refused(sixth, "5 requests in the last minute")
    assert 1 <= int(sixth.headers["retry-after"]) <= 12  # then one every 12 s
    assert gw.refused("key_rpm") == refused_before + 1
    assert gw.chat_works("b")  # every key has its own minute
    assert len(gw.echo.requests) == 6


def test_a_key_gets_a_request_back_every_sixty_over_n_seconds() -> None:
    now = [0.0]
    limiter = GatewayLimiter(10, KeyLimits(max_concurrent=5, requests_per_minute=5), clock=lambda: now[0])
    key = ApiKey("k", "agent", "mr-abcde", "2026-01-01T00:00:00.000Z", None, None)
    for _ in range(5):
        limiter.acquire(key).release()
    with pytest.raises(TooManyAttempts) as refused:
        limiter.acquire(key)
    assert refused.value.retry_after == 12
    now[0] = 6.0  # half a request back: still refused, told to wait the other half
    with pytest.raises(TooManyAttempts) as refused:
        limiter.acquire(key)
    assert refused.value.retry_after == 6
    now[0] = 12.0
    limiter.acquire(key).release()


def test_each_of_several_server_processes_holds_its_share_of_the_limits() -> None:
    """With `--workers 3`, a process lets a key run ceil(5 / 3) = 2 calls and send
    ceil(10 / 3) = 4 requests a minute: the three together hold the configured limits."""
    limiter = GatewayLimiter(10, KeyLimits(max_concurrent=5, requests_per_minute=10), processes=3)
    key = ApiKey("k", "agent", "mr-abcde", "2026-01-01T00:00:00.000Z", None, None)
    slots = [limiter.acquire(key), limiter.acquire(key)]
    with pytest.raises(TooManyAttempts, match="2 "):
        limiter.acquire(key)
    for slot in slots:
        slot.release()
    limiter.acquire(key).release()
    limiter.acquire(key).release()
    with pytest.raises(TooManyAttempts, match="4 requests in the last minute"):
        limiter.acquire(key)
    own = ApiKey("o", "own", "mr-fghij", "2026-01-01T00:00:00.000Z", None, None, max_concurrent=1)
    limiter.acquire(own)  # a key's own limit of 1 stays 1, never 0
    with pytest.raises(TooManyAttempts):
        limiter.acquire(own)


def test_a_flood_from_one_key_is_refused_before_it_queues_for_admission() -> None:
    """Requests still waiting for a worker thread count against their key (by the secret they
    present) and against the gateway's total, so a flood never queues in front of others."""
    limiter = GatewayLimiter(6, KeyLimits(max_concurrent=2, requests_per_minute=0))
    key = ApiKey("k", "agent", "mr-abcde", "2026-01-01T00:00:00.000Z", None, None, max_concurrent=3)
    first = limiter.arrive("mr-flood")
    limiter.arrive("mr-flood")
    with pytest.raises(TooManyAttempts, match="already has 2 requests running"):
        limiter.arrive("mr-flood")  # the default limit until its key is known
    first.admitted(key)  # looked up: its own limit of 3 applies from now on
    slot = limiter.acquire(key)
    limiter.arrive("mr-flood")
    with pytest.raises(TooManyAttempts, match="already has 3 requests running"):
        limiter.arrive("mr-flood")  # one running and two waiting
    slot.release()
    others = [limiter.arrive(f"mr-other-{n}") for n in range(4)]  # other keys are not held up
    with pytest.raises(TooManyAttempts, match="for all keys"):
        limiter.arrive("mr-late")  # six wait to be admitted: the gateway's total
    others[0].admitted(None)
    limiter.arrive("mr-late")


def test_a_key_override_from_the_keys_api_takes_effect_at_once(gw: Gateway) -> None:
    with httpx.Client(base_url=gw.url, headers=AUTH, timeout=10) as api:
        changed = api.patch(f"/api/keys/{gw.ids['a']}", json={"requestsPerMinute": 1})
        assert changed.status_code == 200, changed.text
        assert changed.json()["key"]["requestsPerMinute"] == 1
        assert changed.json()["key"]["maxConcurrent"] is None  # absent: unchanged (the default)
        assert gw.chat_works("a")
        assert_refused(gw.post("a", {"model": "echo-1", "messages": HI}), "1 requests in the last minute")
        assert gw.chat_works("b") and gw.chat_works("b")  # other keys keep the default

        back = api.patch(f"/api/keys/{gw.ids['a']}", json={"requestsPerMinute": None})
        assert back.json()["key"]["requestsPerMinute"] is None
        assert gw.chat_works("a")  # the default again, a new minute


# -- a client that disconnects ----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["non-streamed", "streamed"])
def test_a_client_that_disconnects_cancels_its_upstream_call(
    gw: Gateway, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    # The provider never answers; the client gives up: the upstream socket is closed and
    # the key's only slot is free again, for the client's leaving (not the total deadline).
    gw.limit("a", max_concurrent=1)
    with RawUpstream(hold=True) as slow, caplog.at_level(logging.INFO, logger="memroute.gateway"):
        sock = gw.hang_up_later("a", {"model": gw.provider(slow), "messages": HI, "stream": stream})
        wait_until(lambda: slow.requests == 1)
        sock.close()
        wait_until(lambda: slow.closed_by_client == 1)
        wait_until(lambda: "gateway.client.disconnected" in caplog.text)
        assert gw.chat_works("a")
    assert "deadline" not in caplog.text


@pytest.mark.parametrize("stream", [False, True], ids=["non-streamed", "streamed"])
def test_under_another_asgi_server_a_client_that_disconnects_still_cancels_its_upstream_call(
    tmp_path: Path, stream: bool
) -> None:
    # Plain uvicorn does not tell the app that a client left (memroute's server does): the
    # gateway watches the request's receive channel instead.
    db = tmp_path / "m.db"
    with RawUpstream(hold=True) as slow, open_memory(db) as side:
        _key, secret = side.keys.create("a")
        environ = {"MEMROUTE_UPSTREAM_BASE_URL": slow.url + "/v1", "MEMROUTE_ADMIN_TOKEN": ADMIN}
        listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        listening.bind(("127.0.0.1", 0))
        config = uvicorn.Config(create_app(Config.for_path(db, environ=environ)), log_level="warning")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
        thread.start()
        try:
            wait_until(lambda: server.started)
            payload = json.dumps({"model": "x", "messages": HI, "stream": stream}).encode()
            client = socket.create_connection(listening.getsockname())
            client.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                + f"authorization: Bearer {secret}\r\ncontent-length: {len(payload)}\r\n\r\n".encode()
                + payload
            )
            wait_until(lambda: slow.requests == 1)
            client.close()
            wait_until(lambda: slow.closed_by_client == 1)
        finally:
            server.should_exit = True
            thread.join(30)
            listening.close()


def test_a_client_that_leaves_a_relayed_stream_closes_the_upstream_response(
    gw: Gateway, caplog: pytest.LogCaptureFixture
) -> None:
    gw.limit("a", max_concurrent=1)
    with RawUpstream(SSE_HEAD + FIRST_EVENT, hold=True) as slow, caplog.at_level(logging.INFO):
        stream = gw.client("a").chat.completions.create(model=gw.provider(slow), messages=HI, stream=True)
        assert next(iter(stream)).choices[0].delta.content == "Hel"  # relayed as it arrived
        stream.close()
        wait_until(lambda: slow.closed_by_client == 1)
        wait_until(lambda: "gateway.stream.client_left" in caplog.text)
        assert gw.chat_works("a")
    assert "deadline" not in caplog.text


def test_a_client_that_leaves_while_a_fast_stream_is_gathered_closes_the_upstream_response(
    gw: Gateway, caplog: pytest.LogCaptureFixture
) -> None:
    # The provider's bytes come 2 ms apart: past its first pieces, the relay leaves the
    # provider's connection unread between reads (MEMROUTE_STREAM_GATHER_MS, 5 ms), and the
    # client leaves meanwhile. The upstream response is closed, the slot freed.
    gw.limit("a", max_concurrent=1)
    trickle = b": keep-alive\n" * 100
    with (
        RawUpstream(SSE_HEAD + FIRST_EVENT, trickle=trickle, every=0.002) as fast,
        caplog.at_level(logging.INFO),
    ):
        stream = gw.client("a").chat.completions.create(model=gw.provider(fast), messages=HI, stream=True)
        assert next(iter(stream)).choices[0].delta.content == "Hel"
        time.sleep(0.05)  # several holds in
        stream.close()
        wait_until(lambda: fast.closed_by_client == 1)
        wait_until(lambda: "gateway.stream.client_left" in caplog.text)
        assert gw.chat_works("a")
    assert "deadline" not in caplog.text


# -- the total deadline -----------------------------------------------------------------------


def test_a_dripping_answer_is_cut_off_at_the_total_deadline(gw: Gateway) -> None:
    # One byte every 50 ms never trips the per-read timeout; the total deadline (2 s) does.
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n"
    with RawUpstream(head, trickle=b" " * 1000) as slow:
        with pytest.raises(openai.APIStatusError) as caught:
            gw.client("a").chat.completions.create(model=gw.provider(slow), messages=HI)
        assert caught.value.status_code == 504
        assert (
            "did not finish its answer within 2 s (MEMROUTE_UPSTREAM_TOTAL_TIMEOUT)" in caught.value.message
        )
        wait_until(lambda: slow.closed_by_client == 1)


def test_a_dripping_stream_ends_at_the_total_deadline(gw: Gateway, caplog: pytest.LogCaptureFixture) -> None:
    with (
        RawUpstream(SSE_HEAD + FIRST_EVENT, trickle=b": keep-alive\n" * 100) as slow,
        caplog.at_level(logging.WARNING, logger="memroute.gateway"),
    ):
        model = gw.provider(slow)
        chunks = list(gw.client("a").chat.completions.create(model=model, messages=HI, stream=True))
        assert [c.choices[0].delta.content for c in chunks] == ["Hel"]  # what came in time, then the end
        wait_until(lambda: slow.closed_by_client == 1)
    assert f"gateway.stream.deadline provider={model[:-2]} seconds=2" in caplog.text


# -- sizes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "read-until-close"])
def test_an_answer_over_the_size_cap_is_a_502(gw: Gateway, declared: bool) -> None:
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "x" * 5000}}]}).encode()
    length = f"content-length: {len(body)}\r\n" if declared else "connection: close\r\n"
    reply = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{length}\r\n".encode() + body
    with RawUpstream(reply) as big:
        model = gw.provider(big)
        error = assert_error(gw.post("a", {"model": model, "messages": HI}), 502, openai=True)
        assert error["message"] == (
            f"upstream provider '{model[:-2]}' answered with more than 2048 bytes "
            "(MEMROUTE_MAX_UPSTREAM_BODY_BYTES); nothing of it was passed on"
        )


def test_a_chat_with_too_many_messages_is_a_400_and_goes_nowhere(gw: Gateway) -> None:
    messages = [{"role": "user", "content": str(n)} for n in range(4)]  # MEMROUTE_MAX_CHAT_MESSAGES=3
    error = assert_error(gw.post("a", {"model": "echo-1", "messages": messages}), 400, openai=True)
    assert (
        error["message"]
        == "messages: holds 4 messages; a chat may hold at most 3 (MEMROUTE_MAX_CHAT_MESSAGES)"
    )
    assert gw.echo.requests == []
    reply = gw.client("a").chat.completions.create(model="echo-1", messages=messages[:3])  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "2"
