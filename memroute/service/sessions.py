"""Dashboard login sessions: opened with the admin token, held in an HttpOnly cookie.

The cookie carries a random secret; the database keeps its SHA-256, an expiry and a
fingerprint of the admin token, so a stolen database file opens no session and a
changed admin token ends them all. Sessions live in SQLite: they survive a restart
and every process sees a logout.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from memroute.clock import Clock, to_iso
from memroute.service.keys import hash_secret
from memroute.store import SqliteStore

SESSION_TTL = timedelta(hours=12)


def token_fingerprint(admin_token: str) -> str:
    return hashlib.sha256(b"memroute-session:" + admin_token.encode("utf-8")).hexdigest()[:32]


class SessionBook:
    def __init__(self, store: SqliteStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def open(self, admin_token: str, ttl: timedelta = SESSION_TTL) -> tuple[str, str]:
        """A new session for a caller who proved the admin token: (secret, expires at)."""
        now = self._clock()
        secret = secrets.token_urlsafe(32)
        expires = to_iso(now + ttl)
        self._store.sessions.create(
            hash_secret(secret), token_fingerprint(admin_token), now=to_iso(now), expires_at=expires
        )
        return secret, expires

    def expires_at(self, secret: str, admin_token: str) -> str | None:
        """When the session of `secret` ends; None when it is not a live session."""
        if not secret or len(secret) > 200:
            return None
        return self._store.sessions.expires_at(
            hash_secret(secret), token_fingerprint(admin_token), now=to_iso(self._clock())
        )

    def close(self, secret: str) -> None:
        if secret and len(secret) <= 200:
            self._store.sessions.delete(hash_secret(secret))
