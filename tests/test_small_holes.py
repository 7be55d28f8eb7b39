"""The smaller holes of issue 14, each closed: provider keys only from variables that name
a key (checked on write and on use), base URLs without a query or fragment, a private
data folder, safe imported ids, one alphabet for stored text on every write path,
imports of any export size, and `global` scope without unowned memories.

One memroute server under uvicorn (on a temp database, with a scripted upstream) serves
most tests; the round trip of a large export runs on two servers of its own.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
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
from memories import open_memory
from servers import AUTH, JSON_LINES, LiveServer, ScriptedUpstream, management_api
from storage import database

from memroute import InvalidInput, Memory
from memroute.cli import main as cli
from memroute.models.records import ProviderRecord

CANARY = "canary-admin-token-0123456789abcdef"
QDRANT_CANARY = "canary-qdrant-key-0123456789abcdef"
MIB = 1024 * 1024


@dataclass
class Holes:
    api: httpx.Client  # admin token
    chat: httpx.Client  # a client key, for /v1/*
    url: str
    side: Memory  # a second Memory on the server's database
    key_id: str
    upstream: ScriptedUpstream
    upstream_url: str

    def providers(self) -> list[dict[str, Any]]:
        return self.api.get("/api/providers").json()["providers"]  # type: ignore[no-any-return]

    def upstream_headers(self, path: str) -> list[dict[str, str]]:
        return [r["headers"] for r in self.upstream.requests if r["path"] == path]


@pytest.fixture(scope="module")
def holes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Holes]:
    db = tmp_path_factory.mktemp("holes") / "memroute.db"
    side = open_memory(db)
    key, secret = side.keys.create("holes")
    upstream = ScriptedUpstream()
    with (
        LiveServer(upstream.app()) as up,
        management_api(db, MEMROUTE_UPSTREAM_BASE_URL=up.url + "/v1") as api,
        httpx.Client(
            base_url=api.base_url, headers={"Authorization": f"Bearer {secret}"}, timeout=30
        ) as chat,
    ):
        yield Holes(api, chat, str(api.base_url).rstrip("/"), side, key.id, upstream, up.url + "/v1")
    side.close()


def chat(holes: Holes, text: str, model: str = "echo", **headers: str) -> httpx.Response:
    body = {"model": model, "messages": [{"role": "user", "content": text}]}
    return holes.chat.post("/v1/chat/completions", json=body, headers=headers)


# -- 1. providers: apiKeyEnv and base URLs ----------------------------------------------

REFUSED_KEY_ENVS = [
    "MEMROUTE_ADMIN_TOKEN",
    "MEMROUTE_UPSTREAM_API_KEY",
    "QDRANT_API_KEY",
    "MEMORY_SECRET_KEY",
    "PATH",  # names no key
    "HOME",
    "openai_api_key",  # lower case
]
REFUSED_BASE_URLS = ["https://api.example.com/v1?x=", "https://api.example.com/v1#top", "http://h/?"]


@pytest.mark.parametrize("name", REFUSED_KEY_ENVS)
def test_api_key_env_must_name_a_key_and_never_memroute_settings(holes: Holes, name: str) -> None:
    before = holes.providers()
    body = {"id": "leaky", "baseUrl": "https://attacker.example/v1", "apiKeyEnv": name}
    error = assert_error(holes.api.post("/api/providers", json=body), 400)
    assert "apiKeyEnv" in error["message"]
    assert holes.api.post("/api/providers", json={**body, "apiKeyEnv": "LEAKY_API_KEY"}).status_code == 201
    assert_error(holes.api.put("/api/providers/leaky", json={"apiKeyEnv": name}), 400)
    assert [p["apiKeyEnv"] for p in holes.providers() if p["id"] == "leaky"] == ["LEAKY_API_KEY"]
    assert holes.api.delete("/api/providers/leaky").status_code == 200
    assert holes.providers() == before


@pytest.mark.parametrize("url", REFUSED_BASE_URLS)
def test_base_urls_with_a_query_or_fragment_are_400(holes: Holes, url: str) -> None:
    before = holes.providers()
    error = assert_error(holes.api.post("/api/providers", json={"id": "q", "baseUrl": url}), 400)
    assert "baseUrl" in error["message"] and "?" in error["message"]
    assert (
        holes.api.post(
            "/api/providers", json={"id": "q", "baseUrl": "https://api.example.com/v1"}
        ).status_code
        == 201
    )
    assert_error(holes.api.put("/api/providers/q", json={"baseUrl": url}), 400)
    assert [p["baseUrl"] for p in holes.providers() if p["id"] == "q"] == ["https://api.example.com/v1"]
    holes.api.delete("/api/providers/q")
    assert holes.providers() == before


def test_the_cli_refuses_the_same_provider_settings(tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    for args in (
        ["--base-url", "https://attacker.example/v1", "--api-key-env", "MEMROUTE_ADMIN_TOKEN"],
        ["--base-url", "https://attacker.example/v1", "--api-key-env", "QDRANT_API_KEY"],
        ["--base-url", "https://api.example.com/v1?x="],
    ):
        result = CliRunner().invoke(cli, ["--db", db, "providers", "add", "p", *args])
        assert result.exit_code != 0
        assert "apiKeyEnv" in result.output or "baseUrl" in result.output, result.output
    listed = CliRunner().invoke(cli, ["--db", db, "providers", "list"])
    assert json.loads(listed.output) == []
    ok = ["--base-url", "https://api.example.com/v1", "--api-key-env", "EXAMPLE_TOKEN"]
    assert CliRunner().invoke(cli, ["--db", db, "providers", "add", "p", *ok]).exit_code == 0


def test_a_provider_stored_before_the_rule_never_sends_memroute_secrets(
    holes: Holes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row written by an older version, naming the admin token's variable: neither the
    `/v1/models` crawl nor a chat sends the variable's value to its URL."""
    monkeypatch.setenv("MEMROUTE_ADMIN_TOKEN", CANARY)
    monkeypatch.setenv("QDRANT_API_KEY", QDRANT_CANARY)
    now = "2026-01-01T00:00:00.000Z"
    with database(holes.side) as store:
        for pid, env in (("old", "MEMROUTE_ADMIN_TOKEN"), ("older", "QDRANT_API_KEY")):
            store.providers.upsert(ProviderRecord(pid, holes.upstream_url, env, None, False, now, now))
    try:
        holes.upstream.requests.clear()
        models = holes.chat.get("/v1/models")
        assert models.status_code == 200, models.text
        ids = {m["id"] for m in models.json()["data"]}
        assert {"old/echo-1", "older/echo-1"} <= ids  # the provider still works, without a key
        for model in ("old/echo", "older/echo"):
            answer = chat(holes, "hello", model=model)
            assert answer.status_code == 200, answer.text
        sent = json.dumps(holes.upstream.requests)
        assert CANARY not in sent and QDRANT_CANARY not in sent
        listed = holes.api.get("/api/memory/embedding-providers").json()["providers"]
        assert {p["id"]: p["hasKey"] for p in listed if p["id"] in ("old", "older")} == {
            "old": False,
            "older": False,
        }
    finally:
        for pid in ("old", "older"):
            holes.api.delete(f"/api/providers/{pid}")


