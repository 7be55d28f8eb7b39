"""The gateway end to end: memroute under uvicorn, a scripted upstream under uvicorn,
and the official openai SDK as the client."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import openai
import pytest
from gateways import Gateway, gateway_config
from memories import NO_MODEL, open_memory
from servers import LiveServer, ScriptedUpstream, free_port, wait_until
from storage import jobs_ever_queued

from memroute.memory.injection import FRAMING, MEMORY_PREFIX
from memroute.web.app import create_app

pytestmark = pytest.mark.both_stores  # each test runs on SQLite and on PostgreSQL


def test_memory_off_passes_the_request_through_unchanged(gateway: Gateway) -> None:
    gateway.memory.update_settings(enabled=False)
    gateway.memory.add(gateway.key_id, "prefers concise answers")
    raw = gateway.client().chat.completions.with_raw_response.create(
        model="echo-1", messages=[{"role": "user", "content": "First turn"}], temperature=0.2, seed=7
    )
    reply = raw.parse()
    assert reply.choices[0].message.content == "First turn"
    sent = gateway.upstream.last["body"]
    assert sent["messages"] == [{"role": "user", "content": "First turn"}]
    assert sent["temperature"] == 0.2 and sent["seed"] == 7
    assert raw.headers["x-memroute-memory-count"] == "0"
    assert "authorization" not in gateway.upstream.last["headers"]  # the client's key never goes upstream


def test_stored_memories_are_injected_as_a_system_message(gateway: Gateway) -> None:
    stored = gateway.memory.add(gateway.key_id, "User prefers concise answers.")
    raw = gateway.client(**{"x-memroute-debug": "true"}).chat.completions.with_raw_response.create(
        model="echo-1", messages=[{"role": "user", "content": "How should you answer?"}]
    )
    first = gateway.upstream.last["body"]["messages"][0]
    assert first["role"] == "system"
    assert first["content"] == framed("User prefers concise answers.")
    assert raw.headers["x-memroute-memory-count"] == "1"
    assert raw.headers["x-memroute-memory-tokens"] == str(len("User prefers concise answers.") // 4 + 1)
    assert raw.headers["x-memroute-memory-ids"] == stored.id
    gateway.wait_for(lambda: gateway.memory.get(stored.id).access_count == 1)


def test_facts_come_from_the_user_message_and_never_from_the_reply(gateway: Gateway) -> None:
    gateway.upstream.reply("I prefer concise answers. I usually answer in bullet points.")
    gateway.client(**{"x-memroute-session-id": "session-extract"}).chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "I prefer TypeScript. Hello!"}]
    )
    gateway.wait_for(lambda: len(gateway.memories()) >= 2)
    assert gateway.memory.wait_for_extraction(10)
    by_key = {m.key: m for m in gateway.memories()}
    facts = {k: m for k, m in by_key.items() if not k.startswith("turn:")}
    assert [m.content for m in facts.values()] == ["prefers TypeScript"]  # nothing of the reply
    assert facts["preference:typescript"].metadata["source"] == "user_message"
    episodes = [m for k, m in by_key.items() if k.startswith("turn:")]
    assert [m.content for m in episodes] == ["I prefer TypeScript. Hello!"]
    assert {m.session_id for m in by_key.values()} == {"session-extract"}


def _jobs_ever_queued(gateway: Gateway) -> int:
    return jobs_ever_queued(gateway.memory)


def test_a_turn_that_states_nothing_queues_no_extraction_work(gateway: Gateway) -> None:
    # With turn capture off, questions cost no write and no worker time; with it on, only
    # turns that say nothing ("ok", "thanks!") are skipped.
    gateway.memory.update_settings(captureTurns="off")
    gateway.upstream.reply("Use SQLite to start; move to Postgres when you need replicas.")
    gateway.client().chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "Which database should we use?"}]
    )
    long_question = "Which of these is faster? " + "Compare option A with option B. " * 200
    with gateway.client().chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": long_question}], stream=True
    ) as stream:
        assert any(chunk.choices for chunk in stream)
    assert _jobs_ever_queued(gateway) == 0
    gateway.upstream.reply("Sure.")
    gateway.client().chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "Which database? I prefer Postgres."}]
    )
    assert _jobs_ever_queued(gateway) == 1  # the statement, not the factless reply
    gateway.wait_for(lambda: [m.content for m in gateway.memories()] == ["prefers Postgres"])
    gateway.memory.update_settings(captureTurns="user")
    for said in ("ok", "thanks!", "lol", "\U0001f44d"):
        gateway.client().chat.completions.create(model="echo-1", messages=[{"role": "user", "content": said}])
    assert _jobs_ever_queued(gateway) == 1


def test_streaming_relays_chunks_in_order_and_keeps_the_full_reply(gateway: Gateway) -> None:
    gateway.memory.update_settings(captureTurns="all")
    text = "Noted. I will use Postgres for the billing service and I never deploy on Fridays."
    gateway.upstream.reply(text, chunk_delay=0.01)
    with gateway.client().chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "Plan the service"}], stream=True
    ) as stream:
        pieces = [chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices]
    assert "".join(pieces) == text
    assert len(pieces) >= len(text.split(" "))
    gateway.wait_for(lambda: len(gateway.memories()) == 2)
    by_role = {m.metadata["role"]: m for m in gateway.memories()}
    assert by_role["assistant"].content == text  # assembled from every chunk
    assert by_role["user"].content == "Plan the service"
    assert all(m.type == "episodic" and m.key.startswith("turn:") for m in by_role.values())


def test_no_memory_header_turns_off_retrieval_injection_and_extraction(gateway: Gateway) -> None:
    gateway.memory.add(gateway.key_id, "prefers tea")
    for header in ("x-memroute-no-memory", "x-omniroute-no-memory"):
        raw = gateway.client(**{header: "true"}).chat.completions.with_raw_response.create(
            model="echo-1", messages=[{"role": "user", "content": "I prefer coffee."}]
        )
        assert raw.headers["x-memroute-memory-count"] == "0"
        assert gateway.upstream.last["body"]["messages"] == [{"role": "user", "content": "I prefer coffee."}]
    time.sleep(0.3)
    assert [m.content for m in gateway.memories()] == ["prefers tea"]


def test_o1_and_glm_get_the_memory_as_a_user_message(gateway: Gateway) -> None:
    gateway.memory.add(gateway.key_id, "prefers dark mode")
    gateway.memory.providers.add("glm", gateway.upstream.url + "/v1")  # type: ignore[attr-defined]
    for model in ("o1-mini", "glm/glm-4"):
        gateway.client().chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}])
        sent = gateway.upstream.last["body"]
        assert sent["messages"][0] == {"role": "user", "content": framed("prefers dark mode")}
    assert gateway.upstream.last["body"]["model"] == "glm-4"


def test_cache_control_markers_get_cache_safe_placement(gateway: Gateway) -> None:
    gateway.memory.add(gateway.key_id, "prefers dark mode")
    system = {
        "role": "system",
        "content": [{"type": "text", "text": "SYSTEM", "cache_control": {"type": "ephemeral"}}],
    }
    messages = [
        system,
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "u2"},
    ]
    gateway.client().chat.completions.create(model="echo-1", messages=messages)
    sent = gateway.upstream.last["body"]["messages"]
    assert sent[:3] == messages[:3]
    assert sent[3] == {"role": "system", "content": framed("prefers dark mode")}
    assert sent[4] == messages[3]


def test_two_keys_never_see_each_others_memories(gateway: Gateway) -> None:
    other, other_secret = gateway.memory.keys.create("other")
    gateway.memory.add(gateway.key_id, "likes green tea")
    gateway.client(other_secret).chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "I like black tea. What tea do I like?"}]
    )
    assert all("green tea" not in str(m) for m in gateway.upstream.last["body"]["messages"])
    gateway.wait_for(lambda: len(gateway.memories(other.id)) == 2)
    assert {m.content for m in gateway.memories(other.id)} == {
        "likes black tea",
        "I like black tea. What tea do I like?",
    }
    assert [m.content for m in gateway.memories()] == ["likes green tea"]


@pytest.mark.parametrize("secret", ["", "mr-unknown", "revoked"])
def test_bad_keys_get_401_in_the_openai_shape(gateway: Gateway, secret: str) -> None:
    if secret == "revoked":
        key, secret = gateway.memory.keys.create("soon revoked")
        gateway.memory.keys.revoke(key.id)
    client = openai.OpenAI(
        base_url=gateway.url + "/v1",
        api_key=secret or "x",
        max_retries=0,
        default_headers={"Authorization": ""} if not secret else None,
    )
    with pytest.raises(openai.AuthenticationError) as caught:
        client.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 401
    assert caught.value.body["type"] == "authentication_error"
    assert gateway.upstream.requests == []


def test_with_memory_off_each_chat_still_reads_its_key_records_its_use_and_checks_its_body(
    gateway: Gateway,
) -> None:
    """With memory off, a chat is admitted on the event loop (SQLite): its key is still read
    each time (revoked between two chats, it is refused at the second), the key's last use is
    still written, and a body that is not a chat is still a 400 that reaches no provider."""
    gateway.memory.update_settings(enabled=False)
    key, secret = gateway.memory.keys.create("short-lived")
    assert key.last_used_at is None
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=secret, max_retries=0)
    reply = client.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "hi"
    assert gateway.memory.keys.get(key.id).last_used_at is not None
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="echo-1", messages="hi")  # type: ignore[arg-type]
    assert refused.value.body["message"].startswith("messages: must be a list of messages")
    gateway.memory.keys.revoke(key.id)
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "hi"}])
    assert len(gateway.upstream.requests) == 1


def test_upstream_errors_come_back_with_their_status(gateway: Gateway) -> None:
    gateway.upstream.fail(429, {"error": {"message": "slow down", "type": "rate_limit_error"}})
    with pytest.raises(openai.RateLimitError) as limited:
        gateway.client().chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "hi"}])
    assert limited.value.body["message"] == "slow down"
    gateway.upstream.fail(500, {"error": {"message": "boom", "type": "server_error"}})
    with pytest.raises(openai.InternalServerError) as failed:
        gateway.client().chat.completions.create(
            model="echo-1", messages=[{"role": "user", "content": "hi"}], stream=True
        )
    assert failed.value.status_code == 500


def test_unreachable_upstream_is_a_502(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        _, secret = side.keys.create("k")
    dead = f"http://127.0.0.1:{free_port()}"
    with LiveServer(create_app(gateway_config(db, dead))) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 502
    assert "unreachable" in caught.value.body["message"]


def test_keyless_requests_pass_without_memory_when_keys_are_not_required(tmp_path: Path, upstream) -> None:
    db = tmp_path / "m.db"
    config = gateway_config(db, upstream.url, MEMROUTE_REQUIRE_API_KEY="false")
    with LiveServer(create_app(config)) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="not-a-memroute-key", max_retries=0)
        reply = client.chat.completions.create(
            model="echo-1", messages=[{"role": "user", "content": "hello"}]
        )
    assert reply.choices[0].message.content == "hello"


def test_models_are_listed_with_provider_prefixes(gateway: Gateway) -> None:
    ids = [m.id for m in gateway.client().models.list()]
    assert "default/echo-1" in ids and "echo-1" in ids


def test_embeddings_pass_through(gateway: Gateway) -> None:
    result = gateway.client().embeddings.create(model="default/text-embed", input=["a", "b"])
    assert len(result.data) == 2
    assert gateway.upstream.last["body"]["model"] == "text-embed"


def test_a_slow_upstream_is_a_504(tmp_path: Path, upstream: ScriptedUpstream) -> None:
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        _, secret = side.keys.create("k")
    upstream.stall(1.2)
    config = gateway_config(db, upstream.url, MEMROUTE_UPSTREAM_TIMEOUT="0.3")  # type: ignore[attr-defined]
    with LiveServer(create_app(config)) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key=secret, max_retries=0)
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model="echo-1", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 504
    assert "timed out" in caught.value.body["message"]


def test_memory_disabled_means_no_injection_and_no_learning(gateway: Gateway) -> None:
    gateway.memory.update_settings(enabled=False)
    gateway.memory.add(gateway.key_id, "prefers tea")
    gateway.client().chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "I love jazz."}]
    )
    assert gateway.upstream.last["body"]["messages"] == [{"role": "user", "content": "I love jazz."}]
    time.sleep(0.3)
    assert [m.content for m in gateway.memories()] == ["prefers tea"]


def test_extraction_and_injection_switches_are_separate(gateway: Gateway) -> None:
    gateway.memory.add(gateway.key_id, "prefers tea")
    gateway.memory.update_settings(injectionEnabled=False)
    gateway.client().chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "I love jazz."}]
    )
    assert gateway.upstream.last["body"]["messages"] == [{"role": "user", "content": "I love jazz."}]
    gateway.wait_for(lambda: "loves jazz" in [m.content for m in gateway.memories()])
    gateway.memory.update_settings(injectionEnabled=True, extractionEnabled=False)
    gateway.client().chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "I love blues."}]
    )
    assert gateway.upstream.last["body"]["messages"][0]["role"] == "system"
    time.sleep(0.3)
    assert "loves blues" not in [m.content for m in gateway.memories()]


def test_session_scope_keeps_sessions_apart(gateway: Gateway) -> None:
    gateway.memory.update_settings(scope="session")
    gateway.client(**{"x-memroute-session-id": "a"}).chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "I like tea."}]
    )
    gateway.client(**{"x-memroute-session-id": "b"}).chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "I like coffee."}]
    )
    gateway.wait_for(lambda: len(gateway.memories()) == 4)  # two facts, two kept turns
    gateway.client(**{"x-memroute-session-id": "a"}).chat.completions.create(
        model="echo-1", messages=[{"role": "user", "content": "What do I drink?"}]
    )
    injected = gateway.upstream.last["body"]["messages"][0]["content"]
    assert "likes tea" in injected and "coffee" not in injected


def test_the_budget_limits_what_is_injected(gateway: Gateway) -> None:
    gateway.memory.add(
        gateway.key_id, "An older and much longer preference that cannot fit in twenty tokens at all."
    )
    time.sleep(0.01)
    gateway.memory.add(gateway.key_id, "Newest preference should fit first.")
    gateway.memory.update_settings(maxTokens=20, **NO_MODEL)  # "Hello" matches nothing: newest first
    raw = gateway.client().chat.completions.with_raw_response.create(
        model="echo-1", messages=[{"role": "user", "content": "Hello"}]
    )
    assert gateway.upstream.last["body"]["messages"][0]["content"] == framed(
        "Newest preference should fit first."
    )
    assert int(raw.headers["x-memroute-memory-tokens"]) <= 20


@pytest.mark.one_store  # about the process's model, which the first run loads for the second
def test_a_chat_never_waits_for_the_model_to_load_and_recall_uses_it_once_loaded(
    tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    """The bundled model (on by default) is loaded at the first recall that needs it, a
    second or more on a small machine: the chat that starts the load is answered at once
    with keyword recall, and the chats after it are recalled by meaning as well."""
    db = tmp_path / "memroute.db"
    with open_memory(db) as side:
        key, secret = side.keys.create("test")
        side.update_settings(enabled=True)
        side.add(key.id, "has a dog named Biscuit who loves the beach", key="fact:dog")
        # The memory's vector is stored before the server starts, so the server's own re-index
        # has nothing to embed and never loads the model first (it raced the chat before).
        side.reindex(wait=True)
        config = gateway_config(db, upstream.url, MEMORY_REINDEX_POLL_S="600")
        with LiveServer(create_app(config)) as server:  # type: ignore[attr-defined]
            chat = Gateway(server.url, side, upstream, secret, key.id).client(**{"x-memroute-debug": "true"})

            def tiers() -> set[str]:
                raw = chat.chat.completions.with_raw_response.create(
                    model="echo-1", messages=[{"role": "user", "content": "Tell me about my dog"}]
                )
                assert raw.parse().choices[0].message.content == "Tell me about my dog"  # the echo
                details = raw.headers["x-memroute-memory-details"].split(",")
                return {part.split(";")[1] for part in details}

            # The server's start-up passes (re-index, index builds) get time to run first:
            # none of them may load the model before a chat needs it.
            time.sleep(3)
            assert tiers() == {"tier=fts5"}  # answered without the model, which starts loading
            wait_until(lambda: tiers() == {"tier=hybrid-rrf"}, timeout=60, interval=0.1)


def framed(*memories: str) -> str:
    """The injected text: the prefix, the framing sentence, one memory per line."""
    return MEMORY_PREFIX + FRAMING + "\n" + "\n".join(memories)


def _post_raw(gateway: Gateway, raw: str) -> httpx.Response:
    """A chat body sent as written (the SDKs write their own JSON)."""
    headers = {"authorization": f"Bearer {gateway.secret}", "content-type": "application/json"}
    with httpx.Client(base_url=gateway.url, headers=headers) as client:
        return client.post("/v1/chat/completions", content=raw)


@pytest.mark.one_store
@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_number_json_does_not_have_is_a_400_that_reaches_no_provider(gateway: Gateway, number: str) -> None:
    chat = '"model": "echo-1", "messages": [{"role": "user", "content": "hi"}]'
    refused = _post_raw(gateway, f'{{{chat}, "temperature": {number}}}')
    assert refused.status_code == 400
    said = refused.json()["error"]["message"]
    assert said.startswith(f"the request body is not valid JSON: {number} is not a JSON number"), said
    assert gateway.upstream.requests == []


@pytest.mark.one_store
def test_what_the_client_sends_reaches_the_provider_with_the_same_values(gateway: Gateway) -> None:
    """Memory on (the body is written again with the memory in it): an integer beyond 64
    bits, a lone surrogate, other scripts and an unknown field arrive as they were sent."""
    gateway.memory.add(gateway.key_id, "prefers tea over coffee")
    answered = _post_raw(
        gateway,
        '{"model": "echo-1", "seed": 123456789012345678901234567890,'
        ' "x-extra": {"deep": [1.5, -0.0, null], "half": "\\ud800"},'
        ' "messages": [{"role": "user", "content": "tea? caf\\u00e9 \\u6f22\\u5b57 \\ud83d\\ude00"}]}',
    )
    assert answered.status_code == 200
    sent = gateway.upstream.last["body"]
    assert sent["seed"] == 123456789012345678901234567890
    assert sent["x-extra"] == {"deep": [1.5, -0.0, None], "half": "\ud800"}  # not echoed back
    asked = "tea? caf\u00e9 \u6f22\u5b57 \U0001f600"
    assert sent["messages"][-1] == {"role": "user", "content": asked}
    assert "prefers tea over coffee" in str(sent["messages"][0]["content"])  # the memory went in too
