"""A provider's model list (`GET /models`, OpenAI-compatible), for choosing an
embedding model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memroute.upstream.route import Route

if TYPE_CHECKING:
    import httpx

TIMEOUT_S = 5.0


class ModelsUnavailable(Exception):
    """The list could not be read; `kind` names what failed (for a log line)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def listed_model_ids(client: httpx.Client, route: Route) -> list[str]:
    """The ids the provider lists (none unless it answers 200 with a `data` list), with its
    own credentials. Raises ModelsUnavailable when it cannot be reached or read."""
    import httpx  # the client made it already

    headers = {"authorization": f"Bearer {route.api_key}"} if route.api_key else {}
    try:
        response = client.get(f"{route.base_url.rstrip('/')}/models", headers=headers, timeout=TIMEOUT_S)
        listed = response.json().get("data", []) if response.status_code == 200 else []
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        raise ModelsUnavailable(type(exc).__name__) from None
    items = listed if isinstance(listed, list) else []
    return [item["id"] for item in items if isinstance(item, dict) and isinstance(item.get("id"), str)]
