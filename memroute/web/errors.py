"""One place where errors become HTTP responses: `{"error": {"message", "type"}}`,
never a stack trace. Gateway routes add the OpenAI fields `param` and `code`; the
Anthropic routes (`/v1/messages…`) answer in Anthropic's shape,
`{"type": "error", "error": {"type", "message"}}`."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memroute.errors import (
    Conflict,
    InvalidInput,
    MemrouteError,
    NotFound,
    StorageFull,
    TooManyAttempts,
    Unauthorized,
    UpstreamError,
)

log = logging.getLogger("memroute.web")


def status_of(exc: MemrouteError) -> int:
    if isinstance(exc, InvalidInput):
        return 400
    if isinstance(exc, Unauthorized):
        return 401
    if isinstance(exc, TooManyAttempts):
        return 429
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, Conflict):
        return 409
    if isinstance(exc, UpstreamError):
        return exc.status
    if isinstance(exc, StorageFull):
        return 507
    return 500


# Anthropic's error types by HTTP status (others: `api_error`).
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def error_shape(path: str) -> str:
    """How errors on `path` are shaped: `anthropic` on the Messages routes, `openai` on
    the other gateway routes, `plain` elsewhere."""
    if path == "/v1/messages" or path.startswith("/v1/messages/"):
        return "anthropic"
    return "openai" if path.startswith("/v1/") else "plain"


def error_body(message: str, kind: str, *, shape: str = "plain", status: int = 400) -> dict[str, Any]:
    """The JSON of an error in `shape` (see `error_shape`)."""
    if shape == "anthropic":
        return {
            "type": "error",
            "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": message},
        }
    error: dict[str, Any] = {"message": message, "type": kind}
    if shape == "openai":
        error.update(param=None, code=None)
    return {"error": error}


def error_response(
    request: Request, status: int, message: str, kind: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    """The error as JSON. `headers` are kept (a 405's `Allow`, which RFC 9110 requires)."""
    shape = error_shape(request.url.path)
    sent = dict(headers or {})
    if status == 401:
        sent["WWW-Authenticate"] = "Bearer"
    body = error_body(message, kind, shape=shape, status=status)
    return JSONResponse(body, status_code=status, headers=sent or None)


HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})


def documented_methods(request: Request) -> str | None:
    """The methods the OpenAPI document gives the resource at this path (the most specific
    template: `/api/memory/health` before `/api/memory/{id}`), or None for an undocumented
    path. Starlette's own `Allow` names only the first route matching the path, and FastAPI
    makes one route per method."""
    path = request.scope["path"]
    best: tuple[int, list[str]] | None = None
    for template, operations in request.app.openapi().get("paths", {}).items():
        pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            rank = template.count("{")
            if best is None or rank < best[0]:
                best = (rank, sorted(m.upper() for m in operations if m in HTTP_METHODS))
    return None if best is None else ", ".join(best[1])


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        if err.get("type") == "json_invalid":
            parts.append(f"invalid JSON body: {err.get('ctx', {}).get('error', 'malformed')}")
            continue
        where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path"))
        parts.append(f"{where}: {err.get('msg')}" if where else str(err.get("msg")))
    return "; ".join(parts) or "invalid request"


def install(app: FastAPI) -> None:
    @app.exception_handler(MemrouteError)
    async def _domain(request: Request, exc: MemrouteError) -> JSONResponse:
        status = status_of(exc)
        if status >= 500 and not isinstance(exc, UpstreamError):
            log.error("request.failed path=%s error=%s", request.url.path, exc.message)
        retry_after = getattr(exc, "retry_after", None)
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
        return error_response(request, status, exc.message, exc.kind, headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(request, 400, _validation_message(exc), "invalid_request_error")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = documented_methods(request) or headers.get("Allow", "")
        return error_response(request, exc.status_code, str(exc.detail), kind, headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("request.crashed path=%s", request.url.path)
        return error_response(request, 500, "internal error (details are in the server log)", "server_error")
