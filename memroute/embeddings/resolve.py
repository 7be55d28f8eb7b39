"""Which embedding source the settings select, synchronously and without I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from memroute.config import Config

DEFAULT_STATIC_MODEL = "minishlab/potion-base-8M"
DEFAULT_STATIC_DIMENSIONS = 256
#: The name shown for the bundled MiniLM (MEMORY_TRANSFORMERS_MODEL left empty).
DEFAULT_TRANSFORMERS_MODEL = "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"
DEFAULT_TRANSFORMERS_DIMENSIONS = 384
DEFAULT_HASHING_DIMENSIONS = 256

_STATIC_REASON = "static (potion-base-8M) explicitly selected"
_TRANSFORMERS_REASON = "transformers (all-MiniLM-L6-v2, ONNX) explicitly selected"


@dataclass(frozen=True, slots=True)
class SourceChoice:
    """The resolved source; `source` None means "no embedding source" and `reason` says why."""

    source: str | None
    model: str | None
    dimensions: int | None
    reason: str

    @property
    def signature(self) -> str:
        """`source:model:dimensions`, with "null" for a missing part."""
        parts = (self.source, self.model, None if self.dimensions is None else str(self.dimensions))
        return ":".join("null" if part is None else part for part in parts)


class SourceSettings(Protocol):
    """The four settings that choose the embedding source."""

    @property
    def embedding_source(self) -> str: ...
    @property
    def embedding_provider_model(self) -> str | None: ...
    @property
    def static_enabled(self) -> bool: ...
    @property
    def transformers_enabled(self) -> bool: ...


def provider_of(model: str | None) -> str | None:
    """The provider id of a "provider/model" string (text before the first "/"), else None."""
    if not model:
        return None
    provider, sep, rest = model.partition("/")
    return provider if sep and provider and rest else None


def static_choice(config: Config, reason: str) -> SourceChoice:
    """Static at the configured model. Its dimensions are known up front only for the default
    (potion-base-8M, or the 256-d model distilled in its place); otherwise the loaded model says."""
    model = config.static_model or DEFAULT_STATIC_MODEL
    dims = DEFAULT_STATIC_DIMENSIONS if model == DEFAULT_STATIC_MODEL else None
    return SourceChoice("static", model, dims, reason)


def transformers_choice(config: Config, reason: str) -> SourceChoice:
    """Transformers at the configured model: the bundled MiniLM (384) unless a folder or repo id
    is configured, whose dimensions are known only once it is loaded."""
    if not config.transformers_model:
        return SourceChoice(
            "transformers", DEFAULT_TRANSFORMERS_MODEL, DEFAULT_TRANSFORMERS_DIMENSIONS, reason
        )
    return SourceChoice("transformers", config.transformers_model, None, reason)


def hashing_choice(dimensions: int = DEFAULT_HASHING_DIMENSIONS) -> SourceChoice:
    return SourceChoice("hashing", f"hashing-{dimensions}", dimensions, "hashing explicitly selected")


def resolve_source(
    settings: SourceSettings, config: Config, provider_configured: Callable[[str], bool]
) -> SourceChoice:
    """The embedding source the settings select. `auto` picks remote only when the provider
    of `embedding_provider_model` is configured, then static, then transformers, whichever
    is enabled; `hashing` (a deterministic test embedder) is chosen only explicitly."""
    source = settings.embedding_source
    if source == "remote":
        model = settings.embedding_provider_model
        if not model:
            return SourceChoice(None, None, None, "no_key: embeddingProviderModel not configured")
        return SourceChoice("remote", model, None, f"remote provider configured: {model}")
    if source == "static":
        if not settings.static_enabled:
            return SourceChoice(None, None, None, "static disabled in settings")
        return static_choice(config, _STATIC_REASON)
    if source == "transformers":
        if not settings.transformers_enabled:
            return SourceChoice(None, None, None, "transformers disabled in settings")
        return transformers_choice(config, _TRANSFORMERS_REASON)
    if source == "hashing":
        return hashing_choice()
    if source == "auto":
        return _auto_choice(settings, config, provider_configured)
    return SourceChoice(None, None, None, "unknown embedding source")


def _auto_choice(
    settings: SourceSettings, config: Config, provider_configured: Callable[[str], bool]
) -> SourceChoice:
    model = settings.embedding_provider_model
    provider = provider_of(model)
    if model and provider and provider_configured(provider):
        return SourceChoice("remote", model, None, f"auto: provider {provider} configured")
    if settings.static_enabled:
        return static_choice(config, "auto: potion-base-8M (static) available")
    if settings.transformers_enabled:
        return transformers_choice(config, "auto: transformers (all-MiniLM-L6-v2, ONNX) available")
    return SourceChoice(None, None, None, "auto: no embedding source available")
