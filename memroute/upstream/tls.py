"""The TLS settings every HTTP client to providers shares: the system's rules as httpx
reads them (SSL_CERT_FILE, SSL_CERT_DIR, else certifi's bundle), built once per process.
Building them loads the whole CA bundle (~20 ms of CPU), which httpx would otherwise do
again for each client it makes. Every handshake offers HTTP/1.1 (ALPN): a provider that
would rather speak HTTP/2 agrees to the one protocol memroute's clients speak."""

from __future__ import annotations

import functools
import ssl


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The verifying TLS context, made on first use (a process that never calls a provider
    over TLS never loads httpx) and shared from then on."""
    import httpx

    context = httpx.create_ssl_context()
    context.set_alpn_protocols(["http/1.1"])
    return context
