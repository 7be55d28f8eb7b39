"""The gateway's connections to providers: what a provider sees and what it can leave behind."""

from __future__ import annotations

import base64
import gzip
import json
import socket
from pathlib import Path
from typing import Any

import openai
import pytest
from gateways import gateway_config
from memories import open_memory
from servers import LiveServer, ScriptedUpstream
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from memroute.web.app import create_app


class CookieSettingProvider:
    """A provider that sets a session cookie on every answer and records what it was sent;
    its answers are gzip-compressed."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    def app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            body = await request.json()
            self.seen.append(dict(request.headers))
            answer = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
                ],
            }
            headers = {"set-cookie": f"session=for-call-{len(self.seen)}; Path=/", "content-encoding": "gzip"}
            return Response(
                gzip.compress(json.dumps(answer).encode()), media_type="application/json", headers=headers
            )

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def _chat(url: str, secret: str) -> Any:
    client = openai.OpenAI(base_url=url + "/v1", api_key=secret, max_retries=0)
    return client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])


def test_a_cookie_one_call_got_is_never_sent_with_another_clients_call(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        _, alice = side.keys.create("alice")
        _, bob = side.keys.create("bob")
    provider = CookieSettingProvider()
    with LiveServer(provider.app()) as up:
        config = gateway_config(db, up.url)
        with LiveServer(create_app(config)) as server:
            first = _chat(server.url, alice)
            second = _chat(server.url, bob)
    # The compressed answers arrive decoded.
    assert first.choices[0].message.content == second.choices[0].message.content == "ok"
    assert len(provider.seen) == 2
    assert "cookie" not in provider.seen[1], "bob's call carried the cookie set on alice's call"


def _db_with_a_key(tmp_path: Path) -> tuple[Path, str]:
    """A database with one client key, and the key's secret."""
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        _, secret = side.keys.create("k")
    return db, secret


def test_credentials_in_a_providers_base_url_are_sent_as_basic_auth(tmp_path: Path) -> None:
    db, secret = _db_with_a_key(tmp_path)
    provider = CookieSettingProvider()
    with LiveServer(provider.app()) as up:
        with_credentials = up.url.replace("http://", "http://gate:s3cret@")
        config = gateway_config(db, with_credentials, MEMROUTE_UPSTREAM_API_KEY="sk-provider-key")
        with LiveServer(create_app(config)) as server:
            assert _chat(server.url, secret).choices[0].message.content == "ok"
    expected = "Basic " + base64.b64encode(b"gate:s3cret").decode()
    assert provider.seen[0]["authorization"] == expected


def test_calls_go_through_the_proxy_the_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, secret = _db_with_a_key(tmp_path)
    proxy = CookieSettingProvider()  # it answers whatever it is asked to forward
    with LiveServer(proxy.app()) as up:
        monkeypatch.setenv("HTTP_PROXY", up.url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the test's own client talks to memroute directly
        monkeypatch.delenv("no_proxy", raising=False)
        # A provider this machine cannot reach but through the proxy.
        config = gateway_config(db, "http://provider.invalid")
        with LiveServer(create_app(config)) as server:
            assert _chat(server.url, secret).choices[0].message.content == "ok"
    assert proxy.seen[0]["host"] == "provider.invalid"


def _relayed_pieces(url: str, secret: str) -> list[bytes]:
    """A streamed chat's answer as the gateway wrote it: the body of each write (one HTTP
    chunk of its chunked answer), whatever the client's reads cut it into."""
    host, port = url.removeprefix("http://").split(":")
    body = json.dumps(
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]}
    ).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: {host}\r\nauthorization: Bearer {secret}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=20) as sock:
        sock.sendall(head.encode() + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    headers, _, rest = answer.partition(b"\r\n\r\n")
    assert headers.startswith(b"HTTP/1.1 200") and b"transfer-encoding: chunked" in headers.lower()
    pieces = []
    while True:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return pieces
        pieces.append(rest[:size])
        rest = rest[size + 2 :]


@pytest.mark.parametrize(
    ("gather_ms", "chunk_delay", "pieces_at_most", "pieces_at_least"),
    [
        (0, 0.01, 32, 16),  # gathering off: each token as it comes
        (60, 0.01, 12, 1),  # tokens 10 ms apart: gathered, each at most 60 ms late
        (60, 0.12, 6, 6),  # tokens 120 ms apart: each relayed as it comes
    ],
)
def test_a_fast_providers_tokens_are_relayed_together_and_a_slow_ones_one_by_one(
    tmp_path: Path, gather_ms: int, chunk_delay: float, pieces_at_most: int, pieces_at_least: int
) -> None:
    words = 30 if chunk_delay < 0.1 else 4  # 32 or 6 events: the words, the final chunk, [DONE]
    text = " ".join(f"w{n}" for n in range(words))
    db, secret = _db_with_a_key(tmp_path)
    upstream = ScriptedUpstream()
    upstream.reply(text, chunk_delay=chunk_delay)
    with LiveServer(upstream.app()) as up:
        config = gateway_config(db, up.url, MEMROUTE_STREAM_GATHER_MS=str(gather_ms))
        with LiveServer(create_app(config)) as server:
            pieces = _relayed_pieces(server.url, secret)
    events = b"".join(pieces).split(b"\n\n")
    said = [json.loads(e[6:])["choices"][0]["delta"].get("content", "") for e in events if e[6:7] == b"{"]
    assert "".join(said) == text and events[-2:] == [b"data: [DONE]", b""]  # every byte, in order
    assert pieces_at_least <= len(pieces) <= pieces_at_most, len(pieces)
