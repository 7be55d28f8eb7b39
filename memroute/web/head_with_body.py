"""A response's head sent with its body: uvicorn writes a response's status line and headers
as soon as the app starts the response, and its body in a second write. Each write to a
socket is a system call that, on a loopback or a busy VM, also wakes the client; sent
together they cost one. `HeadWithBody` stands for the connection's transport in one
request's cycle: a head that announces its body's length (the whole body is at hand, and
Starlette sends it right after) is held and written with the body's first piece. A
stream's head is held only until the event loop's next turn: written with the first
piece when that piece is already at hand (a provider's first event usually comes with its
head), else alone, so a stream's client gets its head before a late first piece.
`100 Continue` goes out at once."""

from __future__ import annotations

import asyncio
from typing import Any

_INFORMATIONAL = b"HTTP/1.1 1"  # `100 Continue`, written before the response's own head
_LENGTH = b"\r\ncontent-length:"  # uvicorn writes the header names in lower case
_JOINED_UP_TO = 64 * 1024  # a longer piece is written after the head, not copied behind it


class HeadWithBody:
    """The transport as one request-response cycle sees it (see the module's docstring);
    every other attribute is the real transport's."""

    __slots__ = ("_head", "_started", "_transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self._head: bytes | None = None
        self._started = False  # the response's head was written (or is held)

    def write(self, data: bytes) -> None:
        head = self._head
        if head is not None:
            self._head = None
            if len(data) <= _JOINED_UP_TO:
                self._transport.write(head + data)
                return
            self._transport.write(head)
        elif not self._started and not data.startswith(_INFORMATIONAL):
            self._started = True
            self._head = data
            if _LENGTH not in data:  # a stream's head: written by the loop's next turn at the latest
                asyncio.get_running_loop().call_soon(self._flush)
            return
        self._transport.write(data)

    def _flush(self) -> None:
        """Write a held head alone (its body's first piece was not at hand)."""
        head, self._head = self._head, None
        if head is not None and not self._transport.is_closing():
            self._transport.write(head)

    def close(self) -> None:
        """Write a held head, then close the connection."""
        head, self._head = self._head, None
        if head is not None and not self._transport.is_closing():
            self._transport.write(head)
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
