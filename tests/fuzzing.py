"""Schemathesis against memroute's own `/openapi.json`: every operation, over real HTTP
(memroute under uvicorn on 127.0.0.1, a temp database, a scripted upstream for `/v1/*`).

The operations are fuzzed by two test files, each against a server of its own, so that two
parallel workers share the work: tests/test_fuzz_memory_api.py takes the memory routes
(`/api/memory...`, MEMORY_OPERATIONS), tests/test_fuzz_api.py every other one (OTHER_OPERATIONS);
together they are every operation of the document, by construction.

pytest gets one item per operation, named from the app's routes (cheap: no document is
built while collecting). The schema is the document the live server serves, loaded by each
file's module fixture (`fuzz_target`), which checks that its operations are exactly the
app's; each item then runs schemathesis' own test of its operation (examples, coverage and
fuzzing phases: `fuzz_operation`).
(`schemathesis.pytest.from_fixture` would do this, but schemathesis 4.32 sets
`Function._nodeid`, which pytest 9.2 no longer has.)

Every case must: never be a 5xx, carry the error shape `{"error": {"message", "type"}}`
(Anthropic's `{"type": "error", "error": {…}}` on `/v1/messages…`) on every 4xx, never leak
a stack trace, and pass schemathesis' default checks (status
codes, content types and bodies conform to the schema; invalid data is rejected).

`/mcp` is not in the OpenAPI document (it is raw ASGI, MCP over streamable HTTP) and is
covered by tests/test_mcp.py and the hostile-input tests, not here.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import requests
import schemathesis
from pydantic import BaseModel, ValidationError
from schemathesis import Case
from schemathesis.checks import load_all_checks
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.pytest._test_builder import build_operation_test
from schemathesis.python._constants.orchestrator import make_constants_value_source
from schemathesis.specs.openapi.schemas import OpenApiSchema
from servers import ADMIN, AUTH, LiveServer, ScriptedUpstream, management_api
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from memroute.config import Config
from memroute.embeddings import DISTILLED_STATIC_NAME, build_static_model
from memroute.web.app import create_app
from memroute.web.errors import error_shape
from memroute.web.routes.gateway import (
    ChatCompletionRequest,
    CountTokensRequest,
    EmbeddingRequest,
    MessagesRequest,
    ResponsesRequest,
)
from memroute.web.schemas.memory import MemoryOut

# Fuzzing phase examples per operation (the examples and coverage phases add their own,
# bounded by the schema). Keeps each of the two fuzzing files around half a minute on 2 cores.
MAX_EXAMPLES = 50
TRACE_MARKERS = ("Traceback", 'File "')
# The fuzzer's requests come from this loopback address: the wrong admin tokens it sends to
# POST /api/session count against it, not against 127.0.0.1, which later tests log in from
# (the login throttle is per client address and per process).
FUZZ_SOURCE = "127.0.0.2"
# The static model the server finds in its cache when the fuzzer turns the static source on:
# distilled from the first tokens only (under a second), instead of the whole vocabulary
# (~30 s of CPU in the server's re-index thread, tested in tests/embeddings/).
STATIC_VOCAB = 500


class FromAddress(requests.adapters.HTTPAdapter):
    """Connects from `host` (any 127.x.y.z is a loopback address on Linux)."""

    def __init__(self, host: str) -> None:
        self.host = host
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.host, 0)
        super().init_poolmanager(*args, **kwargs)


class StrictUpstream(ScriptedUpstream):
    """The scripted provider, but rejecting what a real provider rejects: a body that does
    not match the request schema memroute documents for the route is a 400 in the error
    shape of its format (the gateway passes a provider's errors through unchanged)."""

    async def chat(self, request: Request) -> Response:
        return await self._checked(request, ChatCompletionRequest, super().chat)

    async def embeddings(self, request: Request) -> Response:
        return await self._checked(request, EmbeddingRequest, super().embeddings)

    async def responses(self, request: Request) -> Response:
        return await self._checked(request, ResponsesRequest, super().responses)

    async def messages(self, request: Request) -> Response:
        return await self._checked(request, MessagesRequest, super().messages)

    async def count_tokens(self, request: Request) -> Response:
        return await self._checked(request, CountTokensRequest, super().count_tokens)

    @staticmethod
    async def _checked(
        request: Request, model: type[BaseModel], handler: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        try:
            model.model_validate_json(await request.body(), strict=True)
        except ValidationError as exc:
            error = {"message": str(exc.errors()[0]["msg"]), "type": "invalid_request_error"}
            if request.url.path.startswith("/v1/messages"):
                return JSONResponse({"type": "error", "error": error}, status_code=400)
            return JSONResponse({"error": {**error, "param": None, "code": None}}, status_code=400)
        return await handler(request)


def _operation_labels() -> list[str]:
    """ "METHOD /path" of every operation in the app's OpenAPI document (building the app
    opens no database)."""
    app = create_app(Config.for_path(Path("never-opened.db"), environ={"MEMROUTE_ADMIN_TOKEN": ADMIN}))
    paths: dict[str, dict[str, Any]] = app.openapi()["paths"]
    return [f"{method.upper()} {path}" for path, item in paths.items() for method in item]


OPERATIONS = _operation_labels()
MEMORY_OPERATIONS = [label for label in OPERATIONS if label.split(" ")[1].startswith("/api/memory")]
OTHER_OPERATIONS = [label for label in OPERATIONS if label not in MEMORY_OPERATIONS]
# The import route takes JSON Lines as text; the fuzzer sends its strings as they are.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")
FUZZ_CONFIG = {
    "generation": {
        "max-examples": MAX_EXAMPLES,
        "deterministic": True,
        # NUL characters and lone surrogates are rejected (400) wherever text is taken;
        # tests/test_hostile_inputs.py sends them on purpose.
        "allow-x00": False,
        "codec": "utf-8",
    },
    "request-timeout": 30,
    "operations": [
        {
            # Host names and URLs are checked by the core beyond what a JSON Schema
            # pattern says (IPv6 brackets, port range, characters httpx refuses):
            # a schema-valid value may still be a 400 here, never a 5xx.
            "include-name": [
                "POST /api/providers",
                "PUT /api/providers/{id}",
                "PUT /api/settings/qdrant",
            ],
            "checks": {"positive_data_acceptance": {"expected-statuses": ["2xx", "400", "404", "409"]}},
        },
        {
            # A model goes to a provider of the route's wire format, which a schema cannot
            # say: a schema-valid model of a provider of the other format (one the fuzzer
            # added, say) is a 400, never a 5xx.
            "include-name": ["POST /v1/messages", "POST /v1/messages/count_tokens", "POST /v1/responses"],
            "checks": {
                "positive_data_acceptance": {"expected-statuses": ["2xx", "400", "401", "404", "429"]}
            },
        },
        {
            # A bad record is reported in `errors` and skipped (a 200), and a "wrongly
            # typed" JSON Lines body is still text on the wire. Empty, non-UTF-8 and
            # too deeply nested bodies are tested by hand (test_hostile_inputs.py). Text the
            # schema admits may still be a 400, as docs/http-api.md says: empty, or starting
            # with `[` without being a JSON array.
            "include-name": "POST /api/memory/import",
            "checks": {
                "negative_data_rejection": {"enabled": False},
                "positive_data_acceptance": {"expected-statuses": ["2xx", "400"]},
            },
        },
    ],
}


@dataclass
class FuzzTarget:
    url: str
    client_auth: dict[str, str]
    session: requests.Session
    schema: OpenApiSchema  # the document the live server serves
    feedback: FeedbackSources
    cases: Counter[str] = field(default_factory=Counter)  # per operation
    methods: Counter[str] = field(default_factory=Counter)  # methods sent, including undeclared ones
    statuses: Counter[int] = field(default_factory=Counter)
    seconds: Counter[str] = field(default_factory=Counter)

    def report(self, elapsed: float) -> list[str]:
        total = sum(self.cases.values())
        return [
            f"schemathesis: {total} cases over {len(self.cases)} operations in {elapsed:.1f}s",
            "  methods: " + ", ".join(f"{m}×{n}" for m, n in sorted(self.methods.items())),
            "  statuses: " + ", ".join(f"{s}×{n}" for s, n in sorted(self.statuses.items())),
            "  per operation: " + ", ".join(f"{label} {n}" for label, n in sorted(self.cases.items())),
            "  slowest: " + ", ".join(f"{label} {s:.1f}s" for label, s in self.seconds.most_common(3)),
        ]


def fuzz_target_fixture(folder: str) -> Any:
    """A module fixture `fuzz_target`: a server of the module's own (see `serve_fuzz_target`)
    in a new temporary folder named `folder`. A test module assigns it to `fuzz_target`."""

    @pytest.fixture(scope="module", name="fuzz_target")
    def fixture(
        tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
    ) -> Iterator[FuzzTarget]:
        yield from serve_fuzz_target(tmp_path_factory.mktemp(folder), request)

    return fixture


def serve_fuzz_target(folder: Path, request: pytest.FixtureRequest) -> Iterator[FuzzTarget]:
    """memroute in `folder` with a fuzzing key and three memories, for a module fixture: yields
    the target, then checks the server still answers and prints what the fuzzer sent."""
    upstream = StrictUpstream()
    db = folder / "memroute.db"
    build_static_model(folder / "embeddings" / DISTILLED_STATIC_NAME, vocab_limit=STATIC_VOCAB)
    started = time.monotonic()
    with (
        LiveServer(upstream.app()) as upstream_server,
        # The fuzzer sends wrong admin tokens to the login: the throttle (tested in
        # test_auth_hardening.py) is opened wide so its answers stay about the input.
        management_api(
            db,
            MEMROUTE_UPSTREAM_BASE_URL=upstream_server.url + "/v1",
            MEMROUTE_ADMIN_FAILURES_PER_ADDRESS="100000",
            MEMROUTE_ADMIN_FAILURES_TOTAL="100000",
        ) as api,
        requests.Session() as session,
    ):
        session.mount("http://", FromAddress(FUZZ_SOURCE))
        created = api.post("/api/keys", json={"name": "fuzz"})
        assert created.status_code == 201, created.text
        # Memory on, and memories for the fuzzing key: chat turns go through retrieval,
        # injection and extraction.
        assert api.put("/api/settings/memory", json={"enabled": True}).status_code == 200
        owner = created.json()["key"]["id"]
        # An Anthropic-format provider at the same upstream: /v1/messages goes there.
        claude = {"id": "claude", "baseUrl": upstream_server.url + "/v1", "format": "anthropic"}
        assert api.post("/api/providers", json=claude).status_code == 201
        for n, fact in enumerate(("prefers dark mode", "lives in Lisbon", "uses vim")):
            stored = api.post("/api/memory", json={"content": fact, "key": f"fact-{n}", "apiKeyId": owner})
            assert stored.status_code == 200, stored.text
        schema = _served_schema(api)
        client_auth = {"Authorization": f"Bearer {created.json()['secret']}"}
        feedback = FeedbackSources(constants_value_source=make_constants_value_source(schema))
        target = FuzzTarget(str(api.base_url).rstrip("/"), client_auth, session, schema, feedback)
        yield target
        # The server still answers after everything the fuzzer sent.
        assert api.get("/healthz").status_code == 200
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():  # shown without -s too
        print("\n" + "\n".join(target.report(time.monotonic() - started)))


def _served_schema(api: httpx.Client) -> OpenApiSchema:
    """The live server's `/openapi.json` as a schemathesis schema; its operations must be
    exactly the test items."""
    document = api.get("/openapi.json").json()
    schema = schemathesis.openapi.from_dict(document, config=schemathesis.Config.from_dict(FUZZ_CONFIG))
    served = [result.ok().label for result in schema.get_all_operations()]
    assert served == OPERATIONS, "the served OpenAPI document and the app's routes disagree"
    load_all_checks()
    return schema


def _auth_for(case: Case, target: FuzzTarget) -> dict[str, str]:
    return target.client_auth if case.path.startswith("/v1/") else AUTH


def _assert_clean(case: Case, response: schemathesis.Response) -> None:
    status = response.status_code
    text = response.text
    label = f"{case.method.upper()} {case.formatted_path}"
    assert status < 500, f"{label} -> {status}: {text[:500]}"
    for marker in TRACE_MARKERS:
        assert marker not in text, f"{label} leaked a stack trace: {text[:500]}"
    if 400 <= status < 500:
        body = response.json()
        shape = error_shape(case.path)
        # Anthropic's routes answer in its shape, with the error's type at the top as well.
        top = {"type", "error"} if shape == "anthropic" else {"error"}
        assert isinstance(body, dict) and set(body) == top, f"{label} -> {status}: {text[:500]}"
        error = body["error"]
        assert isinstance(error, dict), text
        assert isinstance(error.get("message"), str) and error["message"], text
        assert isinstance(error.get("type"), str) and error["type"], text
        # OpenAI's gateway errors carry its two extra fields as well.
        fields = {"message", "type", "param", "code"} if shape == "openai" else {"message", "type"}
        assert set(error) == fields, text


def fuzz_operation(label: str, fuzz_target: FuzzTarget) -> None:
    """Schemathesis' test of the operation `label`: every case it generates must survive."""
    operation = fuzz_target.schema.find_operation_by_label(label)
    assert operation is not None, label
    run = build_operation_test(
        config=fuzz_target.schema.config,
        operation=operation,
        test_func=_survives,
        given_kwargs={},
        feedback=fuzz_target.feedback,
    )
    run(fuzz_target=fuzz_target)


def _survives(case: Case, fuzz_target: FuzzTarget) -> None:
    """One generated case against the live server."""
    headers = _auth_for(case, fuzz_target)
    label = case.operation.label
    started = time.monotonic()
    response = case.call(base_url=fuzz_target.url, session=fuzz_target.session, headers=headers)
    fuzz_target.seconds[label] += time.monotonic() - started
    fuzz_target.cases[label] += 1
    fuzz_target.methods[case.method.upper()] += 1
    fuzz_target.statuses[response.status_code] += 1
    _assert_clean(case, response)
    case.validate_response(response, headers=headers)
    if label == "GET /api/memory/export" and response.status_code == 200:
        # JSON Lines: schemathesis has no deserializer for it, so each line is checked here
        # against the MemoryOut schema the route declares.
        for line in response.text.split("\n")[:-1]:  # one memory per line, each ending in "\n"
            MemoryOut.model_validate_json(line, strict=True)
