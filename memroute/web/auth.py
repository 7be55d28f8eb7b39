"""Management auth: one admin token, from MEMROUTE_ADMIN_TOKEN or generated on first
start into `<data dir>/admin_token` (mode 0600). Compared in constant time."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from fastapi import Request

from memroute.config import Config
from memroute.errors import MemrouteError

TOKEN_FILE = "admin_token"
COOKIE_NAME = "memroute_admin"


class Unauthorized(MemrouteError):
    kind = "authentication_error"


def load_or_create_admin_token(config: Config) -> tuple[str, bool]:
    """(token, created now). The file is created atomically with mode 0600."""
    if config.admin_token:
        return config.admin_token, False
    path = Path(config.data_dir) / TOKEN_FILE
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


def require_admin(request: Request) -> None:
    """FastAPI dependency for management routes: Bearer admin token or the dashboard cookie."""
    expected: str = request.app.state.admin_token
    given = bearer_token(request) or request.cookies.get(COOKIE_NAME)
    if not given or not hmac.compare_digest(given.encode(), expected.encode()):
        raise Unauthorized("missing or wrong admin token (Authorization: Bearer <admin token>)")
