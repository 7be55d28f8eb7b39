"""Domain errors raised by the core; the edges map them to HTTP/CLI once.

MemrouteError
├── InvalidInput      bad input from a caller (HTTP 400, CLI exit 2)
├── NotFound          the thing asked for does not exist (HTTP 404)
├── Conflict          the request contradicts the current state (HTTP 409)
├── Unauthorized      a missing or wrong key or token (HTTP 401)
├── TooManyAttempts   too many wrong tokens, or a client key over its limits (HTTP 429)
├── UpstreamError     the LLM provider failed, is unreachable or too slow (HTTP 502/503/504)
├── EmbeddingError    an embedding source failed (degrade to keyword search)
├── QdrantError       Qdrant failed or is unreachable (degrade to sqlite-vec, then FTS5)
└── StoreError        the database failed or is in an unusable state (HTTP 500)
    └── StorageFull   the database or its disk is full: nothing was written (HTTP 507)

WouldBlock            a call asked not to wait (or not to work long) would have: it did
                      nothing; its caller does it elsewhere (never reaches a client)
"""

from __future__ import annotations


class MemrouteError(Exception):
    """Base class of every error memroute raises on purpose."""

    kind = "memroute_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(MemrouteError):
    kind = "invalid_request_error"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


class NotFound(MemrouteError):
    kind = "not_found_error"


class Conflict(MemrouteError):
    kind = "conflict_error"


class Unauthorized(MemrouteError):
    kind = "authentication_error"


class TooManyAttempts(MemrouteError):
    """`retry_after`, when known, is the number of seconds to wait (the `Retry-After` header)."""

    kind = "rate_limit_error"

    def __init__(self, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UpstreamError(MemrouteError):
    kind = "upstream_error"

    def __init__(self, message: str, status: int = 502, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class EmbeddingError(MemrouteError):
    """`reason` is one of no_key, model_load_failed, request_failed, rate_limited, timeout, unknown."""

    kind = "embedding_error"

    def __init__(self, message: str, reason: str = "unknown", source: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.source = source


class QdrantError(MemrouteError):
    """The message never holds the API key (the adapter masks it)."""

    kind = "qdrant_error"


class StoreError(MemrouteError):
    kind = "store_error"


class StorageFull(StoreError):
    kind = "storage_full"


class WouldBlock(Exception):
    """A call made where it must not wait (the gateway's event loop) would have waited for
    a lock or worked long: it did nothing, and its caller does the work in a thread."""
