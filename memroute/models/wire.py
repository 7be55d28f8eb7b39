"""The wire format: how a result dataclass goes out as JSON, on every interface.

A record's fields, then the properties its `Wire` names in `computed`, go out under the
camelCase of their names (`api_key_id` → `apiKeyId`), unless `renamed` gives another
name; fields in `hidden` never go out. `to_wire` builds the JSON-ready dict the CLI, the
MCP tools and `Memory.export` send; the REST schemas are built from the same description
(`memroute.web.schemas.derive`), so a wire field is declared once, in its dataclass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True, slots=True)
class Wire:
    """How a record's wire object differs from "every field, camelCased"."""

    computed: tuple[str, ...] = ()  # properties sent after the fields
    hidden: tuple[str, ...] = ()  # fields never sent
    renamed: Mapping[str, str] = field(default_factory=dict)  # attribute → wire name
    omitted_when_none: tuple[str, ...] = ()  # left out of the object while None


PLAIN = Wire()
# Values that go out as they are: most of a record's (checked by exact type, the cheapest test).
_AS_IS = frozenset({str, int, float, bool, type(None)})


def camel(name: str) -> str:
    """`api_key_id` → `apiKeyId`."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def spec_of(record: type) -> Wire:
    spec = getattr(record, "__wire__", PLAIN)
    return spec if isinstance(spec, Wire) else PLAIN


@cache
def wire_names(record: type) -> tuple[tuple[str, str], ...]:
    """(attribute, wire name) of every value `record` sends, in wire order."""
    spec = spec_of(record)
    names = [f.name for f in fields(record) if f.name not in spec.hidden] + list(spec.computed)
    return tuple((name, spec.renamed.get(name, camel(name))) for name in names)


def to_wire(record: Any) -> dict[str, Any]:
    """`record` (a dataclass instance) as its JSON-ready wire object; nested records,
    lists and dicts are converted too (dict keys are kept as they are)."""
    if not is_dataclass(record) or isinstance(record, type):
        raise TypeError(f"not a dataclass instance: {type(record).__name__}")
    kind = type(record)
    skip_none = spec_of(kind).omitted_when_none
    as_is = _AS_IS
    out: dict[str, Any] = {}
    for attr, name in wire_names(kind):
        value = getattr(record, attr)
        if value is None and attr in skip_none:
            continue
        out[name] = value if type(value) in as_is else _plain(value)
    return out


def _plain(value: Any) -> Any:
    if type(value) in _AS_IS:
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return to_wire(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
