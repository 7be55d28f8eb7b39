"""Qdrant settings: stored values read leniently over the
environment's fallbacks, updates validated strictly, and the masked public view.

The API key is a secret: it is stored like provider keys, used only by the adapter,
and never part of `public()`, a repr or a log line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from memroute.config import check_qdrant_host
from memroute.errors import InvalidInput
from memroute.masking import mask_secret
from memroute.models.status import QdrantSettingsView

QUANTIZATIONS = ("none", "int8", "binary")
LOCAL_MEMORY = ":memory:"
LOCAL_PREFIX = "local:"
_COLLECTION = re.compile(r"^[A-Za-z0-9_-]{1,100}$")

DB_KEYS = {
    "enabled": "qdrantEnabled",
    "host": "qdrantHost",
    "port": "qdrantPort",
    "https": "qdrantHttps",
    "collection": "qdrantCollection",
    "embeddingModel": "qdrantEmbeddingModel",
    "quantization": "qdrantQuantization",
    "apiKey": "qdrantApiKey",
}


@dataclass(frozen=True, slots=True)
class QdrantSettings:
    enabled: bool = False
    host: str = ""  # a host name or URL; ":memory:" or "local:<dir>" run Qdrant's local mode
    port: int = 6333
    https: bool = False
    collection: str = "memroute_memory"  # base name; the collection is `<base>_<dimension>`
    embedding_model: str | None = None  # "provider/model"; None = the memory embedding source
    quantization: str = "none"
    api_key: str | None = field(default=None, repr=False)
    hnsw_ef_construct: int = 128

    @property
    def active(self) -> bool:
        """Enabled and pointed somewhere (otherwise Qdrant reports "not configured")."""
        return self.enabled and bool(self.host)

    @property
    def local_location(self) -> str | None:
        """ ":memory:" or a directory for Qdrant's local mode; None for a server."""
        if self.host == LOCAL_MEMORY:
            return LOCAL_MEMORY
        if self.host.startswith(LOCAL_PREFIX):
            return self.host[len(LOCAL_PREFIX) :].strip() or None
        return None

    @property
    def url(self) -> str:
        """The server's base URL: no trailing slash, a scheme, and the port unless
        the host names one."""
        if self.local_location is not None:
            return self.host
        raw = self.host.strip().rstrip("/")
        if "://" not in raw:
            raw = ("https://" if self.https else "http://") + raw
        parts = urlsplit(raw)
        if parts.port is None:
            raw = f"{parts.scheme}://{parts.netloc}:{self.port}{parts.path}"
        return raw

    @property
    def where(self) -> str:
        """Where Qdrant is, for status lines (never includes the key)."""
        location = self.local_location
        if location is not None:
            return f"local mode ({location})"
        return self.url

    def public(self) -> QdrantSettingsView:
        """The settings as shown: the API key only masked."""
        key = self.api_key
        return QdrantSettingsView(
            enabled=self.enabled,
            host=self.host,
            port=self.port,
            https=self.https,
            collection=self.collection,
            embedding_model=self.embedding_model,
            quantization=self.quantization,
            has_api_key=key is not None,
            api_key_masked=mask_secret(key),
        )


def normalize(stored: Mapping[str, Any], fallback: QdrantSettings) -> QdrantSettings:
    """Settings from stored values over the environment's (`fallback`); enabled only when
    stored as exactly `true` (the strings "true" or "1" do not count)."""

    def text(name: str, default: str | None) -> str | None:
        raw = stored.get(DB_KEYS[name])
        return raw.strip() if isinstance(raw, str) and raw.strip() else default

    port = stored.get(DB_KEYS["port"])
    if isinstance(port, str):
        try:
            port = int(port.strip())
        except ValueError:
            port = None
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        port = fallback.port
    quantization = stored.get(DB_KEYS["quantization"])
    https = stored.get(DB_KEYS["https"])
    return replace(
        fallback,
        enabled=stored.get(DB_KEYS["enabled"]) is True,
        host=_usable_host(text("host", None)) or fallback.host,
        port=port,
        https=https if isinstance(https, bool) else fallback.https,
        collection=text("collection", fallback.collection) or fallback.collection,
        embedding_model=text("embeddingModel", fallback.embedding_model),
        quantization=quantization if quantization in QUANTIZATIONS else fallback.quantization,
        api_key=text("apiKey", fallback.api_key),
    )


def _usable_host(value: str | None) -> str | None:
    """A stored host that passes the checks (a hand-edited bad one reads as unset)."""
    try:
        return check_qdrant_host(value) if value else None
    except InvalidInput:
        return None


def validate_update(changes: Mapping[str, Any]) -> dict[str, Any]:
    """DB key → value for an update (the route's body, camelCase). One bad value rejects all.
    `apiKey: ""` or `embeddingModel: null`/`""` remove the stored value."""
    out: dict[str, Any] = {}
    for name, raw in changes.items():
        if name not in DB_KEYS:
            raise InvalidInput(f"unknown setting {name!r}; known settings: {', '.join(DB_KEYS)}")
        out[DB_KEYS[name]] = _check(name, raw)
    return out


def _check(name: str, raw: Any) -> Any:
    """One setting's value, checked by the rule for its kind."""
    if name in ("enabled", "https"):
        return _flag(name, raw)
    if name == "port":
        return _port(name, raw)
    if name == "quantization":
        return _quantization(name, raw)
    if raw is None and name in ("embeddingModel", "apiKey", "host"):
        return None  # removes the stored value
    if not isinstance(raw, str):
        raise InvalidInput("must be a string", name)
    return _TEXT_CHECKS[name](name, raw.strip())


def _flag(name: str, raw: Any) -> bool:
    if not isinstance(raw, bool):
        raise InvalidInput(f"must be true or false; got {raw!r}", name)
    return raw


def _port(name: str, raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= 65535:
        raise InvalidInput(f"must be an integer from 1 to 65535; got {raw!r}", name)
    return raw


def _quantization(name: str, raw: Any) -> str:
    if raw not in QUANTIZATIONS:
        raise InvalidInput(f"must be one of {', '.join(QUANTIZATIONS)}; got {raw!r}", name)
    return str(raw)


def _api_key(name: str, value: str) -> str | None:
    if len(value) > 1024:
        raise InvalidInput("must be at most 1024 characters", name)
    return value or None


def _embedding_model(name: str, value: str) -> str | None:
    if value and ("/" not in value.strip("/") or len(value) > 256):
        raise InvalidInput("must be a 'provider/model' string, or null for the memory embedding source", name)
    return value or None


def _collection(name: str, value: str) -> str:
    if not _COLLECTION.match(value):
        raise InvalidInput("must be 1–100 letters, digits, '_' or '-'", name)
    return value


def _host(name: str, value: str) -> str | None:
    return check_qdrant_host(value)


_TEXT_CHECKS: dict[str, Callable[[str, str], str | None]] = {
    "apiKey": _api_key,
    "embeddingModel": _embedding_model,
    "collection": _collection,
    "host": _host,
}
