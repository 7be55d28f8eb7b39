"""Reading the assistant's reply out of an SSE stream while it is relayed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memroute.gateway.body_json import loads_or_none


class ReplyAssembler:
    """Feed raw SSE bytes in arrival order; `text` is the reply assembled from what
    `text_of` reads in each event's JSON (`data:` lines).

    Only parses: the bytes themselves are relayed untouched by the caller."""

    def __init__(self, text_of: Callable[[Any], str], max_chars: int = 64 * 1024) -> None:
        self._text_of = text_of
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
        event = loads_or_none(payload)
        if event is None:  # a provider's garbage never breaks the relay
            return
        content = self._text_of(event)
        if content:
            self._parts.append(content)
            self._size += len(content)
            while self._size > self._max and len(self._parts) > 1:  # keep the tail, as extraction does
                self._size -= len(self._parts.pop(0))

    @property
    def text(self) -> str:
        self.feed(b"\n")
        return "".join(self._parts).strip()
