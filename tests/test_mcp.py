"""The MCP tools through the official MCP client: over stdio (`memroute mcp` spawned as
a subprocess on a temp database) and over streamable HTTP (`/mcp` of the server under
uvicorn), with the admin token and with client keys."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import openai
import postgres
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from memories import open_memory
from servers import LiveServer, ScriptedUpstream
from storage import rows

from memroute import Memory
from memroute.config import Config
from memroute.mcp.server import TOOL_NAMES
from memroute.memory.injection import FRAMING, MEMORY_PREFIX
from memroute.models.owners import owner_of
from memroute.web.app import create_app

pytestmark = pytest.mark.both_stores  # each test runs on SQLite and on PostgreSQL

ADMIN = "admin-test-token-for-memroute-tests"
Session = Callable[[Callable[[Client], Awaitable[Any]]], Any]


def _run(connect: Callable[[], Any], body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(connect()) as client:
            return await body(client)

    return anyio.run(main)


def stdio_session(db: Path) -> Session:
    url = postgres.url_for(db)
    env = {**os.environ, "MEMROUTE_DATABASE_URL": url} if url is not None else None
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memroute", "--db", str(db), "mcp"], env=env
    )
    return lambda body: _run(lambda: params, body)


def http_session(url: str, token: str) -> Session:
    def connect() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        return streamable_http_client(url + "/mcp", http_client=http)

    return lambda body: _run(connect, body)


async def call(client: Client, tool: str, **args: Any) -> tuple[bool, Any]:
    result = await client.call_tool(tool, args)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    return result.is_error, (text if result.is_error else result.structured_content)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Memory, ScriptedUpstream]]:
    db = tmp_path / "memroute.db"
    side = open_memory(db)
    upstream = ScriptedUpstream()
    with LiveServer(upstream.app()) as up:
        env = {"MEMROUTE_ADMIN_TOKEN": ADMIN, "MEMROUTE_UPSTREAM_BASE_URL": up.url + "/v1"}
        config = Config.for_path(db, environ=env).with_overrides(database_url=postgres.url_for(db))
        with LiveServer(create_app(config)) as live:
            yield live.url, side, upstream
    side.close()


# -- stdio ---------------------------------------------------------------------------------------


def test_stdio_lists_the_tools_with_schemas_and_runs_the_memory_cycle(tmp_path: Path) -> None:
    db = tmp_path / "mcp.db"
    with open_memory(db) as seed:
        seed.import_(
            [
                {
                    "apiKeyId": "k1",
                    "content": "went to Lisbon in May",
                    "type": "episodic",
                    "createdAt": "2020-05-01T10:00:00.000Z",
                },
                {"apiKeyId": "k1", "content": "likes green tea", "createdAt": "2020-05-02T10:00:00.000Z"},
            ]
        )
    session = stdio_session(db)

    async def body(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == set(TOOL_NAMES)
        for tool in tools.values():
            assert tool.description and len(tool.description) > 30
        search = tools["memory_search"].input_schema
        assert {"apiKeyId", "query", "type", "maxTokens", "limit"} <= set(search["properties"])
        assert tools["memory_add"].input_schema["required"] == ["content"]
        assert tools["memory_delete"].input_schema["required"] == ["id"]

        failed, added = await call(
            client, "memory_add", apiKeyId="k1", content="prefers TypeScript", key="preference:language"
        )
        assert not failed and added["created"] is True and added["memory"]["apiKeyId"] == "k1"
        failed, again = await call(
            client, "memory_add", apiKeyId="k1", content="prefers Rust", key="preference:language"
        )
        assert not failed and again["created"] is False and again["memory"]["id"] == added["memory"]["id"]

        failed, found = await call(client, "memory_search", apiKeyId="k1", query="Rust language", maxTokens=5)
        assert not failed
        assert found["count"] == 1 and found["memories"][0]["content"] == "prefers Rust"
        assert found["totalTokens"] == 3 <= 5  # ceil(len("prefers Rust") / 4)
        await call(client, "memory_add", apiKeyId="k1", content="decided to use Postgres", type="episodic")
        failed, episodic = await call(
            client, "memory_search", apiKeyId="k1", query="Postgres Rust Lisbon", type="episodic"
        )
        # the type filter runs inside retrieval; the 2020 memories are beyond the 30-day retention
        assert [m["content"] for m in episodic["memories"]] == ["decided to use Postgres"]

        failed, listed = await call(client, "memory_list", apiKeyId="k1", type="factual")
        assert listed["total"] == 2
        assert {m["content"] for m in listed["memories"]} == {"prefers Rust", "likes green tea"}
        failed, got = await call(client, "memory_get", id=added["memory"]["id"])
        assert got["memory"]["content"] == "prefers Rust"
        assert got["memory"]["provenance"] is None  # added without any: nothing to say
        learned = {
            "role": "user",
            "speaker": "Dana",
            "requestId": "req_7",
            "learnedAt": "2026-05-08T14:03:00Z",
        }
        failed, chat = await call(
            client, "memory_add", apiKeyId="k2", content="lives in Lisbon", metadata=learned
        )
        failed, got = await call(client, "memory_get", id=chat["memory"]["id"])
        assert not failed
        assert (
            got["memory"]["provenance"]["summary"]
            == "learned from request req_7 at 2026-05-08 14:03 UTC (Dana)"
        )

        failed, cleared = await call(client, "memory_clear", apiKeyId="k1", olderThan="2021-01-01")
        assert not failed and cleared["deletedCount"] == 2  # all of them, not the newest 50
        failed, cleared = await call(client, "memory_clear", apiKeyId="k1", type="factual")
        assert cleared["deletedCount"] == 1
        failed, listed = await call(client, "memory_list", apiKeyId="k1")
        assert [m["content"] for m in listed["memories"]] == ["decided to use Postgres"]
        kept = listed["memories"][0]["id"]
        failed, gone = await call(client, "memory_delete", id=kept)
        assert not failed and gone == {"deleted": True, "id": kept}
        failed, text = await call(client, "memory_get", id=kept)
        assert failed and "not found" in text

    session(body)
    with open_memory(db) as check:
        assert check.list("k1").total == 0
        deletes = rows(check, "SELECT COUNT(*) FROM memory_history WHERE event = 'DELETE'")
        assert deletes == [(4,)]  # every deleted text is kept in history


def test_stdio_reports_bad_calls_as_tool_errors_and_keeps_serving(tmp_path: Path) -> None:
    session = stdio_session(tmp_path / "mcp.db")

    async def body(client: Client) -> None:
        cases = [
            ("memory_clear", {"apiKeyId": ""}, "apiKeyId"),
            ("memory_clear", {}, "apiKeyId"),
            ("memory_search", {"query": "x"}, "apiKeyId is required"),
            ("memory_add", {"apiKeyId": "k1", "content": ""}, "content"),
            ("memory_add", {"apiKeyId": "k1", "content": "x", "type": "feelings"}, "type"),
            ("memory_search", {"apiKeyId": "k1", "limit": 0}, "limit"),
            ("memory_search", {"apiKeyId": "k1", "maxTokens": 99999}, "maxTokens"),
            ("memory_list", {"apiKeyId": "k1", "page": 0}, "page"),
            ("memory_delete", {"id": "no-such-id"}, "memory no-such-id not found"),
            ("memory_get", {"id": "no-such-id"}, "not found"),
            ("memory_clear", {"apiKeyId": "k1", "olderThan": "last tuesday"}, "olderThan"),
            ("memory_add", {"apiKeyId": "k1", "content": "x", "expiresAt": "soon"}, "expiresAt"),
        ]
        for tool, args, message in cases:
            failed, text = await call(client, tool, **args)
            assert failed, (tool, args)
            assert message in text, (tool, args, text)
        failed, ok = await call(client, "memory_add", apiKeyId="k1", content="still serving")
        assert not failed and ok["created"] is True

    session(body)


# -- streamable HTTP -------------------------------------------------------------------------------


def test_http_needs_a_token_and_the_admin_token_reaches_every_key(
    server: tuple[str, Memory, ScriptedUpstream],
) -> None:
    url, side, _ = server
    response = httpx2.post(url + "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 401
    with pytest.raises(BaseException):  # noqa: B017 — the SDK wraps the 401 in an ExceptionGroup
        http_session(url, "wrong-token")(lambda client: client.list_tools())

    async def body(client: Client) -> None:
        assert {t.name for t in (await client.list_tools()).tools} == set(TOOL_NAMES)
        await call(client, "memory_add", apiKeyId="k1", content="prefers vim")
        await call(client, "memory_add", apiKeyId="k2", content="prefers emacs")
        failed, k2 = await call(client, "memory_list", apiKeyId="k2")
        assert not failed and [m["content"] for m in k2["memories"]] == ["prefers emacs"]

    http_session(url, ADMIN)(body)
    assert side.list("k1").total == 1 and side.list("k1").items[0].content == "prefers vim"


def test_a_client_key_only_reaches_its_own_memories(server: tuple[str, Memory, ScriptedUpstream]) -> None:
    url, side, _ = server
    alice, alice_secret = side.keys.create("alice")
    bob, _ = side.keys.create("bob")
    bobs = side.add(bob.id, "has a dog named Biscuit")

    async def body(client: Client) -> None:
        failed, mine = await call(
            client, "memory_add", content="prefers tabs"
        )  # apiKeyId defaults to the key
        assert not failed and mine["memory"]["apiKeyId"] == alice.id
        for tool, args in [
            ("memory_search", {"apiKeyId": bob.id, "query": "dog"}),
            ("memory_list", {"apiKeyId": bob.id}),
            ("memory_add", {"apiKeyId": bob.id, "content": "planted"}),
            ("memory_clear", {"apiKeyId": bob.id}),
        ]:
            failed, text = await call(client, tool, **args)
            assert failed and "only use its own memories" in text
        for tool in ("memory_get", "memory_delete"):
            failed, text = await call(client, tool, id=bobs.id)
            assert failed and text.endswith(f"memory {bobs.id} not found")  # not even its existence
        failed, found = await call(client, "memory_search", query="dog Biscuit tabs")
        assert [m["content"] for m in found["memories"]] == ["prefers tabs"]

    http_session(url, alice_secret)(body)
    assert side.get(bobs.id) is not None and side.list(bob.id).total == 1


def test_a_client_key_reaches_each_of_its_end_users_apart(
    server: tuple[str, Memory, ScriptedUpstream],
) -> None:
    url, side, upstream = server
    side.update_settings(enabled=True)
    key, secret = side.keys.create("saas")
    other, _ = side.keys.create("other")
    others = side.add(owner_of(other.id, "ana"), "another key's Ana")

    async def body(client: Client) -> None:
        failed, added = await call(client, "memory_add", content="is allergic to peanuts", userId="ana")
        assert not failed and (added["memory"]["apiKeyId"], added["memory"]["userId"]) == (key.id, "ana")
        failed, found = await call(client, "memory_search", query="allergic peanuts", userId="ben")
        assert not failed and found["memories"] == []  # Ben sees nothing of Ana's
        failed, found = await call(client, "memory_search", query="allergic peanuts")
        assert not failed and found["memories"] == []  # nor does the key's own memory
        failed, listed = await call(client, "memory_list", userId="ana")
        assert [m["content"] for m in listed["memories"]] == ["is allergic to peanuts"]
        failed, got = await call(client, "memory_get", id=added["memory"]["id"])  # its own user's
        assert not failed and got["memory"]["userId"] == "ana"
        failed, text = await call(client, "memory_get", id=others.id)  # another key's user's
        assert failed and text.endswith(f"memory {others.id} not found")

    http_session(url, secret)(body)
    chat = openai.OpenAI(base_url=url + "/v1", api_key=secret, max_retries=0)
    chat.chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "Am I allergic to anything?"}], user="ana"
    )
    assert "is allergic to peanuts" in upstream.last["body"]["messages"][0]["content"]


def test_memories_added_over_mcp_are_injected_by_the_gateway(
    server: tuple[str, Memory, ScriptedUpstream],
) -> None:
    url, side, upstream = server
    side.update_settings(enabled=True)
    key, secret = side.keys.create("chat")

    async def body(client: Client) -> None:
        failed, _ = await call(client, "memory_add", content="prefers answers in French")
        assert not failed

    http_session(url, secret)(body)
    chat = openai.OpenAI(base_url=url + "/v1", api_key=secret, max_retries=0)
    raw = chat.chat.completions.with_raw_response.create(
        model="echo-1", messages=[{"role": "user", "content": "Which language should you answer in?"}]
    )
    assert raw.headers["x-memroute-memory-count"] == "1"
    first = upstream.last["body"]["messages"][0]
    assert first == {"role": "system", "content": framed("prefers answers in French")}
    # The key's own memory (the chat's turn is kept beside it, once the worker has run).
    assert "prefers answers in French" in [m.content for m in side.list(key.id).items]


def test_the_tool_reference_in_the_docs_is_generated_from_the_registry() -> None:
    from memroute.mcp.reference import BEGIN, END, reference

    doc = (Path(__file__).resolve().parent.parent / "docs" / "mcp.md").read_text(encoding="utf-8")
    section = doc.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert section == reference().strip(), "run: python -m memroute.mcp.reference --write docs/mcp.md"
    for name in TOOL_NAMES:
        assert f"### `{name}`" in section


def framed(*memories: str) -> str:
    """The injected text: the prefix, the framing sentence, one memory per line."""
    return MEMORY_PREFIX + FRAMING + "\n" + "\n".join(memories)


def test_a_server_loads_the_mcp_sdk_only_once_mcp_is_used(tmp_path: Path) -> None:
    """The SDK costs a server ~23 MiB: `memroute serve` loads it on the first `/mcp` request,
    which then works like any other."""
    import subprocess

    script = f"""
import sys, httpx
from memroute.config import Config
from memroute.web.app import create_app
from memroute.web.serve import serving

app = create_app(Config.for_path({str(tmp_path / "m.db")!r}, environ={{"MEMROUTE_ADMIN_TOKEN": {ADMIN!r}}}))
with serving(app) as url:
    assert httpx.get(url + "/healthz").status_code == 200
    before = "mcp" in sys.modules
    answer = httpx.post(url + "/mcp", headers={{"authorization": "Bearer {ADMIN}",
        "accept": "application/json, text/event-stream"}}, json={{"jsonrpc": "2.0", "id": 1,
        "method": "initialize", "params": {{"protocolVersion": "2025-06-18", "capabilities": {{}},
        "clientInfo": {{"name": "t", "version": "1"}}}}}})
    print(before, "mcp" in sys.modules, answer.status_code, "memroute" in answer.text)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "True", "200", "True"]
