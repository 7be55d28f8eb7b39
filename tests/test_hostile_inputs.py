"""Hand-written hostile inputs against the real server (uvicorn on 127.0.0.1, a temp
database, a scripted upstream): FTS5 syntax and SQL metacharacters in every text field,
invalid UTF-8 and lone surrogates, 10 MB bodies, deeply nested JSON, bad paging,
non-object metadata, dates out of range.

Each must be a clear 4xx with the error shape or a correct 200; a rejected write leaves
no row (and an update leaves the memory as it was); the server answers afterwards.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from error_shape import assert_error, assert_no_trace
from memories import open_memory
from servers import (
    ADMIN,
    JSON_LINES,
    MCP_INITIALIZE,
    LiveServer,
    ScriptedUpstream,
    management_api,
    wait_until,
)
from storage import database, scalar

from memroute import Memory
from memroute.cli import main as cli
from memroute.models.records import ProviderRecord

FTS_SYNTAX = [
    '"foo" AND NOT bar*',
    "NEAR(a b)",
    "NEAR(alpha beta, 2)",
    "content:x",
    "key:value OR",
    '"unbalanced',
    'unbalanced" quote',
    "^start",
    "^",
    "*",
    "prefix*",
    "(",
    ")",
    "a OR",
    "NOT",
    "{content key}:x",
    "-minus",
    "'; DROP TABLE memories; --",
    '" OR 1=1 --',
    "x'); DELETE FROM memory_fts; --",
    "%_\\",
]
TEN_MB = 10 * 1024 * 1024
NESTED = b"[" * 10_000 + b"]" * 10_000
MCP_ACCEPT = "application/json, text/event-stream"
EPOCH = "2026-01-01T00:00:00.000Z"


@dataclass
class Target:
    api: httpx.Client  # admin token
    chat: httpx.Client  # a client key, for /v1/*
    url: str
    side: Memory  # a second Memory on the server's database, to look at its rows
    chat_memory: str  # the id of the client key's one memory

    def rows(self, table: str = "memories") -> int:
        """Rows of `table` once the turns earlier chats queued are stored (the server's worker
        stores them a moment after each chat)."""
        wait_until(lambda: self.side.extraction_queue().pending == 0)
        return int(scalar(self.side, f"SELECT count(*) FROM {table}"))

    def alive(self) -> None:
        assert self.api.get("/healthz").status_code == 200
        listed = self.api.get("/api/memory", params={"limit": 200})
        assert listed.status_code == 200, listed.text


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    db = tmp_path_factory.mktemp("hostile") / "memroute.db"
    side = open_memory(db)
    key, secret = side.keys.create("hostile")
    # The chats here check that hostile text is plain text to retrieval and injection; they
    # are not kept (each would become a memory the next chat recalls).
    side.update_settings(enabled=True, captureTurns="off")
    recalled = side.add(key.id, "prefers dark mode", key="chat-memory")  # recalled in chats
    upstream = ScriptedUpstream(default_echo=False)  # replies "OK", whatever the turn held
    with (
        LiveServer(upstream.app()) as up,
        management_api(db, MEMROUTE_UPSTREAM_BASE_URL=up.url + "/v1") as api,
        httpx.Client(
            base_url=api.base_url, headers={"Authorization": f"Bearer {secret}"}, timeout=60
        ) as chat,
    ):
        yield Target(api, chat, str(api.base_url).rstrip("/"), side, recalled.id)
    side.close()


def raw_json(client: httpx.Client, method: str, path: str, body: bytes, **kwargs: Any) -> httpx.Response:
    return client.request(method, path, content=body, headers={"content-type": "application/json"}, **kwargs)


def add(target: Target, **fields: Any) -> dict[str, Any]:
    response = target.api.post("/api/memory", json=fields)
    assert response.status_code == 200, response.text
    return response.json()["memory"]  # type: ignore[no-any-return]


# -- FTS5 syntax and SQL metacharacters ---------------------------------------------------


@pytest.mark.parametrize("text", FTS_SYNTAX)
def test_fts_syntax_and_sql_are_plain_text_everywhere(target: Target, text: str) -> None:
    owner = f"fts-{FTS_SYNTAX.index(text)}"
    before = target.rows()
    memory = add(
        target, content=f"note {text}", key=text, apiKeyId=owner, sessionId=text, metadata={text: text}
    )
    assert (memory["content"], memory["key"], memory["sessionId"]) == (f"note {text}", text.strip(), text)
    assert memory["metadata"] == {text: text}
    assert target.rows() == before + 1

    listed = target.api.get("/api/memory", params={"q": text, "apiKeyId": owner})
    assert listed.status_code == 200, listed.text
    assert [m["id"] for m in listed.json()["data"]] == [memory["id"]]
    by_session = target.api.get("/api/memory", params={"sessionId": text, "apiKeyId": owner})
    assert [m["id"] for m in by_session.json()["data"]] == [memory["id"]]

    for strategy in ("exact", "hybrid", "semantic"):
        preview = target.api.post(
            "/api/memory/retrieve-preview", json={"query": text, "apiKeyId": owner, "strategy": strategy}
        )
        assert preview.status_code == 200, preview.text
        assert [m["id"] for m in preview.json()["memories"]] == [memory["id"]]
        assert "failed" not in (preview.json()["resolution"]["fallbackReason"] or "")

    searched = target.api.post("/api/settings/qdrant/search", json={"query": text})
    assert searched.status_code == 200, searched.text
    changed = target.api.put(f"/api/memory/{memory['id']}", json={"content": f"changed {text}"})
    assert changed.status_code == 200 and changed.json()["memory"]["content"] == f"changed {text}"
    # The same text as a user turn goes through retrieval and injection on the chat path.
    turn = {"model": "echo", "messages": [{"role": "user", "content": f"{text} dark mode?"}]}
    reply = target.chat.post("/v1/chat/completions", json=turn, headers={"x-memroute-debug": "true"})
    assert reply.status_code == 200, reply.text
    assert reply.headers["x-memroute-memory-ids"] == target.chat_memory
    assert target.rows() == before + 1  # nothing dropped, nothing extra
    target.alive()


def test_fts_syntax_through_mcp(target: Target) -> None:
    for text in FTS_SYNTAX:
        added = mcp_call(target, "memory_add", content=f"mcp {text}", key=f"mcp:{text}", apiKeyId="mcp-fts")
        assert added["isError"] is False, added
        found = mcp_call(target, "memory_search", query=text, apiKeyId="mcp-fts")
        assert found["isError"] is False, found
    listed = target.api.get("/api/memory", params={"apiKeyId": "mcp-fts", "limit": 200}).json()
    assert listed["total"] == len(FTS_SYNTAX)


# -- invalid UTF-8 and lone surrogates ------------------------------------------------------


INVALID_UTF8_BODIES = [
    ("POST", "/api/memory", b'{"content": "caf\xe9", "key": "latin-1"}'),
    ("POST", "/api/memory", b'{"content": "\xff\xfe\xfd", "key": "bytes"}'),
    ("POST", "/api/memory", b'{"content": "\xed\xa0\x80 encoded surrogate", "key": "cesu"}'),
    ("POST", "/api/memory/retrieve-preview", b'{"query": "\xc3\x28"}'),
    ("PUT", "/api/settings/memory", b'{"strategy": "\xff"}'),
    ("POST", "/api/keys", b'{"name": "\x80"}'),
]


@pytest.mark.parametrize(("method", "path", "body"), INVALID_UTF8_BODIES)
def test_invalid_utf8_bodies_are_400(target: Target, method: str, path: str, body: bytes) -> None:
    before = (target.rows(), target.rows("api_keys"))
    assert_error(raw_json(target.api, method, path, body), 400)
    assert (target.rows(), target.rows("api_keys")) == before
    target.alive()


def test_invalid_utf8_import_and_chat_are_400(target: Target) -> None:
    before = target.rows()
    assert_error(
        target.api.post("/api/memory/import", headers=JSON_LINES, content=b'{"content": "\xff"}\n'), 400
    )
    assert_error(
        raw_json(target.chat, "POST", "/v1/chat/completions", b'{"model": "\xff"}'), 400, openai=True
    )
    assert target.rows() == before


SURROGATE_FIELDS = [
    b'{"content": "a \\ud800 b", "key": "s1"}',
    b'{"content": "ok", "key": "\\udfff"}',
    b'{"content": "ok", "key": "s3", "apiKeyId": "\\ud83d"}',
    b'{"content": "ok", "key": "s4", "sessionId": "\\udc00\\ud800"}',
    b'{"content": "ok", "key": "s5", "metadata": {"\\ud800": 1}}',
    b'{"content": "ok", "key": "s6", "metadata": {"a": ["\\udc00"]}}',
    b'{"content": "ok", "key": "s7", "expiresAt": "2030-01-01\\ud800"}',
]


@pytest.mark.parametrize("body", SURROGATE_FIELDS)
def test_lone_surrogates_are_400_and_write_nothing(target: Target, body: bytes) -> None:
    before = target.rows()
    assert_error(raw_json(target.api, "POST", "/api/memory", body), 400)
    assert target.rows() == before
    target.alive()


def test_lone_surrogates_elsewhere(target: Target) -> None:
    memory = add(target, content="surrogate target", key="surrogate-target", apiKeyId="sur")
    for body in (b'{"content": "\\ud800"}', b'{"metadata": {"k": "\\ud800"}}', b'{"key": "\\udfff"}'):
        assert_error(raw_json(target.api, "PUT", f"/api/memory/{memory['id']}", body), 400)
    assert target.api.get(f"/api/memory/{memory['id']}").json()["memory"] == memory
    assert len(target.api.get(f"/api/memory/{memory['id']}/history").json()["history"]) == 1

    preview = raw_json(target.api, "POST", "/api/memory/retrieve-preview", b'{"query": "\\ud800 x"}')
    assert preview.status_code in (200, 400), preview.text
    assert_no_trace(preview)

    # Import reports the bad records and keeps the good one; JSONL and a JSON array alike.
    before = target.rows()
    lines = (
        b'{"content": "\\ud800"}\n{"content": "fine", "key": "sur-ok"}\n{"content": "x", "id": "\\udfff"}\n'
    )
    for body, content_type in (
        (lines, JSON_LINES["Content-Type"]),
        (b"[" + lines.strip().replace(b"\n", b",") + b"]", "application/json"),
    ):
        headers = {"content-type": content_type}
        report = target.api.post(
            "/api/memory/import", content=body, params={"apiKeyId": "sur"}, headers=headers
        )
        assert report.status_code == 200, report.text
        assert [e["line"] for e in report.json()["errors"]] == [1, 3]
        assert all("surrogate" in e["error"] for e in report.json()["errors"])
    assert target.rows() == before + 1

    # A chat turn with a lone surrogate: the gateway answers, memory does not break.
    turn = raw_json(
        target.chat,
        "POST",
        "/v1/chat/completions",
        b'{"model": "echo", "messages": [{"role": "user", "content": "I live in \\ud800 Lisbon"}]}',
    )
    assert turn.status_code < 500, turn.text
    assert_no_trace(turn)
    target.alive()


# -- big bodies ----------------------------------------------------------------------------


def test_ten_megabyte_bodies_are_413(target: Target) -> None:
    before = target.rows()
    big = b'{"content": "' + b"a" * TEN_MB + b'", "key": "big"}'
    assert_error(raw_json(target.api, "POST", "/api/memory", big), 413)
    # An import streams JSON Lines past this limit (MEMROUTE_MAX_IMPORT_BYTES), but a JSON
    # array and each line are read whole: over the body limit, they are a 413 too.
    array = b"[" + b'{"content": "x"},' * (TEN_MB // 17) + b'{"content": "x"}]'
    assert_error(raw_json(target.api, "POST", "/api/memory/import", array), 413)
    assert_error(target.api.post("/api/memory/import", headers=JSON_LINES, content=big + b"\n"), 413)
    assert_error(raw_json(target.api, "PUT", "/api/settings/memory", big), 413)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit holds while the body streams
        yield b'{"content": "'
        for _ in range(10):
            yield b"a" * (1024 * 1024)
        yield b'", "key": "big-chunked"}'

    streamed = target.api.post("/api/memory", content=chunks(), headers={"content-type": "application/json"})
    assert_error(streamed, 413)
    # /v1/* takes up to 16 MiB (long chats with images); past that it is a 413 in OpenAI's shape.
    huge = (
        b'{"model": "echo", "messages": [{"role": "user", "content": "' + b"a" * (33 * 1024 * 1024) + b'"}]}'
    )
    assert_error(raw_json(target.chat, "POST", "/v1/chat/completions", huge), 413, openai=True)
    assert target.rows() == before
    target.alive()


# -- deeply nested JSON ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/memory"),
        ("PUT", "/api/settings/memory"),
        ("PUT", "/api/settings/qdrant"),
        ("POST", "/api/memory/retrieve-preview"),
        ("POST", "/api/memory/summarize"),
        ("POST", "/api/keys"),
        ("POST", "/api/providers"),
        ("POST", "/api/memory/import"),
    ],
)
def test_ten_thousand_levels_of_nesting_are_400(target: Target, method: str, path: str) -> None:
    before = target.rows()
    assert_error(raw_json(target.api, method, path, NESTED), 400)
    if path != "/api/memory/import":  # there an object is one JSON Lines record: see below
        inside = b'{"content": "x", "key": "deep", "metadata": {"a": ' + NESTED + b"}}"
        assert_error(raw_json(target.api, method, path, inside), 400)
    assert target.rows() == before
    target.alive()


def test_nesting_on_the_gateway_and_mcp(target: Target) -> None:
    for path in ("/v1/chat/completions", "/v1/embeddings"):
        assert_error(raw_json(target.chat, "POST", path, NESTED), 400, openai=True)
        deep_field = (
            b'{"model": "echo", "messages": [{"role": "user", "content": "hi"}], "x": ' + NESTED + b"}"
        )
        assert_error(raw_json(target.chat, "POST", path, deep_field), 400, openai=True)
    for body in (NESTED, b'{"jsonrpc": "2.0", "id": 1, "method": "x", "params": ' + NESTED + b"}"):
        answer = target.api.post(
            "/mcp", content=body, headers={"content-type": "application/json", "accept": MCP_ACCEPT}
        )
        assert 400 <= answer.status_code < 500, answer.text
        assert_no_trace(answer)
    target.alive()


def test_a_json_lines_record_nested_too_deeply_is_reported(target: Target) -> None:
    before = target.rows()
    body = b'{"content": "deep", "metadata": ' + NESTED + b'}\n{"content": "shallow", "key": "nest-ok"}\n'
    report = target.api.post(
        "/api/memory/import", headers=JSON_LINES, content=body, params={"apiKeyId": "nest"}
    )
    assert report.status_code == 200, report.text
    assert report.json()["imported"] == 1
    assert [e["line"] for e in report.json()["errors"]] == [1]
    assert target.rows() == before + 1


@pytest.mark.parametrize("depth", [65, 200, 500, 900])
def test_metadata_nested_past_64_levels_is_400_and_leaves_no_row(target: Target, depth: int) -> None:
    """Regression: 500 levels were stored, then failed to serialise (a 500) and broke every
    later list of the memories with a 500."""
    before = target.rows()
    deep = b"[" * (depth - 1) + b"]" * (depth - 1)
    message = assert_error(
        raw_json(
            target.api,
            "POST",
            "/api/memory",
            b'{"content": "x", "key": "d", "metadata": {"a": ' + deep + b"}}",
        ),
        400,
    )["message"]
    assert "64 levels" in message
    assert target.rows() == before
    ok = add(
        target, content="x", key="d64", apiKeyId="depth", metadata={"a": json.loads(b"[" * 62 + b"]" * 62)}
    )
    assert target.api.delete(f"/api/memory/{ok['id']}").status_code == 200
    target.alive()


# -- paging ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"page": "-1"},
        {"page": "0"},
        {"page": str(10**10)},
        {"page": "1.5"},
        {"page": "abc"},
        {"limit": "0"},
        {"limit": "-5"},
        {"limit": str(10**12)},
        {"limit": "1e3"},
        {"offset": "-1"},
        {"offset": "abc"},
        {"offset": str(10**13)},
        {"offset": "0x10"},
        {"type": "nonsense"},
        {"apiKeyId": "k" * 300},
        {"q": "q" * 2001},
    ],
)
def test_bad_paging_and_filters_are_400(target: Target, params: dict[str, str]) -> None:
    assert_error(target.api.get("/api/memory", params=params), 400)


@pytest.mark.parametrize(
    "params", [{"page": str(10**9)}, {"offset": str(10**12)}, {"limit": "200", "page": "99999"}]
)
def test_far_pages_are_empty(target: Target, params: dict[str, str]) -> None:
    listed = target.api.get("/api/memory", params=params)
    assert listed.status_code == 200, listed.text
    assert listed.json()["data"] == []
    assert listed.json()["total"] == target.rows()


def test_bad_limits_elsewhere_are_400(target: Target) -> None:
    preview = "/api/memory/retrieve-preview"
    for body in (
        {"query": "x", "limit": 0},
        {"query": "x", "limit": 10**12},
        {"query": "x", "maxTokens": -1},
    ):
        assert_error(target.api.post(preview, json=body), 400)
    for body in ({"query": "x", "topK": 0}, {"query": "x", "topK": 10**12}, {"query": "x", "topK": "5"}):
        assert_error(target.api.post("/api/settings/qdrant/search", json=body), 400)
    for body in ({"olderThanDays": 0, "allKeys": True}, {"olderThanDays": 10**12, "allKeys": True}):
        assert_error(target.api.post("/api/memory/summarize", json=body), 400)


def test_whole_number_floats_count_as_integers(target: Target) -> None:
    """JSON has one number type: 1500.0 is the integer 1500 (JSON Schema agrees)."""
    changed = target.api.put("/api/settings/memory", json={"maxTokens": 1500.0, "retentionDays": 30.0})
    assert changed.status_code == 200, changed.text
    assert (changed.json()["maxTokens"], changed.json()["retentionDays"]) == (1500, 30)
    for value in (1500.5, "1500", True, 1e308, float("inf")):
        body = json.dumps({"maxTokens": value}).encode()
        assert_error(raw_json(target.api, "PUT", "/api/settings/memory", body), 400)
    assert target.api.get("/api/settings/memory").json()["maxTokens"] == 1500
    assert target.api.put("/api/settings/memory", json={"maxTokens": 2000}).status_code == 200


# -- non-object metadata ----------------------------------------------------------------------


@pytest.mark.parametrize("metadata", [[1, 2], "text", 42, 4.2, True, None, [{"a": 1}]])
def test_metadata_must_be_an_object(target: Target, metadata: Any) -> None:
    memory = add(target, content="meta target", key=f"meta-{metadata!r}", apiKeyId="meta")
    before = target.rows()
    body = {"content": "m", "key": "meta", "apiKeyId": "meta", "metadata": metadata}
    assert_error(target.api.post("/api/memory", json=body), 400)
    update = {"metadata": metadata, "content": "new"}
    assert_error(target.api.put(f"/api/memory/{memory['id']}", json=update), 400)
    assert target.api.get(f"/api/memory/{memory['id']}").json()["memory"] == memory
    if metadata is not None:  # the importer reads a null like a missing field: no metadata
        record = {"content": "i", "key": "meta-i", "metadata": metadata}
        report = target.api.post("/api/memory/import", json=[record], params={"apiKeyId": "meta"})
        assert report.status_code == 200, report.text
        assert report.json()["imported"] == 0 and "metadata" in report.json()["errors"][0]["error"]
    assert target.rows() == before


# -- dates ---------------------------------------------------------------------------------------


BAD_DATES: list[Any] = [
    "99999-01-01",
    "0000-00-00",
    "2024-02-30",
    "2024-13-01",
    "2024-01-01T25:00:00Z",
    "1990-12-31T23:59:60Z",
    "0001-01-01T00:00:00+05:00",  # before year 1 in UTC (was a 500)
    "9999-12-31T23:59:59-05:00",  # after year 9999 in UTC (was a 500)
    "2024-01-01T00:00:00+24:00",
    "",
    "   ",
    "tomorrow",
    "1e308",
    1e308,
    -1,
    0,
    True,
    [],
    {},
]


@pytest.mark.parametrize("value", BAD_DATES)
def test_dates_out_of_range_are_400_and_write_nothing(target: Target, value: Any) -> None:
    memory = add(target, content="date target", key=f"date-{value!r}", apiKeyId="dates")
    before = target.rows()
    body = json.dumps({"content": "dated", "key": "dated", "apiKeyId": "dates", "expiresAt": value}).encode()
    assert_error(raw_json(target.api, "POST", "/api/memory", body), 400)

    update = json.dumps({"content": "changed", "expiresAt": value}).encode()
    assert_error(raw_json(target.api, "PUT", f"/api/memory/{memory['id']}", update), 400)
    assert target.api.get(f"/api/memory/{memory['id']}").json()["memory"] == memory

    for field in ("expiresAt", "createdAt", "updatedAt"):
        record = {"content": "imported", "key": "dated-import", field: value}
        report = target.api.post("/api/memory/import", json=[record], params={"apiKeyId": "dates"})
        assert report.status_code == 200, report.text
        assert report.json()["imported"] == 0 and field in report.json()["errors"][0]["error"], report.text
    assert target.rows() == before
    target.alive()


def test_dates_before_year_1000_keep_four_digits(target: Target) -> None:
    """Regression: strftime wrote year 999 as "999-…", so "999-06-01" sorted after "2026-…"
    and a memory that expired in 999 counted as not expired."""
    memory = add(target, content="ancient expiry", key="ancient", apiKeyId="old", expiresAt="0999-06-01")
    assert memory["expiresAt"] == "0999-06-01T00:00:00.000Z"
    early = add(target, content="early", key="early", apiKeyId="old", expiresAt="0001-01-01T00:00:00-05:00")
    assert early["expiresAt"] == "0001-01-01T05:00:00.000Z"
    preview = target.api.post(
        "/api/memory/retrieve-preview", json={"query": "ancient expiry", "apiKeyId": "old"}
    )
    assert preview.status_code == 200 and preview.json()["memories"] == [], preview.text


# -- the rest of what the fuzzer found -------------------------------------------------------


def test_405_names_every_method_of_the_path(target: Target) -> None:
    """Regression: the error handler dropped `Allow`, which also named only the first
    route's method (FastAPI makes one route per method)."""
    for method, path, allowed in (
        ("DELETE", "/api/memory", "GET, POST"),
        ("PATCH", "/api/memory/some-id", "DELETE, GET, PUT"),
        ("POST", "/api/settings/memory", "GET, PUT"),
        ("PUT", "/api/keys", "GET, POST"),
        ("TRACE", "/healthz", "GET"),
        ("PATCH", "/api/memory/health", "GET"),  # the fixed path, not /api/memory/{id}
        ("PUT", "/mcp", "DELETE, GET, HEAD, POST"),  # not in the OpenAPI document: the router's own
    ):
        response = target.api.request(method, path)
        assert_error(response, 405)
        assert set(response.headers["allow"].split(", ")) == set(allowed.split(", "))


