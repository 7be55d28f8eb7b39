"""How answers reach the client on the wire: an answer whose length is known (JSON, a
non-streamed chat) comes in one packet, its head and body written together; a streamed
answer's head comes at once, before the provider's first piece, and with it when the
provider sent both together; HEAD requests and
`Expect: 100-continue` are answered as before. Real servers and raw sockets on 127.0.0.1;
packets are counted by the kernel (`TCP_INFO`'s data segments received)."""

from __future__ import annotations

import json
import socket
import struct
from pathlib import Path

from gateways import Gateway, gateway_config
from memories import open_memory
from servers import LiveServer, RawUpstream, app_server

from memroute.web.app import create_app

_DATA_SEGS_IN = 152  # offset of tcpi_data_segs_in in Linux's struct tcp_info


def data_packets_received(sock: socket.socket) -> int:
    """The packets with data this socket has received (TCP_INFO, Linux ≥ 4.6)."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return int(struct.unpack_from("I", info, _DATA_SEGS_IN)[0])


def read_answer(sock: socket.socket) -> tuple[bytes, bytes]:
    """One answer with a Content-Length: its head and its body."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        assert chunk, received
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, received
        body += chunk
    return head, body


def test_an_answer_of_known_length_comes_in_one_packet(tmp_path: Path) -> None:
    with (
        app_server(tmp_path / "m.db") as server,
        socket.create_connection(("127.0.0.1", server.port)) as sock,
    ):
        for answered in range(1, 4):  # on one kept-alive connection
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            head, body = read_answer(sock)
            assert head.startswith(b"HTTP/1.1 200") and json.loads(body)["status"] == "ok"
            assert data_packets_received(sock) == answered


def test_a_chat_answer_comes_in_one_packet(gateway: Gateway) -> None:
    chat = json.dumps({"model": "echo-1", "messages": [{"role": "user", "content": "Hello there."}]}).encode()
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        + f"authorization: Bearer {gateway.secret}\r\ncontent-length: {len(chat)}\r\n\r\n".encode()
        + chat
    )
    port = int(gateway.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for answered in range(1, 3):
            sock.sendall(request)
            head, body = read_answer(sock)
            assert head.startswith(b"HTTP/1.1 200")
            assert json.loads(body)["choices"][0]["message"]["content"] == "Hello there."
            assert data_packets_received(sock) == answered


SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"


def _streamed_chat(tmp_path: Path) -> tuple[Path, bytes]:
    """A database with a client key, and a streamed chat's raw request made with the key."""
    db = tmp_path / "m.db"
    with open_memory(db) as side:
        _, secret = side.keys.create("k")
    chat = json.dumps({"model": "echo-1", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        + f"authorization: Bearer {secret}\r\ncontent-length: {len(chat)}\r\n\r\n{chat}".encode()
    )
    return db, request


def test_a_streamed_answer_s_head_comes_before_the_provider_s_first_piece(tmp_path: Path) -> None:
    db, request = _streamed_chat(tmp_path)
    # The provider sends its head, then the stream's first byte 1 s later, and hangs up.
    with (
        RawUpstream(SSE_HEAD, trickle=b"\n", every=1.0) as raw,
        LiveServer(create_app(gateway_config(db, raw.url))) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock,
    ):
        sock.sendall(request)
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200") and b"text/event-stream" in first
        assert first.endswith(b"\r\n\r\n")  # the head alone: nothing of the stream has come yet
        rest = b""
        while not rest.endswith(b"0\r\n\r\n"):
            chunk = sock.recv(65536)
            assert chunk, rest
            rest += chunk
        assert rest == b"1\r\n\n\r\n0\r\n\r\n"  # the byte, relayed, and the stream's end


def test_head_requests_and_expect_continue_are_answered(tmp_path: Path) -> None:
    with (
        app_server(tmp_path / "m.db") as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock,
    ):
        sock.sendall(b"HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        head = sock.recv(65536)
        assert head.startswith(b"HTTP/1.1 ") and head.endswith(b"\r\n\r\n")
        body = b'{"content": "x"}'
        sock.sendall(
            b"POST /api/memory HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            + f"content-length: {len(body)}\r\nexpect: 100-continue\r\n\r\n".encode()
        )
        assert sock.recv(65536) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        head, answer = read_answer(sock)
        assert head.startswith(b"HTTP/1.1 401") and b"error" in answer  # no admin token: refused whole


def test_a_streamed_answer_s_head_and_first_piece_come_in_one_packet_when_they_came_together(
    tmp_path: Path,
) -> None:
    db, request = _streamed_chat(tmp_path)
    first = b'data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}\n\n'
    # The provider's head and first event in one write; its next byte 1 s later.
    with (
        RawUpstream(SSE_HEAD + first, trickle=b"\n", every=1.0) as raw,
        LiveServer(create_app(gateway_config(db, raw.url))) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock,
    ):
        sock.sendall(request)
        received = b""
        while not received.endswith(first + b"\r\n"):
            chunk = sock.recv(65536)
            assert chunk, received
            received += chunk
        assert received.startswith(b"HTTP/1.1 200") and b"text/event-stream" in received
        assert data_packets_received(sock) == 1  # the head and the first event together
