"""Request guards that run before any route, as pure ASGI middleware.

- `HostAllowList`: only Host names this server is known by are served (a page on another
  site that re-points its own DNS name at 127.0.0.1 is refused: DNS rebinding). Ports are
  ignored; `/healthz` is answered for any Host (probes address servers by IP).
- `JsonBodyRequired`: POST/PUT/PATCH on `/v1/*` and `/api/*` must say their body is JSON,
  so a cross-site form or `text/plain` fetch cannot reach a route without a preflight.
"""

from __future__ import annotations

import json

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from memroute.web.errors import error_body, error_shape

LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
ANY_HOST = "*"
ALWAYS_SERVED = frozenset({"/healthz"})

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
GUARDED_PREFIXES = ("/v1/", "/api/")
IMPORT_PATH = "/api/memory/import"
JSON_LINES_TYPES = frozenset({"application/x-ndjson", "application/jsonl"})


def host_name(value: str) -> str:
    """The name of a Host header or bind address without its port, brackets or final dot,
    lower-cased: `[::1]:20128` → `::1`, `LocalHost.:80` → `localhost`."""
    value = value.strip().lower()
    if value.startswith("["):
        value = value[1:].partition("]")[0]
    elif value.count(":") == 1:
        value = value.partition(":")[0]
    return value.rstrip(".")


def allowed_hosts(configured: tuple[str, ...], bind_host: str) -> frozenset[str] | None:
    """The names to serve (None: any). Default: the localhost names and the bind address
    (a wildcard such as `0.0.0.0` too, as the start banner prints it: an address, not a
    name, so no other site's DNS name can stand for it)."""
    if ANY_HOST in configured:
        return None
    if configured:
        return frozenset(host_name(name) for name in configured)
    return frozenset({*LOCAL_NAMES, host_name(bind_host) or LOCAL_NAMES[1]})


class HostAllowList:
    """400 for a request whose Host header is not one of `names` (None: every Host)."""

    def __init__(self, app: ASGIApp, *, names: frozenset[str] | None) -> None:
        self.app = app
        self.names = names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.names is None or scope["type"] != "http" or scope["path"] in ALWAYS_SERVED:
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("host")
        if given is None or host_name(given) in self.names:
            await self.app(scope, receive, send)
            return
        shown = given[:100]
        message = (
            f"Host {shown!r} is not served here: add its name to MEMROUTE_ALLOWED_HOSTS "
            "(comma-separated; * for any)"
        )
        await _refuse(send, scope, 400, message)


class JsonBodyRequired:
    """415 for a POST/PUT/PATCH to `/v1/*` or `/api/*` whose Content-Type is not JSON
    (`application/json` or `application/*+json`; the import route also takes JSON Lines),
    or that has a body and no Content-Type. A request without body or type passes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in BODY_METHODS
            or not scope["path"].startswith(GUARDED_PREFIXES)
        ):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        given = headers.get("content-type")
        if given is None and not _has_body(headers):
            await self.app(scope, receive, send)
            return
        media = (given or "").partition(";")[0].strip().lower()
        is_import = scope["path"] == IMPORT_PATH
        if _is_json(media) or (is_import and media in JSON_LINES_TYPES):
            await self.app(scope, receive, send)
            return
        wanted = "application/json or application/x-ndjson" if is_import else "application/json"
        got = f"got {media[:100]!r}" if media else "none was sent"
        await _refuse(send, scope, 415, f"Content-Type must be {wanted} ({got})")


def _is_json(media: str) -> bool:
    kind, _, subtype = media.partition("/")
    return kind == "application" and (subtype == "json" or subtype.endswith("+json"))


def _has_body(headers: Headers) -> bool:
    length = headers.get("content-length")
    return "transfer-encoding" in headers or (length is not None and length.strip() not in ("", "0"))


async def _refuse(send: Send, scope: Scope, status: int, message: str) -> None:
    """The error in the usual shape of its path (see `error_shape`)."""
    shape = error_shape(scope["path"])
    payload = json.dumps(error_body(message, "invalid_request_error", shape=shape, status=status)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
