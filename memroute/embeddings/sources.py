"""`EmbeddingSources`: one loaded embedder per (source, model), created lazily, plus the
query-embedding cache (least recently used entries leave first; entries expire after a TTL).

A local model that fails to load is remembered with its error for FAILURE_MEMORY_S, so a
broken configuration costs one attempt per interval rather than one per request.
Remote failures are not remembered: they are per request and cheap to retry.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from memroute.config import Config
from memroute.embeddings import onnx_minilm, static
from memroute.embeddings.base import Embedder, FloatMatrix, static_cache_dir
from memroute.embeddings.hashing import HashingEmbedder
from memroute.embeddings.hub import looks_like_repo_id
from memroute.embeddings.remote import RemoteEmbedder
from memroute.embeddings.resolve import (
    DEFAULT_HASHING_DIMENSIONS,
    DEFAULT_STATIC_DIMENSIONS,
    DEFAULT_STATIC_MODEL,
    DEFAULT_TRANSFORMERS_DIMENSIONS,
    DEFAULT_TRANSFORMERS_MODEL,
    SourceChoice,
)
from memroute.errors import EmbeddingError
from memroute.lru import LruTtlCache
from memroute.masking import scrub
from memroute.models.status import EmbeddingCacheStats, LocalSourceStatus
from memroute.upstream.tls import tls_context

if TYPE_CHECKING:
    import httpx

    from memroute.upstream.route import Route

log = logging.getLogger("memroute.embeddings")

FAILURE_MEMORY_S = 30.0
_LOCAL = ("transformers", "static")


def cache_key(choice: SourceChoice, text: str) -> str:
    """`source:model:dims:sha256(text)` (dims 0 while unknown)."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{choice.source}:{choice.model or 'unknown'}:{choice.dimensions or 0}:{digest}"


def _copy_error(exc: EmbeddingError) -> EmbeddingError:
    return EmbeddingError(exc.message, reason=exc.reason, source=exc.source)


