"""Semantic memory end to end through the library API: the sqlite-vec tier, its
lifecycle (signature, reset, re-index, lazy backfill), per-key isolation, filters,
int8 quantisation and the degradation chain. Real SQLite files, the real sqlite-vec
extension; the hashing embedder (fast, deterministic) unless a case is about a model.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from memories import NO_MODEL, open_memory
from servers import wait_until
from storage import open_parts, rows, scalar

from memroute import Memory
from memroute.config import Config
from memroute.embeddings import SourceChoice
from memroute.models.records import MemoryFilter
from memroute.models.results import ReindexReport
from memroute.models.wire import to_wire
from memroute.service.build import Parts
from memroute.vectors import VectorHit

TOPICS = [
    "prefers TypeScript for new web projects",
    "has a dog named Biscuit who loves the beach",
    "usually deploys the billing service on Tuesdays",
    "is allergic to peanuts and shellfish",
    "decided to use Postgres for the invoicing database",
    "plays chess online every evening",
    "lives in Lisbon near the river",
    "runs the on-call rotation for the Berlin office",
]


def _open(path: Path, clock: Any, **env: str) -> Memory:
    config = Config.for_path(path, environ=env)
    return open_memory(config=config, clock=clock)


def _open_parts(path: Path, clock: Any, *, workers: bool = False, **env: str) -> tuple[Memory, Parts]:
    """A Memory and its parts, for the cases that search the sqlite-vec index directly."""
    return open_parts(Config.for_path(path, environ=env), clock, start_workers=workers)


@pytest.fixture
def vparts(db_path: Path, clock: Any) -> Iterator[tuple[Memory, Parts]]:
    memory, parts = _open_parts(db_path, clock)
    memory.update_settings(enabled=True, embedding_source="hashing")
    yield memory, parts
    memory.close()


@pytest.fixture
def vmem(vparts: tuple[Memory, Parts]) -> Memory:
    return vparts[0]


def _vec_rows(mem: Memory) -> int:
    return mem.engine_status().vector_store.row_count


def _waiting(mem: Memory) -> int:
    """Memories waiting for a vector."""
    return mem.engine_status().vector_store.needs_reindex


def _search(parts: Parts, choice: SourceChoice, query: str, flt: MemoryFilter, k: int) -> list[VectorHit]:
    """What the search step does for sqlite-vec: embed the query, catch up, search."""
    vector = parts.sources.embed_query(choice, query)
    parts.index.catch_up(choice, int(vector.shape[0]), flt.api_key_id)
    return parts.index.search(vector, flt, k)


def _ids(items: list[Any]) -> list[str]:
    return [i.memory.id for i in items]


def test_semantic_retrieval_answers_from_the_vector_tier(vmem: Memory) -> None:
    added = {t: vmem.add("alice", t) for t in TOPICS}
    report = vmem.reindex(wait=True)
    assert report.started and report.processed == len(TOPICS) and report.pending == 0
    assert _vec_rows(vmem) == len(TOPICS)
    # small chunks, and the partition column of vec0's chunk table indexed (see store/vectors.py)
    sql = scalar(vmem, "SELECT sql FROM sqlite_master WHERE name = 'vec_memories'")
    assert sql is not None and "api_key_id TEXT partition key" in sql and "chunk_size=16" in sql
    index = rows(
        vmem, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'vec_memories_chunks_partition'"
    )
    assert index == [(1,)]
    items = vmem.retrieve("alice", "what is my dog called, the one who loves the beach", strategy="semantic")
    assert items[0].memory.id == added["has a dog named Biscuit who loves the beach"].id
    assert items[0].tier == "vector" and items[0].vec_score is not None and 0 < items[0].vec_score <= 1
    preview = vmem.retrieve_preview("alice", "Biscuit beach dog", strategy="hybrid")
    assert preview.items[0].tier == "hybrid-rrf"
    assert preview.resolution.embedding_source == "hashing"
    assert preview.resolution.vector_store == "sqlite-vec"
    assert preview.resolution.fallback_reason is None


def test_a_memory_added_a_moment_ago_is_found_before_the_worker_ran(vmem: Memory) -> None:
    # lazy backfill: the searching key's pending memories are embedded before the search
    first = vmem.add("alice", "plays chess online every evening")
    assert _waiting(vmem) == 1
    items = vmem.retrieve("alice", "chess evening", strategy="semantic")
    assert _ids(items) == [first.id] and items[0].tier == "vector"
    assert _waiting(vmem) == 0


def test_updates_re_embed_and_deletes_remove_the_vector(vmem: Memory) -> None:
    m = vmem.add("alice", "prefers tea in the morning")
    other = vmem.add("alice", "lives in Lisbon near the river")
    vmem.reindex(wait=True)
    vmem.update(m.id, content="prefers espresso with oat milk")
    assert _waiting(vmem) == 1
    items = vmem.retrieve("alice", "espresso oat milk", strategy="semantic", limit=1)
    assert _ids(items) == [m.id] and items[0].memory.content == "prefers espresso with oat milk"
    assert vmem.delete(m.id)
    assert _vec_rows(vmem) == 1
    assert _ids(vmem.retrieve("alice", "espresso oat milk", strategy="semantic")) == [other.id]
    assert vmem.history(m.id)[-1].event == "DELETE"  # the text is kept in history


def test_each_key_gets_its_own_nearest_neighbours_and_never_another_keys(
    vparts: tuple[Memory, Parts],
) -> None:
    # Two keys with 5,000 memories each, on the same topics: a per-key k-nearest search
    # returns k results of that key only (REF §17.8: a global k starved small keys).
    vmem, parts = vparts
    rng = random.Random(7)
    with vmem.transaction():
        for owner in ("key-a", "key-b"):
            for i in range(5000):
                vmem.add(owner, f"{rng.choice(TOPICS)} (note {owner} {i})")
    assert vmem.reindex(wait=True).pending == 0
    assert _vec_rows(vmem) == 10_000
    for query in ("dog on the beach", "Postgres invoicing database", "on-call rotation Berlin"):
        for owner in ("key-a", "key-b"):
            items = vmem.retrieve(owner, query, strategy="semantic", max_tokens=16000, limit=20)
            assert len(items) == 20
            assert {i.memory.api_key_id for i in items} == {owner}
            choice = parts.semantic.source(vmem.settings())
            hits = _search(parts, choice, query, vmem._filter(owner, "apiKey", None, None), 100)
            assert len(hits) == 100
            assert {vmem.get(h.memory_id).api_key_id for h in hits} == {owner}  # type: ignore[union-attr]


def test_expired_and_out_of_retention_memories_never_come_back(vmem: Memory, clock: Any) -> None:
    old = vmem.add("alice", "has a dog named Biscuit who loves the beach")
    clock.advance(days=40)  # beyond the 30-day retention
    expiring = vmem.add(
        "alice", "has a dog named Rex who loves the park", expires_at="2026-07-11T13:00:00.000Z"
    )
    fresh = vmem.add("alice", "has a cat named Miso who loves the sofa")
    vmem.reindex(wait=True)
    assert set(_ids(vmem.retrieve("alice", "dog", strategy="semantic"))) == {expiring.id, fresh.id}
    clock.advance(days=1)  # now past expiry
    for strategy in ("semantic", "hybrid"):
        found = _ids(vmem.retrieve("alice", "dog who loves", strategy=strategy))
        assert old.id not in found and expiring.id not in found and fresh.id in found


def test_session_scope_applies_to_the_vector_tier(vmem: Memory) -> None:
    mine = vmem.add("alice", "plays chess online every evening", session_id="s1")
    vmem.add("alice", "plays chess in the park on sundays", session_id="s2")
    vmem.reindex(wait=True)
    items = vmem.retrieve("alice", "chess", strategy="semantic", scope="session", session_id="s1")
    assert _ids(items) == [mine.id]


def test_min_score_drops_unrelated_neighbours(db_path: Path, clock: Any) -> None:
    mem = _open(db_path, clock, MEMORY_MIN_SCORE="0.3")
    try:
        mem.update_settings(enabled=True, embedding_source="hashing")
        wanted = mem.add("alice", "plays chess online every evening")
        mem.add("alice", "is allergic to peanuts and shellfish")
        mem.reindex(wait=True)
        assert _ids(mem.retrieve("alice", "chess online every evening", strategy="semantic")) == [wanted.id]
    finally:
        mem.close()


def test_changing_the_embedding_source_resets_the_table_and_reindexes_to_completion(
    vparts: tuple[Memory, Parts],
) -> None:
    vmem, parts = vparts
    for topic in TOPICS:
        vmem.add("alice", topic)
    vmem.reindex(wait=True)
    before = parts.store.vectors.meta()
    assert before.signature == "hashing:hashing-256:256" and before.active_dim == 256
    vmem.update_settings(embedding_source="transformers", transformers_enabled=True)
    report = vmem.reindex(wait=True)  # the first vector of the new source resets the table
    after = parts.store.vectors.meta()
    assert (
        after.active_dim == 384
        and after.signature is not None
        and after.signature.startswith("transformers:")
    )
    assert report.pending == 0 and _vec_rows(vmem) == len(TOPICS)
    items = vmem.retrieve("alice", "What's my pup called?", strategy="semantic", limit=1)
    assert items[0].memory.content == "has a dog named Biscuit who loves the beach"
    assert vmem.engine_status().embedding.source == "transformers"


def test_int8_keeps_recall_and_shrinks_the_vectors(tmp_path: Path, clock: Any) -> None:
    rng = random.Random(11)
    words = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
        "mike",
        "nova",
    ]
    texts = [" ".join(rng.sample(words, 4)) + f" {rng.choice(TOPICS)}" for _ in range(1500)]
    queries = [" ".join(rng.sample(words, 3)) for _ in range(30)]
    results = {}
    for mode in ("none", "int8"):
        mem, parts = _open_parts(tmp_path / f"{mode}.db", clock, MEMORY_VEC_QUANTIZATION=mode)
        try:
            mem.update_settings(enabled=True, embedding_source="hashing")
            keys = {}
            with mem.transaction():
                for i, text in enumerate(texts):
                    keys[mem.add("alice", text, key=f"t:{i}").id] = i
            mem.reindex(wait=True)
            flt = mem._filter("alice", "apiKey", None, None)
            choice = parts.semantic.source(mem.settings())
            results[mode] = [[keys[h.memory_id] for h in _search(parts, choice, q, flt, 20)] for q in queries]
            results[mode + "_bytes"] = scalar(
                mem, "SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'vec_memories%'"
            )
            assert parts.store.vectors.meta().quantization == mode
        finally:
            mem.close()
    overlap = [len(set(a) & set(b)) / 20 for a, b in zip(results["none"], results["int8"], strict=True)]
    assert sum(overlap) / len(overlap) >= 0.95
    assert results["none_bytes"] >= 3 * results["int8_bytes"]


def test_without_the_extension_retrieval_degrades_to_fts_and_says_why(db_path: Path, clock: Any) -> None:
    mem = _open(db_path, clock, VECTOR_STORE_DISABLE_VEC="true")
    try:
        mem.update_settings(enabled=True, embedding_source="hashing")
        m = mem.add("alice", "plays chess online every evening")
        preview = mem.retrieve_preview("alice", "chess", strategy="semantic")
        assert _ids(preview.items) == [m.id] and preview.items[0].tier == "fts5"
        assert "sqlite-vec not available" in (preview.resolution.fallback_reason or "")
        status = mem.engine_status()
        assert status.vector_store.available is False and status.vector_store.backend == "none"
        assert mem.reindex(wait=True).started is False
    finally:
        mem.close()


def test_no_embedding_source_means_keyword_search_with_the_reason(vmem: Memory) -> None:
    vmem.update_settings(embedding_source="auto", **NO_MODEL)  # nothing enabled, no remote provider
    m = vmem.add("alice", "plays chess online every evening")
    preview = vmem.retrieve_preview("alice", "chess", strategy="hybrid")
    assert preview.items[0].memory.id == m.id and preview.items[0].tier == "fts5"
    assert "no embedding source" in (preview.resolution.fallback_reason or "")
    assert vmem.engine_status().embedding.available is False


def test_a_deleted_memorys_vector_left_by_another_process_is_cleaned_up(db_path: Path, clock: Any) -> None:
    mem = _open(db_path, clock)
    mem.update_settings(enabled=True, embedding_source="hashing")
    m = mem.add("alice", "plays chess online every evening")
    mem.reindex(wait=True)
    mem.close()
    plain = _open(db_path, clock, VECTOR_STORE_DISABLE_VEC="true")  # e.g. a CLI without the extension
    assert plain.delete(m.id)
    plain.close()
    again = open_memory(
        config=Config.for_path(db_path), clock=clock, workers=True
    )  # workers on: start cleans up
    try:
        assert _vec_rows(again) == 0
    finally:
        again.close()


class RerankServer:
    """A Cohere/Jina-style `/v1/rerank` that reverses the documents' order (or fails)."""

    def __init__(self) -> None:
        self.status = 200
        self.calls: list[dict[str, Any]] = []

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def rerank(request: Request) -> JSONResponse:
            body = await request.json()
            self.calls.append({"body": body, "authorization": request.headers.get("authorization")})
            if self.status != 200:
                return JSONResponse({"error": "down"}, status_code=self.status)
            count = len(body["documents"])
            results = [
                {"index": i, "relevance_score": 1.0 - r / count} for r, i in enumerate(reversed(range(count)))
            ]
            return JSONResponse({"results": results})

        return Starlette(routes=[Route("/v1/rerank", rerank, methods=["POST"])])


