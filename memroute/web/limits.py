"""Request body limits, enforced while the body streams in (413 past the limit)."""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memroute.web.errors import error_body, error_shape

IMPORT_PATH = "/api/memory/import"


class BodyLimit:
    """Pure ASGI middleware: `/v1/*` may carry `chat_limit` bytes, the memory import (which
    reads its body as it streams) `import_limit`, everything else `limit`."""

    def __init__(self, app: ASGIApp, *, limit: int, chat_limit: int, import_limit: int) -> None:
        self.app = app
        self.limit = limit
        self.chat_limit = chat_limit
        self.import_limit = import_limit

    def limit_for(self, path: str) -> int:
        if path.startswith("/v1/"):
            return self.chat_limit
        return self.import_limit if path == IMPORT_PATH else self.limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _too_large(send, limit, shape=error_shape(scope["path"]))
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # An HTTPException, so FastAPI's body parsing passes it on as a 413.
                    raise HTTPException(413, f"request body is larger than {limit} bytes")
            return message

        await self.app(scope, limited_receive, send)


async def _too_large(send: Send, limit: int, *, shape: str) -> None:
    """The 413 for a declared Content-Length over the limit, in the same shape as every
    other error (with OpenAI's `param` and `code` on the gateway)."""
    body = error_body(
        f"request body is larger than {limit} bytes", "invalid_request_error", shape=shape, status=413
    )
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
