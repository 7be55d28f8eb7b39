"""`/v1/embeddings`: passed through to the provider of `model` (prefix stripped), within
the same limits, deadline and answer cap as a chat."""

from __future__ import annotations

import json

import anyio
from starlette.requests import Request
from starlette.responses import Response

from memroute.gateway.chat import ChatPipeline, client_gone, parse_body
from memroute.gateway.guard import ClientGone
from memroute.gateway.relay import fetch_once
from memroute.models.records import ApiKey
from memroute.upstream.route import Route


def admit_embedding(
    pipeline: ChatPipeline, secret: str | None, raw: bytes
) -> tuple[ApiKey | None, Route, bytes]:
    """In a worker thread: authenticate and check the key's limits, parse, route, and
    build the outgoing body."""
    key = pipeline.authenticate_within_limits(secret)
    body = parse_body(raw)
    # Not str(...): a model that is not a non-empty string is a 400, as for chat.
    route = pipeline.memory.providers.route(body.get("model", ""))
    return key, route, json.dumps({**body, "model": route.model}).encode()


async def embed(pipeline: ChatPipeline, request: Request) -> Response:
    raw = await request.body()
    secret = pipeline.client_secret(request)
    arrival = pipeline.limiter.arrive(secret)
    try:
        key, route, payload = await anyio.to_thread.run_sync(admit_embedding, pipeline, secret, raw)
    except BaseException:
        arrival.admitted(None)
        raise
    arrival.admitted(key)
    slot = pipeline.limiter.acquire(key)
    try:
        upstream, content = await fetch_once(
            pipeline.client, route, "/embeddings", payload, request.receive, pipeline.bounds
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
