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


GATEWAY_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": OpenAIErrorResponse, "description": "Invalid request (e.g. body not a JSON object)"},
    401: {"model": OpenAIErrorResponse, "description": "Missing, unknown or revoked memroute API key"},
    413: {"model": OpenAIErrorResponse, "description": "Request body over MEMROUTE_MAX_CHAT_BODY_BYTES"},
    502: {"model": OpenAIErrorResponse, "description": "No provider configured, or it is unreachable"},
    504: {"model": OpenAIErrorResponse, "description": "The provider timed out"},
    "default": {"description": "An error status of the provider, passed through with its body unchanged"},
}
