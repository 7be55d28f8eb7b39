"""Keys, providers, management auth and the OpenAPI document, end to end: the app under
uvicorn, a real SQLite file, httpx as the client. Nothing is mocked."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from error_shape import assert_error
from servers import ADMIN, management_api

from memroute.service.keys import hash_secret

PROVIDER_SECRET = "sk-provider-secret-DO-NOT-LEAK-0123456789"


@pytest.fixture
def api(tmp_path: Path) -> Iterator[httpx.Client]:
    with management_api(tmp_path / "memroute.db") as client:
        yield client


# -- keys ----------------------------------------------------------------------------------------


def test_key_secret_is_shown_once_and_works_on_the_gateway_until_revoked(api: httpx.Client) -> None:
    created = api.post("/api/keys", json={"name": "laptop"})
    assert created.status_code == 201
    body = created.json()
    secret, key = body["secret"], body["key"]
    assert set(body) == {"key", "secret"}
    assert secret.startswith("mr-") and key["prefix"] == secret[:8]
    assert set(key) == {
        "id",
        "name",
        "prefix",
        "createdAt",
        "lastUsedAt",
        "revokedAt",
        "maxConcurrent",
        "requestsPerMinute",
        "requiresUserId",
        "active",
    }
    assert (key["name"], key["active"], key["revokedAt"]) == ("laptop", True, None)
    assert key["requiresUserId"] is False
    assert (key["maxConcurrent"], key["requestsPerMinute"]) == (None, None)  # the server's defaults

    listed = api.get("/api/keys")
    assert listed.status_code == 200 and listed.json()["keys"] == [key]
    for text in (listed.text, api.get("/api/memory").text):
        assert secret not in text and hash_secret(secret) not in text

    gateway = httpx.get(f"{api.base_url}/v1/models", headers={"Authorization": f"Bearer {secret}"})
    assert gateway.status_code == 200, gateway.text

    revoked = api.delete(f"/api/keys/{key['id']}")
    assert revoked.status_code == 200
    assert revoked.json()["key"]["active"] is False and revoked.json()["key"]["revokedAt"]
    assert secret not in revoked.text
    assert api.delete(f"/api/keys/{key['id']}").status_code == 200  # idempotent
    refused = httpx.get(f"{api.base_url}/v1/models", headers={"Authorization": f"Bearer {secret}"})
    assert refused.status_code == 401
    assert api.get("/api/keys").json()["keys"][0]["active"] is False


@pytest.mark.parametrize(
    "body", [{}, {"name": ""}, {"name": "x" * 101}, {"name": 5}, {"name": "ok", "scope": "all"}]
)
def test_key_creation_rejects_bad_bodies(api: httpx.Client, body: dict[str, Any]) -> None:
    assert_error(api.post("/api/keys", json=body), 400)
    assert api.get("/api/keys").json() == {"keys": []}


def test_revoking_an_unknown_key_is_404(api: httpx.Client) -> None:
    assert assert_error(api.delete(f"/api/keys/{uuid.uuid4()}"), 404)["type"] == "not_found_error"


def test_a_keys_limits_are_set_kept_and_reset(api: httpx.Client) -> None:
    key = api.post("/api/keys", json={"name": "agent"}).json()["key"]
    path = f"/api/keys/{key['id']}"
    both = api.patch(path, json={"maxConcurrent": 4, "requestsPerMinute": 120}).json()["key"]
    assert (both["maxConcurrent"], both["requestsPerMinute"]) == (4, 120)
    one = api.patch(path, json={"requestsPerMinute": 0}).json()["key"]  # 0: no per-minute limit
    assert (one["maxConcurrent"], one["requestsPerMinute"]) == (4, 0)
    assert api.get("/api/keys").json()["keys"] == [one]
    reset = api.patch(path, json={"maxConcurrent": None}).json()["key"]
    assert (reset["maxConcurrent"], reset["requestsPerMinute"]) == (None, 0)
    strict = api.patch(path, json={"requiresUserId": True}).json()["key"]
    assert strict["requiresUserId"] is True and strict["requestsPerMinute"] == 0  # the limits are kept
    assert api.patch(path, json={"maxConcurrent": 2}).json()["key"]["requiresUserId"] is True  # kept too


@pytest.mark.parametrize(
    "body",
    [
        {"maxConcurrent": 0},
        {"maxConcurrent": 10_001},
        {"maxConcurrent": "4"},
        {"maxConcurrent": 2.5},
        {"requestsPerMinute": -1},
        {"requestsPerMinute": True},
        {"rpm": 5},
        {"requiresUserId": "yes"},
        {"requiresUserId": None},
    ],
)
def test_bad_key_limits_are_400_and_change_nothing(api: httpx.Client, body: dict[str, Any]) -> None:
    key = api.post("/api/keys", json={"name": "agent"}).json()["key"]
    api.patch(f"/api/keys/{key['id']}", json={"maxConcurrent": 3})
    assert_error(api.patch(f"/api/keys/{key['id']}", json=body), 400)
    stored = api.get("/api/keys").json()["keys"][0]
    assert (stored["maxConcurrent"], stored["requestsPerMinute"]) == (3, None)


def test_limits_of_an_unknown_key_are_404(api: httpx.Client) -> None:
    assert_error(api.patch(f"/api/keys/{uuid.uuid4()}", json={"maxConcurrent": 2}), 404)


# -- providers -----------------------------------------------------------------------------------


def test_a_providers_wire_format_is_set_kept_and_checked(api: httpx.Client) -> None:
    claude = {"id": "claude", "baseUrl": "https://api.anthropic.com/v1", "format": "anthropic"}
    created = api.post("/api/providers", json=claude)
    assert created.status_code == 201 and created.json()["provider"]["format"] == "anthropic"
    moved = api.put("/api/providers/claude", json={"baseUrl": "https://proxy.example.com/v1"})
    assert moved.json()["provider"]["format"] == "anthropic"  # absent: kept
    assert_error(api.put("/api/providers/claude", json={"format": "gemini"}), 400)
    assert_error(api.post("/api/providers", json={**claude, "id": "other", "format": None}), 400)
    assert api.get("/api/providers").json()["providers"][0]["format"] == "anthropic"
    changed = api.put("/api/providers/claude", json={"format": "openai"})
    assert changed.json()["provider"]["format"] == "openai"


def test_providers_crud_never_returns_the_stored_secret(api: httpx.Client) -> None:
    texts: list[str] = []

    def call(method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = api.request(method, path, **kwargs)
        texts.append(response.text)
        return response

    created = call(
        "POST",
        "/api/providers",
        json={"id": "openai", "baseUrl": "https://api.openai.com/v1/", "apiKey": PROVIDER_SECRET},
    )
    assert created.status_code == 201, created.text
    provider = created.json()["provider"]
    assert set(provider) == {
        "id",
        "baseUrl",
        "apiKeyEnv",
        "hasStoredKey",
        "apiKeyMasked",
        "default",
        "createdAt",
        "updatedAt",
        "format",
    }
    assert provider["baseUrl"] == "https://api.openai.com/v1"
    assert provider["format"] == "openai"  # what a provider speaks unless told
    assert provider["hasStoredKey"] is True and provider["apiKeyMasked"] == "***" + PROVIDER_SECRET[-4:]
    assert provider["default"] is False

    call("POST", "/api/providers", json={"id": "local", "baseUrl": "http://127.0.0.1:9/v1", "default": True})
    listed = call("GET", "/api/providers").json()["providers"]
    assert [(p["id"], p["default"]) for p in listed] == [("local", True), ("openai", False)]

    duplicate = call("POST", "/api/providers", json={"id": "openai", "baseUrl": "https://example.com"})
    assert_error(duplicate, 409)

    proxy = "https://proxy.example.com/v1"
    moved = call("PUT", "/api/providers/openai", json={"baseUrl": proxy, "default": True})
    assert moved.status_code == 200
    assert moved.json()["provider"]["hasStoredKey"] is True  # an absent apiKey keeps the stored one
    assert moved.json()["provider"]["baseUrl"] == proxy
    defaults = {p["id"]: p["default"] for p in call("GET", "/api/providers").json()["providers"]}
    assert defaults == {"local": False, "openai": True}

    by_env = call("PUT", "/api/providers/openai", json={"apiKeyEnv": "OPENAI_API_KEY"}).json()["provider"]
    assert (by_env["apiKeyEnv"], by_env["hasStoredKey"], by_env["apiKeyMasked"]) == (
        "OPENAI_API_KEY",
        False,
        None,
    )
    stored_again = call("PUT", "/api/providers/openai", json={"apiKey": PROVIDER_SECRET}).json()["provider"]
    assert (stored_again["apiKeyEnv"], stored_again["hasStoredKey"]) == (None, True)
    removed = call("PUT", "/api/providers/openai", json={"apiKey": None}).json()["provider"]
    assert removed["hasStoredKey"] is False
    call("PUT", "/api/providers/openai", json={"apiKey": PROVIDER_SECRET})

    for body in (
        {"apiKey": PROVIDER_SECRET, "apiKeyEnv": "X"},
        {"baseUrl": "ftp://nope"},
        {"id": "renamed"},
        {"default": None},
        {"apiKey": ""},
    ):
        assert_error(call("PUT", "/api/providers/openai", json=body), 400)
    assert_error(call("PUT", "/api/providers/missing", json={"default": True}), 404)

    assert call("DELETE", "/api/providers/local").json() == {"success": True}
    assert_error(call("DELETE", "/api/providers/local"), 404)
    assert [p["id"] for p in call("GET", "/api/providers").json()["providers"]] == ["openai"]

    assert len(texts) > 15
    for text in texts:
        assert PROVIDER_SECRET not in text


@pytest.mark.parametrize(
    "body",
    [
        {"id": "Bad Id", "baseUrl": "https://example.com"},
        {"id": "ok", "baseUrl": "not a url"},
        {"id": "ok"},
        {"id": "ok", "baseUrl": "https://example.com", "apiKey": PROVIDER_SECRET, "apiKeyEnv": "OPENAI_KEY"},
        {"id": "ok", "baseUrl": "https://example.com", "apiKeyEnv": "not an env name"},
        {"id": "ok", "baseUrl": "https://example.com", "apiKey": ""},
        {"id": "ok", "baseUrl": "https://example.com", "secret": PROVIDER_SECRET},
        {"id": "ok", "baseUrl": "https://example.com", "default": "yes"},
    ],
)
def test_provider_creation_rejects_bad_bodies(api: httpx.Client, body: dict[str, Any]) -> None:
    response = api.post("/api/providers", json=body)
    assert_error(response, 400)
    assert PROVIDER_SECRET not in response.text
    assert api.get("/api/providers").json() == {"providers": []}


# -- auth ----------------------------------------------------------------------------------------

SOME_ID = "00000000-0000-4000-8000-000000000000"
ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/api/memory", None),
    ("POST", "/api/memory", {"content": "secret plan", "key": "plan"}),
    ("GET", "/api/memory/health", None),
    ("POST", "/api/memory/retrieve-preview", {"query": "plan"}),
    ("GET", "/api/memory/engine-status", None),
    ("POST", "/api/memory/summarize", {"allKeys": True}),
    ("GET", "/api/memory/export", None),
    ("POST", "/api/memory/import", [{"content": "imported plan", "key": "imp"}]),
    ("GET", f"/api/memory/{SOME_ID}", None),
    ("PUT", f"/api/memory/{SOME_ID}", {"content": "x"}),
    ("DELETE", f"/api/memory/{SOME_ID}", None),
    ("GET", f"/api/memory/{SOME_ID}/history", None),
    ("GET", "/api/settings/memory", None),
    ("PUT", "/api/settings/memory", {"enabled": True}),
    ("GET", "/api/keys", None),
    ("POST", "/api/keys", {"name": "intruder"}),
    ("DELETE", f"/api/keys/{SOME_ID}", None),
    ("GET", "/api/providers", None),
    ("POST", "/api/providers", {"id": "evil", "baseUrl": "https://evil.example.com"}),
    ("PUT", "/api/providers/evil", {"baseUrl": "https://evil.example.com"}),
    ("DELETE", "/api/providers/evil", None),
]
ROUTE_IDS = [f"{method} {path}" for method, path, _ in ROUTES]


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    # Every route tries a wrong Bearer token: the throttle of wrong tokens (tested in
    # test_auth_hardening.py) is opened wide here, so each of them is answered 401.
    wide = {"MEMROUTE_ADMIN_FAILURES_PER_ADDRESS": "1000", "MEMROUTE_ADMIN_FAILURES_TOTAL": "1000"}
    with management_api(tmp_path_factory.mktemp("auth") / "memroute.db", **wide) as client:
        yield client


def _send(base: httpx.URL, method: str, path: str, body: Any, **kwargs: Any) -> httpx.Response:
    return httpx.request(method, f"{base}{path}", json=body, timeout=30, **kwargs)


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=ROUTE_IDS)
def test_every_management_route_needs_the_admin_token(
    shared: httpx.Client, method: str, path: str, body: Any
) -> None:
    for kwargs in (
        {},
        {"headers": {"Authorization": "Bearer wrong-token"}},
        {"headers": {"Authorization": f"Basic {ADMIN}"}},
        {"headers": {"Authorization": "Bearer"}},
        {"cookies": {"memroute_session": "not-a-session"}},
        {"cookies": {"memroute_admin": ADMIN}},  # the token itself is never a cookie
    ):
        response = _send(shared.base_url, method, path, body, **kwargs)
        error = assert_error(response, 401)
        assert error["type"] == "authentication_error"
        assert response.headers["www-authenticate"] == "Bearer"
    login = httpx.post(f"{shared.base_url}/api/session", json={"token": ADMIN}, timeout=30)
    session = {"memroute_session": login.cookies["memroute_session"]}
    dashboard = {"x-memroute-dashboard": "1"}
    with_session = _send(shared.base_url, method, path, body, cookies=session, headers=dashboard)
    assert with_session.status_code not in (401, 403) and with_session.status_code < 500, with_session.text
    if method != "GET":  # a cross-site form could send the cookie but never this header
        assert _send(shared.base_url, method, path, body, cookies=session).status_code == 401


def test_unauthorized_writes_change_nothing(api: httpx.Client) -> None:
    before = {path: api.get(path).json() for path in ("/api/settings/memory", "/api/keys", "/api/providers")}
    for method, path, body in ROUTES:
        if method != "GET":
            assert _send(api.base_url, method, path, body).status_code == 401
    assert api.get("/api/memory").json()["total"] == 0
    assert {path: api.get(path).json() for path in before} == before


# -- OpenAPI -------------------------------------------------------------------------------------


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref") or (schema.get("items") or {}).get("$ref")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        assert name in spec["components"]["schemas"], ref
        return spec["components"]["schemas"][name]  # type: ignore[no-any-return]
    return schema


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=ROUTE_IDS)
def test_openapi_documents_every_route_with_schemas(
    shared: httpx.Client, method: str, path: str, body: Any
) -> None:
    spec = shared.get("/openapi.json").json()
    templated = path.replace(SOME_ID, "{id}").replace("/evil", "/{id}")
    operation = spec["paths"][templated][method.lower()]
    assert operation.get("description") or operation.get("summary")
    success = next(code for code in ("200", "201") if code in operation["responses"])
    content = operation["responses"][success]["content"]
    assert content, f"{method} {templated} has no response schema"
    for media in content.values():
        resolved = _resolve(spec, media["schema"])
        assert resolved.get("properties") or resolved.get("type"), f"{method} {templated}: {media}"
    assert "401" in operation["responses"]
    if body is not None:
        request_content = operation["requestBody"]["content"]
        for media in request_content.values():
            resolved = _resolve(spec, media["schema"])
            assert resolved.get("properties") or resolved.get("type")


def test_openapi_request_models_are_strict_and_camel_case(shared: httpx.Client) -> None:
    schemas = shared.get("/openapi.json").json()["components"]["schemas"]
    for name in (
        "MemoryCreate",
        "MemoryUpdate",
        "PreviewRequest",
        "SummarizeRequest",
        "MemorySettingsUpdate",
        "ApiKeyCreate",
        "ProviderCreate",
        "ProviderUpdate",
    ):
        assert schemas[name]["additionalProperties"] is False, name
    assert set(schemas["MemorySettingsUpdate"]["properties"]) == set(
        schemas["MemorySettingsOut"]["properties"]
    )
    assert len(schemas["MemorySettingsOut"]["properties"]) == 16
    assert schemas["MemorySettingsUpdate"]["properties"]["maxTokens"]["maximum"] == 16000
    assert "apiKeyId" in schemas["MemoryCreate"]["properties"]
    assert "apiKey" not in schemas["ProviderOut"]["properties"]
