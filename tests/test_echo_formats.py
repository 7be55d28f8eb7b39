"""The built-in echo upstream answers the Responses and Messages routes in their own wire
formats, whole and streamed: the official `openai` responses client and the `anthropic`
SDK parse what it sends (it is the upstream of `memroute demo` and of bench/gateway.py)."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from servers import LiveServer

from memroute.gateway.echo import EchoUpstream

SAID = "I moved the billing service to Postgres last week."
REPLY = "You said: " + SAID


@pytest.fixture(scope="module")
def echo() -> Iterator[tuple[EchoUpstream, str]]:
    upstream = EchoUpstream()
    with LiveServer(upstream.app()) as server:
        yield upstream, server.url


def test_a_response_restates_the_last_user_input_whole_and_streamed(echo: tuple[EchoUpstream, str]) -> None:
    upstream, url = echo
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    answer = client.responses.create(model="echo-1", input=SAID)
    assert answer.output_text == REPLY and answer.status == "completed" and answer.model == "echo-1"
    assert upstream.last_request == {"model": "echo-1", "input": SAID}

    items = [
        {"role": "user", "content": "Forget it."},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": [{"type": "input_text", "text": SAID}]},
    ]
    events = list(client.responses.create(model="echo-1", input=items, stream=True))
    kinds = [e.type for e in events]
    assert kinds[:3] == ["response.created", "response.output_item.added", "response.content_part.added"]
    assert kinds[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) == len(REPLY.split(" ")) and "".join(deltas) == REPLY
    assert [e.sequence_number for e in events] == list(range(len(events)))
    completed = events[-1]
    assert completed.type == "response.completed" and completed.response.output_text == REPLY


def test_a_message_restates_the_last_user_turn_whole_and_streamed(echo: tuple[EchoUpstream, str]) -> None:
    upstream, url = echo
    import anthropic  # ~1.6 s of CPU to import: not in every worker that collects this file

    client = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
    turn = [{"role": "user", "content": SAID}]
    answer = client.messages.create(model="claude-echo", max_tokens=64, messages=turn)
    assert [b.type for b in answer.content] == ["text"] and answer.content[0].text == REPLY
    assert answer.stop_reason == "end_turn" and answer.model == "claude-echo"
    assert upstream.last_request is not None and upstream.last_request["messages"] == turn

    blocks = [{"role": "user", "content": [{"type": "text", "text": SAID}]}]
    with client.messages.stream(model="claude-echo", max_tokens=64, messages=blocks) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert "".join(pieces) == REPLY and len(pieces) == len(REPLY.split(" "))
    assert final.content[0].text == REPLY and final.stop_reason == "end_turn"

    raw = client.messages.create(model="claude-echo", max_tokens=64, messages=turn, stream=True)
    kinds = [event.type for event in raw]
    deltas = kinds.count("content_block_delta")
    assert kinds == [
        "message_start",
        "content_block_start",
        *["content_block_delta"] * deltas,
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert deltas == len(REPLY.split(" "))
