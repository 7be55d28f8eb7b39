"""The gateway's (`/v1/*`) errors, in OpenAI's shape."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class OpenAIErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class OpenAIErrorResponse(BaseModel):
    """An error of the gateway (`/v1/*`), in OpenAI's shape."""

    error: OpenAIErrorDetail


RETRY_AFTER = {
    "Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}}
}

GATEWAY_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {
        "model": OpenAIErrorResponse,
        "description": "Invalid request (e.g. not a JSON object, over MEMROUTE_MAX_CHAT_MESSAGES messages)",
    },
    401: {"model": OpenAIErrorResponse, "description": "Missing, unknown or revoked memroute API key"},
    413: {"model": OpenAIErrorResponse, "description": "Request body over MEMROUTE_MAX_CHAT_BODY_BYTES"},
    429: {
        "model": OpenAIErrorResponse,
        "description": "Over the key's or the gateway's concurrent calls, or the key's requests a minute",
        "headers": RETRY_AFTER,
    },
    502: {
        "model": OpenAIErrorResponse,
        "description": "No provider, it is unreachable or broke off, or its answer is over "
        "MEMROUTE_MAX_UPSTREAM_BODY_BYTES",
    },
    503: {
        "model": OpenAIErrorResponse,
        "description": "Every connection to providers is busy",
        "headers": RETRY_AFTER,
    },
    504: {
        "model": OpenAIErrorResponse,
        "description": "The provider timed out, or its answer took over MEMROUTE_UPSTREAM_TOTAL_TIMEOUT",
    },
    "default": {"description": "An error status of the provider, passed through with its body unchanged"},
}
