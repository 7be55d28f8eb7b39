"""Who owns a memory: a client key, or one end user of a client key.

A memory's owner (the `api_key_id` column, and every per-owner index: FTS statistics,
the key index, vectors, Qdrant points, the memory cap) is the key's id, or for an end
user the key's id and the user's id joined by `USER_SEPARATOR`, a control character no
validated id may hold. So an end user's memories are a separate owner with the same
isolation as a key's, and a key's own memories are never its users'.
"""

from __future__ import annotations

USER_SEPARATOR = "\x1f"


def owner_of(api_key_id: str, user_id: str = "") -> str:
    """The owner of `user_id`'s memories under `api_key_id` (the key itself without a user)."""
    return f"{api_key_id}{USER_SEPARATOR}{user_id}" if user_id else api_key_id


def split_owner(owner: str) -> tuple[str, str]:
    """(key id, end-user id) of an owner; the user is "" for a key's own memories."""
    key, _, user = owner.partition(USER_SEPARATOR)
    return key, user


def is_user_owner(owner: str) -> bool:
    return USER_SEPARATOR in owner


def users_range(api_key_id: str) -> tuple[str, str]:
    """Bounds (low inclusive, high exclusive) of the owners of `api_key_id`'s end users in
    text order: every `key + USER_SEPARATOR + user`, nothing else."""
    return api_key_id + USER_SEPARATOR, api_key_id + chr(ord(USER_SEPARATOR) + 1)


def owner_for_logs(owner: str) -> str:
    """How logs name an owner: its key's id, and that it is one of the key's end users (never
    which one: an end user's id may be a person's e-mail address)."""
    key, user = split_owner(owner)
    return f"{key}+user" if user else key
