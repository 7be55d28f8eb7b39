"""The API keys and providers pages in Chromium: a key's secret is shown once and really
works, revoking stops it, a provider's key never comes back, and the API's errors show."""

from __future__ import annotations

import re
from typing import Any

import httpx
from conftest import Studio, screenshot
from playwright.sync_api import expect

UPSTREAM_KEY = "sk-upstream-4f9c2e7a1b8d6035-never-shown"


def gateway_status(studio: Studio, secret: str) -> int:
    """What the gateway answers a client with this secret: 401 if the key is refused. The
    body has no model, so an accepted key gets a 400 without any provider being called."""
    response = httpx.post(
        f"{studio.url}/v1/chat/completions",
        json={"messages": []},
        headers={"Authorization": f"Bearer {secret}"},
        timeout=30,
    )
    return response.status_code


def key_named(studio: Studio, name: str) -> dict[str, Any]:
    return next(k for k in studio.api.get("/api/keys").json()["keys"] if k["name"] == name)


def providers(studio: Studio) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in studio.api.get("/api/providers").json()["providers"]}


def create_key_in_page(page: Any, name: str) -> str:
    """Create a key through the form; returns the secret the dialog shows (left open)."""
    page.get_by_label("Name", exact=True).fill(name)
    page.get_by_role("button", name="Create key").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("you will not see it again")
    secret = page.locator("#new-secret").inner_text()
    assert re.fullmatch(r"mr-\S{20,}", secret)
    return secret


# -- keys ----------------------------------------------------------------------------------


def test_a_new_key_shows_its_secret_once_and_the_secret_works(page: Any, studio: Studio) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=studio.url)
    page.goto("/dashboard/keys")
    expect(page.locator("#howto-snippet")).to_contain_text(f'base_url="{studio.url}/v1"')
    secret = create_key_in_page(page, "laptop")

    stored = key_named(studio, "laptop")
    assert stored["active"] and stored["prefix"] == secret[:8]
    assert gateway_status(studio, secret) == 400  # accepted: only the body is wrong
    assert gateway_status(studio, secret[:-1] + ("A" if secret[-1] != "A" else "B")) == 401

    dialog = page.get_by_role("dialog")
    expect(dialog.locator("pre")).to_contain_text(f'api_key="{secret}"')
    expect(dialog.locator("#new-key-id")).to_have_text(stored["id"])
    dialog.get_by_role("button", name="Copy").click()
    expect(page.locator("#copy-status")).to_have_text("Copied to the clipboard.")
    assert page.evaluate("navigator.clipboard.readText()") == secret

    dialog.get_by_role("button", name="Done").click()
    expect(dialog).to_have_count(0)
    assert secret not in page.content()
    snippet = page.locator("#howto-snippet")
    expect(snippet).to_contain_text('api_key="YOUR_MEMROUTE_KEY"')
    expect(snippet).not_to_contain_text(secret)

    row = page.locator("tbody tr", has_text="laptop")
    expect(row).to_contain_text(f"{secret[:8]}…")
    expect(row.locator("td.id")).to_have_text(stored["id"])  # the owner id the CLI and API ask for
    expect(row).to_contain_text("active")
    expect(page.get_by_role("status")).to_contain_text("Key “laptop” created.")
    page.reload()
    expect(page.locator("tbody tr", has_text="laptop")).to_contain_text("active")
    assert secret not in page.content()


def test_copy_without_a_clipboard_selects_the_secret(page: Any, studio: Studio) -> None:
    page.add_init_script("Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => undefined})")
    page.goto("/dashboard/keys")
    secret = create_key_in_page(page, "no-clipboard")
    page.get_by_role("dialog").get_by_role("button", name="Copy").click()
    expect(page.locator("#copy-status")).to_contain_text("press Ctrl+C")
    assert page.evaluate("getSelection().toString()") == secret
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert page.evaluate("getSelection().toString()") == ""
    assert secret not in page.content()


