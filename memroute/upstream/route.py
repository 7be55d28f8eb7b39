"""Where one upstream request goes: a provider's base URL, its key and the model."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass(frozen=True, slots=True)
class Route:
    """Where one request goes, and the wire format the provider speaks (`openai` or
    `anthropic`). `api_key` is a secret: never log or return it."""

    provider_id: str
    base_url: str
    api_key: str | None
    model: str
    format: str = "openai"


@functools.lru_cache(maxsize=256)
def url_problem(url: str) -> str | None:
    """Why requests cannot be sent to `url` (a base URL), or None when they can: control
    characters or spaces anywhere, or what the URL parser refuses."""
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        return "it holds a control character or a space"
    try:
        parsed = urlsplit(url)
        parsed.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        return str(exc)
    if not parsed.hostname:
        return "it names no host"
    return None
