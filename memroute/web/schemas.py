"""Pydantic models for every management API body and response; they make `/openapi.json`.

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
# What `memroute.clock.parse_time` reads: a date or an ISO-8601 timestamp.
DateOrTimestamp = Annotated[
    str,
    WithJsonSchema(
        {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]}
    ),
]


NOT_BLANK = r"\S"  # a non-space character somewhere


OwnerId = Annotated[str, Field(max_length=256, description='API key id that owns the memory ("" = unowned)')]
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


def optional(*, documented: str | None = None, **constraints: Any) -> Any:
    """A field that may be left out (handlers read `model_dump(exclude_unset=True)`) but,
    when given, must have its type: null is rejected like any other wrong type.
    `documented`: a pattern the core checks (see `documented_pattern`)."""
    extra = _no_default if documented is None else documented_pattern(documented, no_default=True)
    return Field(None, json_schema_extra=extra, **constraints)


# -- errors ---------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    message: str
    type: str = Field(description="invalid_request_error, authentication_error, not_found_error, …")


class ErrorResponse(BaseModel):
    error: ErrorDetail


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Invalid input (nothing was written)"},
    401: {"model": ErrorResponse, "description": "Missing or wrong admin token"},
    413: {"model": ErrorResponse, "description": "Request body over MEMROUTE_MAX_BODY_BYTES"},
    # Every error has this shape; declaring it also keeps FastAPI from documenting a 422,
    # which memroute never sends (validation errors are 400).
    "default": {"model": ErrorResponse, "description": "Any other error, same shape"},
}


class OpenAIErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class OpenAIErrorResponse(BaseModel):
    """An error of the gateway (`/v1/*`), in OpenAI's shape."""

    error: OpenAIErrorDetail


GATEWAY_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": OpenAIErrorResponse, "description": "Invalid request (e.g. body not a JSON object)"},
    401: {"model": OpenAIErrorResponse, "description": "Missing, unknown or revoked memroute API key"},
    413: {"model": OpenAIErrorResponse, "description": "Request body over MEMROUTE_MAX_CHAT_BODY_BYTES"},
    502: {"model": OpenAIErrorResponse, "description": "No provider configured, or it is unreachable"},
    504: {"model": OpenAIErrorResponse, "description": "The provider timed out"},
    "default": {"description": "An error status of the provider, passed through with its body unchanged"},
}
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": ErrorResponse, "description": "Not found"}}
CONFLICT: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorResponse, "description": "Conflicts with what is stored (e.g. a key already in use)"}
}


# -- memories ----------------------------------------------------------------------------


class MemoryOut(BaseModel):
    """One stored memory."""

    id: str
    apiKeyId: str
    sessionId: str
    type: MemoryTypeName
    key: str
    content: str
    metadata: dict[str, Any]
    createdAt: Timestamp
    updatedAt: Timestamp
    expiresAt: str | None
    accessCount: int
    lastAccessedAt: str | None


class CacheStats(BaseModel):
    hits: int
    misses: int


class ListStats(BaseModel):
    total: int = Field(description="Memories matching the filters (all pages)")
    byType: dict[str, int] = Field(description="Matching memories per type")
    tokensUsed: int = Field(description="Estimated tokens of all memories of the key (or of every key)")
    hitRate: float
    cacheStats: CacheStats


class MemoryList(BaseModel):
    data: list[MemoryOut]
    total: int
    page: int
    limit: int
    totalPages: int
    stats: ListStats


class MemoryCreate(StrictBody):
    """A memory to store; an existing memory with the same (apiKeyId, key) is replaced."""

    content: str = Field(min_length=1, json_schema_extra=documented_pattern(NOT_BLANK))
    key: str = Field(min_length=1, max_length=512)
    type: MemoryTypeName = "factual"
    sessionId: str = Field("", max_length=256)
    apiKeyId: OwnerId = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    expiresAt: DateOrTimestamp | None = Field(
        None, description="ISO-8601 date or timestamp; null = never expires"
    )


class MemoryCreated(BaseModel):
    success: Literal[True] = True
    id: str
    memory: MemoryOut


class MemoryUpdate(StrictBody):
    """The fields to change; absent fields keep their value. `expiresAt: null` removes the expiry."""

    type: MemoryTypeName = optional()
    key: str = optional(min_length=1, max_length=512, documented=NOT_BLANK)
    content: str = optional(min_length=1, documented=NOT_BLANK)
    metadata: dict[str, Any] = optional()
    expiresAt: DateOrTimestamp | None = None
    sessionId: str = optional(max_length=256)


class MemoryEnvelope(BaseModel):
    memory: MemoryOut


