"""Memory must never break a chat; shutdown drains; /metrics counts what happened."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

import apsw
import httpx
import openai
import pytest
from gateways import ADMIN, Gateway, gateway_config
from memories import NO_MODEL, open_memory
from servers import LiveServer, RawUpstream, free_port
from storage import jobs_ever_queued, open_parts, rows

from memroute.models.results import ExtractionQueue
from memroute.web.app import create_app


def test_a_broken_memory_store_does_not_break_the_chat(gateway: Gateway, tmp_path: Path) -> None:
    gateway.memory.add(gateway.key_id, "prefers dark mode")
    # Break the real database under the running server: the memories table disappears.
    con = apsw.Connection(str(gateway.memory.config.db_path))
    con.set_busy_timeout(10_000)  # the server's own writers (queue, access counts) may hold the lock
    con.execute("ALTER TABLE memories RENAME TO memories_gone")
    con.close()
    raw = gateway.client().chat.completions.with_raw_response.create(
        model="echo-1", messages=[{"role": "user", "content": "I prefer light mode."}]
    )
    assert raw.parse().choices[0].message.content == "I prefer light mode."
    assert raw.headers["x-memroute-memory-count"] == "0"
    assert gateway.upstream.last["body"]["messages"] == [{"role": "user", "content": "I prefer light mode."}]
    metrics = httpx.get(gateway.url + "/metrics").text
    assert 'memroute_memory_errors_total{stage="retrieval"} 1' in metrics
    con = apsw.Connection(str(gateway.memory.config.db_path))
    con.set_busy_timeout(10_000)
    con.execute("ALTER TABLE memories_gone RENAME TO memories")
    con.close()


def _retrievals(gateway: Gateway) -> float:
    """How many chats the gateway has recalled memories for (its retrieval histogram's count)."""
    for line in httpx.get(gateway.url + "/metrics").text.splitlines():
        if line.startswith("memroute_retrieval_seconds_count"):
            return float(line.split()[-1])
    return 0.0


@pytest.mark.parametrize("stream", [False, True])
def test_a_chat_whose_turn_waits_for_the_database_holds_up_no_other_request(
    gateway: Gateway, stream: bool
) -> None:
    gateway.memory.update_settings(**NO_MODEL)  # keyword recall: admitted on the event loop
    gateway.memory.add(gateway.key_id, "prefers dark mode in every editor")
    client = gateway.client()

    def ask() -> Any:  # a stream's raw response comes with its head
        return client.chat.completions.with_raw_response.create(
            model="echo-1", messages=[{"role": "user", "content": "Which mode do I prefer?"}], stream=stream
        )

    ask()  # the key's index is held from now on: its chats are admitted on the event loop
    queued = jobs_ever_queued(gateway.memory)
    recalled, sent = _retrievals(gateway), len(gateway.upstream.requests)
    answers: list[Any] = []
    writer = apsw.Connection(str(gateway.memory.config.db_path))
    writer.set_busy_timeout(
        10_000
    )  # the server's own writers (the first turn's extraction) may hold the lock
    writer.execute("BEGIN IMMEDIATE")  # another process writing: the chat's turn must wait
    chat = threading.Thread(target=lambda: answers.append(ask()))
    chat.start()
    try:
        gateway.wait_for(lambda: _retrievals(gateway) == recalled + 1)  # recalled, turn not queued
        # Forwarded while its turn waits (the provider works meanwhile) …
        gateway.wait_for(lambda: len(gateway.upstream.requests) == sent + 1)
        assert httpx.get(gateway.url + "/healthz").status_code == 200  # the gateway still answers
        time.sleep(0.2)
        assert not answers  # … but not answered before its turn is queued
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    chat.join(30)
    assert answers and answers[0].headers["x-memroute-memory-count"] == "1"
    assert "dark mode" in json.dumps(gateway.upstream.last["body"])
    assert jobs_ever_queued(gateway.memory) == queued + 1


def test_shutdown_drains_queued_extraction_and_restart_keeps_memories(tmp_path: Path, upstream) -> None:
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        key, secret = side.keys.create("k")
        side.update_settings(enabled=True)
    config = gateway_config(db, upstream.url)
    with LiveServer(create_app(config)) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)
        for n in range(5):
            client.chat.completions.create(
                model="echo-1", messages=[{"role": "user", "content": f"I like tool{n}."}]
            )
    with open_memory(db) as after:
        assert after.extraction_queue() == ExtractionQueue(pending=0, failed=0)
        learned = after.list(api_key_id=key.id).items
        assert {m.key for m in learned if not m.key.startswith("turn:")} == {
            f"preference:tool{n}" for n in range(5)
        }
        assert sorted(m.content for m in learned if m.key.startswith("turn:")) == [
            f"I like tool{n}." for n in range(5)
        ]


def test_jobs_left_in_the_queue_are_processed_after_a_restart(tmp_path: Path, upstream) -> None:
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        key, _ = side.keys.create("k")
        side.enqueue_extraction(key.id, "I always pin dependencies.", source="user_message")
        assert side.extraction_queue().pending == 1
    with LiveServer(create_app(gateway_config(db, upstream.url))) as server:
        assert httpx.get(server.url + "/healthz").json()["status"] == "ok"
        with open_memory(db) as check:
            probe = Gateway(server.url, check, upstream, "", key.id)
            probe.wait_for(lambda: check.extraction_queue().pending == 0)
            assert [m.content for m in check.list(api_key_id=key.id).items] == ["always pins dependencies"]


def test_metrics_count_requests_and_injected_memories(gateway: Gateway) -> None:
    gateway.memory.add(gateway.key_id, "prefers dark mode")
    gateway.client().chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "hi"}])
    text = httpx.get(gateway.url + "/metrics").text
    assert 'memroute_chat_requests_total{memory="on",route="chat"} 1' in text
    assert "memroute_memories_injected_total 1" in text
    assert "memroute_retrieval_seconds_count 1" in text
    assert "# TYPE memroute_extraction_queue_depth gauge" in text
    assert 'memroute_requests_total{group="v1",status="2xx"} 1' in text


def test_a_scripted_upstream_sees_exactly_the_clients_fields(gateway: Gateway) -> None:
    gateway.memory.update_settings(enabled=False)
    extra = {
        "response_format": {"type": "json_object"},
        "tools": [{"type": "function", "function": {"name": "f"}}],
    }
    gateway.client().chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "hi"}], extra_body={"vendor_flag": 3, **extra}
    )
    sent = gateway.upstream.last["body"]
    assert sent["vendor_flag"] == 3
    assert sent["response_format"] == extra["response_format"] and sent["tools"] == extra["tools"]


def test_a_request_without_a_model_is_a_400(gateway: Gateway) -> None:
    response = httpx.post(
        gateway.url + "/v1/chat/completions",
        json={"messages": []},
        headers={"Authorization": f"Bearer {gateway.secret}"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert gateway.upstream.requests == []


def test_admin_token_is_not_a_client_key(gateway: Gateway) -> None:
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=ADMIN, max_retries=0)
    try:
        client.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "hi"}])
    except openai.AuthenticationError as exc:
        assert exc.status_code == 401
        # The answer says why, and how to get a client key.
        assert exc.body["message"].startswith("this is the admin token")
        assert "memroute keys create" in exc.body["message"] and "API keys page" in exc.body["message"]
        assert ADMIN not in exc.body["message"]
    else:
        raise AssertionError("the admin token must not work as a client key")
    assert gateway.upstream.requests == []


