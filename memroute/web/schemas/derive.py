"""Response schemas built from result dataclasses, so a wire field is declared once.

`wire_model(Record, "RecordOut")` makes a pydantic model with one field per value
`memroute.models.wire` sends for `Record` (same names, same order), typed from the dataclass's
annotations (a property's from its return annotation). Nested records become their own
derived models, so derive the inner ones first. `refine` narrows a field's schema for the
OpenAPI document (a `Literal`, a description) without declaring it again, `describe`
only adds a description to a field's derived type; `exclude` makes a smaller view of a
record. Routes return `Model.model_validate(record)`
(`from_attributes`), and a test checks that its JSON equals `to_wire(record)`.

Why not pydantic's `TypeAdapter` over the dataclass, or `pydantic.dataclasses`: the
records are ring 0 and built by the hundred per chat request, so they stay plain
dataclasses (no pydantic import, no validation on construction); and their wire object
has computed and hidden values (a provider's secret) that a plain adapter would not know.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from typing import Any, Union, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from memroute.models.wire import spec_of, wire_names

WIRE_CONFIG = ConfigDict(from_attributes=True, validate_by_name=True, validate_by_alias=True)

_derived: dict[type, type[BaseModel]] = {}


def wire_model(
    record: type,
    name: str,
    *,
    doc: str | None = None,
    refine: Mapping[str, Any] | None = None,
    describe: Mapping[str, str] | None = None,
    exclude: tuple[str, ...] = (),
) -> type[BaseModel]:
    """The response model of `record`'s wire object (see the module docstring)."""
    refine = dict(refine or {})
    describe = dict(describe or {})
    spec = spec_of(record)
    hints = get_type_hints(record)
    field_names = {f.name for f in fields(record)}
    definitions: dict[str, Any] = {}
    for attr, wire in wire_names(record):
        if attr in exclude:
            continue
        annotation = refine.pop(attr, None) or _annotation(record, attr, hints, field_names)
        default = None if attr in spec.omitted_when_none else ...
        field = Field(default, alias=wire)
        if attr in describe:  # description=None would drop one the annotation carries
            field = Field(default, alias=wire, description=describe.pop(attr))
        definitions[attr] = (_translated(annotation), field)
    unknown = set(refine) | set(describe) | (set(exclude) - {attr for attr, _ in wire_names(record)})
    if unknown:
        raise TypeError(f"{record.__name__} sends no {', '.join(sorted(unknown))}")
    model: type[BaseModel] = create_model(name, __config__=WIRE_CONFIG, __doc__=doc, **definitions)
    if not exclude:
        _derived[record] = model
    return model


def _annotation(record: type, attr: str, hints: dict[str, Any], field_names: set[str]) -> Any:
    if attr in field_names:
        return hints[attr]
    prop = getattr(record, attr)
    return get_type_hints(prop.fget)["return"]


def _translated(annotation: Any) -> Any:
    """`annotation` with every record type replaced by its derived model."""
    if isinstance(annotation, type) and is_dataclass(annotation):
        if annotation not in _derived:
            raise TypeError(f"derive {annotation.__name__} before the records that hold it")
        return _derived[annotation]
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is list:
        return list[_translated(args[0])]  # type: ignore[misc]
    if origin in (Union, types.UnionType):
        translated = tuple(_translated(arg) for arg in args)
        return Union[translated]  # noqa: UP007 (built from a tuple)
    return annotation


def envelope(name: str, *, doc: str | None = None, **wire_fields: Any) -> type[BaseModel]:
    """A response model around derived ones (`{"memory": …}`): each keyword is a wire
    field and its type, or (type, default)."""
    definitions: dict[str, Any] = {
        key: value if isinstance(value, tuple) else (value, ...) for key, value in wire_fields.items()
    }
    model: type[BaseModel] = create_model(name, __doc__=doc, **definitions)
    return model


def list_of(model: type[BaseModel]) -> Any:
    """`list[model]` for a derived model (a value, which mypy does not take as a type)."""
    return list[model]  # type: ignore[valid-type]
