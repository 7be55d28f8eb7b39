"""OpenAI Responses (`POST /v1/responses`).

The memory block goes in `instructions` (after the client's own): a response's
instructions are not carried into the next one of a `previous_response_id` chain, so
the block never piles up along a chain. When `instructions` is not a string, the block
is a leading `developer` item of `input`. The query and the kept turn are the latest
user input item's text; the reply is the answer's `output_text` parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memroute.errors import InvalidInput
from memroute.gateway.formats.chat import check_model, openai_end_user, text_of
from memroute.memory.injection import last_user_text
from memroute.memory.turns import said_in
from memroute.upstream.route import Route

_OUTPUT_TEXT = ("output_text",)


class Responses:
    name = "responses"
    provider_format = "openai"
    upstream_path = "/responses"
    done_event = b"event: response.completed"
    passed_headers: tuple[str, ...] = ()

    def check(self, body: Mapping[str, Any], max_messages: int) -> None:
        check_model(body)
        items = body.get("input")
        if items is not None and not isinstance(items, str | list):
            raise InvalidInput(
                'must be a string or a list of input items, e.g. [{"role": "user", ...}]', "input"
            )
        if isinstance(items, list) and len(items) > max_messages:
            raise InvalidInput(
                f"holds {len(items)} items; a request may hold at most {max_messages}"
                " (MEMROUTE_MAX_CHAT_MESSAGES)",
                "input",
            )

    def end_user(self, body: Mapping[str, Any]) -> object:
        return openai_end_user(body)

    def user_turn(self, body: Mapping[str, Any]) -> tuple[str, str]:
        return last_user_text({"input": body.get("input")}), ""

    def said(self, body: Mapping[str, Any]) -> str:
        return said_in(body, "input")

    def takes_memory(self, body: Mapping[str, Any]) -> bool:
        items = body.get("input")
        return bool(items.strip()) if isinstance(items, str) else isinstance(items, list) and bool(items)

    def inject(self, body: Mapping[str, Any], block: str, route: Route) -> dict[str, Any]:
        if not block:
            return dict(body)
        instructions = body.get("instructions")
        if instructions is None or isinstance(instructions, str):
            joined = f"{instructions}\n\n{block}" if instructions else block
            return {**body, "instructions": joined}
        items = body.get("input")
        given = [{"role": "user", "content": items}] if isinstance(items, str) else list(items or [])
        return {**body, "input": [{"role": "developer", "content": block}, *given]}

    def reply_text(self, answer: Any) -> str:
        """The text of the answer's `output` messages (`output_text` parts)."""
        output = answer.get("output") if isinstance(answer, dict) else None
        if not isinstance(output, list):
            return ""
        texts = [
            text_of(item.get("content"), _OUTPUT_TEXT)
            for item in output
            if isinstance(item, dict) and item.get("type", "message") == "message"
        ]
        return "\n".join(t for t in texts if t)

    def stream_text(self, event: Any) -> str:
        """`delta` of a `response.output_text.delta` event."""
        if isinstance(event, dict) and event.get("type") == "response.output_text.delta":
            delta = event.get("delta")
            return delta if isinstance(delta, str) else ""
        return ""
