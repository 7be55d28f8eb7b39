"""The Memories tab in Chromium: list, filters, paging, add, edit, delete, history,
export/import, Compact old and the health dot, at desktop and phone width.

The server (and its database) is shared by the module, so every test works on API keys
of its own and checks what the UI changed through the admin API.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from conftest import Studio, screenshot
from playwright.sync_api import expect
from servers import JSON_LINES

XSS = "<img src=x onerror=alert(1)>"
UNLABELLED = """root => [...root.querySelectorAll("input, select, textarea, button")]
    .filter(c => !(c.labels?.length || c.getAttribute("aria-label") || c.textContent.trim()))
    .map(c => c.outerHTML)"""


# -- helpers -----------------------------------------------------------------------------------


def new_key(studio: Studio, name: str) -> tuple[str, str]:
    """A client key with a unique name: (id, name)."""
    unique = f"{name}-{uuid.uuid4().hex[:6]}"
    response = studio.api.post("/api/keys", json={"name": unique})
    assert response.status_code == 201, response.text
    return response.json()["key"]["id"], unique


def add(studio: Studio, owner: str, key: str, content: str, **fields: Any) -> dict[str, Any]:
    body = {"apiKeyId": owner, "key": key, "content": content, **fields}
    response = studio.api.post("/api/memory", json=body)
    assert response.status_code == 200, response.text
    return response.json()["memory"]  # type: ignore[no-any-return]


def import_records(studio: Studio, records: list[dict[str, Any]]) -> None:
    body = "\n".join(json.dumps(r) for r in records)
    response = studio.api.post("/api/memory/import", headers=JSON_LINES, content=body)
    assert response.status_code == 200 and response.json()["errors"] == [], response.text


def memories_of(studio: Studio, owner: str) -> list[dict[str, Any]]:
    response = studio.api.get("/api/memory", params={"apiKeyId": owner, "limit": 200})
    return response.json()["data"]  # type: ignore[no-any-return]


def days_ago(days: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def open_tab(page: Any, key_name: str | None = None) -> Any:
    """Memory Studio on the Memories tab, optionally filtered to one key; returns the panel."""
    page.goto("/dashboard/memory?tab=memories")
    panel = page.locator("#panel-memories")
    if key_name:
        panel.get_by_label("API key", exact=True).select_option(label=key_name)
    settled(panel)
    return panel


def settled(panel: Any) -> None:
    """Wait until the newest list request has been answered and shown."""
    expect(panel.locator("table[aria-label='Memories']")).not_to_have_attribute("aria-busy", "true")


def rows(panel: Any) -> Any:
    return panel.locator("table[aria-label='Memories'] tbody tr")


def total(panel: Any) -> Any:
    """The "Memories" stat card's number."""
    return panel.locator(".stat .value").first


def row_of(panel: Any, text: str) -> Any:
    return rows(panel).filter(has_text=text)


def action(row: Any, verb: str) -> Any:
    """A row's button ("Edit", "History", "Delete"); its name goes on with the memory key."""
    return row.get_by_role("button", name=re.compile(f"^{verb} "))


# -- add, edit, delete, history -------------------------------------------------------------------


def test_add_asks_for_the_owner_and_the_memory_appears(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "adder")
    panel = open_tab(page, key_name)
    expect(rows(panel)).to_have_text(["No memory matches these filters."])

    panel.get_by_role("button", name="Add memory").click()
    dialog = page.get_by_role("dialog", name="Add memory")
    owner = dialog.get_by_label("Owner (API key)", exact=True)
    expect(owner.locator("option:checked")).to_have_text(key_name)  # the filtered key by default
    dialog.get_by_label("Type", exact=True).select_option("procedural")
    dialog.get_by_label("Key", exact=True).fill("howto:deploy")
    dialog.get_by_label("Content", exact=True).fill("deploys with make release")
    dialog.get_by_role("button", name="Add memory").click()

    expect(dialog).to_be_hidden()
    row = row_of(panel, "deploys with make release")
    expect(row).to_contain_text("procedural")
    expect(row).to_contain_text(key_name)  # owner shown by key name
    [stored] = memories_of(studio, key_id)
    assert stored["type"] == "procedural" and stored["key"] == "howto:deploy"
    assert stored["content"] == "deploys with make release"


