"""The gateway under abuse: per-key and total limits on upstream calls, requests a
minute, calls cancelled when their client disconnects, a total deadline, a cap on an
answer's size, a cap on a chat's messages. memroute under uvicorn, a scripted upstream
(`echo`) and a TCP-level one (`slow`) that hangs or drips, the openai SDK as the client;
limits and deadlines are small so every test ends in a second or two."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from error_shape import assert_error
from memories import open_memory
from servers import ADMIN, AUTH, LiveServer, RawUpstream, ScriptedUpstream

from memroute.config import Config
from memroute.web.app import create_app

HI = [{"role": "user", "content": "hi"}]
SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
FIRST_EVENT = (
    b'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "x", '
    b'"choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": null}]}\n\n'
)


@dataclass
class Gateway:
    url: str
    secrets: dict[str, str]  # key name → secret
    ids: dict[str, str]  # key name → key id
    echo: ScriptedUpstream
    clients: dict[str, openai.OpenAI] = field(default_factory=dict)

    def client(self, name: str) -> openai.OpenAI:
        if name not in self.clients:
            self.clients[name] = openai.OpenAI(
                base_url=self.url + "/v1", api_key=self.secrets[name], max_retries=0, timeout=10
            )
        return self.clients[name]

    def post(self, name: str, body: dict[str, Any], path: str = "/v1/chat/completions") -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.secrets[name]}"}
        return httpx.post(self.url + path, json=body, headers=headers, timeout=10)

    def chat_works(self, name: str) -> bool:
        reply = self.client(name).chat.completions.create(model="echo-1", messages=HI)
        return reply.choices[0].message.content == "hi"

    def hang_up_later(self, name: str, body: dict[str, Any]) -> socket.socket:
        """A chat sent on a raw socket and not read: closing the socket is the client leaving."""
        payload = json.dumps(body).encode()
        sock = socket.create_connection(("127.0.0.1", int(self.url.rsplit(":", 1)[1])))
        head = (
            "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            f"authorization: Bearer {self.secrets[name]}\r\ncontent-length: {len(payload)}\r\n\r\n"
        )
        sock.sendall(head.encode() + payload)
        return sock


def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


@contextmanager
def gateway(tmp_path: Path, slow: RawUpstream | None = None, **env: str) -> Iterator[Gateway]:
    """memroute with keys `a` and `b`, the echo upstream as its default provider and
    `slow` (if given) as provider `slow` (model `slow/x`)."""
    db = tmp_path / "m.db"
    secrets, ids = {}, {}
    with open_memory(db) as side:
        for name in ("a", "b"):
            key, secrets[name] = side.keys.create(name)
            ids[name] = key.id
        if slow is not None:
            side.providers.add("slow", slow.url + "/v1")
    echo = ScriptedUpstream()
    with LiveServer(echo.app()) as upstream:
        environ = {"MEMROUTE_UPSTREAM_BASE_URL": upstream.url + "/v1", "MEMROUTE_ADMIN_TOKEN": ADMIN, **env}
        with LiveServer(create_app(Config.for_path(db, environ=environ))) as server:
            gw = Gateway(server.url, secrets, ids, echo)
            yield gw
            for client in gw.clients.values():
                client.close()


def assert_refused(response: httpx.Response, *words: str) -> None:
    error = assert_error(response, 429, openai=True)
    assert error["type"] == "rate_limit_error"
    assert int(response.headers["retry-after"]) >= 1
    for word in words:
        assert word in error["message"]


# -- concurrent calls per key and in total ---------------------------------------------------


def test_a_key_at_its_limit_is_refused_at_once_while_other_keys_are_served(tmp_path: Path) -> None:
    with RawUpstream(hold=True) as slow, gateway(tmp_path, slow, MEMROUTE_KEY_MAX_CONCURRENT="2") as gw:
        held = [gw.hang_up_later("a", {"model": "slow/x", "messages": HI}) for _ in range(2)]
        wait_until(lambda: slow.requests == 2)  # both of key a's calls wait on the provider

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

        for sock in held:
            sock.close()
        wait_until(lambda: slow.closed_by_client == 2)  # their upstream calls were cancelled
        assert gw.chat_works("a")  # and their slots are free again


def test_the_total_limit_holds_for_all_keys(tmp_path: Path) -> None:
    with RawUpstream(hold=True) as slow, gateway(tmp_path, slow, MEMROUTE_MAX_CONCURRENT="1") as gw:
        held = gw.hang_up_later("a", {"model": "slow/x", "messages": HI})
        wait_until(lambda: slow.requests == 1)
        assert_refused(gw.post("b", {"model": "echo-1", "messages": HI}), "for all keys")
        held.close()
        wait_until(lambda: slow.closed_by_client == 1)
        assert gw.chat_works("b")


def test_a_failed_upstream_call_gives_its_slot_back(tmp_path: Path) -> None:
    # The provider hangs up without answering: a 502, and the key's only slot is free again.
    with RawUpstream() as broken, gateway(tmp_path, broken, MEMROUTE_KEY_MAX_CONCURRENT="1") as gw:
        for stream in (False, True):
            response = gw.post("a", {"model": "slow/x", "messages": HI, "stream": stream})
            assert assert_error(response, 502, openai=True)["message"].startswith("upstream provider 'slow'")
        assert gw.chat_works("a")


# -- requests a minute ------------------------------------------------------------------------


def test_a_key_over_its_requests_a_minute_is_told_when_to_retry(tmp_path: Path) -> None:
    with gateway(tmp_path, MEMROUTE_KEY_RPM="2") as gw:
        assert gw.chat_works("a") and gw.chat_works("a")
        third = gw.post("a", {"model": "echo-1", "messages": HI})
        assert_refused(third, "2 requests in the last minute")
        assert 1 <= int(third.headers["retry-after"]) <= 30  # one request every 30 s
        assert gw.chat_works("b")  # every key has its own minute
        assert len(gw.echo.requests) == 3


def test_a_key_override_from_the_keys_api_takes_effect_at_once(tmp_path: Path) -> None:
    with gateway(tmp_path, MEMROUTE_KEY_RPM="0") as gw:
        api = httpx.Client(base_url=gw.url, headers=AUTH, timeout=10)
        changed = api.patch(f"/api/keys/{gw.ids['a']}", json={"requestsPerMinute": 1})
        assert changed.status_code == 200, changed.text
        assert changed.json()["key"]["requestsPerMinute"] == 1
        assert changed.json()["key"]["maxConcurrent"] is None  # absent: unchanged (the default)
        assert gw.chat_works("a")
        assert_refused(gw.post("a", {"model": "echo-1", "messages": HI}), "1 requests in the last minute")
        assert gw.chat_works("b") and gw.chat_works("b")  # no per-minute limit by default here

        back = api.patch(f"/api/keys/{gw.ids['a']}", json={"requestsPerMinute": None})
        assert back.json()["key"]["requestsPerMinute"] is None
        assert gw.chat_works("a")


# -- a client that disconnects ----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["non-streamed", "streamed"])
def test_a_client_that_disconnects_cancels_its_upstream_call(tmp_path: Path, stream: bool) -> None:
    # The provider never answers; the client gives up: the upstream socket is closed and
    # the key's only slot is free again.
    with RawUpstream(hold=True) as slow, gateway(tmp_path, slow, MEMROUTE_KEY_MAX_CONCURRENT="1") as gw:
        sock = gw.hang_up_later("a", {"model": "slow/x", "messages": HI, "stream": stream})
        wait_until(lambda: slow.requests == 1)
        sock.close()
        wait_until(lambda: slow.closed_by_client == 1)
        assert gw.chat_works("a")


def test_a_client_that_leaves_a_relayed_stream_closes_the_upstream_response(tmp_path: Path) -> None:
    with (
        RawUpstream(SSE_HEAD + FIRST_EVENT, hold=True) as slow,
        gateway(tmp_path, slow, MEMROUTE_KEY_MAX_CONCURRENT="1") as gw,
    ):
        stream = gw.client("a").chat.completions.create(model="slow/x", messages=HI, stream=True)
        assert next(iter(stream)).choices[0].delta.content == "Hel"  # relayed as it arrived
        stream.close()
        wait_until(lambda: slow.closed_by_client == 1)
        assert gw.chat_works("a")


# -- the total deadline -----------------------------------------------------------------------


def test_a_dripping_answer_is_cut_off_at_the_total_deadline(tmp_path: Path) -> None:
    # One byte every 50 ms never trips the per-read timeout; the total deadline (1 s) does.
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n"
    with (
        RawUpstream(head, trickle=b" " * 1000) as slow,
        gateway(tmp_path, slow, MEMROUTE_UPSTREAM_TOTAL_TIMEOUT="1") as gw,
    ):
        with pytest.raises(openai.APIStatusError) as caught:
            gw.client("a").chat.completions.create(model="slow/x", messages=HI)
        assert caught.value.status_code == 504
        assert (
            "did not finish its answer within 1 s (MEMROUTE_UPSTREAM_TOTAL_TIMEOUT)" in caught.value.message
        )
        wait_until(lambda: slow.closed_by_client == 1)
        assert gw.chat_works("a")


def test_a_dripping_stream_ends_at_the_total_deadline(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        RawUpstream(SSE_HEAD + FIRST_EVENT, trickle=b": keep-alive\n" * 100) as slow,
        gateway(tmp_path, slow, MEMROUTE_UPSTREAM_TOTAL_TIMEOUT="1") as gw,
        caplog.at_level(logging.WARNING, logger="memroute.gateway"),
    ):
        chunks = list(gw.client("a").chat.completions.create(model="slow/x", messages=HI, stream=True))
        assert [c.choices[0].delta.content for c in chunks] == ["Hel"]  # what came in time, then the end
        wait_until(lambda: slow.closed_by_client == 1)
    assert "gateway.stream.deadline provider=slow seconds=1" in caplog.text


# -- sizes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "read-until-close"])
def test_an_answer_over_the_size_cap_is_a_502(tmp_path: Path, declared: bool) -> None:
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "x" * 5000}}]}).encode()
    length = f"content-length: {len(body)}\r\n" if declared else "connection: close\r\n"
    reply = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{length}\r\n".encode() + body
    with RawUpstream(reply) as big, gateway(tmp_path, big, MEMROUTE_MAX_UPSTREAM_BODY_BYTES="2048") as gw:
        error = assert_error(gw.post("a", {"model": "slow/x", "messages": HI}), 502, openai=True)
        assert error["message"] == (
            "upstream provider 'slow' answered with more than 2048 bytes "
            "(MEMROUTE_MAX_UPSTREAM_BODY_BYTES); nothing of it was passed on"
        )


def test_a_chat_with_too_many_messages_is_a_400_and_goes_nowhere(tmp_path: Path) -> None:
    with gateway(tmp_path, MEMROUTE_MAX_CHAT_MESSAGES="3") as gw:
        messages = [{"role": "user", "content": str(n)} for n in range(4)]
        error = assert_error(gw.post("a", {"model": "echo-1", "messages": messages}), 400, openai=True)
        assert error["message"] == (
            "messages: holds 4 messages; a chat may hold at most 3 (MEMROUTE_MAX_CHAT_MESSAGES)"
        )
        assert gw.echo.requests == []
        reply = gw.client("a").chat.completions.create(model="echo-1", messages=messages[:3])  # type: ignore[arg-type]
        assert reply.choices[0].message.content == "2"
