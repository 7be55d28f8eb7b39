"""How secrets look wherever memroute shows or logs something: a stored secret is shown
as `***` plus its last 4 characters (`mask_secret`), a message about to be logged or
returned has every secret in it replaced by `***` (`scrub`), and a URL is logged without
its credentials or query (`url_for_logs`).

What users say in a chat is not a message of this kind: `memory/redact.py` takes the
secrets out of chat text before it can become a memory, with narrower patterns that
leave ordinary prose alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

#: Longest message `scrub` returns; upstream bodies can be huge.
MAX_MESSAGE_CHARS = 500
#: Below this length a masked secret shows none of its characters.
MIN_CHARS_TO_SHOW_A_TAIL = 12

_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[^\s,;\"']+")
_KEYLIKE = re.compile(r"\b(sk|pk|rk|hf|gsk|xai|key|mr)[-_][A-Za-z0-9_\-]{8,}")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@")
_SPACES = re.compile(r"\s+")


def mask_secret(secret: str | None) -> str | None:
    """`***` plus the last 4 characters of a secret of 12 characters or more, `***` for a
    shorter one, None for none."""
    if not secret:
        return None
    return "***" + (secret[-4:] if len(secret) >= MIN_CHARS_TO_SHOW_A_TAIL else "")


def scrub(message: str, secrets: Iterable[str | None] = ()) -> str:
    """A message safe to log and show: the given secrets (4 characters or more), Bearer and
    Basic credentials and key-like strings (`sk-…`, `mr-…`, `hf_…` …) replaced by `***`,
    URL credentials dropped, whitespace collapsed, cut to MAX_MESSAGE_CHARS."""
    text = message
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    text = _BEARER.sub(lambda m: f"{m.group(1)} ***", text)
    text = _KEYLIKE.sub(lambda m: f"{m.group(1)}-***", text)
    text = _USERINFO.sub(lambda m: f"{m.group(1)}***@", text)
    text = _SPACES.sub(" ", text).strip()
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 1].rstrip() + "…"
    return text


def url_for_logs(url: str) -> str:
    """`scheme://host[:port]/path` of `url`: no user name or password, no query (some
    providers take their key there), no fragment."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "(an unparsable URL)"
    if ":" in host:  # IPv6
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else "(a URL without a scheme)"