class EmbeddingSources:
    def __init__(
        self,
        config: Config,
        route_for: Callable[[str], Route],
        *,
        timeout_s: float = 10.0,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        """`route_for(model)`: the provider route for a remote "provider/model" (it may raise
        UpstreamError/InvalidInput). `timer` drives the cache TTL and the failure memory."""
        self.config = config
        self.cache_dir = static_cache_dir(config)
        self._route_for = route_for
        self._timeout_s = timeout_s
        self._timer = timer
        self._cache: LruTtlCache[NDArray[np.float32]] = LruTtlCache(
            config.embedding_cache_max, config.embedding_cache_ttl_ms / 1000.0, timer=timer
        )
        self._lock = threading.Lock()
        self._embedders: dict[tuple[str, str], Embedder] = {}
        self._failures: dict[tuple[str, str], tuple[float, EmbeddingError]] = {}
        self._load_locks: dict[tuple[str, str], threading.Lock] = {}
        self._loading: set[tuple[str, str]] = set()
        self._client: httpx.Client | None = None
        self._closed = False

    # -- embedders ---------------------------------------------------------------------

    def embedder(self, choice: SourceChoice) -> Embedder:
        """The embedder for `choice`, loaded on first use (once, even under concurrency)."""
        if choice.source is None:
            raise EmbeddingError(choice.reason, reason="unknown", source=None)
        key = (choice.source, choice.model or "")
        with self._lock:
            found = self._embedders.get(key)
            if found is not None:
                return found
            self._raise_remembered(key)
            load_lock = self._load_locks.setdefault(key, threading.Lock())
        with load_lock:
            with self._lock:
                found = self._embedders.get(key)
                if found is not None:
                    return found
                self._raise_remembered(key)
            try:
                made = self._create(choice)
            except EmbeddingError as exc:
                self._remember(key, exc)
                raise
            except Exception as exc:  # a bug or an unexpected library error while loading
                error = EmbeddingError(
                    scrub(
                        f"could not load {choice.source} model {choice.model}: {type(exc).__name__}: {exc}"
                    ),
                    reason="model_load_failed",
                    source=choice.source,
                )
                self._remember(key, error)
                raise error from exc
            with self._lock:
                self._embedders[key] = made
                self._failures.pop(key, None)
            return made

    def loaded(self, choice: SourceChoice) -> Embedder | None:
        """The embedder for `choice` if it is loaded already, else None (nothing is loaded)."""
        with self._lock:
            return self._embedders.get((choice.source or "", choice.model or ""))

    def ready(self, choice: SourceChoice) -> bool:
        """Whether embedding with `choice` costs no model load now: its local model is
        loaded (or failed to load within FAILURE_MEMORY_S, which `embedder` reports at
        once), or it loads nothing (hashing, a remote provider)."""
        if choice.source not in _LOCAL:
            return True
        key = (choice.source or "", choice.model or "")
        with self._lock:
            failed = self._failures.get(key)
            recent = failed is not None and self._timer() - failed[0] < FAILURE_MEMORY_S
            return key in self._embedders or recent

    def load_in_background(self, choice: SourceChoice) -> None:
        """Start loading `choice`'s model in a thread of its own (once, however often asked)."""
        key = (choice.source or "", choice.model or "")
        with self._lock:
            if key in self._embedders or key in self._loading or self._closed:
                return
            self._loading.add(key)

        def load() -> None:
            try:
                self.embedder(choice)
            except EmbeddingError as exc:
                log.warning("embedding.load.failed source=%s reason=%s", choice.source, exc.reason)
            finally:
                with self._lock:
                    self._loading.discard(key)

        threading.Thread(target=load, name="memroute-model-load", daemon=True).start()

    def _raise_remembered(self, key: tuple[str, str]) -> None:
        failed = self._failures.get(key)
        if failed is not None:
            if self._timer() - failed[0] < FAILURE_MEMORY_S:
                raise _copy_error(failed[1])
            del self._failures[key]

    def _remember(self, key: tuple[str, str], exc: EmbeddingError) -> None:
        if key[0] in _LOCAL:
            with self._lock:
                self._failures[key] = (self._timer(), exc)

    def _create(self, choice: SourceChoice) -> Embedder:
        source, model = choice.source, choice.model or ""
        if source == "hashing":
            return HashingEmbedder(choice.dimensions or _hashing_dims(model))
        if source == "transformers":
            spec = "" if model in ("", DEFAULT_TRANSFORMERS_MODEL) else model
            return onnx_minilm.load_transformers(spec, self.cache_dir)
        if source == "static":
            return static.load_static(model or DEFAULT_STATIC_MODEL, self.cache_dir)
        if source == "remote":
            if not model:
                raise EmbeddingError(
                    "no_key: embeddingProviderModel not configured", reason="no_key", source="remote"
                )
            return RemoteEmbedder(model, self._route_for, self._http(), timeout_s=self._timeout_s)
        raise EmbeddingError(f"unknown embedding source {source!r}", reason="unknown", source=source)

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._closed:
                raise EmbeddingError("the embedding sources are closed", reason="unknown", source="remote")
            if self._client is None:
                import httpx  # loaded by the first process that embeds through a provider

                self._client = httpx.Client(
                    timeout=self._timeout_s, follow_redirects=False, verify=tls_context()
                )
            return self._client

    # -- embedding ---------------------------------------------------------------------

    def embed_query(self, choice: SourceChoice, text: str) -> NDArray[np.float32]:
        """One text as a 1-D float32 unit vector (zero if it has no tokens), from the cache when
        it was embedded recently. Each call returns its own copy."""
        embedder = self.embedder(choice)
        key = cache_key(choice, text)
        hit = self._cache.get(key)
        if hit is not None:
            return hit.copy()
        vector = np.array(embedder.embed([text])[0], dtype=np.float32)
        vector.flags.writeable = False
        self._cache.set(key, vector)
        return vector.copy()

    def embed_documents(self, choice: SourceChoice, texts: Sequence[str]) -> FloatMatrix:
        """float32 (len(texts), dim), rows unit-length (zero for a text without tokens); not cached."""
        return self.embedder(choice).embed(list(texts))

    def cache_stats(self) -> EmbeddingCacheStats:
        return EmbeddingCacheStats(hits=self._cache.hits, misses=self._cache.misses, size=len(self._cache))

    def clear_cache(self) -> None:
        """Drop every cached query vector and the counters."""
        self._cache.reset()

    # -- status ------------------------------------------------------------------------

    def local_sources(self) -> list[LocalSourceStatus]:
        """The two local sources with whether they can work here, decided from installed packages
        and files on disk (no model is loaded, nothing is downloaded)."""
        return [self._transformers_status(), self._static_status()]

    def _status(
        self, source: str, model: str, dims: int | None, available: bool, reason: str
    ) -> LocalSourceStatus:
        """The row for one local source; a loaded embedder or a remembered failure overrides
        what the files say."""
        key = (source, model)
        with self._lock:
            loaded = self._embedders.get(key)
            failed = self._failures.get(key)
        if loaded is not None:
            dims, available, reason = loaded.dimensions, True, f"loaded: {loaded.model}"
        elif failed is not None:
            available, reason = False, failed[1].message
        return LocalSourceStatus(
            source=source, model=model, dimensions=dims, available=available, reason=reason
        )

    def _transformers_status(self) -> LocalSourceStatus:
        spec = self.config.transformers_model
        model = spec or DEFAULT_TRANSFORMERS_MODEL
        dims = None if spec else DEFAULT_TRANSFORMERS_DIMENSIONS
        available, reason = _transformers_files(spec, self.cache_dir)
        return self._status("transformers", model, dims, available, reason)

    def _static_status(self) -> LocalSourceStatus:
        spec = self.config.static_model or DEFAULT_STATIC_MODEL
        dims = DEFAULT_STATIC_DIMENSIONS if spec == DEFAULT_STATIC_MODEL else None
        available, reason = _static_files(spec, self.cache_dir)
        return self._status("static", spec, dims, available, reason)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
            self._embedders.clear()
        if client is not None:
            client.close()


def _hashing_dims(model: str) -> int:
    """The width in "hashing-<dim>", else the default."""
    _, _, tail = model.rpartition("-")
    return int(tail) if tail.isdigit() and int(tail) > 0 else DEFAULT_HASHING_DIMENSIONS


def _transformers_files(spec: str, cache_dir: Path) -> tuple[bool, str]:
    missing = onnx_minilm.runtime_missing()
    if missing is not None:
        return False, f"the Python package {missing!r} is not installed"
    if not spec:
        try:
            path = onnx_minilm.default_model_path()
        except EmbeddingError as exc:
            return False, exc.message
        if not path.is_file() or not onnx_minilm.DEFAULT_TOKENIZER.is_file():
            return False, "the bundled all-MiniLM-L6-v2 files are missing"
        return True, "bundled all-MiniLM-L6-v2 (int8 ONNX)"
    if onnx_minilm.locate(spec, cache_dir) is not None:
        return True, "model files present"
    if Path(spec).expanduser().exists():
        return False, "the folder needs tokenizer.json and an ONNX model"
    if looks_like_repo_id(spec):
        return True, "not downloaded yet: fetched from the Hugging Face Hub on first use (needs internet)"
    return False, "no such folder"


def _static_files(spec: str, cache_dir: Path) -> tuple[bool, str]:
    missing = static.runtime_missing()
    if missing is not None:
        return False, f"the Python package {missing!r} is not installed"
    if static.locate(spec, cache_dir) is not None:
        return True, "model files present"
    if Path(spec).expanduser().exists():
        return False, "the folder is not a Model2Vec model"
    if not looks_like_repo_id(spec):
        return False, "no such folder"
    if static.is_model_folder(static.distilled_folder(cache_dir)):
        return True, (
            "not downloaded: fetched from the Hugging Face Hub on first use, or, when the Hub is "
            "unreachable, the static model already distilled from MiniLM is used"
        )
    if onnx_minilm.runtime_missing() is None:
        return True, (
            "not downloaded: fetched from the Hugging Face Hub on first use, or, when the Hub is "
            "unreachable, built from the bundled MiniLM (~20 s, once)"
        )
    return False, "not downloaded, and onnxruntime is missing to build one locally"
