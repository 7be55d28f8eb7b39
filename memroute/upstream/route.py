"""Where one upstream request goes: a provider's base URL, its key and the model."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Route:
    """Where one request goes. `api_key` is a secret: never log or return it."""

    provider_id: str
    base_url: str
    api_key: str | None
    model: str
