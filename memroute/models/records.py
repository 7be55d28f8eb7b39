"""Plain data shapes shared by every layer (no I/O here)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, overload

from memroute.masking import mask_secret
from memroute.models.owners import is_user_owner, split_owner
from memroute.models.provenance import Provenance, provenance_of
from memroute.models.wire import Wire

MEMORY_TYPES: tuple[str, ...] = ("factual", "episodic", "procedural", "semantic")

STRATEGIES: tuple[str, ...] = ("exact", "semantic", "hybrid")

SCOPES: tuple[str, ...] = ("apiKey", "session", "global")

TURN_KEY_PREFIX = "turn:"  # the key of a kept chat turn (an episode) starts so
SUMMARY_KEY_PREFIX = "summary:"  # the key of a summary (what summarising writes) starts so


def estimate_tokens(text: str | None) -> int:
    """Rough token count used for every budget: ceil(len / 4)."""
    if not text:
        return 0
    return math.ceil(len(text) / 4)


def decode_metadata(raw: str) -> dict[str, Any]:
    """Stored metadata JSON as a dict; anything unreadable or not an object reads as {}."""
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class _JsonObjectField:
    """A dataclass field that accepts a dict or its stored JSON text and decodes the text
    on first read. Retrieval reads hundreds of memories per chat request and injection
    never looks at their metadata, so decoding them all would be wasted work."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._attr = "_" + name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> str: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> dict[str, Any]: ...
    def __get__(self, obj: object, owner: type | None = None) -> dict[str, Any] | str:
        if obj is None:
            return "{}"  # the default, as text: every record decodes its own dict
        value = obj.__dict__[self._attr]
        if isinstance(value, str):
            value = obj.__dict__[self._attr] = decode_metadata(value)
        return value  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: dict[str, Any] | str) -> None:
        obj.__dict__[self._attr] = value
        obj.__dict__.pop("_speaker_word", None)  # read from the old metadata


def _first_word_of_speaker(metadata: object) -> str:
    speaker = metadata.get("speaker") if isinstance(metadata, dict) else None
    words = speaker.split(maxsplit=1) if isinstance(speaker, str) else []
    return words[0].casefold() if words else ""


def stored_metadata_text(memory: MemoryRecord) -> str | None:
    """The metadata of `memory` as the JSON text it was read with, while it has not been
    decoded (None once it has, or when it was given as a dict)."""
    value = memory.__dict__.get("_metadata")
    return value if isinstance(value, str) else None


@dataclass
class MemoryRecord:
    """One stored memory (`memroute.models.wire.to_wire` gives its camelCase JSON object).

    `metadata` may be given as its stored JSON text; it is decoded when first read.
    `provenance` (where it came from) is read from the metadata, so an import ignores it."""

    __wire__: ClassVar[Wire] = Wire(
        hidden=("api_key_id",), computed=("key_id", "user_id", "provenance"), renamed={"key_id": "apiKeyId"}
    )

    id: str
    api_key_id: str  # the owner: the key's id, or its end user's (see `memroute.models.owners`)
    session_id: str
    type: str
    key: str
    content: str
    created_at: str
    updated_at: str
    expires_at: str | None = None
    access_count: int = 0
    last_accessed_at: str | None = None
    metadata: _JsonObjectField = _JsonObjectField()

    @property
    def key_id(self) -> str:
        """The client key that owns the memory (directly, or through its end user)."""
        return split_owner(self.api_key_id)[0]

    @property
    def user_id(self) -> str:
        """The end user of the key that owns the memory ("" for the key's own)."""
        return split_owner(self.api_key_id)[1]

    @property
    def provenance(self) -> Provenance | None:
        """Where the memory came from, as its metadata records it (None if it does not)."""
        return provenance_of(self.metadata)

    def speaker_word(self) -> str:
        """The first word of `metadata.speaker`, case-folded ("" when it names nobody): how a
        question names the speaker. While the metadata is still its stored text, it is read
        once per record (a copy of the record's `__dict__` keeps it) and not decoded for the
        caller; a decoded dict, which may change, is read each time."""
        raw = self.__dict__.get("_metadata")
        if not isinstance(raw, str):
            return _first_word_of_speaker(raw)
        cached = self.__dict__.get("_speaker_word")
        if cached is None:
            cached = self.__dict__["_speaker_word"] = _first_word_of_speaker(decode_metadata(raw))
        return str(cached)


@dataclass(slots=True, frozen=True)
class Fact:
    """A statement found by extraction, not yet stored."""

    key: str
    content: str
    type: str
    category: str
    polarity: str


@dataclass(slots=True)
class HistoryEntry:
    memory_id: str
    event: str  # ADD | UPDATE | DELETE
    old_content: str | None
    new_content: str | None
    old_key: str | None
    new_key: str | None
    at: str
    actor: str


@dataclass(slots=True)
class Page:
    items: list[MemoryRecord]
    total: int
    page: int
    limit: int
    by_type: dict[str, int] = field(default_factory=dict)

    @property
    def total_pages(self) -> int:
        return math.ceil(self.total / self.limit) if self.limit else 0


