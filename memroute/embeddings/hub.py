"""Hugging Face Hub access that cannot hang a request.

huggingface_hub retries a failed connection for ~25 s before giving up, and DNS lookups
ignore socket timeouts. So before any download we probe the endpoint once, in a daemon
thread with a hard deadline (PROBE_TIMEOUT_S); an unreachable hub is remembered for
PROBE_MEMORY_S. We do not set HF_HUB_OFFLINE: that would change huggingface_hub for the
whole process.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

PROBE_TIMEOUT_S = 4.0
PROBE_MEMORY_S = 60.0

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")
_lock = threading.Lock()
_unreachable: dict[str, tuple[float, str]] = {}


class HubUnreachable(Exception):
    """The Hub could not be contacted at all (offline, DNS, proxy, HF_HUB_OFFLINE)."""


def looks_like_repo_id(value: str) -> bool:
    """ "owner/name" or "name" as the Hub spells them (no path separators, no "..")."""
    return bool(_REPO_ID.match(value)) and ".." not in value


def cache_folder_name(repo_id: str) -> str:
    return repo_id.replace("/", "__")


def endpoint() -> str:
    from huggingface_hub import constants

    return str(constants.ENDPOINT).rstrip("/")


def _offline_flag() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _probe(url: str) -> str | None:
    """None when the endpoint answered at all (any HTTP status), else the error."""
    result: list[str | None] = []

    def run() -> None:
        try:
            import httpx  # only when the Hub is probed

            httpx.head(url, timeout=PROBE_TIMEOUT_S, follow_redirects=False)
            result.append(None)
        except Exception as exc:  # any failure to talk HTTP means unreachable
            result.append(type(exc).__name__)

    thread = threading.Thread(target=run, name="memroute-hub-probe", daemon=True)
    thread.start()
    thread.join(PROBE_TIMEOUT_S + 1.0)
    return result[0] if result else "no answer within the time limit"


def ensure_reachable(now: Callable[[], float] = time.monotonic) -> None:
    """Raise HubUnreachable unless the Hub endpoint answers (result remembered for a while)."""
    if _offline_flag():
        raise HubUnreachable("HF_HUB_OFFLINE is set")
    base = endpoint()
    with _lock:
        known = _unreachable.get(base)
        if known is not None and now() - known[0] < PROBE_MEMORY_S:
            raise HubUnreachable(f"{base}: {known[1]}")
    error = _probe(base + "/api/whoami-v2")
    if error is not None:
        with _lock:
            _unreachable[base] = (now(), error)
        raise HubUnreachable(f"{base}: {error}")
    with _lock:
        _unreachable.pop(base, None)


def forget_probe() -> None:
    """Drop remembered probe results (tests, or after the network came back)."""
    with _lock:
        _unreachable.clear()


def download_into(target: Path, fetch: Callable[[Path], None]) -> Path:
    """Run `fetch(tmp)` into a fresh sibling folder of `target`, then move it into place,
    so a half-finished download never looks like a model."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.part-{uuid.uuid4().hex[:8]}")
    try:
        fetch(tmp)
        shutil.rmtree(tmp / ".cache", ignore_errors=True)  # huggingface_hub's local_dir metadata
        try:
            tmp.rename(target)
        except OSError:
            if not target.exists():
                raise
            # someone else finished first: keep theirs
        return target
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
