"""The gateway's own HTTP client on the wire: kept-alive connections a provider may close,
every framing and compression of an answer, TLS, and CONNECT tunnels through a proxy.
Each is driven the way a user does, by a chat through the `openai` SDK."""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import ssl
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
import trustme
from gateways import gateway_config
from memories import open_memory
from servers import LiveServer, RawUpstream, ScriptedUpstream, completion_events, free_port, wait_until
from wire_servers import ConnectProxy, WireProvider, answer, completion_json

from memroute.upstream.tls import tls_context
from memroute.web.app import create_app


@contextlib.contextmanager
def chatting(tmp_path: Path, provider_url: str, **env: str) -> Iterator[openai.OpenAI]:
    """A gateway in front of `provider_url`, and an `openai` client with a key of it."""
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        _, secret = side.keys.create("k")
    with LiveServer(create_app(gateway_config(db, provider_url, **env))) as server:
        yield openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)


def said(client: openai.OpenAI) -> str | None:
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    return reply.choices[0].message.content


def test_chats_one_after_another_travel_one_kept_alive_connection(tmp_path: Path) -> None:
    with (
        WireProvider([answer(completion_json("one")), answer(completion_json("two"))]) as provider,
        chatting(tmp_path, provider.url) as client,
    ):
        assert [said(client), said(client)] == ["one", "two"]
    assert provider.connections == 1


def test_a_provider_that_closes_after_each_answer_gets_a_new_connection_per_chat(tmp_path: Path) -> None:
    closing = answer(completion_json("ok"), headers={"connection": "close"})
    with WireProvider([closing]) as provider, chatting(tmp_path, provider.url) as client:
        assert [said(client), said(client), said(client)] == ["ok", "ok", "ok"]
    assert provider.connections == 3


def test_a_kept_alive_connection_the_provider_dropped_between_chats_is_not_used_again(tmp_path: Path) -> None:
    with (
        WireProvider([answer(completion_json("ok"))], drop_idle_after=0.1) as provider,
        chatting(tmp_path, provider.url) as client,
    ):
        assert said(client) == "ok"
        wait_until(lambda: provider.connections == 1 and len(provider.requests) == 1)
        time.sleep(0.4)  # the provider has dropped the idle connection by now
        assert said(client) == "ok"
    assert provider.connections == 2


def test_an_idle_connection_is_closed_by_the_gateway_after_two_seconds(tmp_path: Path) -> None:
    with (
        WireProvider([answer(completion_json("ok"))]) as provider,
        chatting(tmp_path, provider.url) as client,
    ):
        assert said(client) == "ok"
        wait_until(lambda: provider.closed_by_client == 1, timeout=6)


def _encoded(body: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.compress(body)
    if encoding == "deflate":
        return zlib.compress(body)
    return zlib.compress(body)[2:-4]  # deflate without zlib's header, as some servers send it


@pytest.mark.parametrize(
    ("framing", "encoding"),
    [
        ("length", None),
        ("chunked", None),
        ("close", None),
        ("chunked", "gzip"),
        ("close", "gzip"),
        ("length", "deflate"),
        ("chunked", "raw-deflate"),
    ],
)
def test_every_framing_and_compression_of_an_answer_arrives_as_the_provider_meant_it(
    tmp_path: Path, framing: str, encoding: str | None
) -> None:
    text = "a long answer, " * 200
    body = completion_json(text)
    headers = {}
    if encoding is not None:
        body = _encoded(body, encoding)
        headers["content-encoding"] = "deflate" if encoding == "raw-deflate" else encoding
    with (
        WireProvider([answer(body, framing=framing, headers=headers)]) as provider,
        chatting(tmp_path, provider.url) as client,
    ):
        assert said(client) == text
        assert said(client) == text  # and the connection serves the next chat, or a new one does
    assert provider.connections == (2 if framing == "close" else 1)
    assert provider.header_of(0, "accept-encoding") == "gzip, deflate"


def test_a_compressed_chunked_stream_is_relayed_decoded_token_by_token(tmp_path: Path) -> None:
    text = " ".join(f"w{n}" for n in range(40))
    stream = gzip.compress(b"".join(completion_events({"model": "m"}, text)))
    headers = {"content-type": "text/event-stream", "content-encoding": "gzip"}
    with (
        WireProvider([answer(stream, framing="chunked", headers=headers)]) as provider,
        chatting(tmp_path, provider.url) as client,
    ):
        pieces = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "go"}], stream=True
        )
        got = [chunk.choices[0].delta.content for chunk in pieces if chunk.choices]
    assert "".join(c or "" for c in got) == text


