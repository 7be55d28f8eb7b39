"""Providers and proxies at the socket level, for what the gateway's own HTTP client must
get right on the wire: kept-alive connections, answer framings, compression, TLS, and
CONNECT tunnels. Each connection is served in a thread of its own."""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
from typing import Any

from servers import ThreadPerConnection, completion, read_request


def completion_json(text: str) -> bytes:
    """A chat completion's JSON that says `text` (the scripted upstream's completion)."""
    return json.dumps(completion({"model": "m"}, text)).encode()


def answer(body: bytes, *, framing: str = "length", headers: dict[str, str] | None = None) -> bytes:
    """An HTTP/1.1 200 answer carrying `body`: framed by content-length (`length`), chunked
    in pieces of 100 bytes (`chunked`), or ended by closing the connection (`close`)."""
    given = {"content-type": "application/json", **(headers or {})}
    lines = ["HTTP/1.1 200 OK", *(f"{k}: {v}" for k, v in given.items())]
    if framing == "length":
        lines.append(f"content-length: {len(body)}")
    elif framing == "chunked":
        lines.append("transfer-encoding: chunked")
        pieces = [body[i : i + 100] for i in range(0, len(body), 100)]
        body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"
    else:
        lines.append("connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


class WireProvider(ThreadPerConnection):
    """A provider that writes, for each request it reads, the next of `answers` (the last
    one again once all were sent), and keeps the connection for the next request unless
    the answer said `connection: close` or `drop_idle_after` seconds pass without one.
    With `tls`, it speaks TLS. It records each request's head and body, how many
    connections were opened, and how many the client closed while they were idle."""

    def __init__(
        self, answers: list[bytes], *, tls: ssl.SSLContext | None = None, drop_idle_after: float | None = None
    ) -> None:
        super().__init__()
        self.answers = answers
        self.tls = tls
        self.drop_idle_after = drop_idle_after
        self.requests: list[tuple[bytes, bytes]] = []
        self.connections = 0
        self.closed_by_client = 0
        self.handshake_failures = 0
        self.protocols: list[str | None] = []  # the protocol each TLS connection agreed (ALPN)
        self._lock = threading.Lock()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"

    def header_of(self, request: int, name: str) -> str | None:
        """A header of the `request`-th request (0 first), by lower-case name."""
        for line in self.requests[request][0].split(b"\r\n")[1:]:
            key, _, value = line.decode().partition(":")
            if key.strip().lower() == name:
                return value.strip()
        return None

    def serve_connection(self, raw: socket.socket) -> None:
        with self._lock:
            self.connections += 1
        conn: Any = raw
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(raw, server_side=True)
                self.protocols.append(conn.selected_alpn_protocol())
        except (OSError, ssl.SSLError):
            with self._lock:
                self.handshake_failures += 1
            raw.close()
            return
        with conn:
            rest = b""
            while True:
                if self.drop_idle_after is not None and self.requests:
                    conn.settimeout(self.drop_idle_after)
                try:
                    request = read_request(conn, rest)
                except TimeoutError:
                    return  # idle too long: dropped without a word
                except OSError:
                    return
                if request is None:
                    with self._lock:
                        self.closed_by_client += 1
                    return
                head, body, rest = request
                conn.settimeout(None)
                with self._lock:
                    self.requests.append((head, body))
                    reply = self.answers[min(len(self.requests), len(self.answers)) - 1]
                conn.sendall(reply)
                if b"\r\nconnection: close\r\n" in reply.lower().split(b"\r\n\r\n")[0] + b"\r\n":
                    return


class ConnectProxy(ThreadPerConnection):
    """An HTTP proxy that only opens CONNECT tunnels; it records each CONNECT's head."""

    def __init__(self) -> None:
        super().__init__()
        self.heads: list[bytes] = []
        self.url = f"http://127.0.0.1:{self.port}"

    def serve_connection(self, conn: socket.socket) -> None:
        request = read_request(conn)
        if request is None:
            conn.close()
            return
        head = request[0]
        self.heads.append(head)
        method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ")
        if method != "CONNECT":
            conn.sendall(b"HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            conn.close()
            return
        host, _, port = target.rpartition(":")
        try:
            upstream = socket.create_connection((host, int(port)), timeout=5)
        except OSError:
            conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
            conn.close()
            return
        upstream.settimeout(None)
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        threading.Thread(target=_pipe, args=(upstream, conn), daemon=True).start()
        _pipe(conn, upstream)


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    """Copy `source` to `sink` until either closes, then close both."""
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
