"""Authentication that holds, over real HTTP: the bounded throttle of wrong admin tokens
(dashboard login, `/api/*`, `/mcp`) and the console's way past it, the admin token's
minimum length, MCP sessions bound to their key, the Host allow-list, JSON bodies only,
and the API reference pages behind the admin."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from click.testing import CliRunner
from error_shape import assert_error
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from servers import ADMIN, AUTH, MCP_INITIALIZE, TLS, LiveServer, ScriptedUpstream, app_server

from memroute.cli import main
from memroute.config import Config
from memroute.errors import InvalidInput, TooManyAttempts
from memroute.web.app import create_app
from memroute.web.guards import allowed_hosts, host_name
from memroute.web.throttle import WINDOW_S, AdminTokenThrottle

TIGHT = {"MEMROUTE_ADMIN_FAILURES_PER_ADDRESS": "3"}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server with the default settings for the tests that leave no throttle state."""
    with app_server(tmp_path_factory.mktemp("auth") / "m.db") as server:
        yield server


def _login(url: str, token: str) -> httpx.Response:
    return httpx.post(f"{url}/api/session", json={"token": token}, timeout=30, verify=TLS)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _mcp_post(url: str, token: str, body: dict[str, Any], session: str | None = None) -> httpx.Response:
    headers = {**MCP_HEADERS, **_bearer(token), **({"mcp-session-id": session} if session else {})}
    return httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=30, verify=TLS)


def _new_key(url: str, name: str) -> tuple[str, str]:
    created = httpx.post(f"{url}/api/keys", json={"name": name}, headers=AUTH, timeout=30, verify=TLS).json()
    return created["key"]["id"], created["secret"]


# -- the throttle --------------------------------------------------------------------------------


def test_wrong_bearer_tokens_on_the_api_are_throttled_and_then_even_the_right_one_waits(
    tmp_path: Path,
) -> None:
    with app_server(tmp_path / "m.db", **TIGHT) as server:
        for _ in range(3):
            assert_error(httpx.get(f"{server.url}/api/memory", headers=_bearer("guess" * 8)), 401)
        locked = httpx.get(f"{server.url}/api/memory", headers=_bearer("guess" * 8))
        error = assert_error(locked, 429)
        assert error["type"] == "rate_limit_error" and "try again in" in error["message"]
        assert 1 <= int(locked.headers["retry-after"]) <= WINDOW_S
        # No answer tells a guesser it was right while the throttle is closed.
        assert_error(httpx.get(f"{server.url}/api/memory", headers=AUTH), 429)
        assert_error(_login(server.url, ADMIN), 429)


def test_wrong_tokens_on_mcp_and_the_login_fill_one_throttle_that_spares_client_keys(tmp_path: Path) -> None:
    with app_server(tmp_path / "m.db", **TIGHT) as server:
        _, secret = _new_key(server.url, "tenant")
        for _ in range(2):
            refused = _mcp_post(server.url, "guess" * 8, MCP_INITIALIZE)
            assert refused.status_code == 401 and refused.json()["error"]["type"] == "authentication_error"
        assert _login(server.url, "guess" * 8).status_code == 401
        locked = _mcp_post(server.url, ADMIN, MCP_INITIALIZE)
        assert locked.status_code == 429 and 1 <= int(locked.headers["retry-after"]) <= WINDOW_S
        assert locked.json()["error"]["type"] == "rate_limit_error"
        assert_error(httpx.get(f"{server.url}/api/keys", headers=AUTH), 429)
        # A client key is random and never throttled: tenants keep their tools.
        opened = _mcp_post(server.url, secret, MCP_INITIALIZE)
        assert opened.status_code == 200 and opened.headers["mcp-session-id"]


