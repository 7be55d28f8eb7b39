"""Requests passed through to the provider of `model` (prefix stripped), without memory,
within the same limits, deadline and answer cap as a chat: `/v1/embeddings` (OpenAI
format) and `/v1/messages/count_tokens` (Anthropic format)."""

from __future__ import annotations

from dataclasses import dataclass

import anyio
from starlette.requests import Request
from starlette.responses import Response

from memroute.gateway.body_json import encoded, parse_body
from memroute.gateway.chat import ChatPipeline, client_gone
from memroute.gateway.guard import ClientGone
from memroute.gateway.relay import fetch_once
from memroute.models.records import ApiKey
from memroute.upstream.route import Route


@dataclass(frozen=True, slots=True)
class PassThrough:
    """Where a passed-through request goes: the path appended to the provider's base URL,
    the wire format of the providers that take it and the client headers passed on."""

    upstream_path: str
    provider_format: str
    passed_headers: tuple[str, ...] = ()


EMBEDDINGS = PassThrough("/embeddings", "openai")
COUNT_TOKENS = PassThrough("/messages/count_tokens", "anthropic", ("anthropic-version", "anthropic-beta"))


def admit_passed(
    pipeline: ChatPipeline, kind: PassThrough, secret: str | None, raw: bytes
) -> tuple[ApiKey | None, Route, bytes]:
    """In a worker thread: authenticate and check the key's limits, parse, route, and
    build the outgoing body."""
    key = pipeline.authenticate_within_limits(secret)
    body = parse_body(raw)
    # Not str(...): a model that is not a non-empty string is a 400, as for chat.
    route = pipeline.memory.providers.route(body.get("model", ""), kind.provider_format)
    return key, route, encoded({**body, "model": route.model})


async def pass_through(pipeline: ChatPipeline, request: Request, kind: PassThrough) -> Response:
    raw = await request.body()
    secret = pipeline.client_secret(request)
    arrival = pipeline.limiter.arrive(secret)
    try:
        key, route, payload = await anyio.to_thread.run_sync(admit_passed, pipeline, kind, secret, raw)
    except BaseException:
        arrival.admitted(None)
        raise
    arrival.admitted(key)
    passed = {name: request.headers[name] for name in kind.passed_headers if name in request.headers}
    slot = pipeline.limiter.acquire(key)
    try:
        upstream, content = await fetch_once(
            pipeline.client, route, kind.upstream_path, payload, request, pipeline.bounds, passed
        )
    except ClientGone:
        return client_gone(route)
    finally:
        slot.release()
    return Response(
        content,
        status_code=upstream.status_code,
        media_type=upstream.headers.get("content-type", "application/json"),
    )