def test_rerank_reorders_vector_results_and_fails_open(vmem: Memory) -> None:
    from servers import LiveServer

    server = RerankServer()
    with LiveServer(server.app()) as live:
        vmem.providers.add("rr", base_url=live.url + "/v1", api_key="sk-rerank-secret")
        for topic in TOPICS[:4]:
            vmem.add("alice", topic)
        vmem.reindex(wait=True)
        plain = vmem.retrieve_preview("alice", "dog beach", strategy="semantic")
        assert plain.resolution.rerank_applied is False
        vmem.update_settings(rerank_enabled=True, rerank_provider_model="rr/rerank-1")
        reranked = vmem.retrieve_preview("alice", "dog beach", strategy="semantic")
        assert reranked.resolution.rerank_applied is True
        assert _ids(reranked.items) == list(reversed(_ids(plain.items)))
        call = server.calls[-1]
        assert call["authorization"] == "Bearer sk-rerank-secret"
        assert call["body"]["model"] == "rerank-1" and call["body"]["query"] == "dog beach"
        assert vmem.engine_status().rerank.available is True
        server.status = 500
        failed = vmem.retrieve_preview("alice", "dog beach", strategy="semantic")
        assert failed.resolution.rerank_applied is False
        assert _ids(failed.items) == _ids(plain.items)
        assert "rerank failed" in (failed.resolution.fallback_reason or "")
        assert "sk-rerank-secret" not in (failed.resolution.fallback_reason or "")
    vmem.update_settings(rerank_provider_model="nowhere/rerank-1")
    status = vmem.engine_status().rerank
    assert status.available is False and "not configured" in status.reason


