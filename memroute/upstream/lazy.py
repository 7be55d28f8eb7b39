"""One synchronous httpx client for short calls to providers (rerank, model lists,
embeddings), shared by the service and made only when first needed."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from memroute.upstream.tls import tls_context

if TYPE_CHECKING:
    import httpx


class LazyClient:
    """One `httpx.Client` for short synchronous calls to providers (rerank, model lists),
    made on first use (most processes never need it) and closed with the service."""

    def __init__(self) -> None:
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def get(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                import httpx  # loaded by the first process that calls a provider this way

                self._client = httpx.Client(verify=tls_context())
            return self._client

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
