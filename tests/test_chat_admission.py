"""A chat admitted on the event loop (SQLite) reads only what the process holds and writes
only briefly: whatever would wait long or work long is left to the admission threads, and
nothing is done twice. The user's turn is left for `DueTurn` to queue once the request is
on its way (tests/test_gateway_faults.py follows it through a server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
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
    {"model": "echo-1", "messages": [{"role": "user", "content": "Which tea do I like?"}]}
).encode()


def _pipeline(mem: Memory) -> ChatPipeline:
    """The gateway's chat pipeline on `mem`, as `memroute serve` builds it on SQLite."""
    return ChatPipeline(
        mem,
        UpstreamClient(PoolSettings(4, 1.0, 1.0, 1.0, 1.0), tls_context),  # never called here
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


def _sent_text(admitted_payload: bytes) -> str:
    return json.dumps(json.loads(admitted_payload))


def test_memory_off_an_admission_on_the_event_loop_leaves_writes_to_a_thread(tmp_path: Path) -> None:
    with open_memory(tmp_path / "memroute.db", model=False) as mem:
        mem.providers.add("local", "http://127.0.0.1:9/v1", default=True)
        mem.update_settings(enabled=False)
        key, secret = mem.keys.create("k")
        chat = _pipeline(mem)
        try:
            # The key's first use is due to be written: a write, so a thread admits it.
            with pytest.raises(NeedsThread):
                chat.admit(CHAT, secret, {}, BODY, on_loop=True)
            assert mem.keys.get(key.id).last_used_at is None
            chat.admit(CHAT, secret, {}, BODY)  # as the thread does: the last use is written
            assert mem.keys.get(key.id).last_used_at is not None

            admitted = chat.admit(CHAT, secret, {}, BODY, on_loop=True)
            assert admitted.key is not None and admitted.key.id == key.id
            assert json.loads(admitted.payload) == json.loads(BODY)  # forwarded as sent
            assert admitted.route.provider_id == "local"
        finally:
            chat.close()


@contextmanager
def _memory_on(tmp_path: Path) -> Iterator[tuple[Memory, str, ChatPipeline]]:
    """Memory on (keyword recall), a key holding one memory, its secret, and the pipeline."""
    with open_memory(tmp_path / "memroute.db", model=False) as mem:
        mem.providers.add("local", "http://127.0.0.1:9/v1", default=True)
        mem.update_settings(enabled=True, extraction_enabled=True)
        key, secret = mem.keys.create("k")
        mem.add(key.id, "prefers green tea from Kyoto", key="tea")
        chat = _pipeline(mem)
        try:
            yield mem, secret, chat
        finally:
            chat.close()


def test_memory_on_the_event_loop_admits_a_held_key_and_a_thread_everything_else(tmp_path: Path) -> None:
    with _memory_on(tmp_path) as (mem, secret, chat):
        first = chat.admit(CHAT, secret, {}, BODY)  # the key's first use, written in a thread
        assert first.turn_due and jobs_ever_queued(mem) == 0  # the turn waits for the request to leave
        assert chat.learn(first.ctx, wait=False)  # as `DueTurn` then does on the event loop
        queued = jobs_ever_queued(mem)
        assert queued == 1

        # The key's index is held now (a small key is indexed at its first recall):
        # the event loop admits the chat, with the memory injected; its turn is left to be
        # queued once the request is on its way (`DueTurn`: on the loop, briefly).
        admitted = chat.admit(CHAT, secret, {}, BODY, on_loop=True)
        assert "green tea from Kyoto" in _sent_text(admitted.payload)
        assert admitted.turn_due
        assert jobs_ever_queued(mem) == queued
        assert chat.learn(admitted.ctx, wait=False)
        assert jobs_ever_queued(mem) == queued + 1

        # Another process holds the write lock: the turn is not waited for on the event
        # loop (nothing queued), and `DueTurn` queues it in a thread once it is free.
        other = apsw.Connection(str(tmp_path / "memroute.db"))
        other.execute("BEGIN IMMEDIATE")
        try:
            admitted = chat.admit(CHAT, secret, {}, BODY, on_loop=True)
            assert not chat.learn(admitted.ctx, wait=False)
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert admitted.turn_due
        assert "green tea from Kyoto" in _sent_text(admitted.payload)
        assert jobs_ever_queued(mem) == queued + 1
        assert chat.learn(admitted.ctx)
        assert jobs_ever_queued(mem) == queued + 2

        # A recall that searches vectors embeds the question: a thread admits the chat,
        # and the attempt on the event loop queued nothing.
        mem.update_settings(embedding_source="hashing")
        with pytest.raises(NeedsThread):
            chat.admit(CHAT, secret, {}, BODY, on_loop=True)
        assert jobs_ever_queued(mem) == queued + 2
        in_thread = chat.admit(CHAT, secret, {}, BODY)
        assert "green tea from Kyoto" in _sent_text(in_thread.payload)
        assert in_thread.turn_due  # left, as on the loop, until the request is on its way
        assert jobs_ever_queued(mem) == queued + 2


def test_memory_on_a_key_whose_index_is_not_held_is_admitted_in_a_thread(tmp_path: Path) -> None:
    with _memory_on(tmp_path) as (mem, secret, chat):
        chat.admit(CHAT, secret, {}, BODY, on_loop=False)
        queued = jobs_ever_queued(mem)
        # Another user of the key has never been recalled: its index is not held.
        user_body = json.dumps({**json.loads(BODY), "user": "someone-new"}).encode()
        with pytest.raises(NeedsThread):
            chat.admit(CHAT, secret, {}, user_body, on_loop=True)
        assert jobs_ever_queued(mem) == queued
        admitted = chat.admit(CHAT, secret, {}, user_body)
        assert admitted.turn_due and jobs_ever_queued(mem) == queued
        assert chat.learn(admitted.ctx)
        assert jobs_ever_queued(mem) == queued + 1
