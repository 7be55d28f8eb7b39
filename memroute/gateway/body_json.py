"""JSON on the chat path: a client's body read strictly, written again for the provider
fast, and a provider's answers read for the reply's text.

A body is read as RFC 8259 says: NaN, Infinity and a number beyond a double's range are
refused (a 400, where they used to be passed on and refused by the provider). What is left
is written with orjson (C: ~20 × the standard library's speed for a conversation of 100
KB), or with the standard library for what orjson refuses (an integer beyond 64 bits, a
lone surrogate): the provider gets the same values either way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import orjson

from memroute.errors import InvalidInput


class _NotJsonNumber(ValueError):
    """A number JSON does not have (NaN, Infinity, beyond a double's range)."""


def _refuse_constant(name: str) -> float:
    raise _NotJsonNumber(name)


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotJsonNumber(text)
    return value


# The standard library's scanner in C, with both hooks: they run only for these literals.
_STRICT = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite)


def parse_body(raw: bytes) -> dict[str, Any]:
    """The JSON object of a client's request body (InvalidInput, a 400, for anything else)."""
    try:
        body = _STRICT.decode(raw.decode(json.detect_encoding(raw), "surrogatepass"))
    except _NotJsonNumber as exc:
        raise InvalidInput(
            f"the request body is not valid JSON: {str(exc)[:40]} is not a JSON number "
            "(NaN, Infinity and numbers beyond a double's range are not)"
        ) from None
    except ValueError:
        raise InvalidInput("the request body is not valid JSON") from None
    except RecursionError:
        raise InvalidInput("the request body nests arrays or objects too deeply") from None
    if not isinstance(body, dict):
        raise InvalidInput("the request body must be a JSON object")
    return body


def encoded(body: Mapping[str, Any]) -> bytes:
    """`body` (read by `parse_body`, or made of what it read) as JSON bytes for the provider."""
    try:
        return orjson.dumps(body)
    except TypeError:  # an integer beyond 64 bits, a lone surrogate: the standard library writes them
        return json.dumps(body).encode()


def loads_or_none(content: bytes) -> Any:
    """`content` as JSON, None if it is not (a provider's answer, read only for its text)."""
    try:
        return orjson.loads(content)
    except ValueError:
        pass
    try:  # what orjson refuses and the standard library reads (NaN, a UTF-16 body, …)
        return json.loads(content)
    except (ValueError, RecursionError):
        return None