def test_only_text_changes_queue_a_re_embedding_and_a_ready_table_is_left_alone(
    vparts: tuple[Memory, Parts],
) -> None:
    vmem, parts = vparts
    m = vmem.add("alice", "plays chess online every evening")
    vmem.reindex(wait=True)
    ready = parts.store.vectors.meta()
    vmem.update(m.id, metadata={"source": "api"}, type="episodic")
    assert _waiting(vmem) == 0  # metadata and type do not change the vector
    vmem.reindex(wait=True)
    assert parts.store.vectors.meta() == ready  # same signature: no reset, same reset time


def test_without_a_source_reindex_leaves_the_queue_untouched(vmem: Memory) -> None:
    vmem.update_settings(embedding_source="static", static_enabled=False)
    vmem.add("alice", "plays chess online every evening")
    vmem.add("alice", "lives in Lisbon near the river")
    report = vmem.reindex(wait=True)
    assert report == ReindexReport(
        started=False,
        pending=2,
        processed=0,
        errors=0,
        reason="static disabled in settings",
        qdrant=None,  # Qdrant is off
    )
    assert _vec_rows(vmem) == 0


def test_keys_are_searched_in_memory_with_the_same_results_and_never_stale(db_path: Path, clock: Any) -> None:
    # A key with many vectors gets an in-memory copy (numpy); it is used only while no
    # process has changed the key's vectors since it was read.
    mem, parts = open_parts(Config.for_path(db_path), clock, start_workers=True)  # the copy is built
    other = _open(db_path, clock)  # a second process on the same file
    try:
        mem.update_settings(enabled=True, embedding_source="hashing")
        rng = random.Random(3)
        with mem.transaction():
            for i in range(1500):
                mem.add("big", f"{rng.choice(TOPICS)} ({i})")
        mem.add("small", "plays chess online every evening")
        mem.reindex(wait=True)
        index, choice = parts.index, parts.semantic.source(mem.settings())
        flt = mem._filter("big", "apiKey", None, None)
        queries = ["dog on the beach", "Postgres invoicing", "chess evening", "Lisbon river"]

        def direct(query: str) -> list[tuple[str, float]]:
            vector = parts.sources.embed_query(choice, query)
            return [(h.memory_id, 1 - h.distance) for h in parts.store.vectors.knn(vector.tobytes(), flt, 50)]

        def searched(query: str) -> list[str]:
            return [h.memory_id for h in _search(parts, choice, query, flt, 50)]

        def same_ranking(query: str) -> None:
            # the same scores; ids equal except for the order within exact ties
            expected = direct(query)
            got = [(h.memory_id, h.score) for h in _search(parts, choice, query, flt, 50)]
            assert [round(s, 4) for _, s in got] == [round(s, 4) for _, s in expected]
            last = expected[-1][1]
            assert {i for i, s in got if s > last + 1e-4} == {i for i, s in expected if s > last + 1e-4}

        index.key_cache.refresh("big")
        index.key_cache.refresh("small")
        index.key_cache.refresh("nobody")  # a key without vectors gets no copy
        assert index.key_cache.stats()["keys"] == 2
        generation = parts.store.vectors.generation("big")
        assert index.key_cache.get("big", generation) is not None
        for query in queries:
            same_ranking(query)

        target = mem.add("big", "has a parrot named Kiwi who sings opera")
        other.update(target.id, content="has a parrot named Kiwi who whistles jazz")
        other.reindex(wait=True)  # the other process re-embeds: the copy is now stale
        assert parts.store.vectors.generation("big") > generation
        assert searched("parrot Kiwi whistles jazz")[0] == target.id  # answered by sqlite-vec
        current = parts.store.vectors.generation("big")
        deadline = time.monotonic() + 10  # that search asked the background thread for a new copy
        while index.key_cache.get("big", current) is None:
            assert time.monotonic() < deadline, "the copy was not rebuilt in the background"
            time.sleep(0.02)
        assert searched("parrot Kiwi whistles jazz")[0] == target.id  # and by the fresh copy
        assert other.delete(target.id)
        assert target.id not in searched("parrot Kiwi whistles jazz")
    finally:
        other.close()
        mem.close()


