"""How one memory reads when it is injected, and which memories would repeat another.

A kept chat turn carries its date and speaker, so the model can answer "when" and
"who" questions: `[2026-05-08] Caroline: I adopted a dog last week.` (the role, "User"
or "Assistant", when the message named no speaker). A fact reads as stored. Two lines
are near duplicates when they share nearly all their words (at least 80 % of the words
of both together); only the first is injected.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

TURN_CATEGORY = "turn"  # metadata.category of a kept chat turn

NEAR_DUPLICATE_SHARE = 0.8  # shared words over the words of both lines
_WORD = re.compile(r"[^\W_]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SPACES = re.compile(r"\s+")


def normalised(text: str) -> str:
    """Case-folded NFC text with runs of white space as one space (what repeats compare)."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text).casefold()).strip()


def is_turn(metadata: Mapping[str, Any] | None) -> bool:
    return isinstance(metadata, Mapping) and metadata.get("category") == TURN_CATEGORY


def injected_line(content: str, metadata: Mapping[str, Any] | None) -> str:
    """The line of a memory in the injected block (see the module docstring)."""
    if not is_turn(metadata):
        return content
    assert metadata is not None
    speaker = metadata.get("speaker")
    if not isinstance(speaker, str) or not speaker.strip():
        speaker = "Assistant" if metadata.get("role") == "assistant" else "User"
    learned = metadata.get("learnedAt")
    date = learned[:10] if isinstance(learned, str) and _DATE.match(learned) else ""
    return f"[{date}] {speaker.strip()}: {content}" if date else f"{speaker.strip()}: {content}"


class LineDeduper:
    """Remembers the lines taken so far and tells whether a new one repeats one of them."""

    def __init__(self) -> None:
        self._taken: list[frozenset[str]] = []

    def repeats(self, content: str) -> bool:
        """True when `content` is a near duplicate of a line already taken; else takes it."""
        words = frozenset(_WORD.findall(normalised(content)))
        if not words:
            return False
        for other in self._taken:
            if len(words & other) >= NEAR_DUPLICATE_SHARE * len(words | other):
                return True
        self._taken.append(words)
        return False
