"""Upstream providers and model routing (used by the gateway; kept below it so the
service and, later, remote embeddings can resolve providers too).

A model `provider/model` goes to that provider with the prefix stripped; any
other model goes to the default provider (the one marked default, else the
upstream from MEMROUTE_UPSTREAM_BASE_URL) unchanged.

A provider's key may come from an environment variable (`apiKeyEnv`), but only from
one that names a key: upper case, ending in `_API_KEY`, `_KEY` or `_TOKEN`, and not
memroute's own settings (`MEMROUTE_*`, `MEMORY_*`, `VECTOR_STORE_*`, `QDRANT_*`), so
the admin token or the Qdrant key can never be sent to a provider's URL. The rule is
checked when a provider is written and again whenever its key is read.
"""

from __future__ import annotations

import builtins
import logging
import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit

from memroute.clock import Clock, to_iso
from memroute.errors import InvalidInput, NotFound, UpstreamError
from memroute.models.records import PROVIDER_FORMATS, ProviderRecord
from memroute.store import Store
from memroute.upstream.route import Route, url_problem

log = logging.getLogger("memroute.providers")

ENV_PROVIDER_ID = "default"
_PROVIDER_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_KEY_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,127}$")
KEY_ENV_SUFFIXES = ("_API_KEY", "_KEY", "_TOKEN")
OWN_ENV_PREFIXES = ("MEMROUTE_", "MEMORY_", "VECTOR_STORE_", "QDRANT_")


def key_env_refusal(name: str) -> str | None:
    """Why `name` may not hold a provider's key (None when it may)."""
    if not _KEY_ENV_NAME.match(name):
        return "must be an environment variable name in upper case (A-Z, 0-9, _), e.g. OPENAI_API_KEY"
    if name.startswith(OWN_ENV_PREFIXES):
        return f"must not be one of memroute's own settings ({', '.join(p + '*' for p in OWN_ENV_PREFIXES)})"
    if not name.endswith(KEY_ENV_SUFFIXES):
        return f"must name a key: end in {', '.join(KEY_ENV_SUFFIXES)}"
    return None