class MemoryUpdated(BaseModel):
    success: Literal[True] = True
    memory: MemoryOut


class Success(BaseModel):
    success: Literal[True] = True


class HistoryEntryOut(BaseModel):
    memoryId: str
    event: Literal["ADD", "UPDATE", "DELETE"]
    oldContent: str | None
    newContent: str | None
    oldKey: str | None
    newKey: str | None
    at: Timestamp
    actor: str


class HistoryOut(BaseModel):
    history: list[HistoryEntryOut]


class HealthSteps(BaseModel):
    extract: bool
    store: bool
    search: bool
    delete: bool


class HealthOut(BaseModel):
    working: bool
    latencyMs: float
    steps: HealthSteps
    error: str | None = Field(None, description="Present only when working is false")


# -- retrieval preview -------------------------------------------------------------------


class PreviewRequest(StrictBody):
    """A dry run of retrieval: nothing is written, access counts are not bumped."""

    query: str = Field(min_length=1, max_length=16000, json_schema_extra=documented_pattern(NOT_BLANK))
    strategy: PreviewStrategy = Field("hybrid", description='"recent" is an alias of "exact"')
    maxTokens: JsonInt = Field(2000, ge=1, le=16000)
    apiKeyId: str | None = Field(None, max_length=256, description="absent or null = every key")
    limit: JsonInt = Field(20, ge=1, le=100)


class PreviewItem(BaseModel):
    id: str
    apiKeyId: str
    type: MemoryTypeName
    key: str
    content: str
    score: float
    tokens: int
    tier: Literal["fts5", "vector", "hybrid-rrf", "qdrant", "recent"]
    vecScore: float | None
    ftsScore: float | None
    truncated: bool


class Resolution(BaseModel):
    embeddingSource: str | None
    embeddingModel: str | None
    vectorStore: str
    strategyUsed: str
    rerankApplied: bool
    fallbackReason: str | None


class PreviewOut(BaseModel):
    memories: list[PreviewItem]
    resolution: Resolution
    totalTokensUsed: int
    budgetMaxTokens: int


# -- engine status -------------------------------------------------------------------------


class KeywordStatus(BaseModel):
    available: bool
    backend: str


class EmbeddingCacheStats(BaseModel):
    hits: int
    misses: int
    size: int


class EmbeddingStatus(BaseModel):
    source: str | None
    model: str | None
    dimensions: int | None
    available: bool
    reason: str
    cacheStats: EmbeddingCacheStats


class VectorStoreStatus(BaseModel):
    backend: Literal["sqlite-vec", "qdrant", "none"]
    available: bool
    rowCount: int
    needsReindex: int
    reason: str


class QdrantBackfill(BaseModel):
    done: bool = Field(description="every memory of the current collection was pushed")
    pending: int = Field(description="memories the back-fill has still to push")
    pushed: int
    total: int = Field(description="memories when the back-fill (re)started")
    orphansRemoved: int = Field(description="points of deleted memories removed at its end")


class QdrantStatus(BaseModel):
    enabled: bool
    healthy: bool | None = Field(description="the server's /readyz (null when disabled)")
    latencyMs: float | None
    error: str | None
    where: str | None = Field(description="the server URL, or 'local mode (...)'; never the key")
    collection: str | None = Field(description="`<collection>_<dimension>` for the current embedding")
    points: int | None
    embedding: str | None = Field(description="source:model Qdrant's vectors come from")
    serving: bool = Field(description="Qdrant answers searches (its back-fill has finished)")
    outbox: int = Field(description="memory changes queued for Qdrant")
    backfill: QdrantBackfill
    lastError: str | None


class RerankStatus(BaseModel):
    enabled: bool
    provider: str | None
    model: str | None
    available: bool
    reason: str


class ExtractionQueue(BaseModel):
    pending: int
    failed: int


class ReindexProgress(BaseModel):
    running: bool
    processed: int = Field(description="memories embedded by the background worker since start")
    errors: int


class StorageStatus(BaseModel):
    writable: bool = Field(description="false while writes fail because the database or its disk is full")
    reason: str
    databaseBytes: int | None = Field(description="the database file and its WAL")
    diskFreeBytes: int | None


class EngineStatus(BaseModel):
    keyword: KeywordStatus
    embedding: EmbeddingStatus
    vectorStore: VectorStoreStatus
    qdrant: QdrantStatus
    rerank: RerankStatus
    extractionQueue: ExtractionQueue
    reindex: ReindexProgress
    storage: StorageStatus


class ReindexRequest(StrictBody):
    force: bool = Field(False, description="re-embed every memory, not only those waiting")


