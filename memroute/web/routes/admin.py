"""`/api/keys` (client API keys) and `/api/providers` (upstream LLM providers), admin only.

No response carries a key's hash or a provider's stored secret: a key's secret is
returned once, by the request that creates it; provider secrets appear only masked.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel

from memroute.errors import Conflict, InvalidInput, NotFound
from memroute.models.records import ProviderRecord
from memroute.service import Memory
from memroute.web.auth import require_admin
from memroute.web.routes.memory import memory_of
from memroute.web.schemas.errors import CONFLICT, ERROR_RESPONSES, NOT_FOUND
from memroute.web.schemas.keys import (
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyEnvelope,
    ApiKeyLimitsUpdate,
    ApiKeyList,
    ProviderCreate,
    ProviderEnvelope,
    ProviderList,
    ProviderUpdate,
)
from memroute.web.schemas.memory import Success

keys = APIRouter(
    prefix="/api/keys", tags=["keys"], dependencies=[Depends(require_admin)], responses=ERROR_RESPONSES
)
providers = APIRouter(
    prefix="/api/providers",
    tags=["providers"],
    dependencies=[Depends(require_admin)],
    responses=ERROR_RESPONSES,
)

KeyId = Annotated[str, Path(alias="id", min_length=1, max_length=256)]
ProviderId = Annotated[str, Path(alias="id", min_length=1, max_length=64)]


# -- keys ---------------------------------------------------------------------------------


@keys.get("", response_model=ApiKeyList)
def list_keys(request: Request) -> BaseModel:
    """Every client key, active and revoked (never a secret or a hash)."""
    return ApiKeyList.model_validate({"keys": memory_of(request).keys.list()})


@keys.post("", response_model=ApiKeyCreated, status_code=201)
def create_key(request: Request, body: ApiKeyCreate) -> BaseModel:
    """Create a client key. The response is the only place its secret ever appears:
    only a hash is stored. The key's `id` is the `apiKeyId` owning its memories."""
    key, secret = memory_of(request).keys.create(body.name)
    return ApiKeyCreated.model_validate({"key": key, "secret": secret})


@keys.patch("/{id}", response_model=ApiKeyEnvelope, responses=NOT_FOUND)
def set_key_limits(request: Request, key_id: KeyId, body: ApiKeyLimitsUpdate) -> BaseModel:
    """Change a key's own gateway settings: its limits (`maxConcurrent`,
    `requestsPerMinute`; `null` restores the server's default) and `requiresUserId` (a
    request that names no end user gets no memory). Absent fields keep their value.
    Applies from the key's next request."""
    memory = memory_of(request)
    old = memory.keys.get(key_id)
    changes = body.model_dump(exclude_unset=True)
    key = memory.keys.set_limits(
        key_id,
        max_concurrent=changes.get("maxConcurrent", old.max_concurrent),
        requests_per_minute=changes.get("requestsPerMinute", old.requests_per_minute),
        requires_user_id=changes.get("requiresUserId"),
    )
    return ApiKeyEnvelope.model_validate({"key": key})


@keys.delete("/{id}", response_model=ApiKeyEnvelope, responses=NOT_FOUND)
def revoke_key(request: Request, key_id: KeyId) -> BaseModel:
    """Revoke a key (idempotent). Its memories stay; the gateway stops accepting it."""
    return ApiKeyEnvelope.model_validate({"key": memory_of(request).keys.revoke(key_id)})


# -- providers ----------------------------------------------------------------------------


def _existing(memory: Memory, provider_id: str) -> ProviderRecord | None:
    return next((p for p in memory.providers.list() if p.id == provider_id), None)


@providers.get("", response_model=ProviderList)
def list_providers(request: Request) -> BaseModel:
    """Every stored provider; secrets masked."""
    return ProviderList.model_validate({"providers": memory_of(request).providers.list()})


@providers.post("", response_model=ProviderEnvelope, status_code=201, responses=CONFLICT)
def create_provider(request: Request, body: ProviderCreate) -> BaseModel:
    """Add a provider. Models named `<id>/<model>` are routed to it; with `default: true`
    it also takes every model without a known provider prefix."""
    memory = memory_of(request)
    if _existing(memory, body.id) is not None:
        raise Conflict(f"provider {body.id} already exists; change it with PUT /api/providers/{body.id}")
    record = memory.providers.add(
        body.id,
        body.baseUrl,
        api_key_env=body.apiKeyEnv,
        api_key=body.apiKey,
        default=body.default,
        format=body.format,
    )
    return ProviderEnvelope.model_validate({"provider": record})


@providers.put("/{id}", response_model=ProviderEnvelope, responses=NOT_FOUND)
def update_provider(request: Request, provider_id: ProviderId, body: ProviderUpdate) -> BaseModel:
    """Change a provider; absent fields keep their value. Setting `apiKey` clears
    `apiKeyEnv` and the other way round; `null` removes either."""
    memory = memory_of(request)
    old = _existing(memory, provider_id)
    if old is None:
        raise NotFound(f"provider {provider_id} not found")
    changes = body.model_dump(exclude_unset=True)
    if changes.get("apiKey") is not None and changes.get("apiKeyEnv") is not None:
        raise InvalidInput("give either apiKeyEnv or apiKey, not both")
    api_key_env, api_key = old.api_key_env, old.api_key
    if "apiKey" in changes:
        api_key = changes["apiKey"]
        api_key_env = None if api_key is not None else api_key_env
    if "apiKeyEnv" in changes:
        api_key_env = changes["apiKeyEnv"]
        api_key = None if api_key_env is not None else api_key
    record = memory.providers.add(
        provider_id,
        changes.get("baseUrl", old.base_url),
        api_key_env=api_key_env,
        api_key=api_key,
        default=changes.get("default", old.is_default),
        format=changes.get("format", old.format),
    )
    return ProviderEnvelope.model_validate({"provider": record})


@providers.delete("/{id}", response_model=Success, responses=NOT_FOUND)
def delete_provider(request: Request, provider_id: ProviderId) -> BaseModel:
    """Remove a provider."""
    memory_of(request).providers.remove(provider_id)
    return Success()
