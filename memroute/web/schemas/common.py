"""What every schema module shares: strict request bodies, JSON integers, the
documented-pattern and optional-field helpers, and the common field types.

Field names are the camelCase names of the wire format. Request bodies derive from
`StrictBody`: unknown fields, wrong JSON types and nulls where a field is not
nullable are all a 400. The core validates again (`memroute.memory.validate`);
these models exist so clients get precise errors and a complete schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

MemoryTypeName = Literal["factual", "episodic", "procedural", "semantic"]
PreviewStrategy = Literal["exact", "recent", "semantic", "hybrid"]
SettingsStrategy = Literal["recent", "semantic", "hybrid"]


def _whole_number(value: Any) -> Any:
    """JSON has one number type: 30.0 is the integer 30 (JSON Schema agrees), 30.5 is not."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An integer in a request body: strict (no "5", no true), but 30.0 counts as 30.
JsonInt = Annotated[int, BeforeValidator(_whole_number)]
# The same reading for a nullable integer with a range: `Annotated[int, Field(ge=1), WHOLE_NUMBER] | None`
# (pydantic's schema shows the range only when it comes before the validator).
WHOLE_NUMBER = BeforeValidator(_whole_number)
# What `memroute.clock.parse_time` reads: a date or an ISO-8601 timestamp.
DateOrTimestamp = Annotated[
    str,
    WithJsonSchema(
        {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]}
    ),
]


# A non-space character somewhere: what Python's `str.strip()` leaves, which also strips
# the separators U+001C-U+001F and NEL (U+0085), all text to JSON Schema's `\S`.
NOT_BLANK = r"[^\s\u001c-\u001f\u0085]"
# Stored text (content, key, owner and session ids) holds no control character but tab, LF
# and CR; the core refuses the others (`memroute.memory.validate`).
_CONTROL = r"\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f"
STORED_TEXT = rf"^[^{_CONTROL}]*$"
STORED_TEXT_NOT_BLANK = rf"^[^{_CONTROL}]*[^\s{_CONTROL}][^{_CONTROL}]*$"


Timestamp = Annotated[str, Field(description="ISO-8601 UTC, e.g. 2026-06-01T12:00:00.000Z")]


class StrictBody(BaseModel):
    """A request body: no unknown fields and no type coercion ("5" is not an integer)."""

    model_config = ConfigDict(extra="forbid", strict=True)


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def documented_pattern(pattern: str, *, no_default: bool = False) -> Callable[[dict[str, Any]], None]:
    """`json_schema_extra` that documents a pattern the core checks itself, with a clearer
    message than pydantic's ("must not be empty", "must be an http:// or https:// URL")."""

    def extra(schema: dict[str, Any]) -> None:
        schema["pattern"] = pattern
        if no_default:
            _no_default(schema)

    return extra


OwnerId = Annotated[
    str,
    Field(
        max_length=256,
        description='API key id that owns the memory ("" = unowned)',
        json_schema_extra=documented_pattern(STORED_TEXT),
    ),
]


UserId = Annotated[
    str,
    Field(
        max_length=128,
        description="An end user of the key (e.g. the OpenAI `user` field): the memory is that"
        " user's alone (\"\" = the key's own)",
        json_schema_extra=documented_pattern(STORED_TEXT),
    ),
]


def optional(*, documented: str | None = None, **constraints: Any) -> Any:
    """A field that may be left out (handlers read `model_dump(exclude_unset=True)`) but,
    when given, must have its type: null is rejected like any other wrong type.
    `documented`: a pattern the core checks (see `documented_pattern`)."""
    extra = _no_default if documented is None else documented_pattern(documented, no_default=True)
    return Field(None, json_schema_extra=extra, **constraints)
