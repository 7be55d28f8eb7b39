"""Secrets are masked on every way content enters: `Memory.add` and `update` (the library),
POST /api/memory (REST), an import, and the MCP `memory_add` tool; `MEMROUTE_REDACT=false`
keeps every one of them verbatim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from memories import open_memory
from servers import management_api
from storage import rows

from memroute.config import Config
from memroute.mcp.server import build_server

TEXT = "the staging database uses DB_PASSWORD=CorrectHorse9 and sk_live_51HcXyZAbCdEfGhIjKlMnOpQr"
SECRETS = ("CorrectHorse9", "sk_live_51HcXyZAbCdEfGhIjKlMnOpQr")
MASKED = "the staging database uses DB_PASSWORD=[redacted] and [redacted]"


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