# -- 2. the data folder and the database files ----------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_data_folder_is_0700_and_the_database_files_0600(tmp_path: Path) -> None:
    folder = tmp_path / "fresh" / "data"
    with open_memory(folder / "memroute.db") as memory:
        memory.add("k", "prefers tabs")
        assert mode(folder) == 0o700
        files = sorted(p.name for p in folder.iterdir())
        assert files == ["memroute.db", "memroute.db-shm", "memroute.db-wal"]
        assert {name: mode(folder / name) for name in files} == dict.fromkeys(files, 0o600)


def test_an_existing_folder_of_memroute_files_is_tightened(tmp_path: Path) -> None:
    """A folder an older version (or the admin token file) created with the umask's 0755,
    and a database file 0644: both are the owner's alone after the next start."""
    folder = tmp_path / "old"
    with open_memory(folder / "memroute.db") as memory:
        memory.add("k", "prefers tabs")
    (folder / "admin_token").write_text("x\n")
    for path in (folder, *folder.iterdir()):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    with open_memory(folder / "memroute.db") as memory:
        assert memory.list("k").total == 1
        assert mode(folder) == 0o700
        files = [p for p in folder.iterdir() if p.name.startswith("memroute.db")]
        assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
        assert "memroute.db-wal" in {p.name for p in files}


