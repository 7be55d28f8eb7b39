"""Management API for memories: `/api/memory` (admin token required).

Handlers are plain `def`: FastAPI runs them in its threadpool, which suits the
synchronous core. They only translate HTTP to `Memory` calls; the core validates.
The routes with fixed paths (`/health`, `/export`, …) are declared before the
`/{id}` ones, so they are never taken for a memory id.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from itertools import chain
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from memroute.errors import InvalidInput, NotFound
from memroute.models.owners import owner_of
from memroute.models.records import ImportReport
from memroute.models.results import VerifyReport, VerifySteps
from memroute.service import Memory
from memroute.web.auth import require_admin
from memroute.web.import_body import StagedImport, receive_import
from memroute.web.schemas.common import NOT_BLANK, STORED_TEXT
from memroute.web.schemas.engine import EmbeddingProvidersOut, EngineStatus
from memroute.web.schemas.errors import CONFLICT, ERROR_RESPONSES, NOT_FOUND
from memroute.web.schemas.maintenance import (
    HealthOut,
    ReindexOut,
    ReindexRequest,
    SummarizeOut,
    SummarizeRequest,
)
from memroute.web.schemas.memory import (
    HistoryOut,
    ImportRecord,
    ImportReportOut,
    ListStats,
    MemoryCreate,
    MemoryCreated,
    MemoryEnvelope,
    MemoryList,
    MemoryUpdate,
    MemoryUpdated,
    PreviewOut,
    PreviewRequest,
    Success,
)

log = logging.getLogger("memroute.web")
router = APIRouter(
    prefix="/api/memory", tags=["memory"], dependencies=[Depends(require_admin)], responses=ERROR_RESPONSES
)

MemoryId = Annotated[str, Path(alias="id", min_length=1, max_length=256, description="The memory's id")]
TypeFilter = Literal["", "factual", "episodic", "procedural", "semantic"]
OwnerQuery = Annotated[
    str | None,
    Query(
        alias="apiKeyId",
        max_length=256,
        description='One key\'s memories ("" = unowned); absent = all',
        json_schema_extra={"pattern": STORED_TEXT},
    ),
]


def memory_of(request: Request) -> Memory:
    """The service the app opened in its lifespan."""
    return request.app.state.memory  # type: ignore[no-any-return]


@router.get("", response_model=MemoryList)
def list_memories(
    request: Request,
    api_key_id: OwnerQuery = None,
    user_id: Annotated[
        str | None,
        Query(
            alias="userId",
            max_length=128,
            description="One end user's memories (\"\" = the keys' own); absent = the keys' and all"
            " their end users'",
            json_schema_extra={"pattern": STORED_TEXT},
        ),
    ] = None,
    type: Annotated[TypeFilter | None, Query(description='"" = any type')] = None,
    session_id: Annotated[
        str | None, Query(alias="sessionId", max_length=256, json_schema_extra={"pattern": STORED_TEXT})
    ] = None,
    q: Annotated[str | None, Query(max_length=2000, description="Text in content or key (any case)")] = None,
    page: Annotated[int, Query(ge=1, le=10**9)] = 1,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int | None, Query(ge=0, le=10**12, description="Wins over page when given")] = None,
) -> BaseModel:
    """List memories newest first (by creation), with filters and paging.

    `stats.total` and `stats.byType` count the memories matching the filters (before
    paging); `stats.tokensUsed` covers every memory of the key (or of all keys)."""
    memory = memory_of(request)
    result = memory.list(api_key_id, type or None, session_id, q, limit, page, offset=offset, user_id=user_id)
    owner = owner_of(api_key_id, user_id) if api_key_id is not None and user_id else api_key_id
    stats = replace(memory.stats(owner), total=result.total, by_type=result.by_type)
    return MemoryList.model_validate(
        {
            "data": result.items,
            "total": result.total,
            "page": result.page,
            "limit": result.limit,
            "totalPages": result.total_pages,
            "stats": ListStats.model_validate(stats),
        }
    )


@router.post("", response_model=MemoryCreated)
def create_memory(request: Request, body: MemoryCreate) -> BaseModel:
    """Store a memory. With a `key`, an existing memory of the same key (apiKeyId, key)
    is replaced (the old version stays in its history) and keeps its id; without one,
    a new memory is stored."""
    record = memory_of(request).add(
        owner_of(body.apiKeyId, body.userId),
        body.content,
        key=body.key,
        type=body.type,
        session_id=body.sessionId,
        metadata=body.metadata,
        expires_at=body.expiresAt,
        created_at=body.createdAt,
    )
    return MemoryCreated.model_validate({"id": record.id, "memory": record})


@router.get("/health", response_model=HealthOut, response_model_exclude_none=True)
def memory_health(request: Request) -> BaseModel:
    """Run the real pipeline (extract → store → keyword search → delete) on a private
    owner id and leave nothing behind. Always 200: `working: false` names the failed steps."""
    try:
        report = memory_of(request).verify()
    except Exception as exc:  # the probe reports a broken pipeline, it does not fail with it
        log.exception("memory.health.failed")
        steps = VerifySteps(extract=False, store=False, search=False, delete=False)
        report = VerifyReport(
            working=False, latency_ms=0.0, steps=steps, error=f"{type(exc).__name__}: {exc}"
        )
    return HealthOut.model_validate(report)


@router.post("/retrieve-preview", response_model=PreviewOut)
def retrieve_preview(request: Request, body: PreviewRequest) -> BaseModel:
    """What retrieval would return for `query` (the Playground): ranked items with tier,
    scores and tokens, and how the query was resolved. Writes nothing."""
    if not body.query.strip():
        raise InvalidInput("must not be empty", "query")
    result = memory_of(request).retrieve_preview(
        owner_of(body.apiKeyId, body.userId) if body.apiKeyId is not None else None,
        body.query,
        strategy=body.strategy,
        max_tokens=body.maxTokens,
        limit=body.limit,
    )
    return PreviewOut.model_validate(result)


@router.get("/engine-status", response_model=EngineStatus)
def engine_status(request: Request) -> BaseModel:
    """Which search tiers are active and why: keyword (FTS5), the embedding source, the
    vector store with its pending re-index count, Qdrant, rerank, the extraction queue."""
    return EngineStatus.model_validate(memory_of(request).engine_status())


@router.post("/reindex", response_model=ReindexOut)
def reindex(request: Request, body: ReindexRequest) -> BaseModel:
    """Start embedding the memories still waiting for a vector (every memory with
    `force: true`) in the background; `pending` says how many wait now. Progress is in
    `engine-status` (`vectorStore.needsReindex`, `reindex`)."""
    return ReindexOut.model_validate(memory_of(request).reindex(force=body.force))


@router.get("/embedding-providers", response_model=EmbeddingProvidersOut)
def embedding_providers(request: Request) -> BaseModel:
    """Providers a `remote` source can use (`hasKey`; keys are never shown) and the local
    sources (`transformers`, `static`) with their availability."""
    return EmbeddingProvidersOut.model_validate({"providers": memory_of(request).embedding_providers()})


@router.post("/summarize", response_model=SummarizeOut)
def summarize(request: Request, body: SummarizeRequest) -> BaseModel:
    """Compact memories not updated for `olderThanDays` days into English summary
    memories owned by their key (at most 100 memories and the content limit each, one
    transaction each); the originals are deleted (kept in history). Needs `apiKeyId`,
    or `allKeys: true`. `dryRun` only counts the candidates and lists the oldest 100."""
    if body.apiKeyId is not None and body.allKeys:
        raise InvalidInput("give apiKeyId or allKeys: true, not both")
    report = memory_of(request).summarize(
        body.olderThanDays, body.apiKeyId, all_keys=body.allKeys, dry_run=body.dryRun
    )
    return SummarizeOut.model_validate(report)


class JsonLines(StreamingResponse):
    media_type = "application/x-ndjson"


EXPORT_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "One memory per line (JSON Lines), in the order they were stored",
        "content": {"application/x-ndjson": {"schema": {"$ref": "#/components/schemas/MemoryOut"}}},
    },
    # Errors are JSON, not JSON Lines: with "model", FastAPI would file them under the
    # route's media type. ErrorResponse is in the components through every other route.
    **{
        status: {
            "description": doc["description"],
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorResponse"}}},
        }
        for status, doc in ERROR_RESPONSES.items()
    },
}


@router.get("/export", response_class=JsonLines, responses=EXPORT_DOC)
def export_memories(request: Request, api_key_id: OwnerQuery = None) -> JsonLines:
    """Stream every memory of one key (or of every key) as JSON Lines, with metadata and
    timestamps; `POST /api/memory/import` reads it back."""
    records = memory_of(request).export(api_key_id)
    first = next(records, None)  # validates the owner now, while an error can still be a 400
    lines = (
        json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
        for r in chain([] if first is None else [first], records)
    )
    filename = "memroute-export.jsonl"
    return JsonLines(lines, headers={"content-disposition": f'attachment; filename="{filename}"'})


IMPORT_DOC = {
    "requestBody": {
        "required": True,
        "description": "JSON Lines (one record per line, as exported) or a JSON array of records",
        "content": {
            "application/x-ndjson": {"schema": {"type": "string", "pattern": NOT_BLANK}},
            "application/json": {"schema": {"type": "array", "items": ImportRecord.model_json_schema()}},
        },
    }
}


@router.post("/import", response_model=ImportReportOut, openapi_extra=IMPORT_DOC)
async def import_memories(
    request: Request,
    api_key_id: Annotated[
        str | None, Query(alias="apiKeyId", max_length=256, description="Owner for every record")
    ] = None,
) -> BaseModel:
    """Upsert memories from JSON Lines or a JSON array. A bad record is reported with its
    line (or array position) and skipped; every good record is kept. Records identical to
    a stored memory count as skipped, so importing an export twice changes nothing.

    The body is read as it arrives (up to MEMROUTE_MAX_IMPORT_BYTES) and imported once it
    is complete: an upload cut off or refused on the way writes nothing."""
    memory = memory_of(request)
    staged = await receive_import(request, memory.config.max_body_bytes)
    try:
        report = await anyio.to_thread.run_sync(_import_staged, memory, staged, api_key_id)
    finally:
        staged.close()
    return ImportReportOut.model_validate(report)


def _import_staged(memory: Memory, staged: StagedImport, api_key_id: str | None) -> ImportReport:
    return memory.import_(staged.records(), api_key_id=api_key_id)


@router.get("/{id}", response_model=MemoryEnvelope, responses=NOT_FOUND)
def get_memory(request: Request, memory_id: MemoryId) -> BaseModel:
    """One memory by id."""
    record = memory_of(request).get(memory_id)
    if record is None:
        raise NotFound(f"memory {memory_id} not found")
    return MemoryEnvelope.model_validate({"memory": record})


@router.put("/{id}", response_model=MemoryUpdated, responses={**NOT_FOUND, **CONFLICT})
def update_memory(request: Request, memory_id: MemoryId, body: MemoryUpdate) -> BaseModel:
    """Change some fields of a memory; absent fields keep their value. A `key` that
    another memory of the same owner already uses is a 409."""
    changes = body.model_dump(exclude_unset=True)
    names = {"expiresAt": "expires_at", "sessionId": "session_id"}
    record = memory_of(request).update(memory_id, **{names.get(k, k): v for k, v in changes.items()})
    return MemoryUpdated.model_validate({"memory": record})


@router.delete("/{id}", response_model=Success, responses=NOT_FOUND)
def delete_memory(request: Request, memory_id: MemoryId) -> BaseModel:
    """Delete a memory (its history is kept)."""
    if not memory_of(request).delete(memory_id):
        raise NotFound(f"memory {memory_id} not found")
    return Success()


@router.get("/{id}/history", response_model=HistoryOut, responses=NOT_FOUND)
def memory_history(request: Request, memory_id: MemoryId) -> BaseModel:
    """Every change of a memory, oldest first (also after it was deleted)."""
    entries = memory_of(request).history(memory_id)
    if not entries:
        raise NotFound(f"memory {memory_id} not found (no history)")
    return HistoryOut.model_validate({"history": entries})