def test_the_router_still_answers_what_the_gateway_s_direct_routes_do_not(target: Target) -> None:
    """The gateway's POST routes are answered before the router (web/direct_routes.py);
    a slash at the end, a path beside them and a query string are answered as before."""
    slashed = target.chat.post("/v1/chat/completions/", json={}, follow_redirects=False)
    assert slashed.status_code == 307 and slashed.headers["location"].endswith("/v1/chat/completions")
    assert_error(target.chat.post("/v1/chat/complete", json={}), 404, openai=True)
    for method, path in (("GET", "/v1/chat/completions"), ("PUT", "/v1/messages"), ("GET", "/v1/responses")):
        refused = target.chat.request(method, path)
        assert refused.status_code == 405 and refused.headers["allow"] == "POST", refused.text
    chat = {"model": "echo-1", "messages": [{"role": "user", "content": "hello"}]}
    answer = target.chat.post("/v1/chat/completions?trace=1", json=chat)
    assert answer.status_code == 200 and answer.json()["choices"][0]["message"]["content"] == "OK"


def test_provider_urls_that_cannot_be_sent_to_are_400(target: Target) -> None:
    before = target.rows("providers")
    for url in ("http://[", "http://[::1", "https://example.com:99999", "http://exa\x7fmple.com"):
        body = {"id": "bad-url", "baseUrl": url}
        assert "baseUrl" in assert_error(target.api.post("/api/providers", json=body), 400)["message"]
    assert target.rows("providers") == before


