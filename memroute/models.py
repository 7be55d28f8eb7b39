"""Plain data shapes shared by every layer (no I/O here)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, overload

from memroute.masking import mask_secret

MEMORY_TYPES: tuple[str, ...] = ("factual", "episodic", "procedural", "semantic")

STRATEGIES: tuple[str, ...] = ("exact", "semantic", "hybrid")

SCOPES: tuple[str, ...] = ("apiKey", "session", "global")


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


@dataclass
class MemoryRecord:
    """One stored memory. `to_dict()` gives the camelCase API shape.

    `metadata` may be given as its stored JSON text; it is decoded when first read."""

    id: str
    api_key_id: str
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

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "apiKeyId": self.api_key_id,
            "sessionId": self.session_id,
            "type": self.type,
            "key": self.key,
            "content": self.content,
            "metadata": dict(self.metadata),
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "expiresAt": self.expires_at,
            "accessCount": self.access_count,
            "lastAccessedAt": self.last_accessed_at,
        }


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "memoryId": self.memory_id,
            "event": self.event,
            "oldContent": self.old_content,
            "newContent": self.new_content,
            "oldKey": self.old_key,
            "newKey": self.new_key,
            "at": self.at,
            "actor": self.actor,
        }


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
    """Which memories a read may see. `api_key_id=None` means every key (global scope)."""

    api_key_id: str | None
    now: str
    session_id: str | None = None
    updated_since: str | None = None
    type: str | None = None


@dataclass(slots=True)
class RetrievedItem:
    memory: MemoryRecord
    score: float
    tokens: int
    tier: str
    vec_score: float | None = None
    fts_score: float | None = None
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        m = self.memory
        return {
            "id": m.id,
            "apiKeyId": m.api_key_id,
            "type": m.type,
            "key": m.key,
            "content": m.content,
            "score": self.score,
            "tokens": self.tokens,
            "tier": self.tier,
            "vecScore": self.vec_score,
            "ftsScore": self.fts_score,
            "truncated": self.truncated,
        }


@dataclass(slots=True)
class Resolution:
    """How a retrieval was answered; `fallback_reason` says why a better tier was not used."""

    embedding_source: str | None
    embedding_model: str | None
    vector_store: str
    strategy_used: str
    rerank_applied: bool
    fallback_reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "embeddingSource": self.embedding_source,
            "embeddingModel": self.embedding_model,
            "vectorStore": self.vector_store,
            "strategyUsed": self.strategy_used,
            "rerankApplied": self.rerank_applied,
            "fallbackReason": self.fallback_reason,
        }


@dataclass(slots=True)
class Retrieval:
    items: list[RetrievedItem]
    resolution: Resolution
    budget_max_tokens: int

    @property
    def total_tokens(self) -> int:
        return sum(item.tokens for item in self.items)

    def to_dict(self) -> dict[str, Any]:
        return {
            "memories": [item.to_dict() for item in self.items],
            "resolution": self.resolution.to_dict(),
            "totalTokensUsed": self.total_tokens,
            "budgetMaxTokens": self.budget_max_tokens,
        }


@dataclass(slots=True)
class Stats:
    total: int
    by_type: dict[str, int]
    tokens_used: int
    cache_hits: int
    cache_misses: int

    @property
    def hit_rate(self) -> float:
        seen = self.cache_hits + self.cache_misses
        return round(self.cache_hits / seen, 4) if seen else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "byType": dict(self.by_type),
            "tokensUsed": self.tokens_used,
            "hitRate": self.hit_rate,
            "cacheStats": {"hits": self.cache_hits, "misses": self.cache_misses},
        }


@dataclass(slots=True)
class ImportReport:
    imported: int = 0
    skipped: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True, frozen=True)
class ApiKey:
    """A client key. Only its SHA-256 is stored; the secret is shown once at creation."""

    id: str
    name: str
    prefix: str
    created_at: str
    last_used_at: str | None
    revoked_at: str | None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "prefix": self.prefix,
            "createdAt": self.created_at,
            "lastUsedAt": self.last_used_at,
            "revokedAt": self.revoked_at,
            "active": self.active,
        }


@dataclass(slots=True, frozen=True)
class ProviderRecord:
    """An upstream provider. `api_key` is never part of `to_dict()`."""

    id: str
    base_url: str
    api_key_env: str | None
    api_key: str | None
    is_default: bool
    created_at: str
    updated_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "baseUrl": self.base_url,
            "apiKeyEnv": self.api_key_env,
            "hasStoredKey": self.api_key is not None,
            "apiKeyMasked": mask_secret(self.api_key),
            "default": self.is_default,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }
