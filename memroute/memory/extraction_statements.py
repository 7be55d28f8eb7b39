"""Facts of likes, choices, habits and dated plans, from a lead match and its object.

Each builder returns the facts one statement gives, or none when its object is a
pronoun or filler ("I love it", "I prefer not to say") or its verb is not a habit
("I never said that"). Contents are third-person verb phrases ("likes hiking",
"usually writes tests", "is starting a new job in March").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from memroute.memory.extraction_found import Found
from memroute.memory.extraction_grammar import (
    conjugate,
    find_date,
    is_auxiliary,
    is_filler,
    looks_past,
    slugify,
    strip_fillers,
    third_person,
    without_date,
)
from memroute.memory.extraction_words import EVALUATIVE, LIGHT_VERBS, PLAN_BASES, PRONOUN_STARTS, words

MIN_FACT_LENGTH = 2


class Draft(NamedTuple):
    """A fact as a builder states it; its category is the first part of its key."""

    key: str
    content: str
    type: str
    polarity: str


# A lead's match and the object captured after it → the facts it states.
Builder = Callable[[Found, str], list[Draft]]


def fact(key: str, content: str, *, kind: str = "factual", polarity: str = "positive") -> Draft:
    return Draft(key, content, kind, polarity)


def _object(obj: str) -> str | None:
    obj = strip_fillers(obj)
    if len(obj) < MIN_FACT_LENGTH or is_filler(obj) or not any(map(str.isalnum, obj)):
        return None
    return obj


def preference(match: Found, obj: str) -> list[Draft]:
    """ "I love hiking" → `preference:hiking` "loves hiking"; "I don't like X" is negative."""
    thing = _object(obj)
    if thing is None:
        return []
    verb = match.group("verb").lower()
    negated = match.get("neg") is not None
    negative = negated or verb in ("hate", "dislike", "avoid", "detest")
    lead = f"does not {verb}" if negated else conjugate(verb)
    slug = slugify(thing)
    if not slug:
        return []
    return [
        fact(
            f"preference:{slug}",
            f"{lead} {third_person(thing)}",
            polarity="negative" if negative else "positive",
        )
    ]


def fixed_preference(phrase: str, *, negative: bool = False) -> Builder:
    """A builder for a lead kept as a fixed phrase: "cannot stand X", "is a fan of X", "is into X"."""

    def build(match: Found, obj: str) -> list[Draft]:
        thing = _object(obj)
        if thing is None:
            return []
        polarity = "negative" if negative else "positive"
        return [fact(f"preference:{slugify(thing)}", f"{phrase} {third_person(thing)}", polarity=polarity)]

    return build


def favorite(match: Found, obj: str) -> list[Draft]:
    """ "My favorite is X" → "favors X"; "my favorite food is sushi" → "has sushi as favorite food"."""
    thing = _object(obj)
    if thing is None:
        return []
    kind = (match.group("thing") or "").lower()
    if kind:
        return [fact(f"preference:favorite_{slugify(kind)}", f"has {third_person(thing)} as favorite {kind}")]
    return [fact(f"preference:{slugify(thing)}", f"favors {third_person(thing)}")]


_DECISIONS = {
    "use": "will use",
    "chose": "chose",
    "decided not to": "decided not to",
    "decided to": "decided to",
    "decided": "decided",
    "selected": "selected",
    "picked": "picked",
    "went with": "went with",
    "going with": "is going with",
}


def decision(match: Found, obj: str) -> list[Draft]:
    """ "I'll use Postgres" → `decision:postgres` "will use Postgres" (episodic)."""
    thing = _object(obj)
    if thing is None or (
        thing.split(None, 1)[0].lower() in ("up", "out", "on", "off") and "picked" in match.text
    ):
        return []
    going = match.get("gverb")
    verb = " ".join((going or match.group("dverb")).lower().split())
    phrase = f"is going to {verb}" if going else _DECISIONS.get(verb, "will use")
    negative = verb == "decided not to"
    return [
        fact(
            f"decision:{slugify(thing)}",
            f"{phrase} {third_person(thing)}",
            kind="episodic",
            polarity="negative" if negative else "positive",
        )
    ]


def habit(match: Found, obj: str) -> list[Draft]:
    """ "I usually write tests first" → `pattern:write_tests_first` "usually writes tests first"."""
    adverb = match.group("adv").lower()
    words = strip_fillers(obj).split()
    negative = adverb in ("never", "rarely", "seldom")
    not_ = ""
    lowered = [w.lower() for w in words[:2]]
    if lowered[:1] in (["don't"], ["dont"]) or lowered == ["do", "not"]:
        words = words[1:] if words[0].lower() != "do" else words[2:]
        not_, negative = "does not ", True
    if not words:
        return []
    verb, rest = words[0], " ".join(words[1:])
    if (
        not verb.isalpha()
        or not verb.islower()
        or (is_auxiliary(verb) and verb not in LIGHT_VERBS)
        or (verb in LIGHT_VERBS and not rest)
        or looks_past(verb)
        or verb in PRONOUN_STARTS
        or (rest and is_filler(rest))
        or (not rest and len(verb) < 3)
    ):
        return []
    said = not_ + verb if not_ else conjugate(verb)
    content = f"{adverb} {said}" + (f" {third_person(rest)}" if rest else "")
    return [
        fact(f"pattern:{slugify(' '.join(words))}", content, polarity="negative" if negative else "positive")
    ]


_OPINIONS = words("agree disagree think believe feel say guess suppose")


def tendency(match: Found, obj: str) -> list[Draft]:
    """ "I tend to use X" → "tends to use X"."""
    thing = _object(obj)
    first = thing.split()[0].lower() if thing else ""
    if thing is None or looks_past(first) or is_auxiliary(first) or first in _OPINIONS:
        return []
    return [fact(f"pattern:{slugify(thing)}", f"tends to {third_person(thing)}")]


def _plan(phrase: str, key_text: str, obj: str) -> list[Draft]:
    if find_date(obj) is None or is_filler(obj):
        return []
    slug = slugify(without_date(key_text))
    return [fact(f"plan:{slug}", f"{phrase} {third_person(obj)}", kind="episodic")] if slug else []


def plan_progressive(match: Found, obj: str) -> list[Draft]:
    """ "I'm starting a new job in March" → `plan:starting_a_new_job` "is starting a new job in March"."""
    verb = match.group("pverb").lower()
    thing = strip_fillers(obj)
    first = thing.split()[:2]
    if not first or (verb in ("having", "getting") and len(first) > 1 and first[1].lower() in EVALUATIVE):
        return []
    return _plan(f"is {verb}", f"{verb} {thing}", thing)


def plan_future(match: Found, obj: str) -> list[Draft]:
    """ "I'll start a new job in March" → "will start …";
    "I'm going to visit Rome in May" → "is going to visit …"."""
    verb = match.group("fverb")
    if verb.lower() not in PLAN_BASES:
        return []
    phrase = "will" if match.get("will") else "is going to"
    thing = strip_fillers(obj)
    return _plan(f"{phrase} {verb.lower()}", f"{verb} {thing}", thing)


def plan_present(match: Found, obj: str) -> list[Draft]:
    """ "I start my new job on Monday" → "starts their new job on Monday"."""
    verb = match.group("sverb").lower()
    thing = strip_fillers(obj)
    return _plan(conjugate(verb), f"{verb} {thing}", thing)


def plan_have(match: Found, obj: str) -> list[Draft]:
    """ "I have a dentist appointment on Tuesday" → "has a dentist appointment on Tuesday"."""
    thing = strip_fillers(obj)
    article = match.group("art").lower()
    return _plan(f"has {article}", thing, thing)