def test_a_stored_provider_url_httpx_refuses_is_a_502(target: Target) -> None:
    """A provider stored before its URL was checked this strictly: a clear 502, not a 500."""
    with database(target.side) as stored:  # written past the checks, as an older version did
        stored.providers.upsert(
            ProviderRecord("legacy", "http://exa\x00mple.com", None, None, False, EPOCH, EPOCH)
        )
        try:
            turn = target.chat.post("/v1/chat/completions", json={"model": "legacy/m", "messages": []})
            assert "invalid base URL" in assert_error(turn, 502, openai=True)["message"]
        finally:
            stored.providers.delete("legacy")


def test_embeddings_need_a_string_model(target: Target) -> None:
    for model in ({}, ["m"], 5, None, "  "):
        body = {"model": model, "input": "x"}
        assert (
            "model"
            in assert_error(target.chat.post("/v1/embeddings", json=body), 400, openai=True)["message"]
        )


# What JSON Schema's `\s` (ECMA-262) matches, and the characters Python's `str.strip()`
# also strips (what the server counts as blank): a published pattern is read the first way.
ECMA_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
STRIPPED_NOT_ECMA_SPACE = ["\x1c", "\x1d", "\x1e", "\x1f", "\x85"]


def _as_json_schema_reads_it(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern.replace("\\s", ECMA_SPACE).replace("\\S", f"[^{ECMA_SPACE}]"))


