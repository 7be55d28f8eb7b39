"""A provider that costs next to nothing, for load runs: a bare asyncio HTTP/1.1 server
(keep-alive, `Content-Length` bodies) that answers every `POST …/chat/completions` with
the same 48-word reply, as one JSON completion or, when the body asks for `"stream":
true`, as 48 SSE chunks and `[DONE]`, each written on its own, a moment after the last (a
provider's tokens arrive one by one: the gateway relays each); for the model `echo-burst`,
back to back (the gateway-efficiency issue's upstream: no think time at all). It reads no
JSON, so the gateway is what a load run measures. Run it in its own process:
`python -m bench.load_upstream PORT`.
`BENCH_THINK_MS` makes it answer a non-streamed request that much later (a provider's think
time; 0, at once, by default).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

MODEL = "echo-1"  # the model the load asks for and this upstream answers as
BURST_MODEL = "echo-burst"  # streamed with the chunks back to back
_ASKS_BURST = b'"model":"' + BURST_MODEL.encode() + b'"'
REPLY_WORDS = ("memory " * 48).split()  # 48 words: the reply of the measurements
# Asleep this long (1–2 ms in practice) between two chunks; BENCH_CHUNK_GAP_MS=0 writes them
# back to back (what a stream costs without the wake-ups between its tokens).
CHUNK_GAP_S = float(os.environ.get("BENCH_CHUNK_GAP_MS", "1")) / 1000
THINK_S = float(os.environ.get("BENCH_THINK_MS", "0")) / 1000
_COMPLETION = json.dumps(
    {
        "id": "chatcmpl-load",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": " ".join(REPLY_WORDS)},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 48, "total_tokens": 48},
    }
).encode()


def _chunk(word: str) -> bytes:
    event = {
        "id": "chatcmpl-load",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}],
    }
    data = b"data: " + json.dumps(event).encode() + b"\n\n"
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


_ONCE = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
    + str(len(_COMPLETION)).encode()
    + b"\r\n\r\n"
    + _COMPLETION
)
_STREAM_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
_STREAM_CHUNKS = [_chunk(word if i == 0 else " " + word) for i, word in enumerate(REPLY_WORDS)]
_DONE = b"data: [DONE]\n\n"
_STREAM_END = f"{len(_DONE):x}\r\n".encode() + _DONE + b"\r\n0\r\n\r\n"
_MODELS = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode()
_MODELS_ANSWER = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
    + str(len(_MODELS)).encode()
    + b"\r\n\r\n"
    + _MODELS
)


class _Answer(asyncio.Protocol):
    def __init__(self) -> None:
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end].lower()
            length = 0
            at = head.find(b"content-length:")
            if at >= 0:
                length = int(head[at + 15 :].split(b"\r\n", 1)[0])
            if len(self.buffer) < head_end + 4 + length:
                return
            body = self.buffer[head_end + 4 : head_end + 4 + length]
            self.buffer = self.buffer[head_end + 4 + length :]
            self._answer(head, body)

    def _answer(self, head: bytes, body: bytes) -> None:
        assert self.transport is not None
        if head.startswith(b"get") and b"/models" in head.split(b"\r\n", 1)[0]:
            self.transport.write(_MODELS_ANSWER)
        elif b'"stream":true' in (compact := body.replace(b" ", b"")):
            gap = 0.0 if _ASKS_BURST in compact else CHUNK_GAP_S
            asyncio.get_running_loop().create_task(self._stream(gap))
        elif THINK_S:
            asyncio.get_running_loop().call_later(THINK_S, self._answer_once)
        else:
            self.transport.write(_ONCE)

    def _answer_once(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(_ONCE)

    async def _stream(self, gap_s: float) -> None:
        """The 48 chunks, `gap_s` apart (0: back to back, the loop's turn between two)."""
        assert self.transport is not None
        self.transport.write(_STREAM_HEAD)
        for chunk in _STREAM_CHUNKS:
            await asyncio.sleep(gap_s)
            if self.transport.is_closing():
                return
            self.transport.write(chunk)
        self.transport.write(_STREAM_END)


async def serve(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(_Answer, "127.0.0.1", port, backlog=2048)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
