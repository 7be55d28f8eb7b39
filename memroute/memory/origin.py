"""Where a learned memory came from, as it is written into the memory's metadata.

Every memory learned from a chat records the request it came from (`requestId`), its
session, the role and speaker of the message, and when it was learned. A fact learned
again keeps the latest of these at the top and a short list of its sources (at most
`MAX_SOURCES`, the newest last), so "learned from request … at …" can always be told.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_SOURCES = 5


@dataclass(frozen=True, slots=True)
class Origin:
    """The chat message a memory was learned from."""

    request_id: str
    session_id: str
    role: str  # user | assistant
    speaker: str
    learned_at: str

    def fields(self) -> dict[str, str]:
        """The metadata fields of this origin (`speaker` and `requestId` only when known)."""
        out = {"role": self.role, "sessionId": self.session_id, "learnedAt": self.learned_at}
        if self.request_id:
            out["requestId"] = self.request_id
        if self.speaker:
            out["speaker"] = self.speaker
        return out


def with_source(previous: Mapping[str, Any] | None, origin: Origin) -> list[dict[str, str]]:
    """The `sources` list of a memory learned again from `origin`: the earlier sources
    (the previous metadata's list, else its own origin fields), then this one, bounded."""
    earlier: list[dict[str, str]] = []
    if previous:
        listed = previous.get("sources")
        if isinstance(listed, list):
            earlier = [s for s in listed if isinstance(s, dict)][-MAX_SOURCES:]
        elif isinstance(previous.get("requestId"), str) or isinstance(previous.get("learnedAt"), str):
            earlier = [
                {
                    k: v
                    for k in ("requestId", "sessionId", "role", "speaker", "learnedAt")
                    if isinstance(v := previous.get(k), str)
                }
            ]
    current = origin.fields()
    if earlier and earlier[-1].get("requestId") == current.get("requestId") and current.get("requestId"):
        earlier = earlier[:-1]  # the same request told twice is one source
    return [*earlier, current][-MAX_SOURCES:]