def test_text_the_server_counts_as_blank_is_refused_by_the_published_schema_too(target: Target) -> None:
    """A schema-valid body is one the server accepts: a model or query of separators or NEL
    (blank to the server) must not match the published pattern (found by the fuzzer: the
    gateway's models were documented as `\\S`, which a lone NEL matches)."""
    schema = target.api.get("/openapi.json").json()
    patterns: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "string" and isinstance(node.get("pattern"), str):
                patterns.append(node["pattern"])
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(schema)
    assert len(patterns) >= 5
    for blank in STRIPPED_NOT_ECMA_SPACE:
        assert not blank.strip()
        matched = [p for p in patterns if _as_json_schema_reads_it(p).search(blank * 3)]
        assert not matched, (repr(blank), matched)
    for blank in STRIPPED_NOT_ECMA_SPACE:
        body = {"model": blank, "messages": [{"role": "user", "content": "hi"}]}
        assert (
            "model"
            in assert_error(target.chat.post("/v1/chat/completions", json=body), 400, openai=True)["message"]
        )


def test_json_lines_split_only_at_newlines(target: Target, tmp_path: Path) -> None:
    """Regression: str.splitlines also split inside JSON strings at U+2028, U+0085, U+001C…,
    so an export with such a character did not import back. (Control characters such as
    U+0085, U+001C and form feed are refused in memories: each is its own line's error.)"""
    texts = ["line\u2028separator", "para\u2029graph"]
    for n, text in enumerate(texts):
        add(target, content=text, key=f"sep-{n}", apiKeyId="sep")
    export = target.api.get("/api/memory/export", params={"apiKeyId": "sep"})
    assert export.status_code == 200 and export.text.count("\n") == len(texts)
    report = target.api.post(
        "/api/memory/import", headers=JSON_LINES, content=export.content, params={"apiKeyId": "sep-copy"}
    )
    assert report.json() == {"imported": len(texts), "skipped": 0, "errors": []}
    copies = target.api.get("/api/memory", params={"apiKeyId": "sep-copy"}).json()["data"]
    assert sorted(m["content"] for m in copies) == sorted(texts)
    controls = ["next\x85line", "file\x1cseparator", "form\x0cfeed"]
    lines = "".join(json.dumps({"content": t}, ensure_ascii=False) + "\n" for t in [*controls, "fine"])
    mixed = target.api.post(
        "/api/memory/import", headers=JSON_LINES, content=lines.encode(), params={"apiKeyId": "sep-ctl"}
    )
    assert mixed.json()["imported"] == 1
    assert [e["line"] for e in mixed.json()["errors"]] == [1, 2, 3]

    source = tmp_path / "export.jsonl"
    source.write_bytes(export.content)
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "cli.db"), "memory", "import", str(source)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"imported": len(texts), "skipped": 0, "errors": []}