def test_a_key_searched_once_in_a_while_is_not_copied_a_busy_key_is(db_path: Path, clock: Any) -> None:
    # Loading a key's vectors for one search costs more than it saves; a key searched
    # three times within 30 s (a conversation) gets its copy in the background.
    mem, parts = _open_parts(db_path, clock, workers=True)
    try:
        mem.update_settings(enabled=True, embedding_source="hashing")
        for i in range(60):
            mem.add("k", f"{TOPICS[i % len(TOPICS)]} ({i})")
        mem.reindex(wait=True)
        choice = parts.semantic.source(mem.settings())
        flt = mem._filter("k", "apiKey", None, None)
        for query in ("dog on the beach", "Postgres invoicing"):
            assert _search(parts, choice, query, flt, 5)  # answered by sqlite-vec
        time.sleep(0.3)  # the background thread was not asked for a copy
        assert parts.index.key_cache.stats()["keys"] == 0
        assert _search(parts, choice, "chess evening", flt, 5)  # the third search in 30 s
        wait_until(lambda: parts.index.key_cache.stats()["keys"] == 1, timeout=10)
        copy = parts.index.key_cache.get("k", parts.store.vectors.generation("k"))
        assert copy is not None and copy.matrix.shape[0] == 60
    finally:
        mem.close()


