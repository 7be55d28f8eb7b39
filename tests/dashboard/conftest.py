"""Memory Studio in a real browser: Debian's Chromium driven by Playwright for Python,
against the real memroute server on 127.0.0.1 with a temporary database.

Debian's headless shell (`chromium-headless-shell`: the same Chromium built for headless
use only, what Playwright itself runs headless) is used where it is installed: the full
browser in its headless mode took about three times its CPU for the same tests (~70 s
against ~25 s). In CI (`CI=true`) a missing Chromium fails the tests; elsewhere it skips
them with the command that installs it. Every test fails on a console error or an uncaught page
error. Screenshots go to `test-artifacts/dashboard/` (or $MEMROUTE_TEST_ARTIFACTS).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from environment import missing
from servers import ADMIN, management_api

CHROMIUM_CANDIDATES = (
    "/usr/lib/chromium/chromium-headless-shell",
    "/usr/bin/chromium-headless-shell",
    "/usr/bin/chromium",
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium-browser",
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ARTIFACTS = Path(os.environ.get("MEMROUTE_TEST_ARTIFACTS", "test-artifacts")) / "dashboard"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def chromium_path() -> str:
    for candidate in CHROMIUM_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    found = shutil.which("chromium-headless-shell") or shutil.which("chromium")
    if found:
        return found
    missing("Chromium is missing: apt-get install -y chromium-headless-shell")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium for one test module. Not for the session: Playwright's sync API keeps an
    asyncio loop running in the main thread until it stops, and later tests that run
    their own loop (`asyncio.run`, the MCP client) would fail."""
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=FLAGS)
        yield browser
        browser.close()


class Studio:
    """The running server: its URL and an admin API client for setting up data."""

    def __init__(self, url: str, api: httpx.Client) -> None:
        self.url = url
        self.api = api

    def session_cookie(self) -> dict[str, Any]:
        response = httpx.post(f"{self.url}/api/session", json={"token": ADMIN}, timeout=30)
        response.raise_for_status()
        return {"name": "memroute_session", "value": response.cookies["memroute_session"], "url": self.url}


@pytest.fixture(scope="module")
def studio_env() -> dict[str, str]:
    """Extra environment of the module's server (override in a test module)."""
    return {}


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory, studio_env: dict[str, str]) -> Iterator[Studio]:
    """One server per test module (a fresh database each)."""
    db = tmp_path_factory.mktemp("studio") / "memroute.db"
    with management_api(db, **studio_env) as api:
        yield Studio(str(api.base_url).rstrip("/"), api)


class PageErrors:
    """Console errors, uncaught exceptions, 404s and 5xx responses. A 4xx from the API is
    part of a flow (a wrong token, a rejected value) and is checked by the tests; the
    browser's own "Failed to load resource" line for it is not an error of the page."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def watch(self, page: Any) -> None:
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.messages.append(f"page error: {exc}"))
        page.on("response", self._response)

    def _console(self, msg: Any) -> None:
        if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
            self.messages.append(f"console: {msg.text}")

    def _response(self, response: Any) -> None:
        if response.status == 404 or response.status >= 500:
            self.messages.append(f"HTTP {response.status}: {response.request.method} {response.url}")


def _page(browser: Any, studio: Studio, viewport: dict[str, int], logged_in: bool) -> Iterator[Any]:
    context = browser.new_context(base_url=studio.url, viewport=viewport)
    if logged_in:
        context.add_cookies([studio.session_cookie()])
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors = PageErrors()
    errors.watch(page)
    yield page
    context.close()
    assert errors.messages == [], "the page logged errors"


@pytest.fixture
def page(browser: Any, studio: Studio) -> Iterator[Any]:
    """A logged-in page at 1280 px (the session cookie comes from POST /api/session)."""
    yield from _page(browser, studio, DESKTOP, logged_in=True)


@pytest.fixture
def phone_page(browser: Any, studio: Studio) -> Iterator[Any]:
    """A logged-in page at phone width (390 px)."""
    yield from _page(browser, studio, PHONE, logged_in=True)


@pytest.fixture
def anonymous_page(browser: Any, studio: Studio) -> Iterator[Any]:
    """A page with no session."""
    yield from _page(browser, studio, DESKTOP, logged_in=False)


def screenshot(page: Any, name: str) -> Path:
    """Save a full-page screenshot into the artefact folder."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
