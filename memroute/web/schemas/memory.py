"""`/api/memory`: memories, their list, history and import, and the retrieval preview.

The response models are derived from the records of `memroute.records.records`; envelopes
(`{"memory": …}`, `{"success": true, …}`) are the only fields declared here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from memroute.models import provenance, records
from memroute.web.schemas.common import (
    NOT_BLANK,
    STORED_TEXT,
    STORED_TEXT_NOT_BLANK,
    DateOrTimestamp,
    JsonInt,
    MemoryTypeName,
    OwnerId,
    PreviewStrategy,
    StrictBody,
    Timestamp,
    UserId,
    documented_pattern,
    optional,
)
from memroute.web.schemas.derive import envelope, list_of, wire_model

SUCCESS = Literal[True]

Role = Literal["user", "assistant"]
LearnedAt = Annotated[str | None, Field(description="ISO-8601 UTC, e.g. 2026-05-08T14:03:00.000Z")]
ProvenanceSource = wire_model(
    provenance.Source,
    "ProvenanceSource",
    doc="One chat request a memory was learned from.",
    refine={"role": Role | None, "learned_at": LearnedAt},
)
ProvenanceOut = wire_model(
    provenance.Provenance,
    "Provenance",
    doc="Where a memory came from, read from its metadata (`requestId`, `sessionId`, `role`, "
    "`speaker`, `learnedAt`, `sources`, or `source`).",
    refine={
        "origin": Annotated[
            Literal["chat", "manual", "import"],
            Field(
                description='"chat": learned from a chat request; "manual": added by hand; "import": imported'
            ),
        ],
        "request_id": Annotated[str | None, Field(description="The chat request's x-request-id")],
        "role": Annotated[Role | None, Field(description="Who said it")],
        "speaker": Annotated[str | None, Field(description="The speaker's name, when the request named one")],
        "learned_at": LearnedAt,
        "earlier": Annotated[
            list[ProvenanceSource],  # type: ignore[valid-type]
            Field(description="Other requests it was learned from before, oldest first (at most 5)"),
        ],
        "summary": Annotated[
            str,
            Field(
                description="One line, e.g. "
                '"learned from request req_1 at 2026-05-08 14:03 UTC (Caroline, session s1)"'
            ),
        ],
    },
)
MemoryOut = wire_model(
    records.MemoryRecord,
    "MemoryOut",
    doc="One stored memory.",
    refine={
        "type": MemoryTypeName,
        "metadata": dict[str, Any],
        "created_at": Timestamp,
        "updated_at": Timestamp,
        "provenance": Annotated[
            ProvenanceOut | None,
            Field(description="Where the memory came from; null when its metadata does not say"),
        ],
    },
)
CacheStats = wire_model(records.CacheStats, "CacheStats")
ListStats = wire_model(
    records.Stats,
    "ListStats",
    refine={
        "total": Annotated[int, Field(description="Memories matching the filters (all pages)")],
        "by_type": Annotated[dict[str, int], Field(description="Matching memories per type")],
        "tokens_used": Annotated[
            int, Field(description="Estimated tokens of all memories of the key (or of every key)")
        ],
    },
)
HistoryEntryOut = wire_model(
    records.HistoryEntry,
    "HistoryEntryOut",
    refine={"event": Literal["ADD", "UPDATE", "DELETE"], "at": Timestamp},
)
PreviewItem = wire_model(
    records.RetrievedItem,
    "PreviewItem",
    refine={
        "type": MemoryTypeName,
        "tier": Literal["fts5", "meaning", "vector", "hybrid-rrf", "qdrant", "recent"],
    },
)
Resolution = wire_model(records.Resolution, "Resolution")
PreviewOut = wire_model(records.Retrieval, "PreviewOut")
ImportFailure = wire_model(
    records.ImportFailure,
    "ImportFailure",
    refine={"line": Annotated[int, Field(description="1-based line (JSONL) or array position (JSON array)")]},
)
ImportReportOut = wire_model(
    records.ImportReport,
    "ImportReportOut",
    refine={"skipped": Annotated[int, Field(description="Records identical to a memory already stored")]},
)


MemoryList = envelope(
    "MemoryList", data=list_of(MemoryOut), total=int, page=int, limit=int, totalPages=int, stats=ListStats
)


class MemoryCreate(StrictBody):
    """A memory to store. With a `key`, an existing memory with the same (apiKeyId, key)
    is replaced; without one, a new memory is stored."""

    content: str = Field(min_length=1, json_schema_extra=documented_pattern(STORED_TEXT_NOT_BLANK))
    key: str = Field(
        "",
        max_length=512,
        description='e.g. "preference:editor"; "" or absent = no key',
        json_schema_extra=documented_pattern(STORED_TEXT),
    )
    type: MemoryTypeName = "factual"
    sessionId: str = Field("", max_length=256, json_schema_extra=documented_pattern(STORED_TEXT))
    apiKeyId: OwnerId = ""
    userId: UserId = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    expiresAt: DateOrTimestamp | None = Field(
        None, description="ISO-8601 date or timestamp; null = never expires"
    )
    createdAt: DateOrTimestamp | None = Field(
        None,
        description="when it was said or happened (ISO-8601 date or timestamp; a time in the future"
        " is taken as now); null = now. An episodic memory's injected line shows this date",
    )


MemoryCreated = envelope("MemoryCreated", success=(SUCCESS, True), id=str, memory=MemoryOut)


class MemoryUpdate(StrictBody):
    """The fields to change; absent fields keep their value. `expiresAt: null` removes the expiry.
    A key can be changed or given to a memory without one, not removed."""

    type: MemoryTypeName = optional()
    key: str = optional(min_length=1, max_length=512, documented=STORED_TEXT_NOT_BLANK)
    content: str = optional(min_length=1, documented=STORED_TEXT_NOT_BLANK)
    metadata: dict[str, Any] = optional()
    expiresAt: DateOrTimestamp | None = None
    sessionId: str = optional(max_length=256, documented=STORED_TEXT)


MemoryEnvelope = envelope("MemoryEnvelope", memory=MemoryOut)
MemoryUpdated = envelope("MemoryUpdated", success=(SUCCESS, True), memory=MemoryOut)
Success = envelope("Success", success=(SUCCESS, True))
HistoryOut = envelope("HistoryOut", history=list_of(HistoryEntryOut))


class PreviewRequest(StrictBody):
    """A dry run of retrieval: nothing is written, access counts are not bumped."""

    query: str = Field(min_length=1, max_length=16000, json_schema_extra=documented_pattern(NOT_BLANK))
    strategy: PreviewStrategy = Field("hybrid", description='"recent" is an alias of "exact"')
    maxTokens: JsonInt = Field(2000, ge=1, le=16000)
    apiKeyId: str | None = Field(
        None,
        max_length=256,
        description="absent or null = every key",
        json_schema_extra=documented_pattern(STORED_TEXT),
    )
    userId: UserId = ""
    limit: JsonInt = Field(20, ge=1, le=100)


class ImportRecord(BaseModel):
    """One record to import: the export shape, where only `content` is required. A record
    whose `id` is already this owner's updates that memory; otherwise it upserts by key."""

    id: str | None = None
    apiKeyId: str | None = Field(None, description="the ?apiKeyId= query parameter overrides it")
    userId: str = Field("", max_length=128, description='the key\'s end user who owns it ("" = the key)')
    sessionId: str = ""
    type: MemoryTypeName = "factual"
    key: str = ""
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    createdAt: str | None = None
    updatedAt: str | None = None
    expiresAt: str | None = None
