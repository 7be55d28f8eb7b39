"""The small grammar of extracted facts: slugs, third-person verbs, filler tests, dates.

A fact's content is a third-person verb phrase about the speaker, so "I usually
write tests for my code" becomes "usually writes tests for their code": the first
verb of a habit is conjugated and first-person words in an object become
"they"/"their".
"""

from __future__ import annotations

import functools
import re

from memroute.memory.extraction_words import (
    AUXILIARIES,
    ED_BASES,
    FILLER_OBJECTS,
    IRREGULAR_PAST,
    MONTHS,
    NOT_A_NAME,
    PRONOUN_ENDS,
    PRONOUN_STARTS,
    TRAILING_FILLERS,
    WEEKDAYS,
    words,
)

SLUG_LENGTH = 40
_NON_WORD = re.compile(r"[\W_]+")
# First-person words: "i", "i'm", "i am", "i've", "i'll", "i'd", "i was", "myself", "mine", "my",
# "me", as whole words in any case. The first letter (every character the ignored case
# matches to "i" or "m") comes first so the engine skips to it in a fast loop; the look
# back then checks that it starts a word and which letter it is.
_PERSON = re.compile(
    r"(?-i:[iI\u0130\u0131mM])(?<!\w.)"
    r"(?:(?<=[iI])(?:\s*'m|\s+am|\s*'ve|\s*'ll|\s*'d|\s+was|)|(?<=[mM])(?:yself|ine|y|e))\b",
    re.IGNORECASE,
)
_THIRD = {
    "i'm": "they're",
    "i am": "they are",
    "i've": "they've",
    "i'll": "they'll",
    "i'd": "they'd",
    "i was": "they were",
    "myself": "themselves",
    "mine": "theirs",
    "my": "their",
    "me": "them",
    "i": "they",
}
_IRREGULAR_THIRD = {"be": "is", "have": "has", "do": "does", "go": "goes", "can": "can"}
_DATE = re.compile(
    r"\b(?:(?:in|on|by|from|until|till|this|next|last|early|late|mid|end\s+of)\s+)*"
    r"(?:(?:" + "|".join(MONTHS) + r")(?:\s+\d{1,2}(?:st|nd|rd|th)?)?"
    r"|(?:" + "|".join(WEEKDAYS) + r")"
    r"|tomorrow|tonight|(?:the\s+)?(?:weekend|week|month|year|summer|winter|spring|fall|autumn)"
    r"|(?:a|one|two|three|four|five|six|a\s+few|a\s+couple\s+of|\d+)\s+(?:days?|weeks?|months?|years?)"
    r"|(?:19|20)\d\d|the\s+\d{1,2}(?:st|nd|rd|th)|\d{4}-\d\d-\d\d|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"^[^\W\d_][^\W\d_'-]*(?:-[^\W\d_]+)?$")


def slugify(value: str) -> str:
    """Lower-case letters and digits of any script, other runs as `_`, at most 40 chars."""
    words = value.casefold().split()
    # Words of letters and digits only (the usual case) need no pattern: their runs are the words.
    slug = "_".join(words) if "".join(words).isalnum() else _NON_WORD.sub("_", value.casefold()).strip("_")
    return slug[:SLUG_LENGTH].rstrip("_")


def third_person(text: str) -> str:
    """First-person words as third person: "my" → "their", "I" → "they", "me" → "them"."""
    low = f" {text.lower()}"
    if " i" not in low and " m" not in low:
        return text
    # Case-blind matching also takes the Turkish ı and İ for "i": they stay as written.
    return _PERSON.sub(
        lambda m: _THIRD.get(" ".join(m.group().lower().split()).replace(" '", "'"), m.group()), text
    )


@functools.lru_cache(maxsize=1024)
def conjugate(verb: str) -> str:
    """The third-person singular of a base verb: write → writes, go → goes, try → tries."""
    low = verb.lower()
    if low in _IRREGULAR_THIRD:
        return _IRREGULAR_THIRD[low]
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def looks_past(word: str) -> bool:
    """Whether `word` reads as a past tense ("said", "worked"), not a base verb."""
    low = word.lower()
    return low in IRREGULAR_PAST or (low.endswith("ed") and low not in ED_BASES)


def is_auxiliary(word: str) -> bool:
    return word.lower() in AUXILIARIES


_KEEP_LAST = ".+#)"


def _rstrip_symbols(text: str) -> str:
    end = len(text)
    while end and not (text[end - 1].isalnum() or text[end - 1] in _KEEP_LAST):
        end -= 1
    return text[:end]


def strip_fillers(obj: str) -> str:
    """`obj` without trailing filler ("hiking so much lol" → "hiking") or emoji."""
    if obj and (obj[-1].isalnum() or obj[-1] in _KEEP_LAST):
        last = obj[obj.rfind(" ") + 1 :].lower()
        if last not in _TRAILING_LAST:
            return obj.strip()
    words = _rstrip_symbols(obj.strip()).split()
    while words and words[-1].lower() in _TRAILING_LAST:
        for size in (3, 2, 1):
            if len(words) >= size and " ".join(words[-size:]).lower() in _TRAILING:
                del words[-size:]
                if words:
                    words[-1] = _rstrip_symbols(words[-1])
                    if not words[-1]:
                        words.pop()
                break
        else:
            break
    return " ".join(words)


_TRAILING = frozenset(TRAILING_FILLERS)
_TRAILING_LAST = frozenset(f.split()[-1] for f in TRAILING_FILLERS)


def is_filler(obj: str) -> bool:
    """Whether `obj` names nothing by itself: a pronoun, "to", "not to say", "that one"."""
    low = obj.lower()
    words = low.split()
    if not words:
        return True
    if low in FILLER_OBJECTS or words[0] in PRONOUN_STARTS or words[-1] in PRONOUN_ENDS:
        return True
    return words[0] == "to" and (len(words) == 1 or words[1] in _SPEECH)


_SPEECH = words("say think admit know hear see read tell ask believe imagine be bother interrupt")


def is_name(word: str) -> bool:
    """A capitalised word that is not an everyday word, a month, a day or a nationality."""
    return bool(_NAME.match(word)) and word[0].isupper() and word.casefold() not in NOT_A_NAME and word != "I"


def is_lower_name(word: str) -> bool:
    """A lower-case word that may still be a name or a place in casual chat ("lisbon")."""
    return (
        bool(_NAME.match(word))
        and word.casefold() not in NOT_A_NAME
        and not re.search(r"(?:ed|ing|ly)$", word)
    )


def find_date(text: str) -> re.Match[str] | None:
    """The first date or time expression in `text` ("in March", "next week", "on the 5th")."""
    return _DATE.search(text)


def without_date(text: str) -> str:
    """`text` with its date expressions removed, for a plan's key."""
    return " ".join(_DATE.sub(" ", text).split())


def cut_at(obj: str, pattern: re.Pattern[str]) -> str:
    match = pattern.search(obj)
    return obj[: match.start()].strip() if match else obj.strip()


def split_items(obj: str, limit: int = 5) -> list[str]:
    """The items of a list ("peanuts, shellfish and cats"), at most `limit`."""
    parts = re.split(r"\s*(?:,|&|/|\band\b|\bor\b|\bplus\b)\s*", obj)
    return [p.strip() for p in parts if p.strip()][:limit]
