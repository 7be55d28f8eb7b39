"""The remote source against a real HTTP upstream (Starlette under uvicorn) that answers
`/v1/embeddings` as scripted: status and error mapping, response validation, timeouts,
and the API key never showing up in an error."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from embed_helpers import make_config
from servers import LiveServer, free_port
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route as HttpRoute

from memroute.embeddings import EmbeddingSources, SourceChoice
from memroute.errors import EmbeddingError, UpstreamError
from memroute.models.wire import to_wire
from memroute.upstream.route import Route

SECRET = "sk-test-memroute-SECRET-0123456789abcdef"
MODEL = "acme/text-embed-1"


@dataclass
class Step:
    status: int = 200
    body: Any = None  # JSON-able; a str is sent as raw text
    delay: float = 0.0


@dataclass
class EmbeddingUpstream:
    """Answers each POST with the next scripted step, or with 3-d vectors when none is left."""

    script: deque[Step] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)

    async def embeddings(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append({"body": body, "headers": dict(request.headers)})
        step = self.script.popleft() if self.script else Step(body=_vectors(len(body["input"]), 3))
        if step.delay:
            await asyncio.sleep(step.delay)
        if isinstance(step.body, str):
            return Response(step.body, status_code=step.status, media_type="application/json")
        return JSONResponse(step.body, status_code=step.status)

    def app(self) -> Starlette:
        return Starlette(routes=[HttpRoute("/v1/embeddings", self.embeddings, methods=["POST"])])


def _vectors(count: int, dim: int) -> dict[str, Any]:
    data = [{"object": "embedding", "index": i, "embedding": [float(i + 1)] * dim} for i in range(count)]
    return {"object": "list", "data": data, "model": "m"}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[LiveServer, EmbeddingUpstream]]:
    upstream = EmbeddingUpstream()
    with LiveServer(upstream.app()) as live:
        yield live, upstream


@pytest.fixture
def upstream(server: tuple[LiveServer, EmbeddingUpstream]) -> Iterator[EmbeddingUpstream]:
    _, up = server
    up.script.clear()
    up.requests.clear()
    yield up
    up.script.clear()


def make_sources(
    tmp_path: Path, base_url: str, *, key: str | None = SECRET, timeout_s: float = 5.0
) -> EmbeddingSources:
    def route_for(model: str) -> Route:
        provider, _, rest = model.partition("/")
        if provider != "acme":
            raise UpstreamError(f"provider {provider} is not configured")
        return Route("acme", base_url, key, rest)

    return EmbeddingSources(make_config(tmp_path), route_for, timeout_s=timeout_s)


@pytest.fixture
def sources(tmp_path: Path, server: tuple[LiveServer, EmbeddingUpstream]) -> Iterator[EmbeddingSources]:
    live, _ = server
    made = make_sources(tmp_path, live.url + "/v1")
    yield made
    made.close()


CHOICE = SourceChoice("remote", MODEL, None, "remote provider configured: acme/text-embed-1")


def embed_error(sources: EmbeddingSources, texts: list[str] | None = None) -> EmbeddingError:
    with pytest.raises(EmbeddingError) as info:
        sources.embed_documents(CHOICE, texts or ["hello"])
    error = info.value
    assert error.source == "remote"
    assert SECRET not in str(error) and SECRET not in error.message
    assert "SECRET" not in repr(error.args)
    return error


def test_success_learns_dimensions_and_normalises(
    sources: EmbeddingSources, upstream: EmbeddingUpstream
) -> None:
    upstream.script.append(Step(body={"data": [{"index": 0, "embedding": [3, 4, 0, 0]}]}))
    embedder = sources.embedder(CHOICE)
    assert embedder.dimensions is None
    vector = sources.embed_query(CHOICE, "hello")
    assert vector.dtype == np.float32 and np.allclose(vector, [0.6, 0.8, 0, 0])
    assert embedder.dimensions == 4
    request = upstream.requests[-1]
    assert request["body"] == {"model": "text-embed-1", "input": ["hello"]}
    assert request["headers"]["authorization"] == f"Bearer {SECRET}"


def test_rows_follow_index_and_blank_texts_are_not_sent(
    sources: EmbeddingSources, upstream: EmbeddingUpstream
) -> None:
    data = [{"index": 1, "embedding": [0.0, 2.0]}, {"index": 0, "embedding": [5.0, 0.0]}]
    upstream.script.append(Step(body={"data": data}))
    matrix = sources.embed_documents(CHOICE, ["first", "  ", "second", ""])
    assert upstream.requests[-1]["body"]["input"] == ["first", "second"]
    assert np.allclose(matrix, [[1, 0], [0, 0], [0, 1], [0, 0]])


def test_no_key_sends_no_authorization(
    tmp_path: Path, server: tuple[LiveServer, EmbeddingUpstream], upstream: EmbeddingUpstream
) -> None:
    live, _ = server
    keyless = make_sources(tmp_path, live.url + "/v1", key=None)
    try:
        keyless.embed_documents(CHOICE, ["x"])
        assert "authorization" not in upstream.requests[-1]["headers"]
        upstream.script.append(Step(status=401, body={"error": {"message": "missing key"}}))
        with pytest.raises(EmbeddingError) as info:
            keyless.embed_documents(CHOICE, ["x"])
        assert info.value.reason == "no_key" and "no API key is configured" in info.value.message
    finally:
        keyless.close()


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (401, "no_key"),
        (403, "no_key"),
        (429, "rate_limited"),
        (500, "request_failed"),
        (404, "request_failed"),
    ],
)
def test_http_errors(
    sources: EmbeddingSources, upstream: EmbeddingUpstream, status: int, reason: str
) -> None:
    # The upstream echoes the key, as some providers do: it must not reach our message.
    message = f"Incorrect API key provided: {SECRET}. " + "x" * 5000
    upstream.script.append(Step(status=status, body={"error": {"message": message}}))
    error = embed_error(sources)
    assert error.reason == reason
    assert f"HTTP {status}" in error.message
    assert len(error.message) <= 500


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ("this is not json {", "not JSON"),
        ({"object": "list"}, "no `data` list"),
        ({"data": {"0": [1, 2]}}, "no `data` list"),
        ({"data": []}, "0 embeddings for 1 inputs"),
        ({"data": [{"index": 0, "embedding": "0.1,0.2"}]}, "not an array"),
        ({"data": [{"index": 0, "embedding": []}]}, "not an array of numbers"),
        ({"data": [{"index": 0, "embedding": [0.1, "x"]}]}, "not an array of numbers"),
        ({"data": [{"index": 0, "embedding": [0.1, True]}]}, "not an array of numbers"),
        ({"data": [{"index": 7, "embedding": [0.1]}]}, "index"),
        ([1, 2, 3], "no `data` list"),
    ],
)
def test_unusable_bodies(
    sources: EmbeddingSources, upstream: EmbeddingUpstream, body: Any, what: str
) -> None:
    upstream.script.append(Step(body=body))
    error = embed_error(sources)
    assert error.reason == "request_failed"
    assert what in error.message


def test_vectors_of_different_lengths(sources: EmbeddingSources, upstream: EmbeddingUpstream) -> None:
    data = [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0, 0.0, 0.0]}]
    upstream.script.append(Step(body={"data": data}))
    assert "differ in length" in embed_error(sources, ["a", "b"]).message


def test_dimension_change_is_an_error(sources: EmbeddingSources, upstream: EmbeddingUpstream) -> None:
    sources.embed_documents(CHOICE, ["a"])  # learns 3
    upstream.script.append(Step(body={"data": [{"index": 0, "embedding": [1.0, 0.0]}]}))
    error = embed_error(sources, ["b"])
    assert error.reason == "request_failed" and "earlier ones had 3" in error.message


def test_slow_upstream_times_out(
    tmp_path: Path, server: tuple[LiveServer, EmbeddingUpstream], upstream: EmbeddingUpstream
) -> None:
    live, _ = server
    impatient = make_sources(tmp_path, live.url + "/v1", timeout_s=0.3)
    try:
        upstream.script.append(Step(body=_vectors(1, 3), delay=1.5))
        error = embed_error(impatient)
        assert error.reason == "timeout"
    finally:
        impatient.close()


def test_connection_refused(tmp_path: Path) -> None:
    closed = make_sources(tmp_path, f"http://127.0.0.1:{free_port()}/v1")
    try:
        error = embed_error(closed)
        assert error.reason == "request_failed" and "could not be reached" in error.message
    finally:
        closed.close()


def test_credentials_in_the_base_url_do_not_leak(tmp_path: Path) -> None:
    leaky = make_sources(tmp_path, f"http://user:{SECRET}@127.0.0.1:{free_port()}/v1")
    try:
        error = embed_error(leaky)
        assert error.reason == "request_failed"
    finally:
        leaky.close()


def test_unknown_provider_is_no_key(sources: EmbeddingSources) -> None:
    with pytest.raises(EmbeddingError) as info:
        sources.embed_query(SourceChoice("remote", "other/model", None, "x"), "hello")
    assert (info.value.reason, info.value.source) == ("no_key", "remote")
    assert "provider other is not configured" in info.value.message


def test_remote_failures_are_not_remembered(sources: EmbeddingSources, upstream: EmbeddingUpstream) -> None:
    upstream.script.append(Step(status=500, body={"error": "boom"}))
    assert embed_error(sources).reason == "request_failed"
    assert sources.embed_documents(CHOICE, ["again"]).shape == (1, 3)


def test_query_cache_spares_the_upstream(sources: EmbeddingSources, upstream: EmbeddingUpstream) -> None:
    first = sources.embed_query(CHOICE, "cached text")
    second = sources.embed_query(CHOICE, "cached text")
    assert np.array_equal(first, second)
    assert len(upstream.requests) == 1
    assert to_wire(sources.cache_stats()) == {"hits": 1, "misses": 1, "size": 1}
    json.dumps(to_wire(sources.cache_stats()))
