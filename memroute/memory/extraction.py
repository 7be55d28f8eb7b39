"""Regex fact extraction: first-person statements become typed, keyed facts.

Each pattern matches a first-person lead ("I prefer", "I don't like", "I'll use",
"I always", …) and captures the object that follows up to a boundary: a sentence
end, a comma, `;`, a new line, or a new first-person clause (" and I …"). The
object gives the key (`category:slug`), so "I like Python" and "I don't like
Python" share `preference:python` and the newer statement replaces the older.
The stored content keeps the verb ("does not like Python") and the polarity is
kept in metadata.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

from memroute.models.records import Fact

MAX_FACT_LENGTH = 500
MIN_FACT_LENGTH = 2
MAX_EXTRACTION_TEXT_LENGTH = 64 * 1024
SLUG_LENGTH = 40
# How far past the lead a capture may reach before the boundary search gives up;
# it bounds the work per match so extraction stays linear in the text length.
_CAPTURE_WINDOW = MAX_FACT_LENGTH * 4

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'", "`": "'"})

# Where a captured object ends: sentence punctuation, a period followed by a
# space or the end (so "Next.js" and "3.12" survive), or a new first-person clause.
_BOUNDARY = re.compile(
    r"[,;:!?\n\r()\[\]{}\"]"
    r"|\.(?=\s|$|[\"')\]])"
    r"|\s[-\u2013\u2014]\s"
    r"|\s+(?:and|but|so|or|because|while|although|though|since|whereas|then)\s+(?:i|i'\w+)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Pattern:
    category: str  # preference | decision | pattern
    type: str  # factual | episodic
    lead: str  # regex of the lead; a `(?P<verb>…)` group fills {verb} in the template
    template: str  # "{x}" is the captured object
    polarity: str = "positive"


_I = r"\bI\s+"
_IM = r"\bI(?:\s*'m|\s+am|m)\s+going\s+"
_PATTERNS: tuple[_Pattern, ...] = (
    # PREFERENCE -> factual
    _Pattern("preference", "factual", _I + r"(?:really\s+)?prefer\s+", "prefers {x}"),
    _Pattern("preference", "factual", _I + r"(?:really\s+)?like\s+", "likes {x}"),
    _Pattern(
        "preference", "factual", r"\bmy\s+(?:favorite|favourite)\s+(?P<verb>is|are)\s+", "favorite {verb} {x}"
    ),
    _Pattern(
        "preference",
        "factual",
        _I + r"(?:don'?t|do\s+not)\s+(?:really\s+)?like\s+",
        "does not like {x}",
        "negative",
    ),
    _Pattern("preference", "factual", _I + r"(?P<verb>hate|dislike|avoid)\s+", "{verb}s {x}", "negative"),
    _Pattern("preference", "factual", _I + r"(?:really\s+)?enjoy\s+", "enjoys {x}"),
    _Pattern("preference", "factual", _I + r"(?:really\s+)?love\s+", "loves {x}"),
    # DECISION -> episodic
    _Pattern("decision", "episodic", r"\bI(?:\s*'ll|\s+will|\s+shall)\s+use\s+", "will use {x}"),
    _Pattern("decision", "episodic", _I + r"chose\s+", "chose {x}"),
    _Pattern(
        "decision", "episodic", _I + r"(?:have\s+)?decided\s+not\s+to\s+", "decided not to {x}", "negative"
    ),
    _Pattern("decision", "episodic", _I + r"(?:have\s+)?decided\s+to\s+", "decided to {x}"),
    _Pattern("decision", "episodic", _I + r"(?:have\s+)?decided\s+", "decided {x}"),
    _Pattern("decision", "episodic", _IM + r"(?:to\s+)?(?P<verb>use|adopt)\s+", "is going to {verb} {x}"),
    _Pattern("decision", "episodic", _IM + r"with\s+", "is going with {x}"),
    _Pattern("decision", "episodic", _I + r"selected\s+", "selected {x}"),
    _Pattern("decision", "episodic", _I + r"picked\s+", "picked {x}"),
    _Pattern("decision", "episodic", _I + r"went\s+with\s+", "went with {x}"),
    # PATTERN -> factual
    _Pattern(
        "pattern", "factual", _I + r"(?P<verb>usually|typically|often|frequently|regularly)\s+", "{verb} {x}"
    ),
    _Pattern("pattern", "factual", _I + r"always\s+", "always {x}"),
    _Pattern("pattern", "factual", _I + r"never\s+", "never {x}", "negative"),
    _Pattern("pattern", "factual", _I + r"tend\s+to\s+", "tends to {x}"),
)

# 21 separate scans cost ~1 ms each per 64 KiB, so a cheap scan finds where an
# "I …"/"my …" lead could start and the alternation of every lead is tried only
# there. Alternatives are tried in list order, so "decided not to" wins over "decided".
_CANDIDATE = re.compile(r"[iI](?=[\s'm])|[mM](?=[yY]\s)")
_LEADS = re.compile(
    "|".join(f"(?P<p{i}>{p.lead.replace('(?P<verb>', f'(?P<v{i}>')})" for i, p in enumerate(_PATTERNS)),
    re.IGNORECASE,
)

_CATEGORY_ORDER = {"preference": 0, "decision": 1, "pattern": 2}
_NON_WORD = re.compile(r"[\W_]+")
# Words left dangling when the next statement cuts a capture short.
_JOINERS = frozenset(
    {
        "and",
        "but",
        "so",
        "or",
        "because",
        "while",
        "although",
        "though",
        "since",
        "whereas",
        "then",
        "when",
        "if",
        "as",
        "that",
        "where",
        "unless",
        "until",
    }
)
_TRAILING = " \t'\"`*_~-"
_OPENERS = " \t([{\"'`*_"


def normalize_text(text: str) -> str:
    """NFC, straight apostrophes, and only the last 64 KiB (the newest text matters most)."""
    if len(text) > MAX_EXTRACTION_TEXT_LENGTH:
        text = text[-MAX_EXTRACTION_TEXT_LENGTH:]
    return unicodedata.normalize("NFC", text).translate(_APOSTROPHES)


def slugify(value: str) -> str:
    """Lower-case letters and digits of any script, other runs as `_`, at most 40 chars."""
    slug = _NON_WORD.sub("_", value.casefold()).strip("_")
    return slug[:SLUG_LENGTH].rstrip("_")


class _Questions:
    """Whether the sentence after a position ends with "?". One pass over the text finds
    every boundary, so each lead costs a binary search, however crafted the text."""

    def __init__(self, text: str) -> None:
        self._starts: list[int] = []
        self._marks: list[bool] = []
        for match in _BOUNDARY.finditer(text):
            self._starts.append(match.start())
            self._marks.append(match.group() == "?")

    def after(self, position: int) -> bool:
        index = bisect.bisect_left(self._starts, position)
        return (
            index < len(self._starts)
            and self._marks[index]
            and self._starts[index] - position <= _CAPTURE_WINDOW
        )


def _capture(text: str, start: int, stop: int) -> str:
    """The object after a lead, never past `stop` (the next lead)."""
    window = text[start : min(start + _CAPTURE_WINDOW, stop)].lstrip(_OPENERS)
    end = _BOUNDARY.search(window)
    raw = window[: end.start()] if end else window
    words = raw.split()
    # Cut short by the next statement ("I prefer tea when I work"): drop the dangling joiner.
    if words and words[-1].lower() in _JOINERS:
        words.pop()
    return " ".join(words).strip(_TRAILING).strip()


def _lead_matches(text: str) -> list[re.Match[str]]:
    matches = []
    for candidate in _CANDIDATE.finditer(text):
        match = _LEADS.match(text, candidate.start())
        if match is not None:
            matches.append(match)
    return matches


def may_state_facts(text: str) -> bool:
    """False when `text` holds no statement lead at all ("I prefer", "my …", "I decided" …),
    so extracting it cannot find a fact. Cheap: used to skip queueing such texts."""
    if not text.strip():
        return False
    text = normalize_text(text)
    return any(_LEADS.match(text, c.start()) for c in _CANDIDATE.finditer(text))


def extract_facts_from_text(text: object) -> list[Fact]:
    """Facts stated in `text`, without storing them.

    One fact per key: when the same subject is stated twice, the later statement
    in the text wins (so "I like X. I don't like X." ends negative). Output is in
    category order (preference, decision, pattern), then pattern order, then
    position, as the reference.
    """
    return extract_at_most(text, None)[0]


def extract_at_most(text: object, limit: int | None, *, speaker: str | None = None) -> tuple[list[Fact], int]:
    """The facts of `extract_facts_from_text`, only the `limit` stated last (the newest
    text matters most) in the same order, and how many were left out."""
    if not isinstance(text, str) or not text.strip():
        return [], 0
    text = normalize_text(text)
    # key -> (sort order, pattern index, lead match, object); later statements overwrite.
    winners: dict[str, tuple[tuple[int, int, int], int, re.Match[str], str]] = {}
    matches = _lead_matches(text)
    questions = _Questions(text) if matches else None
    for number, match in enumerate(matches):
        if questions is not None and questions.after(match.end()):
            continue  # "Do I like Python?" is a question, not a fact
        stop = matches[number + 1].start() if number + 1 < len(matches) else len(text)
        obj = _capture(text, match.end(), max(stop, match.end()))
        if len(obj) < MIN_FACT_LENGTH:
            continue
        slug = slugify(obj)
        if not slug:
            continue
        index = int(match.lastgroup[1:]) if match.lastgroup else 0
        category = _PATTERNS[index].category
        winners[f"{category}:{slug}"] = ((_CATEGORY_ORDER[category], index, match.start()), index, match, obj)
    kept = list(winners.items())
    if limit is not None and len(kept) > limit:
        kept = sorted(kept, key=lambda kv: kv[1][2].start())[-limit:]
    ranked = sorted(kept, key=lambda kv: kv[1][0])
    facts = [_fact(key, index, match, obj) for key, (_, index, match, obj) in ranked]
    return facts, len(winners) - len(facts)


def _fact(key: str, index: int, match: re.Match[str], obj: str) -> Fact:
    pattern = _PATTERNS[index]
    verb = (match.group(f"v{index}") or "").lower() if "{verb}" in pattern.template else ""
    content = pattern.template.format(verb=verb, x=obj)[:MAX_FACT_LENGTH].rstrip()
    return Fact(
        key=key, content=content, type=pattern.type, category=pattern.category, polarity=pattern.polarity
    )
