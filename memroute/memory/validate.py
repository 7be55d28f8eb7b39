"""Validation of everything a caller can hand to the core. Bad input raises
InvalidInput before anything is written."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from memroute.clock import normalize_time
from memroute.errors import InvalidInput
from memroute.models.records import MEMORY_TYPES, SCOPES, STRATEGIES

MAX_KEY_CHARS = 512
MAX_ID_CHARS = 256
MAX_METADATA_BYTES = 16 * 1024
MAX_METADATA_DEPTH = 64
MAX_LIST_LIMIT = 200
DEFAULT_LIST_LIMIT = 50


def utf8_size(value: str, field: str) -> int:
    """Bytes of `value` in UTF-8; a lone surrogate (JSON "\\ud800") cannot be stored."""
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise InvalidInput("must be valid Unicode (it holds a lone surrogate)", field) from None


def text_field(value: object, field: str, *, max_bytes: int, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInput("must be a string", field)
    if not allow_empty and not value.strip():
        raise InvalidInput("must not be empty", field)
    size = utf8_size(value, field)
    if size > max_bytes:
        raise InvalidInput(f"is {size} bytes, over the limit of {max_bytes}", field)
    if "\x00" in value:
        raise InvalidInput("must not contain NUL characters", field)
    return value


def content(value: object, *, max_bytes: int) -> str:
    return text_field(value, "content", max_bytes=max_bytes).strip()


def key(value: object) -> str:
    if value is None:
        return ""
    return text_field(value, "key", max_bytes=MAX_KEY_CHARS, allow_empty=True).strip()


def owner(value: object, field: str = "apiKeyId") -> str:
    """An owner id; "" is allowed (unowned memories) but never means "all keys"."""
    if value is None:
        return ""
    return text_field(value, field, max_bytes=MAX_ID_CHARS, allow_empty=True).strip()


def session(value: object) -> str:
    return owner(value, "sessionId")


def memory_type(value: object) -> str:
    if value is None:
        return "factual"
    if value not in MEMORY_TYPES:
        raise InvalidInput(f"must be one of {', '.join(MEMORY_TYPES)}; got {value!r}", "type")
    return str(value)


def optional_type(value: object) -> str | None:
    return None if value in (None, "") else memory_type(value)


def _nesting_depth_over(value: object, limit: int) -> bool:
    """Whether objects and arrays nest more than `limit` levels (checked without recursion;
    a cycle counts as too deep)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Iterable[object] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def metadata(value: object) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput("must be a JSON object", "metadata")
    # A stored memory must stay readable: JSON encoders (pydantic's stops at ~250 levels,
    # the json module at the recursion limit) fail on deeper values, on every later read.
    if _nesting_depth_over(value, MAX_METADATA_DEPTH):
        raise InvalidInput(f"nests objects and arrays over {MAX_METADATA_DEPTH} levels deep", "metadata")
    try:
        encoded = json.dumps(dict(value), ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"must be JSON-serialisable: {exc}", "metadata") from None
    if utf8_size(encoded, "metadata") > MAX_METADATA_BYTES:
        raise InvalidInput(f"is over {MAX_METADATA_BYTES} bytes", "metadata")
    return json.loads(encoded)  # type: ignore[no-any-return]


def expires_at(value: object) -> str | None:
    return normalize_time(value, "expiresAt")


def strategy(value: object) -> str:
    if value == "recent":
        return "exact"
    if value not in STRATEGIES:
        raise InvalidInput(f"must be one of exact, semantic, hybrid; got {value!r}", "strategy")
    return str(value)


def scope(value: object) -> str:
    if value not in SCOPES:
        raise InvalidInput(f"must be one of {', '.join(SCOPES)}; got {value!r}", "scope")
    return str(value)


def integer(value: object, field: str, *, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value.strip())
        else:
            raise InvalidInput(f"must be an integer; got {value!r}", field)
    if value < minimum or (maximum is not None and value > maximum):
        upper = f" and <= {maximum}" if maximum is not None else ""
        raise InvalidInput(f"must be >= {minimum}{upper}; got {value}", field)
    return value


def paging(limit: object, page: object, offset: object) -> tuple[int, int, int]:
    """(limit, page, offset): limit 1-200 (default 50), page >= 1, offset >= 0 (wins over page)."""
    size = DEFAULT_LIST_LIMIT if limit is None else integer(limit, "limit", minimum=1, maximum=MAX_LIST_LIMIT)
    if offset is not None:
        start = integer(offset, "offset", minimum=0)
        return size, start // size + 1, start
    number = 1 if page is None else integer(page, "page", minimum=1, maximum=10**9)
    return size, number, (number - 1) * size


def memory_id(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_CHARS:
        raise InvalidInput("must be a memory id", "id")
    utf8_size(value, "id")
    return value.strip()