def test_vectors_this_process_stores_join_the_copy_without_a_rebuild(db_path: Path, clock: Any) -> None:
    # A key that learns a memory per chat keeps its in-memory copy: what this process
    # embeds (new memories, an edit re-embedded) is taken into the copy in place, and
    # searches of the copy rank exactly as sqlite-vec does. No background thread runs
    # here, so nothing else could have rebuilt the copy.
    mem, parts = _open_parts(db_path, clock)
    try:
        mem.update_settings(enabled=True, embedding_source="hashing")
        for i in range(40):
            mem.add("k", f"{TOPICS[i % len(TOPICS)]} ({i})")
        mem.reindex(wait=True)
        index, choice = parts.index, parts.semantic.source(mem.settings())
        flt = mem._filter("k", "apiKey", None, None)
        index.key_cache.refresh("k")
        loaded_bytes = index.key_cache.stats()["bytes"]

        def current_copy() -> Any:
            return index.key_cache.get("k", parts.store.vectors.generation("k"))

        def ranked_by_copy_and_sqlite(query: str) -> None:
            vector = parts.sources.embed_query(choice, query)
            parts.index.catch_up(choice, int(vector.shape[0]), "k")
            assert current_copy() is not None  # answered from memory
            got = [(h.memory_id, round(h.score, 4)) for h in index.search(vector, flt, 10)]
            direct = parts.store.vectors.knn(vector.tobytes(), flt, 10)
            assert [s for _, s in got] == [round(1 - h.distance, 4) for h in direct]
            assert got[0][0] == direct[0].memory_id

        added = [mem.add("k", f"has a parrot named Kiwi number {i} who sings opera") for i in range(30)]
        ranked_by_copy_and_sqlite("parrot Kiwi number 7 sings")  # the search embedded them first
        assert index.key_cache.stats()["bytes"] > loaded_bytes  # the copy grew in place

        mem.update(added[7].id, content="has a tortoise called Shelly who naps all day")
        ranked_by_copy_and_sqlite("tortoise Shelly naps")
        vector = parts.sources.embed_query(choice, "tortoise Shelly naps")
        assert index.search(vector, flt, 1)[0].memory_id == added[7].id
        assert current_copy().matrix.shape[0] == 70  # replaced, not appended a second time

        mem.delete(added[7].id)  # a delete is not followed in place: sqlite-vec answers
        assert current_copy() is None
        assert added[7].id not in [h.memory_id for h in index.search(vector, flt, 10)]
    finally:
        mem.close()


