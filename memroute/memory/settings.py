"""Memory settings: the 12 fields the dashboard and API share, plus scope, the separate
extraction/injection switches and which chat messages are kept verbatim (`captureTurns`).
Stored values are read leniently (out of range → clamped, unknown → default); updates
are validated strictly."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memroute.errors import InvalidInput
from memroute.models.wire import camel


@dataclass(frozen=True, slots=True)
class MemorySettings:
    enabled: bool = False  # off by default: injection costs tokens on every request
    max_tokens: int = 2000
    retention_days: int = 30
    strategy: str = "hybrid"  # recent | semantic | hybrid
    skills_enabled: bool = True  # stored for compatibility; memroute has no skills
    embedding_source: str = "auto"
    embedding_provider_model: str | None = None
    transformers_enabled: bool = True  # the bundled MiniLM: `auto` embeds with it
    static_enabled: bool = False
    rerank_enabled: bool = False
    rerank_provider_model: str | None = None
    vector_store: str = "auto"
    scope: str = "apiKey"
    extraction_enabled: bool = True
    injection_enabled: bool = True
    capture_turns: str = "user"  # off | user | all: which chat messages are kept verbatim

    @property
    def retrieval_strategy(self) -> str:
        """The retrieval strategy: the settings' "recent" is retrieval's "exact"."""
        return "exact" if self.strategy == "recent" else self.strategy

    @property
    def injects(self) -> bool:
        return self.enabled and self.injection_enabled and self.max_tokens > 0

    @property
    def extracts(self) -> bool:
        return self.enabled and self.extraction_enabled

    @property
    def acts_on_chats(self) -> bool:
        """Whether chats get memory work: recall and injection, or learning."""
        return self.injects or self.extracts

    @property
    def keeps_replies(self) -> bool:
        """Whether the assistant's replies are learned from (kept as its episodes)."""
        return self.extracts and self.capture_turns == "all"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@dataclass(frozen=True, slots=True)
class _Field:
    db_key: str
    kind: str  # bool | int | choice | model
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()


FIELDS: dict[str, _Field] = {
    "enabled": _Field("memoryEnabled", "bool"),
    "max_tokens": _Field("memoryMaxTokens", "int", 0, 16000),
    "retention_days": _Field("memoryRetentionDays", "int", 1, 365),
    "strategy": _Field("memoryStrategy", "choice", choices=("recent", "semantic", "hybrid")),
    "skills_enabled": _Field("skillsEnabled", "bool"),
    "embedding_source": _Field(
        "memoryEmbeddingSource", "choice", choices=("remote", "static", "transformers", "auto", "hashing")
    ),
    "embedding_provider_model": _Field("memoryEmbeddingProviderModel", "model"),
    "transformers_enabled": _Field("memoryTransformersEnabled", "bool"),
    "static_enabled": _Field("memoryStaticEnabled", "bool"),
    "rerank_enabled": _Field("memoryRerankEnabled", "bool"),
    "rerank_provider_model": _Field("memoryRerankProviderModel", "model"),
    "vector_store": _Field("memoryVectorStore", "choice", choices=("sqlite-vec", "qdrant", "auto")),
    "scope": _Field("memoryScope", "choice", choices=("apiKey", "session", "global")),
    "extraction_enabled": _Field("memoryExtractionEnabled", "bool"),
    "injection_enabled": _Field("memoryInjectionEnabled", "bool"),
    "capture_turns": _Field("memoryCaptureTurns", "choice", choices=("off", "user", "all")),
}
DEFAULTS = MemorySettings()


def _lenient(field: _Field, raw: object, default: Any) -> Any:
    if field.kind == "bool":
        return raw if isinstance(raw, bool) else default
    if field.kind == "int":
        if isinstance(raw, bool) or not isinstance(raw, int | float) or raw != raw:
            return default
        return min(max(round(raw), field.low), field.high)
    if field.kind == "choice":
        if field.db_key == "memoryStrategy" and raw == "exact":
            return "recent"
        return raw if raw in field.choices else default
    return raw.strip() if isinstance(raw, str) and raw.strip() else default


def normalize(stored: Mapping[str, Any]) -> MemorySettings:
    """Settings from stored DB values; anything missing or unusable takes its default."""
    values = {
        name: _lenient(field, stored.get(field.db_key), getattr(DEFAULTS, name))
        for name, field in FIELDS.items()
    }
    return MemorySettings(**values)


class SettingsOfStored:
    """`normalize`, remembering the last stored values it was given: the same values (the
    store's unchanged copy), or values equal to them, give the same settings without being
    checked again (a chat asks for the settings every time, so a change is seen at once;
    it rarely finds one). Thread-safe."""

    def __init__(self) -> None:
        self._last: tuple[Mapping[str, Any], MemorySettings] | None = None

    def __call__(self, stored: Mapping[str, Any]) -> MemorySettings:
        last = self._last
        if last is not None and (last[0] is stored or _same_values(last[0], stored)):
            return last[1]
        settings = normalize(stored)
        self._last = (stored, settings)
        return settings


def _same_values(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Equal values of equal types under the same names (`1 == True`, but a stored 1 is
    no switch turned on)."""
    return a.keys() == b.keys() and all(
        type(value) is type(b[name]) and value == b[name] for name, value in a.items()
    )


def _strict(name: str, field: _Field, raw: object) -> Any:
    api = camel(name)
    if field.kind == "bool":
        if not isinstance(raw, bool):
            raise InvalidInput(f"must be true or false; got {raw!r}", api)
        return raw
    if field.kind == "int":
        if isinstance(raw, bool) or not isinstance(raw, int) or not field.low <= raw <= field.high:
            raise InvalidInput(f"must be an integer from {field.low} to {field.high}; got {raw!r}", api)
        return raw
    if field.kind == "choice":
        if field.db_key == "memoryStrategy" and raw == "exact":
            return "recent"
        if raw not in field.choices:
            raise InvalidInput(f"must be one of {', '.join(field.choices)}; got {raw!r}", api)
        return raw
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if not isinstance(raw, str) or len(raw) > 256:
        raise InvalidInput("must be a 'provider/model' string or null", api)
    return raw.strip()


def validate_update(changes: Mapping[str, Any]) -> dict[str, Any]:
    """DB key → value for a settings update; camelCase or snake_case names; unknown → InvalidInput."""
    out: dict[str, Any] = {}
    for given, raw in changes.items():
        name = _snake(given)
        field = FIELDS.get(name)
        if field is None:
            known = ", ".join(camel(n) for n in FIELDS)
            raise InvalidInput(f"unknown setting {given!r}; known settings: {known}")
        out[field.db_key] = _strict(name, field, raw)
    return out