def test_add_to_an_owner_that_is_not_a_key(page: Any, studio: Studio) -> None:
    owner = f"legacy-{uuid.uuid4().hex[:6]}"
    panel = open_tab(page)
    panel.get_by_role("button", name="Add memory").click()
    dialog = page.get_by_role("dialog", name="Add memory")
    dialog.get_by_label("Owner (API key)", exact=True).select_option(label="Other owner id…")
    dialog.get_by_label("Key", exact=True).fill("k")
    dialog.get_by_label("Content", exact=True).fill("typed owner")
    dialog.get_by_role("button", name="Add memory").click()
    expect(dialog.get_by_role("alert")).to_have_text("Owner (API key): type the owner id")
    dialog.get_by_label("Owner (API key): owner id").fill(owner)
    dialog.get_by_role("button", name="Add memory").click()
    expect(dialog).to_be_hidden()
    assert [m["content"] for m in memories_of(studio, owner)] == ["typed owner"]


def test_edit_saves_and_invalid_metadata_is_refused_in_the_browser(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "editor")
    memory = add(studio, key_id, "editor:choice", "uses Neovim", metadata={"source": "api"})
    panel = open_tab(page, key_name)
    puts: list[str] = []
    page.on("request", lambda r: puts.append(r.url) if r.method == "PUT" else None)

    action(row_of(panel, "uses Neovim"), "Edit").click()
    form = panel.get_by_role("form", name="Edit memory editor:choice")
    metadata = form.get_by_label("Metadata (JSON object)")
    expect(metadata).to_have_value('{\n  "source": "api"\n}')
    form.get_by_label("Content", exact=True).fill("uses Helix")
    metadata.fill("{source: api")
    form.get_by_role("button", name="Save").click()
    expect(form.get_by_role("alert")).to_contain_text("Metadata is not valid JSON")
    expect(metadata).to_have_attribute("aria-invalid", "true")
    metadata.fill("[1, 2]")
    form.get_by_role("button", name="Save").click()
    expect(form.get_by_role("alert")).to_contain_text("Metadata must be a JSON object")
    assert puts == []  # nothing was sent
    assert memories_of(studio, key_id)[0]["content"] == "uses Neovim"

    metadata.fill('{"source": "dashboard", "tags": ["editor"]}')
    form.get_by_label("Type", exact=True).select_option("semantic")
    form.get_by_label("Key", exact=True).fill("editor:current")
    form.get_by_label("Expires").fill("2030-06-15T12:00")
    form.get_by_role("button", name="Save").click()

    expect(form).to_be_hidden()
    expect(row_of(panel, "uses Helix")).to_contain_text("semantic")
    stored = studio.api.get(f"/api/memory/{memory['id']}").json()["memory"]
    assert stored["content"] == "uses Helix" and stored["key"] == "editor:current"
    assert stored["type"] == "semantic"
    assert stored["metadata"] == {"source": "dashboard", "tags": ["editor"]}
    assert stored["expiresAt"].startswith("2030-06-15")
    assert len(puts) == 1


def test_the_editor_says_where_a_memory_came_from(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "provenance")
    learned = {
        "role": "user",
        "speaker": XSS,
        "requestId": "req_42",
        "sessionId": "s1",
        "learnedAt": "2026-05-08T14:03:00Z",
    }
    add(studio, key_id, "home:city", "lives in Lisbon", metadata=learned)
    add(studio, key_id, "tool:editor", "uses Helix")
    panel = open_tab(page, key_name)

    action(row_of(panel, "lives in Lisbon"), "Edit").click()
    form = panel.get_by_role("form", name="Edit memory home:city")
    line = f"learned from request req_42 at 2026-05-08 14:03 UTC ({XSS}, session s1)"
    expect(form.locator(".provenance")).to_have_text(line)  # the speaker shown as text
    assert panel.locator("img").count() == 0
    action(row_of(panel, "uses Helix"), "Edit").click()
    expect(panel.get_by_role("form", name="Edit memory tool:editor").locator(".provenance")).to_have_count(0)