def test_a_key_too_big_for_the_copy_budget_is_never_loaded(db_path: Path, clock: Any) -> None:
    # 1,500 vectors of 256 floats need ~1.6 MB: over a 1 MB budget the key stays in
    # sqlite-vec, and is not read in full after every search just to be dropped.
    mem, parts = _open_parts(db_path, clock, MEMORY_VEC_CACHE_MB="1")
    try:
        mem.update_settings(enabled=True, embedding_source="hashing")
        with mem.transaction():
            for i in range(1500):
                mem.add("big", f"{TOPICS[i % len(TOPICS)]} ({i})")
        mem.reindex(wait=True)
        index = parts.index
        assert index._wants_copy("big") is False
        index.key_cache.refresh("big", parts.store.vectors.generation("big"))
        assert index.key_cache.stats() == {"keys": 0, "bytes": 0}
        flt = mem._filter("big", "apiKey", None, None)
        choice = parts.semantic.source(mem.settings())
        assert _search(parts, choice, "dog on the beach", flt, 5)  # answered by sqlite-vec
        index.key_cache.max_bytes = 4 * 1024 * 1024
        assert index._wants_copy("big") is True
    finally:
        mem.close()


class EmbeddingServer:
    """A provider's `/v1/embeddings` that answers with a scripted status or body."""

    def __init__(self) -> None:
        self.status = 200
        self.body: Any = None
        self.answers_left: int | None = None  # after this many answers, it fails with HTTP 500

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def embeddings(request: Request) -> Response:
            body = await request.json()
            if self.answers_left is not None:
                if self.answers_left == 0:
                    return JSONResponse({"error": {"message": "overloaded"}}, status_code=500)
                self.answers_left -= 1
            if self.status != 200:
                return JSONResponse({"error": {"message": "nope"}}, status_code=self.status)
            if self.body is not None:
                return Response(self.body, media_type="application/json")
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [{"index": i, "embedding": [1.0, float(len(t) % 7), 0.5]} for i, t in enumerate(texts)]
            return JSONResponse({"data": data})

        return Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"])])


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [(401, None, "HTTP 401"), (429, None, "HTTP 429"), (500, None, "HTTP 500"), (200, "{not json", "")],
)
def test_a_failing_remote_embedding_provider_degrades_to_keyword_search(
    vparts: tuple[Memory, Parts], status: int, body: str | None, reason: str
) -> None:
    from servers import LiveServer

    vmem, parts = vparts
    server = EmbeddingServer()
    with LiveServer(server.app()) as live:
        vmem.providers.add("emb", base_url=live.url + "/v1", api_key="sk-embedding-secret")
        vmem.update_settings(embedding_source="remote", embedding_provider_model="emb/text-embedder")
        m = vmem.add("alice", "plays chess online every evening")
        assert vmem.reindex(wait=True).processed == 1  # the provider works: dimension 3 learned
        assert parts.store.vectors.meta().active_dim == 3
        server.status, server.body = status, body
        parts.sources.clear_cache()
        preview = vmem.retrieve_preview("alice", "chess evening", strategy="hybrid")
        assert [i.memory.id for i in preview.items] == [m.id] and preview.items[0].tier == "fts5"
        assert "degraded to FTS5" in (preview.resolution.fallback_reason or "")
        vmem.add("alice", "lives in Lisbon near the river")
        report = vmem.reindex(wait=True)
        assert report.errors == 1 and report.pending == 1
        status_now = vmem.engine_status().embedding
        assert "last error" in status_now.reason and reason in status_now.reason
        assert "sk-embedding-secret" not in str(to_wire(vmem.engine_status())) + str(report)


