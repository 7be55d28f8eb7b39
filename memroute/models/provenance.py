"""Where a memory came from, read from its metadata, and the one line that says so.

A memory learned from a chat carries `requestId`, `sessionId`, `role`, `speaker` and
`learnedAt` in its metadata, and `sources` when it was learned again; older facts only
`source` ("user_message" / "llm_response") and `extractedAt`; a memory whose metadata
says `"source": "manual"` or `"import"` was added by hand or imported. Anything else
has no provenance (None).

Metadata is whatever a client stored, so reading it never fails: a value of the wrong
type is ignored, text loses control characters and is cut short, times that do not
parse are dropped, and at most `MAX_SOURCES` earlier sources are kept.

The line, the same on every surface:
`learned from request req_1 at 2026-05-08 14:03 UTC (Caroline, session s1)`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from memroute.clock import parse_time, to_iso
from memroute.errors import MemrouteError
from memroute.models.wire import Wire

MAX_SOURCES = 5  # earlier sources shown (the newest of them)
MAX_SCANNED = 50  # entries of a `sources` list looked at, from its end
MAX_ID = 128  # characters of a request or session id
MAX_NAME = 80  # characters of a speaker's name
ROLES = ("user", "assistant")
CHAT_SOURCES = {"user_message": "user", "llm_response": "assistant"}
BY_HAND = {"manual": "manual", "import": "import", "imported": "import"}


@dataclass(frozen=True, slots=True)
class Source:
    """One chat request a memory was learned from."""

    request_id: str | None
    session_id: str | None
    role: str | None
    speaker: str | None
    learned_at: str | None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a memory came from: `origin` is "chat", "manual" or "import"; the newest
    chat request it was learned from; `earlier` the other requests it was learned from,
    oldest first (at most `MAX_SOURCES`)."""

    __wire__: ClassVar[Wire] = Wire(computed=("summary",))

    origin: str
    request_id: str | None
    session_id: str | None
    role: str | None
    speaker: str | None
    learned_at: str | None
    earlier: list[Source] = field(default_factory=list)

    @property
    def summary(self) -> str:
        """The provenance as one line of English."""
        return describe(self)


def provenance_of(metadata: object) -> Provenance | None:
    """The provenance recorded in `metadata`, or None when it records none."""
    if not isinstance(metadata, Mapping):
        return None
    source = metadata.get("source")
    newest = _source(metadata)
    if isinstance(source, str) and source in BY_HAND:
        return Provenance(BY_HAND[source], None, None, None, None, newest.learned_at)
    chat_role = CHAT_SOURCES.get(source) if isinstance(source, str) else None
    if not (newest.request_id or newest.learned_at or newest.role or chat_role):
        return None
    role = newest.role or chat_role
    earlier = _earlier(metadata.get("sources"), newest)
    return Provenance(
        "chat", newest.request_id, newest.session_id, role, newest.speaker, newest.learned_at, earlier
    )


def describe(provenance: Provenance) -> str:
    """`learned from request R at 2026-05-08 14:03 UTC (Caroline, session s1)`; parts
    that are not known are left out; "added by hand" / "imported" for those origins."""
    when = f" at {display_time(provenance.learned_at)}" if provenance.learned_at else ""
    if provenance.origin == "manual":
        return f"added by hand{when}"
    if provenance.origin == "import":
        return f"imported{when}"
    if provenance.request_id:
        what = f"request {provenance.request_id}"
    else:
        what = "an assistant reply" if provenance.role == "assistant" else "a user message"
    # "(user)" only after a request id: "a user message (user)" would say it twice.
    who = provenance.speaker or (provenance.role if provenance.request_id else None)
    details = [part for part in (who, _session(provenance)) if part]
    line = f"learned from {what}{when}" + (f" ({', '.join(details)})" if details else "")
    return line + _earlier_clause(provenance.earlier)


def display_time(iso: str) -> str:
    """A stored timestamp as `2026-05-08 14:03 UTC`."""
    return f"{iso[:10]} {iso[11:16]} UTC"


def _session(provenance: Provenance) -> str | None:
    return f"session {provenance.session_id}" if provenance.session_id else None


def _earlier_clause(earlier: list[Source]) -> str:
    """`; also learned from request R at …` (one), `; also learned from 3 earlier requests
    since …` (more)."""
    if not earlier:
        return ""
    first = earlier[0]
    if len(earlier) == 1:
        what = f"request {first.request_id}" if first.request_id else "an earlier request"
        when = f" at {display_time(first.learned_at)}" if first.learned_at else ""
        return f"; also learned from {what}{when}"
    since = f" since {display_time(first.learned_at)}" if first.learned_at else ""
    return f"; also learned from {len(earlier)} earlier requests{since}"


def _source(entry: Mapping[Any, Any]) -> Source:
    role = entry.get("role")
    learned = entry.get("learnedAt")
    return Source(
        request_id=_text(entry.get("requestId"), MAX_ID),
        session_id=_text(entry.get("sessionId"), MAX_ID),
        role=role if role in ROLES else None,
        speaker=_text(entry.get("speaker"), MAX_NAME),
        learned_at=_time(learned if learned is not None else entry.get("extractedAt")),
    )


def _earlier(entries: object, newest: Source) -> list[Source]:
    """The readable entries of a `sources` list (newest last) but the newest source
    itself and repeats, oldest first, at most `MAX_SOURCES`."""
    if not isinstance(entries, list):
        return []
    found: list[Source] = []
    for entry in reversed(entries[-MAX_SCANNED:]):
        if not isinstance(entry, Mapping):
            continue
        source = _source(entry)
        empty = source.request_id is None and source.learned_at is None
        if empty or any(_same(source, seen) for seen in (newest, *found)):
            continue
        found.append(source)
        if len(found) == MAX_SOURCES:
            break
    return found[::-1]


def _same(a: Source, b: Source) -> bool:
    return (a.request_id, a.learned_at) == (b.request_id, b.learned_at)


def _text(value: object, limit: int) -> str | None:
    """`value` as display text: a string without control or format characters, spaces
    collapsed, at most `limit` characters (cut with "…"); None when nothing is left."""
    if not isinstance(value, str):
        return None
    raw = value[: limit * 4]
    kept = "".join(" " if ch.isspace() else ch for ch in raw if ch.isspace() or _printable(ch))
    text = " ".join(kept.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text or None


def _printable(ch: str) -> bool:
    return not unicodedata.category(ch).startswith("C")


def _time(value: object) -> str | None:
    """A timestamp in the stored form (`…T14:03:00.000Z`, UTC), or None if it is not one."""
    if not isinstance(value, str):
        return None
    try:
        return to_iso(parse_time(value[:64]))
    except (MemrouteError, OverflowError, ValueError):
        return None