def test_a_memory_without_a_key_is_added_and_edited(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "keyless")
    panel = open_tab(page, key_name)
    panel.get_by_role("button", name="Add memory").click()
    dialog = page.get_by_role("dialog", name="Add memory")
    dialog.get_by_label("Content", exact=True).fill("likes green tea")
    dialog.get_by_role("button", name="Add memory").click()  # no key given
    expect(dialog).to_be_hidden()
    expect(row_of(panel, "likes green tea")).to_contain_text("no key")

    action(row_of(panel, "likes green tea"), "Edit").click()
    form = panel.get_by_role("form", name="Edit memory likes green tea")
    form.get_by_label("Content", exact=True).fill("likes oolong")
    form.get_by_role("button", name="Save").click()
    expect(form).to_be_hidden()
    expect(row_of(panel, "likes oolong")).to_be_visible()
    [stored] = memories_of(studio, key_id)
    assert (stored["content"], stored["key"]) == ("likes oolong", "")


def test_delete_asks_for_confirmation(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "deleter")
    memory = add(studio, key_id, "doomed", "delete me")
    add(studio, key_id, "kept", "keep me")
    panel = open_tab(page, key_name)

    action(row_of(panel, "delete me"), "Delete").click()
    page.get_by_role("dialog", name="Delete memory?").get_by_role("button", name="Cancel").click()
    expect(row_of(panel, "delete me")).to_be_visible()

    action(row_of(panel, "delete me"), "Delete").click()
    page.get_by_role("dialog", name="Delete memory?").get_by_role("button", name="Delete").click()
    expect(row_of(panel, "delete me")).to_have_count(0)
    expect(row_of(panel, "keep me")).to_be_visible()
    assert studio.api.get(f"/api/memory/{memory['id']}").status_code == 404


def test_history_shows_every_change(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "history")
    memory = add(studio, key_id, "editor", "uses Vim")
    studio.api.put(f"/api/memory/{memory['id']}", json={"content": "uses Emacs"}).raise_for_status()
    panel = open_tab(page, key_name)

    action(row_of(panel, "uses Emacs"), "History").click()
    dialog = page.get_by_role("dialog", name="History of editor")
    entries = dialog.locator("tbody tr")
    expect(entries).to_have_count(2)
    expect(entries.nth(0)).to_contain_text("ADD by api")
    expect(entries.nth(1)).to_contain_text("UPDATE by api")
    expect(entries.nth(1).locator("del")).to_have_text("uses Vim")
    expect(entries.nth(1).locator("ins")).to_have_text("uses Emacs")
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()


# -- browsing -----------------------------------------------------------------------------------


def test_search_is_debounced_and_type_filter_narrows(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "search")
    add(studio, key_id, "fruit:1", "likes apple pie")
    add(studio, key_id, "fruit:2", "apple juice in the morning")
    add(studio, key_id, "fruit:3", "went to buy bananas", type="episodic")
    page.clock.install()
    panel = open_tab(page, key_name)
    expect(rows(panel)).to_have_count(3)
    searches: list[str] = []
    page.on("request", lambda r: searches.append(r.url) if "q=" in r.url else None)

    page.clock.pause_at(datetime.now() + timedelta(seconds=1))  # timers fire only when told
    panel.get_by_label("Search").press_sequentially("apple")
    page.clock.run_for(299)
    assert searches == []
    with page.expect_response(lambda r: "q=apple" in r.url):
        page.clock.run_for(1)
    page.clock.resume()
    assert len(searches) == 1  # one request for the whole word, 300 ms after the last key
    expect(rows(panel)).to_have_count(2)
    expect(total(panel)).to_have_text("2")

    panel.get_by_label("Search").fill("")
    panel.get_by_label("Type", exact=True).select_option("episodic")
    expect(rows(panel)).to_have_count(1)
    expect(rows(panel)).to_contain_text("episodic")
    expect(rows(panel)).to_contain_text("went to buy bananas")


