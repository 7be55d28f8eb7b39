"""Fact extraction: first-person statements become typed, keyed facts about the speaker.

A cheap scan finds where a statement may start ("I …", "I'm …", "my …", "we …",
"our …", "call me …"); the leads of `extraction_leads` are tried there, the object
after a lead is captured up to a boundary (a sentence end, a comma, `;`, a new line,
a new first-person clause or the next lead), and the lead's builder turns it into
facts. A lead in a question, a hypothetical, a quote, reported speech, after a
negation, or in a code block states nothing.

Every content is a third-person verb phrase ("prefers Python", "lives in Lisbon",
"usually writes tests"). With a speaker, the content starts with the speaker's name
("Caroline prefers Python") and the key with the speaker's slug (`caroline/profile:name`),
so two people in one conversation never share a fact. A key names its subject, so a
later statement of the same subject (in the text, or stored earlier) replaces it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from memroute.memory.extraction_context import Questions, blocked, mask_code
from memroute.memory.extraction_found import Found
from memroute.memory.extraction_grammar import SLUG_LENGTH, slugify
from memroute.memory.extraction_leads import LEAD, LEAD_GROUPS, LEAD_OF_GROUP, LEADS
from memroute.memory.extraction_statements import MIN_FACT_LENGTH, Draft
from memroute.memory.extraction_words import quick_alternation, words
from memroute.models.records import Fact

__all__ = [
    "MAX_EXTRACTION_TEXT_LENGTH",
    "MAX_FACT_LENGTH",
    "MIN_FACT_LENGTH",
    "SLUG_LENGTH",
    "extract_at_most",
    "extract_facts_from_text",
    "may_state_facts",
    "normalize_text",
    "slugify",
]

MAX_FACT_LENGTH = 500
MAX_EXTRACTION_TEXT_LENGTH = 64 * 1024
MAX_SPEAKER_LENGTH = 64
# How far past the lead a capture may reach before the boundary search gives up;
# it bounds the work per match so extraction stays linear in the text length.
_CAPTURE_WINDOW = MAX_FACT_LENGTH * 4

_STRAIGHTEN = str.maketrans(
    {"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'", "`": "'", "\u201c": '"', "\u201d": '"'}
)

# Where a captured object ends: sentence punctuation, a period followed by a space, a
# closing mark or the end (so "Next.js" and "3.12" survive), a dash between spaces, or a
# new first-person clause. Every boundary starts with one of the marks, a period or a
# space, matched first so the engine skips to them in a fast loop; look-behinds then say
# which kind of boundary it starts, one for a mark or a period and one for a space (the
# usual candidate, which so fails only one before its own).
_SPACE_ENDS = (
    r"[-\u2013\u2014]\s"
    r"|\s*(?:"
    + quick_alternation("and|but|so|or|because|while|although|though|since|whereas|then")
    + r")\s+(?:i|i'\w+)\b"
)


def _boundary(marks: str) -> re.Pattern[str]:
    """The boundary pattern whose single-character marks are the class `marks`."""
    return re.compile(
        f"[{marks}.\\s](?:(?<=[{marks}.])(?:(?<=[{marks}])|(?=\\s|$|[\"')\\]]))|(?<=\\s)(?:{_SPACE_ENDS}))",
        re.IGNORECASE,
    )


_BOUNDARY = _boundary(r",;:!?\n\r()\[\]{}\"")
_LIST_BOUNDARY = _boundary(r";:!?\n\r()\[\]{}\"")
_CATEGORY_ORDER = {
    c: i
    for i, c in enumerate(
        (
            "preference",
            "decision",
            "pattern",
            "profile",
            "work",
            "family",
            "pet",
            "health",
            "diet",
            "tool",
            "stack",
            "plan",
        )
    )
}
# Words left dangling when the next statement cuts a capture short.
_JOINERS = words(
    "and but so or because while although though since whereas then when if as that where unless until with"
)
_TRAILING = " \t'\"`*_~-"
_OPENERS = " \t([{\"'`*_"


def normalize_text(text: str) -> str:
    """NFC, straight quotes, code blocks blanked, and only the last 64 KiB (the newest text matters most)."""
    if len(text) > MAX_EXTRACTION_TEXT_LENGTH:
        text = text[-MAX_EXTRACTION_TEXT_LENGTH:]
    return mask_code(unicodedata.normalize("NFC", text)).translate(_STRAIGHTEN)


def _capture(text: str, start: int, stop: int, boundary: re.Pattern[str]) -> tuple[str, str]:
    """The object after a lead, up to the first match of `boundary` and never past `stop`
    (the next lead), and the boundary that ended it ("" when the capture reached `stop` or
    its window first)."""
    if stop > start + _CAPTURE_WINDOW:
        stop = start + _CAPTURE_WINDOW
    while start < stop and text[start] in _OPENERS:
        start += 1
    end = boundary.search(text, start, stop)
    words = text[start : end.start() if end else stop].split()
    # Cut short by the next statement ("I prefer tea when I work"): drop the dangling joiner.
    if words and words[-1].lower() in _JOINERS:
        words.pop()
    # The words hold no white space, so nothing is left to strip after the trailing marks.
    return " ".join(words).strip(_TRAILING), (end.group() if end else "")


# A lead found in the text: where it starts and ends, its row in the table of leads, its match.
_Lead = tuple[int, int, int, re.Match[str]]


def _leads(text: str) -> list[_Lead]:
    """Every lead in `text`, in order."""
    found: list[_Lead] = []
    for match in LEAD.finditer(text):
        group = match.lastindex or 0  # the lead's empty group: the last to close
        found.append((match.start(), match.end(group), LEAD_OF_GROUP[group], match))
    return found


def _stated(text: str, leads: list[_Lead]) -> Iterator[int]:
    """The starts of the leads that state something: not in a question ("Do I like
    Python?"), a hypothetical, a quote or reported speech."""
    questions = Questions(text, _BOUNDARY, _CAPTURE_WINDOW) if leads else None
    for start, end, _, _ in leads:
        if questions is not None and not questions.after(end) and not blocked(text, start):
            yield start


def may_state_facts(text: str) -> bool:
    """False when `text` holds no statement lead outside a question or a hypothetical
    ("I prefer", "my name is", "we use" …), so extracting it cannot find a fact. Cheap:
    used to skip queueing such texts."""
    if not text.strip():
        return False
    text = normalize_text(text)
    return any(True for _ in _stated(text, _leads(text)))


def extract_facts_from_text(text: object, *, speaker: str | None = None) -> list[Fact]:
    """Facts stated in `text` by `speaker` (or by the one user), without storing them.

    One fact per key: when the same subject is stated twice, the later statement
    in the text wins (so "I like X. I don't like X." ends negative). Output is in
    category order (preference, decision, pattern, profile, work, family, pet, health,
    diet, tool, stack, plan), then in the order stated.
    """
    return extract_at_most(text, None, speaker=speaker)[0]


def extract_at_most(text: object, limit: int | None, *, speaker: str | None = None) -> tuple[list[Fact], int]:
    """The facts of `extract_facts_from_text`, only the `limit` stated last (the newest
    text matters most) in the same order, and how many were left out."""
    if not isinstance(text, str) or not text.strip():
        return [], 0
    text = normalize_text(text)
    leads = _leads(text)
    if not leads:
        return [], 0
    questions = Questions(text, _BOUNDARY, _CAPTURE_WINDOW)
    winners: dict[str, tuple[int, Draft]] = {}  # key -> (position, fact); later statements overwrite
    stops = [lead[0] for lead in leads[1:]]  # each lead's capture stops at the next lead
    stops.append(len(text))
    for (start, end, row, match), stop in zip(leads, stops, strict=True):
        lead = LEADS[row]
        if lead.needs_object and stop - end < MIN_FACT_LENGTH:
            continue  # the next lead follows at once: "I prefer I prefer …"
        obj, boundary = _capture(
            text, end, stop if stop > end else end, _LIST_BOUNDARY if lead.lists else _BOUNDARY
        )
        facts = lead.build(Found(match, LEAD_GROUPS[row], end), obj)
        # The builder's checks are cheaper than the context's, so the context is read last.
        if not facts or blocked(text, start):
            continue  # "if I lived in Paris", "she says I like it"
        if (boundary == "?") if boundary and not lead.lists else questions.after(end):
            continue  # "Do I like Python?"
        for fact in facts:
            winners[fact.key] = (start, fact)
    kept = list(winners.values())
    if limit is not None and len(kept) > limit:
        kept = sorted(kept, key=lambda item: item[0])[-limit:]
    ranked = sorted(kept, key=lambda item: (_CATEGORY_ORDER.get(_category(item[1].key), 99), item[0]))
    name = speaker_name(speaker)
    prefix = slugify(name) if name else ""
    stated = [_said_by(draft, name, prefix) for _, draft in ranked]
    return stated, len(winners) - len(stated)


def _category(key: str) -> str:
    return key.split(":", 1)[0]


def speaker_name(speaker: str | None) -> str:
    """How a speaker is named in a fact: white space collapsed, at most 64 characters."""
    return " ".join(speaker.split())[:MAX_SPEAKER_LENGTH] if speaker else ""


def _said_by(draft: Draft, name: str, prefix: str) -> Fact:
    """The fact of `draft`, its content capped, and said by `name` (its key under `prefix`)
    when there is one."""
    key, content = draft.key, draft.content
    if prefix:
        key, content = f"{prefix}/{key}", f"{name} {content}"
    return Fact(
        key=key,
        content=content[:MAX_FACT_LENGTH].rstrip(),
        type=draft.type,
        category=_category(draft.key),
        polarity=draft.polarity,
    )
