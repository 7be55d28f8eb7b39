"""Management auth: one admin token, from MEMROUTE_ADMIN_TOKEN or generated on first
start into `<data dir>/admin_token` (mode 0600). Compared in constant time."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from fastapi import Request

from memroute.config import Config
from memroute.errors import Unauthorized

TOKEN_FILE = "admin_token"
SESSION_COOKIE = "memroute_session"
# Requests authenticated by the session cookie that change something must carry this
# header: a cross-site form or image cannot send it, and CORS is off (defence in depth
# next to SameSite=Strict).
DASHBOARD_HEADER = "x-memroute-dashboard"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def admin_token_path(config: Config) -> Path:
    """Where the generated admin token is kept (unused when MEMROUTE_ADMIN_TOKEN is set)."""
    return Path(config.data_dir) / TOKEN_FILE


def load_or_create_admin_token(config: Config) -> tuple[str, bool]:
    """(token, created now). The file is created atomically with mode 0600."""
    if config.admin_token:
        return config.admin_token, False
    path = admin_token_path(config)
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token, False
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    os.chmod(path, 0o600)
    return token, True


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return None


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


def admin_token_matches(request: Request, given: str) -> bool:
    return same_token(given, request.app.state.admin_token)


def require_admin(request: Request) -> None:
    """FastAPI dependency for management routes: the Bearer admin token, or a dashboard
    session cookie (plus the dashboard header on writes)."""
    given = bearer_token(request)
    if given is not None:
        if admin_token_matches(request, given):
            return
        raise Unauthorized("wrong admin token (Authorization: Bearer <admin token>)")
    if has_session(request):
        if request.method in SAFE_METHODS or request.headers.get(DASHBOARD_HEADER) == "1":
            return
        raise Unauthorized(f"a dashboard session must send the header {DASHBOARD_HEADER}: 1 on writes")
    raise Unauthorized("missing admin token (Authorization: Bearer <admin token>) or dashboard session")
