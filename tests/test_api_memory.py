"""The memory and settings management API end to end: the app under uvicorn, a real
SQLite file, httpx as the client. Nothing is mocked."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from error_shape import assert_error
from servers import JSON_LINES, management_api

pytestmark = pytest.mark.both_stores  # each test runs on SQLite and on PostgreSQL

# What searches keywords and vectors on each store, as the engine status names them.
BACKENDS = {"sqlite": ("FTS5", "sqlite-vec"), "postgresql": ("PostgreSQL full-text", "pgvector")}

MEMORY_FIELDS = {
    "id",
    "apiKeyId",
    "userId",
    "sessionId",
    "type",
    "key",
    "content",
    "metadata",
    "createdAt",
    "updatedAt",
    "expiresAt",
    "accessCount",
    "lastAccessedAt",
    "provenance",
}
SETTINGS_DEFAULTS = {
    "enabled": False,
    "maxTokens": 2000,
    "retentionDays": 30,
    "strategy": "hybrid",
    "skillsEnabled": True,
    "embeddingSource": "auto",
    "embeddingProviderModel": None,
    "transformersEnabled": True,
    "staticEnabled": False,
    "rerankEnabled": False,
    "rerankProviderModel": None,
    "vectorStore": "auto",
    "scope": "apiKey",
    "extractionEnabled": True,
    "injectionEnabled": True,
    "captureTurns": "user",
}


@pytest.fixture
def api(tmp_path: Path) -> Iterator[httpx.Client]:
    with management_api(tmp_path / "memroute.db") as client:
        yield client


def add(api: httpx.Client, content: str, key: str, **fields: Any) -> dict[str, Any]:
    response = api.post("/api/memory", json={"content": content, "key": key, **fields})
    assert response.status_code == 200, response.text
    return response.json()["memory"]  # type: ignore[no-any-return]


def iso_days_ago(days: int) -> str:
    moment = datetime.now(UTC) - timedelta(days=days)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def import_lines(api: httpx.Client, records: list[dict[str, Any]], **params: str) -> dict[str, Any]:
    body = "\n".join(json.dumps(r) for r in records)
    response = api.post("/api/memory/import", headers=JSON_LINES, content=body, params=params)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


# -- CRUD ---------------------------------------------------------------------------------


def test_create_get_update_delete_and_history(api: httpx.Client) -> None:
    created = api.post(
        "/api/memory",
        json={"content": "prefers dark mode", "key": "preference:dark-mode", "apiKeyId": "key-a"},
    )
    assert created.status_code == 200
    body = created.json()
    assert body["success"] is True
    assert str(uuid.UUID(body["id"])) == body["id"]
    memory = body["memory"]
    assert set(memory) == MEMORY_FIELDS
    assert memory["id"] == body["id"]
    assert (memory["type"], memory["sessionId"], memory["metadata"], memory["expiresAt"]) == (
        "factual",
        "",
        {},
        None,
    )

    got = api.get(f"/api/memory/{body['id']}")
    assert got.status_code == 200 and got.json() == {"memory": memory}

    changed = api.put(
        f"/api/memory/{body['id']}",
        json={
            "content": "prefers light mode",
            "type": "semantic",
            "metadata": {"source": "ui"},
            "expiresAt": "2099-01-01",
            "sessionId": "s-1",
        },
    )
    assert changed.status_code == 200, changed.text
    updated = changed.json()
    assert updated["success"] is True
    assert updated["memory"]["content"] == "prefers light mode"
    assert updated["memory"]["type"] == "semantic"
    assert updated["memory"]["metadata"] == {"source": "ui"}
    assert updated["memory"]["expiresAt"] == "2099-01-01T00:00:00.000Z"
    assert updated["memory"]["sessionId"] == "s-1"
    assert updated["memory"]["key"] == "preference:dark-mode"  # absent fields keep their value

    cleared = api.put(f"/api/memory/{body['id']}", json={"expiresAt": None})
    assert cleared.json()["memory"]["expiresAt"] is None

    assert api.delete(f"/api/memory/{body['id']}").json() == {"success": True}
    assert_error(api.get(f"/api/memory/{body['id']}"), 404)
    assert_error(api.delete(f"/api/memory/{body['id']}"), 404)

    history = api.get(f"/api/memory/{body['id']}/history")
    assert history.status_code == 200
    entries = history.json()["history"]
    assert [e["event"] for e in entries] == ["ADD", "UPDATE", "DELETE"]  # expiry-only edits: no entry
    assert entries[1]["oldContent"] == "prefers dark mode"
    assert entries[1]["newContent"] == "prefers light mode"
    assert set(entries[0]) == {
        "memoryId",
        "event",
        "oldContent",
        "newContent",
        "oldKey",
        "newKey",
        "at",
        "actor",
    }


def test_post_upserts_on_owner_and_key(api: httpx.Client) -> None:
    first = add(api, "uses vim", "tool:editor", apiKeyId="key-a")
    second = add(api, "uses helix", "tool:editor", apiKeyId="key-a", type="procedural")
    other = add(api, "uses emacs", "tool:editor", apiKeyId="key-b")
    assert second["id"] == first["id"]
    assert (second["content"], second["type"]) == ("uses helix", "procedural")
    assert other["id"] != first["id"]
    listed = api.get("/api/memory", params={"apiKeyId": "key-a"}).json()
    assert listed["total"] == 1 and listed["data"][0]["content"] == "uses helix"


@pytest.mark.one_store  # input checks, before any store is reached
@pytest.mark.parametrize(
    "body",
    [
        {"key": "k"},
        {"content": "", "key": "k"},
        {"content": "x", "key": None},
        {"content": "x", "key": "k" * 513},
        {"content": "x", "key": "k", "type": "opinion"},
        {"content": "x", "key": "k", "metadata": ["not", "an", "object"]},
        {"content": "x", "key": "k", "expiresAt": "next tuesday"},
        {"content": "x", "key": "k", "createdAt": "last tuesday"},
        {"content": "x", "key": "k", "apiKey": "typo-for-apiKeyId"},
        {"content": 5, "key": "k"},
        {"content": "   ", "key": "k"},
    ],
)
def test_post_rejects_bad_bodies_and_writes_nothing(api: httpx.Client, body: dict[str, Any]) -> None:
    assert_error(api.post("/api/memory", json=body), 400)
    assert api.get("/api/memory").json()["total"] == 0


def test_created_at_says_when_it_was_said_and_retention_counts_from_when_it_was_learned(
    api: httpx.Client,
) -> None:
    said = iso_days_ago(400)
    memory = add(api, "adopted a dog named Rex", "", type="episodic", createdAt=said, apiKeyId="key-a")
    assert memory["createdAt"] == said
    assert memory["updatedAt"] > iso_days_ago(1)  # learned now
    assert api.get(f"/api/memory/{memory['id']}").json()["memory"]["createdAt"] == said
    # Said 400 days ago, learned today: within the 30 days of retention, so it is recalled.
    preview = api.post("/api/memory/retrieve-preview", json={"query": "dog", "apiKeyId": "key-a"}).json()
    assert [item["id"] for item in preview["memories"]] == [memory["id"]]
    # Stated again under a key, a memory takes the new time.
    first = add(api, "lives in Porto", "home:city", createdAt="2025-01-10", apiKeyId="key-a")
    moved = add(api, "lives in Lisbon", "home:city", createdAt="2025-03-02", apiKeyId="key-a")
    assert moved["id"] == first["id"]
    assert api.get(f"/api/memory/{first['id']}").json()["memory"]["createdAt"] == "2025-03-02T00:00:00.000Z"


def test_a_memory_without_a_key_is_created_and_edited_like_in_the_library(api: httpx.Client) -> None:
    first = api.post("/api/memory", json={"content": "likes green tea", "apiKeyId": "key-a"}).json()["memory"]
    second = add(api, "likes black tea", "", apiKeyId="key-a")
    assert first["key"] == second["key"] == ""
    assert first["id"] != second["id"]  # without a key nothing is replaced
    edited = api.put(f"/api/memory/{first['id']}", json={"content": "likes oolong", "type": "episodic"})
    assert edited.status_code == 200, edited.text
    assert (edited.json()["memory"]["content"], edited.json()["memory"]["key"]) == ("likes oolong", "")
    keyed = api.put(f"/api/memory/{second['id']}", json={"key": "drink:tea"}).json()["memory"]
    assert keyed["key"] == "drink:tea"
    assert_error(api.put(f"/api/memory/{second['id']}", json={"key": ""}), 400)  # keys change, never vanish
    listed = api.get("/api/memory", params={"apiKeyId": "key-a"}).json()["data"]
    assert sorted((m["content"], m["key"]) for m in listed) == [
        ("likes black tea", "drink:tea"),
        ("likes oolong", ""),
    ]


def test_bad_json_bodies_are_400_without_a_stack(api: httpx.Client) -> None:
    memory = add(api, "x", "k")
    headers = {"content-type": "application/json"}
    for method, path in [
        ("POST", "/api/memory"),
        ("PUT", f"/api/memory/{memory['id']}"),
        ("POST", "/api/memory/retrieve-preview"),
        ("POST", "/api/memory/summarize"),
        ("PUT", "/api/settings/memory"),
    ]:
        assert_error(api.request(method, path, content=b'{"content": "x",', headers=headers), 400)
    assert api.get(f"/api/memory/{memory['id']}").json()["memory"] == memory


def test_memory_route_put_reference_cases(api: httpx.Client) -> None:
    """REF §14 memory-route-put: 200; extra field → 400; 404; 401; no stack trace."""
    memory = add(api, "likes tea", "preference:tea")
    ok = api.put(f"/api/memory/{memory['id']}", json={"content": "likes green tea"})
    assert ok.status_code == 200 and ok.json()["memory"]["content"] == "likes green tea"
    extra = assert_error(api.put(f"/api/memory/{memory['id']}", json={"content": "x", "colour": "red"}), 400)
    assert "colour" in extra["message"]
    assert_error(api.put(f"/api/memory/{uuid.uuid4()}", json={"content": "x"}), 404)
    unauthorized = httpx.put(f"{api.base_url}/api/memory/{memory['id']}", json={"content": "hacked"})
    assert_error(unauthorized, 401)
    assert api.get(f"/api/memory/{memory['id']}").json()["memory"]["content"] == "likes green tea"


@pytest.mark.one_store  # input checks, before any store is reached
@pytest.mark.parametrize(
    "body",
    [
        {"type": "opinion"},
        {"type": None},
        {"key": ""},
        {"key": None},
        {"content": ""},
        {"content": None},
        {"metadata": None},
        {"sessionId": None},
        {"expiresAt": "soon"},
        {"id": "other"},
    ],
)
def test_put_rejects_bad_fields_and_changes_nothing(api: httpx.Client, body: dict[str, Any]) -> None:
    memory = add(api, "likes tea", "preference:tea", metadata={"a": 1})
    assert_error(api.put(f"/api/memory/{memory['id']}", json=body), 400)
    assert api.get(f"/api/memory/{memory['id']}").json()["memory"] == memory


def test_put_to_a_key_already_in_use_is_a_conflict(api: httpx.Client) -> None:
    tea = add(api, "likes tea", "preference:tea", apiKeyId="key-a")
    add(api, "likes coffee", "preference:coffee", apiKeyId="key-a")
    add(api, "likes mate", "preference:mate", apiKeyId="key-b")
    assert assert_error(api.put(f"/api/memory/{tea['id']}", json={"key": "preference:coffee"}), 409)
    moved = api.put(f"/api/memory/{tea['id']}", json={"key": "preference:mate"})  # key-b's keys don't clash
    assert moved.status_code == 200 and moved.json()["memory"]["key"] == "preference:mate"


def test_unknown_ids_are_404(api: httpx.Client) -> None:
    missing = str(uuid.uuid4())
    assert_error(api.get(f"/api/memory/{missing}"), 404)
    assert_error(api.put(f"/api/memory/{missing}", json={"content": "x"}), 404)
    assert_error(api.delete(f"/api/memory/{missing}"), 404)
    assert assert_error(api.get(f"/api/memory/{missing}/history"), 404)["type"] == "not_found_error"


def test_get_and_list_say_where_a_memory_came_from(api: httpx.Client) -> None:
    learned = {
        "role": "user",
        "speaker": "Caroline",
        "requestId": "req_0123456789abcdef0123456789abcdef",
        "sessionId": "s1",
        "learnedAt": "2026-05-08T14:03:27.120Z",
        "sources": [
            {
                "requestId": "req_earlier",
                "sessionId": "s0",
                "role": "user",
                "learnedAt": "2026-05-01T09:00:00Z",
            },
            {"requestId": "req_0123456789abcdef0123456789abcdef", "learnedAt": "2026-05-08T14:03:27.120Z"},
        ],
    }
    chat = add(api, "Caroline goes hiking on weekends", "habit:hiking", apiKeyId="key-a", metadata=learned)
    by_hand = add(api, "prefers tea", "preference:tea", apiKeyId="key-a", metadata={"source": "manual"})
    plain = add(api, "uses Neovim", "tool:editor", apiKeyId="key-a")

    shown = api.get(f"/api/memory/{chat['id']}").json()["memory"]["provenance"]
    assert shown == {
        "origin": "chat",
        "requestId": "req_0123456789abcdef0123456789abcdef",
        "sessionId": "s1",
        "role": "user",
        "speaker": "Caroline",
        "learnedAt": "2026-05-08T14:03:27.120Z",
        "earlier": [
            {
                "requestId": "req_earlier",
                "sessionId": "s0",
                "role": "user",
                "speaker": None,
                "learnedAt": "2026-05-01T09:00:00.000Z",
            }
        ],
        "summary": "learned from request req_0123456789abcdef0123456789abcdef at 2026-05-08 14:03 UTC "
        "(Caroline, session s1); also learned from request req_earlier at 2026-05-01 09:00 UTC",
    }
    listed = {
        m["id"]: m["provenance"] for m in api.get("/api/memory", params={"apiKeyId": "key-a"}).json()["data"]
    }
    assert listed[chat["id"]] == shown
    assert listed[by_hand["id"]]["summary"] == "added by hand"
    assert listed[plain["id"]] is None  # nothing recorded, nothing shown
    assert api.get(f"/api/memory/{chat['id']}").json()["memory"]["metadata"] == learned  # stored as given

    schema = api.get("/openapi.json").json()["components"]["schemas"]
    assert "provenance" in schema["MemoryOut"]["properties"]
    assert "summary" in schema["Provenance"]["required"]


# -- list -----------------------------------------------------------------------------------


def seed_reference(api: httpx.Client) -> None:
    add(api, "TypeScript handbook is the guide", "typescript:guide", apiKeyId="key-a")
    add(api, "uses TypeScript with eslint", "typescript:tooling", apiKeyId="key-a", type="semantic")
    add(api, "prefers Python for scripts", "python:scripts", apiKeyId="key-a")
    add(api, "TypeScript everywhere", "typescript:other", apiKeyId="key-b")


def test_list_reference_example_with_q_and_offset(api: httpx.Client) -> None:
    """REF §14 memory-route.test.ts."""
    seed_reference(api)
    found = api.get(
        "/api/memory", params={"apiKeyId": "key-a", "q": "typescript", "limit": 20, "page": 1}
    ).json()
    assert sorted(m["key"] for m in found["data"]) == ["typescript:guide", "typescript:tooling"]
    assert found["total"] == 2
    assert found["stats"]["byType"] == {"factual": 1, "semantic": 1}
    assert found["stats"]["total"] == 2

    paged = api.get("/api/memory", params={"apiKeyId": "key-a", "limit": 1, "offset": 1}).json()
    assert len(paged["data"]) == 1
    assert (paged["total"], paged["page"], paged["limit"], paged["totalPages"]) == (3, 2, 1, 3)
    assert paged["data"][0]["key"] == "typescript:tooling"  # newest first: python, tooling, guide


def test_list_shape_stats_and_pages(api: httpx.Client) -> None:
    seed_reference(api)
    listed = api.get("/api/memory", params={"apiKeyId": "key-a"}).json()
    assert set(listed) == {"data", "total", "page", "limit", "totalPages", "stats"}
    assert all(set(m) == MEMORY_FIELDS for m in listed["data"])
    stats = listed["stats"]
    assert set(stats) == {"total", "byType", "tokensUsed", "hitRate", "cacheStats"}
    assert set(stats["cacheStats"]) == {"hits", "misses"}
    expected_tokens = sum(-(-len(m["content"]) // 4) for m in listed["data"])
    assert stats["tokensUsed"] == expected_tokens
    assert 0 <= stats["hitRate"] <= 1
    assert (listed["page"], listed["limit"], listed["totalPages"]) == (1, 50, 1)

    beyond = api.get("/api/memory", params={"apiKeyId": "key-a", "page": 9, "limit": 2}).json()
    assert beyond["data"] == [] and beyond["total"] == 3 and beyond["page"] == 9

    by_type = api.get("/api/memory", params={"apiKeyId": "key-a", "type": "semantic"}).json()
    assert [m["key"] for m in by_type["data"]] == ["typescript:tooling"]
    any_type = api.get("/api/memory", params={"apiKeyId": "key-a", "type": ""}).json()
    assert any_type["total"] == 3

    everything = api.get("/api/memory").json()
    assert everything["total"] == 4
    assert {m["apiKeyId"] for m in everything["data"]} == {"key-a", "key-b"}


@pytest.mark.one_store  # input checks, before any store is reached
@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 201},
        {"limit": "ten"},
        {"page": 0},
        {"page": -1},
        {"page": "1.5"},
        {"offset": -1},
        {"offset": "x"},
        {"offset": 10**15},
        {"page": 10**12},
        {"type": "opinion"},
    ],
)
def test_list_rejects_bad_paging_and_filters_with_400(api: httpx.Client, params: dict[str, Any]) -> None:
    assert_error(api.get("/api/memory", params=params), 400)


# -- isolation, preview, health, engine status ---------------------------------------------


def test_two_keys_never_mix(api: httpx.Client) -> None:
    for owner in ("key-a", "key-b"):
        for n in range(3):
            add(api, f"{owner} likes rust crate {n}", f"rust:{n}", apiKeyId=owner)
    add(api, "unowned rust note", "rust:unowned")

    for owner in ("key-a", "key-b", ""):
        listed = api.get("/api/memory", params={"apiKeyId": owner, "q": "rust"}).json()
        assert listed["data"] and {m["apiKeyId"] for m in listed["data"]} == {owner}
        assert listed["stats"]["total"] == (3 if owner else 1)

        preview = api.post("/api/memory/retrieve-preview", json={"query": "rust crate", "apiKeyId": owner})
        items = preview.json()["memories"]
        assert items and {i["apiKeyId"] for i in items} == {owner}

        export = api.get("/api/memory/export", params={"apiKeyId": owner})
        owners = {json.loads(line)["apiKeyId"] for line in export.text.splitlines()}
        assert owners == {owner}

    everyone = api.post("/api/memory/retrieve-preview", json={"query": "rust", "apiKeyId": None}).json()
    assert {i["apiKeyId"] for i in everyone["memories"]} == {"key-a", "key-b", ""}


def test_preview_on_an_empty_database(api: httpx.Client) -> None:
    """REF §14 memory-retrieve-preview: 200 shape on an empty DB."""
    response = api.post("/api/memory/retrieve-preview", json={"query": "anything at all"})
    assert response.status_code == 200
    body = response.json()
    assert body["memories"] == [] and body["totalTokensUsed"] == 0 and body["budgetMaxTokens"] == 2000
    assert set(body["resolution"]) == {
        "embeddingSource",
        "embeddingModel",
        "vectorStore",
        "strategyUsed",
        "rerankApplied",
        "fallbackReason",
    }


def test_preview_ranks_within_budget_and_writes_nothing(api: httpx.Client) -> None:
    for n in range(6):
        add(api, f"deploys service {n} with kubernetes", f"deploy:{n}", apiKeyId="key-a")
    body = api.post(
        "/api/memory/retrieve-preview",
        json={"query": "kubernetes", "apiKeyId": "key-a", "limit": 3, "strategy": "semantic"},
    ).json()
    items = body["memories"]
    assert 0 < len(items) <= 3
    assert body["totalTokensUsed"] == sum(i["tokens"] for i in items)
    assert set(items[0]) == {
        "id",
        "apiKeyId",
        "userId",
        "type",
        "key",
        "content",
        "score",
        "tokens",
        "tier",
        "vecScore",
        "ftsScore",
        "truncated",
    }
    assert items[0]["tier"] == "vector"  # the bundled model is on by default: "semantic" is its tier
    for item in items:
        assert api.get(f"/api/memory/{item['id']}").json()["memory"]["accessCount"] == 0
    recent = api.post("/api/memory/retrieve-preview", json={"query": "x", "strategy": "recent"})
    assert recent.status_code == 200


@pytest.mark.one_store  # input checks, before any store is reached
@pytest.mark.parametrize(
    "body",
    [
        {"query": ""},
        {"query": "   "},
        {},
        {"query": "x", "strategy": "magic"},
        {"query": "x", "maxTokens": 0},
        {"query": "x", "maxTokens": 16001},
        {"query": "x", "limit": 0},
        {"query": "x", "limit": 101},
        {"query": "x", "extra": True},
    ],
)
def test_preview_rejects_bad_bodies(api: httpx.Client, body: dict[str, Any]) -> None:
    assert_error(api.post("/api/memory/retrieve-preview", json=body), 400)


def test_health_runs_the_pipeline_and_leaves_nothing(api: httpx.Client) -> None:
    response = api.get("/api/memory/health")
    assert response.status_code == 200
    body = response.json()
    assert body["working"] is True and "error" not in body
    assert body["steps"] == {"extract": True, "store": True, "search": True, "delete": True}
    assert isinstance(body["latencyMs"], float | int)
    assert api.get("/api/memory").json()["total"] == 0


def test_engine_status_is_honest_about_each_tier(api: httpx.Client, store_kind: str) -> None:
    body = api.get("/api/memory/engine-status").json()
    keywords, vectors = {
        "sqlite": ("FTS5", "sqlite-vec"),
        "postgresql": ("PostgreSQL full-text", "pgvector"),
    }[store_kind]
    # Related words and meanings share the word model: it loads with the first key index that asks.
    keyword = {"available": True, "backend": keywords, "relatedWords": "idle", "meanings": "idle"}
    assert body["keyword"] == keyword
    embedding = body["embedding"]
    assert (embedding["source"], embedding["available"]) == ("transformers", True)  # the bundled MiniLM
    assert embedding["model"] == "sentence-transformers/all-MiniLM-L6-v2 (int8 ONNX)"
    assert embedding["cacheStats"] == {"hits": 0, "misses": 0, "size": 0}
    assert body["vectorStore"]["backend"] == vectors and body["vectorStore"]["available"] is True
    assert body["vectorStore"]["needsReindex"] == 0 and body["vectorStore"]["rowCount"] == 0
    api.post("/api/memory", json={"content": "prefers vim", "key": "preference:vim", "apiKeyId": "k1"})
    deadline = time.monotonic() + 30
    while api.get("/api/memory/engine-status").json()["vectorStore"]["rowCount"] < 1:
        assert time.monotonic() < deadline, "the memory never got its vector"
        time.sleep(0.05)
    assert api.get("/api/memory/engine-status").json()["vectorStore"]["needsReindex"] == 0
    api.put("/api/settings/memory", json={"transformersEnabled": False})
    off = api.get("/api/memory/engine-status").json()
    assert off["embedding"]["available"] is False and off["embedding"]["source"] is None
    assert "no embedding source" in off["embedding"]["reason"]
    api.post("/api/memory", json={"content": "uses tmux", "key": "preference:tmux", "apiKeyId": "k1"})
    after = api.get("/api/memory/engine-status").json()
    assert after["vectorStore"]["needsReindex"] == 1  # no source: the memory waits for a vector
    for _ in range(3):
        api.post("/api/memory/retrieve-preview", json={"query": "which editor", "apiKeyId": "k1"})
    ready = api.get("/api/memory/engine-status").json()["keyword"]
    assert (ready["relatedWords"], ready["meanings"]) == ("ready", "ready")
    qdrant = body["qdrant"]
    assert {k: qdrant[k] for k in ("enabled", "healthy", "latencyMs", "error", "serving")} == {
        "enabled": False,
        "healthy": None,
        "latencyMs": None,
        "error": None,
        "serving": False,
    }
    assert qdrant["backfill"]["done"] is True and qdrant["outbox"] == 0
    assert body["rerank"] == {
        "enabled": False,
        "provider": None,
        "model": None,
        "available": False,
        "reason": "rerank disabled",
    }
    assert body["extractionQueue"] == {"pending": 0, "failed": 0}

    api.put("/api/settings/memory", json={"rerankEnabled": True, "rerankProviderModel": "cohere/rerank-v3"})
    rerank = api.get("/api/memory/engine-status").json()["rerank"]
    assert (rerank["enabled"], rerank["available"]) == (True, False)
    assert (rerank["provider"], rerank["model"]) == ("cohere", "rerank-v3")


def test_switching_on_an_embedding_source_at_runtime_gives_vector_retrieval(
    api: httpx.Client, store_kind: str
) -> None:
    # The bundled MiniLM, switched off and on again through the API, no restart.
    api.put("/api/settings/memory", json={"transformersEnabled": False})
    add(api, "has a dog named Biscuit who loves the beach", "fact:dog", apiKeyId="k1")
    add(api, "is allergic to peanuts", "fact:allergy", apiKeyId="k1")
    nothing = api.post("/api/memory/reindex", json={}).json()
    assert nothing["started"] is False and "no embedding source" in nothing["reason"]
    switched = api.put("/api/settings/memory", json={"embeddingSource": "auto", "transformersEnabled": True})
    assert switched.status_code == 200
    started = api.post("/api/memory/reindex", json={"force": True}).json()
    assert started["started"] is True and started["pending"] == 2
    deadline = time.monotonic() + 30
    while api.get("/api/memory/engine-status").json()["vectorStore"]["rowCount"] < 2:
        assert time.monotonic() < deadline, "the re-index worker did not finish"
        time.sleep(0.05)
    status = api.get("/api/memory/engine-status").json()
    assert status["embedding"]["source"] == "transformers" and status["embedding"]["available"] is True
    assert status["vectorStore"]["needsReindex"] == 0 and "dim=384" in status["vectorStore"]["reason"]
    preview = api.post(
        "/api/memory/retrieve-preview",
        json={"query": "What's my pup called?", "apiKeyId": "k1", "strategy": "hybrid"},
    ).json()
    # No word in common with the memory: found by meaning (the vector tier's cosine); the
    # keyword tier finds it too, through "dog", a related word of "pup".
    assert preview["memories"][0]["key"] == "fact:dog"
    assert preview["memories"][0]["tier"] == "hybrid-rrf" and preview["memories"][0]["vecScore"] > 0.3
    assert preview["resolution"]["embeddingSource"] == "transformers"
    assert preview["resolution"]["vectorStore"] == BACKENDS[store_kind][1]
    assert_error(api.post("/api/memory/reindex", json={"force": "yes"}), 400)


def test_embedding_providers_lists_providers_without_secrets_and_local_sources(api: httpx.Client) -> None:
    created = api.post(
        "/api/providers", json={"id": "emb", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "sk-secret-value"}
    )
    assert created.status_code in (200, 201), created.text
    response = api.get("/api/memory/embedding-providers")
    assert response.status_code == 200
    assert "sk-secret-value" not in response.text
    by_id = {p["id"]: p for p in response.json()["providers"]}
    assert by_id["emb"]["kind"] == "provider" and by_id["emb"]["hasKey"] is True
    assert by_id["transformers"]["kind"] == "local" and by_id["transformers"]["available"] is True
    assert by_id["transformers"]["dimensions"] == 384
    assert "static" in by_id


# -- summarise -------------------------------------------------------------------------------


def seed_old(api: httpx.Client, owner: str, count: int, days: int = 40) -> list[str]:
    stamp = iso_days_ago(days)
    records = [
        {
            "id": str(uuid.uuid4()),
            "apiKeyId": owner,
            "key": f"old:{owner}:{n}",
            "content": f"old fact number {n} of {owner}.",
            "createdAt": stamp,
            "updatedAt": stamp,
        }
        for n in range(count)
    ]
    assert import_lines(api, records)["imported"] == count
    return [r["id"] for r in records]


def test_summarize_dry_run_keeps_rows_and_real_run_compacts_per_key(api: httpx.Client) -> None:
    """REF §14 memory-summarize: a dry run keeps the row; a real run has the right shape."""
    old_a = seed_old(api, "key-a", 3)
    old_b = seed_old(api, "key-b", 2)
    fresh = add(api, "recent fact", "recent", apiKeyId="key-a")

    dry = api.post("/api/memory/summarize", json={"apiKeyId": "key-a", "dryRun": True}).json()
    assert dry["dryRun"] is True and dry["deletedCount"] == 0 and dry["summaryId"] is None
    assert sorted(m["id"] for m in dry["candidates"]) == sorted(old_a)
    assert dry["totalTokens"] == sum(-(-len(m["content"]) // 4) for m in dry["candidates"])
    assert all(api.get(f"/api/memory/{i}").status_code == 200 for i in old_a)

    real = api.post("/api/memory/summarize", json={"apiKeyId": "key-a", "olderThanDays": 30}).json()
    assert set(real) == {
        "candidates",
        "candidateCount",
        "totalTokens",
        "deletedCount",
        "summaryId",
        "summaries",
        "dryRun",
    }
    assert real["dryRun"] is False and real["deletedCount"] == 3
    summary = api.get(f"/api/memory/{real['summaryId']}").json()["memory"]
    assert summary["apiKeyId"] == "key-a" and summary["type"] == "semantic"
    assert summary["content"].startswith("Summary of 3 memories")
    assert all(api.get(f"/api/memory/{i}").status_code == 404 for i in old_a)
    assert api.get(f"/api/memory/{fresh['id']}").status_code == 200
    assert all(api.get(f"/api/memory/{i}").status_code == 200 for i in old_b)  # key-b untouched

    every = api.post("/api/memory/summarize", json={"allKeys": True}).json()
    assert every["deletedCount"] == 2
    assert [(s["apiKeyId"], s["count"]) for s in every["summaries"]] == [("key-b", 2)]


@pytest.mark.one_store  # input checks, before any store is reached
@pytest.mark.parametrize(
    "body",
    [
        {"apiKeyId": "key-a", "olderThanDays": 0},
        {"apiKeyId": "key-a", "olderThanDays": 366},
        {"apiKeyId": "key-a", "olderThanDays": 400},
        {"apiKeyId": "key-a", "olderThanDays": "30"},
        {},
        {"olderThanDays": 30, "dryRun": False},
        {"apiKeyId": None},
        {"apiKeyId": "key-a", "allKeys": True},
        {"apiKeyId": "key-a", "force": True},
    ],
)
def test_summarize_rejects_bad_bodies_and_deletes_nothing(api: httpx.Client, body: dict[str, Any]) -> None:
    ids = seed_old(api, "key-a", 2)
    assert_error(api.post("/api/memory/summarize", json=body), 400)
    assert all(api.get(f"/api/memory/{i}").status_code == 200 for i in ids)


# -- export / import ---------------------------------------------------------------------------


def test_export_then_import_into_a_second_server(api: httpx.Client, tmp_path: Path) -> None:
    add(api, "prefers tabs", "style:indent", apiKeyId="key-a", metadata={"source": "test"}, sessionId="s1")
    add(api, "deploys on fridays", "habit:deploy", apiKeyId="key-a", type="episodic", expiresAt="2099-01-01")
    add(api, "other tenant", "other", apiKeyId="key-b")
    export = api.get("/api/memory/export", params={"apiKeyId": "key-a"})
    assert export.status_code == 200
    assert export.headers["content-type"].startswith("application/x-ndjson")
    lines = export.text.splitlines()
    assert len(lines) == 2 and all(set(json.loads(line)) == MEMORY_FIELDS for line in lines)
    everything = api.get("/api/memory/export").text.splitlines()
    assert len(everything) == 3

    with management_api(tmp_path / "second" / "memroute.db") as second:
        report = second.post("/api/memory/import", headers=JSON_LINES, content=export.content)
        assert report.status_code == 200
        assert report.json() == {"imported": 2, "skipped": 0, "errors": []}
        again = second.post("/api/memory/import", headers=JSON_LINES, content=export.content).json()
        assert again == {"imported": 0, "skipped": 2, "errors": []}
        copied = second.get("/api/memory", params={"apiKeyId": "key-a"}).json()["data"]
        original = api.get("/api/memory", params={"apiKeyId": "key-a"}).json()["data"]
        fields = MEMORY_FIELDS - {"accessCount", "lastAccessedAt"}
        assert [{f: m[f] for f in fields} for m in copied] == [{f: m[f] for f in fields} for m in original]
        assert second.get("/api/memory", params={"apiKeyId": "key-b"}).json()["total"] == 0


def test_import_json_array_owner_override_and_bad_records(api: httpx.Client) -> None:
    records = [
        {"content": "likes go", "key": "lang:go"},
        {"content": "", "key": "bad"},
        "not an object",
        {"content": "likes zig", "key": "lang:zig", "type": "semantic", "apiKeyId": "someone-else"},
    ]
    report = api.post("/api/memory/import", params={"apiKeyId": "key-c"}, json=records).json()
    assert report["imported"] == 2 and report["skipped"] == 0
    assert [e["line"] for e in report["errors"]] == [2, 3]
    assert "JSON object" in report["errors"][1]["error"]
    listed = api.get("/api/memory", params={"apiKeyId": "key-c"}).json()
    assert sorted(m["key"] for m in listed["data"]) == ["lang:go", "lang:zig"]

    jsonl = '{"content": "likes ada", "key": "lang:ada"}\n\n{broken\n'
    report = api.post("/api/memory/import", headers=JSON_LINES, content=jsonl).json()
    assert report["imported"] == 1 and [e["line"] for e in report["errors"]] == [3]


@pytest.mark.one_store  # input checks, before any store is reached
@pytest.mark.parametrize("body", [b"", b"  \n", b"[1, 2", b"\xff\xfe\x00bad"])
def test_import_rejects_unreadable_bodies(api: httpx.Client, body: bytes) -> None:
    assert_error(api.post("/api/memory/import", headers=JSON_LINES, content=body), 400)
    assert api.get("/api/memory").json()["total"] == 0


def test_bodies_over_the_limit_are_413_and_write_nothing(tmp_path: Path) -> None:
    limits = {"MEMROUTE_MAX_BODY_BYTES": "2048", "MEMROUTE_MAX_IMPORT_BYTES": "2048"}
    with management_api(tmp_path / "memroute.db", **limits) as api:
        assert_error(api.post("/api/memory", json={"content": "x" * 4000, "key": "big"}), 413)

        def chunks() -> Iterator[bytes]:  # no content-length: the import limit applies while streaming
            for n in range(10):
                yield (json.dumps({"content": f"fact {n} " + "y" * 400, "key": f"k{n}"}) + "\n").encode()

        assert_error(api.post("/api/memory/import", headers=JSON_LINES, content=chunks()), 413)
        assert_error(api.put("/api/settings/memory", json={"rerankProviderModel": "p/" + "m" * 3000}), 413)
        assert api.get("/api/memory").json()["total"] == 0
        assert api.get("/api/settings/memory").json() == SETTINGS_DEFAULTS
        assert add(api, "small is fine", "small")["content"] == "small is fine"


# -- settings ------------------------------------------------------------------------------------


def test_settings_defaults_update_and_persist(api: httpx.Client) -> None:
    assert api.get("/api/settings/memory").json() == SETTINGS_DEFAULTS
    changed = api.put(
        "/api/settings/memory",
        json={
            "enabled": True,
            "maxTokens": 0,
            "retentionDays": 365,
            "strategy": "recent",
            "embeddingProviderModel": "openai/text-embedding-3-small",
            "scope": "session",
            "injectionEnabled": False,
            "captureTurns": "all",
        },
    )
    assert changed.status_code == 200
    expected = {
        **SETTINGS_DEFAULTS,
        "enabled": True,
        "maxTokens": 0,
        "retentionDays": 365,
        "strategy": "recent",
        "embeddingProviderModel": "openai/text-embedding-3-small",
        "scope": "session",
        "injectionEnabled": False,
        "captureTurns": "all",
    }
    assert changed.json() == expected
    assert api.get("/api/settings/memory").json() == expected
    cleared = api.put("/api/settings/memory", json={"embeddingProviderModel": None}).json()
    assert cleared["embeddingProviderModel"] is None
    assert api.put("/api/settings/memory", json={}).json() == {**expected, "embeddingProviderModel": None}


@pytest.mark.one_store  # input checks, before any store is reached
@pytest.mark.parametrize(
    "body",
    [
        {"maxTokens": 16001},
        {"maxTokens": -1},
        {"maxTokens": "100"},
        {"maxTokens": 1.5},
        {"retentionDays": 0},
        {"retentionDays": 366},
        {"strategy": "exact"},
        {"strategy": "bogus"},
        {"enabled": "yes"},
        {"enabled": 1},
        {"enabled": None},
        {"embeddingSource": "cloud"},
        {"vectorStore": "pgvector"},
        {"scope": "user"},
        {"rerankProviderModel": 42},
        {"memoryEnabled": True},
        {"enabled": True, "maxTokens": 99999},
    ],
)
def test_settings_reject_bad_values_and_write_nothing(api: httpx.Client, body: dict[str, Any]) -> None:
    assert_error(api.put("/api/settings/memory", json=body), 400)
    assert api.get("/api/settings/memory").json() == SETTINGS_DEFAULTS
