"""`EmbeddingSources`: the query cache (true LRU with TTL, stats, keys), lazy loading once
per (source, model) under concurrency, remembered load failures, and local availability."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from embed_helpers import FakeTimer, make_config, no_routes

from memroute.embeddings import DEFAULT_TRANSFORMERS_MODEL, EmbeddingSources, SourceChoice, cache_key
from memroute.embeddings.sources import FAILURE_MEMORY_S
from memroute.errors import EmbeddingError
from memroute.models.wire import to_wire

HASH = SourceChoice("hashing", "hashing-256", 256, "hashing explicitly selected")
HASH64 = SourceChoice("hashing", "hashing-64", 64, "hashing explicitly selected")


def make(tmp_path: Path, timer: FakeTimer, **config: object) -> EmbeddingSources:
    return EmbeddingSources(make_config(tmp_path, **config), no_routes, timer=timer)


def test_cache_counts_and_returns_copies(tmp_path: Path, timer: FakeTimer) -> None:
    sources = make(tmp_path, timer)
    first = sources.embed_query(HASH, "my dog is called Biscuit")
    assert first.shape == (256,) and first.dtype == np.float32
    first[:] = 0  # the caller's copy: the cache keeps its own
    second = sources.embed_query(HASH, "my dog is called Biscuit")
    assert np.isclose(np.linalg.norm(second), 1.0)
    assert to_wire(sources.cache_stats()) == {"hits": 1, "misses": 1, "size": 1}
    sources.embed_documents(HASH, ["documents are not cached"])
    assert sources.cache_stats().size == 1


def test_cache_is_lru_a_get_refreshes(tmp_path: Path, timer: FakeTimer) -> None:
    sources = make(tmp_path, timer, embedding_cache_max=2)
    sources.embed_query(HASH, "a")
    sources.embed_query(HASH, "b")
    sources.embed_query(HASH, "a")  # hit: a is now the most recently used
    sources.embed_query(HASH, "c")  # evicts b, not a (FIFO would evict a)
    assert to_wire(sources.cache_stats()) == {"hits": 1, "misses": 3, "size": 2}
    sources.embed_query(HASH, "a")
    assert sources.cache_stats().hits == 2
    sources.embed_query(HASH, "b")
    assert sources.cache_stats().misses == 4


def test_cache_entries_expire(tmp_path: Path, timer: FakeTimer) -> None:
    sources = make(tmp_path, timer, embedding_cache_ttl_ms=1000)
    sources.embed_query(HASH, "a")
    timer.advance(0.9)
    sources.embed_query(HASH, "a")
    timer.advance(1.5)
    sources.embed_query(HASH, "a")  # expired: a miss, then stored again
    assert to_wire(sources.cache_stats()) == {"hits": 1, "misses": 2, "size": 1}


def test_cache_disabled_with_max_zero(tmp_path: Path, timer: FakeTimer) -> None:
    sources = make(tmp_path, timer, embedding_cache_max=0)
    sources.embed_query(HASH, "a")
    sources.embed_query(HASH, "a")
    assert to_wire(sources.cache_stats()) == {"hits": 0, "misses": 2, "size": 0}


def test_cache_key_has_source_model_dims_and_text_hash(tmp_path: Path, timer: FakeTimer) -> None:
    key = cache_key(HASH, "hello")
    assert key == ("hashing:hashing-256:256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
    remote = SourceChoice("remote", "acme/m", None, "x")
    assert cache_key(remote, "hello").startswith("remote:acme/m:0:")
    sources = make(tmp_path, timer)
    a = sources.embed_query(HASH, "hello")
    b = sources.embed_query(HASH64, "hello")
    assert a.shape == (256,) and b.shape == (64,)
    assert to_wire(sources.cache_stats()) == {"hits": 0, "misses": 2, "size": 2}


def test_no_source_raises_unknown_with_the_reason(tmp_path: Path, timer: FakeTimer) -> None:
    sources = make(tmp_path, timer)
    none = SourceChoice(None, None, None, "auto: no embedding source available")
    with pytest.raises(EmbeddingError) as info:
        sources.embed_query(none, "x")
    assert (info.value.reason, info.value.message) == ("unknown", "auto: no embedding source available")


def test_one_embedder_per_source_and_model_under_concurrency(
    tmp_path: Path, timer: FakeTimer, small_static_model: Path
) -> None:
    sources = make(tmp_path, timer)
    chosen = SourceChoice("static", str(small_static_model), None, "test")
    barrier = threading.Barrier(6)
    seen: list[object] = []
    errors: list[BaseException] = []

    def load() -> None:
        try:
            barrier.wait()
            seen.append(sources.embedder(chosen))
            sources.embed_documents(chosen, ["the man is eating food"] * 20)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=load) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert len(seen) == 6 and all(e is seen[0] for e in seen)
    assert sources.embedder(HASH) is sources.embedder(HASH)
    assert sources.embedder(HASH) is not sources.embedder(HASH64)


def _static_later(tmp_path: Path, timer: FakeTimer) -> tuple[Path, EmbeddingSources, SourceChoice]:
    """Sources whose static model is a folder that does not exist yet (its load fails)."""
    folder = tmp_path / "static-later"
    return (
        folder,
        make(tmp_path, timer, static_model=str(folder)),
        SourceChoice("static", str(folder), None, "test"),
    )


def test_failed_load_is_remembered_for_a_while(
    tmp_path: Path, timer: FakeTimer, small_static_model: Path
) -> None:
    folder, sources, chosen = _static_later(tmp_path, timer)
    with pytest.raises(EmbeddingError) as first:
        sources.embedder(chosen)
    assert first.value.reason == "model_load_failed"
    status = {s.source: s for s in sources.local_sources()}["static"]
    assert not status.available and status.reason == first.value.message

    shutil.copytree(small_static_model, folder)  # fixed on disk, but not retried yet
    timer.advance(FAILURE_MEMORY_S / 2)
    with pytest.raises(EmbeddingError) as again:
        sources.embedder(chosen)
    assert again.value.message == first.value.message and again.value is not first.value

    timer.advance(FAILURE_MEMORY_S)
    assert sources.embedder(chosen).dimensions == 256
    status = {s.source: s for s in sources.local_sources()}["static"]
    assert status.available and status.reason.startswith("loaded")


def test_a_model_is_ready_once_loaded_or_while_its_failure_is_remembered(
    tmp_path: Path, timer: FakeTimer, small_static_model: Path
) -> None:
    # What a chat asks before embedding: never ready means "load it in the background and
    # recall without vectors this time"; a remembered failure is reported at once instead,
    # and once forgotten the next load is a background one again, not one the chat waits for.
    folder, sources, chosen = _static_later(tmp_path, timer)
    assert sources.ready(HASH) and not sources.ready(chosen)
    with pytest.raises(EmbeddingError):
        sources.embedder(chosen)
    assert sources.ready(chosen)  # the failure answers at once
    timer.advance(FAILURE_MEMORY_S)
    assert not sources.ready(chosen)
    shutil.copytree(small_static_model, folder)
    sources.load_in_background(chosen)
    deadline = time.monotonic() + 30
    while not sources.ready(chosen) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sources.loaded(chosen) is not None and sources.loaded(chosen).dimensions == 256  # type: ignore[union-attr]


def test_local_sources_without_loading(tmp_path: Path, timer: FakeTimer) -> None:
    sources = make(tmp_path, timer)
    rows = sources.local_sources()
    assert [r.source for r in rows] == ["transformers", "static"]
    transformers, static = rows
    assert to_wire(transformers) == {
        "source": "transformers",
        "model": DEFAULT_TRANSFORMERS_MODEL,
        "dimensions": 384,
        "available": True,
        "reason": "bundled all-MiniLM-L6-v2 (int8 ONNX)",
    }
    assert static.model == "minishlab/potion-base-8M" and static.dimensions == 256
    assert static.available and "built from the bundled MiniLM" in static.reason
    assert not (tmp_path / "embeddings").exists()  # nothing was downloaded or built


def test_local_sources_for_missing_folders(tmp_path: Path, timer: FakeTimer) -> None:
    sources = make(
        tmp_path,
        timer,
        static_model=str(tmp_path / "no-static"),
        transformers_model=str(tmp_path / "no-onnx"),
    )
    transformers, static = sources.local_sources()
    assert (transformers.available, transformers.dimensions, transformers.reason) == (
        False,
        None,
        "no such folder",
    )
    assert (static.available, static.dimensions, static.reason) == (False, None, "no such folder")
    repo = make(tmp_path, timer, transformers_model="org/some-onnx-model")
    assert "Hugging Face Hub" in repo.local_sources()[0].reason


def test_close_releases_the_client(tmp_path: Path, timer: FakeTimer) -> None:
    sources = make(tmp_path, timer)
    sources.embedder(HASH)
    sources.close()
    with pytest.raises(EmbeddingError):
        sources.embedder(SourceChoice("remote", "acme/m", None, "x"))
    sources.close()  # twice is fine