def test_a_query_without_words_does_not_fail_the_vector_tier(target: Target) -> None:
    """Regression: a query the embedding finds no token in ("*", "^") is a zero vector, whose
    cosine distance sqlite-vec gives as NULL: the tier failed with a TypeError."""
    assert target.api.put("/api/settings/memory", json={"embeddingSource": "hashing"}).status_code == 200
    try:
        add(target, content="prefers dark mode", key="vec", apiKeyId="vec")
        for query in ("*", "^", "!!!", "dark"):
            for owner in ("vec", None):
                preview = target.api.post(
                    "/api/memory/retrieve-preview",
                    json={"query": query, "apiKeyId": owner, "strategy": "semantic"},
                )
                assert preview.status_code == 200, preview.text
                assert "failed" not in (preview.json()["resolution"]["fallbackReason"] or ""), preview.json()
    finally:
        assert target.api.put("/api/settings/memory", json={"embeddingSource": "auto"}).status_code == 200


# -- MCP -------------------------------------------------------------------------------------


def mcp_call(target: Target, tool: str, **arguments: Any) -> dict[str, Any]:
    """One tool call over streamable HTTP (initialize, then tools/call), raw JSON-RPC."""
    headers = {"Authorization": f"Bearer {ADMIN}", "accept": MCP_ACCEPT, "content-type": "application/json"}
    with httpx.Client(base_url=target.url, headers=headers, timeout=30) as http:
        opened = http.post("/mcp", json=MCP_INITIALIZE)
        assert opened.status_code == 200, opened.text
        session = (
            {"mcp-session-id": opened.headers["mcp-session-id"]} if "mcp-session-id" in opened.headers else {}
        )
        http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        called = http.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            },
            headers=session,
        )
        assert called.status_code == 200, called.text
        return _rpc_result(called)


def _rpc_result(response: httpx.Response) -> dict[str, Any]:
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        message = json.loads(data[-1])
    else:
        message = response.json()
    assert "result" in message, message
    return message["result"]  # type: ignore[no-any-return]


def test_mcp_garbage_is_a_client_error(target: Target) -> None:
    headers = {"accept": MCP_ACCEPT, "content-type": "application/json"}
    for body in (
        b"{not json",
        b"\xff\xfe",
        b'"just a string"',
        b"[]",
        b'{"jsonrpc": "2.0", "id": "\\ud800"}',
    ):
        answer = target.api.post("/mcp", content=body, headers=headers)
        assert 400 <= answer.status_code < 500, answer.text
        assert_no_trace(answer)
    target.alive()