class ReindexOut(BaseModel):
    started: bool
    pending: int
    reason: str | None = Field(None, description="why nothing started (no embedding source, no sqlite-vec)")


class EmbeddingProvider(BaseModel):
    id: str
    kind: Literal["provider", "local"]
    hasKey: bool | None = None
    source: str | None = None
    model: str | None = None
    dimensions: int | None = None
    available: bool | None = None
    reason: str | None = None


class EmbeddingProvidersOut(BaseModel):
    providers: list[EmbeddingProvider]


# -- summarisation, import ---------------------------------------------------------------


class SummarizeRequest(StrictBody):
    """Compact memories not updated for `olderThanDays` into one summary per key: give
    `apiKeyId` or `allKeys: true`, not both."""

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [
                {"required": ["apiKeyId"], "properties": {"apiKeyId": {"type": "string"}}},
                {"required": ["allKeys"], "properties": {"allKeys": {"const": True}}},
            ]
        }
    )

    olderThanDays: JsonInt = Field(30, ge=1, le=365)
    apiKeyId: str | None = Field(None, max_length=256, description="the key to compact")
    allKeys: bool = Field(False, description="compact every key (each key gets its own summary)")
    dryRun: bool = Field(False, description="only list the candidates")


class SummaryWritten(BaseModel):
    apiKeyId: str
    summaryId: str
    count: int


class SummarizeOut(BaseModel):
    candidates: list[MemoryOut]
    totalTokens: int
    deletedCount: int
    summaryId: str | None = Field(description="The summary's id when exactly one key was compacted")
    summaries: list[SummaryWritten]
    dryRun: bool


class ImportRecord(BaseModel):
    """One record to import: the export shape, where only `content` is required. A record
    whose `id` is already this owner's updates that memory; otherwise it upserts by key."""

    id: str | None = None
    apiKeyId: str | None = Field(None, description="the ?apiKeyId= query parameter overrides it")
    sessionId: str = ""
    type: MemoryTypeName = "factual"
    key: str = ""
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    createdAt: str | None = None
    updatedAt: str | None = None
    expiresAt: str | None = None


class ImportFailure(BaseModel):
    line: int = Field(description="1-based line (JSONL) or array position (JSON array)")
    error: str


class ImportReportOut(BaseModel):
    imported: int
    skipped: int = Field(description="Records identical to a memory already stored")
    errors: list[ImportFailure]


# -- settings ------------------------------------------------------------------------------

EmbeddingSourceName = Literal["remote", "static", "transformers", "auto", "hashing"]
VectorStoreName = Literal["sqlite-vec", "qdrant", "auto"]
ScopeName = Literal["apiKey", "session", "global"]
ModelName = Annotated[str, Field(max_length=256, description='"provider/model"; null or "" = unset')]


class MemorySettingsOut(BaseModel):
    enabled: bool
    maxTokens: int
    retentionDays: int
    strategy: SettingsStrategy
    skillsEnabled: bool
    embeddingSource: EmbeddingSourceName
    embeddingProviderModel: str | None
    transformersEnabled: bool
    staticEnabled: bool
    rerankEnabled: bool
    rerankProviderModel: str | None
    vectorStore: VectorStoreName
    scope: ScopeName
    extractionEnabled: bool
    injectionEnabled: bool


class MemorySettingsUpdate(StrictBody):
    """Settings to change; absent fields keep their value. All or nothing: one bad value → 400."""

    enabled: bool = optional()
    maxTokens: JsonInt = optional(ge=0, le=16000)
    retentionDays: JsonInt = optional(ge=1, le=365)
    strategy: SettingsStrategy = optional()
    skillsEnabled: bool = optional(description="stored for compatibility; has no effect")
    embeddingSource: EmbeddingSourceName = optional()
    embeddingProviderModel: ModelName | None = None
    transformersEnabled: bool = optional()
    staticEnabled: bool = optional()
    rerankEnabled: bool = optional()
    rerankProviderModel: ModelName | None = None
    vectorStore: VectorStoreName = optional()
    scope: ScopeName = optional()
    extractionEnabled: bool = optional()
    injectionEnabled: bool = optional()


class QdrantSettingsOut(BaseModel):
    """Qdrant settings. The API key is write-only: only whether one is set and its last 4
    characters are shown."""

    enabled: bool
    host: str = Field(description="host name or URL; ':memory:' or 'local:<dir>' run Qdrant's local mode")
    port: int
    https: bool
    collection: str = Field(description="base name: the collection is `<collection>_<dimension>`")
    embeddingModel: str | None = Field(
        description="'provider/model', or null for the memory embedding source"
    )
    quantization: Literal["none", "int8", "binary"]
    hasApiKey: bool
    apiKeyMasked: str | None


