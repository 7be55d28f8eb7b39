"""The gateway's routes: OpenAI's /v1/chat/completions, /v1/responses, /v1/models and
/v1/embeddings; Anthropic's /v1/messages and /v1/messages/count_tokens."""

from __future__ import annotations

import logging
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from memroute.errors import UpstreamError
from memroute.gateway.chat import ChatPipeline
from memroute.gateway.formats.chat import ChatCompletions
from memroute.gateway.formats.messages import Messages
from memroute.gateway.formats.responses import Responses
from memroute.gateway.passthrough import COUNT_TOKENS, EMBEDDINGS, pass_through
from memroute.upstream.http import read_json
from memroute.web.auth import client_key
from memroute.web.schemas.common import NOT_BLANK
from memroute.web.schemas.gateway import GATEWAY_ERROR_RESPONSES

router = APIRouter(prefix="/v1", tags=["gateway"], responses=GATEWAY_ERROR_RESPONSES)
log = logging.getLogger("memroute.gateway")


class ChatCompletionRequest(BaseModel):
    """The OpenAI chat request; every other field is passed to the provider untouched."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(pattern=NOT_BLANK, description="`provider/model`, or a model of the default provider")
    messages: list[dict[str, Any]]
    stream: bool | None = None


class ResponsesRequest(BaseModel):
    """The OpenAI Responses request; every other field is passed to the provider untouched."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(pattern=NOT_BLANK, description="`provider/model`, or a model of the default provider")
    input: str | list[dict[str, Any]] | None = None
    instructions: str | None = None
    previous_response_id: str | None = None
    stream: bool | None = None


class MessagesRequest(BaseModel):
    """The Anthropic Messages request; every other field is passed to the provider untouched."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(
        pattern=NOT_BLANK, description="`provider/model`, or a model of an Anthropic-format provider"
    )
    messages: list[dict[str, Any]]
    max_tokens: int
    system: str | list[dict[str, Any]] | None = None
    stream: bool | None = None


class CountTokensRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str = Field(pattern=NOT_BLANK)
    messages: list[dict[str, Any]]


class EmbeddingRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str = Field(pattern=NOT_BLANK)
    input: str | list[str] | list[int] | list[list[int]]


def _doc(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _pipeline(request: Request) -> ChatPipeline:
    return request.app.state.chat  # type: ignore[no-any-return]


CHAT = ChatCompletions()
RESPONSES = Responses()
MESSAGES = Messages()


def _streamed_ok(what: str, event: str) -> dict[int | str, dict[str, Any]]:
    return {
        200: {
            "description": f"The provider's answer: {what}, or with `stream: true` its SSE events",
            "content": {
                "application/json": {"schema": {"type": "object"}},
                "text/event-stream": {
                    "schema": {
                        "type": "object",
                        "properties": {"data": {"type": "string", "description": event}},
                        "required": ["data"],
                    }
                },
            },
        }
    }


RESPONSES_OK = _streamed_ok("a response", "a typed event as JSON (`response.output_text.delta`, …)")
MESSAGES_OK = _streamed_ok("a message", "an event as JSON (`message_start`, `content_block_delta`, …)")
CHAT_OK: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The provider's answer: a chat completion, or with `stream: true` its SSE events",
        "content": {
            "application/json": {"schema": {"type": "object"}},
            # Open API 3.1: the schema of one event.
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "properties": {"data": {"type": "string", "description": "a chunk as JSON, or [DONE]"}},
                    "required": ["data"],
                }
            },
        },
    }
}
PASSED_THROUGH: dict[int | str, dict[str, Any]] = {
    200: {"description": "The provider's answer, unchanged", "content": {"application/json": {"schema": {}}}}
}


@router.post("/chat/completions", openapi_extra=_doc(ChatCompletionRequest), responses=CHAT_OK)
async def chat_completions(request: Request) -> Response:
    """Chat with memory: streaming (SSE) or not, in the OpenAI wire format.

    Headers: `x-memroute-no-memory: true` turns memory off for the request,
    `x-memroute-session-id` sets the session, `x-memroute-debug: true` lists the
    injected memory ids in `x-memroute-memory-ids`."""
    return await _pipeline(request).complete(request, CHAT)


@router.post("/responses", openapi_extra=_doc(ResponsesRequest), responses=RESPONSES_OK)
async def responses(request: Request) -> Response:
    """The OpenAI Responses API with memory, streaming or not: memory goes in
    `instructions`; `previous_response_id` and every other field pass untouched. The
    same memory headers as `/v1/chat/completions`."""
    return await _pipeline(request).complete(request, RESPONSES)


@router.post("/messages", openapi_extra=_doc(MessagesRequest), responses=MESSAGES_OK)
async def messages(request: Request) -> Response:
    """The Anthropic Messages API with memory, streaming or not, to providers of the
    `anthropic` format: memory goes in `system`. The client key in `x-api-key` or
    `Authorization: Bearer`; `anthropic-version` and `anthropic-beta` are passed on;
    errors in Anthropic's shape. The same memory headers as `/v1/chat/completions`."""
    return await _pipeline(request).complete(request, MESSAGES)


@router.post("/messages/count_tokens", openapi_extra=_doc(CountTokensRequest), responses=PASSED_THROUGH)
async def count_tokens(request: Request) -> Response:
    """Passed through to the Anthropic-format provider of `model` (prefix stripped), without memory."""
    return await pass_through(_pipeline(request), request, COUNT_TOKENS)


@router.get("/models")
async def list_models(request: Request) -> JSONResponse:
    """Every provider's models, as `provider/model` (the default provider's also bare)."""
    pipeline = _pipeline(request)
    await anyio.to_thread.run_sync(pipeline.authenticate, client_key(request))
    routes = await anyio.to_thread.run_sync(pipeline.memory.providers.all_routes)
    data: list[dict[str, Any]] = []
    for route, is_default in routes:
        try:
            listing = await read_json(pipeline.client, route, "/models", pipeline.bounds.max_body_bytes)
        except UpstreamError as exc:
            log.warning("gateway.models.skipped provider=%s error=%s", route.provider_id, exc.message)
            continue
        for item in listing.get("data", []) if isinstance(listing, dict) else []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                data.append({**item, "id": f"{route.provider_id}/{item['id']}"})
                if is_default:
                    data.append(dict(item))
    return JSONResponse({"object": "list", "data": data})


@router.post("/embeddings", openapi_extra=_doc(EmbeddingRequest), responses=PASSED_THROUGH)
async def embeddings(request: Request) -> Response:
    """Passed through to the provider of `model` (prefix stripped)."""
    return await pass_through(_pipeline(request), request, EMBEDDINGS)
