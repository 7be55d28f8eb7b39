"""Where a statement lead does not state a fact: in a question, a hypothetical, a quote,
reported speech ("she says I like …"), after a negation, or inside a code block.

Every check reads a bounded window around the lead, so a crafted text costs linear
time: one pass finds the boundaries, each lead then costs a binary search and a
look back of at most `LOOKBACK` characters.
"""

from __future__ import annotations

import bisect
import re

LOOKBACK = 120
_SENTENCE_END = re.compile(r"[.!?\n;]")
_HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|whether|suppose|supposing|imagine|pretend|wish|hypothetically|in\s+case|"
    r"as\s+if|even\s+if|back\s+when|when\s+i\s+was|as\s+a\s+kid|used\s+to)\b",
    re.IGNORECASE,
)
# A word right before the lead that makes it a question, a clause about something else,
# or a negation: "do I like", "what I like", "don't call me".
_BEFORE = frozenset(
    "do does did should would could can will shall am have was were may might must what whatever "
    "which who whom that if unless whether don't dont never not didn't doesn't won't "
    "wouldn't isn't no nor".split()
)
_NEGATIONS = frozenset("don't dont never not didn't doesn't won't wouldn't no nor".split())
_REPORTING = frozenset(
    "said says thinks think thought told tells claims claimed believes believe assumes assumed joked "
    "asked asks insisted insists heard guess guessed knows reckons swears".split()
)
_WORDS = re.compile(r"[\w']+")
_FENCE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)", re.DOTALL)
_QUOTED_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)


def mask_code(text: str) -> str:
    """`text` with fenced code blocks and `>`-quoted lines blanked out (same length)."""

    def blank(match: re.Match[str]) -> str:
        return "\n" + re.sub(r"[^\n]", " ", match.group()[1:])

    if "```" in text or "~~~" in text:
        text = _FENCE.sub(blank, text)
    if ">" in text:
        text = _QUOTED_LINE.sub(lambda m: " " * len(m.group()), text)
    return text


def blocked(text: str, start: int) -> bool:
    """Whether the lead at `start` is in a hypothetical, quoted, reported or negated clause."""
    window = text[max(0, start - LOOKBACK) : start]
    ends = [m.end() for m in _SENTENCE_END.finditer(window)]
    clause = window[ends[-1] :] if ends else window
    if clause.count('"') % 2 == 1 or _HYPOTHETICAL.search(clause):
        return True
    words = [w.lower() for w in _WORDS.findall(clause[-40:])]
    # "you can call me Dee": an auxiliary before "call" is not a question about the speaker.
    before = _NEGATIONS if text[start] in "cC" else _BEFORE
    if words and words[-1] in before:
        return True
    return len(words) >= 1 and words[-1] in _REPORTING and (len(words) < 2 or words[-2] != "i")


class Questions:
    """Whether the clause after a position ends with "?". One pass over the text finds
    every boundary, so each lead costs a binary search, however crafted the text."""

    def __init__(self, text: str, boundary: re.Pattern[str], window: int) -> None:
        self._starts: list[int] = []
        self._marks: list[bool] = []
        self._window = window
        for match in boundary.finditer(text):
            self._starts.append(match.start())
            self._marks.append(match.group() == "?")

    def after(self, position: int) -> bool:
        index = bisect.bisect_left(self._starts, position)
        return (
            index < len(self._starts)
            and self._marks[index]
            and self._starts[index] - position <= self._window
        )
