"""The gateway as the tests drive it: memroute under uvicorn on a fresh database, the
scripted upstream behind it, a client key, and a second `Memory` on the same file for
setting up and checking (the `gateway` fixture in conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import openai
import postgres
from memories import open_memory
from servers import TLS, LiveServer, ScriptedUpstream, wait_until

from memroute import Memory
from memroute.config import Config
from memroute.models.records import MemoryRecord
from memroute.web.app import create_app

if TYPE_CHECKING:
    import anthropic  # ~1.6 s of CPU to import: only where a test makes a client

ADMIN = "admin-test-token-for-memroute-tests"


@dataclass
class Gateway:
    url: str
    memory: Memory  # a second Memory on the gateway's database file, for setting up and checking
    upstream: ScriptedUpstream
    secret: str
    key_id: str

    def client(self, secret: str | None = None, **headers: str) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=self.url + "/v1",
            api_key=secret or self.secret,
            max_retries=0,
            default_headers=headers or None,
            http_client=openai.DefaultHttpxClient(verify=TLS),
        )

    def anthropic(
        self, secret: str | None = None, *, bearer: bool = False, **headers: str
    ) -> anthropic.Anthropic:
        """The official Anthropic SDK pointed at memroute, the client key in `x-api-key`
        (or, with `bearer`, in `Authorization: Bearer`)."""
        key = secret or self.secret
        import anthropic

        return anthropic.Anthropic(
            base_url=self.url,
            api_key=None if bearer else key,
            auth_token=key if bearer else None,
            max_retries=0,
            default_headers=headers or None,
            http_client=anthropic.DefaultHttpxClient(verify=TLS),
        )

    def add_anthropic_provider(self, provider_id: str = "claude", key: str = "sk-ant-provider-key") -> None:
        """An Anthropic-format provider at the scripted upstream, with its own key."""
        self.memory.providers.add(provider_id, self.upstream.url + "/v1", api_key=key, format="anthropic")

    def wait_for(self, check: Callable[[], bool], timeout: float = 10.0) -> None:
        wait_until(check, timeout, interval=0.05)

    def memories(self, owner: str | None = None) -> list[MemoryRecord]:
        return self.memory.list(api_key_id=owner or self.key_id, limit=200).items


def gateway_config(db: Path, upstream_url: str, **extra: str) -> Config:
    env = {"MEMROUTE_UPSTREAM_BASE_URL": upstream_url + "/v1", "MEMROUTE_ADMIN_TOKEN": ADMIN, **extra}
    return Config.for_path(db, environ=env).with_overrides(database_url=postgres.url_for(db))


def serve_gateway(tmp_path: Path, upstream: ScriptedUpstream) -> Iterator[Gateway]:
    db = tmp_path / "memroute.db"
    side = open_memory(db)
    key, secret = side.keys.create("test")
    side.update_settings(enabled=True)
    with LiveServer(create_app(gateway_config(db, upstream.url))) as server:  # type: ignore[attr-defined]
        yield Gateway(server.url, side, upstream, secret, key.id)
    side.close()
