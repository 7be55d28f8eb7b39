"""Reading the assistant's reply out of an OpenAI SSE stream while it is relayed."""

from __future__ import annotations

import json

DONE_EVENT = b"data: [DONE]"


class ReplyAssembler:
    """Feed raw SSE bytes in arrival order; `text` is the reply assembled from the deltas.

    Only parses: the bytes themselves are relayed untouched by the caller."""

    def __init__(self, max_chars: int = 64 * 1024) -> None:
        self._buffer = b""
        self._parts: list[str] = []
        self._size = 0
        self._max = max_chars

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._line(line.strip())

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        payload = line[5:].strip()
        if not payload or payload == b"[DONE]":
            return
        try:
            event = json.loads(payload)
        except (ValueError, RecursionError):  # a provider's garbage never breaks the relay
            return
        choices = event.get("choices") if isinstance(event, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return
        delta = choices[0].get("delta")
        content = delta.get("content") if isinstance(delta, dict) else None
        if isinstance(content, str) and content:
            self._parts.append(content)
            self._size += len(content)
            while self._size > self._max and len(self._parts) > 1:  # keep the tail, as extraction does
                self._size -= len(self._parts.pop(0))

    @property
    def text(self) -> str:
        self.feed(b"\n")
        return "".join(self._parts).strip()


def reply_text(completion: object) -> str:
    """The assistant text of a non-streamed chat completion (`choices[0].message.content`)."""
    if not isinstance(completion, dict):
        return ""
    choices = completion.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        texts = [p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(t.strip() for t in texts if t.strip())
    return ""
