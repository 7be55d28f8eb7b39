"""The Anthropic Messages route end to end: memroute under uvicorn, a scripted upstream
that speaks the Messages API, and the official `anthropic` SDK as the client."""

from __future__ import annotations

import time

import httpx
import openai
import pytest
from gateways import Gateway
from servers import TLS

from memroute.memory.injection import FRAMING, MEMORY_PREFIX

MODEL = "claude/claude-test"


@pytest.fixture
def claude(gateway: Gateway) -> Gateway:
    """The gateway with an Anthropic-format provider `claude` at the scripted upstream."""
    gateway.add_anthropic_provider()
    return gateway


def block(*memories: str) -> str:
    return MEMORY_PREFIX + FRAMING + "\n" + "\n".join(memories)


def test_memory_goes_after_the_system_prompt_and_the_answer_comes_back(claude: Gateway) -> None:
    stored = claude.memory.add(claude.key_id, "prefers answers in French")
    client = claude.anthropic(**{"x-memroute-debug": "true"})
    raw = client.messages.with_raw_response.create(
        model=MODEL,
        max_tokens=64,
        system="You are terse.",
        messages=[{"role": "user", "content": "How should you answer me?"}],
        extra_body={"top_k": 5, "x_unknown": {"kept": True}},
    )
    message = raw.parse()
    assert message.content[0].text == "How should you answer me?"  # the SDK parsed the answer
    sent = claude.upstream.last
    assert sent["path"] == "/v1/messages"
    assert sent["body"]["system"] == "You are terse.\n\n" + block("prefers answers in French")
    assert sent["body"]["model"] == "claude-test"  # the provider prefix is stripped
    assert sent["body"]["messages"] == [{"role": "user", "content": "How should you answer me?"}]
    assert sent["body"]["top_k"] == 5
    assert sent["body"]["x_unknown"] == {"kept": True}  # unknown fields pass untouched
    # The provider's own key in its own header; the client's memroute key never goes upstream.
    assert sent["headers"]["x-api-key"] == "sk-ant-provider-key"
    assert "authorization" not in sent["headers"]
    assert sent["headers"]["anthropic-version"] == client.default_headers["anthropic-version"]
    assert raw.headers["x-memroute-memory-count"] == "1"
    assert raw.headers["x-memroute-memory-ids"] == stored.id
    assert raw.headers["x-request-id"].startswith("req_")


def test_streamed_answers_are_relayed_and_the_user_turn_and_reply_are_kept(claude: Gateway) -> None:
    claude.memory.update_settings(captureTurns="all")
    text = "Noted. I will keep the billing service on Postgres and never deploy on Fridays."
    claude.upstream.reply(text, chunk_delay=0.005)
    with claude.anthropic(**{"x-request-id": "turn-42"}).messages.stream(
        model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "We deploy on Fly.io these days."}]
    ) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(pieces) == text and final.content[0].text == text
    assert len(pieces) == len(text.split(" "))
    claude.wait_for(lambda: {m.metadata.get("role") for m in claude.memories()} >= {"user", "assistant"})
    by_role = {m.metadata["role"]: m for m in claude.memories() if m.key.startswith("turn:")}
    assert by_role["user"].content == "We deploy on Fly.io these days."
    assert by_role["assistant"].content == text  # assembled from the text deltas
    assert by_role["user"].metadata["requestId"] == "turn-42"
    assert claude.memory.wait_for_extraction(10)
    facts = [m.content for m in claude.memories() if not m.key.startswith("turn:")]
    assert any("Fly.io" in fact for fact in facts)


def test_a_system_prompt_marked_for_caching_stays_the_same_prefix(claude: Gateway) -> None:
    claude.memory.add(claude.key_id, "works at Acme")
    system = [
        {"type": "text", "text": "Long stable instructions.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "More of them."},
    ]
    claude.anthropic().messages.create(
        model=MODEL, max_tokens=16, system=system, messages=[{"role": "user", "content": "Where do I work?"}]
    )
    sent = claude.upstream.last["body"]
    assert sent["system"][:2] == system  # byte-identical, breakpoint first
    assert sent["system"][2] == {"type": "text", "text": block("works at Acme")}


def test_with_breakpoints_in_the_messages_memory_goes_after_the_last_one(claude: Gateway) -> None:
    claude.memory.add(claude.key_id, "works at Acme")
    marked = {"type": "text", "text": "Where do I work?", "cache_control": {"type": "ephemeral"}}
    history = [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi!"},
        {"role": "user", "content": [marked]},
    ]
    claude.anthropic().messages.create(model=MODEL, max_tokens=16, system="Be brief.", messages=history)
    sent = claude.upstream.last["body"]
    assert sent["system"] == "Be brief."  # untouched: a change here would break the cached prefix
    assert sent["messages"][:2] == history[:2]
    assert sent["messages"][2]["content"] == [marked, {"type": "text", "text": block("works at Acme")}]
    assert history[2]["content"] == [marked]  # the client's own body is never changed


def test_the_no_memory_header_reads_and_writes_nothing(claude: Gateway) -> None:
    claude.memory.add(claude.key_id, "prefers tea")
    raw = claude.anthropic(**{"x-memroute-no-memory": "true"}).messages.with_raw_response.create(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "I prefer coffee now."}]
    )
    assert raw.headers["x-memroute-memory-count"] == "0"
    assert "system" not in claude.upstream.last["body"]
    time.sleep(0.3)
    assert [m.content for m in claude.memories()] == ["prefers tea"]