def test_a_full_database_keeps_the_chat_working_and_loses_nothing(tmp_path: Path, upstream) -> None:
    db = tmp_path / "full.db"
    config = gateway_config(db, upstream.url)  # type: ignore[attr-defined]
    mem, parts = open_parts(config, start_workers=True)
    key, secret = mem.keys.create("full")
    mem.update_settings(enabled=True)
    kept = mem.add(key.id, "prefers dark mode", key="preference:dark_mode")
    writer = parts.store.db._writer  # SQLITE_FULL on demand: the database may not grow any more
    pages = writer.execute("PRAGMA page_count").fetchone()[0]  # type: ignore[index]
    writer.execute(f"PRAGMA max_page_count = {pages}")
    try:
        with (
            LiveServer(create_app(config, memory=mem)) as server,
            httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {ADMIN}"}) as api,
        ):
            big = "x" * 60_000  # more than any free page left inside the file
            refused = api.post("/api/memory", json={"apiKeyId": key.id, "content": big, "key": "big"})
            assert refused.status_code == 507
            assert refused.json() == {
                "error": {
                    "message": "the database or its disk is full: nothing was written",
                    "type": "storage_full",
                }
            }
            # Read before the chat: its batched access-count update fits in the file, and a
            # write that succeeds marks the database writable again (within a second).
            storage = api.get("/api/memory/engine-status").json()["storage"]
            assert storage["writable"] is False and "full" in storage["reason"]
            assert storage["databaseBytes"] > 0 and storage["diskFreeBytes"] > 0
            client = openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)
            statement = "I prefer light mode. " + "And I like long messages. " * 3000
            raw = client.chat.completions.with_raw_response.create(
                model="echo-1", messages=[{"role": "user", "content": statement}]
            )
            assert raw.parse().choices[0].message.content == statement  # the chat goes on
            assert raw.headers["x-memroute-memory-count"] == "1"  # and still reads its memories
            metrics = httpx.get(server.url + "/metrics").text
            assert "memroute_extraction_queue_depth 1" in metrics  # the turn is held
            assert 'memroute_memory_errors_total{stage="extraction"}' not in metrics
            assert api.get(f"/api/memory/{kept.id}").json()["memory"]["content"] == "prefers dark mode"
            writer.execute("PRAGMA max_page_count = 1073741823")  # space again: writes work again
            assert (
                api.post("/api/memory", json={"apiKeyId": key.id, "content": big, "key": "big"}).status_code
                == 200
            )
            storage = api.get("/api/memory/engine-status").json()["storage"]
            assert storage == {**storage, "writable": True, "reason": "writes succeed"}
    finally:
        mem.close()
    with open_memory(db) as check:
        assert rows(check, "PRAGMA integrity_check") == [("ok",)]
        learned = {m.key: m.content for m in check.list(key.id).items}
        assert {"preference:dark_mode", "big"} <= set(learned)
        assert "likes long messages" in learned.values()  # said while the disk was full, kept
        kept_turn = [c for k, c in learned.items() if k.startswith("turn:")]
        assert kept_turn and all(c in statement for c in kept_turn)  # and the turn itself


def test_garbage_sse_from_the_provider_is_relayed_untouched_and_breaks_nothing(
    gateway: Gateway,
) -> None:
    # A provider that streams broken JSON, binary noise, an event without data, and stops
    # without [DONE]: the client gets exactly those bytes (memroute relays, it does not
    # judge), the parts that are valid are still kept as the reply, and the server goes on.
    gateway.memory.update_settings(captureTurns="all")
    good = {"choices": [{"index": 0, "delta": {"content": "I prefer tabs."}}]}
    chunks = [
        b"data: {not json at all\n\n",
        b"\x00\xff\xfe garbage without a field name\n\n",
        b"event: ping\n\n",
        b"data: " + json.dumps(good).encode() + b"\n\n",
        b'data: {"choices": "not a list"}\n\n',
        b"data: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n\n",  # cut short, no [DONE]
    ]
    gateway.upstream.raw_stream(*chunks)
    body = {
        "model": "echo-1",
        "stream": True,
        "messages": [{"role": "user", "content": "I prefer dark mode."}],
    }
    headers = {"Authorization": f"Bearer {gateway.secret}"}
    with httpx.stream("POST", f"{gateway.url}/v1/chat/completions", json=body, headers=headers) as response:
        assert response.status_code == 200
        received = b"".join(response.iter_bytes())
    assert received == b"".join(chunks)
    learned = lambda: {m.content for m in gateway.memory.list(gateway.key_id).items}  # noqa: E731
    # The user's fact and turn, and the reply made of its one good event (no fact from it).
    gateway.wait_for(lambda: learned() == {"prefers dark mode", "I prefer dark mode.", "I prefer tabs."})
    after = gateway.client().chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "still there?"}]
    )
    assert after.choices[0].message.content == "still there?"
    assert httpx.get(f"{gateway.url}/healthz").json()["status"] == "ok"


