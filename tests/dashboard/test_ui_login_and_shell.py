"""Login, logout, the session cookie, tabs and the header switches, in Chromium."""

from __future__ import annotations

from typing import Any

from conftest import Studio, screenshot
from playwright.sync_api import expect
from servers import ADMIN


def test_login_logout_and_the_cookie(anonymous_page: Any, studio: Studio) -> None:
    page = anonymous_page
    page.goto("/dashboard/memory?tab=engine")
    expect(page).to_have_url(f"{studio.url}/dashboard/login?next=%2Fdashboard%2Fmemory%3Ftab%3Dengine")
    page.get_by_label("Admin token").fill("wrong-token")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("Wrong admin token")
    page.get_by_label("Admin token").fill(ADMIN)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(f"{studio.url}/dashboard/memory?tab=engine")
    expect(page.get_by_role("tab", name="Engine")).to_have_attribute("aria-selected", "true")
    cookie = next(c for c in page.context.cookies() if c["name"] == "memroute_session")
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert ADMIN not in cookie["value"]
    assert page.evaluate("document.cookie") == ""  # scripts cannot read it
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(f"{studio.url}/dashboard/login")
    page.goto("/dashboard/memory")
    expect(page).to_have_url(f"{studio.url}/dashboard/login?next=%2Fdashboard%2Fmemory")


def test_root_leads_to_memory_studio_and_tabs_follow_the_url(page: Any, studio: Studio) -> None:
    page.goto("/")
    expect(page).to_have_url(f"{studio.url}/dashboard/memory")
    expect(page.get_by_role("tab", name="Memories")).to_have_attribute("aria-selected", "true")
    page.get_by_role("tab", name="Playground").click()
    expect(page).to_have_url(f"{studio.url}/dashboard/memory?tab=playground")
    expect(page.locator("#panel-playground")).to_be_visible()
    expect(page.locator("#panel-memories")).to_be_hidden()
    page.go_back()
    expect(page.get_by_role("tab", name="Memories")).to_have_attribute("aria-selected", "true")
    page.goto("/dashboard/memory?tab=nonsense")
    expect(page.get_by_role("tab", name="Memories")).to_have_attribute("aria-selected", "true")


def test_the_switches_take_a_click_only_once_they_show_the_saved_settings(page: Any, studio: Studio) -> None:
    # A click made before the saved settings arrive would be undone when they do.
    studio.api.put("/api/settings/memory", json={"enabled": False})
    held: list[Any] = []
    page.route("**/api/settings/memory", lambda route: held.append(route))  # its answer waits
    page.goto("/dashboard/memory")
    switch = page.get_by_role("switch", name="Memory")
    expect(switch).to_be_disabled()
    for route in held:
        route.continue_()
    page.unroute("**/api/settings/memory")
    expect(switch).to_be_enabled()
    expect(switch).not_to_be_checked()
    switch.click()
    expect(page.locator("#cost-warning")).to_be_visible()
    assert studio.api.get("/api/settings/memory").json()["enabled"] is True


def test_memory_switch_persists_and_shows_the_cost_warning(page: Any, studio: Studio) -> None:
    studio.api.put("/api/settings/memory", json={"enabled": False, "maxTokens": 1500})
    page.goto("/dashboard/memory")
    switch = page.get_by_role("switch", name="Memory")
    expect(switch).not_to_be_checked()
    expect(page.locator("#cost-warning")).to_be_hidden()
    switch.click()
    expect(page.locator("#cost-warning")).to_be_visible()
    expect(page.locator("#cost-warning")).to_contain_text("up to 1500 tokens")
    expect(page.get_by_role("switch", name="Learn from chats")).to_be_enabled()
    assert studio.api.get("/api/settings/memory").json()["enabled"] is True
    page.reload()
    expect(page.get_by_role("switch", name="Memory")).to_be_checked()
    page.get_by_role("switch", name="Inject into chats").click()
    expect(page.get_by_role("status")).to_contain_text("Inject into chats off")
    assert studio.api.get("/api/settings/memory").json()["injectionEnabled"] is False
    keep = page.get_by_label("Keep what is said")
    expect(keep).to_have_value("user")
    keep.select_option("all")
    expect(page.get_by_role("status")).to_contain_text("Keeping messages and replies")
    assert studio.api.get("/api/settings/memory").json()["captureTurns"] == "all"
    page.get_by_role("switch", name="Learn from chats").click()
    expect(keep).to_be_disabled()  # nothing is kept while learning is off
    screenshot(page, "header-switches")