def test_a_provider_failing_mid_re_index_keeps_and_counts_what_it_embedded_before(vmem: Memory) -> None:
    # A re-index sends the provider 64 texts a call (after one probe that teaches it the
    # vectors' size). It answers the first call of 100 memories, then fails: the 64
    # embedded are stored and reported as processed, the 36 left wait for the next pass,
    # which finishes them once the provider is back.
    from servers import LiveServer

    server = EmbeddingServer()
    with LiveServer(server.app()) as live:
        vmem.providers.add("emb", base_url=live.url + "/v1", api_key="sk-embedding-secret")
        vmem.update_settings(embedding_source="remote", embedding_provider_model="emb/text-embedder")
        records = ({"content": f"plays chess online every evening, game {n}"} for n in range(100))
        assert vmem.import_(records, api_key_id="alice").imported == 100
        server.answers_left = 2  # the probe, then the first 64
        report = vmem.reindex(wait=True)
        assert (report.processed, report.errors, report.pending) == (64, 36, 36)
        assert "HTTP 500" in (report.reason or "")
        assert _vec_rows(vmem) == 64
        server.answers_left = None
        again = vmem.reindex(wait=True)
        assert (again.processed, again.errors, again.pending) == (36, 0, 0)
        assert _vec_rows(vmem) == 100