def test_the_throttle_remembers_a_bounded_number_of_addresses_and_limits_them_all() -> None:
    now = [0.0]
    throttle = AdminTokenThrottle(per_address=10, total=50, max_addresses=1000, timer=lambda: now[0])
    for n in range(20_000):  # a spoofing attacker's addresses: memory stays bounded
        throttle.fail(f"10.{n // 65536}.{n // 256 % 256}.{n % 256}")
    assert throttle.addresses == 1000
    with pytest.raises(TooManyAttempts, match="on this server") as closed:
        throttle.check("192.0.2.1")  # an address never seen: the server-wide limit holds
    assert "memroute dashboard-link" in closed.value.message
    now[0] += WINDOW_S
    throttle.check("192.0.2.1")  # a minute later everyone may try again
    for _ in range(10):
        throttle.fail("192.0.2.1")
    with pytest.raises(TooManyAttempts, match="from this address") as mine:
        throttle.check("192.0.2.1")
    assert mine.value.retry_after == WINDOW_S
    throttle.check("192.0.2.2")  # another address is not held up by this one


def test_the_console_link_opens_the_dashboard_while_the_throttle_is_closed(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with app_server(db, **TIGHT) as server:
        for _ in range(3):
            _login(server.url, "guess" * 8)
        assert _login(server.url, ADMIN).status_code == 429
        made = CliRunner().invoke(main, ["--db", str(db), "dashboard-link", "--url", server.url])
        assert made.exit_code == 0, made.output
        link = made.stdout.strip()
        assert link.startswith(f"{server.url}/dashboard/login/link?code=") and ADMIN not in made.output
        opened = httpx.get(link, timeout=30)
        assert opened.status_code == 303 and opened.headers["location"] == "/dashboard/memory"
        cookie = {"memroute_session": opened.cookies["memroute_session"]}
        assert httpx.get(f"{server.url}/dashboard/memory", cookies=cookie).status_code == 200
        assert httpx.get(f"{server.url}/api/memory", cookies=cookie).status_code == 200
        again = httpx.get(link, timeout=30)  # a link works once
        assert again.status_code == 400 and "memroute dashboard-link" in again.text
        assert "memroute_session" not in again.cookies
        assert httpx.get(f"{server.url}/dashboard/login/link?code=made-up", timeout=30).status_code == 400


def test_the_console_link_names_this_machines_server_by_default(tmp_path: Path) -> None:
    from memroute.cli.admin import local_url

    assert local_url(Config.from_env({"MEMROUTE_HOST": "0.0.0.0", "MEMROUTE_PORT": "9000"})) == (
        "http://127.0.0.1:9000"
    )
    assert local_url(Config.from_env({"MEMROUTE_HOST": "::"})) == "http://[::1]:20128"


# -- the admin token's length --------------------------------------------------------------------


def test_an_admin_token_under_32_characters_is_refused_at_start(tmp_path: Path) -> None:
    short = Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_ADMIN_TOKEN": "a" * 31})
    with pytest.raises(InvalidInput, match="at least 32") as refused:
        create_app(short)
    assert "secrets.token_urlsafe(32)" in refused.value.message
    assert "MEMROUTE_ADMIN_TOKEN" in refused.value.message
    create_app(Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_ADMIN_TOKEN": "a" * 32}))
    served = CliRunner().invoke(
        main, ["--db", str(tmp_path / "m.db"), "serve"], env={"MEMROUTE_ADMIN_TOKEN": "a"}
    )
    assert served.exit_code == 2 and "at least 32" in served.output and "token_urlsafe" in served.output


def test_a_short_token_in_the_token_file_is_refused_with_the_files_name(tmp_path: Path) -> None:
    (tmp_path / "admin_token").write_text("hunter2\n")
    with pytest.raises(InvalidInput, match="at least 32") as refused:
        create_app(Config.from_env({"MEMROUTE_DATA_DIR": str(tmp_path)}))
    assert str(tmp_path / "admin_token") in refused.value.message


# -- MCP sessions --------------------------------------------------------------------------------


def test_an_mcp_session_answers_only_the_key_that_opened_it(server: LiveServer) -> None:
    _, mine = _new_key(server.url, "owner")
    _, other = _new_key(server.url, "other")
    sessions: list[str] = []

    async def seen(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers:
            sessions.append(response.headers["mcp-session-id"])

    async def body(client: Client) -> None:
        session = sessions[0]
        for token in (other, ADMIN):  # another key, or even the admin: as if unknown
            assert _mcp_post(server.url, token, TOOLS_LIST, session).status_code == 404
            headers = {**_bearer(token), "mcp-session-id": session}
            stream = httpx.get(f"{server.url}/mcp", headers={**headers, **MCP_HEADERS}, timeout=30)
            assert stream.status_code == 404
            gone = httpx.delete(f"{server.url}/mcp", headers=headers, timeout=30)
            assert gone.status_code == 404
        tools = await client.list_tools()  # the owner's session is untouched
        assert "memory_add" in {t.name for t in tools.tools}

    http = httpx2.AsyncClient(headers=_bearer(mine), timeout=30, event_hooks={"response": [seen]})
    _run_client(lambda: streamable_http_client(server.url + "/mcp", http_client=http), body)


def _run_client(connect: Callable[[], Any], body: Callable[[Client], Awaitable[None]]) -> None:
    """The official client in its session mode (the initialize handshake; the newer
    protocol has no sessions: every request carries its own key)."""

    async def run() -> None:
        async with Client(connect(), mode="legacy") as client:
            await body(client)

    anyio.run(run)


# -- Host allow-list -----------------------------------------------------------------------------


def test_a_host_header_this_server_is_not_known_by_is_refused(server: LiveServer) -> None:
    rebound = httpx.get(f"{server.url}/api/memory", headers={**AUTH, "Host": "attacker.example"})
    error = assert_error(rebound, 400)
    assert "attacker.example" in error["message"] and "MEMROUTE_ALLOWED_HOSTS" in error["message"]
    assert_error(httpx.get(f"{server.url}/metrics", headers={"Host": "attacker.example:80"}), 400)
    chat = httpx.post(f"{server.url}/v1/chat/completions", json={}, headers={"Host": "attacker.example"})
    assert_error(chat, 400, openai=True)
    for name in ("localhost", "LOCALHOST:8080", "127.0.0.1:1", "[::1]:20128", "localhost."):
        assert httpx.get(f"{server.url}/api/memory", headers={**AUTH, "Host": name}).status_code == 200
    # A health probe addresses the server by IP: it is always answered.
    assert httpx.get(f"{server.url}/healthz", headers={"Host": "10.1.2.3:20128"}).status_code == 200


def test_the_allowed_hosts_can_be_named_or_opened_to_any(tmp_path: Path) -> None:
    named = {"MEMROUTE_ALLOWED_HOSTS": "memroute.example.com, Intranet"}
    with app_server(tmp_path / "m.db", **named) as server:
        for name, status in (("memroute.example.com:443", 200), ("intranet", 200), ("localhost", 400)):
            response = httpx.get(f"{server.url}/api/memory", headers={**AUTH, "Host": name})
            assert response.status_code == status, name
    with app_server(tmp_path / "m.db", MEMROUTE_ALLOWED_HOSTS="*") as server:
        assert (
            httpx.get(f"{server.url}/api/memory", headers={**AUTH, "Host": "any.example"}).status_code == 200
        )


def test_the_default_hosts_are_the_localhost_names_and_the_bind_address() -> None:
    # A wildcard bind address is an address the banner prints, never a rebound name.
    assert allowed_hosts((), "0.0.0.0") == {"localhost", "127.0.0.1", "::1", "0.0.0.0"}
    assert allowed_hosts((), "::") == {"localhost", "127.0.0.1", "::1", "::"}
    assert allowed_hosts((), "memroute.lan") == {"localhost", "127.0.0.1", "::1", "memroute.lan"}
    assert allowed_hosts((), "192.168.1.5") == {"localhost", "127.0.0.1", "::1", "192.168.1.5"}
    assert allowed_hosts(("a", "*"), "127.0.0.1") is None
    assert host_name("[fe80::1]:80") == "fe80::1" and host_name("Example.COM.:8") == "example.com"


# -- JSON bodies only ----------------------------------------------------------------------------


@pytest.fixture
def open_gateway(tmp_path: Path) -> Iterator[tuple[str, ScriptedUpstream]]:
    upstream = ScriptedUpstream()
    with LiveServer(upstream.app()) as up:
        env = {"MEMROUTE_UPSTREAM_BASE_URL": up.url + "/v1", "MEMROUTE_REQUIRE_API_KEY": "false"}
        with app_server(tmp_path / "m.db", **env) as server:
            yield server.url, upstream


def test_a_cross_site_text_plain_chat_is_refused_without_reaching_the_provider(
    open_gateway: tuple[str, ScriptedUpstream],
) -> None:
    url, upstream = open_gateway
    chat = '{"model": "m", "messages": [{"role": "user", "content": "my name is Ada"}]}'
    for headers in (
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/x-www-form-urlencoded"},
        {},
    ):
        refused = httpx.post(f"{url}/v1/chat/completions", content=chat, headers=headers)
        error = assert_error(refused, 415, openai=True)
        assert "application/json" in error["message"]
    assert upstream.requests == []
    sent = httpx.post(
        f"{url}/v1/chat/completions", content=chat, headers={"Content-Type": "application/json"}
    )
    assert sent.status_code == 200 and len(upstream.requests) == 1


def test_management_writes_need_a_json_body_and_write_nothing_otherwise(server: LiveServer) -> None:
    api = f"{server.url}/api/memory"
    form = httpx.post(api, content="content=x&apiKeyId=k", headers={**AUTH, "Content-Type": "text/plain"})
    assert "application/json" in assert_error(form, 415)["message"]
    assert_error(httpx.post(api, content='{"content": "x", "apiKeyId": "k"}', headers=AUTH), 415)
    owned = {"apiKeyId": "k"}
    assert httpx.get(api, headers=AUTH, params=owned).json()["total"] == 0
    typed = {**AUTH, "Content-Type": "application/vnd.memroute+json; charset=utf-8"}
    assert httpx.post(api, content='{"content": "x", "apiKeyId": "k"}', headers=typed).status_code == 200
    lines = '{"content": "from a file", "apiKeyId": "k"}\n'
    bad = httpx.post(f"{api}/import", content=lines, headers={**AUTH, "Content-Type": "text/plain"})
    assert "application/x-ndjson" in assert_error(bad, 415)["message"]
    for kind in ("application/x-ndjson", "application/jsonl"):
        imported = httpx.post(f"{api}/import", content=lines, headers={**AUTH, "Content-Type": kind})
        assert imported.status_code == 200, imported.text
    assert httpx.get(api, headers=AUTH, params=owned).json()["total"] == 3


# -- API reference pages -------------------------------------------------------------------------


def test_the_api_reference_pages_need_the_admin_and_the_document_stays_public(server: LiveServer) -> None:
    for page in ("/docs", "/redoc"):
        anonymous = httpx.get(server.url + page)
        assert anonymous.status_code == 303
        assert anonymous.headers["location"] == f"/dashboard/login?next=%2F{page[1:]}"
        assert "memroute API" in httpx.get(server.url + page, headers=AUTH).text
        assert_error(httpx.get(server.url + page, headers=_bearer("guess" * 8)), 401)
    cookie = {"memroute_session": _login(server.url, ADMIN).cookies["memroute_session"]}
    assert "swagger-ui" in httpx.get(server.url + "/docs", cookies=cookie).text
    back = httpx.get(f"{server.url}/dashboard/login", params={"next": "/docs"}, cookies=cookie)
    assert back.status_code == 303 and back.headers["location"] == "/docs"
    assert httpx.get(server.url + "/openapi.json").json()["info"]["title"] == "memroute"
