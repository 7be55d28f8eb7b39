"""Qdrant on the official `qdrant-client` (the `memroute[qdrant]` extra, imported here
only, when a connection is first made): `QdrantConnection` (one client and the
operations memroute needs) and `QdrantIndex` (the `VectorIndex` on one collection).

One collection per vector size, `<base>_<dimension>`, so a model with another
dimension gets a new collection instead of a stream of errors. Points
carry the memory's real type, owner, session and times, so a search applies the same
owner, session, type, expiry and retention filters as the SQL tiers (`MemoryFilter`).
Every failure is a `QdrantError` whose message never contains the API key.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from memroute import baton
from memroute.clock import parse_time
from memroute.embeddings import SourceChoice
from memroute.errors import QdrantError
from memroute.masking import scrub
from memroute.models.records import MemoryFilter, MemoryRecord
from memroute.models.status import QdrantHealth, QdrantSearchHit
from memroute.vectors import RowAdmission, Vector, VectorHit
from memroute.vectors.qdrant_settings import LOCAL_MEMORY, QdrantSettings

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

log = logging.getLogger("memroute.vectors.qdrant")

KIND = "memroute_memory"
POINT_NAMESPACE = uuid.UUID("8f3c5a53-3d0e-4d8e-9a43-6f1c3f0b7a21")
INDEXED_FIELDS = {"kind": "keyword", "apiKeyId": "keyword", "sessionId": "keyword", "type": "keyword"}
SCROLL_PAGE = 256
HEALTH_TIMEOUT_S = 2.0
INSTALL_HINT = "qdrant-client is not installed: pip install 'memroute[qdrant]'"


def client_installed() -> bool:
    try:
        import qdrant_client  # noqa: F401
    except ImportError:
        return False
    return True


def point_id(memory_id: str) -> str:
    """The memory's id when it is a UUID, else a stable UUID derived from it
    (Qdrant accepts only UUIDs and integers; imported memories may have other ids)."""
    try:
        return str(uuid.UUID(memory_id))
    except ValueError:
        return str(uuid.uuid5(POINT_NAMESPACE, memory_id))


def unix(iso: str | None) -> float | None:
    return None if iso is None else parse_time(iso).timestamp()


def payload(memory: MemoryRecord) -> dict[str, Any]:
    return {
        "kind": KIND,
        "memoryId": memory.id,
        "apiKeyId": memory.api_key_id,
        "sessionId": memory.session_id,
        "type": memory.type,
        "key": memory.key,
        "content": memory.content,
        "metadata": memory.metadata,
        "createdAtUnix": unix(memory.created_at),
        "updatedAtUnix": unix(memory.updated_at),
        "expiresAtUnix": unix(memory.expires_at),
    }


class QdrantConnection:
    """One connection (a server, or local mode for tests and demos) and the operations
    memroute needs. Thread-safe as far as qdrant-client is."""

    def __init__(self, settings: QdrantSettings, *, timeout_s: float = 5.0, client: Any = None) -> None:
        self.settings = settings
        self.timeout_s = timeout_s
        self._known: set[str] = set()  # collections checked or created through this object
        self._client = (
            client if client is not None else self._guard("connect", lambda: _connect(settings, timeout_s))
        )

    def with_settings(self, settings: QdrantSettings) -> QdrantConnection:
        """A connection object for new collection settings (name, quantisation, HNSW) on this
        one's client: the caller drops this object without closing it."""
        return QdrantConnection(settings, timeout_s=self.timeout_s, client=self._client)

    @property
    def connection(self) -> tuple[Any, ...]:
        """What the client depends on: connections equal here can share a client."""
        s = self.settings
        return (s.host, s.port, s.https, s.api_key, self.timeout_s)

    # -- errors ----------------------------------------------------------------------

    def _guard(self, what: str, call: Any) -> Any:
        # A server's answer is waited for outside Python; local mode runs Python.
        waiting = baton.outside() if self.settings.local_location is None else nullcontext()
        try:
            with waiting:
                return call()
        except QdrantError:
            raise
        except ImportError:
            raise QdrantError(INSTALL_HINT) from None
        except Exception as exc:
            self._known.clear()  # a collection may be gone (a wiped server): check again next time
            detail = scrub(str(exc), [self.settings.api_key])[:300] or type(exc).__name__
            raise QdrantError(f"Qdrant {what} failed ({type(exc).__name__}): {detail}") from None

    # -- collections -----------------------------------------------------------------

    def collection_name(self, dim: int) -> str:
        return f"{self.settings.collection}_{dim}"

    def ensure_collection(self, dim: int) -> tuple[str, bool]:
        """The collection for vectors of `dim`, and whether it was just created (cosine,
        payload indexes, quantisation, HNSW ef_construct): a new collection is empty and
        needs a back-fill. Checked once per connection object, and again after any failure."""
        name = self.collection_name(dim)
        created = False
        if name not in self._known:
            created = self._guard("collection setup", lambda: self._ensure(name, dim))
            self._known.add(name)
        return name, created

    def _ensure(self, name: str, dim: int) -> bool:
        from qdrant_client import models

        client = self._client
        if client.collection_exists(name):
            info = client.get_collection(name)
            size = _vector_size(info.config.params.vectors)
            if size is not None and size != dim:
                raise QdrantError(
                    f"collection {name} holds {size}-d vectors, not {dim}-d: delete it or rename"
                )
            if _quantization_kind(info.config.quantization_config) != self.settings.quantization:
                wanted = self._quantization(models) or models.Disabled.DISABLED
                client.update_collection(name, quantization_config=wanted)
            return False
        try:
            client.create_collection(
                name,
                vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE),
                hnsw_config=models.HnswConfigDiff(ef_construct=self.settings.hnsw_ef_construct),
                quantization_config=self._quantization(models),
            )
        except Exception:
            if not client.collection_exists(name):  # else another process created it first
                raise
        with warnings.catch_warnings():  # local mode warns that it has no use for them
            warnings.simplefilter("ignore", UserWarning)
            for field, kind in INDEXED_FIELDS.items():
                client.create_payload_index(name, field, field_schema=kind, wait=True)
        log.info("memory.qdrant.collection_created name=%s dim=%d", name, dim)
        return True

    def _quantization(self, models: Any) -> Any:
        if self.settings.quantization == "int8":
            return models.ScalarQuantization(
                scalar=models.ScalarQuantizationConfig(
                    type=models.ScalarType.INT8, quantile=0.99, always_ram=True
                )
            )
        if self.settings.quantization == "binary":
            return models.BinaryQuantization(binary=models.BinaryQuantizationConfig(always_ram=True))
        return None

    def collections(self) -> list[str]:
        """memroute's collections under the configured base name (one per dimension)."""
        base = self.settings.collection + "_"
        found = self._guard("list collections", lambda: self._client.get_collections().collections)
        return sorted(c.name for c in found if c.name.startswith(base) and c.name[len(base) :].isdigit())

    # -- points ----------------------------------------------------------------------

    def upsert(self, collection: str, items: Sequence[tuple[MemoryRecord, NDArray[np.float32]]]) -> None:
        if not items:
            return
        from qdrant_client import models

        points = [
            models.PointStruct(
                id=point_id(m.id), vector=np.asarray(v, dtype=np.float32).tolist(), payload=payload(m)
            )
            for m, v in items
        ]
        self._guard("upsert", lambda: self._client.upsert(collection, points=points, wait=True))

    def delete(self, collection: str, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        from qdrant_client import models

        selector = models.PointIdsList(points=[point_id(i) for i in memory_ids])
        self._guard("delete", lambda: self._client.delete(collection, points_selector=selector, wait=True))

    def search(
        self, collection: str, vector: NDArray[np.float32], flt: MemoryFilter, k: int
    ) -> list[VectorHit]:
        """The `k` nearest points `flt` admits; score = cosine similarity clipped to [0, 1]."""
        from qdrant_client import models

        params = None
        # Local mode searches exactly (and warns that search params have no effect).
        if self.settings.quantization != "none" and self.settings.local_location is None:
            params = models.SearchParams(quantization=models.QuantizationSearchParams(rescore=True))
        query = np.asarray(vector, dtype=np.float32).tolist()

        def run() -> Any:
            return self._client.query_points(
                collection,
                query=query,
                query_filter=_filter(models, flt),
                limit=max(1, k),
                with_payload=["memoryId"],
                search_params=params,
            ).points

        points = self._guard("search", run)
        hits = []
        for point in points:
            memory_id = (point.payload or {}).get("memoryId")
            if isinstance(memory_id, str):
                hits.append(VectorHit(memory_id, min(1.0, max(0.0, float(point.score)))))
        return hits

    def search_raw(self, collection: str, vector: NDArray[np.float32], k: int) -> list[QdrantSearchHit]:
        """Nearest points of every key with their payloads (the settings page's search test)."""
        from qdrant_client import models

        query = np.asarray(vector, dtype=np.float32).tolist()
        kind = models.Filter(must=[_match(models, "kind", KIND)])
        points = self._guard(
            "search",
            lambda: self._client.query_points(collection, query=query, query_filter=kind, limit=k).points,
        )
        return [QdrantSearchHit(id=str(p.id), score=float(p.score), payload=p.payload) for p in points]

    def _pages(self, collection: str, flt: Any, what: str) -> Iterator[list[Any]]:
        """The points `flt` admits (with their memoryId), a page at a time."""
        offset: Any = None
        while True:
            page, offset = self._guard(
                what,
                lambda o=offset: self._client.scroll(
                    collection, scroll_filter=flt, limit=SCROLL_PAGE, offset=o, with_payload=["memoryId"]
                ),
            )
            yield page
            if offset is None:
                return

    def memory_ids(self, collection: str) -> Iterator[list[str]]:
        """Every memory id with a point, a page at a time."""
        from qdrant_client import models

        kind = models.Filter(must=[_match(models, "kind", KIND)])
        for page in self._pages(collection, kind, "scroll"):
            yield [p.payload["memoryId"] for p in page if p.payload and "memoryId" in p.payload]

    def count(self, collection: str) -> int:
        return int(self._guard("count", lambda: self._client.count(collection, exact=True).count))

    def cleanup(self, collection: str, *, now: float, retention_days: int) -> list[str]:
        """Delete the points of expired memories and of memories not updated within
        `retention_days`; returns the memory ids it deleted (counted after the delete, not
        estimated before it). SQLite rows are untouched."""
        from qdrant_client import models

        cutoff = now - retention_days * 86_400
        old = models.Filter(
            must=[_match(models, "kind", KIND)],
            should=[
                models.FieldCondition(key="expiresAtUnix", range=models.Range(lte=now)),
                models.FieldCondition(key="updatedAtUnix", range=models.Range(lt=cutoff)),
            ],
        )
        doomed = [
            (str(p.id), (p.payload or {}).get("memoryId", str(p.id)))
            for page in self._pages(collection, old, "cleanup scan")
            for p in page
        ]
        for start in range(0, len(doomed), SCROLL_PAGE):
            ids: list[Any] = [point for point, _ in doomed[start : start + SCROLL_PAGE]]
            selector = models.PointIdsList(points=ids)
            self._guard(
                "cleanup", lambda s=selector: self._client.delete(collection, points_selector=s, wait=True)
            )
        return [memory_id for _, memory_id in doomed]

    # -- health ----------------------------------------------------------------------

    def health(self) -> QdrantHealth:
        """The server's `/readyz`, or a collections call in local mode."""
        started = time.perf_counter()
        try:
            if self.settings.local_location is not None:
                self._guard("health", lambda: self._client.get_collections())
            else:
                self._guard("health", self._readyz)
        except QdrantError as exc:
            return QdrantHealth(ok=False, latency_ms=_ms(started), error=exc.message)
        return QdrantHealth(ok=True, latency_ms=_ms(started))

    def _readyz(self) -> None:
        import httpx

        headers = {"api-key": self.settings.api_key} if self.settings.api_key else {}
        timeout = min(HEALTH_TIMEOUT_S, self.timeout_s)
        response = httpx.get(f"{self.settings.url}/readyz", headers=headers, timeout=timeout)
        if response.status_code >= 300:
            body = scrub(response.text, [self.settings.api_key])[:200]
            raise QdrantError(body or f"HTTP {response.status_code}")

    def close(self) -> None:
        try:
            self._client.close()
        except Exception as exc:  # closing must never fail a settings change or shutdown
            log.debug("memory.qdrant.close_failed error=%s", type(exc).__name__)


class QdrantIndex:
    """The `VectorIndex` on one collection of a connection, whose points were embedded with
    `embedding` (hybrid retrieval fuses its hits with FTS5 by RRF). A failure is reported
    to `on_failure` (the pool's circuit breaker) and raised."""

    name = "qdrant"
    fuse_with_keywords = True

    def __init__(
        self,
        connection: QdrantConnection,
        collection: str,
        embedding: SourceChoice,
        on_failure: Callable[[QdrantError], None],
    ) -> None:
        self.connection = connection
        self.collection = collection
        self.embedding = embedding
        self._on_failure = on_failure

    def search(
        self, vector: Vector, flt: MemoryFilter, k: int, admitted: RowAdmission | None = None
    ) -> list[VectorHit]:
        """Qdrant filters on its own payload (key, expiry, session), so `admitted` is not used."""
        if not vector.any():  # no known word: a zero vector has no direction, so no neighbours
            return []
        try:
            return self.connection.search(self.collection, vector, flt, k)
        except QdrantError as exc:
            self._on_failure(exc)
            raise


def _connect(settings: QdrantSettings, timeout_s: float) -> QdrantClient:
    from qdrant_client import QdrantClient

    location = settings.local_location
    if location == LOCAL_MEMORY:
        return QdrantClient(location=LOCAL_MEMORY)
    if location is not None:
        return QdrantClient(path=location)
    if settings.api_key and settings.url.startswith("http://"):
        log.warning("memory.qdrant.insecure: the API key is sent without TLS (use https)")
    with warnings.catch_warnings():  # qdrant-client's own warning says the same, on stderr
        warnings.simplefilter("ignore", UserWarning)
        return QdrantClient(
            url=settings.url,
            api_key=settings.api_key,
            timeout=max(1, math.ceil(timeout_s)),
            check_compatibility=False,  # no request at construction: an unreachable server fails on use
        )


def _match(models: Any, key: str, value: str) -> Any:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _filter(models: Any, flt: MemoryFilter) -> Any:
    """`MemoryFilter` as a Qdrant filter: owner, session, type, retention, not expired."""
    must = [_match(models, "kind", KIND)]
    if flt.api_key_id is not None:
        must.append(_match(models, "apiKeyId", flt.api_key_id))
    if flt.session_id:
        must.append(_match(models, "sessionId", flt.session_id))
    if flt.type:
        must.append(_match(models, "type", flt.type))
    if flt.updated_since:
        must.append(
            models.FieldCondition(key="updatedAtUnix", range=models.Range(gte=unix(flt.updated_since)))
        )
    # A point without an expiry has no value to compare, so only expired ones match here.
    expired = models.FieldCondition(key="expiresAtUnix", range=models.Range(lte=unix(flt.now)))
    return models.Filter(must=must, must_not=[expired])


def _vector_size(vectors: Any) -> int | None:
    size = getattr(vectors, "size", None)
    return int(size) if isinstance(size, int) else None


def _quantization_kind(config: Any) -> str:
    if config is None:
        return "none"
    if getattr(config, "scalar", None) is not None:
        return "int8"
    if getattr(config, "binary", None) is not None:
        return "binary"
    return "other"


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
