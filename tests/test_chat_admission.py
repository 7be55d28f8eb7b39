"""A chat admitted on the event loop (memory off, SQLite) only reads: whatever would write
or wait is left to the admission threads, and nothing is done twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memories import open_memory
from storage import jobs_ever_queued

from memroute.gateway.chat import ChatPipeline, NeedsThread
from memroute.gateway.limits import GatewayLimiter, KeyLimits
from memroute.gateway.relay import UpstreamBounds
from memroute.service import Memory
from memroute.upstream.client import PoolSettings, UpstreamClient
from memroute.upstream.tls import tls_context
from memroute.web.metrics import standard_metrics
from memroute.web.routes.gateway import CHAT

BODY = json.dumps(
    {"model": "echo-1", "messages": [{"role": "user", "content": "I prefer green tea."}]}
).encode()


def _pipeline(mem: Memory) -> ChatPipeline:
    """The gateway's chat pipeline on `mem`, as `memroute serve` builds it on SQLite."""
    return ChatPipeline(
        mem,
        UpstreamClient(PoolSettings(4, 1.0, 1.0, 1.0, 1.0), tls_context()),  # never called here
        standard_metrics(lambda: 0.0),
        True,
        client_secret=lambda request: None,
        is_admin_token=lambda given: False,
        limiter=GatewayLimiter(8, KeyLimits(4, 0)),
        bounds=UpstreamBounds(30.0, 1 << 20),
        max_messages=100,
        threads=1,
        local_reads=True,
    )


def test_an_admission_on_the_event_loop_only_reads_and_leaves_writes_to_a_thread(tmp_path: Path) -> None:
    with open_memory(tmp_path / "memroute.db", model=False) as mem:
        mem.providers.add("local", "http://127.0.0.1:9/v1", default=True)
        mem.update_settings(enabled=False)
        key, secret = mem.keys.create("k")
        chat = _pipeline(mem)
        try:
            # The key's first use is due to be written: a write, so a thread admits it.
            with pytest.raises(NeedsThread):
                chat.admit(CHAT, secret, {}, BODY, only_reading=True)
            assert mem.keys.get(key.id).last_used_at is None
            chat.admit(CHAT, secret, {}, BODY)  # as the thread does: the last use is written
            assert mem.keys.get(key.id).last_used_at is not None

            admitted = chat.admit(CHAT, secret, {}, BODY, only_reading=True)
            assert admitted.key is not None and admitted.key.id == key.id
            assert json.loads(admitted.payload) == json.loads(BODY)  # forwarded as sent
            assert admitted.route.provider_id == "local"

            # Memory on: recall and queueing the turn write and wait, so a thread admits it,
            # and the attempt on the event loop queued nothing.
            mem.update_settings(enabled=True)
            with pytest.raises(NeedsThread):
                chat.admit(CHAT, secret, {}, BODY, only_reading=True)
            assert jobs_ever_queued(mem) == 0
            chat.admit(CHAT, secret, {}, BODY)
            assert jobs_ever_queued(mem) == 1
        finally:
            chat.close()
