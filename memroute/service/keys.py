"""Client API keys: created with a secret shown once, stored as its SHA-256, revocable.

The key's id is the owner id of its memories. Lookup is by hash (a unique
index): an attacker cannot steer the hash of a guess, so the lookup leaks
nothing useful through timing.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import timedelta

from memroute.clock import Clock, parse_time, to_iso
from memroute.errors import InvalidInput, NotFound
from memroute.models.records import ApiKey
from memroute.store import Store

SECRET_PREFIX = "mr-"
MAX_NAME_CHARS = 100
#: The largest override of a key's limits (upstream calls at once, requests a minute).
MAX_CONCURRENT_OVERRIDE = 10_000
MAX_RPM_OVERRIDE = 1_000_000
# last_used_at is written at most this often per key, so authentication rarely writes.
TOUCH_INTERVAL = timedelta(seconds=60)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class KeyRing:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def create(self, name: str) -> tuple[ApiKey, str]:
        """A new key and its secret. The secret is not stored and cannot be shown again."""
        if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_NAME_CHARS:
            raise InvalidInput(f"must be 1 to {MAX_NAME_CHARS} characters", "name")
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        key = self._store.keys.create(
            str(uuid.uuid4()), name.strip(), hash_secret(secret), secret[:8], now=to_iso(self._clock())
        )
        return key, secret

    def list(self) -> list[ApiKey]:
        return self._store.keys.list()

    def get(self, key_id: str) -> ApiKey:
        key = self._store.keys.get(key_id)
        if key is None:
            raise NotFound(f"api key {key_id} not found")
        return key

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key (idempotent); its memories stay."""
        self.get(key_id)
        self._store.keys.revoke(key_id, now=to_iso(self._clock()))
        return self.get(key_id)

    def set_limits(
        self,
        key_id: str,
        *,
        max_concurrent: int | None,
        requests_per_minute: int | None,
        requires_user_id: bool | None = None,
    ) -> ApiKey:
        """Override the gateway's limits for one key; None gives it the server's default
        again. `requests_per_minute=0` lifts its per-minute limit. `requires_user_id`
        (None: unchanged): a request that names no end user gets no memory. Takes effect
        with the key's next request."""
        _check_limit(max_concurrent, 1, MAX_CONCURRENT_OVERRIDE, "maxConcurrent")
        _check_limit(requests_per_minute, 0, MAX_RPM_OVERRIDE, "requestsPerMinute")
        if requires_user_id is not None and not isinstance(requires_user_id, bool):
            raise InvalidInput("must be true or false", "requiresUserId")
        old = self.get(key_id)
        self._store.keys.set_limits(
            key_id,
            max_concurrent=max_concurrent,
            requests_per_minute=requests_per_minute,
            requires_user_id=old.requires_user_id if requires_user_id is None else requires_user_id,
        )
        return self.get(key_id)

    def authenticate(self, secret: str | None) -> ApiKey | None:
        """The active key with this secret, or None (unknown, revoked or empty). Its last use
        is written when the stored one is a minute old or more."""
        key = self.find(secret)
        if key is not None and self.use_is_due(key):
            self._store.keys.touch(key.id, now=to_iso(self._clock()))
        return key

    def find(self, secret: str | None) -> ApiKey | None:
        """As `authenticate`, but only reading: the key's last use is not written."""
        if not secret:
            return None
        key = self._store.keys.find_by_hash(hash_secret(secret))
        return key if key is not None and key.active else None

    def use_is_due(self, key: ApiKey) -> bool:
        """Whether `authenticate` would write `key`'s last use now."""
        return key.last_used_at is None or self._clock() - parse_time(key.last_used_at) >= TOUCH_INTERVAL


def _check_limit(value: int | None, low: int, high: int, field: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(f"must be null (the server's default) or an integer from {low} to {high}", field)
