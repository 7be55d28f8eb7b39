"""Text checks a question must pass: its answer is in its evidence and in no other turn of
the person, its words point at one turn, and a paraphrase shares no content word with it."""

from __future__ import annotations

import re
from collections.abc import Iterable

from bench.quality import content_words

_APOSTROPHES = re.compile(r"['’]")
_SPACES = re.compile(r"\s+")
PREFIX = 5  # words sharing this many first letters count as the same word ("paint"/"painter")


def norm(text: str) -> str:
    """Lower case, no apostrophes, single spaces: how a typo may have left a turn."""
    return _SPACES.sub(" ", _APOSTROPHES.sub("", text.lower())).strip()


def contains(text: str, value: str) -> bool:
    """Whether `value` is said in `text` as whole words (case and apostrophes aside)."""
    return re.search(rf"(?<!\w){re.escape(norm(value))}(?!\w)", norm(text)) is not None


def said_elsewhere(turns: Iterable[tuple[str, str]], values: Iterable[str], allowed: set[str]) -> bool:
    """Whether a turn (id, text) outside `allowed` says every one of `values`."""
    wanted = [v for v in values if v]
    return bool(wanted) and any(
        tid not in allowed and all(contains(text, v) for v in wanted) for tid, text in turns
    )


def _words(text: str, ignore: set[str]) -> set[str]:
    return {w for w in content_words(text, stemmed=True) if w not in ignore}


def shares_word(question: str, texts: Iterable[str], ignore: set[str]) -> bool:
    """Whether the question has a content word (stemmed, or the same first letters) of a text."""
    asked = _words(question, ignore)
    for text in texts:
        said = _words(text, ignore)
        if asked & said:
            return True
        if {w[:PREFIX] for w in asked if len(w) >= PREFIX} & {w[:PREFIX] for w in said if len(w) >= PREFIX}:
            return True
    return False
