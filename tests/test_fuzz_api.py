"""Schemathesis against memroute's own `/openapi.json`: every operation, over real HTTP
(memroute under uvicorn on 127.0.0.1, a temp database, a scripted upstream for `/v1/*`).

The schema is the app's `openapi()` document, built at import so that pytest gets one
item per operation; the fixture checks that the live server serves exactly that document.
(`schemathesis.pytest.from_fixture` would load it from the live server, but schemathesis
4.32 sets `Function._nodeid`, which pytest 9.2 no longer has.)

Every case must: never be a 5xx, carry the error shape `{"error": {"message", "type"}}`
on every 4xx, never leak a stack trace, and pass schemathesis' default checks (status
codes, content types and bodies conform to the schema; invalid data is rejected).

`/mcp` is not in the OpenAPI document (it is raw ASGI, MCP over streamable HTTP) and is
covered by tests/test_mcp.py and the hostile-input tests, not here.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from schemathesis import BaseSchema, Case
from servers import ADMIN, AUTH, LiveServer, ScriptedUpstream, management_api

from memroute.config import Config
from memroute.web.app import create_app

# Fuzzing phase examples per operation (the examples and coverage phases add their own,
# bounded by the schema). Keeps the whole module around a minute on 2 cores.
MAX_EXAMPLES = 25
TRACE_MARKERS = ("Traceback", 'File "')




def _openapi_document() -> dict[str, Any]:
    """The document `/openapi.json` serves (building the app opens no database)."""
    unused = Path(tempfile.gettempdir()) / "memroute-openapi" / "memroute.db"
    app = create_app(Config.for_path(unused, environ={"MEMROUTE_ADMIN_TOKEN": ADMIN}))
    return app.openapi()


OPENAPI = _openapi_document()
schema = schemathesis.openapi.from_dict(
    OPENAPI,
    config=schemathesis.Config.from_dict(
        {"generation": {"max-examples": MAX_EXAMPLES, "deterministic": True}, "request-timeout": 30}
    ),
)


@dataclass
class FuzzTarget:
    url: str
    client_auth: dict[str, str]
    cases: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)


@pytest.fixture(scope="module")
def fuzz_target(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[FuzzTarget]:
    upstream = ScriptedUpstream()
    db = tmp_path_factory.mktemp("fuzz") / "memroute.db"
    started = time.monotonic()
    with LiveServer(upstream.app()) as upstream_server:
        env = {"MEMROUTE_UPSTREAM_BASE_URL": upstream_server.url + "/v1"}
        with management_api(db, **env) as api:
            created = api.post("/api/keys", json={"name": "fuzz"})
            assert created.status_code == 201, created.text
            assert api.get("/openapi.json").json() == OPENAPI
            target = FuzzTarget(str(api.base_url).rstrip("/"), {"Authorization": f"Bearer {created.json()['secret']}"})
            yield target
            # The server still answers after everything the fuzzer sent.
            assert api.get("/healthz").status_code == 200
    elapsed = time.monotonic() - started
    total = sum(target.cases.values())
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    lines = [
        f"schemathesis: {total} cases over {len(target.cases)} operations in {elapsed:.1f}s",
        "  statuses: " + ", ".join(f"{s}×{n}" for s, n in sorted(target.statuses.items())),
        *(f"  {label}: {n}" for label, n in sorted(target.cases.items())),
    ]
    for line in lines:
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line)


def _auth_for(case: Case, target: FuzzTarget) -> dict[str, str]:
    return target.client_auth if case.path.startswith("/v1/") else AUTH


def _assert_clean(case: Case, response: Any) -> None:
    status = response.status_code
    text = response.text
    label = f"{case.method.upper()} {case.formatted_path}"
    assert status < 500, f"{label} -> {status}: {text[:500]}"
    for marker in TRACE_MARKERS:
        assert marker not in text, f"{label} leaked a stack trace: {text[:500]}"
    if 400 <= status < 500:
        body = response.json()
        assert isinstance(body, dict) and set(body) == {"error"}, f"{label} -> {status}: {text[:500]}"
        error = body["error"]
        assert isinstance(error, dict), text
        assert isinstance(error.get("message"), str) and error["message"], text
        assert isinstance(error.get("type"), str) and error["type"], text
        # Gateway errors carry OpenAI's extra fields; management errors carry exactly two.
        extra = {"param", "code"} if case.path.startswith("/v1/") else set()
        assert set(error) - {"message", "type"} <= extra, text


@schema.parametrize()
def test_every_operation_survives_the_fuzzer(case: Case, fuzz_target: FuzzTarget) -> None:
    headers = _auth_for(case, fuzz_target)
    response = case.call(base_url=fuzz_target.url, headers=headers)
    fuzz_target.cases[f"{case.method.upper()} {case.path}"] += 1
    fuzz_target.statuses[response.status_code] += 1
    _assert_clean(case, response)
    case.validate_response(response, headers=headers)
