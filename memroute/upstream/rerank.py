"""Optional reranking of vector results by the provider's `/rerank` endpoint
(Cohere/Jina-compatible: `{model, query, documents, top_n}` → `{results: [{index,
relevance_score}]}`), with the provider's credentials. Fail-open: any failure keeps the
original order, and `rerankApplied` is true only when the call succeeded.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memroute.upstream.route import Route

if TYPE_CHECKING:
    import httpx

__all__ = ["ProviderReranker", "RerankError"]

log = logging.getLogger("memroute.rerank")

TIMEOUT_S = 5.0


class RerankError(Exception):
    pass


class ProviderReranker:
    def __init__(self, route: Route, client: httpx.Client) -> None:
        self.route = route
        self.client = client

    def __call__(self, query: str, documents: Sequence[str]) -> list[tuple[int, float]]:
        import httpx  # the client made it already

        headers = {"authorization": f"Bearer {self.route.api_key}"} if self.route.api_key else {}
        try:
            response = self.client.post(
                self.route.base_url + "/rerank",
                json={
                    "model": self.route.model,
                    "query": query,
                    "documents": list(documents),
                    "top_n": len(documents),
                },
                headers=headers,
                timeout=TIMEOUT_S,
            )
        except httpx.HTTPError as exc:
            raise RerankError(f"rerank request failed ({type(exc).__name__})") from None
        if response.status_code != 200:
            raise RerankError(f"rerank provider returned HTTP {response.status_code}")
        try:
            results = response.json()["results"]
            ranked = [(int(r["index"]), float(r["relevance_score"])) for r in results]
        except (ValueError, KeyError, TypeError):
            raise RerankError("rerank provider returned an unreadable body") from None
        return [(i, s) for i, s in ranked if 0 <= i < len(documents)]