@pytest.mark.parametrize("messages", [openai.NOT_GIVEN, "hello", {"role": "user", "content": "hi"}, None])
def test_messages_that_are_not_a_list_are_a_400_and_nothing_is_forwarded(gateway: Gateway, messages) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        gateway.client().chat.completions.create(model="echo-1", messages=messages)
    assert caught.value.body["type"] == "invalid_request_error"
    assert caught.value.body["message"].startswith("messages: must be a list of messages")
    assert gateway.upstream.requests == []


CUT_SHORT = (
    b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 500\r\n\r\n{"id": "chatcmpl-'
)


@pytest.mark.parametrize(
    "reply", [b"", CUT_SHORT], ids=["hangs-up-without-answering", "cuts-its-answer-short"]
)
def test_a_provider_that_breaks_off_its_answer_is_not_called_unreachable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, reply: bytes
) -> None:
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        _, secret = side.keys.create("k")
    with RawUpstream(reply) as raw, LiveServer(create_app(gateway_config(db, raw.url))) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)
        with (
            caplog.at_level(logging.WARNING, logger="memroute.upstream"),
            pytest.raises(openai.APIStatusError) as caught,
        ):
            client.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "hi"}])
        assert raw.requests >= 1  # it was reached
    assert caught.value.status_code == 502
    assert caught.value.body["message"].startswith("upstream provider 'default' broke off its answer (")
    assert any(f"provider=default url={raw.url}/v1" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("stream", [False, True])
def test_what_the_user_said_is_kept_when_the_provider_cannot_be_reached(tmp_path: Path, stream: bool) -> None:
    """A chat admitted on the event loop queues its user's turn once the request is on its
    way; one that never leaves (the provider refuses the connection) queues it all the same."""
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        key, secret = side.keys.create("k")
        side.update_settings(enabled=True, **NO_MODEL)  # keyword recall: admitted on the event loop
    said = ["I keep bees on the roof.", "Our twins turn seven in May.", "I moved to Oslo last spring."]
    dead = f"http://127.0.0.1:{free_port()}/v1"
    with LiveServer(create_app(gateway_config(db, "unused", MEMROUTE_UPSTREAM_BASE_URL=dead))) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)
        for text in said:  # the first builds the key's index; the next are admitted on the loop
            with pytest.raises(openai.APIStatusError) as caught:
                client.chat.completions.create(
                    model="echo-1", messages=[{"role": "user", "content": text}], stream=stream
                )
            assert caught.value.status_code == 502
    with open_memory(db) as after:
        learned = after.list(api_key_id=key.id).items
        assert sorted(m.content for m in learned if m.key.startswith("turn:")) == sorted(said)


def test_an_unreachable_provider_is_logged_with_its_url_but_no_secret(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        _, secret = side.keys.create("k")
    port = free_port()
    dead = f"http://someone:pa55word@127.0.0.1:{port}/v1"  # a query is refused in base URLs
    config = gateway_config(
        db, "unused", MEMROUTE_UPSTREAM_BASE_URL=dead, MEMROUTE_UPSTREAM_API_KEY="sk-DO-NOT-LEAK-42"
    )
    with LiveServer(create_app(config)) as server, caplog.at_level(logging.DEBUG):
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 502 and "is unreachable (ConnectError)" in caught.value.body["message"]
    logged = [r.getMessage() for r in caplog.records]
    assert any(f"provider=default url=http://127.0.0.1:{port}/v1 error=ConnectError" in m for m in logged)
    assert not any(s in m for m in logged for s in ("pa55word", "DO-NOT-LEAK", "someone"))