def test_key_filter_lists_keys_unowned_and_typed_owners(page: Any, studio: Studio) -> None:
    a_id, a_name = new_key(studio, "alpha")
    b_id, b_name = new_key(studio, "beta")
    typed = f"owner-{uuid.uuid4().hex[:6]}"
    add(studio, a_id, "x", "alpha fact")
    add(studio, b_id, "x", "beta fact")
    add(studio, typed, "x", "typed owner fact")
    unowned = f"unowned fact {uuid.uuid4().hex[:6]}"
    add(studio, "", "x" + unowned, unowned)
    panel = open_tab(page)
    owner = panel.get_by_label("API key", exact=True)

    for text in ("alpha fact", "beta fact", "typed owner fact", unowned):
        expect(row_of(panel, text)).to_have_count(1)  # all keys by default
    owner.select_option(label=a_name)
    expect(rows(panel)).to_have_count(1)
    expect(rows(panel)).to_contain_text("alpha fact")
    owner.select_option(label=b_name)
    expect(rows(panel)).to_contain_text("beta fact")
    owner.select_option(label="Unowned (no key)")
    expect(row_of(panel, unowned)).to_contain_text("unowned")
    expect(row_of(panel, "beta fact")).to_have_count(0)
    owner.select_option(label="Other owner id…")
    panel.get_by_label("API key: owner id").fill(typed)
    expect(rows(panel)).to_have_count(1)
    expect(rows(panel)).to_contain_text(typed)  # not a key: the raw owner id is shown


def test_a_keys_end_users_are_shown_and_filtered(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "saas")
    add(studio, key_id, "", "the key's own note")
    add(studio, key_id, "", "Ana is allergic to peanuts", userId="ana")
    add(studio, key_id, "", "Ben prefers tea", userId="ben")
    panel = open_tab(page, key_name)
    expect(rows(panel)).to_have_count(3)  # the key's own and its users'
    expect(row_of(panel, "Ana is allergic")).to_contain_text("end user ana")
    expect(row_of(panel, "the key's own note")).not_to_contain_text("end user")
    panel.get_by_label("End user", exact=True).fill("ben")
    expect(rows(panel)).to_have_count(1)
    expect(rows(panel)).to_contain_text("Ben prefers tea")


def test_paging_through_45_memories(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "pages")
    import_records(
        studio, [{"apiKeyId": key_id, "key": f"n{n}", "content": f"memory {n}"} for n in range(45)]
    )
    panel = open_tab(page, key_name)
    prev = panel.get_by_role("button", name="Previous page")
    following = panel.get_by_role("button", name="Next page")

    expect(panel.get_by_text("Page 1 of 3")).to_be_visible()
    expect(rows(panel)).to_have_count(20)
    expect(prev).to_be_disabled()
    expect(total(panel)).to_have_text("45")
    following.click()
    expect(panel.get_by_text("Page 2 of 3")).to_be_visible()
    expect(rows(panel)).to_have_count(20)
    following.click()
    expect(panel.get_by_text("Page 3 of 3")).to_be_visible()
    expect(rows(panel)).to_have_count(5)
    expect(following).to_be_disabled()
    prev.click()
    expect(panel.get_by_text("Page 2 of 3")).to_be_visible()
    seen = set(rows(panel).locator("td.content").all_inner_texts())
    assert len(seen) == 20


# -- export, import, compact ----------------------------------------------------------------------


