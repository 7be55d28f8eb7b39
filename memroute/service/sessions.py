"""Dashboard login sessions: opened with the admin token, held in an HttpOnly cookie.

The cookie carries a random secret; the database keeps its SHA-256, an expiry and a
fingerprint of the admin token, so a stolen database file opens no session and a
changed admin token ends them all. Sessions live in SQLite: they survive a restart
and every process sees a logout.

A login link is the console's way in (`memroute dashboard-link`): a one-time code,
valid 5 minutes, written into the same table by whoever can open the database; the
server exchanges it for a session without asking for the admin token.

Signing in must work when the database is full (an admin signs in to free space): a
session row is first written with the room the store keeps aside for that, and if even
that fails the session is held in this process's memory (at most `MEMORY_SESSIONS`;
it ends with the process and other processes do not see it).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from datetime import timedelta

from memroute.clock import Clock, to_iso
from memroute.errors import StorageFull
from memroute.service.keys import hash_secret
from memroute.store import Store

SESSION_TTL = timedelta(hours=12)
LOGIN_LINK_TTL = timedelta(minutes=5)
# Login links are rows of the sessions table under this fingerprint instead of the admin
# token's: no cookie check can ever match them, and they do not depend on the token.
_LOGIN_LINK_FINGERPRINT = "login-link"
MEMORY_SESSIONS = 64


def token_fingerprint(admin_token: str) -> str:
    return hashlib.sha256(b"memroute-session:" + admin_token.encode("utf-8")).hexdigest()[:32]


class SessionBook:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        # Sessions opened while the database was full: id hash -> (fingerprint, expires at).
        self._in_memory: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def open(self, admin_token: str, ttl: timedelta = SESSION_TTL) -> tuple[str, str]:
        """A new session for a caller who proved the admin token: (secret, expires at)."""
        now = self._clock()
        secret = secrets.token_urlsafe(32)
        expires, id_hash, fingerprint = to_iso(now + ttl), hash_secret(secret), token_fingerprint(admin_token)
        try:
            self._store.reserve.freeing(
                lambda: self._store.sessions.create(id_hash, fingerprint, now=to_iso(now), expires_at=expires)
            )
        except StorageFull:
            self._hold(id_hash, fingerprint, expires, now=to_iso(now))
        return secret, expires

    def _hold(self, id_hash: str, fingerprint: str, expires: str, *, now: str) -> None:
        with self._lock:
            for old in [h for h, (_, ends) in self._in_memory.items() if ends <= now]:
                del self._in_memory[old]
            while len(self._in_memory) >= MEMORY_SESSIONS:
                del self._in_memory[next(iter(self._in_memory))]  # the oldest
            self._in_memory[id_hash] = (fingerprint, expires)

    def expires_at(self, secret: str, admin_token: str) -> str | None:
        """When the session of `secret` ends; None when it is not a live session."""
        if not secret or len(secret) > 200:
            return None
        id_hash, fingerprint, now = hash_secret(secret), token_fingerprint(admin_token), to_iso(self._clock())
        with self._lock:
            held = self._in_memory.get(id_hash)
        if held is not None:
            return held[1] if held[0] == fingerprint and held[1] > now else None
        return self._store.sessions.expires_at(id_hash, fingerprint, now=now)

    def close(self, secret: str) -> None:
        if secret and len(secret) <= 200:
            id_hash = hash_secret(secret)
            with self._lock:
                if self._in_memory.pop(id_hash, None) is not None:
                    return
            self._store.reserve.freeing(lambda: self._store.sessions.delete(id_hash))

    def open_login_link(self, ttl: timedelta = LOGIN_LINK_TTL) -> tuple[str, str]:
        """A one-time login code: (code, expires at). Only its SHA-256 is stored."""
        now = self._clock()
        code = secrets.token_urlsafe(32)
        expires = to_iso(now + ttl)
        self._store.sessions.create(
            hash_secret(code), _LOGIN_LINK_FINGERPRINT, now=to_iso(now), expires_at=expires
        )
        return code, expires

    def redeem_login_link(self, code: str) -> bool:
        """Use up a live login code; True for exactly one caller, False for any other code."""
        if not code or len(code) > 200:
            return False
        now = to_iso(self._clock())
        return self._store.sessions.take(hash_secret(code), _LOGIN_LINK_FINGERPRINT, now=now)
