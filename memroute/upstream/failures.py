"""How a call to a provider can fail once it was started, each way with a short, stable
name (what error messages and logs show) and whether the provider was reached at all."""

from __future__ import annotations


class CallFailed(Exception):
    """A call to a provider failed. `name` says how; `reached` is False when no connection
    to the provider was ever made (it is unreachable), True when it broke off its answer."""

    name = "CallFailed"
    reached = True

    def __init__(self, detail: str = "") -> None:
        super().__init__(f"{self.name}: {detail}" if detail else self.name)


class ConnectFailed(CallFailed):
    """No connection to the provider could be opened."""

    name = "ConnectError"
    reached = False


class TLSFailed(ConnectFailed):
    """The provider's TLS handshake failed (e.g. its certificate is not trusted)."""

    name = "TLSError"


class ProxyFailed(ConnectFailed):
    """The proxy the environment names could not be reached, or refused the tunnel."""

    name = "ProxyError"


class UnsupportedProtocol(ConnectFailed):
    """The base URL's scheme is neither http nor https."""

    name = "UnsupportedProtocol"


class InvalidURL(CallFailed):
    """The base URL cannot be called (no host, a bad port)."""

    name = "InvalidURL"
    reached = False


class InvalidHeader(CallFailed):
    """A header to send holds a line break or a NUL: nothing was sent."""

    name = "InvalidHeader"
    reached = False


class ServerDisconnected(CallFailed):
    """The provider closed the connection before any of its answer arrived."""

    name = "ServerDisconnected"


class IncompleteAnswer(CallFailed):
    """The provider closed the connection in the middle of its answer."""

    name = "IncompleteAnswer"


class InvalidAnswer(CallFailed):
    """The provider's answer is not valid HTTP, or its body cannot be decoded."""

    name = "InvalidAnswer"


class ReadFailed(CallFailed):
    """The connection failed while the answer was awaited (e.g. reset by the provider)."""

    name = "ReadError"
