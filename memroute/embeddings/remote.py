"""The `remote` source: an OpenAI-compatible provider's `POST {base_url}/embeddings`.

The route (base URL and key) is looked up on every call, so a key added or changed
in the provider registry applies at once. The key is a secret: it goes into the
Authorization header and nowhere else (every message is sanitised against it).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memroute import baton
from memroute.embeddings.base import FloatMatrix, empty_matrix, is_blank, l2_normalize
from memroute.errors import EmbeddingError, MemrouteError
from memroute.masking import scrub

if TYPE_CHECKING:
    import httpx

    from memroute.upstream.route import Route

SOURCE = "remote"


def _error(message: str, reason: str, secrets: Sequence[str | None] = ()) -> EmbeddingError:
    return EmbeddingError(scrub(message, secrets), reason=reason, source=SOURCE)


def _upstream_detail(response: httpx.Response) -> str:
    """A short hint from an error body (`error.message` or `message`), if there is one."""
    try:
        body = response.json()
    except ValueError:
        return ""
    detail: Any = None
    if isinstance(body, dict):
        err = body.get("error")
        detail = err.get("message") if isinstance(err, dict) else err
        detail = detail or body.get("message") or body.get("detail")
    return f": {str(detail)[:160]}" if isinstance(detail, str | int | float) and str(detail) else ""


def _json_or_error(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise ValueError("the response is not JSON") from None


def _vectors(body: Any, count: int) -> list[list[float]]:
    """The `count` embeddings of a response body in input order, or ValueError saying what is wrong."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        raise ValueError("the response has no `data` list")
    data = body["data"]
    if len(data) != count:
        raise ValueError(f"the response has {len(data)} embeddings for {count} inputs")
    ordered: list[list[float] | None] = [None] * count
    for position, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("embedding"), list):
            raise ValueError(f"data[{position}].embedding is not an array")
        index = item.get("index", position)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise ValueError(f"data[{position}].index is not a valid position")
        if ordered[index] is not None:
            raise ValueError(f"two embeddings for index {index}")
        vector = item["embedding"]
        if not vector or not all(
            isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in vector
        ):
            raise ValueError(f"data[{position}].embedding is not an array of numbers")
        ordered[index] = vector
    lengths = {len(v) for v in ordered if v is not None}
    if len(lengths) != 1:
        raise ValueError("the embeddings differ in length")
    return [v for v in ordered if v is not None]


class RemoteEmbedder:
    """Embeddings from a provider; `dimensions` is learned from the first vector."""

    source = SOURCE

    def __init__(
        self,
        model: str,
        route_for: Callable[[str], Route],
        client: httpx.Client,
        *,
        timeout_s: float = 10.0,
    ) -> None:
        import httpx  # `client` is one: loaded already

        self.model = model
        self._route_for = route_for
        self._client = client
        self._timeout = httpx.Timeout(timeout_s)
        self._dim: int | None = None
        self._lock = threading.Lock()

    @property
    def dimensions(self) -> int | None:
        return self._dim

    def _route(self) -> Route:
        try:
            return self._route_for(self.model)
        except MemrouteError as exc:
            raise _error(
                f"no provider is configured for the embedding model {self.model}: {exc.message}", "no_key"
            ) from None

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return empty_matrix(self._dim)
        wanted = [i for i, text in enumerate(texts) if not is_blank(text)]
        if not wanted:
            return np.zeros((len(texts), self._dim or 0), dtype=np.float32)
        route = self._route()
        with baton.outside():  # the provider's answer is waited for outside Python
            vectors = self._post(route, [texts[i] for i in wanted])
        dim = vectors.shape[1]
        with self._lock:
            if self._dim is None:
                self._dim = dim
            elif self._dim != dim:
                raise _error(
                    f"embedding provider {route.provider_id} returned {dim}-dimensional vectors for "
                    f"{self.model}, but earlier ones had {self._dim}",
                    "request_failed",
                )
        out = np.zeros((len(texts), dim), dtype=np.float32)
        out[wanted] = vectors
        return out

    def _post(self, route: Route, inputs: list[str]) -> FloatMatrix:
        import httpx  # the client made it already

        secrets = (route.api_key,)
        provider = route.provider_id
        url = route.base_url.rstrip("/") + "/embeddings"
        headers = {"Authorization": f"Bearer {route.api_key}"} if route.api_key else {}
        try:
            response = self._client.post(
                url, json={"model": route.model, "input": inputs}, headers=headers, timeout=self._timeout
            )
        except httpx.TimeoutException:
            raise _error(
                f"embedding provider {provider} did not answer within {self._timeout.read or 0:g} s",
                "timeout",
                secrets,
            ) from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise _error(
                f"embedding provider {provider} could not be reached: {type(exc).__name__}: {exc}",
                "request_failed",
                secrets,
            ) from None
        status = response.status_code
        if status in (401, 403):
            hint = "" if route.api_key else " (no API key is configured for it)"
            raise _error(
                f"embedding provider {provider} returned HTTP {status}{hint}{_upstream_detail(response)}",
                "no_key",
                secrets,
            )
        if status == 429:
            raise _error(
                f"embedding provider {provider} is rate limiting (HTTP 429){_upstream_detail(response)}",
                "rate_limited",
                secrets,
            )
        if not 200 <= status < 300:
            raise _error(
                f"embedding provider {provider} returned HTTP {status}{_upstream_detail(response)}",
                "request_failed",
                secrets,
            )
        try:
            rows = _vectors(_json_or_error(response), len(inputs))
        except ValueError as exc:  # including a body that is not JSON
            raise _error(
                f"embedding provider {provider} sent an unusable embeddings response: {exc}",
                "request_failed",
                secrets,
            ) from None
        return l2_normalize(np.asarray(rows, dtype=np.float32))