def test_the_client_key_works_as_a_bearer_token_too(claude: Gateway) -> None:
    claude.memory.add(claude.key_id, "lives in Lisbon")
    claude.anthropic(bearer=True).messages.create(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Where do I live?"}]
    )
    assert "lives in Lisbon" in claude.upstream.last["body"]["system"]


def test_client_headers_of_the_api_version_and_betas_are_passed_on(claude: Gateway) -> None:
    versioned = {"anthropic-beta": "prompt-caching-2024-07-31", "anthropic-version": "2023-06-01"}
    claude.anthropic(**versioned).messages.create(
        model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Hi there, anything new?"}]
    )
    headers = claude.upstream.last["headers"]
    assert headers["anthropic-beta"] == "prompt-caching-2024-07-31"
    assert headers["anthropic-version"] == "2023-06-01"
    with httpx.Client(base_url=claude.url, verify=TLS) as client:  # a client that names no version
        client.post(
            "/v1/messages",
            headers={"x-api-key": claude.secret},
            json={"model": MODEL, "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]},
        )
    assert claude.upstream.last["headers"]["anthropic-version"] == "2023-06-01"  # the one providers take


def test_errors_come_back_in_anthropics_shape(claude: Gateway) -> None:
    import anthropic

    with pytest.raises(anthropic.AuthenticationError) as refused:
        claude.anthropic("mr-not-a-key").messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "Hi"}]
        )
    assert refused.value.body == {
        "type": "error",
        "error": {"type": "authentication_error", "message": refused.value.body["error"]["message"]},
    }
    with httpx.Client(base_url=claude.url, verify=TLS) as client:
        bad = client.post("/v1/messages", headers={"x-api-key": claude.secret}, json={"model": MODEL})
    assert bad.status_code == 400
    assert bad.json()["type"] == "error" and bad.json()["error"]["type"] == "invalid_request_error"
    assert "messages" in bad.json()["error"]["message"]


def test_a_model_of_an_openai_format_provider_is_a_clear_400(claude: Gateway) -> None:
    # "echo-1" goes to the default provider (the environment's, OpenAI format) ...
    claude.memory.providers.add("second", claude.upstream.url + "/v1", format="anthropic")
    import anthropic

    with pytest.raises(anthropic.BadRequestError) as refused:
        claude.anthropic().messages.create(
            model="default/echo-1", max_tokens=16, messages=[{"role": "user", "content": "Hi"}]
        )
    message = refused.value.body["error"]["message"]
    assert "speaks the openai format" in message and "--format anthropic" in message
    # ... and a model of an Anthropic provider is refused on the OpenAI routes.
    with pytest.raises(openai.BadRequestError) as wrong_route:
        claude.client().chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Hi"}])
    assert "speaks the anthropic format" in str(wrong_route.value)


def test_a_bare_model_goes_to_the_only_anthropic_provider(claude: Gateway) -> None:
    message = claude.anthropic().messages.create(
        model="claude-bare", max_tokens=16, messages=[{"role": "user", "content": "Hello over there"}]
    )
    assert message.content[0].text == "Hello over there"
    assert claude.upstream.last["body"]["model"] == "claude-bare"


def test_count_tokens_is_passed_through(claude: Gateway) -> None:
    counted = claude.anthropic().messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": "one two three"}]
    )
    assert counted.input_tokens > 0
    sent = claude.upstream.last
    assert sent["path"] == "/v1/messages/count_tokens"
    assert sent["body"] == {
        "model": "claude-test",
        "messages": [{"role": "user", "content": "one two three"}],
    }
    assert sent["headers"]["x-api-key"] == "sk-ant-provider-key"