@dataclass(slots=True)
class MemoryFilter:
    """Which memories a read may see. `api_key_id` is one owner (a key, or an end user of
    a key: see `memroute.models.owners`); None means every key (global scope). Then
    `admin_view` says whether unowned memories (owner "") and end users' memories are
    seen too: in the admin's views, never in a key's chat (a key's global read sees every
    key's own memories)."""

    api_key_id: str | None
    now: str
    session_id: str | None = None
    updated_since: str | None = None
    type: str | None = None
    admin_view: bool = True

    def admits(self, memory: MemoryRecord) -> bool:
        """Whether `memory` passes this filter (the rules the SQL reads apply)."""
        if self.api_key_id is not None:
            if memory.api_key_id != self.api_key_id:
                return False
        elif not self.admin_view and (memory.api_key_id == "" or is_user_owner(memory.api_key_id)):
            return False
        return (
            (memory.expires_at is None or memory.expires_at > self.now)
            and (not self.session_id or memory.session_id == self.session_id)
            and (not self.updated_since or memory.updated_at >= self.updated_since)
            and (not self.type or memory.type == self.type)
        )


@dataclass(slots=True)
class RetrievedItem:
    """A memory chosen by retrieval, with its score and the tier that found it, and the
    line it is injected as (`line`, built once while the budget is counted, and `framed`,
    that line in a framed block; "" when not known). On the wire the memory is flattened
    to the fields a ranking needs (`id` … `content`)."""

    __wire__: ClassVar[Wire] = Wire(
        hidden=("memory", "line", "framed"),
        computed=("id", "key_id", "user_id", "type", "key", "content"),
        renamed={"key_id": "apiKeyId"},
    )

    memory: MemoryRecord
    score: float
    tokens: int
    tier: str
    vec_score: float | None = None
    fts_score: float | None = None
    truncated: bool = False
    line: str = ""
    framed: str = ""

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def api_key_id(self) -> str:
        return self.memory.api_key_id

    @property
    def key_id(self) -> str:
        return self.memory.key_id

    @property
    def user_id(self) -> str:
        return self.memory.user_id

    @property
    def type(self) -> str:
        return self.memory.type

    @property
    def key(self) -> str:
        return self.memory.key

    @property
    def content(self) -> str:
        return self.memory.content


@dataclass(slots=True)
class Resolution:
    """How a retrieval was answered; `fallback_reason` says why a better tier was not used."""

    embedding_source: str | None
    embedding_model: str | None
    vector_store: str
    strategy_used: str
    rerank_applied: bool
    fallback_reason: str | None


@dataclass(slots=True)
class Retrieval:
    __wire__: ClassVar[Wire] = Wire(
        computed=("total_tokens",), renamed={"items": "memories", "total_tokens": "totalTokensUsed"}
    )

    items: list[RetrievedItem]
    resolution: Resolution
    budget_max_tokens: int

    @property
    def total_tokens(self) -> int:
        return sum(item.tokens for item in self.items)


@dataclass(slots=True, frozen=True)
class CacheStats:
    hits: int
    misses: int


@dataclass(slots=True)
class Stats:
    __wire__: ClassVar[Wire] = Wire(
        hidden=("cache_hits", "cache_misses"), computed=("hit_rate", "cache_stats")
    )

    total: int
    by_type: dict[str, int]
    tokens_used: int
    cache_hits: int
    cache_misses: int

    @property
    def hit_rate(self) -> float:
        seen = self.cache_hits + self.cache_misses
        return round(self.cache_hits / seen, 4) if seen else 0.0

    @property
    def cache_stats(self) -> CacheStats:
        return CacheStats(hits=self.cache_hits, misses=self.cache_misses)


@dataclass(slots=True, frozen=True)
class ImportFailure:
    """A record the import skipped: its 1-based line (or array position) and why."""

    line: int
    error: str


@dataclass(slots=True)
class ImportReport:
    imported: int = 0
    skipped: int = 0
    errors: list[ImportFailure] = field(default_factory=list)


@dataclass(slots=True, frozen=True)
class ApiKey:
    """A client key. Only its SHA-256 is stored; the secret is shown once at creation.
    `max_concurrent` and `requests_per_minute` override the gateway's limits for this key
    (None: the default; 0 requests a minute: no per-minute limit)."""

    __wire__: ClassVar[Wire] = Wire(computed=("active",))

    id: str
    name: str
    prefix: str
    created_at: str
    last_used_at: str | None
    revoked_at: str | None
    max_concurrent: int | None = None
    requests_per_minute: int | None = None
    requires_user_id: bool = False  # a request without an end-user id gets no memory

    @property
    def active(self) -> bool:
        return self.revoked_at is None


# The wire formats a provider can speak: `openai` (chat completions, responses) and
# `anthropic` (messages). A gateway route forwards only to providers of its format.
PROVIDER_FORMATS = ("openai", "anthropic")


@dataclass(slots=True, frozen=True)
class ProviderRecord:
    """An upstream provider. `api_key` never goes on the wire: only whether one is stored
    and its mask."""

    __wire__: ClassVar[Wire] = Wire(
        hidden=("api_key",), computed=("has_stored_key", "api_key_masked"), renamed={"is_default": "default"}
    )

    id: str
    base_url: str
    api_key_env: str | None
    api_key: str | None
    is_default: bool
    created_at: str
    updated_at: str
    format: str = "openai"  # the wire format it speaks: see PROVIDER_FORMATS

    @property
    def has_stored_key(self) -> bool:
        return self.api_key is not None

    @property
    def api_key_masked(self) -> str | None:
        return mask_secret(self.api_key)