def test_a_shared_folder_is_left_as_it_is_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    os.chmod(folder, 0o755)
    (folder / "notes.txt").write_text("not memroute's")
    with caplog.at_level(logging.WARNING, logger="memroute.store"), open_memory(folder / "my.db") as memory:
        memory.add("k", "prefers tabs")
        assert mode(folder) == 0o755
        assert mode(folder / "my.db") == 0o600 and mode(folder / "my.db-wal") == 0o600
    assert any("store.permissions.folder_open" in r.getMessage() for r in caplog.records)


# -- 3. and 4. imported ids, stored text ------------------------------------------------


def test_imported_ids_are_letters_digits_and_dot_underscore_colon_dash(holes: Holes) -> None:
    records = [
        {"id": "evil\r\nset-cookie: x=1", "content": "crlf id", "key": "id-crlf"},
        {"id": "a,b", "content": "comma id", "key": "id-comma"},
        {"id": "with space", "content": "space id", "key": "id-space"},
        {"id": "x" * 129, "content": "long id", "key": "id-long"},
        {"id": "omni:mem_01.a-b", "content": "prefers safe ids", "key": "id-ok"},
    ]
    lines = "".join(json.dumps(r) + "\n" for r in records)
    report = holes.api.post(
        "/api/memory/import", headers=JSON_LINES, content=lines, params={"apiKeyId": holes.key_id}
    )
    assert report.status_code == 200, report.text
    assert report.json()["imported"] == 1
    assert [e["line"] for e in report.json()["errors"]] == [1, 2, 3, 4]
    assert all(e["error"].startswith("id:") for e in report.json()["errors"])
    stored = holes.api.get("/api/memory/omni:mem_01.a-b").json()["memory"]
    assert stored["content"] == "prefers safe ids"
    keys = {m.key for m in holes.side.list(holes.key_id, limit=200).items}
    assert not keys & {"id-crlf", "id-comma", "id-space", "id-long"}
    holes.api.delete("/api/memory/omni:mem_01.a-b")


BAD_TEXTS = ["has a NUL \x00 inside", "a bell \x07", "escape \x1b[31m red", "C1 \x9b control"]


async def _mcp_add(url: str, content: str) -> bool:
    http = httpx2.AsyncClient(headers=AUTH, timeout=30)
    async with Client(streamable_http_client(url + "/mcp", http_client=http)) as client:
        result = await client.call_tool("memory_add", {"content": content, "apiKeyId": "text-mcp"})
        return bool(result.is_error)


@pytest.mark.parametrize("text", BAD_TEXTS)
def test_control_characters_are_refused_by_rest_adds_updates_and_imports(holes: Holes, text: str) -> None:
    before = holes.side.stats(None).total
    error = assert_error(holes.api.post("/api/memory", json={"content": text, "apiKeyId": "text"}), 400)
    assert error["message"].startswith("content: must not contain control characters")
    assert_error(holes.api.post("/api/memory", json={"content": "ok", "key": text, "apiKeyId": "text"}), 400)
    target = holes.api.post("/api/memory", json={"content": "fine text", "apiKeyId": "text"}).json()["memory"]
    assert_error(holes.api.put(f"/api/memory/{target['id']}", json={"content": text}), 400)
    assert holes.api.get(f"/api/memory/{target['id']}").json()["memory"]["content"] == "fine text"
    report = holes.api.post(
        "/api/memory/import", headers=JSON_LINES, content=json.dumps({"content": text}) + "\n"
    ).json()
    assert report["imported"] == 0 and "control characters" in report["errors"][0]["error"]
    holes.api.delete(f"/api/memory/{target['id']}")
    assert holes.side.stats(None).total == before


