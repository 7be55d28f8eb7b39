"""Secrets are masked on every way content enters: `Memory.add` and `update` (the library),
POST /api/memory (REST), an import, and the MCP `memory_add` tool; no secret of the
corpus said in a chat or added through REST is stored, queued or logged;
`MEMROUTE_REDACT=false` keeps every one of them verbatim."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from memories import open_memory
from memory.redaction_corpus import SECRETS as CORPUS
from servers import ADMIN, LiveServer, ScriptedUpstream, management_api
from storage import rows, scalar

from memroute.config import Config
from memroute.mcp.server import build_server
from memroute.web.app import create_app

TEXT = "the staging database uses DB_PASSWORD=CorrectHorse9 and sk_live_51HcXyZAbCdEfGhIjKlMnOpQr"
SECRETS = ("CorrectHorse9", "sk_live_51HcXyZAbCdEfGhIjKlMnOpQr")
MASKED = "the staging database uses DB_PASSWORD=[redacted] and [redacted]"


def _holds(text: str, secret: str) -> bool:
    """Whether `secret` appears in `text` as itself, not inside a longer token: a short
    secret such as a 4-digit PIN also turns up by chance inside the UUIDs of the metadata
    and the logs ("…-4921-…")."""
    return re.search(rf"(?<![0-9A-Za-z-]){re.escape(secret)}(?![0-9A-Za-z-])", text) is not None


def _stored(db: Path) -> str:
    """Every content the database holds, memories and their history."""
    texts = [r[0] for r in rows(db, "SELECT content FROM memories")]
    texts += [str(r) for r in rows(db, "SELECT old_content, new_content FROM memory_history")]
    return "\n".join(texts)


def test_library_add_and_update_store_the_masked_text(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with open_memory(db) as mem:
        added = mem.add("k", TEXT, key="db:staging")
        assert added.content == MASKED
        updated = mem.update(added.id, content="my password is hunter2 for the NAS")
        assert updated.content == "my password is [redacted] for the NAS"
    stored = _stored(db)
    assert not any(secret in stored for secret in (*SECRETS, "hunter2"))


def test_rest_post_stores_the_masked_text(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with management_api(db) as api:
        response = api.post("/api/memory", json={"apiKeyId": "k", "content": TEXT})
        assert response.status_code == 200, response.text
        assert response.json()["memory"]["content"] == MASKED
    assert not any(secret in _stored(db) for secret in SECRETS)


def test_an_import_stores_the_masked_text(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with open_memory(db) as mem:
        line = '{"apiKeyId": "k", "content": "' + TEXT + ' 2"}'
        report = mem.import_([{"apiKeyId": "k", "content": TEXT}, line])
        assert report.imported == 2 and not report.errors
        assert sorted(m.content for m in mem.list("k").items) == [MASKED, MASKED + " 2"]
        assert mem.import_(list(mem.export("k"))).skipped == 2  # re-importing changes nothing
    assert not any(secret in _stored(db) for secret in SECRETS)


def test_the_mcp_memory_add_tool_stores_the_masked_text(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with open_memory(db) as mem:

        async def main() -> Any:
            async with Client(build_server(lambda: mem), cache=None) as client:
                result = await client.call_tool("memory_add", {"apiKeyId": "k", "content": TEXT})
                return result.structured_content

        added = anyio.run(main)
        assert added["memory"]["content"] == MASKED
    assert not any(secret in _stored(db) for secret in SECRETS)


def test_redaction_off_keeps_every_path_verbatim(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    config = Config.for_path(db, environ={"MEMROUTE_REDACT": "false"})
    with open_memory(config=config) as mem:
        assert mem.add("k", TEXT, key="a").content == TEXT
        mem.import_([{"apiKeyId": "k", "content": TEXT, "key": "b"}])
        imported = mem.get_by_key("k", "b")
        assert imported is not None and imported.content == TEXT
    with management_api(db, MEMROUTE_REDACT="false") as api:
        assert (
            api.post("/api/memory", json={"apiKeyId": "k", "content": TEXT}).json()["memory"]["content"]
            == TEXT
        )


def test_no_secret_of_the_corpus_said_in_a_chat_is_stored_queued_or_logged(
    tmp_path: Path, upstream: ScriptedUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="memroute")
    db = tmp_path / "m.db"
    env = {"MEMROUTE_ADMIN_TOKEN": ADMIN, "MEMROUTE_UPSTREAM_BASE_URL": upstream.url + "/v1"}  # type: ignore[attr-defined]
    config = Config.for_path(db, environ={**env, "MEMROUTE_KEY_RPM": "0"})
    with open_memory(config=config, workers=True) as mem:
        key, secret = mem.keys.create("talker")
        mem.update_settings(enabled=True)
        with (
            LiveServer(create_app(config, memory=mem)) as server,
            httpx.Client(base_url=server.url, timeout=30) as http,
        ):
            for start in range(0, len(CORPUS), 10):  # ten statements a message, as people ramble
                lines = [f"I always use {text}." for text, _ in CORPUS[start : start + 10]]
                said = [{"role": "user", "content": "\n".join(lines)}]
                chat = http.post(
                    "/v1/chat/completions",
                    json={"model": "echo-1", "messages": said},
                    headers={"Authorization": f"Bearer {secret}"},
                )
                assert chat.status_code == 200, chat.text
            queued = "\n".join(str(r) for r in rows(mem, "SELECT text, last_error FROM extraction_jobs"))
            assert mem.wait_for_extraction(timeout=60)
        learned = scalar(mem, "SELECT count(*) FROM memories WHERE api_key_id = ?", key.id)
        assert learned > len(CORPUS) // 2  # most of what was said was learned, its secret masked
    stored = _stored(db) + "\n".join(str(r) for r in rows(db, "SELECT metadata FROM memories"))
    logged = "\n".join(record.getMessage() for record in caplog.records)
    leaked = [s for _, s in CORPUS if any(_holds(text, s) for text in (stored, queued, logged))]
    assert leaked == []