def validate_key_env(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInput("must be an environment variable name", "apiKeyEnv")
    refusal = key_env_refusal(value)
    if refusal is not None:
        raise InvalidInput(refusal, "apiKeyEnv")
    return value


def validate_base_url(value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInput("must be a URL", "baseUrl")
    url = value.strip().rstrip("/")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:  # e.g. "http://[" (a broken IPv6 address)
        raise InvalidInput(f"is not a valid URL ({exc})", "baseUrl") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidInput("must be an http:// or https:// URL, e.g. https://api.openai.com/v1", "baseUrl")
    problem = url_problem(url)  # what requests are sent with
    if problem is not None:
        raise InvalidInput(f"is not a valid URL ({problem})", "baseUrl")
    if "?" in url or "#" in url:
        # Paths such as /chat/completions are appended to the base URL: after a query or a
        # fragment they would not be paths any more.
        raise InvalidInput("must not contain '?' or '#' (paths are appended to it)", "baseUrl")
    return url


def validate_format(value: object) -> str:
    if value not in PROVIDER_FORMATS:
        raise InvalidInput(
            f"must be one of {', '.join(PROVIDER_FORMATS)} (the wire format the provider speaks)", "format"
        )
    return str(value)


def validate_provider_id(value: object) -> str:
    if not isinstance(value, str) or not _PROVIDER_ID.match(value):
        raise InvalidInput("must be 1-64 lower-case letters, digits, '.', '_' or '-'", "id")
    return value


class ProviderRegistry:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        default_base_url: str | None = None,
        default_api_key: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """`default_base_url`/`default_api_key`: the upstream from MEMROUTE_UPSTREAM_*;
        `environ`: where keys referenced by env var name are looked up."""
        self._store = store
        self._clock = clock
        self._default_base_url = default_base_url
        self._default_api_key = default_api_key
        self._env = os.environ if environ is None else environ
        self._env_route: Route | None = None

    def add(
        self,
        provider_id: str,
        base_url: str,
        *,
        api_key_env: str | None = None,
        api_key: str | None = None,
        default: bool = False,
        format: str | None = None,
    ) -> ProviderRecord:
        """Create or replace a provider. Give the key by env var name or as a stored secret;
        `format` (`openai` or `anthropic`) keeps a replaced provider's when not given."""
        pid = validate_provider_id(provider_id)
        if api_key_env is not None:
            validate_key_env(api_key_env)
        if api_key is not None and (not isinstance(api_key, str) or not api_key.strip()):
            raise InvalidInput("must not be empty", "apiKey")
        if api_key is not None and any(ord(c) < 0x20 or ord(c) == 0x7F for c in api_key.strip()):
            raise InvalidInput("must not hold a line break or another control character", "apiKey")
        if api_key_env and api_key:
            raise InvalidInput("give either apiKeyEnv or apiKey, not both")
        now = to_iso(self._clock())
        old = self._store.providers.get(pid)
        wire_format = validate_format(format) if format is not None else (old.format if old else "openai")
        record = ProviderRecord(
            id=pid,
            base_url=validate_base_url(base_url),
            api_key_env=api_key_env,
            api_key=api_key.strip() if api_key else None,
            is_default=default,
            created_at=old.created_at if old else now,
            updated_at=now,
            format=wire_format,
        )
        return self._store.providers.upsert(record)

    def list(self) -> builtins.list[ProviderRecord]:
        return self._store.providers.list()

    def remove(self, provider_id: str) -> None:
        if not self._store.providers.delete(provider_id):
            raise NotFound(f"provider {provider_id} not found")

    def configured(self, provider_id: str) -> bool:
        """Whether `provider_id` names a provider requests can be sent to (a stored one, or
        the environment's default)."""
        if self._store.providers.get(provider_id) is not None:
            return True
        return provider_id == ENV_PROVIDER_ID and self._env_default() is not None

    def _env_default(self) -> Route | None:
        """The environment's provider (model left empty), checked once; a bad URL is the
        same InvalidInput at every request."""
        if not self._default_base_url:
            return None
        if self._env_route is None:
            base_url = validate_base_url(self._default_base_url)
            self._env_route = Route(ENV_PROVIDER_ID, base_url, self._default_api_key, "")
        return self._env_route

    def _route_for(self, record: ProviderRecord, model: str) -> Route:
        key = record.api_key or self._env_key(record)
        return Route(record.id, record.base_url, key or None, model, record.format)

    def _env_key(self, record: ProviderRecord) -> str:
        """The key `record.api_key_env` names, or "" (also when a provider stored before the
        rule names a variable the rule refuses: its requests then go without a key)."""
        if not record.api_key_env:
            return ""
        refusal = key_env_refusal(record.api_key_env)
        if refusal is not None:
            log.warning(
                "providers.key_env.refused provider=%s reason=apiKeyEnv %s; sent without a key",
                record.id,
                refusal,
            )
            return ""
        return self._env.get(record.api_key_env, "")

    def all_routes(self) -> builtins.list[tuple[Route, bool]]:
        """Every provider as a route (model left empty) and whether it is the default."""
        records = self._store.providers.list()
        routes = [(self._route_for(r, ""), r.is_default) for r in records]
        env_default = self._env_default()
        if env_default is not None and all(r.id != ENV_PROVIDER_ID for r in records):
            routes.append((env_default, not any(r.is_default for r in records)))
        return routes

    def route(self, model: str, wire_format: str = "openai") -> Route:
        """The provider and upstream model for a request's `model`, on a route that forwards
        to providers of `wire_format`. `provider/model` names the provider; any other model
        goes to the default provider, or, when that one speaks another format, to the one
        provider of `wire_format`. A provider of another format is a 400."""
        if not isinstance(model, str) or not model.strip():
            raise InvalidInput("must be a non-empty string", "model")
        route = self._named(model) or self._default_for(model, wire_format)
        if route.format != wire_format:
            raise InvalidInput(
                f"goes to provider '{route.provider_id}', which speaks the {route.format} format; this"
                f" route forwards only to providers of the {wire_format} format (name one as"
                f" `provider/model`, or add one with `memroute providers add ID --base-url URL"
                f" --format {wire_format}`)",
                "model",
            )
        return route

    def _named(self, model: str) -> Route | None:
        """The route of a `provider/model` whose provider exists, else None."""
        prefix, sep, rest = model.partition("/")
        if not (sep and rest):
            return None
        record = self._store.providers.get(prefix)
        if record is not None:
            return self._route_for(record, rest)
        env_default = self._env_default()
        if env_default is not None and prefix == ENV_PROVIDER_ID:
            return Route(env_default.provider_id, env_default.base_url, env_default.api_key, rest)
        return None

    def _default_for(self, model: str, wire_format: str) -> Route:
        records = self._store.providers.list()
        default: Route | None = None
        for record in records:
            if record.is_default:
                default = self._route_for(record, model)
        env_default = self._env_default()
        if default is None and env_default is not None:
            default = Route(env_default.provider_id, env_default.base_url, env_default.api_key, model)
        if default is not None and default.format == wire_format:
            return default
        speaking = [r for r in records if r.format == wire_format]
        if len(speaking) == 1:
            return self._route_for(speaking[0], model)
        if default is not None:
            return default  # the caller says why its format does not fit
        raise UpstreamError(
            "no upstream provider is configured: set MEMROUTE_UPSTREAM_BASE_URL or add one with "
            "`memroute providers add ID --base-url URL --default`",
            status=502,
        )