def test_control_characters_are_refused_by_mcp_the_cli_and_the_library(holes: Holes, tmp_path: Path) -> None:
    before = holes.side.stats(None).total
    text = BAD_TEXTS[0]
    assert anyio.run(_mcp_add, holes.url, text) is True
    added = CliRunner().invoke(cli, ["--db", str(tmp_path / "cli.db"), "memory", "add", "-c", text])
    assert added.exit_code != 0 and "control characters" in added.output
    with pytest.raises(InvalidInput, match="control characters"):
        holes.side.add("text", BAD_TEXTS[2])
    assert holes.side.stats(None).total == before
    kept = holes.side.add("text", "tab\tnewline\ncr\r kept")  # these three are text
    assert kept.content == "tab\tnewline\ncr\r kept"
    holes.side.delete(kept.id)


def test_a_chat_turn_with_a_nul_is_answered_and_learned_without_it(holes: Holes) -> None:
    holes.side.update_settings(enabled=True)
    try:
        answer = chat(holes, "I prefer tabs\x00 over spaces\x07")
        assert answer.status_code == 200, answer.text
        deadline = time.monotonic() + 10
        while (
            len(learned := [m for m in holes.side.list(holes.key_id, limit=200).items if "tabs" in m.content])
            < 2
        ):
            assert time.monotonic() < deadline, "the fact and the turn were not learned"
            time.sleep(0.05)
        assert {m.content for m in learned} == {"prefers tabs over spaces", "I prefer tabs over spaces"}
        for memory in learned:
            holes.side.delete(memory.id)
    finally:
        holes.side.update_settings(enabled=False)


def test_a_chat_turn_with_a_lone_surrogate_is_queued_and_learned_without_it(holes: Holes) -> None:
    # Valid as a JSON escape, not as UTF-8: once the whole turn failed to queue over it.
    holes.side.update_settings(enabled=True)
    try:
        assert holes.side.enqueue_extractions(
            holes.key_id, [("I prefer Helix\ud800 as my editor", "user_message")]
        )
        assert holes.side.wait_for_extraction(10)
        learned = [m for m in holes.side.list(holes.key_id, limit=200).items if "Helix" in m.content]
        assert [m.content for m in learned] == ["prefers Helix as their editor"]
        for memory in learned:
            holes.side.delete(memory.id)
    finally:
        holes.side.update_settings(enabled=False)


# -- 5. an export of any size imports back ---------------------------------------------


def test_an_export_over_4_mib_imports_back_through_rest(tmp_path: Path) -> None:
    """Over the ordinary 4 MiB body limit: streamed in, written in batches."""
    words = "the deploy checklist covers staging, canary and rollback steps " * 900  # ~57 KB
    records = [{"content": f"note {n}: {words}", "key": f"note:{n}", "apiKeyId": "big"} for n in range(80)]
    lines = "".join(json.dumps(r) + "\n" for r in records).encode()
    off = {"transformersEnabled": False}  # no 57 KB memories embedded in the background meanwhile
    with management_api(tmp_path / "a" / "memroute.db", MEMROUTE_REDACT="false") as first:
        assert first.put("/api/settings/memory", json=off).status_code == 200
        report = first.post("/api/memory/import", headers=JSON_LINES, content=lines)
        assert report.json() == {"imported": 80, "skipped": 0, "errors": []}, report.text[:500]
        export = first.get("/api/memory/export")
    assert export.status_code == 200 and len(export.content) > 4 * MIB
    with management_api(tmp_path / "b" / "memroute.db", MEMROUTE_REDACT="false") as second:
        assert second.put("/api/settings/memory", json=off).status_code == 200
        report = second.post("/api/memory/import", headers=JSON_LINES, content=export.content)
        assert report.json() == {"imported": 80, "skipped": 0, "errors": []}, report.text[:500]
        again = second.post(
            "/api/memory/import", content=export.content, headers={"content-type": "application/x-ndjson"}
        )
        assert again.json() == {"imported": 0, "skipped": 80, "errors": []}
        copied = second.get("/api/memory/export").content
    assert sorted(copied.splitlines()) == sorted(export.content.splitlines())