class QdrantSettingsUpdate(StrictBody):
    """Settings to change; absent fields keep their value. `enabled` also sets the memory
    setting `vectorStore` (on → qdrant, off → auto); enabling back-fills every memory."""

    enabled: bool = optional()
    host: str | None = optional(max_length=512)
    port: JsonInt = optional(ge=1, le=65535)
    https: bool = optional()
    collection: str = optional(min_length=1, max_length=100, documented=r"^\s*[A-Za-z0-9_-]+\s*$")
    embeddingModel: str | None = optional(
        max_length=256,
        description="'provider/model'; '' or null = the memory embedding source",
        documented=r"^\s*$|/",
    )
    quantization: Literal["none", "int8", "binary"] = optional()
    apiKey: str | None = optional(max_length=1024, description='"" or null removes the stored key')


class QdrantHealthOut(BaseModel):
    ok: bool
    latencyMs: float
    error: str | None = None


class QdrantSearchRequest(StrictBody):
    query: str = Field(min_length=1, max_length=4096)
    topK: JsonInt = Field(5, ge=1, le=50)


class QdrantSearchHit(BaseModel):
    id: str
    score: float
    payload: dict[str, Any] | None = None


class QdrantSearchOut(BaseModel):
    ok: bool
    results: list[QdrantSearchHit]
    error: str | None = None


class QdrantCleanupOut(BaseModel):
    ok: bool
    deletedCount: int
    deletedIds: list[str] = Field(description="the memory ids whose points were deleted")
    retentionDays: int
    error: str | None = None


class QdrantModel(BaseModel):
    value: str = Field(description="'' = the memory embedding source")
    label: str


class QdrantModelsOut(BaseModel):
    models: list[QdrantModel]


# -- keys and providers ---------------------------------------------------------------------


class ApiKeyOut(BaseModel):
    """A client key. Its secret is never stored; `prefix` is its first 8 characters."""

    id: str = Field(description="Also the owner id (apiKeyId) of the key's memories")
    name: str
    prefix: str
    createdAt: Timestamp
    lastUsedAt: str | None
    revokedAt: str | None
    active: bool


class ApiKeyCreate(StrictBody):
    name: str = Field(min_length=1, max_length=100)


class ApiKeyCreated(BaseModel):
    key: ApiKeyOut
    secret: str = Field(description="The client secret (Bearer token for /v1/*); shown only here, once")


class ApiKeyEnvelope(BaseModel):
    key: ApiKeyOut


class ApiKeyList(BaseModel):
    keys: list[ApiKeyOut]


# An http(s) URL with a host (the core also checks the port and that httpx can send to it).
HTTP_URL = r"^\s*[Hh][Tt][Tt][Pp][Ss]?://[^/?#]"
ProviderId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
Secret = Annotated[str, Field(min_length=1, max_length=4096, description="stored; never returned")]


class ProviderOut(BaseModel):
    """An upstream provider; its stored secret is never returned, only masked."""

    id: str
    baseUrl: str
    apiKeyEnv: str | None
    hasStoredKey: bool
    apiKeyMasked: str | None = Field(description='"***" plus the last 4 characters of a long secret')
    default: bool
    createdAt: Timestamp
    updatedAt: Timestamp


# `apiKey` and `apiKeyEnv` exclude each other (either may be null).
ONE_KEY_SOURCE = ConfigDict(
    json_schema_extra={
        "not": {
            "required": ["apiKey", "apiKeyEnv"],
            "properties": {"apiKey": {"type": "string"}, "apiKeyEnv": {"type": "string"}},
        }
    }
)


class ProviderCreate(StrictBody):
    """Give the upstream key by environment variable name (`apiKeyEnv`) or as `apiKey`, not both."""

    model_config = ONE_KEY_SOURCE

    id: ProviderId
    baseUrl: str = Field(
        max_length=2048,
        json_schema_extra=documented_pattern(HTTP_URL),
        description="e.g. https://api.openai.com/v1",
    )
    apiKeyEnv: EnvName | None = None
    apiKey: Secret | None = None
    default: bool = False


class ProviderUpdate(StrictBody):
    """Absent fields keep their value. Setting `apiKey` clears `apiKeyEnv` and the
    other way round (not both at once); `null` removes it."""

    model_config = ONE_KEY_SOURCE

    baseUrl: str = optional(max_length=2048, documented=HTTP_URL)
    apiKeyEnv: EnvName | None = None
    apiKey: Secret | None = None
    default: bool = optional()


class ProviderEnvelope(BaseModel):
    provider: ProviderOut


class ProviderList(BaseModel):
    providers: list[ProviderOut]
