"""Validation of everything a caller can hand to the core. Bad input raises
InvalidInput before anything is written.

Stored text (content, key, owner and session ids) is one alphabet on every write path:
no NUL, no lone surrogate, no control character but tab, line feed and carriage
return. Adds, updates and imports refuse such text; text learned from a chat has
those characters removed instead (`clean_facts`), so a chat never fails on them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from memroute.clock import normalize_time, parse_time, to_iso
from memroute.errors import InvalidInput
from memroute.models.owners import USER_SEPARATOR, owner_of, split_owner
from memroute.models.records import MEMORY_TYPES, SCOPES, STRATEGIES, Fact

MAX_KEY_CHARS = 512
MAX_ID_CHARS = 256
MAX_USER_CHARS = 128
MAX_IMPORTED_ID_CHARS = 128
# Unicode's control characters (C0, DEL, C1) but tab, line feed and carriage return; and
# lone surrogates, which UTF-8 cannot encode.
_REFUSED_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
# What an imported id may be: it goes back out in the `x-memroute-memory-ids` header,
# a comma-separated list, so no comma, space, CR or LF.
_IMPORTED_ID = re.compile(rf"[A-Za-z0-9._:-]{{1,{MAX_IMPORTED_ID_CHARS}}}")
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
    refused = _REFUSED_CHARS.search(value)
    if refused is not None:
        raise InvalidInput(f"must not contain control characters (found {_named(refused.group())})", field)
    return value


def _named(char: str) -> str:
    return "NUL" if char == "\x00" else f"U+{ord(char):04X}"


def without_refused_chars(text: str) -> str:
    """`text` without the characters stored text may not hold (control characters but
    tab, LF and CR; lone surrogates)."""
    return _REFUSED_CHARS.sub("", text)


def clean_facts(facts: Sequence[Fact]) -> list[Fact]:
    """Facts learned from a chat, as they may be stored: refused characters removed from
    content and key; a fact left without content is dropped."""
    cleaned = [
        replace(f, content=without_refused_chars(f.content).strip(), key=without_refused_chars(f.key))
        for f in facts
    ]
    return [f for f in cleaned if f.content]


def content(value: object, *, max_bytes: int) -> str:
    return text_field(value, "content", max_bytes=max_bytes).strip()


def key(value: object) -> str:
    if value is None:
        return ""
    return text_field(value, "key", max_bytes=MAX_KEY_CHARS, allow_empty=True).strip()


def owner(value: object, field: str = "apiKeyId") -> str:
    """An owner id; "" is allowed (unowned memories) but never means "all keys". An end
    user's owner (`memroute.models.owners.owner_of`) has its key and user checked apart."""
    if value is None:
        return ""
    if isinstance(value, str) and USER_SEPARATOR in value:
        key, user = split_owner(value)
        return owner_of(owner(key, field), end_user(user))
    return text_field(value, field, max_bytes=MAX_ID_CHARS, allow_empty=True).strip()


def end_user(value: object, field: str = "userId") -> str:
    """An end user's id within a key: up to `MAX_USER_CHARS` characters without control
    characters, trimmed; "" (or None) for none."""
    if value is None:
        return ""
    text = text_field(value, field, max_bytes=4 * MAX_USER_CHARS, allow_empty=True).strip()
    if len(text) > MAX_USER_CHARS:
        raise InvalidInput(f"is {len(text)} characters, over the limit of {MAX_USER_CHARS}", field)
    return text


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


def said_at(value: object, now: datetime) -> str | None:
    """When a memory was said or happened (`createdAt`): None (now) or a time; one in the
    future (a client's clock ahead) is taken as now, since nothing is said in the future."""
    if value is None:
        return None
    return to_iso(min(parse_time(value, "createdAt"), now))


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


def imported_id(value: object) -> str:
    """The id an import record asks for: 1-128 letters, digits, '.', '_', ':' or '-'."""
    if isinstance(value, str):
        utf8_size(value, "id")
    if not isinstance(value, str) or not _IMPORTED_ID.fullmatch(value):
        raise InvalidInput(
            f"must be 1-{MAX_IMPORTED_ID_CHARS} letters, digits, '.', '_', ':' or '-' (no comma, space,"
            " CR or LF)",
            "id",
        )
    return value
