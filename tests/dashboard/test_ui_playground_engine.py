"""The Playground and Engine tabs in Chromium, against the real server: retrieval
simulation, engine status polling, re-index, embedding source, Qdrant (local mode,
":memory:", inside the server) and rerank. Data is set up and effects are checked
through the admin API."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Studio, screenshot
from playwright.sync_api import expect
from servers import JSON_LINES, free_port

POLL = 15_000  # ms: the Engine tab refreshes every 5 s; the first Qdrant call imports qdrant-client
QDRANT_KEY = "qdrant-secret-4b1d9f3e"


@pytest.fixture(scope="module")
def studio_env() -> dict[str, str]:
    """The re-index worker wakes on every memory write and on Reindex Now; it also polls
    every 5 s for settings changed by another process, which would embed the memories
    waiting since a source switch at a random moment. Made rare here, so the pending
    count stays put until the test presses Reindex Now."""
    return {"MEMORY_REINDEX_POLL_S": "3600"}


# -- helpers -----------------------------------------------------------------------------


def put_settings(studio: Studio, **fields: Any) -> dict[str, Any]:
    response = studio.api.put("/api/settings/memory", json=fields)
    response.raise_for_status()
    return response.json()


def add_memory(studio: Studio, key: str, content: str, **extra: Any) -> str:
    response = studio.api.post("/api/memory", json={"key": key, "content": content, **extra})
    response.raise_for_status()
    return str(response.json()["id"])


def engine_status(studio: Studio) -> dict[str, Any]:
    return studio.api.get("/api/memory/engine-status").json()


def wait_until(check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def embed_everything(studio: Studio) -> None:
    studio.api.post("/api/memory/reindex", json={"force": False}).raise_for_status()
    wait_until(lambda: engine_status(studio)["vectorStore"]["needsReindex"] == 0)


def disable_qdrant(studio: Studio) -> None:
    studio.api.put("/api/settings/qdrant", json={"enabled": False}).raise_for_status()


def open_tab(page: Any, tab: str) -> None:
    page.goto(f"/dashboard/memory?tab={tab}")
    expect(page.locator(f"#panel-{tab}")).to_be_visible()


def resolution(page: Any, term: str) -> Any:
    return page.locator(f'.pg-resolution dd[data-term="{term}"]')


def chip(page: Any, name: str) -> Any:
    return page.locator(f'.eng-chip[data-chip="{name}"]')


def preview(studio: Studio, **body: Any) -> dict[str, Any]:
    response = studio.api.post("/api/memory/retrieve-preview", json={"limit": 20, **body})
    response.raise_for_status()
    return response.json()


def fixed3(value: float) -> str:
    """A score as the Playground shows it: three decimals, "-0.000" shown as "0.000"."""
    text = f"{value:.3f}"
    return "0.000" if text == "-0.000" else text


def expect_items_like(page: Any, answer: dict[str, Any]) -> None:
    """The ranked list shows exactly what the API answers: order, tier, scores, tokens."""
    items = page.locator(".pg-item")
    expect(items).to_have_count(len(answer["memories"]))
    for index, memory in enumerate(answer["memories"]):
        item = items.nth(index)
        expect(item.locator(".pg-rank")).to_have_text(f"#{index + 1}")
        expect(item.locator(".tier")).to_have_text(memory["tier"])
        expect(item.locator(".pg-score strong")).to_have_text(fixed3(memory["score"]))
        expect(item.locator(".pg-tokens")).to_have_text(f"{memory['tokens']} tokens")
        expect(item.locator(".pg-key")).to_have_text(memory["key"])
        expect(item.locator(".pg-content")).to_have_text(memory["content"])
        for name in ("vec", "fts"):
            value = memory[f"{name}Score"]
            metric = item.locator(f".pg-{name} strong")
            if value is None:
                expect(metric).to_have_count(0)
            else:
                expect(metric).to_have_text(fixed3(value))


def expect_budget(page: Any, answer: dict[str, Any]) -> None:
    meter = page.locator("#pg-budget-meter")
    expect(meter).to_have_attribute("value", str(answer["totalTokensUsed"]))
    expect(meter).to_have_attribute("max", str(answer["budgetMaxTokens"]))
    expect(page.locator(".pg-used")).to_have_text(str(answer["totalTokensUsed"]))
    expect(page.locator(".pg-max")).to_have_text(str(answer["budgetMaxTokens"]))


# -- Playground --------------------------------------------------------------------------


def test_playground_names_the_fallback_without_an_embedding_source(page: Any, studio: Studio) -> None:
    put_settings(studio, embeddingSource="auto", transformersEnabled=False, staticEnabled=False)
    add_memory(studio, "editor", "uses Neovim as the editor")
    open_tab(page, "playground")
    expect(page.get_by_label("Strategy")).to_have_value("hybrid")
    expect(page.get_by_label("Token budget", exact=True)).to_have_value("2000")
    page.get_by_label("Query").fill("editor")
    page.get_by_role("button", name="Simulate").click()
    answer = preview(studio, query="editor", strategy="hybrid", maxTokens=2000)
    reason = answer["resolution"]["fallbackReason"]
    assert reason and "no embedding source" in reason
    expect(resolution(page, "Fallback reason")).to_have_text(reason)
    expect(resolution(page, "Embedding source")).to_have_text("none")
    expect(resolution(page, "Vector store")).to_have_text(answer["resolution"]["vectorStore"])
    expect(resolution(page, "Rerank applied")).to_have_text("no")
    expect(page.locator(".pg-item").first.locator(".tier")).to_have_text("fts5")
    expect_items_like(page, answer)
    expect_budget(page, answer)


def test_playground_simulate_shows_tiers_scores_and_the_budget_bar(page: Any, studio: Studio) -> None:
    key = studio.api.post("/api/keys", json={"name": "laptop"}).json()["key"]
    put_settings(studio, embeddingSource="hashing")
    owned = {"apiKeyId": key["id"]}
    add_memory(studio, "preference:theme", "prefers a dark theme in the editor", **owned)
    add_memory(studio, "tool:editor", "edits code with Neovim and tmux", **owned)
    add_memory(studio, "pet", "has a dog named Biscuit", **owned)
    add_memory(studio, "markup", "<b>bold</b> & <img src=x onerror=alert(1)> is just text", **owned)
    embed_everything(studio)
    open_tab(page, "playground")
    expect(page.locator("#pg-key option", has_text="laptop")).to_have_count(1)
    page.get_by_label("API key").select_option(key["id"])
    page.get_by_label("Token budget", exact=True).fill("300")
    query = page.get_by_label("Query")
    query.fill("dark editor theme")
    query.press("Enter")  # Enter simulates
    answer = preview(studio, query="dark editor theme", strategy="hybrid", maxTokens=300, apiKeyId=key["id"])
    assert {m["tier"] for m in answer["memories"]} & {"hybrid-rrf"}
    expect_items_like(page, answer)
    expect_budget(page, answer)
    expect(page.locator(".pg-budget-text")).to_contain_text(f"{answer['totalTokensUsed']} of 300 tokens used")
    expect(resolution(page, "Embedding source")).to_have_text("hashing")
    expect(resolution(page, "Embedding model")).to_have_text(answer["resolution"]["embeddingModel"])
    expect(resolution(page, "Strategy used")).to_have_text("hybrid")
    expect(resolution(page, "Fallback reason")).to_have_text("none")

    page.get_by_label("Strategy").select_option("semantic")
    page.get_by_label("Token budget slider").fill("100")
    expect(page.get_by_label("Token budget", exact=True)).to_have_value("100")
    page.get_by_role("button", name="Simulate").click()
    answer = preview(
        studio, query="dark editor theme", strategy="semantic", maxTokens=100, apiKeyId=key["id"]
    )
    assert {m["tier"] for m in answer["memories"]} == {"vector"}
    expect(resolution(page, "Strategy used")).to_have_text("semantic")
    expect_items_like(page, answer)
    expect_budget(page, answer)

    query.fill("bold text")
    query.press("Enter")
    markup = page.locator(".pg-item", has_text="is just text")
    expect(markup.locator(".pg-content")).to_have_text(
        "<b>bold</b> & <img src=x onerror=alert(1)> is just text"
    )
    expect(page.locator("#panel-playground b, #panel-playground img")).to_have_count(0)


def test_playground_previews_one_end_users_memory(page: Any, studio: Studio) -> None:
    key = studio.api.post("/api/keys", json={"name": "saas-app"}).json()["key"]
    add_memory(studio, "", "Ana walks her dog Biscuit at dawn", apiKeyId=key["id"], userId="ana")
    add_memory(studio, "", "the key's own dog note", apiKeyId=key["id"])
    open_tab(page, "playground")
    page.get_by_label("API key").select_option(key["id"])
    page.get_by_label("End user").fill("ana")
    page.get_by_label("Query").fill("dog")
    page.get_by_role("button", name="Simulate").click()
    answer = preview(studio, query="dog", strategy="hybrid", maxTokens=2000, apiKeyId=key["id"], userId="ana")
    assert [m["content"] for m in answer["memories"]] == ["Ana walks her dog Biscuit at dawn"]
    expect_items_like(page, answer)


# -- Engine: status, re-index, embedding source -----------------------------------------


def test_engine_chips_show_the_tiers_and_follow_the_server(page: Any, studio: Studio) -> None:
    put_settings(studio, embeddingSource="auto", transformersEnabled=False, staticEnabled=False)
    status_calls: list[float] = []
    page.on("request", lambda r: status_calls.append(time.monotonic()) if "engine-status" in r.url else None)
    open_tab(page, "engine")
    expect(chip(page, "keyword").locator(".eng-chip-state")).to_have_text("available")
    expect(chip(page, "keyword")).to_contain_text("FTS5")
    expect(chip(page, "keyword")).to_contain_text("related words")
    expect(chip(page, "keyword")).to_contain_text("meanings")
    reason = engine_status(studio)["embedding"]["reason"]
    expect(chip(page, "embedding").locator(".eng-chip-state")).to_have_text("unavailable")
    expect(chip(page, "embedding").locator(".eng-chip-reason")).to_have_text(reason)
    expect(chip(page, "qdrant").locator(".eng-chip-state")).to_have_text("off")
    expect(chip(page, "rerank")).to_contain_text("rerank disabled")
    expect(chip(page, "vector-store")).to_contain_text("sqlite-vec")

    put_settings(studio, embeddingSource="hashing")  # changed elsewhere: the polling shows it
    expect(chip(page, "embedding").locator(".eng-chip-reason")).to_have_text(
        "hashing explicitly selected", timeout=POLL
    )
    expect(chip(page, "embedding").locator(".eng-chip-state")).to_have_text("available")

    page.get_by_role("tab", name="Playground").click()  # hide() stops the polling
    expect(page.locator("#panel-engine")).to_be_hidden()
    left_at = time.monotonic()
    page.wait_for_timeout(6_000)
    assert not [t for t in status_calls if t > left_at + 0.5]


def test_switching_a_source_on_embeds_the_waiting_memories_and_reindex_now_re_embeds_all(
    page: Any, studio: Studio
) -> None:
    put_settings(studio, embeddingSource="auto", transformersEnabled=False, staticEnabled=False)
    lines = [json.dumps({"key": f"waiting:{n}", "content": f"memory number {n} waits"}) for n in range(3)]
    studio.api.post("/api/memory/import", headers=JSON_LINES, content="\n".join(lines)).raise_for_status()
    pending = engine_status(studio)["vectorStore"]["needsReindex"]
    assert pending >= 3  # no embedding source: they wait for one
    open_tab(page, "engine")
    expect(page.locator("#eng-pending")).to_have_text(str(pending))
    # Switching a source on wakes the background re-index: the count drains by itself.
    put_settings(studio, embeddingSource="hashing")
    expect(page.locator("#eng-pending")).to_have_text("0", timeout=POLL)
    expect(page.locator("#eng-worker")).to_contain_text("embedded")
    assert engine_status(studio)["vectorStore"]["needsReindex"] == 0

    total = studio.api.get("/api/memory?limit=1").json()["total"]
    page.get_by_label("Re-embed everything").check()
    with page.expect_request(lambda r: r.url.endswith("/api/memory/reindex")) as sent:
        page.get_by_role("button", name="Reindex now").click()
        page.get_by_role("dialog").get_by_role("button", name="Re-embed").click()
    assert sent.value.post_data_json == {"force": True}
    expect(page.locator("#eng-reindex-result")).to_contain_text(f"{total} memories")
    expect(page.locator("#eng-pending")).to_have_text("0", timeout=POLL)
    assert engine_status(studio)["vectorStore"]["needsReindex"] == 0


def test_embedding_source_and_vector_store_switches_persist(page: Any, studio: Studio) -> None:
    put_settings(
        studio, embeddingSource="auto", transformersEnabled=False, staticEnabled=False, vectorStore="auto"
    )
    open_tab(page, "engine")
    warning = page.locator("#eng-ram-warning")
    expect(warning).to_be_hidden()
    page.get_by_role("combobox", name="Embedding source").select_option("static")
    expect(page.locator("#eng-embedding-result")).to_have_text("Saved: embedding source = static.")
    page.get_by_role("switch", name="Enable transformers (MiniLM)").click()
    expect(page.locator("#eng-embedding-result")).to_have_text("Saved: transformers on.")
    expect(warning).to_be_visible()
    expect(warning).to_contain_text("300 MB")
    page.get_by_role("combobox", name="Vector store").select_option("sqlite-vec")
    expect(page.locator("#eng-vector-result")).to_have_text("Saved: vector store = sqlite-vec.")
    saved = studio.api.get("/api/settings/memory").json()
    assert (saved["embeddingSource"], saved["transformersEnabled"], saved["vectorStore"]) == (
        "static",
        True,
        "sqlite-vec",
    )

    page.reload()
    expect(page.get_by_role("combobox", name="Embedding source")).to_have_value("static")
    expect(page.get_by_role("switch", name="Enable transformers (MiniLM)")).to_be_checked()
    expect(page.get_by_role("switch", name="Enable static model")).not_to_be_checked()
    expect(page.get_by_role("combobox", name="Vector store")).to_have_value("sqlite-vec")
    expect(warning).to_be_visible()

    page.get_by_label("Remote model").fill("text-embedding-3-small")
    page.locator("#eng-embedding").get_by_role("button", name="Save").click()
    expect(page.locator("#eng-embedding-result")).to_contain_text("Pick a provider")
    page.get_by_role("combobox", name="Embedding source").select_option("hashing")
    expect(page.locator("#eng-embedding-result")).to_have_text("Saved: embedding source = hashing.")
    page.get_by_role("switch", name="Enable transformers (MiniLM)").click()
    expect(warning).to_be_hidden()
    page.get_by_role("combobox", name="Vector store").select_option("auto")
    expect(page.locator("#eng-vector-result")).to_have_text("Saved: vector store = auto.")
    saved = studio.api.get("/api/settings/memory").json()
    assert (saved["embeddingSource"], saved["transformersEnabled"], saved["vectorStore"]) == (
        "hashing",
        False,
        "auto",
    )


# -- Engine: Qdrant --------------------------------------------------------------------------


def qdrant_put(page: Any, action: Callable[[], None]) -> dict[str, Any]:
    """Run `action` and return the body of the PUT /api/settings/qdrant it sends, once the
    server has answered."""

    def is_put(response: Any) -> bool:
        return response.url.endswith("/api/settings/qdrant") and response.request.method == "PUT"

    with page.expect_response(is_put) as answer:
        action()
    return dict(answer.value.request.post_data_json)


def save_qdrant(page: Any) -> dict[str, Any]:
    card = page.locator("#eng-qdrant")
    return qdrant_put(page, lambda: card.get_by_role("button", name="Save Qdrant settings").click())


def configure_qdrant_without_enabling(page: Any, studio: Studio) -> None:
    """Only what the user changed is sent: `enabled` would also reset the vector store."""
    card = page.locator("#eng-qdrant")
    page.get_by_role("combobox", name="Vector store").select_option("sqlite-vec")
    expect(page.locator("#eng-vector-result")).to_have_text("Saved: vector store = sqlite-vec.")
    card.get_by_label("Host", exact=True).fill(":memory:")
    card.get_by_label("Quantization").select_option("int8")
    card.get_by_label("API key", exact=True).fill(QDRANT_KEY)
    expect(card.locator("#qd-changes")).to_have_text("Unsaved: host, quantization, apiKey")
    assert save_qdrant(page) == {"host": ":memory:", "quantization": "int8", "apiKey": QDRANT_KEY}
    expect(card.locator("#qd-save-result")).to_have_text("Saved: host, quantization, apiKey.")
    expect(card.locator("#qd-key-state")).to_have_text(f"set (***{QDRANT_KEY[-4:]})")
    expect(card.get_by_label("API key", exact=True)).to_have_value("")
    assert studio.api.get("/api/settings/memory").json()["vectorStore"] == "sqlite-vec"
    saved = studio.api.get("/api/settings/qdrant").json()
    assert not saved["enabled"] and saved["hasApiKey"]
    assert (saved["host"], saved["quantization"]) == (":memory:", "int8")


def enable_qdrant_and_wait_for_the_backfill(page: Any) -> None:
    card = page.locator("#eng-qdrant")
    card.get_by_role("switch", name="Use Qdrant (tier 2)").check()
    assert save_qdrant(page) == {"enabled": True}
    expect(card.locator("#qd-save-result")).to_have_text("Saved: enabled.")
    expect(page.get_by_role("combobox", name="Vector store")).to_have_value("qdrant")  # enabling set it
    card.get_by_role("button", name="Test connection").click()
    expect(card.locator("#qd-test-result")).to_contain_text("Connection OK", timeout=POLL)
    expect(card.locator('#qd-status dd[data-term="Serving searches"]')).to_have_text("yes", timeout=POLL)
    expect(card.locator('#qd-status dd[data-term="Back-fill"]')).to_contain_text("done")
    expect(chip(page, "qdrant").locator(".eng-chip-state")).to_have_text("available")


def search_and_clean_up(page: Any, studio: Studio, expired: str) -> None:
    card = page.locator("#eng-qdrant")
    card.get_by_label("Search test query").fill("dog Biscuit")
    card.get_by_role("button", name="Search test").click()
    hit = card.locator(".eng-hit").first
    expect(hit).to_contain_text("has a dog named Biscuit")
    best = studio.api.post("/api/settings/qdrant/search", json={"query": "dog Biscuit", "topK": 5}).json()
    expect(hit.locator(".eng-hit-score")).to_have_text(f"score {best['results'][0]['score']:.3f}")
    card.get_by_role("button", name="Cleanup").click()
    page.get_by_role("dialog").get_by_role("button", name="Clean up").click()
    expect(card.locator("#qd-cleanup-result")).to_contain_text("1 point deleted (retention 30 days)")
    expect(card.locator("#qd-cleanup-result code")).to_have_text([expired])


def remove_the_key_and_disable(page: Any, studio: Studio) -> None:
    card = page.locator("#eng-qdrant")
    card.get_by_role("button", name="Remove key").click()
    dialog = page.get_by_role("dialog")
    assert qdrant_put(page, lambda: dialog.get_by_role("button", name="Remove key").click()) == {"apiKey": ""}
    expect(card.locator("#qd-key-state")).to_have_text("not set")
    assert studio.api.get("/api/settings/qdrant").json()["hasApiKey"] is False
    card.get_by_role("switch", name="Use Qdrant (tier 2)").uncheck()
    card.get_by_label("Quantization").select_option("none")
    assert save_qdrant(page) == {"enabled": False, "quantization": "none"}
    expect(card.locator("#qd-save-result")).to_have_text("Saved: enabled, quantization.")
    expect(chip(page, "qdrant").locator(".eng-chip-state")).to_have_text("off")
    expect(page.get_by_role("combobox", name="Vector store")).to_have_value("auto")


def test_qdrant_card_round_trip_keeps_the_api_key_secret(page: Any, studio: Studio) -> None:
    put_settings(studio, embeddingSource="hashing", vectorStore="auto")
    add_memory(studio, "pet:name", "has a dog named Biscuit")
    expired = add_memory(studio, "old:trip", "went to Porto once", expiresAt="2020-01-01")
    embed_everything(studio)
    responses: list[Any] = []
    page.on("response", lambda response: responses.append(response))
    open_tab(page, "engine")
    expect(page.locator("#qd-key-state")).to_have_text("not set")
    expect(page.get_by_role("button", name="Save Qdrant settings")).to_be_disabled()
    try:
        configure_qdrant_without_enabling(page, studio)
        enable_qdrant_and_wait_for_the_backfill(page)
        search_and_clean_up(page, studio, expired)
        remove_the_key_and_disable(page, studio)
    finally:
        disable_qdrant(studio)
    assert QDRANT_KEY not in page.content()
    seen = [r for r in responses if r.request.resource_type in ("fetch", "xhr", "document")]
    assert len(seen) > 10
    for response in seen:
        assert QDRANT_KEY not in response.text(), response.url


def test_qdrant_closed_port_shows_the_connection_error(page: Any, studio: Studio) -> None:
    port = free_port()
    open_tab(page, "engine")
    card = page.locator("#eng-qdrant")
    card.get_by_label("Collection", exact=True).fill("bad name!")
    assert save_qdrant(page) == {"collection": "bad name!"}
    expect(card.locator("#qd-save-result")).to_have_text(
        "Not saved: collection: must be 1–100 letters, digits, '_' or '-'"
    )
    expect(card.locator("#qd-changes")).to_have_text("Unsaved: collection")  # the edit is kept
    card.get_by_label("Collection", exact=True).fill("memroute_memory")
    card.get_by_label("Host", exact=True).fill("127.0.0.1")
    card.get_by_label("Port", exact=True).fill(str(port))
    card.get_by_role("switch", name="Use Qdrant (tier 2)").check()
    body = qdrant_put(page, lambda: card.get_by_role("button", name="Save Qdrant settings").click())
    assert body == {"enabled": True, "host": "127.0.0.1", "port": port}
    expect(card.locator("#qd-save-result")).to_have_text("Saved: enabled, host, port.")
    try:
        card.get_by_role("button", name="Test connection").click()
        expect(card.locator("#qd-test-result")).to_contain_text("Connection failed", timeout=POLL)
        expect(card.locator("#qd-test-result")).to_contain_text("Connection refused")
        expect(chip(page, "qdrant").locator(".eng-chip-state")).to_have_text("unavailable", timeout=POLL)
        expect(card.locator('#qd-status dd[data-term="Where"]')).to_have_text(f"http://127.0.0.1:{port}")
    finally:
        disable_qdrant(studio)


# -- Engine: rerank --------------------------------------------------------------------------


def test_rerank_card_saves(page: Any, studio: Studio) -> None:
    studio.api.post(
        "/api/providers",
        json={"id": "rr", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "sk-rerank-0123456789"},
    ).raise_for_status()
    try:
        open_tab(page, "engine")
        card = page.locator("#eng-rerank-card")
        expect(card.locator("#eng-rerank-warning")).to_contain_text("+200–500 ms")
        expect(card.locator("#eng-rerank-state")).to_have_text("Now: off — rerank disabled")
        card.get_by_label("Rerank provider").select_option("rr")
        card.get_by_label("Rerank model id").fill("x" * 300)
        card.get_by_role("button", name="Save").click()
        expect(card.locator("#eng-rerank-result")).to_contain_text("Not saved: rerankProviderModel")
        expect(card.get_by_label("Rerank model id")).to_have_value("")  # back to what is stored
        card.get_by_label("Rerank provider").select_option("rr")
        card.get_by_label("Rerank model id").fill("rerank-english-v3")
        card.get_by_role("button", name="Save").click()
        expect(card.locator("#eng-rerank-result")).to_have_text(
            "Saved: rerank provider/model = rr/rerank-english-v3."
        )
        card.get_by_role("switch", name="Rerank vector results").click()
        expect(card.locator("#eng-rerank-result")).to_have_text("Saved: rerank on.")
        expect(card.locator("#eng-rerank-state")).to_contain_text("Now: available")
        expect(chip(page, "rerank").locator(".eng-chip-state")).to_have_text("available")
        saved = studio.api.get("/api/settings/memory").json()
        assert saved["rerankEnabled"] is True and saved["rerankProviderModel"] == "rr/rerank-english-v3"

        page.reload()
        expect(card.get_by_role("switch", name="Rerank vector results")).to_be_checked()
        expect(card.get_by_label("Rerank provider")).to_have_value("rr")
        expect(card.get_by_label("Rerank model id")).to_have_value("rerank-english-v3")
        card.get_by_role("switch", name="Rerank vector results").click()
        card.get_by_label("Rerank provider").select_option("")
        card.get_by_label("Rerank model id").fill("")
        card.get_by_label("Rerank model id").press("Enter")
        expect(card.locator("#eng-rerank-result")).to_have_text("Saved: rerank provider/model = unset.")
        saved = studio.api.get("/api/settings/memory").json()
        assert saved["rerankEnabled"] is False and saved["rerankProviderModel"] is None
    finally:
        studio.api.delete("/api/providers/rr")


UNLABELLED = """(panel) => [...panel.querySelectorAll("input, select, textarea, button")]
  .filter((c) => !c.labels?.length && !c.getAttribute("aria-label") && !c.getAttribute("aria-labelledby"))
  .filter((c) => c.tagName !== "BUTTON" || !c.textContent.trim())
  .map((c) => c.outerHTML)"""


def test_every_control_has_a_label(page: Any, studio: Studio) -> None:
    for tab in ("playground", "engine"):
        open_tab(page, tab)
        if tab == "playground":
            page.get_by_label("Query").fill("editor")
            page.get_by_role("button", name="Simulate").click()
            expect(page.locator(".pg-summary")).to_be_visible()
        else:
            expect(chip(page, "keyword")).to_be_visible()
        assert page.locator(f"#panel-{tab}").evaluate(UNLABELLED) == []


# -- screenshots -------------------------------------------------------------------------------


def test_screenshots(page: Any, phone_page: Any, studio: Studio) -> None:
    put_settings(studio, embeddingSource="hashing", vectorStore="auto")
    add_memory(studio, "preference:theme", "prefers a dark theme in the editor")
    add_memory(studio, "tool:editor", "edits code with Neovim and tmux", type="procedural")
    embed_everything(studio)
    open_tab(page, "playground")
    page.get_by_label("Query").fill("which editor and theme do I use")
    page.get_by_role("button", name="Simulate").click()
    expect(page.locator(".pg-item").first).to_be_visible()
    screenshot(page, "playground-desktop")

    studio.api.put(
        "/api/settings/qdrant", json={"enabled": True, "host": ":memory:", "port": 6333}
    ).raise_for_status()
    try:
        wait_until(lambda: engine_status(studio)["qdrant"]["serving"])
        open_tab(page, "engine")
        expect(chip(page, "qdrant").locator(".eng-chip-state")).to_have_text("available")
        screenshot(page, "engine-desktop")
        open_tab(phone_page, "engine")
        expect(chip(phone_page, "qdrant").locator(".eng-chip-state")).to_have_text("available")
        assert phone_page.evaluate("document.documentElement.scrollWidth") <= 390
        screenshot(phone_page, "engine-phone")
    finally:
        disable_qdrant(studio)