def test_an_import_over_its_limit_or_with_a_line_too_long_writes_nothing(tmp_path: Path) -> None:
    record = (json.dumps({"content": "prefers tabs", "key": "first"}) + "\n").encode()
    with management_api(
        tmp_path / "memroute.db", MEMROUTE_MAX_BODY_BYTES="2048", MEMROUTE_MAX_IMPORT_BYTES="8192"
    ) as api:
        long_line = json.dumps({"content": "y" * 3000}).encode() + b"\n"
        error = assert_error(
            api.post("/api/memory/import", headers=JSON_LINES, content=record + long_line), 413
        )
        assert "line 2" in error["message"]

        def over_the_limit() -> Iterator[bytes]:  # no Content-Length: counted as it streams
            for n in range(40):
                yield (json.dumps({"content": f"fact {n} " + "z" * 300, "key": f"k{n}"}) + "\n").encode()

        assert_error(api.post("/api/memory/import", headers=JSON_LINES, content=over_the_limit()), 413)
        assert api.get("/api/memory").json()["total"] == 0
        assert api.post("/api/memory/import", headers=JSON_LINES, content=record).json()["imported"] == 1


# -- 6. global scope ----------------------------------------------------------------------


def test_global_scope_shares_keys_memories_but_never_injects_unowned_ones(holes: Holes) -> None:
    other, _ = holes.side.keys.create("other")
    note = holes.side.add("", "admin note: the quarterly numbers are confidential")
    shared = holes.side.add(other.id, "the team deploys with the quarterly pipeline")
    own = holes.side.add(holes.key_id, "prefers quarterly reviews")
    holes.side.update_settings(enabled=True, extractionEnabled=False, scope="global")
    try:
        answer = chat(holes, "what about quarterly things?", **{"x-memroute-debug": "true"})
        assert answer.status_code == 200, answer.text
        injected = json.dumps(holes.upstream.last["body"]["messages"])
        assert "quarterly reviews" in injected and "quarterly pipeline" in injected
        assert "confidential" not in injected
        ids = answer.headers["x-memroute-memory-ids"].split(",")
        assert note.id not in ids and {own.id, shared.id} <= set(ids)
        for strategy in ("exact", "semantic", "hybrid"):
            found = holes.side.retrieve(
                holes.key_id, "quarterly", strategy, scope="global", record_access=False
            )
            seen = {i.memory.id for i in found}
            assert {own.id, shared.id} <= seen and note.id not in seen, strategy
        preview = holes.api.post("/api/memory/retrieve-preview", json={"query": "quarterly"}).json()
        assert note.id in {i["id"] for i in preview["memories"]}  # the admin's view still has it
    finally:
        holes.side.update_settings(scope="apiKey", enabled=False, extractionEnabled=True)
        for memory in (note, shared, own):
            holes.side.delete(memory.id)


def test_a_provider_key_with_a_line_break_is_400_and_nothing_is_stored(holes: Holes) -> None:
    before = holes.providers()
    body = {"id": "split", "baseUrl": "https://api.example.com/v1", "apiKey": "sk-abc\r\nx-injected: 1"}
    error = assert_error(holes.api.post("/api/providers", json=body), 400)
    assert "apiKey" in error["message"] and "line break" in error["message"]
    assert "sk-abc" not in error["message"]
    assert holes.providers() == before
