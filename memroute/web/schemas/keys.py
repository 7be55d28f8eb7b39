"""`/api/keys` and `/api/providers`: client keys and upstream providers (derived from
`ApiKey` and `ProviderRecord`, whose secrets never go on the wire)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from memroute.models import records
from memroute.service.keys import MAX_CONCURRENT_OVERRIDE, MAX_RPM_OVERRIDE
from memroute.web.schemas.common import WHOLE_NUMBER, StrictBody, Timestamp, documented_pattern, optional
from memroute.web.schemas.derive import envelope, list_of, wire_model

ApiKeyOut = wire_model(
    records.ApiKey,
    "ApiKeyOut",
    doc="A client key. Its secret is never stored; `prefix` is its first 8 characters.",
    refine={
        "id": Annotated[str, Field(description="Also the owner id (apiKeyId) of the key's memories")],
        "created_at": Timestamp,
        "max_concurrent": Annotated[
            int | None,
            Field(description="Upstream calls this key may run at once; null: MEMROUTE_KEY_MAX_CONCURRENT"),
        ],
        "requests_per_minute": Annotated[
            int | None,
            Field(description="Requests this key may send a minute (0: no limit); null: MEMROUTE_KEY_RPM"),
        ],
    },
)
ApiKeyCreated = envelope(
    "ApiKeyCreated",
    key=ApiKeyOut,
    secret=(
        str,
        Field(description="The client secret (Bearer token for /v1/*); shown only here, once"),
    ),
)
ApiKeyEnvelope = envelope("ApiKeyEnvelope", key=ApiKeyOut)
ApiKeyList = envelope("ApiKeyList", keys=list_of(ApiKeyOut))

ProviderOut = wire_model(
    records.ProviderRecord,
    "ProviderOut",
    doc="An upstream provider; its stored secret is never returned, only masked.",
    refine={
        "api_key_masked": Annotated[
            str | None, Field(description='"***" plus the last 4 characters of a long secret')
        ],
        "created_at": Timestamp,
        "updated_at": Timestamp,
    },
)
ProviderEnvelope = envelope("ProviderEnvelope", provider=ProviderOut)
ProviderList = envelope("ProviderList", providers=list_of(ProviderOut))


class ApiKeyCreate(StrictBody):
    name: str = Field(min_length=1, max_length=100)


class ApiKeyLimitsUpdate(StrictBody):
    """A key's own gateway limits. Absent fields keep their value; `null` gives the key
    the server's default again."""

    maxConcurrent: Annotated[int, Field(ge=1, le=MAX_CONCURRENT_OVERRIDE), WHOLE_NUMBER] | None = None
    requestsPerMinute: Annotated[int, Field(ge=0, le=MAX_RPM_OVERRIDE), WHOLE_NUMBER] | None = None
    requiresUserId: bool = optional(
        description="Requests must name an end user (x-memroute-user-id, user, safety_identifier or"
        " metadata.user_id); one that does not gets no memory"
    )


# An http(s) URL with a host (the core also checks the port and that httpx can send to it).
HTTP_URL = r"^\s*[Hh][Tt][Tt][Pp][Ss]?://[^/?#]"
ProviderId = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
EnvName = Annotated[
    str,
    Field(
        pattern=r"^[A-Z][A-Z0-9_]{0,127}$",
        description="An environment variable ending in _API_KEY, _KEY or _TOKEN; never MEMROUTE_*,"
        " MEMORY_*, VECTOR_STORE_* or QDRANT_*",
    ),
]
Secret = Annotated[str, Field(min_length=1, max_length=4096, description="stored; never returned")]
WireFormatName = Literal["openai", "anthropic"]
FORMAT_DOC = (
    "The wire format the provider speaks: `openai` (/v1/chat/completions, /v1/responses) or"
    " `anthropic` (/v1/messages); each gateway route forwards only to providers of its format"
)


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
    format: WireFormatName = Field("openai", description=FORMAT_DOC)


class ProviderUpdate(StrictBody):
    """Absent fields keep their value. Setting `apiKey` clears `apiKeyEnv` and the
    other way round (not both at once); `null` removes it."""

    model_config = ONE_KEY_SOURCE

    baseUrl: str = optional(max_length=2048, documented=HTTP_URL)
    apiKeyEnv: EnvName | None = None
    apiKey: Secret | None = None
    default: bool = optional()
    format: WireFormatName = optional(description=FORMAT_DOC)
