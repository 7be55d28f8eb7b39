"""Where a statement lead does not state a fact: in a question, a hypothetical, a quote,
reported speech ("she says I like …"), after a negation, or inside a code block.

Every check reads a bounded window around the lead, so a crafted text costs linear
time: one pass finds the boundaries, each lead then costs a binary search and a
look back of at most `LOOKBACK` characters.
"""

from __future__ import annotations

import re

from memroute.memory.extraction_words import words

LOOKBACK = 120
# Substrings every hypothetical marker contains: the regex runs only when one is there.
_HYPOTHETICAL_HINTS = (
    "if",
    "unless",
    "whether",
    "suppos",
    "imagine",
    "pretend",
    "wish",
    "case",
    "when",
    "kid",
    "used",
)
# Whether a clause holds one of the hints: one scan instead of a substring test per hint.
_HINTED = re.compile("|".join(_HYPOTHETICAL_HINTS))
_PUNCTUATION = '.,!?;:()[]{}"*_~-'
_HYPOTHETICAL = re.compile(
    r"\b(?:if|unless|whether|suppose|supposing|imagine|pretend|wish|hypothetically|in\s+case|"
    r"as\s+if|even\s+if|back\s+when|when\s+i\s+was|as\s+a\s+kid|used\s+to)\b",
    re.IGNORECASE,
)
# A word right before the lead that makes it a question, a clause about something else,
# or a negation: "do I like", "what I like", "don't call me".
_BEFORE = words(
    "do does did should would could can will shall am have was were may might must what whatever "
    "which who whom that if unless whether don't dont never not didn't doesn't won't "
    "wouldn't isn't no nor"
)
_NEGATIONS = words("don't dont never not didn't doesn't won't wouldn't no nor")
_REPORTING = words(
    "said says thinks think thought told tells claims claimed believes believe assumes assumed joked "
    "asked asks insisted insists heard guess guessed knows reckons swears"
)
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
    if start > 1 and text[start - 2] in ".!?;" and text[start - 1].isspace():
        return False  # "… . I like": the usual start of a clause, seen without copying the window
    window = text[max(0, start - LOOKBACK) : start]
    tail = window.rstrip()
    if not tail or tail[-1] in ".!?;":
        return False  # the lead starts its sentence or clause: nothing before it to block it
    cut = max(window.rfind("."), window.rfind("!"), window.rfind("?"), window.rfind("\n"), window.rfind(";"))
    clause = window[cut + 1 :]
    if not clause.strip():
        return False
    if '"' in clause and clause.count('"') % 2 == 1:
        return True
    if _HINTED.search(clause.lower()) and _HYPOTHETICAL.search(clause):
        return True
    words = [w.strip(_PUNCTUATION).lower() for w in clause[-40:].split()[-2:]]
    # "you can call me Dee": an auxiliary before "call" is not a question about the speaker.
    before = _NEGATIONS if text[start] in "cC" else _BEFORE
    if words and words[-1] in before:
        return True
    return bool(words) and words[-1] in _REPORTING and (len(words) < 2 or words[-2] != "i")


class Questions:
    """Whether the clause after a position ends with "?": the next "?" within the window
    comes before any other boundary. The last boundary before each "?" is found once, in
    the stretch since the previous "?" (itself a boundary), so all leads together cost
    linear time, however crafted the text."""

    def __init__(self, text: str, boundary: re.Pattern[str], window: int) -> None:
        self._text = text
        self._boundary = boundary
        self._window = window
        self._last: dict[int, int] = {}  # position of a "?" -> start of the last boundary before it

    def after(self, position: int) -> bool:
        mark = self._text.find("?", position, position + self._window + 1)
        if mark < 0:
            return False
        last = self._last.get(mark)
        if last is None:
            last = self._text.rfind("?", max(0, mark - self._window), mark)
            for match in self._boundary.finditer(self._text, max(last + 1, mark - self._window), mark):
                last = match.start()
            self._last[mark] = last
        return last < position
