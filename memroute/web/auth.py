"""Management auth: one admin token of at least 32 characters, from MEMROUTE_ADMIN_TOKEN
or generated on first start into `<data dir>/admin_token` (mode 0600). On PostgreSQL
(several replicas, one memory) it must come from the environment, the same on every
replica: a file would be one replica's own. Compared in constant time; every wrong one
is counted by the app's `AdminTokenThrottle`."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from fastapi import Request

from memroute.config import Config
from memroute.errors import InvalidInput, Unauthorized
from memroute.web.throttle import AdminTokenThrottle

TOKEN_FILE = "admin_token"
SESSION_COOKIE = "memroute_session"
# Requests authenticated by the session cookie that change something must carry this
# header: a cross-site form or image cannot send it, and CORS is off (defence in depth
# next to SameSite=Strict).
DASHBOARD_HEADER = "x-memroute-dashboard"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MIN_ADMIN_TOKEN_CHARS = 32
MAKE_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'


def admin_token_path(config: Config) -> Path:
    """Where the generated admin token is kept (unused when MEMROUTE_ADMIN_TOKEN is set)."""
    return Path(config.data_dir) / TOKEN_FILE


def load_or_create_admin_token(config: Config) -> tuple[str, bool]:
    """(token, created now). The file is created atomically with mode 0600. A token
    shorter than 32 characters is refused (InvalidInput saying how to make one)."""
    if config.admin_token:
        remedy = f"set a longer one ({MAKE_TOKEN}) or unset it: memroute then generates one on first start"
        return _long_enough(config.admin_token, "MEMROUTE_ADMIN_TOKEN", remedy), False
    if config.database_url is not None:
        raise InvalidInput(
            "with MEMROUTE_DATABASE_URL, set MEMROUTE_ADMIN_TOKEN to one token shared by every"
            f" replica ({MAKE_TOKEN})",
            "MEMROUTE_ADMIN_TOKEN",
        )
    path = admin_token_path(config)
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
        if token:
            remedy = f"write a longer one into the file ({MAKE_TOKEN}) or delete it: memroute then makes one"
            return _long_enough(token, str(path), remedy), False
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    os.chmod(path, 0o600)
    return token, True


def _long_enough(token: str, source: str, remedy: str) -> str:
    if len(token) < MIN_ADMIN_TOKEN_CHARS:
        raise InvalidInput(
            f"the admin token is {len(token)} characters long and needs at least "
            f"{MIN_ADMIN_TOKEN_CHARS}: {remedy}",
            source,
        )
    return token


def client_address(request: Request) -> str:
    """The peer's address as the server sees it ("?" when unknown)."""
    return request.client.host if request.client else "?"


def admin_throttle(request: Request) -> AdminTokenThrottle:
    throttle: AdminTokenThrottle = request.app.state.admin_throttle
    return throttle


def check_admin_token(request: Request, given: str) -> bool:
    """Whether `given` is the admin token, through the throttle: 429 while this address
    or the server is over its limit of wrong tokens; a wrong token is counted."""
    return admin_throttle(request).verify(client_address(request), given, request.app.state.admin_token)


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


def client_key(request: Request) -> str | None:
    """The memroute client key of a gateway request: `Authorization: Bearer`, else
    `x-api-key` (what Anthropic's clients send)."""
    return bearer_token(request) or request.headers.get("x-api-key", "").strip() or None


def session_secret(request: Request) -> str | None:
    return request.cookies.get(SESSION_COOKIE) or None


def has_session(request: Request) -> bool:
    """Whether the request carries a live dashboard session cookie."""
    secret = session_secret(request)
    if secret is None:
        return False
    memory = request.app.state.memory
    return memory.sessions.expires_at(secret, request.app.state.admin_token) is not None


def same_token(given: str, expected: str) -> bool:
    """Whether two tokens are equal, compared in constant time."""
    return hmac.compare_digest(given.encode(), expected.encode())


def require_admin(request: Request) -> None:
    """FastAPI dependency for management routes: the Bearer admin token (through the
    throttle), or a dashboard session cookie (plus the dashboard header on writes)."""
    given = bearer_token(request)
    if given is not None:
        if check_admin_token(request, given):
            return
        raise Unauthorized("wrong admin token (Authorization: Bearer <admin token>)")
    if has_session(request):
        if request.method in SAFE_METHODS or request.headers.get(DASHBOARD_HEADER) == "1":
            return
        raise Unauthorized(f"a dashboard session must send the header {DASHBOARD_HEADER}: 1 on writes")
    raise Unauthorized("missing admin token (Authorization: Bearer <admin token>) or dashboard session")