def test_a_large_answer_arrives_whole(tmp_path: Path) -> None:
    text = "".join(f"line {n} of a long report\n" for n in range(150_000))  # ~3.8 MB
    with (
        WireProvider([answer(completion_json(text), framing="chunked")]) as provider,
        chatting(tmp_path, provider.url) as client,
    ):
        assert said(client) == text


def test_an_answer_that_is_not_http_is_a_502_that_says_so(tmp_path: Path) -> None:
    with (
        WireProvider([b"SSH-2.0-OpenSSH_9.2\r\n\r\n"]) as provider,
        chatting(tmp_path, provider.url) as client,
        pytest.raises(openai.APIStatusError) as caught,
    ):
        said(client)
    assert caught.value.status_code == 502
    assert caught.value.body["message"] == "upstream provider 'default' broke off its answer (InvalidAnswer)"


@pytest.fixture
def trusted_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[trustme.CA]:
    """A certificate authority the gateway's TLS context trusts (SSL_CERT_FILE), for this
    test only."""
    ca = trustme.CA()
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    tls_context.cache_clear()
    yield ca
    tls_context.cache_clear()


def _tls_server(ca: trustme.CA) -> ssl.SSLContext:
    """A provider's TLS settings with a certificate from `ca`; it would rather speak HTTP/2."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    context.set_alpn_protocols(["h2", "http/1.1"])
    return context


def test_a_provider_over_tls_is_called_with_its_certificate_verified(
    tmp_path: Path, trusted_ca: trustme.CA
) -> None:
    with (
        WireProvider([answer(completion_json("secure"))], tls=_tls_server(trusted_ca)) as provider,
        chatting(tmp_path, provider.url) as client,
    ):
        assert [said(client), said(client)] == ["secure", "secure"]
    assert provider.connections == 1 and provider.handshake_failures == 0
    assert provider.protocols == ["http/1.1"]  # agreed in the handshake, never HTTP/2


def test_a_provider_whose_certificate_is_not_trusted_is_unreachable(
    tmp_path: Path, trusted_ca: trustme.CA
) -> None:
    stranger = trustme.CA()  # a certificate from an authority the gateway does not trust
    with (
        WireProvider([answer(completion_json("no"))], tls=_tls_server(stranger)) as provider,
        chatting(tmp_path, provider.url) as client,
        pytest.raises(openai.APIStatusError) as caught,
    ):
        said(client)
    assert caught.value.status_code == 502
    assert caught.value.body["message"] == "upstream provider 'default' is unreachable (TLSError)"
    assert provider.requests == []


def test_a_tls_provider_is_reached_through_the_proxys_tunnel(
    tmp_path: Path, trusted_ca: trustme.CA, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        WireProvider([answer(completion_json("tunnelled"))], tls=_tls_server(trusted_ca)) as provider,
        ConnectProxy() as proxy,
    ):
        monkeypatch.setenv("HTTPS_PROXY", proxy.url.replace("http://", "http://gate:pa55@"))
        for name in ("NO_PROXY", "no_proxy", "https_proxy"):
            monkeypatch.delenv(name, raising=False)
        with chatting(tmp_path, provider.url) as client:
            assert [said(client), said(client)] == ["tunnelled", "tunnelled"]
    assert len(proxy.heads) == 1  # one tunnel, kept alive for both chats
    connect = proxy.heads[0].decode()
    assert connect.startswith(f"CONNECT 127.0.0.1:{provider.port} HTTP/1.1\r\n")
    assert "proxy-authorization: Basic Z2F0ZTpwYTU1" in connect  # gate:pa55
    assert provider.header_of(0, "proxy-authorization") is None  # the proxy's secret stays with it


def test_a_proxy_that_cannot_be_reached_is_named_as_the_failure(
    tmp_path: Path, trusted_ca: trustme.CA, monkeypatch: pytest.MonkeyPatch
) -> None:
    with WireProvider([answer(completion_json("no"))], tls=_tls_server(trusted_ca)) as provider:
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{free_port()}")
        for name in ("NO_PROXY", "no_proxy", "https_proxy"):
            monkeypatch.delenv(name, raising=False)
        with chatting(tmp_path, provider.url) as client, pytest.raises(openai.APIStatusError) as caught:
            said(client)
    assert caught.value.status_code == 502
    assert caught.value.body["message"] == "upstream provider 'default' is unreachable (ProxyError)"


SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def test_a_stream_that_stops_in_the_middle_ends_at_the_read_timeout(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = completion_events({"model": "m"}, "Hel")[0]
    # Two pieces, then silence with the connection open: the second wait outlives the
    # first's timer, which must still end it.
    head = SSE_HEAD + b"%x\r\n%s\r\n" % (len(first), first)
    second = completion_events({"model": "m"}, "lo")[0]
    with (
        RawUpstream(head, trickle=b"%x\r\n%s\r\n" % (len(second), second), every=0.3, hold=True) as raw,
        chatting(tmp_path, raw.url, MEMROUTE_UPSTREAM_TIMEOUT="0.5") as client,
        caplog.at_level(logging.WARNING, logger="memroute.gateway"),
    ):
        began = time.monotonic()
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        said_so_far = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        waited = time.monotonic() - began
        wait_until(lambda: raw.closed_by_client == 1)
    assert said_so_far.startswith("Hel")
    assert waited < 10
    assert (
        "gateway.stream.upstream_error provider=default" in caplog.text
        and "error=TimeoutError" in caplog.text
    )


def test_an_answer_that_stops_in_the_middle_is_a_504_at_the_read_timeout(tmp_path: Path) -> None:
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{"
    with (
        RawUpstream(head, hold=True) as raw,
        chatting(tmp_path, raw.url, MEMROUTE_UPSTREAM_TIMEOUT="0.5") as client,
        pytest.raises(openai.APIStatusError) as caught,
    ):
        said(client)
    assert caught.value.status_code == 504
    assert caught.value.body["message"] == "upstream provider 'default' timed out"


def test_a_provider_key_that_would_break_the_request_is_never_sent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        WireProvider([answer(completion_json("no"))]) as provider,
        chatting(tmp_path, provider.url, MEMROUTE_UPSTREAM_API_KEY="sk-abc\r\nx-injected: 1") as client,
        caplog.at_level(logging.DEBUG),
        pytest.raises(openai.APIStatusError) as caught,
    ):
        said(client)
    assert caught.value.status_code == 502
    message = caught.value.body["message"]
    assert message == "upstream provider 'default' could not be sent the request (InvalidHeader)"
    assert provider.requests == [] and provider.connections == 0
    assert "sk-abc" not in caplog.text and "x-injected" not in caplog.text


def test_a_large_request_reaches_the_provider_whole(tmp_path: Path) -> None:
    said_before = "".join(f"paragraph {n} of a long pasted document. " for n in range(80_000))  # ~3.3 MB
    with (
        WireProvider([answer(completion_json("read it"))]) as provider,
        chatting(tmp_path, provider.url) as client,
    ):
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": said_before}])
    assert reply.choices[0].message.content == "read it"
    sent = json.loads(provider.requests[0][1])
    assert sent["messages"][-1]["content"] == said_before


def test_a_server_that_calls_providers_over_plain_http_never_loads_httpx(
    tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    """httpx and the command line it ships cost a server ~0.1 s and ~6 MiB: `memroute serve`
    loads them only for a provider over HTTPS or a client that needs them (rerank, model
    lists, embedding providers, the Hub)."""
    import subprocess
    import sys

    db = tmp_path / "m.db"
    with open_memory(db) as side:
        _, secret = side.keys.create("k")
        side.update_settings(enabled=True)
    script = f"""
import json, sys, urllib.request
from memroute.config import Config
from memroute.web.app import create_app
from memroute.web.serve import serving

environ = {{"MEMROUTE_UPSTREAM_BASE_URL": {upstream.url + "/v1"!r}, "MEMROUTE_ADMIN_TOKEN": "a" * 32}}
with serving(create_app(Config.for_path({str(db)!r}, environ=environ))) as url:
    body = {{"model": "echo-1", "messages": [{{"role": "user", "content": "I keep bees."}}]}}
    chat = urllib.request.Request(url + "/v1/chat/completions", method="POST",
        headers={{"authorization": "Bearer {secret}", "content-type": "application/json"}},
        data=json.dumps(body).encode())
    answer = json.loads(urllib.request.urlopen(chat).read())
    print(answer["choices"][0]["message"]["content"] != "", "httpx" in sys.modules, "rich" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "False", "False"]
