"""The OpenAI Responses route end to end: memroute under uvicorn, a scripted upstream
that speaks the Responses API, and the official `openai` SDK's `responses` client."""

from __future__ import annotations

import time

import httpx
import openai
import pytest
from gateways import Gateway
from servers import TLS

from memroute.memory.injection import FRAMING, MEMORY_PREFIX


def block(*memories: str) -> str:
    return MEMORY_PREFIX + FRAMING + "\n" + "\n".join(memories)


def test_memory_goes_in_the_instructions_and_the_answer_comes_back(gateway: Gateway) -> None:
    stored = gateway.memory.add(gateway.key_id, "prefers answers in French")
    raw = gateway.client(**{"x-memroute-debug": "true"}).responses.with_raw_response.create(
        model="echo-1",
        instructions="You are terse.",
        input="How should you answer me?",
        previous_response_id="resp_earlier",
        extra_body={"x_unknown": {"kept": True}},
    )
    assert raw.parse().output_text == "How should you answer me?"  # the SDK parsed the answer
    sent = gateway.upstream.last
    assert sent["path"] == "/v1/responses"
    assert sent["body"]["instructions"] == "You are terse.\n\n" + block("prefers answers in French")
    assert sent["body"]["input"] == "How should you answer me?"
    assert sent["body"]["previous_response_id"] == "resp_earlier"  # untouched: the chain is the client's
    assert sent["body"]["x_unknown"] == {"kept": True}
    assert raw.headers["x-memroute-memory-ids"] == stored.id


def test_input_items_give_the_query_and_are_never_changed(gateway: Gateway) -> None:
    gateway.memory.add(gateway.key_id, "lives in Lisbon")
    gateway.memory.add(gateway.key_id, "My dog Rex is sick.")
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": "My dog Rex is sick."}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Sorry to hear that."}]},
        {"role": "user", "content": [{"type": "input_text", "text": "Where do I live?"}]},
    ]
    gateway.client().responses.create(model="echo-1", input=items)  # type: ignore[arg-type]
    sent = gateway.upstream.last["body"]
    assert sent["input"] == items
    assert sent["instructions"] == block("lives in Lisbon")  # what Rex's turn says is in the request


def test_streamed_responses_are_relayed_and_the_turn_and_reply_are_kept(gateway: Gateway) -> None:
    gateway.memory.update_settings(captureTurns="all")
    text = "Noted. Helix it is, and the tests stay in pytest."
    gateway.upstream.reply(text, chunk_delay=0.005)
    stream = gateway.client(**{"x-request-id": "turn-7"}).responses.create(
        model="echo-1", input="I switched from vim to Helix last month.", stream=True
    )
    events = list(stream)
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == text
    assert events[-1].type == "response.completed" and events[-1].response.output_text == text
    gateway.wait_for(lambda: {m.metadata.get("role") for m in gateway.memories()} >= {"user", "assistant"})
    by_role = {m.metadata["role"]: m for m in gateway.memories() if m.key.startswith("turn:")}
    assert by_role["user"].content == "I switched from vim to Helix last month."
    assert by_role["user"].metadata["requestId"] == "turn-7"
    assert by_role["assistant"].content == text
    assert gateway.memory.wait_for_extraction(10)
    facts = [m.content for m in gateway.memories() if not m.key.startswith("turn:")]
    assert any("Helix" in fact for fact in facts)


def test_instructions_that_are_not_text_get_a_leading_developer_item(gateway: Gateway) -> None:
    gateway.memory.add(gateway.key_id, "works at Acme")
    body = {
        "model": "echo-1",
        "instructions": [{"role": "system", "content": "Be brief."}],
        "input": "Where do I work?",
    }
    with httpx.Client(base_url=gateway.url, verify=TLS) as client:
        answer = client.post(
            "/v1/responses", headers={"authorization": f"Bearer {gateway.secret}"}, json=body
        )
    assert answer.status_code == 200
    sent = gateway.upstream.last["body"]
    assert sent["instructions"] == body["instructions"]
    assert sent["input"] == [
        {"role": "developer", "content": block("works at Acme")},
        {"role": "user", "content": "Where do I work?"},
    ]


def test_the_no_memory_header_reads_and_writes_nothing(gateway: Gateway) -> None:
    gateway.memory.add(gateway.key_id, "prefers tea")
    raw = gateway.client(**{"x-memroute-no-memory": "true"}).responses.with_raw_response.create(
        model="echo-1", input="I prefer coffee now."
    )
    assert raw.headers["x-memroute-memory-count"] == "0"
    assert "instructions" not in gateway.upstream.last["body"]
    time.sleep(0.3)
    assert [m.content for m in gateway.memories()] == ["prefers tea"]


def test_bad_requests_and_models_of_another_format_are_clear_400s(gateway: Gateway) -> None:
    with pytest.raises(openai.BadRequestError) as bad:
        gateway.client().responses.create(model="echo-1", input=42)  # type: ignore[arg-type]
    assert "input" in str(bad.value)
    gateway.add_anthropic_provider()
    with pytest.raises(openai.BadRequestError) as wrong:
        gateway.client().responses.create(model="claude/claude-test", input="Hi")
    assert "speaks the anthropic format" in str(wrong.value)
    assert isinstance(wrong.value.body, dict)
    assert (
        wrong.value.body["type"] == "invalid_request_error" and "param" in wrong.value.body
    )  # OpenAI's shape