def test_export_all_then_import_into_another_key(page: Any, studio: Studio, tmp_path: Path) -> None:
    src_id, src_name = new_key(studio, "source")
    dst_id, dst_name = new_key(studio, "target")
    records = [
        {"apiKeyId": src_id, "key": f"fact:{n}", "content": f"fact {n}", "metadata": {"n": n}}
        for n in range(25)
    ]
    import_records(studio, records)
    panel = open_tab(page, src_name)
    expect(rows(panel)).to_have_count(20)  # one page of 25

    with page.expect_download() as info:
        panel.get_by_role("button", name="Export").click()
    download = info.value
    assert download.suggested_filename.startswith(f"memroute-{src_name}-")
    assert download.suggested_filename.endswith(".jsonl")
    exported = tmp_path / "export.jsonl"
    download.save_as(exported)
    lines = [json.loads(line) for line in exported.read_text().splitlines()]
    assert len(lines) == 25  # every memory of the key, not just the page
    assert {line["apiKeyId"] for line in lines} == {src_id}
    assert {line["metadata"]["n"] for line in lines} == set(range(25))

    panel.get_by_role("button", name="Import").click()
    dialog = page.get_by_role("dialog", name="Import memories")
    dialog.get_by_label("File").set_input_files(exported)
    dialog.get_by_label("Owner (API key)", exact=True).select_option(label=dst_name)
    dialog.get_by_role("button", name="Import").click()
    expect(dialog).to_contain_text("Imported 25 · skipped 0 (unchanged) · 0 errors")
    imported = memories_of(studio, dst_id)
    assert len(imported) == 25 and {m["metadata"]["n"] for m in imported} == set(range(25))
    assert len(memories_of(studio, src_id)) == 25  # the source is untouched

    dialog.get_by_role("button", name="Import").click()  # again: nothing changes
    expect(dialog).to_contain_text("Imported 0 · skipped 25 (unchanged) · 0 errors")

    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps([{"key": "ok", "content": "fine"}, {"key": "bad", "content": ""}]))
    dialog.get_by_label("File").set_input_files(broken)
    dialog.get_by_role("button", name="Import").click()
    expect(dialog).to_contain_text("Imported 1 · skipped 0 (unchanged) · 1 error")
    expect(dialog.locator(".import-errors li")).to_contain_text("record 2: content")
    dialog.get_by_role("button", name="Close").click()
    assert len(memories_of(studio, dst_id)) == 26


def test_compact_old_lists_candidates_then_compacts(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "compact")
    stamp = days_ago(40)
    old = [
        {
            "apiKeyId": key_id,
            "key": f"old:{n}",
            "content": f"old fact {n}.",
            "createdAt": stamp,
            "updatedAt": stamp,
        }
        for n in range(3)
    ]
    import_records(studio, old)
    add(studio, key_id, "fresh", "a fresh fact")
    panel = open_tab(page, key_name)

    panel.get_by_role("button", name="Compact old").click()
    dialog = page.get_by_role("dialog", name="Compact old memories")
    expect(dialog.get_by_label("Key to compact", exact=True).locator("option:checked")).to_have_text(key_name)
    dialog.get_by_label("Older than (days)").fill("30")
    dialog.get_by_role("button", name="Find candidates").click()
    expect(dialog).to_contain_text(f"3 memories of {key_name}")
    expect(dialog.locator(".candidates tbody tr")).to_have_count(3)
    expect(dialog.locator(".candidates")).not_to_contain_text("fresh")
    assert len(memories_of(studio, key_id)) == 4  # a dry run changes nothing

    dialog.get_by_role("button", name="Compact 3 memories").click()
    expect(dialog.locator(".compact-done")).to_contain_text(
        f"Compacted 3 memories of {key_name} into summary"
    )
    left = memories_of(studio, key_id)
    summary = next(m for m in left if m["type"] == "semantic")
    expect(dialog.locator(".compact-done")).to_contain_text(summary["id"])
    assert sorted(m["key"] for m in left if m is not summary) == ["fresh"]
    dialog.get_by_role("button", name="Close").click()
    expect(rows(panel)).to_have_count(2)

    panel.get_by_role("button", name="Compact old").click()
    dialog.get_by_role("button", name="Find candidates").click()
    expect(dialog).to_contain_text(f"No memory of {key_name} is older than 30 days.")
    expect(dialog.get_by_role("button", name="Compact", exact=True)).to_be_disabled()


# -- health, safety, layout ------------------------------------------------------------------------


def test_health_dot_polls_while_visible_without_leaving_memories(page: Any, studio: Studio) -> None:
    before = studio.api.get("/api/memory").json()["total"]
    checks: list[str] = []

    def health(request_or_response: Any) -> bool:
        return bool(request_or_response.url.endswith("/api/memory/health"))

    page.on("request", lambda r: checks.append(r.url) if health(r) else None)
    page.clock.install()
    panel = open_tab(page)
    card = panel.locator(".health-card")

    expect(card.locator(".dot")).to_have_class("dot ok")
    expect(card.locator(".health-text")).to_have_text("Working")
    expect(card).to_contain_text(re.compile(r"\d+\.\d ms · checked"))
    with page.expect_response(health):
        card.get_by_role("button", name="Check now").click()
    with page.expect_response(health):
        page.clock.run_for(60_000)
    expect(card).to_contain_text("Working")
    assert len(checks) == 3  # on show, on demand, after 60 s

    page.get_by_role("tab", name="Playground").click()
    page.clock.run_for(180_000)
    page.wait_for_timeout(500)  # time for a request the timers might have started
    assert len(checks) == 3  # no polling while the tab is hidden
    assert studio.api.get("/api/memory").json()["total"] == before
    page.get_by_role("tab", name="Memories").click()
    expect(total(panel)).to_have_text(str(before))


