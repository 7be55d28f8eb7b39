"""Anthropic Messages (`POST /v1/messages`).

The memory block goes in `system`, after the client's own system prompt (a string, or a
text block after its blocks), so a system prompt the client marked with `cache_control`
stays the same cached prefix. When the client marks `messages` for caching, a change to
`system` would break that prefix: the block is then a text block at the end of the last
user turn, after every breakpoint. The query and the kept turn are the last user turn's
text blocks; the reply is the answer's text blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memroute.errors import InvalidInput
from memroute.gateway.formats.chat import check_messages, check_model, text_of
from memroute.memory.injection import has_cache_control
from memroute.memory.turns import last_user_turn, said_in
from memroute.upstream.route import Route


class Messages:
    name = "messages"
    provider_format = "anthropic"
    upstream_path = "/messages"
    done_event = b"event: message_stop"
    passed_headers: tuple[str, ...] = ("anthropic-version", "anthropic-beta")

    def check(self, body: Mapping[str, Any], max_messages: int) -> None:
        check_model(body)
        check_messages(body, "messages", max_messages, '{"role": "user", "content": "..."}')
        system = body.get("system")
        if system is not None and not isinstance(system, str | list):
            raise InvalidInput(
                'must be a string or a list of text blocks, e.g. [{"type": "text", ...}]', "system"
            )

    def end_user(self, body: Mapping[str, Any]) -> object:
        """`metadata.user_id`."""
        metadata = body.get("metadata")
        return metadata.get("user_id") if isinstance(metadata, Mapping) else None

    def user_turn(self, body: Mapping[str, Any]) -> tuple[str, str]:
        return last_user_turn(body)

    def said(self, body: Mapping[str, Any]) -> str:
        return said_in(body)

    def takes_memory(self, body: Mapping[str, Any]) -> bool:
        messages = body.get("messages")
        return isinstance(messages, list) and bool(messages)

    def inject(self, body: Mapping[str, Any], block: str, route: Route) -> dict[str, Any]:
        if not block:
            return dict(body)
        if has_cache_control({"messages": body.get("messages")}):
            messages = list(body["messages"])
            for i in range(len(messages) - 1, -1, -1):
                turn = messages[i]
                if isinstance(turn, Mapping) and turn.get("role") == "user":
                    content = turn.get("content")
                    blocks = (
                        [{"type": "text", "text": content}]
                        if isinstance(content, str)
                        else list(content or [])
                    )
                    messages[i] = {**turn, "content": [*blocks, {"type": "text", "text": block}]}
                    return {**body, "messages": messages}
        system = body.get("system")
        if isinstance(system, list):
            return {**body, "system": [*system, {"type": "text", "text": block}]}
        return {**body, "system": f"{system}\n\n{block}" if system else block}

    def reply_text(self, answer: Any) -> str:
        """The answer's `text` content blocks."""
        return text_of(answer.get("content")) if isinstance(answer, dict) else ""

    def stream_text(self, event: Any) -> str:
        """`delta.text` of a `content_block_delta` event with a `text_delta`."""
        if not isinstance(event, dict) or event.get("type") != "content_block_delta":
            return ""
        delta = event.get("delta")
        if (
            isinstance(delta, dict)
            and delta.get("type") == "text_delta"
            and isinstance(delta.get("text"), str)
        ):
            return str(delta["text"])
        return ""
