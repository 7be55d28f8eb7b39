"""The wire formats the gateway speaks, each with what memory needs to know of it.

A format says where its requests go upstream and which providers take them, how a
request is checked, what the user said last (the recall query and the kept turn), what
the request already holds, where the memory block goes, and how the reply's text is read
from an answer or from its stream. The chat pipeline (`memroute/gateway/chat.py`) is the
same for all of them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from memroute.upstream.route import Route


class WireFormat(Protocol):
    """One client-facing API: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages."""

    #: A short name for logs and metrics.
    name: str
    #: The wire format of the providers it forwards to (`openai` or `anthropic`).
    provider_format: str
    #: Appended to the provider's base URL.
    upstream_path: str
    #: The stream event the reply is queued before (so it is learned before the client
    #: sees the end); a stream without it has its reply queued when it ends.
    done_event: bytes
    #: Client headers passed on to the provider.
    passed_headers: tuple[str, ...]

    def check(self, body: Mapping[str, Any], max_messages: int) -> None:
        """Raise InvalidInput when `body` is not a request of this format."""

    def end_user(self, body: Mapping[str, Any]) -> object:
        """The end user the body names in the format's own field (any value; checked by
        the caller), or None."""

    def user_turn(self, body: Mapping[str, Any]) -> tuple[str, str]:
        """The text of the last user turn that has text, and its speaker ("" if unnamed)."""

    def said(self, body: Mapping[str, Any]) -> str:
        """Every turn's text in `body`, normalised and joined (what need not be injected)."""

    def takes_memory(self, body: Mapping[str, Any]) -> bool:
        """Whether `body` holds a conversation memory can be added to."""

    def inject(self, body: Mapping[str, Any], block: str, route: Route) -> dict[str, Any]:
        """A copy of `body` with the memory `block` where the format puts context; `body`
        and everything in it stay untouched."""

    def reply_text(self, answer: Any) -> str:
        """The assistant's text of a whole (non-streamed) answer, parsed."""

    def stream_text(self, event: Any) -> str:
        """The text one parsed stream event adds to the reply ("" for any other event)."""