def test_switching_an_embedding_source_on_starts_the_re_index_at_once(db_path: Path, clock: Any) -> None:
    # The worker also polls for settings changed by another process, here only every ten
    # minutes: what embeds the memories is the settings change waking it.
    environ = {"MEMORY_REINDEX_POLL_S": "600"}
    mem = open_memory(config=Config.for_path(db_path, environ=environ), workers=True, model=False)
    try:
        stored = [mem.add("alice", f"plays chess online every evening, game {n}") for n in range(20)]
        time.sleep(0.3)  # the worker has looked once and found no source to embed with
        assert _vec_rows(mem) == 0
        mem.update_settings(enabled=True, embedding_source="hashing")
        deadline = time.monotonic() + 30
        while _vec_rows(mem) < len(stored) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _vec_rows(mem) == len(stored), "the re-index waited for its next poll"
    finally:
        mem.close()


def test_a_stop_during_a_re_index_waits_for_one_chunk_not_the_whole_batch(db_path: Path) -> None:
    # 600 memories waiting for the bundled model (a first start on an existing database):
    # the worker takes 512 at a time, embedding and storing them 64 at a time. Closed (a
    # server's stop) once some are stored, it ends after the 64 being embedded; the rest
    # waits for the next start.
    with open_memory(db_path) as setup:
        records = ({"content": f"plays chess online every evening, game {n}"} for n in range(600))
        assert setup.import_(records, api_key_id="alice").imported == 600
    mem = open_memory(db_path, workers=True)
    try:
        deadline = time.monotonic() + 60
        while _vec_rows(mem) < 64 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        mem.close()
    with open_memory(db_path) as after:
        stored, waiting = _vec_rows(after), _waiting(after)
    assert 64 <= stored < 512 and stored % 64 == 0
    assert stored + waiting == 600


def _model_loaded(mem: Memory) -> bool:
    """Whether this memory's bundled model is loaded (what the embedding providers list says)."""
    (minilm,) = [p for p in mem.embedding_providers() if p.id == "transformers"]
    return minilm.reason.startswith("loaded: ")


def test_an_idle_server_loads_no_model_until_a_memory_needs_a_vector(db_path: Path, clock: Any) -> None:
    # The bundled model (on by default) takes ~170 MB: a server with nothing to embed and no
    # recall yet has not loaded it, and neither has one whose memories all have their vector.
    environ = {"MEMORY_REINDEX_POLL_S": "0.05"}
    with open_memory(config=Config.for_path(db_path, environ=environ), workers=True) as mem:
        time.sleep(0.5)  # ten passes of the re-index worker over an empty database
        assert not _model_loaded(mem)
        mem.add("alice", "plays chess online every evening")
        deadline = time.monotonic() + 60
        while _vec_rows(mem) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _vec_rows(mem) == 1 and _model_loaded(mem)
    with open_memory(config=Config.for_path(db_path, environ=environ), workers=True) as again:
        time.sleep(0.5)
        assert not _model_loaded(again)  # every memory has its vector: nothing to load it for
        found = again.retrieve("alice", "which board game do I play?", strategy="semantic")
        assert found[0].tier == "vector" and _model_loaded(again)
