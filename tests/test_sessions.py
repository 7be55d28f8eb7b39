"""Dashboard sessions over real HTTP: the cookie, its lifetime across restarts and
token changes, logout in every process, and the login throttle."""

from __future__ import annotations

from pathlib import Path

import httpx
from servers import ADMIN, TLS, LiveServer, app_server


def _login(url: str, token: str = ADMIN) -> httpx.Response:
    return httpx.post(f"{url}/api/session", json={"token": token}, timeout=30, verify=TLS)


def test_a_session_survives_a_restart_and_ends_with_logout_or_a_new_token(tmp_path: Path) -> None:
    db = tmp_path / "memroute.db"
    with app_server(db) as server:
        login = _login(server.url)
        assert login.status_code == 200 and login.json()["authenticated"] is True
        cookie = {"memroute_session": login.cookies["memroute_session"]}
        assert ADMIN not in login.headers["set-cookie"]
        assert "httponly" in login.headers["set-cookie"].lower()
        assert "samesite=strict" in login.headers["set-cookie"].lower()
        second = {"memroute_session": _login(server.url).cookies["memroute_session"]}
    with app_server(db) as server:  # restarted: the sessions are in the database
        assert httpx.get(f"{server.url}/api/memory", cookies=cookie).status_code == 200
        assert httpx.get(f"{server.url}/api/session", cookies=cookie).json()["authenticated"] is True
        httpx.delete(f"{server.url}/api/session", cookies=cookie)
        assert httpx.get(f"{server.url}/api/memory", cookies=cookie).status_code == 401
        assert httpx.get(f"{server.url}/api/memory", cookies=second).status_code == 200
    # A new token ends every session.
    with app_server(db, MEMROUTE_ADMIN_TOKEN="a-rotated-admin-token-for-memroute-tests") as server:
        assert httpx.get(f"{server.url}/api/memory", cookies=second).status_code == 401
        page = httpx.get(f"{server.url}/dashboard/memory", cookies=second)
        assert page.status_code == 303 and page.headers["location"].startswith("/dashboard/login")


def test_ten_wrong_tokens_a_minute_lock_the_login_of_that_address(tmp_path: Path) -> None:
    with app_server(tmp_path / "memroute.db") as server:
        cookie = {"memroute_session": _login(server.url).cookies["memroute_session"]}
        for _ in range(10):
            assert _login(server.url, "guess").status_code == 401
        locked = _login(server.url)
        assert locked.status_code == 429
        assert locked.json()["error"]["type"] == "rate_limit_error"
        assert "try again in" in locked.json()["error"]["message"]
        assert 1 <= int(locked.headers["retry-after"]) <= 60
        # The Bearer token counts against the same throttle: even the right one waits, so
        # the answer never tells a guesser that it was right.
        headers = {"Authorization": f"Bearer {ADMIN}"}
        assert httpx.get(f"{server.url}/api/memory", headers=headers).status_code == 429
        # A session opened before is not a token guess: it keeps working.
        assert httpx.get(f"{server.url}/api/memory", cookies=cookie).status_code == 200


def test_the_login_page_never_redirects_to_another_site(tmp_path: Path) -> None:
    with app_server(tmp_path / "memroute.db") as server:
        cookie = {"memroute_session": _login(server.url).cookies["memroute_session"]}
        for target in ("https://evil.example/", "//evil.example/x", "/dashboard/../../x\\y"):
            response = httpx.get(f"{server.url}/dashboard/login", params={"next": target}, cookies=cookie)
            assert response.status_code == 303 and response.headers["location"] == "/dashboard/memory"
        kept = httpx.get(f"{server.url}/dashboard/login", params={"next": "/dashboard/keys"}, cookies=cookie)
        assert kept.headers["location"] == "/dashboard/keys"


def test_the_login_page_names_where_this_servers_admin_token_is(tmp_path: Path) -> None:
    from memroute.config import Config
    from memroute.web.app import create_app

    data_dir = tmp_path / "elsewhere"
    config = Config.from_env({"MEMROUTE_DATA_DIR": str(data_dir)})
    with LiveServer(create_app(config)) as server:
        page = httpx.get(f"{server.url}/dashboard/login")
    assert page.status_code == 200 and page.headers["content-security-policy"].startswith("default-src")
    assert f"stored in <code>{data_dir}/admin_token</code>" in page.text
    assert "~/.memroute" not in page.text and "{token_help}" not in page.text
    with app_server(tmp_path / "memroute.db") as server:  # MEMROUTE_ADMIN_TOKEN set: no file
        from_env = httpx.get(f"{server.url}/dashboard/login").text
    assert "<code>MEMROUTE_ADMIN_TOKEN</code>" in from_env and "admin_token</code>" not in from_env


def test_the_login_page_writes_the_home_directory_as_a_tilde() -> None:
    from memroute.config import Config
    from memroute.web.pages import token_help

    config = Config.from_env({"MEMROUTE_DATA_DIR": str(Path.home() / "data" / "memroute")})
    assert "<code>~/data/memroute/admin_token</code>" in token_help(config)