def test_memory_text_is_shown_as_text(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "xss")
    add(studio, key_id, "<b>key</b>", XSS)
    alerts: list[str] = []
    page.on("dialog", lambda d: alerts.append(d.message))
    panel = open_tab(page, key_name)

    row = row_of(panel, XSS)
    expect(row.locator("td.content")).to_have_text(XSS)
    expect(row.locator("td.key")).to_have_text("<b>key</b>")
    assert panel.locator("img, b").count() == 0
    action(row, "Edit").click()
    editor = panel.get_by_role("form")
    expect(editor.get_by_label("Content", exact=True)).to_have_value(XSS)
    page.keyboard.press("Escape")  # closes the editor, back to its button
    expect(editor).to_have_count(0)
    expect(action(row, "Edit")).to_be_focused()
    assert alerts == []


def test_every_control_has_a_label(page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "labels")
    add(studio, key_id, "k", "labelled")
    panel = open_tab(page, key_name)
    action(row_of(panel, "labelled"), "Edit").click()
    assert panel.evaluate(UNLABELLED) == []
    for button, title in (
        ("Add memory", "Add memory"),
        ("Import", "Import memories"),
        ("Compact old", "Compact old memories"),
    ):
        panel.get_by_role("button", name=button, exact=True).click()
        dialog = page.get_by_role("dialog", name=title)
        assert dialog.evaluate(UNLABELLED) == []
        dialog.get_by_role("button", name=re.compile("^(Cancel|Close)$")).click()
        expect(dialog).to_be_hidden()


def test_phone_width_add_flow(phone_page: Any, studio: Studio) -> None:
    page = phone_page
    key_id, key_name = new_key(studio, "phone")
    add(studio, key_id, "x", "a memory with a rather long text so that the row has something to wrap " * 2)
    panel = open_tab(page, key_name)

    panel.get_by_role("button", name="Add memory").click()
    dialog = page.get_by_role("dialog", name="Add memory")
    dialog.get_by_label("Key", exact=True).fill("phone:added")
    dialog.get_by_label("Content", exact=True).fill("added on a phone")
    dialog.get_by_role("button", name="Add memory").click()
    expect(row_of(panel, "added on a phone")).to_be_visible()
    assert {m["key"] for m in memories_of(studio, key_id)} == {"x", "phone:added"}

    # the page itself never scrolls sideways; the table does, inside its frame
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    wrap = panel.locator(".table-wrap.memories")
    assert wrap.evaluate("w => w.scrollWidth > w.clientWidth")
    action(row_of(panel, "added on a phone"), "Edit").click()
    editor = panel.get_by_role("form", name="Edit memory phone:added")
    assert editor.bounding_box()["width"] <= 390
    editor.get_by_role("button", name="Cancel").click()


def test_screenshots(page: Any, phone_page: Any, studio: Studio) -> None:
    key_id, key_name = new_key(studio, "laptop")
    add(studio, key_id, "preference:editor", "uses Helix with the default keymap", type="factual")
    add(
        studio,
        key_id,
        "project:memroute",
        "works on memroute, a memory layer for LLM clients",
        type="semantic",
    )
    add(
        studio,
        key_id,
        "howto:release",
        "releases with `make release` after the CI is green",
        type="procedural",
    )
    add(studio, key_id, "meeting:2026-06-01", "talked about the dashboard screenshots", type="episodic")
    for shot, target in (("memories-desktop", page), ("memories-phone", phone_page)):
        panel = open_tab(target, key_name)
        expect(rows(panel)).to_have_count(4)
        expect(panel.locator(".health-card .dot")).to_have_class("dot ok")
        screenshot(target, shot)