def test_a_key_needs_a_name(page: Any, studio: Studio) -> None:
    before = len(studio.api.get("/api/keys").json()["keys"])
    page.goto("/dashboard/keys")
    page.get_by_role("button", name="Create key").click()
    expect(page.locator("#key-name-error")).to_have_text(
        "Enter a name for the key, e.g. the app or machine that will use it."
    )
    expect(page.get_by_label("Name", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert len(studio.api.get("/api/keys").json()["keys"]) == before


def test_revoking_a_key_stops_it(page: Any, studio: Studio) -> None:
    secret = studio.api.post("/api/keys", json={"name": "ci-runner"}).json()["secret"]
    assert gateway_status(studio, secret) == 400
    page.goto("/dashboard/keys")
    row = page.locator("tbody tr", has_text="ci-runner")
    expect(row).to_contain_text("active")

    page.get_by_role("button", name="Revoke key ci-runner").click()
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    expect(row).to_contain_text("active")
    assert key_named(studio, "ci-runner")["active"] is True

    page.get_by_role("button", name="Revoke key ci-runner").click()
    expect(page.get_by_role("dialog")).to_contain_text("The memories it owns stay")
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(row).to_contain_text("revoked")
    expect(row.get_by_role("button")).to_have_count(0)
    assert key_named(studio, "ci-runner")["active"] is False
    assert gateway_status(studio, secret) == 401


def test_a_keys_limits_are_changed_in_a_dialog_and_a_bad_value_is_refused(page: Any, studio: Studio) -> None:
    studio.api.post("/api/keys", json={"name": "batch-job"})
    page.goto("/dashboard/keys")
    row = page.locator("tbody tr", has_text="batch-job")
    expect(row.locator(".limits")).to_have_text("default at once · default a minute")

    page.get_by_role("button", name="Limits of key batch-job").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Requests at once").fill("3")
    dialog.get_by_label("Requests a minute").fill("0")
    dialog.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("Limits of “batch-job” saved.")
    expect(row.locator(".limits")).to_have_text("3 at once · no limit a minute")
    stored = key_named(studio, "batch-job")
    assert (stored["maxConcurrent"], stored["requestsPerMinute"]) == (3, 0)

    page.get_by_role("button", name="Limits of key batch-job").click()
    expect(dialog.get_by_label("Requests at once")).to_have_value("3")
    dialog.get_by_label("Requests at once").fill("0")  # below 1: the server refuses it
    dialog.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("Could not save the limits")
    assert key_named(studio, "batch-job")["maxConcurrent"] == 3

    page.get_by_role("button", name="Limits of key batch-job").click()
    dialog.get_by_label("Requests at once").fill("")  # empty: the server's default again
    dialog.get_by_role("button", name="Save").click()
    expect(row.locator(".limits")).to_have_text("default at once · no limit a minute")
    assert key_named(studio, "batch-job")["maxConcurrent"] is None

    page.get_by_role("button", name="Limits of key batch-job").click()
    dialog.get_by_role("switch", name="Require an end user").check()
    dialog.get_by_role("button", name="Save").click()
    expect(row.locator(".limits")).to_have_text("default at once · no limit a minute · end user required")
    assert key_named(studio, "batch-job")["requiresUserId"] is True


# -- providers -----------------------------------------------------------------------------


def test_a_provider_key_is_set_but_never_shown(page: Any, studio: Studio) -> None:
    received: list[Any] = []
    json_bodies: list[str] = []

    def read_received() -> None:  # before a navigation: bodies are gone after one
        json_bodies.extend(r.text() for r in received if "json" in (r.headers.get("content-type") or ""))
        received.clear()

    page.on("response", lambda response: received.append(response))
    page.goto("/dashboard/providers")
    expect(page.get_by_role("radio", name="Store a key")).to_be_checked()
    page.get_by_label("ID", exact=True).fill("openai")
    page.get_by_label("Base URL", exact=True).fill("https://api.openai.com/v1/")
    page.get_by_label("API key", exact=True).fill(UPSTREAM_KEY)
    page.get_by_role("switch", name="Default provider").check()
    page.get_by_role("button", name="Add provider").click()

    row = page.locator("tbody tr", has_text="openai")
    expect(row).to_contain_text("https://api.openai.com/v1")
    expect(row).to_contain_text("key set")
    expect(row).to_contain_text("default")
    expect(page.get_by_label("API key", exact=True)).to_have_value("")
    stored = providers(studio)["openai"]
    assert stored["hasStoredKey"] and stored["default"] and stored["apiKeyEnv"] is None

    read_received()
    page.reload()
    expect(page.locator("tbody tr", has_text="openai")).to_contain_text("key set")
    page.get_by_role("button", name="Edit provider openai").click()
    expect(page.get_by_label("API key", exact=True)).to_have_value("")
    assert UPSTREAM_KEY not in page.content()
    read_received()
    assert any('"hasStoredKey":true' in body for body in json_bodies)
    assert all(UPSTREAM_KEY not in body for body in json_bodies)
    assert all(UPSTREAM_KEY[:-4] not in body for body in json_bodies)


def test_editing_a_provider_keeps_or_replaces_its_key(page: Any, studio: Studio) -> None:
    studio.api.post(
        "/api/providers",
        json={"id": "local", "baseUrl": "http://127.0.0.1:11434/v1", "apiKey": "local-secret-123456"},
    )
    page.goto("/dashboard/providers")
    page.get_by_role("button", name="Edit provider local").click()
    expect(page.get_by_role("heading", name="Edit provider local")).to_be_visible()
    expect(page.get_by_label("ID", exact=True)).to_have_attribute("readonly", "")
    expect(page.get_by_role("radio", name="Store a key")).to_be_checked()
    expect(page.get_by_label("API key", exact=True)).to_have_attribute("placeholder", "unchanged")
    page.get_by_label("Base URL", exact=True).fill("http://127.0.0.1:8080/v1")
    page.get_by_role("button", name="Save changes").click()

    row = page.locator("tbody tr", has_text="local")
    expect(row).to_contain_text("http://127.0.0.1:8080/v1")
    expect(page.get_by_role("heading", name="Add a provider")).to_be_visible()
    stored = providers(studio)["local"]
    assert stored["baseUrl"] == "http://127.0.0.1:8080/v1"
    assert stored["hasStoredKey"] is True  # the empty key field left the key alone

    page.get_by_role("button", name="Edit provider local").click()
    page.get_by_role("radio", name="From an environment variable").check()
    page.get_by_label("Environment variable", exact=True).fill("LOCAL_LLM_KEY")
    page.get_by_role("button", name="Save changes").click()
    expect(row).to_contain_text("from env")
    expect(row).to_contain_text("LOCAL_LLM_KEY")
    stored = providers(studio)["local"]
    assert stored["apiKeyEnv"] == "LOCAL_LLM_KEY" and stored["hasStoredKey"] is False

    page.get_by_role("button", name="Edit provider local").click()
    expect(page.get_by_role("radio", name="From an environment variable")).to_be_checked()
    page.get_by_role("radio", name="No key").check()
    page.get_by_role("button", name="Save changes").click()
    expect(row).to_contain_text("no key")
    stored = providers(studio)["local"]
    assert stored["apiKeyEnv"] is None and stored["hasStoredKey"] is False


def test_the_api_errors_show_next_to_the_form_and_nothing_is_saved(page: Any, studio: Studio) -> None:
    studio.api.post("/api/providers", json={"id": "groq", "baseUrl": "https://api.groq.com/openai/v1"})
    page.goto("/dashboard/providers")
    page.get_by_label("ID", exact=True).fill("bad")
    page.get_by_label("Base URL", exact=True).fill("ftp://example.com/v1")
    page.get_by_role("radio", name="No key").check()
    page.get_by_role("button", name="Add provider").click()
    error = page.get_by_role("alert").filter(has_text="Base URL")
    expect(error).to_have_text("Base URL: must be an http:// or https:// URL, e.g. https://api.openai.com/v1")
    base_url = page.get_by_label("Base URL", exact=True)
    expect(base_url).to_have_attribute("aria-invalid", "true")
    expect(base_url).to_have_accessible_description(re.compile("must be an http://"))
    assert "bad" not in providers(studio)

    page.get_by_label("ID", exact=True).fill("groq")
    base_url.fill("https://example.com/v1")
    page.get_by_role("button", name="Add provider").click()
    expect(page.get_by_role("alert").filter(has_text="already exists")).to_be_visible()
    expect(page.get_by_label("ID", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(base_url).not_to_have_attribute("aria-invalid", "true")
    assert providers(studio)["groq"]["baseUrl"] == "https://api.groq.com/openai/v1"

    page.get_by_role("radio", name="Store a key").check()
    page.get_by_label("ID", exact=True).fill("needs-key")
    page.get_by_role("button", name="Add provider").click()
    expect(page.get_by_role("alert").filter(has_text="Paste the API key")).to_be_visible()
    assert "needs-key" not in providers(studio)

    page.get_by_role("button", name="Edit provider groq").click()
    expect(page.get_by_role("alert")).to_have_count(0)
    base_url.fill("not a url")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("alert").filter(has_text="Base URL")).to_contain_text("must be an http://")
    assert providers(studio)["groq"]["baseUrl"] == "https://api.groq.com/openai/v1"
    page.get_by_role("button", name="Cancel edit").click()
    expect(page.get_by_role("heading", name="Add a provider")).to_be_visible()
    expect(page.get_by_label("Base URL", exact=True)).to_have_value("")


def test_deleting_a_provider(page: Any, studio: Studio) -> None:
    studio.api.post("/api/providers", json={"id": "old-proxy", "baseUrl": "https://proxy.example.com/v1"})
    page.goto("/dashboard/providers")
    row = page.locator("tbody tr", has_text="old-proxy")
    page.get_by_role("button", name="Delete provider old-proxy").click()
    page.get_by_role("dialog").get_by_role("button", name="Cancel").click()
    expect(row).to_be_visible()
    page.get_by_role("button", name="Delete provider old-proxy").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(row).to_have_count(0)
    expect(page.get_by_role("status")).to_contain_text("Provider old-proxy deleted.")
    assert "old-proxy" not in providers(studio)


# -- phone width and screenshots -----------------------------------------------------------


def assert_fits_the_screen(page: Any) -> None:
    """No sideways scrolling of the page itself; wide tables scroll inside their frame."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page is {width} px wide"
    wrap = page.locator(".table-wrap")
    assert wrap.evaluate("node => node.scrollWidth > node.clientWidth")


def test_both_pages_work_at_phone_width(phone_page: Any, studio: Studio) -> None:
    page = phone_page
    page.goto("/dashboard/keys")
    secret = create_key_in_page(page, "phone")
    box = page.get_by_role("dialog").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    page.get_by_role("dialog").get_by_role("button", name="Done").click()
    assert_fits_the_screen(page)
    page.get_by_role("button", name="Revoke key phone").click()  # reached by scrolling the table
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(page.locator("tbody tr", has_text="phone")).to_contain_text("revoked")
    assert gateway_status(studio, secret) == 401
    page.reload()
    expect(page.locator("tbody tr", has_text="phone")).to_contain_text("revoked")
    screenshot(page, "keys-phone")

    page.goto("/dashboard/providers")
    page.get_by_label("ID", exact=True).fill("mobile")
    page.get_by_label("Base URL", exact=True).fill("https://mobile.example.com/v1")
    page.get_by_role("radio", name="No key").check()
    page.get_by_role("button", name="Add provider").click()
    expect(page.locator("tbody tr", has_text="mobile")).to_contain_text("no key")
    assert_fits_the_screen(page)
    page.get_by_role("button", name="Delete provider mobile").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    expect(page.locator("tbody tr", has_text="mobile")).to_have_count(0)
    page.reload()
    expect(page.locator("tbody tr").first).to_be_visible()
    screenshot(page, "providers-phone")


def test_screenshots(page: Any, studio: Studio) -> None:
    for provider in providers(studio):
        studio.api.delete(f"/api/providers/{provider}")
    studio.api.post(
        "/api/providers",
        json={"id": "openai", "baseUrl": "https://api.openai.com/v1", "apiKeyEnv": "OPENAI_API_KEY"},
    )
    studio.api.post(
        "/api/providers",
        json={"id": "local", "baseUrl": "http://127.0.0.1:11434/v1", "default": True},
    )
    studio.api.post(
        "/api/providers",
        json={"id": "groq", "baseUrl": "https://api.groq.com/openai/v1", "apiKey": UPSTREAM_KEY},
    )
    page.goto("/dashboard/keys")
    expect(page.locator("tbody tr").first).to_be_visible()
    screenshot(page, "keys-desktop")
    create_key_in_page(page, "screenshot")
    screenshot(page, "keys-secret-dialog")
    page.get_by_role("dialog").get_by_role("button", name="Done").click()

    page.goto("/dashboard/providers")
    expect(page.locator("tbody tr")).to_have_count(3)
    screenshot(page, "providers-desktop")
    page.get_by_label("Base URL", exact=True).fill("ftp://nope")
    page.get_by_label("ID", exact=True).fill("broken")
    page.get_by_role("radio", name="No key").check()
    page.get_by_role("button", name="Add provider").click()
    expect(page.get_by_role("alert").filter(has_text="Base URL")).to_be_visible()
    screenshot(page, "providers-error")


def test_a_providers_wire_format_is_chosen_shown_and_kept_on_edit(page: Any, studio: Studio) -> None:
    page.goto("/dashboard/providers")
    expect(page.get_by_label("Wire format", exact=True)).to_have_value("openai")
    page.get_by_label("ID", exact=True).fill("claude")
    page.get_by_label("Base URL", exact=True).fill("https://api.anthropic.com/v1")
    page.get_by_label("Wire format", exact=True).select_option("anthropic")
    page.get_by_role("radio", name="No key").check()
    page.get_by_role("button", name="Add provider").click()

    row = page.locator("tbody tr", has_text="claude")
    expect(row).to_contain_text("anthropic")
    assert providers(studio)["claude"]["format"] == "anthropic"

    page.get_by_role("button", name="Edit provider claude").click()
    expect(page.get_by_label("Wire format", exact=True)).to_have_value("anthropic")
    page.get_by_label("Base URL", exact=True).fill("https://anthropic.example.com/v1")
    page.get_by_role("button", name="Save changes").click()
    expect(row).to_contain_text("https://anthropic.example.com/v1")
    assert providers(studio)["claude"]["format"] == "anthropic"  # an edit keeps the format
