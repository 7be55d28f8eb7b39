"""No secret leaves memroute: a full run — keys, providers, chats, embedding and rerank
providers failing, unauthenticated calls — with every log line captured at DEBUG and
every response body kept, and none of them may contain a secret."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from servers import ADMIN, AUTH, LiveServer, ScriptedUpstream
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memroute.config import Config
from memroute.web.app import create_app

UPSTREAM_SECRET = "sk-upstream-DO-NOT-LEAK-1111111111"
PROVIDER_SECRET = "sk-provider-DO-NOT-LEAK-2222222222"
EMBEDDING_SECRET = "sk-embedding-DO-NOT-LEAK-3333333333"


def _refusing_provider() -> Starlette:
    """Embeddings and rerank that answer 401, echoing the key they got (as some providers do)."""

    async def refuse(request: Request) -> JSONResponse:
        key = request.headers.get("authorization", "")
        return JSONResponse({"error": {"message": f"invalid key {key}"}}, status_code=401)

    return Starlette(
        routes=[
            Route("/v1/embeddings", refuse, methods=["POST"]),
            Route("/v1/rerank", refuse, methods=["POST"]),
        ]
    )


def test_no_secret_reaches_a_response_or_a_log_line(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    upstream = ScriptedUpstream()
    bodies: list[str] = []
    with LiveServer(upstream.app()) as up, LiveServer(_refusing_provider()) as refusing:
        env = {
            "MEMROUTE_ADMIN_TOKEN": ADMIN,
            "MEMROUTE_UPSTREAM_BASE_URL": up.url + "/v1",
            "MEMROUTE_UPSTREAM_API_KEY": UPSTREAM_SECRET,
        }
        with (
            LiveServer(create_app(Config.for_path(tmp_path / "m.db", environ=env))) as server,
            httpx.Client(base_url=server.url, headers=AUTH, timeout=30) as api,
        ):

            def keep(response: httpx.Response) -> Any:
                bodies.append(response.text)
                return response.json() if response.text else None

            keep(
                api.post(
                    "/api/providers",
                    json={"id": "emb", "baseUrl": refusing.url + "/v1", "apiKey": EMBEDDING_SECRET},
                )
            )
            keep(
                api.post(
                    "/api/providers",
                    json={"id": "other", "baseUrl": up.url + "/v1", "apiKey": PROVIDER_SECRET},
                )
            )
            created = api.post("/api/keys", json={"name": "app"}).json()  # the one place it is shown
            client_secret = created["secret"]
            keep(
                api.put(
                    "/api/settings/memory",
                    json={
                        "enabled": True,
                        "embeddingSource": "remote",
                        "embeddingProviderModel": "emb/text-embedder",
                        "rerankEnabled": True,
                        "rerankProviderModel": "emb/rerank-1",
                    },
                )
            )
            added = api.post(
                "/api/memory",
                json={"apiKeyId": created["key"]["id"], "content": "prefers tea", "key": "preference:tea"},
            )
            assert added.status_code == 200, added.text
            bodies.append(added.text)

            chat = openai.OpenAI(base_url=server.url + "/v1", api_key=client_secret, max_retries=0)
            raw = chat.chat.completions.with_raw_response.create(
                model="echo-1", messages=[{"role": "user", "content": "I prefer green tea. What do I like?"}]
            )
            bodies.append(raw.text)
            raw = chat.chat.completions.with_raw_response.create(
                model="other/echo-1", messages=[{"role": "user", "content": "Hello"}]
            )
            bodies.append(raw.text)
            upstream.fail(status=401, body={"error": {"message": "upstream refused"}})
            with pytest.raises(openai.AuthenticationError) as refused:
                chat.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "x"}])
            bodies.append(str(refused.value))

            for path in (
                "/api/providers",
                "/api/keys",
                "/api/memory/engine-status",
                "/api/memory/embedding-providers",
                "/api/settings/memory",
                "/openapi.json",
                "/metrics",
            ):
                keep(api.get(path)) if path != "/metrics" else bodies.append(api.get(path).text)
            preview = keep(
                api.post("/api/memory/retrieve-preview", json={"query": "tea", "strategy": "hybrid"})
            )
            assert "degraded to FTS5" in (preview["resolution"]["fallbackReason"] or "")  # the 401 was met
            keep(api.post("/api/memory/reindex", json={}))
            bodies.append(httpx.get(server.url + "/api/keys", headers={"Authorization": "Bearer wrong"}).text)
            bodies.append(httpx.post(server.url + "/v1/chat/completions", json={}).text)

    assert upstream.requests, "the scripted upstream was really called"
    everything = "\n".join(bodies) + "\n" + caplog.text
    for secret in (UPSTREAM_SECRET, PROVIDER_SECRET, EMBEDDING_SECRET, client_secret, ADMIN):
        assert secret not in everything, f"a secret leaked: {secret[:12]}…"
    assert "DO-NOT-LEAK" not in everything
    assert len(caplog.records) > 10  # the run did log


def test_the_server_binds_localhost_and_answers_no_cross_origin_request(tmp_path: Path) -> None:
    assert Config.for_path(tmp_path / "m.db", environ={}).host == "127.0.0.1"
    config = Config.for_path(tmp_path / "m.db", environ={"MEMROUTE_ADMIN_TOKEN": ADMIN})
    with LiveServer(create_app(config)) as server:
        preflight = httpx.options(
            server.url + "/api/memory",
            headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"},
        )
        assert "access-control-allow-origin" not in preflight.headers
        plain = httpx.get(server.url + "/healthz", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in plain.headers
