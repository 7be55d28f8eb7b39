"""`/api/settings/qdrant*` end to end (REF §9, §10): memroute's app under uvicorn on a real
SQLite file, httpx as the client, and for Qdrant either nothing (a closed port), a socket
that never answers, or a small stand-in HTTP server started here. Nothing is mocked.

Every test runs with every log line captured at DEBUG and every response body kept: the
configured Qdrant API key may appear in none of them (the `bodies` fixture checks).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from error_shape import assert_error
from servers import ADMIN, LiveServer, free_port, management_api
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memroute.config import Config
from memroute.errors import InvalidInput

KEY = "qd-key-DO-NOT-LEAK-5a4b3c2d1e"
ENV_KEY = "qd-env-DO-NOT-LEAK-0f1e2d3c4b"
SETTINGS = "/api/settings/qdrant"
# qdrant-client's own notice when a key goes over plain http (the stand-ins are http).
pytestmark = pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")

DEFAULTS = {
    "enabled": False,
    "host": "",
    "port": 6333,
    "https": False,
    "collection": "memroute_memory",  # memroute: REF's default is omniroute_memory
    "embeddingModel": None,  # memroute: null = the memory embedding source (REF: an OpenAI model)
    "quantization": "none",
    "hasApiKey": False,
    "apiKeyMasked": None,
}


@pytest.fixture(autouse=True)
def bodies(caplog: pytest.LogCaptureFixture) -> Iterator[list[str]]:
    """Response bodies of the test's sessions; afterwards neither they nor any log line may
    contain a Qdrant API key."""
    caplog.set_level(logging.DEBUG)
    kept: list[str] = []
    yield kept
    everything = "\n".join(kept) + "\n" + caplog.text
    for secret in (KEY, ENV_KEY):
        assert secret not in everything, "a Qdrant API key reached a response or a log line"
    assert "DO-NOT-LEAK" not in everything


@contextmanager
def session(db: Path, bodies: list[str], **env: str) -> Iterator[httpx.Client]:
    """memroute on `db`, and an admin client that keeps every response body in `bodies`."""

    def keep(response: httpx.Response) -> None:
        response.read()
        bodies.append(response.text)

    with management_api(db, on_response=keep, **env) as client:
        yield client


@pytest.fixture
def api(tmp_path: Path, bodies: list[str]) -> Iterator[httpx.Client]:
    with session(tmp_path / "memroute.db", bodies) as client:
        yield client


def ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def vector_store(api: httpx.Client) -> str:
    return ok(api.get("/api/settings/memory"))["vectorStore"]  # type: ignore[no-any-return]


# -- a stand-in Qdrant ------------------------------------------------------------------------


@dataclass
class StandIn:
    """A tiny HTTP server in place of Qdrant: `/readyz` answers `status` with `body`; every
    other path answers 404 and echoes the api-key it got (as a careless server might).
    `seen` records (method, path, headers) of every request."""

    status: int = 200
    body: str = "all shards are ready"
    echo_key_in_readyz: bool = False
    family: socket.AddressFamily = socket.AF_INET
    seen: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)

    def readyz(self) -> list[dict[str, str]]:
        return [headers for method, path, headers in self.seen if (method, path) == ("GET", "/readyz")]

    @contextmanager
    def running(self) -> Iterator[int]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                stand_in.seen.append((self.command, self.path.split("?")[0], headers))
                key = headers.get("api-key", "")
                if self.path == "/readyz":
                    status = stand_in.status
                    text = (
                        f"{stand_in.body} (api-key {key})" if stand_in.echo_key_in_readyz else stand_in.body
                    )
                else:
                    status, text = 404, f'{{"status": {{"error": "Not found; you sent api-key {key}"}}}}'
                data = text.encode()
                self.send_response(status)
                self.send_header("content-type", "text/plain")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            address_family = self.family
            daemon_threads = True

        host = "::1" if self.family == socket.AF_INET6 else "127.0.0.1"
        server = Server((host, 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield int(server.server_address[1])
        finally:
            server.shutdown()
            server.server_close()
            thread.join(10)


@contextmanager
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel completes the handshake) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield int(sock.getsockname()[1])


def timed_health(api: httpx.Client) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    body = ok(api.get(f"{SETTINGS}/health"))
    return body, time.monotonic() - started


# -- settings: round trip, vectorStore, strict bodies ------------------------------------------


def test_settings_round_trip_partially_update_and_survive_a_restart(
    tmp_path: Path, bodies: list[str]
) -> None:
    db = tmp_path / "memroute.db"
    with session(db, bodies) as api:
        assert ok(api.get(SETTINGS)) == DEFAULTS
        full = {
            "enabled": False,
            "host": "qdrant.internal",
            "port": 6334,
            "https": True,
            "collection": "team_memory",
            "embeddingModel": "openai/text-embedding-3-small",
            "quantization": "int8",
            "apiKey": KEY,
        }
        expected = {
            **{k: v for k, v in full.items() if k != "apiKey"},
            "hasApiKey": True,
            "apiKeyMasked": "***" + KEY[-4:],
        }
        assert ok(api.put(SETTINGS, json=full)) == expected
        assert ok(api.get(SETTINGS)) == expected

        expected |= {"quantization": "binary", "port": 7000}
        assert ok(api.put(SETTINGS, json={"quantization": "binary", "port": 7000})) == expected
        assert ok(api.put(SETTINGS, json={})) == expected  # an empty update changes nothing
        expected |= {"host": ""}
        assert ok(api.put(SETTINGS, json={"host": None})) == expected  # null removes the host

    with session(db, bodies) as api:
        assert ok(api.get(SETTINGS)) == expected


def test_enabled_selects_the_vector_store_and_other_fields_leave_it_alone(api: httpx.Client) -> None:
    ok(api.put("/api/settings/memory", json={"vectorStore": "sqlite-vec"}))
    ok(api.put(SETTINGS, json={"host": "127.0.0.1", "port": free_port(), "quantization": "int8"}))
    assert vector_store(api) == "sqlite-vec"  # no `enabled` in the body: untouched

    assert ok(api.put(SETTINGS, json={"enabled": True}))["enabled"] is True
    assert vector_store(api) == "qdrant"
    ok(api.put(SETTINGS, json={"collection": "other_memory"}))
    assert vector_store(api) == "qdrant"

    assert ok(api.put(SETTINGS, json={"enabled": False}))["enabled"] is False
    assert vector_store(api) == "auto"
    ok(api.put("/api/settings/memory", json={"vectorStore": "sqlite-vec"}))
    ok(api.put(SETTINGS, json={"enabled": False}))  # switching off again still selects auto
    assert vector_store(api) == "auto"


BAD_BODIES: list[tuple[Any, str]] = [
    ({"bogus": 1}, "bogus"),
    ({"host": "new.internal", "vectorSize": 768}, "vectorSize"),  # memroute: no vectorSize setting
    ({"enabled": True, "hnswEfConstruct": 200}, "hnswEfConstruct"),  # memroute: environment only
    ({"port": "80"}, "port"),
    ({"port": 0}, "port"),
    ({"port": 70000}, "port"),
    ({"port": True}, "port"),
    ({"port": None}, "port"),
    ({"enabled": "true"}, "enabled"),
    ({"enabled": 1}, "enabled"),
    ({"enabled": None}, "enabled"),
    ({"https": "yes"}, "https"),
    ({"quantization": "bogus"}, "quantization"),
    ({"collection": ""}, "collection"),
    ({"collection": "has space"}, "collection"),
    ({"host": "has space.internal"}, "host"),
    ({"host": "ftp://qdrant.internal"}, "host"),
    ({"apiKey": 12345}, "apiKey"),
    ({"embeddingModel": "no-provider"}, "embeddingModel"),
    ({"enabled": True, "host": "new.internal", "port": 0}, "port"),  # one bad value: nothing written
    (["enabled", True], ""),
]


def test_a_bad_body_is_refused_with_400_and_nothing_is_written(api: httpx.Client) -> None:
    ok(api.put("/api/settings/memory", json={"vectorStore": "sqlite-vec"}))
    before = ok(api.put(SETTINGS, json={"host": "kept.internal", "port": 6340, "apiKey": KEY}))
    for body, named in BAD_BODIES:
        error = assert_error(api.put(SETTINGS, json=body), 400)
        assert error["type"] == "invalid_request_error", body
        assert named in error["message"], (body, error)
        assert ok(api.get(SETTINGS)) == before, f"{body} changed the settings"
    assert_error(api.put(SETTINGS, content=b"{not json", headers={"content-type": "application/json"}), 400)
    assert ok(api.get(SETTINGS)) == before
    assert vector_store(api) == "sqlite-vec"  # no refused `enabled` switched the store


# -- the API key is write-only -----------------------------------------------------------------


def test_the_api_key_is_write_only_and_an_empty_one_removes_it(api: httpx.Client) -> None:
    written = api.put(SETTINGS, json={"apiKey": KEY})
    assert KEY not in written.text
    shown = ok(written)
    assert "apiKey" not in shown
    assert (shown["hasApiKey"], shown["apiKeyMasked"]) == (True, "***" + KEY[-4:])
    assert ok(api.get(SETTINGS)) == shown

    assert ok(api.put(SETTINGS, json={"host": "qdrant.internal"}))["hasApiKey"] is True  # kept
    short = ok(api.put(SETTINGS, json={"apiKey": "abc123"}))
    assert (short["hasApiKey"], short["apiKeyMasked"]) == (True, "***")

    removed = ok(api.put(SETTINGS, json={"apiKey": ""}))
    assert (removed["hasApiKey"], removed["apiKeyMasked"]) == (False, None)
    assert ok(api.get(SETTINGS))["hasApiKey"] is False
    assert ok(api.get(SETTINGS))["host"] == "qdrant.internal"


def test_environment_values_show_until_a_stored_value_replaces_them(
    tmp_path: Path, bodies: list[str]
) -> None:
    env = {
        "QDRANT_HOST": "env-qdrant.internal",
        "QDRANT_PORT": "6334",
        "QDRANT_COLLECTION": "env_memory",
        "QDRANT_EMBEDDING_MODEL": "envprov/env-embed",
        "QDRANT_API_KEY": ENV_KEY,
    }
    with session(tmp_path / "memroute.db", bodies, **env) as api:
        assert ok(api.get(SETTINGS)) == {
            **DEFAULTS,
            "host": "env-qdrant.internal",
            "port": 6334,
            "collection": "env_memory",
            "embeddingModel": "envprov/env-embed",
            "hasApiKey": True,
            "apiKeyMasked": "***" + ENV_KEY[-4:],
        }
        stored = ok(api.put(SETTINGS, json={"host": "db-qdrant.internal", "apiKey": KEY}))
        assert (stored["host"], stored["port"], stored["apiKeyMasked"]) == (
            "db-qdrant.internal",
            6334,
            "***" + KEY[-4:],
        )
        # Removing the stored key falls back to QDRANT_API_KEY (REF §1.6: blank → env → null).
        assert ok(api.put(SETTINGS, json={"apiKey": ""}))["apiKeyMasked"] == "***" + ENV_KEY[-4:]


# -- admin auth ------------------------------------------------------------------------------

ROUTES: list[tuple[str, str, Any]] = [
    ("GET", SETTINGS, None),
    ("PUT", SETTINGS, {"host": "attacker.example", "enabled": True}),
    ("GET", f"{SETTINGS}/health", None),
    ("POST", f"{SETTINGS}/search", {"query": "anything"}),
    ("POST", f"{SETTINGS}/cleanup", None),
    ("GET", f"{SETTINGS}/embedding-models", None),
]


def test_every_qdrant_route_needs_the_admin_token(api: httpx.Client, bodies: list[str]) -> None:
    before = ok(api.get(SETTINGS))
    with httpx.Client(base_url=api.base_url, timeout=30) as stranger:
        for method, path, body in ROUTES:
            for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": ADMIN}):
                response = stranger.request(method, path, json=body, headers=headers)
                bodies.append(response.text)
                error = assert_error(response, 401)
                assert "token" in error["message"], (method, path)
    assert ok(api.get(SETTINGS)) == before  # the refused PUT wrote nothing
    assert vector_store(api) == "auto"
    assert api.get(f"{SETTINGS}/health").status_code == 200  # the token itself works


# -- health -----------------------------------------------------------------------------------


def test_health_is_not_configured_until_enabled_with_a_host(api: httpx.Client) -> None:
    not_configured = {"ok": False, "latencyMs": 0.0, "error": "not_configured"}
    assert ok(api.get(f"{SETTINGS}/health")) == not_configured
    ok(api.put(SETTINGS, json={"host": "127.0.0.1", "port": free_port()}))
    assert ok(api.get(f"{SETTINGS}/health")) == not_configured  # a host, not enabled
    ok(api.put(SETTINGS, json={"host": None, "enabled": True}))
    assert ok(api.get(f"{SETTINGS}/health")) == not_configured  # enabled, no host

    searched = ok(api.post(f"{SETTINGS}/search", json={"query": "tea"}))
    assert searched == {"ok": False, "results": [], "error": "not_configured"}
    cleaned = ok(api.post(f"{SETTINGS}/cleanup"))
    assert cleaned == {
        "ok": False,
        "deletedCount": 0,
        "deletedIds": [],
        "retentionDays": 30,
        "error": "not_configured",
    }


def test_health_against_a_closed_port_fails_fast_with_a_clear_error(api: httpx.Client) -> None:
    port = free_port()  # nothing listens there
    ok(api.put(SETTINGS, json={"enabled": True, "host": "127.0.0.1", "port": port, "apiKey": KEY}))
    first, first_seconds = timed_health(api)  # may include loading qdrant-client once
    health, seconds = timed_health(api)
    for body in (first, health):
        assert body["ok"] is False
        assert "Qdrant health failed" in body["error"]
        assert "refused" in body["error"].lower() or "connect" in body["error"].lower()
        assert isinstance(body["latencyMs"], int | float)
    assert first_seconds < 6.0, f"the first check of a closed port took {first_seconds:.1f} s"
    assert seconds < 3.0, f"a closed port took {seconds:.1f} s to report"


def test_health_gives_up_on_a_server_that_never_answers(tmp_path: Path, bodies: list[str]) -> None:
    # A 30 s client timeout for every other call: only the health check's own 2 s bound
    # can make this quick (REF §9 has no bound at all).
    with session(tmp_path / "memroute.db", bodies, QDRANT_TIMEOUT="30") as api, silent_port() as port:
        ok(api.put(SETTINGS, json={"enabled": True, "host": "127.0.0.1", "port": port}))
        health, seconds = timed_health(api)
    assert health["ok"] is False
    assert "timeout" in health["error"].lower() or "timed out" in health["error"].lower()
    assert 1.5 < seconds < 8.0, f"health waited {seconds:.1f} s for a silent server"


def test_health_of_a_ready_server_sends_the_configured_api_key(api: httpx.Client) -> None:
    qdrant = StandIn()
    with qdrant.running() as port:
        ok(api.put(SETTINGS, json={"enabled": True, "host": "127.0.0.1", "port": port, "apiKey": KEY}))
        health = ok(api.get(f"{SETTINGS}/health"))
        assert health["ok"] is True and health["error"] is None
        assert isinstance(health["latencyMs"], int | float) and 0 <= health["latencyMs"] < 3000
        assert qdrant.readyz(), "memroute never called /readyz"
        assert qdrant.readyz()[-1].get("api-key") == KEY

        ok(api.put(SETTINGS, json={"apiKey": ""}))
        assert ok(api.get(f"{SETTINGS}/health"))["ok"] is True
        assert "api-key" not in qdrant.readyz()[-1]  # no key configured: no header


def test_health_reports_the_servers_own_refusal(api: httpx.Client) -> None:
    qdrant = StandIn(status=503, body="not ready")
    with qdrant.running() as port:
        ok(api.put(SETTINGS, json={"enabled": True, "host": f"http://127.0.0.1:{port}/", "apiKey": KEY}))
        health = ok(api.get(f"{SETTINGS}/health"))
        assert health["ok"] is False and "not ready" in health["error"]

        qdrant.status, qdrant.body = 500, ""
        assert ok(api.get(f"{SETTINGS}/health"))["error"] == "HTTP 500"

        # A server that repeats the key in its answer: the error shows it masked.
        qdrant.status, qdrant.body, qdrant.echo_key_in_readyz = 401, "forbidden", True
        refused = ok(api.get(f"{SETTINGS}/health"))
        assert refused["ok"] is False and "forbidden" in refused["error"] and "***" in refused["error"]
    assert qdrant.readyz()[-1].get("api-key") == KEY


def test_health_reaches_an_ipv6_literal_host(api: httpx.Client) -> None:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    qdrant = StandIn(family=socket.AF_INET6)
    with qdrant.running() as port:
        ok(api.put(SETTINGS, json={"enabled": True, "host": "http://[::1]", "port": port}))
        assert ok(api.get(f"{SETTINGS}/health"))["ok"] is True
    assert qdrant.readyz()


# -- Qdrant down: retrieval falls back, status says why, tools answer 200 -----------------------


def test_retrieval_falls_back_to_sqlite_vec_while_qdrant_is_unreachable(api: httpx.Client) -> None:
    ok(api.put("/api/settings/memory", json={"embeddingSource": "hashing"}))
    memory = ok(
        api.post("/api/memory", json={"content": "prefers green tea in the morning", "key": "pref:tea"})
    )
    port = free_port()
    ok(api.put(SETTINGS, json={"enabled": True, "host": "127.0.0.1", "port": port, "apiKey": KEY}))
    assert vector_store(api) == "qdrant"

    for strategy in ("semantic", "hybrid"):
        preview = ok(
            api.post("/api/memory/retrieve-preview", json={"query": "green tea", "strategy": strategy})
        )
        assert [m["id"] for m in preview["memories"]] == [memory["id"]], strategy
        assert preview["memories"][0]["tier"] in ("vector", "hybrid-rrf", "fts5")
        resolution = preview["resolution"]
        assert resolution["vectorStore"] == "sqlite-vec"
        assert "Qdrant" in (resolution["fallbackReason"] or ""), resolution

    status = ok(api.get("/api/memory/engine-status"))
    qdrant = status["qdrant"]
    assert (qdrant["enabled"], qdrant["healthy"], qdrant["serving"]) == (True, False, False)
    assert qdrant["error"] and "Qdrant" in qdrant["error"]
    assert qdrant["where"] == f"http://127.0.0.1:{port}"
    assert status["vectorStore"]["backend"] == "sqlite-vec" and status["vectorStore"]["available"] is True

    searched = api.post(f"{SETTINGS}/search", json={"query": "green tea", "topK": 3})
    assert searched.status_code == 200
    assert searched.json()["ok"] is False and searched.json()["results"] == []
    assert "Qdrant" in searched.json()["error"]
    cleaned = api.post(f"{SETTINGS}/cleanup")
    assert cleaned.status_code == 200
    assert (cleaned.json()["ok"], cleaned.json()["deletedCount"]) == (False, 0)
    assert cleaned.json()["retentionDays"] == 30 and cleaned.json()["error"]

    # Switched off, retrieval no longer mentions Qdrant.
    ok(api.put(SETTINGS, json={"enabled": False}))
    preview = ok(api.post("/api/memory/retrieve-preview", json={"query": "green tea", "strategy": "hybrid"}))
    assert preview["memories"][0]["id"] == memory["id"]
    assert "Qdrant" not in (preview["resolution"]["fallbackReason"] or "")
    assert ok(api.get("/api/memory/engine-status"))["qdrant"]["healthy"] is None


def test_the_search_body_is_validated_and_the_schemas_are_published(api: httpx.Client) -> None:
    for body in (
        {},
        {"query": ""},
        {"query": "x", "topK": 0},
        {"query": "x", "topK": 51},
        {"query": "x", "k": 5},
    ):
        assert_error(api.post(f"{SETTINGS}/search", json=body), 400)
    # REF qdrant-schemas: the schemas are exported, a partial update is valid, topK defaults to 5.
    schemas = ok(api.get("/openapi.json"))["components"]["schemas"]
    assert schemas["QdrantSearchRequest"]["properties"]["topK"]["default"] == 5
    assert schemas["QdrantSearchRequest"]["required"] == ["query"]
    assert not schemas["QdrantSettingsUpdate"].get("required")
    assert "apiKey" not in schemas["QdrantSettingsOut"]["properties"]


# -- embedding models ------------------------------------------------------------------------


def test_embedding_models_start_with_the_memory_embedding_source(api: httpx.Client) -> None:
    async def models(request: Request) -> JSONResponse:
        listed = ["text-embedding-3-small", "gpt-4o-mini", "nomic-embed-text"]
        return JSONResponse({"object": "list", "data": [{"id": m, "object": "model"} for m in listed]})

    with LiveServer(Starlette(routes=[Route("/v1/models", models)])) as provider:
        added = api.post(
            "/api/providers", json={"id": "emb", "baseUrl": provider.url + "/v1", "apiKey": "sk-x-1"}
        )
        assert added.status_code == 201, added.text
        ok(api.put("/api/settings/memory", json={"embeddingSource": "hashing"}))
        listed = ok(api.get(f"{SETTINGS}/embedding-models"))["models"]
    assert listed[0]["value"] == ""
    assert listed[0]["label"].startswith("Memory embedding source") and "hashing" in listed[0]["label"]
    values = [m["value"] for m in listed[1:]]
    assert values == ["emb/nomic-embed-text", "emb/text-embedding-3-small"]  # embedding models only

    ok(api.put(SETTINGS, json={"embeddingModel": "other/custom-embedder"}))
    again = ok(api.get(f"{SETTINGS}/embedding-models"))["models"]  # the provider is gone now
    assert [m["value"] for m in again] == ["", "other/custom-embedder"]  # the chosen one stays listed


# -- the key never leaks -------------------------------------------------------------------------


def test_the_qdrant_key_leaks_nowhere_even_when_the_server_echoes_it(
    api: httpx.Client, bodies: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    ok(api.put("/api/settings/memory", json={"embeddingSource": "hashing"}))
    ok(api.post("/api/memory", json={"content": "prefers green tea", "key": "pref:tea"}))
    qdrant = StandIn(echo_key_in_readyz=True)
    with qdrant.running() as port:
        ok(api.put(SETTINGS, json={"enabled": True, "host": "127.0.0.1", "port": port, "apiKey": KEY}))
        assert ok(api.get(f"{SETTINGS}/health"))["ok"] is True
        qdrant.status = 401
        assert ok(api.get(f"{SETTINGS}/health"))["ok"] is False
        # The sync worker meets the stand-in's 404s, which carry the key, and records the error.
        deadline = time.monotonic() + 15
        while not ok(api.get("/api/memory/engine-status"))["qdrant"]["lastError"]:
            assert time.monotonic() < deadline, "the sync worker never reached the stand-in"
            time.sleep(0.1)
        last_error = ok(api.get("/api/memory/engine-status"))["qdrant"]["lastError"]
        ok(api.post(f"{SETTINGS}/search", json={"query": "tea"}))
        ok(api.post(f"{SETTINGS}/cleanup"))
        ok(api.post("/api/memory/retrieve-preview", json={"query": "tea", "strategy": "hybrid"}))
        ok(api.get(f"{SETTINGS}/embedding-models"))
        ok(api.get(SETTINGS))
        ok(api.get("/openapi.json"))
        api.get("/metrics")
    others = [headers for _, path, headers in qdrant.seen if path != "/readyz"]
    assert others and all(headers.get("api-key") == KEY for headers in others)  # the key was used
    assert "***" in last_error  # the echoed key, masked
    assert len(caplog.records) > 5
    # The `bodies` fixture then checks every body above and every log line for the key.


# -- known bug ---------------------------------------------------------------------------------


def test_an_unusable_qdrant_host_variable_is_refused_or_reported(tmp_path: Path, bodies: list[str]) -> None:
    env = {"MEMROUTE_ADMIN_TOKEN": ADMIN, "QDRANT_HOST": "::1"}  # a bare IPv6 literal, no brackets
    try:
        Config.for_path(tmp_path / "memroute.db", environ=env)
    except InvalidInput as refused:  # refusing it at start is one fix
        assert refused.field == "QDRANT_HOST"
        return
    with session(tmp_path / "memroute.db", bodies, QDRANT_HOST="::1") as api:
        assert api.get("/api/memory/engine-status").status_code == 200  # reporting it is the other
